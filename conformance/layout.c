/* conformance/layout.c - see layout.h. */
#include "layout.h"

#include <string.h>

const char *const cert_lay_name[L_KINDS] = {"contiguous", "transposed",   "permuted",
                                            "stepped",    "expanded",     "expanded inner",
                                            "offset",     "channels-last"};

bool cert_lay_is_expanded(int kind) { return kind == L_EXPANDED || kind == L_EXPANDED_LAST; }

int32_t cert_lay_expandable(int kind, int32_t ndim, const int64_t *sizes) {
  if (kind == L_EXPANDED_LAST) {
    for (int32_t d = ndim - 1; d >= 0; d--)
      if (sizes[d] > 1) return d;
    return -1;
  }
  for (int32_t d = 0; d < ndim; d++)
    if (sizes[d] > 1) return d;
  return -1;
}

tlayout cert_lay_make(int kind, int32_t ndim, const int64_t *sizes) {
  tlayout l;
  memset(&l, 0, sizeof l);
  l.kind = kind;
  for (int32_t d = 0; d < ndim; d++) l.order[d] = (int8_t)d;
  switch (kind) {
    case L_TRANSPOSED:
      if (ndim >= 2) {
        l.reorder = true;
        l.order[ndim - 2] = (int8_t)(ndim - 1);
        l.order[ndim - 1] = (int8_t)(ndim - 2);
      } else {
        /* a 1-D tensor cannot be transposed: a step instead */
        for (int32_t d = 0; d < ndim; d++) l.step[d] = 2;
      }
      break;
    case L_STEP:
      for (int32_t d = 0; d < ndim; d++) l.step[d] = d == 0 && ndim > 1 ? 3 : 2;
      break;
    case L_PERMUTED:
      if (ndim < 2) {
        for (int32_t d = 0; d < ndim; d++) l.step[d] = 2;
        break;
      }
      l.reorder = true;
      for (int32_t d = 0; d < ndim; d++) l.order[d] = (int8_t)(ndim - 1 - d);
      break;
    case L_EXPANDED:
    case L_EXPANDED_LAST: {
      int32_t d = cert_lay_expandable(kind, ndim, sizes);
      if (d >= 0) l.expand = 1u << d;
      break;
    }
    case L_OFFSET: l.offset = 3; break;
    case L_CHANNELS_LAST:
      if (ndim >= 3) {
        /* N, then dims 2.., then C innermost. */
        l.reorder = true;
        int32_t k = 0;
        l.order[k++] = 0;
        for (int32_t d = 2; d < ndim; d++) l.order[k++] = (int8_t)d;
        l.order[k] = 1;
      } else if (ndim == 2) {
        l.reorder = true;
        l.order[0] = 1;
        l.order[1] = 0;
      }
      break;
    default: break;
  }
  return l;
}

void cert_lay_strides(const tlayout *l, int32_t ndim, const int64_t *sizes, int64_t *strides,
                      int64_t *span) {
  int64_t acc = 1, numel = 1;
  for (int32_t k = ndim - 1; k >= 0; k--) {
    int32_t d = l->reorder ? l->order[k] : k;
    numel *= sizes[d];
    if (l->expand & (1u << d)) {
      strides[d] = 0;
      continue;
    }
    int64_t step = l->step[d] > 1 ? l->step[d] : 1;
    strides[d] = acc * step;
    acc *= (sizes[d] > 0 ? sizes[d] : 1) * step;
  }
  *span = 0;
  if (numel == 0) return;
  *span = 1;
  for (int32_t d = 0; d < ndim; d++) *span += (sizes[d] - 1) * strides[d];
}
