/*
 * conformance/devtensor.c - a sample's tensors on the device under test
 * (devtensor.h): made plain, between canaries, or (inputs on a
 * host-visible device) read-only between guard pages that the fault
 * handler knows; and read back to the CPU to be compared.
 */
#define _GNU_SOURCE

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <backplane/host.h>

#include "cert.h"
#include "devtensor.h"
#include "num.h"
#include "sample.h"

/* ------------------------------------------------------------------------ */
/* Tensors on the device under test                                         */
/* ------------------------------------------------------------------------ */

void cert_argset_free(argset *as) {
  for (int i = 0; i < as->nmade; i++) {
    bp_tensor_release(as->made[i]);
    bp_tensor_release(as->base[i]);
  }
  as->nmade = 0;
}

/* One byte of the canary pattern. */
unsigned char cert_canary_byte(size_t i) { return (unsigned char)(0xA5u ^ (i * 29u)); }

/* The deleter context of a tensor made by protected_tensor(): malloc'd
 * there, owned by the tensor, and freed with the mapping by unmap_blob()
 * when libbackplane drops the tensor's last reference. */
typedef struct blob_ctx {
  void *map;   /* the whole mapping, guard pages included */
  size_t len;
  int region;  /* its protected region (region_add), or -1 */
} blob_ctx;

static void unmap_blob(void *ctx_, void *data) {
  (void)data;
  blob_ctx *c = ctx_;
  if (c->region >= 0) cert_region_remove(c->region);
  munmap(c->map, c->len);
  free(c);
}

/* Writes v's values at element offset `pre` of data, through strides. */
static void store_values(char *data, const rt *v, const int64_t *strides, int64_t pre) {
  size_t item = bp_dtype_size(v->dtype);
  int64_t idx[BP_MAX_NDIM] = {0};
  for (int64_t k = 0; k < v->numel; k++) {
    int64_t off = pre;
    for (int32_t d = 0; d < v->ndim; d++) off += idx[d] * strides[d];
    char *p = data + off * (int64_t)item;
    if (dt_is_float(v->dtype)) store_f(p, v->dtype, v->f[k]);
    else store_i(p, v->dtype, v->i[k]);
    for (int32_t d = v->ndim - 1; d >= 0; d--) {
      if (++idx[d] < v->sizes[d]) break;
      idx[d] = 0;
    }
  }
}

/* A tensor of v's values on the (host-visible) device under test, in its
 * own mapping between PROT_NONE guard pages, registered for the fault
 * handler: `pre` elements of canary, the view's reach (span) and `post`
 * more.  Read-only for an input
 * (M_PROTECT: the view itself, at offset pre), or a 1-D base of it all
 * (M_GUARD), whose view the caller makes.  The data ends where the upper
 * guard page begins, rounded to 64 bytes. */
static bp_tensor *protected_tensor(cert_ctx *cx, const rt *v, const int64_t *strides, int64_t span,
                                   int64_t pre, int64_t post, bool readonly, int arg,
                                   const char *name) {
  size_t item = bp_dtype_size(v->dtype);
  size_t ps = (size_t)sysconf(_SC_PAGESIZE);
  int64_t total = pre + span + post;
  size_t bytes = (size_t)total * item, rounded = (bytes + 63) & ~(size_t)63;
  size_t pages = rounded ? (rounded + ps - 1) / ps : 1, len = (pages + 2) * ps;
  char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return NULL;
  char *data = map + ps + pages * ps - rounded;
  memset(map + ps, 0x5A, pages * ps);
  for (size_t b = 0; b < bytes; b++) ((unsigned char *)data)[b] = cert_canary_byte(b);
  store_values(data, v, strides, pre);
  mprotect(map, ps, PROT_NONE);
  if (readonly) mprotect(map + ps, pages * ps, PROT_READ);
  mprotect(map + ps + pages * ps, ps, PROT_NONE);
  blob_ctx *c = malloc(sizeof *c);
  if (!c) {
    munmap(map, len);
    return NULL;
  }
  c->map = map;
  c->len = len;
  c->region = -1;
  bp_tensor *t = NULL;
  bp_status st =
      readonly
          ? bp_tensor_from_blob(cx->put.device, v->dtype, v->ndim, v->sizes, strides,
                                data + pre * (int64_t)item, unmap_blob, c, &t)
          : bp_tensor_from_blob(cx->put.device, v->dtype, 1, &total, NULL, data, unmap_blob, c, &t);
  if (st != BP_OK) {
    munmap(map, len);
    free(c);
    return NULL;
  }
  region r;
  memset(&r, 0, sizeof r);
  r.map_lo = (uintptr_t)map;
  r.data_lo = (uintptr_t)(map + ps);
  r.data_hi = (uintptr_t)(map + ps + pages * ps);
  r.map_hi = (uintptr_t)(map + len);
  r.elems_lo = (uintptr_t)(data + pre * (int64_t)item);
  r.elems_hi = (uintptr_t)(data + (pre + span) * (int64_t)item);
  r.readonly = readonly;
  r.arg = arg;
  snprintf(r.name, sizeof r.name, "%s", name);
  c->region = cert_region_add(&r);
  return t;
}

