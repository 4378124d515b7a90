/*
 * tests/test-plugin-files.c - files in a plugin directory that are not
 * loadable plugins: no such file may crash or hang a host that discovers
 * it, and each refusal names the file and the reason.
 *
 * The bad files are made from a real plugin (tests/plugins' good.so): cut
 * at several points, its ELF machine or class patched, its program headers
 * or dynamic section patched to need an executable stack, map a writable
 * and executable segment or carry text relocations, or replaced by an
 * empty file, a FIFO, a directory named "x.so" and a text file; its
 * dynamic tables corrupted where the dynamic loader would crash on them;
 * and copies with random bytes changed, each loaded in a child process
 * and counted as refused, loaded or killed (100 of them in the first
 * 4 KiB in make check; in make check-long, BP_TEST_TIER=long, 1500 there
 * and 1500 anywhere in the file), and again anywhere with BP_PLUGIN_PROBE=1
 * (60; 1500 in the long tier), where none may kill more than 3% (none did
 * in our runs).  A case runs in a fresh process (tap_main), and alarm()
 * turns a hang into a failure.
 */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static unsigned char *slurp(const char *path, size_t *out_n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = n > 0 ? malloc((size_t)n) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *out_n = b ? (size_t)n : 0;
  return b;
}

static bool spit(const char *path, const unsigned char *b, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok_ = fwrite(b, 1, n, f) == n;
  return fclose(f) == 0 && ok_;
}

static char dir[64];

static bool make_dir(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/bp-files-XXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    tap_diag("mkdtemp(%s) failed", dir);
    return false;
  }
  return true;
}

static void remove_dir(void) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (unlink(path) != 0) rmdir(path);
  }
  closedir(d);
  rmdir(dir);
}

static const char *in_dir(const char *name) {
  static char buf[4][PATH_MAX];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, PATH_MAX, "%s/%s", dir, name);
  return b;
}

/* Loads `name` from the directory and expects BP_ERR_LOAD with a message
 * that names the file and says `why`. */
static void refused(const char *name, const char *why) {
  char canon[PATH_MAX];
  const char *path = in_dir(name);
  if (!realpath(path, canon)) snprintf(canon, sizeof canon, "%s", path);
  is_status(bp_plugin_load(path, NULL), BP_ERR_LOAD);
  has_str(bp_last_error(), canon);
  has_str(bp_last_error(), why);
}

/* The good plugin's bytes. */
static unsigned char *good_bytes(size_t *n) {
  unsigned char *b = slurp(test_plugin("good"), n);
  ok(b != NULL && *n > 4096);
  return b;
}

static void truncated_files(void) {
  size_t n;
  unsigned char *b = good_bytes(&n);
  if (!b || !make_dir()) return;
  alarm(60);
  /* Cut points: inside the ELF identification, inside the header, inside
   * the program headers, inside the first segment, in the middle, and one
   * byte short of the end (in the section headers). */
  size_t cuts[] = {3, 10, 40, 100, 1000, 3000, n / 2, n - 1};
  const char *why[] = {"not an ELF file", "truncated", "truncated", "truncated",
                       "truncated", "truncated", "truncated", "truncated"};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    char name[32];
    snprintf(name, sizeof name, "cut%zu.so", cuts[i]);
    ok(spit(in_dir(name), b, cuts[i]));
    refused(name, why[i]);
  }
  /* The whole file still loads. */
  ok(spit(in_dir("whole.so"), b, n));
  is_status(bp_plugin_load(in_dir("whole.so"), NULL), BP_OK);
  free(b);
  remove_dir();
}

