/*
 * host/schema_lex.h - what the schema parser (schema.c), its lexer and
 * number conversion (schema_lex.c) and its printer (schema_print.c)
 * share.  Internal to libbackplane; never installed.
 *
 * The lexer reads one token of lookahead into a bp__parser.  The first
 * error wins: every failure records its message in the parser (with the
 * column) and returns false; later failures are ignored.
 */
#ifndef BP_HOST_SCHEMA_LEX_H
#define BP_HOST_SCHEMA_LEX_H

#include "alloc.h"
#include "schema.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PRINTF_LIKE(fmt, args)
#endif

/* The longest float literal we convert; longer ones are refused rather than
 * copied to the heap (no real schema needs 256 digits). */
#define MAX_FLOAT_LEN 255

/* How much of a token an error message quotes. */
#define MAX_QUOTE 24

typedef enum bp__tok_kind {
  TK_END,    /* end of input */
  TK_IDENT,  /* [A-Za-z_][A-Za-z0-9_]* */
  TK_NUMBER, /* a run that starts like a number; validated where used */
  TK_STRING, /* '...' or "...", escapes already checked */
  TK_ARROW,  /* -> */
  TK_SCOPE,  /* :: */
  TK_PUNCT,  /* one of ( ) [ ] , * ? ! = . */
  TK_BAD     /* any other byte, or a malformed string */
} bp__tok_kind;

typedef struct bp__token {
  bp__tok_kind kind;
  size_t start; /* byte offset in the text; the column is start + 1 */
  size_t len;
} bp__token;

typedef struct bp__parser {
  const char *text;
  size_t pos;       /* where the lexer resumes */
  bp__token tok;        /* the current token */
  char *err;        /* the caller's message buffer, or NULL */
  size_t errlen;
  bp_status status; /* BP_OK until the first failure */
} bp__parser;

/* ASCII only: <ctype.h> depends on the locale and on char's signedness. */
static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
static inline bool is_ident_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
static inline bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
static inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

/* Records the first failure: "column N: " + the formatted message; false. */
bool bp__lex_fail(bp__parser *p, size_t at, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* Records an allocation failure (BP_ERR_OUT_OF_MEMORY); false. */
bool bp__lex_oom(bp__parser *p);
/* The current token as an error message quotes it (at most MAX_QUOTE
 * bytes, escaped), into out. */
void bp__lex_quote(const bp__parser *p, char out[MAX_QUOTE * 4 + 4]);
/* "expected WHAT, got TOKEN" at the current token; false. */
bool bp__lex_expected(bp__parser *p, const char *what);
/* Reads the next token into p->tok. */
void bp__lex_advance(bp__parser *p);
/* Whether the current token is the punctuation c, or the word `word`. */
bool bp__lex_at_punct(const bp__parser *p, char c);
bool bp__lex_at_word(const bp__parser *p, const char *word);

/* Locale-independent number conversion: the validated float literal
 * s[0 .. n-1] as a double (false when it does not convert), and the
 * shortest text that reads back as v, always with a '.' or an exponent. */
bool bp__lex_text_to_double(const char *s, size_t n, double *out);
void bp__lex_double_to_text(double v, char out[48]);

/* The canonical spelling of a base type (SymInt prints as int),
 * and a dtype code's name (NULL for none). */
const char *bp__schema_type_spelling(int type);
const char *bp__schema_dtype_name(int64_t code);
/* Whether the token at the cursor is a dtype's name (float32, ...): then
 * it is consumed and *code is its bp_dtype. */
bool bp__lex_at_dtype(bp__parser *p, int32_t *code);

#endif /* BP_HOST_SCHEMA_LEX_H */
