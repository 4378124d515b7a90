/*
 * plugins/cuda/overlap.h - whether two views share memory: copy_ copies an
 * overlapping source first, and add.out refuses an out that overlaps an
 * input other than exactly that input.  The test is plugin_aux.h's, as in
 * the CPU plugin; these names are the ones tests/cuda/test-cuda-functors
 * runs on the host.
 */
#ifndef BP_PLUGINS_CUDA_OVERLAP_H
#define BP_PLUGINS_CUDA_OVERLAP_H

#include <backplane/plugin_aux.h>

#define cu_may_overlap bp_aux_may_overlap
#define cu_same_view bp_aux_same_view

#endif /* BP_PLUGINS_CUDA_OVERLAP_H */
