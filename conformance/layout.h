/*
 * conformance/layout.h - how a sample lays a tensor argument out in
 * memory: the memory order of its dimensions (contiguous, transposed,
 * permuted, channels-last), a step per dimension (a slice with a step),
 * dimensions expanded with stride 0, and a storage offset.
 */
#ifndef BP_CONFORMANCE_LAYOUT_H
#define BP_CONFORMANCE_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#include <backplane/abi.h>

/* The layout kinds a sample names (the `layouts` sample class takes each
 * in turn); L_CONTIG is the zero value. */
enum lay_kind {
  L_CONTIG,        /* row-major */
  L_TRANSPOSED,    /* the two innermost dims swapped in memory */
  L_PERMUTED,      /* every dim in reverse order in memory */
  L_STEP,          /* every other element (step 2, 3 on the outermost dim) */
  L_EXPANDED,      /* a size-1 dim expanded with stride 0: the outermost */
  L_EXPANDED_LAST, /* the same, the innermost dim: a row of one value */
  L_OFFSET,        /* contiguous, at a storage offset of 3 elements */
  L_CHANNELS_LAST, /* dim 1 innermost in memory, as NHWC */
  L_KINDS
};
extern const char *const cert_lay_name[L_KINDS];

typedef struct tlayout {
  int kind;                  /* enum lay_kind, for messages */
  bool reorder;              /* order[] is set; else row-major */
  int8_t order[BP_MAX_NDIM]; /* memory order, outermost dim first */
  int64_t step[BP_MAX_NDIM]; /* 0 or 1: no step */
  uint32_t expand;           /* bit d: stride 0 in dim d */
  int64_t offset;            /* storage offset, in elements */
} tlayout;

/* The layout of `kind` for a tensor of ndim dims whose sizes are given:
 * L_EXPANDED expands the first dim of size > 1, L_EXPANDED_LAST the last
 * (the sample's values must be constant along it: see cert_lay_expandable()).  A kind that does not
 * apply to the shape (a transpose of a 1-D tensor) gives a layout that
 * is still non-contiguous where it can be: a step. */
tlayout cert_lay_make(int kind, int32_t ndim, const int64_t *sizes);

/* The dim that an expanded layout kind expands, or -1 when no dim has
 * size > 1. */
int32_t cert_lay_expandable(int kind, int32_t ndim, const int64_t *sizes);
/* Whether a layout kind expands a dim with stride 0. */
bool cert_lay_is_expanded(int kind);

/* The element strides of the layout and the span of the storage it
 * reaches past its offset (0 for an empty tensor). */
void cert_lay_strides(const tlayout *l, int32_t ndim, const int64_t *sizes, int64_t *strides,
                      int64_t *span);

#endif /* BP_CONFORMANCE_LAYOUT_H */
