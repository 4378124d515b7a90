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
bool sha256_file(const char *path, char hex[65]);

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

bool elf_read_dynsyms(const char *path, elf_syms *out, char *err,
                      size_t errlen);
void elf_syms_free(elf_syms *s);

#endif /* BP_CONFORMANCE_ELFSHA_H */
