/*
 * Token sets in adaptive storage (XGrammar's adaptive token mask cache):
 * each set is kept as a sorted list of member ids, a sorted list of the ids
 * NOT in it, or a bitset over the vocabulary (tokset.c, note [token set
 * form] says which). Sets are
 * immutable once built; all the operations on them write into a caller's
 * mask (uint32_t words, bit i%32 of word i/32) and never allocate.
 */
#ifndef GM_SPANNER_TOKSET_H
#define GM_SPANNER_TOKSET_H

#include <stddef.h>
#include <stdint.h>

#include "base/mem.h"

typedef enum gm_tokset_kind {
    GM_TOKSET_EMPTY = 0,
    GM_TOKSET_LIST,       /* ids[0..n) are the members */
    GM_TOKSET_COMPLEMENT, /* ids[0..n) are the non-members among [0, nbits) */
    GM_TOKSET_BITSET      /* words[0..GM_MASK_WORDS(nbits)) */
} gm_tokset_kind;

#define GM_MASK_WORDS(nbits) (((size_t)(nbits) + 31) / 32)

typedef struct gm_tokset {
    uint8_t kind;         /* gm_tokset_kind */
    uint32_t n;           /* ids in the list (LIST, COMPLEMENT) */
    uint32_t count;       /* members */
    union {
        uint32_t *ids;
        uint32_t *words;
    } u;
} gm_tokset;

/*
 * Builds a set from sorted, distinct member ids[0..n) over a universe of
 * nbits ids, choosing the smallest representation. Returns -1 on allocation
 * failure (set left empty).
 */
int gm_tokset_from_sorted(gm_mem *m, gm_tokset *set, const uint32_t *ids, uint32_t n,
                          uint32_t nbits);
/* Same, always as a member list (the ablation variant without adaptive storage). */
int gm_tokset_list_from_sorted(gm_mem *m, gm_tokset *set, const uint32_t *ids, uint32_t n);
/* Same from a bitset of nbits bits (uint32 words). */
int gm_tokset_from_bits(gm_mem *m, gm_tokset *set, const uint32_t *bits, uint32_t nbits);
void gm_tokset_free(gm_mem *m, gm_tokset *set);
/* Bytes of storage the set holds (beyond the struct). */
size_t gm_tokset_bytes(const gm_tokset *set, uint32_t nbits);

/* mask |= set */
void gm_tokset_or_into(const gm_tokset *set, uint32_t *mask, uint32_t nbits);
/* mask |= set & filter (filter a bitset of nbits bits) */
void gm_tokset_or_and_into(const gm_tokset *set, const uint32_t *filter, uint32_t *mask,
                           uint32_t nbits);
int gm_tokset_has(const gm_tokset *set, uint32_t id);
/* Calls fn on each member in increasing order; stops at (and returns) fn's first nonzero answer. */
int gm_tokset_foreach(const gm_tokset *set, uint32_t nbits, int (*fn)(void *ud, uint32_t id),
                      void *ud);

#endif
