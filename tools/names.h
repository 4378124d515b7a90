/*
 * tools/names.h - the words bp-info prints for a plugin's origin and
 * state and a kernel's kind.  The Python package prints the same words
 * (python/src/module.c keeps its own copy: its pip build compiles python/
 * alone; tests/python/test-cli.py checks that the two print the same).
 */
#ifndef BP_TOOLS_NAMES_H
#define BP_TOOLS_NAMES_H

#include <backplane/host.h>

static inline const char *bp_tool_origin_name(int32_t o) {
  switch (o) {
    case BP_ORIGIN_EXPLICIT: return "explicit";
    case BP_ORIGIN_ENV: return "BP_PLUGIN_PATH";
    case BP_ORIGIN_INSTALLED: return "installed";
    case BP_ORIGIN_STATIC: return "static";
    default: return "?";
  }
}

static inline const char *bp_tool_state_name(int32_t s) {
  switch (s) {
    case BP_PLUGIN_LOADED: return "loaded";
    case BP_PLUGIN_FAILED: return "failed";
    case BP_PLUGIN_UNLOADED: return "unloaded";
    default: return "?";
  }
}

static inline const char *bp_tool_kind_name(int32_t k) {
  switch (k) {
    case BP_KERNEL_BOXED: return "boxed";
    case BP_KERNEL_UNBOXED: return "unboxed (libffi)";
    case BP_KERNEL_UNBOXED_FAST: return "unboxed (fast path)";
    case BP_KERNEL_STRUCTURED: return "structured";
    default: return "?";
  }
}

#endif /* BP_TOOLS_NAMES_H */
