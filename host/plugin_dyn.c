/*
 * host/plugin_dyn.c - what the dynamic loader will trust in a plugin file,
 * checked before dlopen (plugin_file.c calls it after the headers): a
 * corrupted file must be refused with a reason, never kill the host inside
 * ld.so.
 *
 * The dynamic loader reads the dynamic section, the symbol, string and
 * hash tables, the relocation tables, the version tables and the init and
 * fini arrays through the file's load segments, and trusts every index and
 * offset in them: a symbol index past the table, a relocation that writes
 * outside the writable segments, a DT_RELACOUNT prefix that is not all
 * R_*_RELATIVE (an assertion in glibc), a GNU hash table whose bloom
 * filter is not a power of two words (another) crash or abort the whole
 * process.  Each of those is checked here, on 64-bit little-endian ELF
 * files; relocation types are checked on x86-64.  Code bytes cannot be
 * checked (a constructor that crashes still crashes the host); a host
 * that must survive any file loads new plugin files in a child process
 * first, as bp-info does.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LOADS 32

/* One PT_LOAD: its memory range and the file bytes that back it. */
typedef struct seg {
  uint64_t vaddr, memsz, off, filesz;
  unsigned flags;
} seg;

typedef struct dynfile {
  const char *path;
  int fd;
  uint64_t size;
  seg loads[MAX_LOADS];
  unsigned nloads;
  bool textrel_ok; /* BP_PLUGIN_ALLOW_UNSAFE=textrel: relocations may write code */
  char why[200];   /* the reason of a refusal */
} dynfile;

