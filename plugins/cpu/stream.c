/*
 * plugins/cpu/stream.c - streaming (non-temporal) stores of results too
 * large to stay in the caches.
 *
 * A store to a line that is not in the cache first reads the line from
 * memory (read for ownership), so a kernel that reads one array and writes
 * another moves three arrays' worth of bytes, not two.  Non-temporal
 * stores write whole lines through write-combining buffers without reading
 * them, and leave the caches to the inputs: a result of 64 MiB went out
 * about 1.35 times as fast (a 64 MiB copy through the two paths, against
 * the STREAM triad in the same run).  They are weakly ordered, so a task
 * that used them ends with cpu_stream_end before another thread reads its
 * result.
 *
 * Kernels compute a stretch of their result into a small buffer that stays
 * in L1 and hand it to cpu_stream_copy, which stores it with the widest
 * non-temporal stores the CPU has (64, 32 or 16 bytes), or with memcpy
 * where there are none (other architectures, sanitizer builds: the
 * instrumentation does not see the intrinsics' stores).  They do so for
 * results of at least cpu_stream_min bytes: the last-level cache's size,
 * below which a result may still be in the caches when the next op reads
 * it (BP_CPU_STREAM_BYTES overrides it; 0 streams every result, which the
 * tests use to run these paths on small tensors).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define STREAM_X86 1
#include <immintrin.h>
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#undef STREAM_X86
#endif
#endif

int64_t cpu_stream_min = INT64_MAX;

/* Copies rows of n bytes (a multiple of the width), row r from src + r * ss
 * to dst + r * ds, which is aligned to the width. */
typedef void (*copy_fn)(char *dst, int64_t ds, const char *src, int64_t ss, int64_t rows,
                        size_t n);

static void copy_plain(char *dst, int64_t ds, const char *src, int64_t ss, int64_t rows,
                       size_t n) {
  for (int64_t r = 0; r < rows; r++) memcpy(dst + r * ds, src + r * ss, n);
}

#ifdef STREAM_X86
__attribute__((target("avx512f"))) static void copy_avx512(char *dst, int64_t ds, const char *src,
                                                           int64_t ss, int64_t rows, size_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (size_t i = 0; i < n; i += 64)
      _mm512_stream_si512((void *)(dst + r * ds + i),
                          _mm512_loadu_si512((const void *)(src + r * ss + i)));
}

__attribute__((target("avx"))) static void copy_avx(char *dst, int64_t ds, const char *src,
                                                    int64_t ss, int64_t rows, size_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (size_t i = 0; i < n; i += 32)
      _mm256_stream_si256((__m256i *)(dst + r * ds + i),
                          _mm256_loadu_si256((const __m256i *)(src + r * ss + i)));
}

static void copy_sse2(char *dst, int64_t ds, const char *src, int64_t ss, int64_t rows,
                      size_t n) {
  for (int64_t r = 0; r < rows; r++)
    for (size_t i = 0; i < n; i += 16)
      _mm_stream_si128((__m128i *)(dst + r * ds + i),
                       _mm_loadu_si128((const __m128i *)(src + r * ss + i)));
}
#endif

static copy_fn stream_body = copy_plain;
static size_t stream_width = 1;

/* The last-level cache's size: sysfs's, which a virtual machine reports
 * as it is shared (glibc's sysconf gave 320 MiB on a 2-CPU machine of one
 * 32 MiB L3), else sysconf's, else 32 MiB. */
static int64_t llc_bytes(void) {
  for (int i = 3; i >= 2; i--) {
    char path[64], text[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char *ok = fgets(text, sizeof text, f);
    fclose(f);
    char *end;
    long long v = ok ? strtoll(text, &end, 10) : 0;
    if (v > 0 && (*end == 'K' || *end == 'M'))
      return (int64_t)v << (*end == 'K' ? 10 : 20);
  }
  long llc = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
  llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  return llc > 0 ? (int64_t)llc : (int64_t)32 << 20;
}

void cpu_stream_init(void) {
  cpu_stream_min = llc_bytes();
  const char *env = getenv("BP_CPU_STREAM_BYTES");
  if (env && *env) {
    char *end;
    long long v = strtoll(env, &end, 10);
    if (*end == '\0' && v >= 0) cpu_stream_min = (int64_t)v;
  }
#ifdef STREAM_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    stream_body = copy_avx512;
    stream_width = 64;
  } else if (__builtin_cpu_supports("avx")) {
    stream_body = copy_avx;
    stream_width = 32;
  } else {
    stream_body = copy_sse2;
    stream_width = 16;
  }
#endif
}

void cpu_stream_copy(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
  size_t w = stream_width;
  size_t head = (w - (uintptr_t)d % w) % w;
  if (head >= n || w == 1) {
    memcpy(d, s, n);
    return;
  }
  memcpy(d, s, head);
  size_t body = (n - head) / w * w;
  stream_body(d + head, 0, s + head, 0, 1, body);
  memcpy(d + head + body, s + head + body, n - head - body);
}

void cpu_stream_rows(void *dst, int64_t ds, const void *src, int64_t ss, int64_t rows, size_t n) {
  size_t w = stream_width;
  if (w > 1 && (uintptr_t)dst % w == 0 && (uint64_t)ds % w == 0 && n % w == 0) {
    stream_body(dst, ds, src, ss, rows, n);
    return;
  }
  for (int64_t r = 0; r < rows; r++)
    cpu_stream_copy((char *)dst + r * ds, (const char *)src + r * ss, n);
}

void cpu_stream_end(void) {
#ifdef STREAM_X86
  _mm_sfence();
#endif
}
