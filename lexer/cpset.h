/*
 * Sets of Unicode code points as sorted, disjoint, non-adjacent ranges.
 * The regex parser builds character classes with them; the NFA builder
 * turns them into UTF-8 byte automata (utf8_ranges.h). A set owns its range
 * array, allocated from the gm_mem given to each call.
 *
 * Functions returning int give 0 on success and -1 when an allocation
 * failed; the set is then left valid (possibly without the new ranges).
 */
#ifndef GM_LEXER_CPSET_H
#define GM_LEXER_CPSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/mem.h"

#define GM_CP_MAX 0x10FFFFu

typedef struct gm_cprange {
    uint32_t lo, hi; /* inclusive */
} gm_cprange;

typedef struct gm_cpset {
    gm_cprange *r; /* sorted by lo; r[i].hi + 1 < r[i+1].lo */
    size_t n, cap;
} gm_cpset;

void gm_cpset_free(gm_mem *m, gm_cpset *s);
void gm_cpset_clear(gm_cpset *s);
int gm_cpset_add_range(gm_mem *m, gm_cpset *s, uint32_t lo, uint32_t hi);
int gm_cpset_add_set(gm_mem *m, gm_cpset *s, const gm_cpset *t);
int gm_cpset_copy(gm_mem *m, gm_cpset *dst, const gm_cpset *src);
/* s := [0, GM_CP_MAX] minus s. */
int gm_cpset_negate(gm_mem *m, gm_cpset *s);
bool gm_cpset_has(const gm_cpset *s, uint32_t cp);
bool gm_cpset_equal(const gm_cpset *a, const gm_cpset *b);
/* Number of code points in the set. */
uint32_t gm_cpset_count(const gm_cpset *s);

#endif