static bool rd(const dynfile *f, void *buf, size_t n, uint64_t off) {
  size_t done = 0;
  if (off > f->size || n > f->size - off) return false;
  while (done < n) {
    ssize_t r = pread(f->fd, (char *)buf + done, n - done, (off_t)(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += (size_t)r;
  }
  return true;
}

static bool fail(dynfile *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(dynfile *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->why, sizeof f->why, fmt, ap);
  va_end(ap);
  return false;
}

/* The file offset of [vaddr, vaddr + len), which must lie in the
 * file-backed part of one load segment; false otherwise. */
static bool file_off(const dynfile *f, uint64_t vaddr, uint64_t len, uint64_t *off) {
  for (unsigned i = 0; i < f->nloads; i++) {
    const seg *s = &f->loads[i];
    if (vaddr < s->vaddr || vaddr - s->vaddr > s->filesz || len > s->filesz - (vaddr - s->vaddr))
      continue;
    *off = s->off + (vaddr - s->vaddr);
    return true;
  }
  return false;
}

/* Whether [vaddr, vaddr + len) lies in the memory of one load segment,
 * writable when `writable` (unless text relocations are allowed). */
static bool in_memory(const dynfile *f, uint64_t vaddr, uint64_t len, bool writable) {
  for (unsigned i = 0; i < f->nloads; i++) {
    const seg *s = &f->loads[i];
    if (vaddr < s->vaddr || vaddr - s->vaddr > s->memsz || len > s->memsz - (vaddr - s->vaddr))
      continue;
    return !writable || (s->flags & PF_W) || f->textrel_ok;
  }
  return false;
}

/* The dynamic entries the checks use (0 when absent). */
typedef struct dyn {
  uint64_t strtab, strsz, symtab, syment, hash, gnu_hash;
  uint64_t rela, relasz, relaent, relacount, jmprel, pltrelsz, pltrel;
  uint64_t relr, relrsz, relrent;
  uint64_t versym, verneed, verneednum, verdef, verdefnum;
  uint64_t init_array, init_arraysz, fini_array, fini_arraysz, preinit_array, preinit_arraysz;
  uint64_t init, fini;
  bool has[8]; /* strtab, symtab, rela, jmprel, relr, versym, verneed, verdef */
} dyn;

/* A string of the dynamic string table at index `at`: it must start in
 * the table and end (a NUL) before the table does. */
static bool string_ok(dynfile *f, const dyn *d, uint64_t at, const char *what) {
  if (at >= d->strsz) return fail(f, "%s names string %llu, past the string table's %llu bytes",
                                  what, (unsigned long long)at, (unsigned long long)d->strsz);
  uint64_t base;
  if (!file_off(f, d->strtab, d->strsz, &base)) return false;
  char buf[256];
  for (uint64_t p = at; p < d->strsz; p += sizeof buf) {
    size_t n = d->strsz - p < sizeof buf ? (size_t)(d->strsz - p) : sizeof buf;
    if (!rd(f, buf, n, base + p)) return fail(f, "the string table cannot be read");
    if (memchr(buf, 0, n)) return true;
  }
  return fail(f, "%s: string %llu runs past the end of the string table", what,
              (unsigned long long)at);
}

/* The number of dynamic symbols, from DT_HASH or DT_GNU_HASH (the tables
 * the loader bounds its lookups by), with each table's own checks. */
static bool count_gnu(dynfile *f, const dyn *d, uint64_t *nsyms);

/* (The loader uses DT_GNU_HASH when the file has both, so both are
 * checked; DT_HASH's chain count bounds the symbols when present.) */
static bool count_symbols(dynfile *f, const dyn *d, uint64_t *nsyms) {
  uint64_t off;
  if (!d->hash && !d->gnu_hash) return fail(f, "it has neither DT_HASH nor DT_GNU_HASH");
  if (d->gnu_hash && !count_gnu(f, d, nsyms)) return false;
  if (d->hash) {
    uint32_t h[2];
    if (!file_off(f, d->hash, 8, &off) || !rd(f, h, 8, off))
      return fail(f, "DT_HASH points outside the file's load segments");
    if (!file_off(f, d->hash, 8 + 4 * ((uint64_t)h[0] + h[1]), &off))
      return fail(f, "the DT_HASH table (%u buckets, %u chains) runs outside its segment", h[0],
                  h[1]);
    if (!d->gnu_hash || h[1] > *nsyms) *nsyms = h[1];
  }
  return true;
}

static bool count_gnu(dynfile *f, const dyn *d, uint64_t *nsyms) {
  uint64_t off;
  uint32_t h[4]; /* nbuckets, symoffset, bloom words, bloom shift */
  if (!file_off(f, d->gnu_hash, 16, &off) || !rd(f, h, 16, off))
    return fail(f, "DT_GNU_HASH points outside the file's load segments");
  if (h[0] == 0 || h[2] == 0 || (h[2] & (h[2] - 1)) != 0)
    return fail(f, "the DT_GNU_HASH table has %u buckets and %u bloom words (a power of two is "
                   "needed)", h[0], h[2]);
  uint64_t buckets = d->gnu_hash + 16 + 8 * (uint64_t)h[2];
  if (!file_off(f, buckets, 4 * (uint64_t)h[0], &off))
    return fail(f, "the DT_GNU_HASH buckets run outside their segment");
  uint64_t boff = off, max = 0;
  for (uint32_t b = 0; b < h[0]; b++) {
    uint32_t v;
    if (!rd(f, &v, 4, boff + 4 * (uint64_t)b)) return fail(f, "the DT_GNU_HASH buckets cannot be read");
    if (v != 0 && v < h[1]) return fail(f, "DT_GNU_HASH bucket %u starts at symbol %u, below its "
                                        "first hashed symbol %u", b, v, h[1]);
    if (v > max) max = v;
  }
  uint64_t chains = buckets + 4 * (uint64_t)h[0];
  if (max == 0) {
    *nsyms = h[1];
    return true;
  }
  /* Follow the last chain to its end (the low bit set). */
  for (uint64_t i = max;; i++) {
    uint32_t c;
    if (i - h[1] > (UINT64_C(1) << 24) || !file_off(f, chains + 4 * (i - h[1]), 4, &off) ||
        !rd(f, &c, 4, off))
      return fail(f, "a DT_GNU_HASH chain runs outside its segment");
    if (c & 1) {
      *nsyms = i + 1;
      return true;
    }
  }
}

static bool check_symbols(dynfile *f, const dyn *d, uint64_t nsyms) {
  if (!nsyms) return true;
  uint64_t off;
  if (!d->has[1]) return fail(f, "it has hashed symbols but no DT_SYMTAB");
  if (d->syment != sizeof(Elf64_Sym))
    return fail(f, "DT_SYMENT is %llu, expected %zu", (unsigned long long)d->syment,
                sizeof(Elf64_Sym));
  if (nsyms > (UINT64_C(1) << 24) || !file_off(f, d->symtab, nsyms * sizeof(Elf64_Sym), &off))
    return fail(f, "the symbol table (%llu symbols) runs outside its segment",
                (unsigned long long)nsyms);
  for (uint64_t i = 0; i < nsyms; i++) {
    Elf64_Sym s;
    if (!rd(f, &s, sizeof s, off + i * sizeof s)) return fail(f, "the symbol table cannot be read");
    char what[48];
    snprintf(what, sizeof what, "dynamic symbol %llu", (unsigned long long)i);
    if (s.st_name && !string_ok(f, d, s.st_name, what)) return false;
  }
  return true;
}

/* Relocation types the x86-64 loader applies; any other it reports, but
 * the checks below need the symbol and the target of each. */
static bool reloc_type_ok(uint32_t t) {
#if defined(__x86_64__)
  switch (t) {
    case R_X86_64_NONE: case R_X86_64_64: case R_X86_64_PC32: case R_X86_64_GLOB_DAT:
    case R_X86_64_JUMP_SLOT: case R_X86_64_RELATIVE: case R_X86_64_32: case R_X86_64_32S:
    case R_X86_64_DTPMOD64: case R_X86_64_DTPOFF64: case R_X86_64_TPOFF64:
    case R_X86_64_TLSDESC: case R_X86_64_IRELATIVE: case R_X86_64_SIZE64: case R_X86_64_SIZE32:
    case R_X86_64_COPY: return true;
    default: return false;
  }
#else
  (void)t;
  return true;
#endif
}

#if defined(__x86_64__)
#define RELATIVE_TYPE R_X86_64_RELATIVE
#elif defined(__aarch64__)
#define RELATIVE_TYPE R_AARCH64_RELATIVE
#else
#define RELATIVE_TYPE 0xffffffffu /* not checked */
#endif

static bool check_rela(dynfile *f, const char *name, uint64_t at, uint64_t sz, uint64_t nsyms,
                       uint64_t relative_prefix) {
  if (!sz) return true;
  if (sz % sizeof(Elf64_Rela) != 0)
    return fail(f, "%s's size %llu is not a multiple of %zu", name, (unsigned long long)sz,
                sizeof(Elf64_Rela));
  uint64_t off, n = sz / sizeof(Elf64_Rela);
  if (!file_off(f, at, sz, &off)) return fail(f, "%s runs outside the file's load segments", name);
  if (relative_prefix > n)
    return fail(f, "DT_RELACOUNT is %llu, but %s has %llu entries",
                (unsigned long long)relative_prefix, name, (unsigned long long)n);
  for (uint64_t i = 0; i < n; i++) {
    Elf64_Rela r;
    if (!rd(f, &r, sizeof r, off + i * sizeof r)) return fail(f, "%s cannot be read", name);
    uint32_t type = (uint32_t)ELF64_R_TYPE(r.r_info);
    uint64_t sym = ELF64_R_SYM(r.r_info);
    if (!reloc_type_ok(type))
      return fail(f, "%s entry %llu has relocation type %u, which this machine's loader does not "
                     "apply", name, (unsigned long long)i, type);
    if (i < relative_prefix && RELATIVE_TYPE != 0xffffffffu && type != RELATIVE_TYPE)
      return fail(f, "%s entry %llu is in the DT_RELACOUNT prefix but is of type %u, not a "
                     "relative relocation", name, (unsigned long long)i, type);
    if (sym != 0 && sym >= nsyms)
      return fail(f, "%s entry %llu names symbol %llu, past the %llu dynamic symbols", name,
                  (unsigned long long)i, (unsigned long long)sym, (unsigned long long)nsyms);
    if (type != 0 && !in_memory(f, r.r_offset, 8, true))
      return fail(f, "%s entry %llu writes at 0x%llx, outside the writable load segments", name,
                  (unsigned long long)i, (unsigned long long)r.r_offset);
  }
  return true;
}

/* DT_RELR: addresses (even words) and bitmaps of addresses after them
 * (odd words), each a word the loader adds the load base to. */
static bool check_relr(dynfile *f, const dyn *d) {
  if (!d->relrsz) return true;
  uint64_t off;
  if (d->relrent != 8 || d->relrsz % 8 != 0 || !file_off(f, d->relr, d->relrsz, &off))
    return fail(f, "the DT_RELR table is malformed or runs outside its segment");
  uint64_t base = 0;
  bool have_base = false;
  for (uint64_t i = 0; i < d->relrsz / 8; i++) {
    uint64_t w;
    if (!rd(f, &w, 8, off + 8 * i)) return fail(f, "the DT_RELR table cannot be read");
    if ((w & 1) == 0) {
      if (!in_memory(f, w, 8, true))
        return fail(f, "DT_RELR entry %llu writes at 0x%llx, outside the writable load segments",
                    (unsigned long long)i, (unsigned long long)w);
      base = w + 8;
      have_base = true;
      continue;
    }
    if (!have_base) return fail(f, "DT_RELR entry %llu is a bitmap before any address",
                                (unsigned long long)i);
    for (int b = 1; b < 64; b++)
      if ((w >> b) & 1 && !in_memory(f, base + 8 * (uint64_t)(b - 1), 8, true))
        return fail(f, "DT_RELR entry %llu writes outside the writable load segments",
                    (unsigned long long)i);
    base += 63 * 8;
  }
  return true;
}

/* DT_VERNEED and DT_VERDEF chains, and DT_VERSYM's indices against the
 * versions they define. */
static bool check_versions(dynfile *f, const dyn *d, uint64_t nsyms) {
  uint64_t off, maxndx = 1;
  if (d->has[6]) {
    uint64_t at = d->verneed;
    for (uint64_t i = 0; i < d->verneednum; i++) {
      Elf64_Verneed vn;
      if (!file_off(f, at, sizeof vn, &off) || !rd(f, &vn, sizeof vn, off))
        return fail(f, "DT_VERNEED entry %llu lies outside the load segments",
                    (unsigned long long)i);
      if (!string_ok(f, d, vn.vn_file, "a DT_VERNEED entry")) return false;
      uint64_t aux = at + vn.vn_aux;
      for (unsigned k = 0; k < vn.vn_cnt; k++) {
        Elf64_Vernaux va;
        if (!file_off(f, aux, sizeof va, &off) || !rd(f, &va, sizeof va, off))
          return fail(f, "a DT_VERNEED auxiliary entry lies outside the load segments");
        if (!string_ok(f, d, va.vna_name, "a DT_VERNEED version")) return false;
        if ((va.vna_other & 0x7fff) > maxndx) maxndx = va.vna_other & 0x7fff;
        if (!va.vna_next) break;
        aux += va.vna_next;
      }
      if (!vn.vn_next) break;
      at += vn.vn_next;
    }
  }
  if (d->has[7]) {
    uint64_t at = d->verdef;
    for (uint64_t i = 0; i < d->verdefnum; i++) {
      Elf64_Verdef vd;
      if (!file_off(f, at, sizeof vd, &off) || !rd(f, &vd, sizeof vd, off))
        return fail(f, "DT_VERDEF entry %llu lies outside the load segments",
                    (unsigned long long)i);
      if (vd.vd_cnt) {
        Elf64_Verdaux va;
        if (!file_off(f, at + vd.vd_aux, sizeof va, &off) || !rd(f, &va, sizeof va, off))
          return fail(f, "a DT_VERDEF auxiliary entry lies outside the load segments");
        if (!string_ok(f, d, va.vda_name, "a DT_VERDEF version")) return false;
      }
      if ((vd.vd_ndx & 0x7fff) > maxndx) maxndx = vd.vd_ndx & 0x7fff;
      if (!vd.vd_next) break;
      at += vd.vd_next;
    }
  }
  if (d->has[5] && nsyms) {
    if (!file_off(f, d->versym, 2 * nsyms, &off))
      return fail(f, "the DT_VERSYM table runs outside its segment");
    for (uint64_t i = 0; i < nsyms; i++) {
      uint16_t v;
      if (!rd(f, &v, 2, off + 2 * i)) return fail(f, "the DT_VERSYM table cannot be read");
      if ((v & 0x7fff) > maxndx)
        return fail(f, "dynamic symbol %llu has version index %u, but the file defines or needs "
                       "versions up to %llu", (unsigned long long)i, v & 0x7fff,
                    (unsigned long long)maxndx);
    }
  }
  return true;
}

static bool check_arrays(dynfile *f, const dyn *d) {
  static const char *const names[] = {"DT_INIT_ARRAY", "DT_FINI_ARRAY", "DT_PREINIT_ARRAY"};
  const uint64_t at[] = {d->init_array, d->fini_array, d->preinit_array};
  const uint64_t sz[] = {d->init_arraysz, d->fini_arraysz, d->preinit_arraysz};
  for (int i = 0; i < 3; i++)
    if (sz[i] && (sz[i] % 8 != 0 || !in_memory(f, at[i], sz[i], false)))
      return fail(f, "%s (%llu bytes) lies outside the load segments", names[i],
                  (unsigned long long)sz[i]);
  if (d->init && !in_memory(f, d->init, 1, false)) return fail(f, "DT_INIT lies outside the load segments");
  if (d->fini && !in_memory(f, d->fini, 1, false)) return fail(f, "DT_FINI lies outside the load segments");
  return true;
}

/* Reads the load segments and the dynamic section, then checks the rest. */
static bool check_dynamic(dynfile *f, uint64_t phoff, unsigned phnum) {
  uint64_t dyn_vaddr = 0, dyn_size = 0, last_end = 0;
  bool have_dyn = false;
  for (unsigned i = 0; i < phnum; i++) {
    Elf64_Phdr ph;
    if (!rd(f, &ph, sizeof ph, phoff + (uint64_t)i * sizeof ph))
      return fail(f, "its program headers cannot be read");
    if (ph.p_type == PT_DYNAMIC) dyn_vaddr = ph.p_vaddr, dyn_size = ph.p_filesz, have_dyn = true;
    if (ph.p_type != PT_LOAD) continue;
    if (f->nloads == MAX_LOADS) return fail(f, "it has more than %d load segments", MAX_LOADS);
    if (ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
      return fail(f, "load segment %u (program header #%u) is malformed: %llu file bytes for %llu "
                     "bytes of memory", f->nloads, i, (unsigned long long)ph.p_filesz,
                  (unsigned long long)ph.p_memsz);
    if (ph.p_align > 1 && ((ph.p_align & (ph.p_align - 1)) != 0 ||
                           (ph.p_vaddr - ph.p_offset) % ph.p_align != 0))
      return fail(f, "load segment %u (program header #%u) is misaligned: address 0x%llx, offset "
                     "0x%llx, alignment 0x%llx", f->nloads, i, (unsigned long long)ph.p_vaddr,
                  (unsigned long long)ph.p_offset, (unsigned long long)ph.p_align);
    if (f->nloads && ph.p_vaddr < last_end)
      return fail(f, "load segment %u (program header #%u) overlaps or precedes the one before",
                  f->nloads, i);
    last_end = ph.p_vaddr + ph.p_memsz;
    f->loads[f->nloads++] = (seg){ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags};
  }
  if (!f->nloads) return fail(f, "it has no load segment");
  if (!have_dyn) return fail(f, "it has no dynamic section (PT_DYNAMIC), so it is not a shared "
                                "library the loader can link");
  uint64_t off;
  if (dyn_size < sizeof(Elf64_Dyn) || !file_off(f, dyn_vaddr, dyn_size, &off))
    return fail(f, "its dynamic section lies outside its load segments");
  dyn d;
  memset(&d, 0, sizeof d);
  bool ended = false;
  for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dyn_size; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn e;
    if (!rd(f, &e, sizeof e, off + at)) return fail(f, "its dynamic section cannot be read");
    uint64_t v = e.d_un.d_val;
    switch (e.d_tag) {
      case DT_NULL: ended = true; break;
      case DT_STRTAB: d.strtab = v, d.has[0] = true; break;
      case DT_STRSZ: d.strsz = v; break;
      case DT_SYMTAB: d.symtab = v, d.has[1] = true; break;
      case DT_SYMENT: d.syment = v; break;
      case DT_HASH: d.hash = v; break;
      case DT_GNU_HASH: d.gnu_hash = v; break;
      case DT_RELA: d.rela = v, d.has[2] = true; break;
      case DT_RELASZ: d.relasz = v; break;
      case DT_RELAENT: d.relaent = v; break;
      case DT_RELACOUNT: d.relacount = v; break;
      case DT_JMPREL: d.jmprel = v, d.has[3] = true; break;
      case DT_PLTRELSZ: d.pltrelsz = v; break;
      case DT_PLTREL: d.pltrel = v; break;
#ifdef DT_RELR
      case DT_RELR: d.relr = v, d.has[4] = true; break;
      case DT_RELRSZ: d.relrsz = v; break;
      case DT_RELRENT: d.relrent = v; break;
#endif
      case DT_VERSYM: d.versym = v, d.has[5] = true; break;
      case DT_VERNEED: d.verneed = v, d.has[6] = true; break;
      case DT_VERNEEDNUM: d.verneednum = v; break;
      case DT_VERDEF: d.verdef = v, d.has[7] = true; break;
      case DT_VERDEFNUM: d.verdefnum = v; break;
      case DT_INIT_ARRAY: d.init_array = v; break;
      case DT_INIT_ARRAYSZ: d.init_arraysz = v; break;
      case DT_FINI_ARRAY: d.fini_array = v; break;
      case DT_FINI_ARRAYSZ: d.fini_arraysz = v; break;
      case DT_PREINIT_ARRAY: d.preinit_array = v; break;
      case DT_PREINIT_ARRAYSZ: d.preinit_arraysz = v; break;
      case DT_INIT: d.init = v; break;
      case DT_FINI: d.fini = v; break;
      case DT_REL: case DT_RELSZ:
        return fail(f, "it has DT_REL relocations, which a 64-bit loader does not take");
      default: break;
    }
    if (ended) break;
  }
  if (!ended) return fail(f, "its dynamic section has no DT_NULL entry to end it");
  if (!d.has[0] || !file_off(f, d.strtab, d.strsz, &off) || d.strsz == 0)
    return fail(f, "its dynamic string table (DT_STRTAB, %llu bytes) lies outside its load "
                   "segments", (unsigned long long)d.strsz);
  /* The strings the dynamic section names. */
  uint64_t doff = 0;
  if (!file_off(f, dyn_vaddr, dyn_size, &doff)) return fail(f, "its dynamic section moved");
  for (uint64_t at = 0; at + sizeof(Elf64_Dyn) <= dyn_size; at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn e;
    if (!rd(f, &e, sizeof e, doff + at)) break;
    if (e.d_tag == DT_NULL) break;
    if ((e.d_tag == DT_NEEDED || e.d_tag == DT_SONAME || e.d_tag == DT_RPATH ||
         e.d_tag == DT_RUNPATH) && !string_ok(f, &d, e.d_un.d_val, "a DT_NEEDED, DT_SONAME or "
                                                                   "DT_RUNPATH entry"))
      return false;
  }
  uint64_t nsyms = 0;
  if (!count_symbols(f, &d, &nsyms) || !check_symbols(f, &d, nsyms)) return false;
  if (d.has[2] && d.relaent && d.relaent != sizeof(Elf64_Rela))
    return fail(f, "DT_RELAENT is %llu, expected %zu", (unsigned long long)d.relaent,
                sizeof(Elf64_Rela));
  if (d.has[3] && d.pltrel != DT_RELA)
    return fail(f, "DT_PLTREL is %llu, expected DT_RELA", (unsigned long long)d.pltrel);
  if (!d.has[2] && d.relacount) return fail(f, "DT_RELACOUNT without DT_RELA");
  if ((d.has[2] && !check_rela(f, "DT_RELA", d.rela, d.relasz, nsyms, d.relacount)) ||
      (d.has[3] && !check_rela(f, "DT_JMPREL", d.jmprel, d.pltrelsz, nsyms, 0)))
    return false;
  return check_relr(f, &d) && check_versions(f, &d, nsyms) && check_arrays(f, &d);
}

bp_status bp__plugin_dyn_check(const char *path, int fd, uint64_t size, uint64_t phoff,
                               unsigned phnum, bool textrel_ok) {
#if UINTPTR_MAX > 0xffffffffu && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  dynfile *f = bp__calloc(1, sizeof *f);
  if (!f) return bp__error(BP_ERR_OUT_OF_MEMORY, "plugin '%s': out of memory", path);
  f->path = path;
  f->fd = fd;
  f->size = size;
  f->textrel_ok = textrel_ok;
  bool ok = check_dynamic(f, phoff, phnum);
  bp_status st = ok ? BP_OK
                    : bp__error(BP_ERR_LOAD, "plugin '%s': the file is corrupt: %s; the dynamic "
                                             "loader would crash on it", path, f->why);
  bp__free(f);
  return st;
#else
  (void)path, (void)fd, (void)size, (void)phoff, (void)phnum, (void)textrel_ok;
  return BP_OK;
#endif
}
