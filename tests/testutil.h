/*
 * Helpers shared by the cmocka test programs: locating test data, reading
 * files, and an allocator that fails the Nth allocation (to prove that
 * every allocation failure is reported cleanly and leaks nothing).
 */
#ifndef GM_TESTUTIL_H
#define GM_TESTUTIL_H

#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gramask.h"

/* $GM_SHARED_DIR (../shared beside the checkout) joined with rel; static buffer per call site is not kept: copy it. */
const char *gm_test_shared_path(const char *rel);
/* $GM_SRCDIR joined with rel. */
const char *gm_test_src_path(const char *rel);
/* Whole file, NUL-terminated, malloc'ed; fails the test when unreadable. */
char *gm_test_read_file(const char *path, size_t *len);

/* An allocator that fails the allocation number `fail_at` (1-based; 0 = never). */
typedef struct gm_test_failing_alloc {
    unsigned long count;   /* allocations so far */
    unsigned long fail_at; /* which one fails */
    long live;             /* blocks currently allocated */
} gm_test_failing_alloc;

void *gm_test_failing_realloc(void *ud, void *ptr, size_t size);
gm_allocator gm_test_failing_allocator(gm_test_failing_alloc *state);

#endif