/* A tensor on the device under test with v's values, laid out as lay
 * says (strides, storage offset); with CANARY elements of canary before
 * and after (M_GUARD); read-only between guard pages (M_PROTECT, inputs
 * on a host-visible device).  Data is staged through a CPU tensor. */
bool cert_make_tensor(cert_ctx *cx, argset *as, const rt *v, const tlayout *lay, int mode,
                      bool writable, int arg, const char *name) {
  if (as->nmade == (int)(sizeof as->made / sizeof *as->made)) return false;
  int64_t strides[BP_MAX_NDIM], span;
  cert_lay_strides(lay, v->ndim, v->sizes, strides, &span);
  int64_t pre = lay->offset + (mode == M_GUARD ? CANARY : 0), post = mode == M_GUARD ? CANARY : 0;
  bp_tensor *t = NULL, *base = NULL;
  if (mode == M_PROTECT && cx->put.host_visible && !writable) {
    t = protected_tensor(cx, v, strides, span, pre, post, true, arg, name);
    if (!t) return false;
  } else if (mode == M_GUARD && cx->put.host_visible) {
    /* Canaries, and guard pages beyond them. */
    base = protected_tensor(cx, v, strides, span, pre, post, false, arg, name);
    if (!base) return false;
    if (bp_tensor_as_strided(base, v->ndim, v->sizes, strides, pre, &t) != BP_OK) {
      bp_tensor_release(base);
      return false;
    }
  } else {
    int64_t n = pre + span + post;
    bp_tensor *stage = NULL;
    if (bp_tensor_empty(BP_CPU, v->dtype, 1, &n, &stage) != BP_OK) return false;
    const bp_tensor_view *sv = bp_tensor_get_view(stage);
    size_t item = (size_t)sv->itemsize;
    for (size_t b = 0; b < (size_t)n * item; b++)
      ((unsigned char *)sv->data)[b] = cert_canary_byte(b);
    store_values(sv->data, v, strides, pre);
    if (cx->put.device.type == BP_DEVICE_CPU && cx->put.device.index == 0) {
      base = stage;
    } else {
      if (bp_tensor_empty(cx->put.device, v->dtype, 1, &n, &base) != BP_OK ||
          bp_tensor_copy(base, stage) != BP_OK) {
        bp_tensor_release(base);
        bp_tensor_release(stage);
        return false;
      }
      bp_tensor_release(stage);
    }
    if (bp_tensor_as_strided(base, v->ndim, v->sizes, strides, pre, &t) != BP_OK) {
      bp_tensor_release(base);
      return false;
    }
    if (mode != M_GUARD) {
      bp_tensor_release(base);
      base = NULL;
    }
  }
  as->made[as->nmade] = t;
  as->made_arg[as->nmade] = arg;
  as->made_elem[as->nmade] = -1;
  as->base[as->nmade] = base;
  as->span[as->nmade] = span;
  as->pre[as->nmade] = pre;
  as->nmade++;
  return true;
}

/* Pushes a sample's arguments, making its tensors in `mode`. */
bool cert_materialise(cert_ctx *cx, const sample *s, const schema_info *si, int mode, argset *as) {
  memset(as, 0, sizeof *as);
  as->st = (bp_stack)BP_STACK_INIT(as->slots, 16);
  for (int i = 0; i < s->n; i++) {
    const sarg *a = &s->a[i];
    bp_status st = BP_OK;
    switch (a->k) {
      case AK_TENSOR:
        if (!cert_make_tensor(cx, as, a->t, &a->lay, mode, i < si->n && si->mutated[i], i,
                              i < si->n ? si->name[i] : "?"))
          return false;
        st = bp_stack_push_tensor(&as->st, as->made[as->nmade - 1]);
        break;
      case AK_FLOAT: st = bp_stack_push_float(&as->st, a->f); break;
      case AK_INT: st = bp_stack_push_int(&as->st, a->i); break;
      case AK_BOOL: st = bp_stack_push_bool(&as->st, a->i != 0); break;
      case AK_INTLIST: st = bp_stack_push_int_list(&as->st, a->list, a->nlist); break;
      case AK_DTYPE: st = bp_stack_push_scalar_type(&as->st, a->dt); break;
      case AK_NONE: st = bp_stack_push_none(&as->st); break;
      case AK_STR: st = bp_stack_push_str(&as->st, a->s); break;
      case AK_TENSORLIST: {
        /* each element is made as a tensor argument is; the list points
         * at them, and must stay where it is until the call */
        int first = as->nlist;
        if (first + a->l->n > (int)(sizeof as->list / sizeof *as->list)) return false;
        for (int j = 0; j < a->l->n; j++) {
          if (!cert_make_tensor(cx, as, a->l->t[j], &a->l->lay[j], mode,
                                i < si->n && si->mutated[i], i, i < si->n ? si->name[i] : "?"))
            return false;
          as->made_elem[as->nmade - 1] = j;
          as->list[as->nlist++] = as->made[as->nmade - 1];
        }
        st = bp_stack_push_tensor_list(&as->st, &as->list[first], (size_t)a->l->n);
        break;
      }
    }
    if (st != BP_OK) return false;
  }
  as->nargs = as->st.top;
  return true;
}