static void foreign_files(void) {
  size_t n;
  unsigned char *b = good_bytes(&n);
  if (!b || !make_dir()) return;
  alarm(60);
  /* Another architecture: e_machine (bytes 18-19, little-endian) = 183. */
  unsigned char saved[2] = {b[18], b[19]};
  b[18] = 183;
  b[19] = 0;
  ok(spit(in_dir("aarch64.so"), b, n));
  refused("aarch64.so", "built for aarch64");
  b[18] = 0x34, b[19] = 0x12;
  ok(spit(in_dir("odd.so"), b, n));
  refused("odd.so", "ELF machine 4660");
  b[18] = saved[0], b[19] = saved[1];
  /* A 32-bit file. */
  unsigned char cls = b[4];
  b[4] = 1;
  ok(spit(in_dir("elf32.so"), b, n));
  refused("elf32.so", "32-bit ELF file");
  b[4] = cls;
  /* An executable, not a shared object: e_type (bytes 16-17) = ET_EXEC. */
  unsigned char type = b[16];
  b[16] = 2;
  ok(spit(in_dir("exec.so"), b, n));
  refused("exec.so", "executable, not a shared object");
  b[16] = type;
  /* A segment that reaches past the end of the file (its size patched),
   * with the section headers intact: only the segment check sees it. */
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  bool patched = false;
  for (unsigned i = 0; i < eh.e_phnum && !patched; i++) {
    Elf64_Phdr ph;
    size_t at = eh.e_phoff + (size_t)i * eh.e_phentsize;
    memcpy(&ph, b + at, sizeof ph);
    if (ph.p_type != PT_LOAD) continue;
    ph.p_filesz += n;
    unsigned char copy[sizeof ph];
    memcpy(copy, &ph, sizeof ph);
    unsigned char *c = malloc(n);
    if (c) {
      memcpy(c, b, n);
      memcpy(c + at, copy, sizeof ph);
      patched = spit(in_dir("segment.so"), c, n);
      free(c);
    }
  }
  ok(patched);
  refused("segment.so", "program header #");
  /* The unpatched file loads. */
  ok(spit(in_dir("plain.so"), b, n));
  is_status(bp_plugin_load(in_dir("plain.so"), NULL), BP_OK);
  free(b);
  remove_dir();
}

/* A copy of b (n bytes) with program header i replaced by ph, written
 * to name in the directory. */
static bool spit_phdr(const char *name, const unsigned char *b, size_t n, unsigned i,
                      const Elf64_Phdr *ph) {
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  unsigned char *c = malloc(n);
  if (!c) return false;
  memcpy(c, b, n);
  memcpy(c + eh.e_phoff + (size_t)i * eh.e_phentsize, ph, sizeof *ph);
  bool done = spit(in_dir(name), c, n);
  free(c);
  return done;
}

/* The index of the first program header of type `type` (with all of
 * `flags`), copied into *ph; -1 when there is none. */
static int find_phdr(const unsigned char *b, unsigned type, unsigned flags, Elf64_Phdr *ph) {
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    memcpy(ph, b + eh.e_phoff + (size_t)i * eh.e_phentsize, sizeof *ph);
    if (ph->p_type == type && (ph->p_flags & flags) == flags) return (int)i;
  }
  return -1;
}

/* A plugin that would weaken the whole process once mapped is refused
 * before dlopen(), naming the file and the reason, unless the host allows
 * it with BP_PLUGIN_ALLOW_UNSAFE: an executable stack, a writable and
 * executable segment, text relocations.  (The files are the good plugin
 * with one header patched; conformance/tests/faulty builds real ones.) */
