/*
 * tools/isolate.h - loads a plugin in a child process first, so that one
 * that crashes or hangs while it loads takes down the child and not the
 * tool (bp-info --isolate).
 *
 * The child opens the file, calls its bp_plugin_init and lets the host run
 * its setup() (through bp_plugin_register), telling the parent each stage
 * as it enters it, so that a crash is reported where it happened:
 *
 *   crashed in dlopen (SIGSEGV)     a constructor of the library
 *   crashed in init (SIGSEGV)       bp_plugin_init
 *   crashed in setup (SIGABRT)      after bp_plugin_init returned: the
 *                                   host's checks of the descriptor, and
 *                                   setup()
 *   exited with status 3 in setup   the plugin ended the process
 *   timed out after 10 s in setup   killed (SIGKILL) at the deadline
 *
 * A plugin that loads in the child, or fails to load cleanly (with a
 * status and a message), passes: the caller then loads it itself, and the
 * host records the outcome as usual.
 */
#ifndef BP_TOOLS_ISOLATE_H
#define BP_TOOLS_ISOLATE_H

#include <stddef.h>

/* Loads the plugin at path in a child and waits at most timeout_s seconds.
 * Returns 0 when the child finished loading (whether the load succeeded
 * or failed cleanly), 1 when it crashed, ended the process or hung, with
 * why (a buffer of len bytes) saying which as above, or -1 when no child
 * could be started, with why saying why not. */
int isolate_probe(const char *path, double timeout_s, char *why, size_t len);

#endif /* BP_TOOLS_ISOLATE_H */