/* The bytes of t's elements in row-major order, copied to the CPU, so
 * that two states of a tensor on any device compare bytewise; NULL when
 * they cannot be read.  The caller frees the result. */
unsigned char *cert_tensor_bytes(const bp_tensor *t, size_t *len) {
  const bp_tensor_view *v = bp_tensor_get_view(t);
  bp_tensor *host = NULL;
  if (bp_tensor_empty(BP_CPU, v->dtype, v->ndim, v->sizes, &host) != BP_OK ||
      bp_tensor_copy(host, t) != BP_OK) {
    bp_tensor_release(host);
    return NULL;
  }
  const bp_tensor_view *hv = bp_tensor_get_view(host);
  *len = (size_t)(hv->numel * hv->itemsize);
  unsigned char *bytes = malloc(*len ? *len : 1);
  if (bytes && *len) memcpy(bytes, hv->data, *len);
  bp_tensor_release(host);
  return bytes;
}

/* Index of the first differing byte of two snapshots, or -1. */
long cert_first_diff(const unsigned char *x, const unsigned char *y, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return (long)i;
  return -1;
}

/* The byte range a view reaches: [lo, hi), empty for 0 elements. */
static void view_range(const bp_tensor_view *v, uintptr_t *lo, uintptr_t *hi) {
  if (v->numel == 0) {
    *lo = *hi = 0;
    return;
  }
  int64_t mn = 0, mx = 0;
  for (int32_t d = 0; d < v->ndim; d++) {
    int64_t e = (v->sizes[d] - 1) * v->strides[d];
    if (e < 0) mn += e;
    else mx += e;
  }
  *lo = (uintptr_t)v->data + (uintptr_t)(mn * v->itemsize);
  *hi = (uintptr_t)v->data + (uintptr_t)((mx + 1) * v->itemsize);
}

bool cert_overlaps(const bp_tensor *a, const bp_tensor *b) {
  const bp_tensor_view *va = bp_tensor_get_view(a), *vb = bp_tensor_get_view(b);
  if (va->device.type != vb->device.type || va->device.index != vb->device.index) return false;
  uintptr_t al, ah, bl, bh;
  view_range(va, &al, &ah);
  view_range(vb, &bl, &bh);
  return al < ah && bl < bh && al < bh && bl < ah;
}

/* The bytes of every result on the stack, concatenated (owned). */
unsigned char *cert_result_bytes(const bp_stack *st, size_t *len) {
  unsigned char *all = NULL;
  *len = 0;
  for (size_t i = 0; i < st->top; i++) {
    bp_tensor *t;
    if (bp_stack_get_tensor(st, (int64_t)i, &t) != BP_OK) continue;
    size_t n = 0;
    unsigned char *b = cert_tensor_bytes(t, &n);
    if (!b) continue;
    unsigned char *grown = realloc(all, *len + n + 1);
    if (!grown) {
      free(b);
      break;
    }
    all = grown;
    memcpy(all + *len, b, n);
    *len += n;
    free(b);
  }
  if (!all) all = calloc(1, 1);
  return all;
}

/* ------------------------------------------------------------------------ */
/* The allocation guard (host/guard.c)                                      */
/* ------------------------------------------------------------------------ */

/* The read end of this process's report pipe, or -1. */
static int guard_fd = -1;

void cert_alloc_guard_open(void) {
  if (guard_fd >= 0) close(guard_fd);
  guard_fd = -1;
  int fds[2];
  if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return;
  char num[16];
  snprintf(num, sizeof num, "%d", fds[1]);
  setenv("BP_ALLOC_GUARD_FD", num, 1);
  guard_fd = fds[0];
}

bool cert_alloc_guard_read(char *buf, size_t len) {
  buf[0] = '\0';
  if (guard_fd < 0 || len < 2) return false;
  size_t n = 0;
  for (;;) {
    char tmp[512];
    ssize_t got = read(guard_fd, tmp, sizeof tmp);
    if (got <= 0) break;
    for (ssize_t i = 0; i < got && n + 1 < len; i++) buf[n++] = tmp[i] == '\n' ? ' ' : tmp[i];
  }
  while (n && buf[n - 1] == ' ') n--;
  buf[n] = '\0';
  return n > 0;
}
