/*
 * conformance/elfbin.c - what an ELF shared object asks of the process
 * that maps it, read from the file without loading it: whether it needs an
 * executable stack, maps a writable and executable segment or has text
 * relocations (the loader refuses all three: host/plugin_file.c), and the
 * symbol versions it requires of each library (.gnu.version_r).  Every
 * offset is bounds-checked: the file may be anything.
 */
#define _POSIX_C_SOURCE 200809L
#include "elfsha.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "GLIBC_2.34" after "GLIBC_2.2.5": the same prefix, the numbers compared
 * one by one; any other pair by its text. */
static int version_cmp(const char *a, const char *b) {
  size_t pa = strcspn(a, "0123456789"), pb = strcspn(b, "0123456789");
  if (pa != pb || strncmp(a, b, pa) != 0) return strcmp(a, b);
  a += pa, b += pb;
  while (*a || *b) {
    char *ea, *eb;
    unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
    if (x != y) return x < y ? -1 : 1;
    if (ea == a || eb == b) return strcmp(ea, eb);
    a = *ea == '.' ? ea + 1 : ea;
    b = *eb == '.' ? eb + 1 : eb;
  }
  return 0;
}

/* A NUL-terminated string at offset `name` of the string table at
 * [str, str + len) of f, or NULL. */
static const char *str_at(const unsigned char *f, uint64_t str, uint64_t len, uint64_t name) {
  if (name >= len) return NULL;
  const char *s = (const char *)f + str + name;
  return strnlen(s, (size_t)(len - name)) < len - name ? s : NULL;
}

static void add_version(elf_needs *lib, const char *v) {
  if (lib->nversions >= ELF_MAX_VERSIONS) return;
  snprintf(lib->versions[lib->nversions], sizeof lib->versions[0], "%s", v);
  if (lib->nversions == 0 || version_cmp(v, lib->versions[lib->newest]) > 0)
    lib->newest = lib->nversions;
  lib->nversions++;
}

/* .gnu.version_r (the section of type SHT_GNU_verneed, whose sh_link is
 * its string table): for each library, the versions it needs. */
static bool read_verneed(const unsigned char *f, size_t n, uint64_t off, uint64_t size,
                         uint64_t str, uint64_t strsize, elf_binary *out) {
  uint64_t at = off;
  for (unsigned k = 0; k < 64 && at >= off && at + sizeof(Elf64_Verneed) <= off + size; k++) {
    Elf64_Verneed vn; /* the same layout in both classes */
    if (!cert_elf_in_file(at, sizeof vn, n)) return false;
    memcpy(&vn, f + at, sizeof vn);
    const char *file = str_at(f, str, strsize, vn.vn_file);
    if (!file) return false;
    elf_needs *lib = out->nneeds < ELF_MAX_NEEDS ? &out->needs[out->nneeds++] : NULL;
    if (lib) {
      memset(lib, 0, sizeof *lib);
      snprintf(lib->file, sizeof lib->file, "%s", file);
    }
    uint64_t aux = at + vn.vn_aux;
    for (unsigned j = 0; j < vn.vn_cnt && j < 256; j++) {
      Elf64_Vernaux va;
      if (!cert_elf_in_file(aux, sizeof va, n)) return false;
      memcpy(&va, f + aux, sizeof va);
      const char *name = str_at(f, str, strsize, va.vna_name);
      if (!name) return false;
      if (lib) add_version(lib, name);
      if (va.vna_next == 0) break;
      aux += va.vna_next;
    }
    if (vn.vn_next == 0) break;
    at += vn.vn_next;
  }
  return true;
}

/* One program or section header, whatever the ELF class. */
typedef struct hdr {
  uint32_t type, flags, link;
  uint64_t offset, size;
} hdr;

static bool get_phdr(const unsigned char *f, size_t n, bool is64, uint64_t at, hdr *h) {
  if (is64) {
    Elf64_Phdr p;
    if (!cert_elf_in_file(at, sizeof p, n)) return false;
    memcpy(&p, f + at, sizeof p);
    *h = (hdr){p.p_type, p.p_flags, 0, p.p_offset, p.p_filesz};
  } else {
    Elf32_Phdr p;
    if (!cert_elf_in_file(at, sizeof p, n)) return false;
    memcpy(&p, f + at, sizeof p);
    *h = (hdr){p.p_type, p.p_flags, 0, p.p_offset, p.p_filesz};
  }
  return true;
}

