/*
 * host/plugin_file.c - what a plugin file must be before dlopen() sees it.
 *
 * dlopen() trusts its input: it maps a file's segments where the program
 * headers say, so a truncated file (a half-copied install) makes it read
 * past the end of the mapping and the process dies of SIGBUS; a FIFO blocks
 * it in open(); a file for another architecture is reported as "No such
 * file or directory".  So the loader first opens the file without
 * blocking, requires a regular file, and validates its ELF header and the
 * extent of its program and section headers and segments against the
 * file's size.  Each refusal names the file and the reason.
 *
 * It also refuses a plugin that would weaken the whole process once
 * mapped: one that needs an executable stack (PT_GNU_STACK with PF_X, or
 * no PT_GNU_STACK on x86, where the dynamic loader then makes every
 * thread's stack executable), one with a segment both writable and
 * executable, and one with text relocations (DT_TEXTREL, DF_TEXTREL: the
 * loader writes into its code).  BP_PLUGIN_ALLOW_UNSAFE, a comma-separated
 * list of "execstack", "wx" and "textrel" (or "all"), lets a host load
 * such a plugin anyway (docs/host-guide.md).
 *
 * The check and the dlopen() are two opens of one path, so a file swapped
 * in between is not caught; plugin directories are trusted to that extent
 * (dlopen() through /proc/self/fd would close the gap but breaks
 * $ORIGIN-relative library paths).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The ELF machine this library was built for, or EM_NONE when unknown
 * (then the machine is not checked). */
#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#elif defined(__s390x__)
#define HOST_MACHINE EM_S390
#elif defined(__loongarch__)
#define HOST_MACHINE 258 /* EM_LOONGARCH */
#else
#define HOST_MACHINE EM_NONE
#endif

#if UINTPTR_MAX > 0xffffffffu
#define HOST_CLASS ELFCLASS64
#else
#define HOST_CLASS ELFCLASS32
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

static const char *machine_name(unsigned m) {
  switch (m) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_386: return "i386";
    case EM_ARM: return "arm";
    case EM_PPC64: return "ppc64";
    case EM_PPC: return "ppc";
    case EM_RISCV: return "riscv";
    case EM_S390: return "s390";
    case EM_MIPS: return "mips";
    case EM_SPARCV9: return "sparcv9";
    case 258: return "loongarch";
    default: return NULL;
  }
}

static void machine_label(unsigned m, char *buf, size_t n) {
  const char *name = machine_name(m);
  if (name)
    snprintf(buf, n, "%s", name);
  else
    snprintf(buf, n, "ELF machine %u", m);
}

static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/* Reads exactly n bytes at off; false at end of file or on error. */
static bool read_at(int fd, void *buf, size_t n, uint64_t off) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = pread(fd, (char *)buf + done, n - done, (off_t)(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    done += (size_t)r;
  }
  return true;
}

/* Whether [off, off + count * entsize) lies inside a file of `size` bytes. */
static bool table_fits(uint64_t off, uint64_t count, uint64_t entsize, uint64_t size) {
  uint64_t bytes;
  if (__builtin_mul_overflow(count, entsize, &bytes)) return false;
  return off <= size && bytes <= size - off;
}

/* The fields of the header and of one program header, whatever the class. */
typedef struct elf_info {
  unsigned type, machine;
  uint64_t phoff, shoff;
  unsigned phentsize, phnum, shentsize, shnum;
} elf_info;

static bp_status bad(const char *path, const char *why) {
  return bp__error(BP_ERR_LOAD, "plugin '%s': %s", path, why);
}

/* Whether BP_PLUGIN_ALLOW_UNSAFE lets a plugin have `what` ("execstack",
 * "wx" or "textrel"). */
static bool allowed(const char *what) {
  const char *env = getenv("BP_PLUGIN_ALLOW_UNSAFE");
  size_t n = strlen(what);
  for (const char *p = env; p && *p;) {
    size_t len = strcspn(p, ",");
    if ((len == n && strncmp(p, what, n) == 0) || (len == 3 && strncmp(p, "all", 3) == 0))
      return true;
    p += len + (p[len] == ',');
  }
  return false;
}

/* Whether a missing PT_GNU_STACK makes the dynamic loader give the
 * process an executable stack (glibc's DEFAULT_STACK_PERMS). */
#if defined(__x86_64__) || defined(__i386__)
#define NO_GNU_STACK_IS_EXEC 1
#else
#define NO_GNU_STACK_IS_EXEC 0
#endif

/* The dynamic section at [off, off + filesz): whether it asks for text
 * relocations (DT_TEXTREL, or DF_TEXTREL in DT_FLAGS). */