static void unsafe_files(void) {
  size_t n;
  unsigned char *b = good_bytes(&n);
  if (!b || !make_dir()) return;
  alarm(60);
  Elf64_Phdr ph;
  /* PT_GNU_STACK with PF_X: what -z execstack gives. */
  int i = find_phdr(b, PT_GNU_STACK, 0, &ph);
  ok(i >= 0);
  if (i >= 0) {
    Elf64_Phdr x = ph;
    x.p_flags |= PF_X;
    ok(spit_phdr("execstack.so", b, n, (unsigned)i, &x));
    refused("execstack.so", "it needs an executable stack (its PT_GNU_STACK program header has "
                            "PF_X)");
    has_str(bp_last_error(), "BP_PLUGIN_ALLOW_UNSAFE=execstack");
#if defined(__x86_64__) || defined(__i386__)
    /* No PT_GNU_STACK at all: on x86 the loader then makes the stack
     * executable. */
    x = ph;
    x.p_type = PT_NULL;
    ok(spit_phdr("nostack.so", b, n, (unsigned)i, &x));
    refused("nostack.so", "it has no PT_GNU_STACK program header");
#endif
  }
  /* The writable PT_LOAD made executable too. */
  i = find_phdr(b, PT_LOAD, PF_W, &ph);
  ok(i >= 0);
  if (i >= 0) {
    ph.p_flags |= PF_X;
    ok(spit_phdr("wx.so", b, n, (unsigned)i, &ph));
    char want[64];
    snprintf(want, sizeof want, "program header #%d maps a segment that is both writable", i);
    refused("wx.so", want);
    /* The host may allow it, by name or with "all"; other names do not. */
    setenv("BP_PLUGIN_ALLOW_UNSAFE", "execstack,textrel", 1);
    refused("wx.so", "both writable and executable");
    setenv("BP_PLUGIN_ALLOW_UNSAFE", "textrel,wx", 1);
    is_status(bp_plugin_load(in_dir("wx.so"), NULL), BP_OK);
    unsetenv("BP_PLUGIN_ALLOW_UNSAFE");
  }
  /* DT_TEXTREL in the dynamic section (in place of its first entry). */
  i = find_phdr(b, PT_DYNAMIC, 0, &ph);
  ok(i >= 0 && ph.p_offset + sizeof(Elf64_Dyn) <= n);
  if (i >= 0 && ph.p_offset + sizeof(Elf64_Dyn) <= n) {
    Elf64_Dyn d = {.d_tag = DT_TEXTREL, .d_un = {.d_val = 0}};
    unsigned char saved[sizeof d];
    memcpy(saved, b + ph.p_offset, sizeof d);
    memcpy(b + ph.p_offset, &d, sizeof d);
    ok(spit(in_dir("textrel.so"), b, n));
    refused("textrel.so", "it has text relocations (DT_TEXTREL)");
    memcpy(b + ph.p_offset, saved, sizeof d);
  }
  free(b);
  remove_dir();
}

static void special_files(void) {
  if (!make_dir()) return;
  alarm(60);
  ok(spit(in_dir("empty.so"), (const unsigned char *)"", 0));
  refused("empty.so", "the file is empty");
  const char *text = "/* GNU ld script */\nGROUP ( libc.so.6 )\n";
  ok(spit(in_dir("script.so"), (const unsigned char *)text, strlen(text)));
  refused("script.so", "not an ELF file");
  ok(mkfifo(in_dir("fifo.so"), 0600) == 0);
  refused("fifo.so", "a FIFO, not a regular file");
  ok(mkdir(in_dir("dir.so"), 0700) == 0);
  refused("dir.so", "a directory, not a regular file");
  ok(symlink("/dev/zero", in_dir("zero.so")) == 0);
  /* The record is the link's target, which names the device. */
  is_status(bp_plugin_load(in_dir("zero.so"), NULL), BP_ERR_LOAD);
  has_str(bp_last_error(), "a character device, not a regular file");
  remove_dir();
}

/* Discovery over a directory holding every kind of bad file and one good
 * plugin: it neither crashes nor hangs, loads the good one, and records
 * every other file as failed with its reason. */
