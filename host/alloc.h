/*
 * host/alloc.h - the one allocator of the host's own memory.  Never
 * installed.
 *
 * Every block libbackplane allocates for itself (records, tables, names,
 * schemas, copies of messages) comes from bp__malloc and its siblings and
 * goes back through bp__free, as SQLite's sqlite3_malloc and Lua's
 * lua_Alloc serve theirs.  Tensor storage is the device's: the CPU
 * device's blocks (cpu_alloc.c) only ask bp__alloc_fails() first, so that
 * an injected failure reaches them too.
 *
 * A test (never the library itself) may count the blocks outstanding and
 * make the Nth allocation from now fail, as SQLite's out-of-memory tests
 * do: tests/test-oom.c links the host's objects and calls these hidden
 * functions, so they are no part of the ABI.
 */
#ifndef BP_HOST_ALLOC_H
#define BP_HOST_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* As malloc, calloc, realloc, strdup and free.  A size of 0 allocates one
 * byte, so NULL always means out of memory.  bp__realloc leaves the old
 * block as it was when it fails. */
void *bp__malloc(size_t n);
void *bp__calloc(size_t n, size_t size);
void *bp__realloc(void *p, size_t n);
char *bp__strdup(const char *s);
void bp__free(void *p);

/* True when a test injected the failure of this allocation (counts it as
 * one); for allocators that are not the above (the CPU device's). */
bool bp__alloc_fails(void);

/* Test controls.  bp__alloc_test_track(true) must come before the host's
 * first allocation: from then on bp__alloc_test_live() is the number of
 * blocks outstanding.  bp__alloc_test_fail(n, sticky) makes the nth
 * allocation from now fail (n = 1: the next one), and every one after it
 * when `sticky`; n = 0 fails none.  bp__alloc_test_count() is the number
 * of allocations asked for since tracking began, failed ones included. */
void bp__alloc_test_track(bool on);
void bp__alloc_test_fail(long n, bool sticky);
long bp__alloc_test_count(void);
long bp__alloc_test_live(void);

#endif /* BP_HOST_ALLOC_H */