static bool has_textrel(int fd, bool is64, uint64_t off, uint64_t filesz) {
  size_t ent = is64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
  for (uint64_t at = off; at + ent <= off + filesz; at += ent) {
    int64_t tag;
    uint64_t val;
    if (is64) {
      Elf64_Dyn d;
      if (!read_at(fd, &d, sizeof d, at)) return false;
      tag = d.d_tag, val = d.d_un.d_val;
    } else {
      Elf32_Dyn d;
      if (!read_at(fd, &d, sizeof d, at)) return false;
      tag = d.d_tag, val = d.d_un.d_val;
    }
    if (tag == DT_NULL) break;
    if (tag == DT_TEXTREL || (tag == DT_FLAGS && (val & DF_TEXTREL))) return true;
  }
  return false;
}

/* Refuses what a plugin's mapping would do to the process: an executable
 * stack, a writable and executable segment, text relocations. */
static bp_status check_unsafe(const char *path, int fd, bool is64, bool gnu_stack,
                              unsigned stack_flags, int wx, uint64_t dyn_off, uint64_t dyn_size) {
  bool exec_stack = gnu_stack ? (stack_flags & PF_X) != 0 : NO_GNU_STACK_IS_EXEC;
  if (exec_stack && !allowed("execstack"))
    return bp__error(BP_ERR_LOAD,
                     "plugin '%s': it needs an executable stack (%s), which would make the stack "
                     "of every thread of the process executable; rebuild it with -Wl,-z,noexecstack "
                     "(BP_PLUGIN_ALLOW_UNSAFE=execstack loads it anyway)",
                     path, gnu_stack ? "its PT_GNU_STACK program header has PF_X"
                                     : "it has no PT_GNU_STACK program header");
  if (wx >= 0 && !allowed("wx"))
    return bp__error(BP_ERR_LOAD,
                     "plugin '%s': program header #%d maps a segment that is both writable and "
                     "executable; rebuild it with each section either writable or executable "
                     "(BP_PLUGIN_ALLOW_UNSAFE=wx loads it anyway)", path, wx);
  if (dyn_size && has_textrel(fd, is64, dyn_off, dyn_size) && !allowed("textrel"))
    return bp__error(BP_ERR_LOAD,
                     "plugin '%s': it has text relocations (DT_TEXTREL), which make the dynamic "
                     "loader write into its code; rebuild it from position-independent code "
                     "(-fPIC) (BP_PLUGIN_ALLOW_UNSAFE=textrel loads it anyway)", path);
  return BP_OK;
}

static bp_status check_segments(const char *path, int fd, const elf_info *e, bool is64,
                                uint64_t size) {
  size_t want = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  bool gnu_stack = false;
  unsigned stack_flags = 0;
  int wx = -1;
  uint64_t dyn_off = 0, dyn_size = 0;
  if (e->phnum == 0) return bad(path, "the ELF file has no program headers");
  if (e->phentsize != want)
    return bp__error(BP_ERR_LOAD, "plugin '%s': the ELF program header size is %u, expected %zu",
                     path, e->phentsize, want);
  for (unsigned i = 0; i < e->phnum; i++) {
    uint64_t off, filesz;
    unsigned type, flags;
    uint64_t at = e->phoff + (uint64_t)i * e->phentsize;
    if (is64) {
      Elf64_Phdr ph;
      if (!read_at(fd, &ph, sizeof ph, at)) goto truncated;
      type = ph.p_type, off = ph.p_offset, filesz = ph.p_filesz, flags = ph.p_flags;
    } else {
      Elf32_Phdr ph;
      if (!read_at(fd, &ph, sizeof ph, at)) goto truncated;
      type = ph.p_type, off = ph.p_offset, filesz = ph.p_filesz, flags = ph.p_flags;
    }
    if (type == PT_GNU_STACK) gnu_stack = true, stack_flags = flags;
    if (type == PT_LOAD && (flags & PF_W) && (flags & PF_X) && wx < 0) wx = (int)i;
    if (type == PT_DYNAMIC) dyn_off = off, dyn_size = filesz;
    if (type == PT_NULL || filesz == 0) continue;
    if (off > size || filesz > size - off)
      return bp__error(BP_ERR_LOAD,
                       "plugin '%s': the file is truncated or corrupt: program header #%u needs "
                       "bytes %llu..%llu, but the file has %llu bytes", path, i,
                       (unsigned long long)off, (unsigned long long)(off + filesz),
                       (unsigned long long)size);
  }
  return check_unsafe(path, fd, is64, gnu_stack, stack_flags, wx, dyn_off, dyn_size);
truncated:
  return bad(path, "the file is truncated: its program headers cannot be read");
}