static void discovery_survives(void) {
  size_t n;
  unsigned char *b = good_bytes(&n);
  if (!b || !make_dir()) return;
  alarm(60);
  ok(spit(in_dir("a_cut.so"), b, 3000));
  ok(spit(in_dir("b_empty.so"), b, 0));
  ok(mkfifo(in_dir("c_fifo.so"), 0600) == 0);
  ok(mkdir(in_dir("d_dir.so"), 0700) == 0);
  unsigned char m0 = b[18], m1 = b[19];
  b[18] = 183, b[19] = 0;
  ok(spit(in_dir("e_arm.so"), b, n));
  b[18] = m0, b[19] = m1;
  ok(spit(in_dir("z_good.so"), b, n));
  free(b);
  if (setenv("BP_PLUGIN_PATH", dir, 1) != 0) ok(0);
  size_t loaded = 99;
  is_status(bp_plugin_discover(&loaded), BP_OK);
  /* Discovery also loads what is in the installed plugin directory (after
   * make install): of this directory's files, one loads. */
  ok(loaded >= 1 && loaded != 99);
  size_t here = 0;
  struct {
    const char *file, *why;
    bool seen;
  } want[] = {{"a_cut.so", "truncated", false},  {"b_empty.so", "empty", false},
              {"c_fifo.so", "FIFO", false},      {"d_dir.so", "directory", false},
              {"e_arm.so", "aarch64", false},    {"z_good.so", NULL, false}};
  for (size_t i = 0; i < bp_plugin_count(); i++) {
    bp_plugin_info info;
    info.struct_size = BP_PLUGIN_INFO_STRUCT_SIZE;
    if (bp_plugin_get_info(bp_plugin_at(i), &info) != BP_OK || !info.path) continue;
    const char *base = strrchr(info.path, '/');
    base = base ? base + 1 : info.path;
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
      if (strcmp(base, want[w].file) != 0) continue;
      want[w].seen = true;
      if (info.state == BP_PLUGIN_LOADED) here++;
      if (want[w].why) {
        is_int(info.state, BP_PLUGIN_FAILED);
        is_int(info.status, BP_ERR_LOAD);
        has_str(info.error, want[w].why);
        has_str(info.error, info.path);
      } else {
        is_int(info.state, BP_PLUGIN_LOADED);
      }
    }
  }
  for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
    if (!want[w].seen) tap_diag("%s was not recorded", want[w].file);
    ok(want[w].seen);
  }
  is_int((long long)here, 1);
  remove_dir();
}

/* The file offset of virtual address va in an ELF64 image (its load
 * segments); 0 when none holds it. */
static uint64_t va_off(const unsigned char *b, uint64_t va) {
  Elf64_Ehdr eh;
  memcpy(&eh, b, sizeof eh);
  for (unsigned i = 0; i < eh.e_phnum; i++) {
    Elf64_Phdr ph;
    memcpy(&ph, b + eh.e_phoff + (size_t)i * eh.e_phentsize, sizeof ph);
    if (ph.p_type == PT_LOAD && va >= ph.p_vaddr && va - ph.p_vaddr < ph.p_filesz)
      return ph.p_offset + (va - ph.p_vaddr);
  }
  return 0;
}

/* The file offset of the dynamic entry with tag `tag`, or 0. */
static uint64_t dyn_entry(const unsigned char *b, int64_t tag) {
  Elf64_Phdr ph;
  if (find_phdr(b, PT_DYNAMIC, 0, &ph) < 0) return 0;
  for (uint64_t at = ph.p_offset; at + sizeof(Elf64_Dyn) <= ph.p_offset + ph.p_filesz;
       at += sizeof(Elf64_Dyn)) {
    Elf64_Dyn d;
    memcpy(&d, b + at, sizeof d);
    if (d.d_tag == tag) return at;
    if (d.d_tag == DT_NULL) break;
  }
  return 0;
}

/* The file offset of the value of the dynamic entry `tag`, or 0. */
static uint64_t dyn_value_at(const unsigned char *b, int64_t tag) {
  uint64_t at = dyn_entry(b, tag);
  return at ? at + 8 : 0;
}

static uint64_t dyn_value(const unsigned char *b, int64_t tag) {
  uint64_t at = dyn_entry(b, tag);
  Elf64_Dyn d = {0};
  if (at) memcpy(&d, b + at, sizeof d);
  return at ? d.d_un.d_val : 0;
}

