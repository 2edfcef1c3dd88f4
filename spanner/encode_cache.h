/*
 * A bounded cache of words -> token ids for the encoder (note [word cache]
 * in encode_cache.c). One per encoder workspace, so never shared between
 * threads at the same time.
 */
#ifndef GM_SPANNER_ENCODE_CACHE_H
#define GM_SPANNER_ENCODE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/mem.h"

enum {
    GM_WC_KEY = 58,           /* longest word cached (bytes) */
    GM_WC_IDS = 16,           /* most ids cached for a word */
    GM_WC_SLOTS = 16384       /* slots of 128 bytes, in sets of two: 2 MiB */
};

typedef struct gm_wc_slot {
    uint32_t hash;
    uint8_t klen;             /* 0: empty */
    uint8_t nids;
    uint8_t key[GM_WC_KEY];
    uint32_t ids[GM_WC_IDS];
} gm_wc_slot;

typedef struct gm_word_cache {
    gm_mem *mem;
    gm_wc_slot *slots;        /* [GM_WC_SLOTS], NULL until first used (or when it failed) */
} gm_word_cache;

/* Frees the slots (the cache stays valid and empty). */
void gm_word_cache_free(gm_word_cache *c);

/* Can a word of n bytes be cached at all? */
static inline bool gm_word_cache_fits(size_t n) { return n > 0 && n <= GM_WC_KEY; }

/* The hash of a word of at most GM_WC_KEY bytes. */
uint32_t gm_word_cache_hash(const uint8_t *w, size_t n);

/*
 * The cached ids of w[0..n) (hash h): the slot (ids, nids), or NULL when
 * absent. Valid until the next put.
 */
const gm_wc_slot *gm_word_cache_get(const gm_word_cache *c, const uint8_t *w, size_t n,
                                    uint32_t h);

/*
 * Caches ids[0..nids) for w[0..n) (hash h) when they fit, replacing the
 * word that was in its slot. Allocates the slots on first use; when that
 * fails the cache stays empty (it is only a cache).
 */
void gm_word_cache_put(gm_word_cache *c, const uint8_t *w, size_t n, uint32_t h,
                       const uint32_t *ids, size_t nids);

#endif
