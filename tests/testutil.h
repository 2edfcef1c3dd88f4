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
#include <stdio.h>

#include <cmocka.h>

#include "gramask.h"

/* $GM_SHARED_DIR (../shared beside the checkout) joined with rel; static buffer per call site is not kept: copy it. */
/* A deterministic pseudo-random sequence (splitmix64) for tests: the next value of *seed. */
uint64_t gm_test_rand(uint64_t *seed);

const char *gm_test_shared_path(const char *rel);
/* $GM_SRCDIR joined with rel. */
const char *gm_test_src_path(const char *rel);
/* Lark's own python.lark (Debian python3-lark; GM_LARK_PYTHON_GRAMMAR overrides), or NULL when
 * it is not there (the caller skips). */
const char *gm_test_lark_python_grammar(void);
/*
 * Runs `$PYTHON3 tests/SCRIPT [ARG]` (python3 when PYTHON3 is unset) and
 * returns its standard output to read (pclose it); fails the test when the
 * pipe cannot be opened. arg may be NULL.
 */
FILE *gm_test_python(const char *script, const char *arg);
/* Bytes from hex digits, up to a space, a newline or the end; at most cap. */
size_t gm_test_unhex(const char *s, uint8_t *out, size_t cap);
/* Writes b[0..n) to f quoted, printable ASCII as is and other bytes as \xNN. */
void gm_test_show_bytes(FILE *f, const uint8_t *b, size_t n);
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

/*
 * Greedy longest-match tokenization of text over v's ordinary tokens (not
 * special, padding or EOS) into ids[0..cap); returns how many. Fails the
 * test where no token matches.
 */
struct gm_vocab_data;
size_t gm_test_greedy_tokens(const struct gm_vocab_data *v, const char *text, uint32_t *ids,
                             size_t cap);

#endif