/* The good plugin with `len` bytes at `off` replaced, as `name`; then
 * refused for `why`. */
static void patched(const unsigned char *b, size_t n, const char *name, uint64_t off,
                    const void *bytes, size_t len, const char *why) {
  unsigned char *c = malloc(n);
  ok(c != NULL && off != 0 && off + len <= n);
  if (!c || !off || off + len > n) {
    free(c);
    return;
  }
  memcpy(c, b, n);
  memcpy(c + off, bytes, len);
  ok(spit(in_dir(name), c, n));
  free(c);
  refused(name, why);
  has_str(bp_last_error(), "the file is corrupt");
}

/* What the dynamic loader trusts in a plugin file (host/plugin_dyn.c):
 * each of these corruptions made the loader crash or abort the process
 * inside dlopen(); each is refused with its reason before it. */
static void corrupt_dynamic(void) {
  size_t n;
  unsigned char *b = good_bytes(&n);
  if (!b || !make_dir()) return;
  alarm(60);
  /* DT_RELACOUNT past the relocations: glibc asserts that the prefix it
   * names is all relative relocations. */
  uint64_t count = dyn_value(b, DT_RELASZ) / sizeof(Elf64_Rela) + 1;
  patched(b, n, "relacount.so", dyn_value_at(b, DT_RELACOUNT), &count, 8, "DT_RELACOUNT is");
  /* A PLT relocation naming a symbol past the symbol table. */
  uint64_t jmprel = va_off(b, dyn_value(b, DT_JMPREL));
  uint64_t info = ELF64_R_INFO(0xfffffu, R_X86_64_JUMP_SLOT);
  patched(b, n, "relsym.so", jmprel ? jmprel + 8 : 0, &info, 8, "past the");
  /* A relocation that writes into the code (the ELF header's page). */
  uint64_t where = 0;
  patched(b, n, "reloff.so", jmprel, &where, 8, "outside the writable load segments");
  /* A GNU hash table whose bloom filter is 3 words (glibc asserts a
   * power of two). */
  uint64_t gh = va_off(b, dyn_value(b, DT_GNU_HASH));
  uint32_t three = 3;
  patched(b, n, "bloom.so", gh ? gh + 8 : 0, &three, 4, "a power of two is needed");
  /* A string table larger than the file. */
  uint64_t huge = (uint64_t)1 << 40;
  patched(b, n, "strsz.so", dyn_value_at(b, DT_STRSZ), &huge, 8, "string table");
  free(b);
  remove_dir();
}

/* Loads path in a child process: 0 loaded, 1 refused (any status with a
 * message: the loader's checks, or a setup() that failed on what the
 * changed bytes made of its data), 2 killed (a signal, or an exit of the
 * dynamic loader's own). */
static int load_in_child(const char *path) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    alarm(30);
    bp_status st = bp_plugin_load(path, NULL);
    _exit(st == BP_OK ? 0 : *bp_last_error() ? 1 : 3);
  }
  int ws;
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(ws) && WEXITSTATUS(ws) <= 1) return WEXITSTATUS(ws);
  return 2;
}

/* count copies of the good plugin, each with 1 to 16 random bytes changed
 * in its first `span` bytes (the whole file when 0), loaded in a child
 * each: the counts, and at most max_killed percent killed (< 0: counted
 * only). */
static void sweep(const unsigned char *b, size_t n, size_t span, int count, double max_killed) {
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  int seen[4] = {0, 0, 0, 0};
  unsigned char *c = malloc(n);
  ok(c != NULL);
  if (!c) return;
  size_t lim = span && span < n ? span : n;
  for (int i = 0; i < count; i++) {
    memcpy(c, b, n);
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    int k = 1 + (int)((rng >> 33) % 16);
    for (int j = 0; j < k; j++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      c[(rng >> 17) % lim] = (unsigned char)(rng >> 56);
    }
    const char *path = in_dir("mutant.so");
    if (!spit(path, c, n)) {
      ok(0);
      break;
    }
    int r = load_in_child(path);
    seen[r < 0 ? 3 : r]++;
  }
  free(c);
  tap_diag("%d mutants with changes in %s: %d refused, %d loaded, %d killed (%.1f%%)", count,
           span ? "the first 4 KiB" : "the whole file", seen[1], seen[0], seen[2],
           100.0 * seen[2] / count);
  is_int(seen[3], 0); /* every child was started and reaped */
  if (max_killed >= 0) ok(seen[2] <= max_killed / 100 * count);
}