static bool get_shdr(const unsigned char *f, size_t n, bool is64, uint64_t at, hdr *h) {
  if (is64) {
    Elf64_Shdr s;
    if (!cert_elf_in_file(at, sizeof s, n)) return false;
    memcpy(&s, f + at, sizeof s);
    *h = (hdr){s.sh_type, 0, s.sh_link, s.sh_offset, s.sh_size};
  } else {
    Elf32_Shdr s;
    if (!cert_elf_in_file(at, sizeof s, n)) return false;
    memcpy(&s, f + at, sizeof s);
    *h = (hdr){s.sh_type, 0, s.sh_link, s.sh_offset, s.sh_size};
  }
  return true;
}

/* Whether the dynamic section at [off, off + size) asks for text
 * relocations. */
static bool dyn_textrel(const unsigned char *f, size_t n, bool is64, uint64_t off,
                        uint64_t size) {
  size_t ent = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
  for (uint64_t at = off; at + ent <= off + size && cert_elf_in_file(at, ent, n); at += ent) {
    int64_t tag;
    uint64_t val;
    if (is64) {
      Elf64_Dyn d;
      memcpy(&d, f + at, sizeof d);
      tag = d.d_tag, val = d.d_un.d_val;
    } else {
      Elf32_Dyn d;
      memcpy(&d, f + at, sizeof d);
      tag = d.d_tag, val = d.d_un.d_val;
    }
    if (tag == DT_NULL) break;
    if (tag == DT_TEXTREL || (tag == DT_FLAGS && (val & DF_TEXTREL))) return true;
  }
  return false;
}

bool cert_elf_read_binary(const char *path, elf_binary *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->wx_segment = -1;
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
  uint64_t phoff, shoff;
  unsigned phentsize, phnum, shentsize, shnum;
  if (is64) {
    Elf64_Ehdr h;
    if (n < sizeof h) goto truncated;
    memcpy(&h, f, sizeof h);
    phoff = h.e_phoff, phentsize = h.e_phentsize, phnum = h.e_phnum;
    shoff = h.e_shoff, shentsize = h.e_shentsize, shnum = h.e_shnum;
  } else {
    Elf32_Ehdr h;
    if (n < sizeof h) goto truncated;
    memcpy(&h, f, sizeof h);
    phoff = h.e_phoff, phentsize = h.e_phentsize, phnum = h.e_phnum;
    shoff = h.e_shoff, shentsize = h.e_shentsize, shnum = h.e_shnum;
  }
  for (unsigned i = 0; i < phnum; i++) {
    hdr p;
    if (!get_phdr(f, n, is64, phoff + (uint64_t)i * phentsize, &p)) goto truncated;
    if (p.type == PT_GNU_STACK) {
      out->has_gnu_stack = true;
      out->exec_stack = (p.flags & PF_X) != 0;
    }
    if (p.type == PT_LOAD && (p.flags & PF_W) && (p.flags & PF_X) && out->wx_segment < 0)
      out->wx_segment = (int)i;
    if (p.type == PT_DYNAMIC && cert_elf_in_file(p.offset, p.size, n))
      out->textrel = dyn_textrel(f, n, is64, p.offset, p.size);
  }
  for (unsigned i = 0; i < shnum; i++) {
    hdr s, str;
    if (!get_shdr(f, n, is64, shoff + (uint64_t)i * shentsize, &s)) goto truncated;
    if (s.type != SHT_GNU_verneed) continue;
    if (!get_shdr(f, n, is64, shoff + (uint64_t)s.link * shentsize, &str) ||
        !cert_elf_in_file(s.offset, s.size, n) || !cert_elf_in_file(str.offset, str.size, n) ||
        !read_verneed(f, n, s.offset, s.size, str.offset, str.size, out))
      goto truncated;
  }
  ok = true;
  goto done;
truncated:
  snprintf(err, errlen, "truncated or malformed ELF file");
done:
  free(f);
  return ok;
}

size_t cert_elf_needs_text(const elf_binary *b, char *buf, size_t len) {
  size_t o = 0;
  if (len) buf[0] = '\0';
  for (size_t i = 0; i < b->nneeds && o < len; i++) {
    const elf_needs *lib = &b->needs[i];
    if (!lib->nversions) continue;
    int w = snprintf(buf + o, len - o, "%s%s %s (newest of %zu)", o ? ", " : "", lib->file,
                     lib->versions[lib->newest], lib->nversions);
    if (w < 0) break;
    o += (size_t)w;
  }
  return o;
}
