/*
 * conformance/elfsha.h - helpers of bp-certify that need nothing from
 * libbackplane: SHA-256 of a file, and the dynamic symbol table of an ELF
 * shared object, read straight from the file so that the certifier does
 * not depend on binutils.
 */
#ifndef BP_CONFORMANCE_ELFSHA_H
#define BP_CONFORMANCE_ELFSHA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SHA-256 of the file at path as 64 lowercase hex digits plus NUL.
 * Returns false (and leaves hex alone) when the file cannot be read. */
bool cert_sha256_file(const char *path, char hex[65]);

/* One dynamic symbol of interest. */
typedef struct elf_sym {
  char *name;
  bool defined; /* st_shndx != SHN_UNDEF */
} elf_sym;

/* The GLOBAL and WEAK symbols of a shared object's .dynsym: the defined
 * FUNC and OBJECT ones (exports) and the undefined ones (imports).
 * Returns false with a one-line reason in err when the file is not an
 * ELF object this parser understands. */
typedef struct elf_syms {
  elf_sym *v;
  size_t n;
} elf_syms;

/* The whole file at path (owned, free()), its size in *out_n; NULL when it
 * cannot be read.  Shared by elfsyms.c and elfbin.c. */
unsigned char *cert_elf_slurp(const char *path, size_t *out_n);
/* Whether [off, off + len) lies inside a file of n bytes. */
bool cert_elf_in_file(uint64_t off, uint64_t len, size_t n);

bool cert_elf_read_dynsyms(const char *path, elf_syms *out, char *err, size_t errlen);
void cert_elf_syms_free(elf_syms *s);

/* What a shared object asks of the process that maps it (elfbin.c): the
 * symbol versions it needs of each library (.gnu.version_r), and the
 * three things the loader refuses (docs/host-guide.md). */
#define ELF_MAX_NEEDS 8
#define ELF_MAX_VERSIONS 32
typedef struct elf_needs {
  char file[64];                         /* "libc.so.6" */
  char versions[ELF_MAX_VERSIONS][40];   /* "GLIBC_2.2.5", ... as listed */
  size_t nversions;
  size_t newest;                         /* the index of the newest */
} elf_needs;

typedef struct elf_binary {
  bool has_gnu_stack; /* a PT_GNU_STACK program header */
  bool exec_stack;    /* ... with PF_X */
  int wx_segment;     /* the first PT_LOAD both writable and executable, or -1 */
  bool textrel;       /* DT_TEXTREL, or DF_TEXTREL in DT_FLAGS */
  elf_needs needs[ELF_MAX_NEEDS];
  size_t nneeds;
} elf_binary;

/* Reads path's program headers, dynamic section and version needs;
 * false with a one-line reason in err when it cannot. */
bool cert_elf_read_binary(const char *path, elf_binary *out, char *err, size_t errlen);
/* "libc.so.6 GLIBC_2.34 (newest of 9), libm.so.6 GLIBC_2.29 (newest of 1)"
 * into buf; its length. */
size_t cert_elf_needs_text(const elf_binary *b, char *buf, size_t len);

#endif /* BP_CONFORMANCE_ELFSHA_H */