/* Random changes to the bytes the dynamic loader reads first (the headers
 * and, in a small plugin, its dynamic tables) are refused before dlopen()
 * far more often than they kill the host: at most 10% kill it (2-4%
 * measured; in the CPU plugin, 35% before plugin_dyn.c).  Changes anywhere are counted in the
 * long tier, not bounded: a changed code byte, or a relocation addend that
 * points a string the plugin hands the host at unmapped memory, cannot be
 * checked before it runs. */
static void mutants(void) {
  size_t n;
  unsigned char *b = good_bytes(&n);
  if (!b || !make_dir()) return;
  const char *tier = getenv("BP_TEST_TIER");
  bool lng = tier && strcmp(tier, "long") == 0;
  alarm(lng ? 2400 : 120);
  sweep(b, n, 4096, lng ? 1500 : 100, 10.0);
  if (lng) sweep(b, n, 0, 1500, -1);
  /* With BP_PLUGIN_PROBE=1 each file is first loaded in a child of the
   * host, so what kills a load kills that child: only a fault in setup(),
   * which runs in the host, is left. */
  setenv("BP_PLUGIN_PROBE", "1", 1);
  sweep(b, n, 0, lng ? 1500 : 60, 3.0);
  unsetenv("BP_PLUGIN_PROBE");
  free(b);
  remove_dir();
}

/* With BP_PLUGIN_PROBE=1 a plugin whose bp_plugin_init or setup() crashes
 * is refused with the signal named, and the host goes on; a good plugin
 * loads, unloads and loads again (the second time from the probe's
 * memory of the file). */
static void probe_mode(void) {
  alarm(60);
  if (setenv("BP_PLUGIN_PROBE", "1", 1) != 0) ok(0);
  static const struct {
    const char *plugin, *signal;
  } crashes[] = {{"crash_init", "signal 11"}, {"crash_setup", "signal 6"}};
  for (size_t i = 0; i < 2; i++) {
    bp_plugin *p = NULL;
    is_status(bp_plugin_load(test_plugin(crashes[i].plugin), &p), BP_ERR_LOAD);
    has_str(bp_last_error(), "it was not loaded (BP_PLUGIN_PROBE)");
    /* (A sanitizer reports a SIGSEGV itself and exits with a status.) */
    const char *san = getenv("BP_SANITIZER");
    if (!san || !*san || strcmp(san, "no") == 0) {
      has_str(bp_last_error(), "loading it in a child process killed the child");
      has_str(bp_last_error(), crashes[i].signal);
    }
    ok(p == NULL);
  }
  for (int round = 0; round < 2; round++) {
    bp_plugin *p = NULL;
    is_status(bp_plugin_load(test_plugin("good"), &p), BP_OK);
    const bp_op *op = NULL;
    is_status(bp_op_find("good::add", &op), BP_OK);
    if (p) is_status(bp_plugin_unload(p), BP_OK);
  }
  unsetenv("BP_PLUGIN_PROBE");
}

int main(void) {
  static const tap_case cases[] = {
      TAP_CASE(truncated_files),
      TAP_CASE(foreign_files),
      TAP_CASE(unsafe_files),
      TAP_CASE(corrupt_dynamic),
      TAP_CASE(mutants),
      TAP_CASE(special_files),
      TAP_CASE(discovery_survives),
      TAP_CASE(probe_mode),
  };
  return tap_main(cases, TAP_NCASES(cases));
}
