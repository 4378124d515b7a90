/* conformance/elfsyms.c - the dynamic symbol table of an ELF file, found
 * through the section headers (.dynsym and the string table it links to).
 * Every offset is bounds-checked: the file may be anything. */
#define _POSIX_C_SOURCE 200809L
#include "elfsha.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned char *cert_elf_slurp(const char *path, size_t *out_n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  unsigned char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (n < cap) break;
    unsigned char *bigger = realloc(buf, cap * 2);
    if (!bigger) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = bigger;
    cap *= 2;
  }
  fclose(f);
  *out_n = n;
  return buf;
}

/* Whether [off, off + len) lies inside a file of n bytes. */
bool cert_elf_in_file(uint64_t off, uint64_t len, size_t n) { return off <= n && len <= n - off; }

/* One section header or symbol, whatever the ELF class. */
typedef struct shdr {
  uint32_t type, link;
  uint64_t offset, size, entsize;
} shdr;

static bool get_shdr(const unsigned char *f, size_t n, bool is64, uint64_t shoff,
                     uint16_t shentsize, size_t i, shdr *out) {
  uint64_t at = shoff + (uint64_t)i * shentsize;
  if (is64) {
    Elf64_Shdr s;
    if (shentsize < sizeof s || !cert_elf_in_file(at, sizeof s, n)) return false;
    memcpy(&s, f + at, sizeof s);
    *out = (shdr){s.sh_type, s.sh_link, s.sh_offset, s.sh_size, s.sh_entsize};
  } else {
    Elf32_Shdr s;
    if (shentsize < sizeof s || !cert_elf_in_file(at, sizeof s, n)) return false;
    memcpy(&s, f + at, sizeof s);
    *out = (shdr){s.sh_type, s.sh_link, s.sh_offset, s.sh_size, s.sh_entsize};
  }
  return true;
}

bool cert_elf_read_dynsyms(const char *path, elf_syms *out, char *err, size_t errlen) {
  out->v = NULL;
  out->n = 0;
  size_t n = 0;
  unsigned char *f = cert_elf_slurp(path, &n);
  if (!f) {
    snprintf(err, errlen, "cannot read %s", path);
    return false;
  }
  bool ok = false;
  if (n < EI_NIDENT || memcmp(f, ELFMAG, SELFMAG) != 0) {
    snprintf(err, errlen, "not an ELF file");
    goto done;
  }
  bool is64 = f[EI_CLASS] == ELFCLASS64;
  if (!is64 && f[EI_CLASS] != ELFCLASS32) {
    snprintf(err, errlen, "unknown ELF class %u", f[EI_CLASS]);
    goto done;
  }
  /* Fields are read in the host's byte order: a plugin of the other
   * order could not be loaded here anyway. */
  const unsigned char native = (const union { uint16_t u; unsigned char c; }){1}.c == 1
                                   ? ELFDATA2LSB
                                   : ELFDATA2MSB;
  if (f[EI_DATA] != native) {
    snprintf(err, errlen, "ELF byte order differs from this machine's");
    goto done;
  }
  uint64_t shoff;
  uint16_t shentsize, shnum, type;
  if (is64) {
    Elf64_Ehdr h;
    if (n < sizeof h) goto truncated;
    memcpy(&h, f, sizeof h);
    shoff = h.e_shoff, shentsize = h.e_shentsize, shnum = h.e_shnum, type = h.e_type;
  } else {
    Elf32_Ehdr h;
    if (n < sizeof h) goto truncated;
    memcpy(&h, f, sizeof h);
    shoff = h.e_shoff, shentsize = h.e_shentsize, shnum = h.e_shnum, type = h.e_type;
  }
  if (type != ET_DYN) {
    snprintf(err, errlen, "not a shared object (e_type %u)", type);
    goto done;
  }
  for (size_t i = 0; i < shnum; i++) {
    shdr sym, str;
    if (!get_shdr(f, n, is64, shoff, shentsize, i, &sym)) goto truncated;
    if (sym.type != SHT_DYNSYM) continue;
    if (!get_shdr(f, n, is64, shoff, shentsize, sym.link, &str) ||
        !cert_elf_in_file(sym.offset, sym.size, n) || !cert_elf_in_file(str.offset, str.size, n) ||
        sym.entsize == 0)
      goto truncated;
    size_t count = (size_t)(sym.size / sym.entsize);
    out->v = calloc(count ? count : 1, sizeof *out->v);
    if (!out->v) {
      snprintf(err, errlen, "out of memory");
      goto done;
    }
    for (size_t k = 1; k < count; k++) { /* entry 0 is the null symbol */
      const unsigned char *p = f + sym.offset + k * sym.entsize;
      uint32_t name;
      unsigned char info;
      uint16_t shndx;
      if (is64) {
        Elf64_Sym s;
        if (sym.entsize < sizeof s) goto truncated;
        memcpy(&s, p, sizeof s);
        name = s.st_name, info = s.st_info, shndx = s.st_shndx;
      } else {
        Elf32_Sym s;
        if (sym.entsize < sizeof s) goto truncated;
        memcpy(&s, p, sizeof s);
        name = s.st_name, info = s.st_info, shndx = s.st_shndx;
      }
      unsigned bind = ELF64_ST_BIND(info), stype = ELF64_ST_TYPE(info);
      if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
      bool defined = shndx != SHN_UNDEF;
      /* Defined symbols count when they are functions or objects; undefined
       * ones are imports, whatever their type. */
      if (defined && stype != STT_FUNC && stype != STT_OBJECT) continue;
      if (name >= str.size) goto truncated;
      const char *s = (const char *)f + str.offset + name;
      size_t maxlen = (size_t)(str.size - name);
      size_t len = strnlen(s, maxlen);
      if (len == maxlen) goto truncated;
      out->v[out->n].name = strdup(s);
      out->v[out->n].defined = defined;
      if (!out->v[out->n].name) {
        snprintf(err, errlen, "out of memory");
        goto done;
      }
      out->n++;
    }
    ok = true;
    goto done;
  }
  snprintf(err, errlen, "no .dynsym section");
  goto done;
truncated:
  snprintf(err, errlen, "truncated or malformed ELF file");
done:
  if (!ok) cert_elf_syms_free(out);
  free(f);
  return ok;
}

void cert_elf_syms_free(elf_syms *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i].name);
  free(s->v);
  s->v = NULL;
  s->n = 0;
}