static bp_status check_elf(const char *path, int fd, uint64_t size) {
  unsigned char id[EI_NIDENT];
  if (size == 0) return bad(path, "the file is empty (0 bytes), not a shared object");
  if (size < EI_NIDENT || !read_at(fd, id, sizeof id, 0) || memcmp(id, ELFMAG, SELFMAG) != 0) {
    if (size >= SELFMAG && read_at(fd, id, SELFMAG, 0) && memcmp(id, ELFMAG, SELFMAG) == 0)
      return bp__error(BP_ERR_LOAD,
                       "plugin '%s': the file is truncated: %llu bytes, less than an ELF header",
                       path, (unsigned long long)size);
    return bad(path, "not an ELF file (no ELF magic number)");
  }
  if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64)
    return bp__error(BP_ERR_LOAD, "plugin '%s': unknown ELF class %u", path, id[EI_CLASS]);
  bool is64 = id[EI_CLASS] == ELFCLASS64;
  if (id[EI_CLASS] != HOST_CLASS)
    return bp__error(BP_ERR_LOAD, "plugin '%s': it is a %s-bit ELF file, but this host is %s-bit",
                     path, is64 ? "64" : "32", HOST_CLASS == ELFCLASS64 ? "64" : "32");
  if (id[EI_DATA] != HOST_DATA)
    return bp__error(BP_ERR_LOAD, "plugin '%s': it is a %s ELF file, but this host is %s", path,
                     id[EI_DATA] == ELFDATA2LSB ? "little-endian"
                     : id[EI_DATA] == ELFDATA2MSB ? "big-endian" : "invalid-endianness",
                     HOST_DATA == ELFDATA2LSB ? "little-endian" : "big-endian");
  elf_info e;
  if (is64) {
    Elf64_Ehdr h;
    if (size < sizeof h || !read_at(fd, &h, sizeof h, 0))
      return bp__error(BP_ERR_LOAD, "plugin '%s': the file is truncated: %llu bytes, less than "
                       "an ELF header", path, (unsigned long long)size);
    e = (elf_info){h.e_type, h.e_machine, h.e_phoff, h.e_shoff, h.e_phentsize, h.e_phnum,
                   h.e_shentsize, h.e_shnum};
  } else {
    Elf32_Ehdr h;
    if (size < sizeof h || !read_at(fd, &h, sizeof h, 0))
      return bp__error(BP_ERR_LOAD, "plugin '%s': the file is truncated: %llu bytes, less than "
                       "an ELF header", path, (unsigned long long)size);
    e = (elf_info){h.e_type, h.e_machine, h.e_phoff, h.e_shoff, h.e_phentsize, h.e_phnum,
                   h.e_shentsize, h.e_shnum};
  }
  if (HOST_MACHINE != EM_NONE && e.machine != HOST_MACHINE) {
    char got[48], want[48];
    machine_label(e.machine, got, sizeof got);
    machine_label(HOST_MACHINE, want, sizeof want);
    return bp__error(BP_ERR_LOAD, "plugin '%s': it is built for %s, but this host is %s", path,
                     got, want);
  }
  if (e.type != ET_DYN)
    return bp__error(BP_ERR_LOAD, "plugin '%s': it is an ELF %s, not a shared object", path,
                     e.type == ET_EXEC ? "executable" : e.type == ET_REL ? "object file (.o)"
                     : e.type == ET_CORE ? "core dump" : "file of unknown type");
  if (!table_fits(e.phoff, e.phnum, e.phentsize, size))
    return bp__error(BP_ERR_LOAD,
                     "plugin '%s': the file is truncated or corrupt: its program headers end "
                     "past its %llu bytes", path, (unsigned long long)size);
  if (e.shoff != 0 && !table_fits(e.shoff, e.shnum, e.shentsize, size))
    return bp__error(BP_ERR_LOAD,
                     "plugin '%s': the file is truncated or corrupt: its section headers end "
                     "past its %llu bytes", path, (unsigned long long)size);
  bp_status st = check_segments(path, fd, &e, is64, size);
  if (!st && is64) st = bp__plugin_dyn_check(path, fd, size, e.phoff, e.phnum, allowed("textrel"));
  return st;
}

bp_status bp__plugin_file_check(const char *path) {
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int err = errno;
    return bp__error(BP_ERR_LOAD, "plugin '%s': cannot open: %s", path, strerror(err));
  }
  struct stat sb;
  bp_status st;
  if (fstat(fd, &sb) != 0) {
    int err = errno;
    st = bp__error(BP_ERR_LOAD, "plugin '%s': cannot stat: %s", path, strerror(err));
  } else if (!S_ISREG(sb.st_mode)) {
    st = bp__error(BP_ERR_LOAD, "plugin '%s': it is %s, not a regular file", path,
                   file_kind(sb.st_mode));
  } else {
    st = check_elf(path, fd, (uint64_t)sb.st_size);
  }
  close(fd);
  return st;
}
