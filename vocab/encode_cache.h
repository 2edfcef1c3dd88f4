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
#include <string.h>

#include "base/mem.h"

enum {
    GM_WC_KEY = 58,           /* longest word cached (bytes) */
    GM_WC_IDS = 16,           /* most ids cached for a word */
    GM_WC_SLOTS = 16384,      /* slots of 128 bytes: 2 MiB */
    GM_WC_WAYS = 4            /* slots of a set */
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

/*
 * Loads for short words: 8, 4 or 1 bytes at p (memcpy of a constant size
 * compiles to one load); callers overlap them to cover n bytes without a
 * loop over bytes.
 */
static inline uint64_t gm_wc_load8(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

static inline uint64_t gm_wc_load4(const uint8_t *p)
{
    uint32_t x;
    memcpy(&x, p, 4);
    return x;
}

/* The hash of a word of 1 to GM_WC_KEY bytes. */
static inline uint32_t gm_word_cache_hash(const uint8_t *w, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, x;
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            h = (h ^ gm_wc_load8(w + i)) * 0xff51afd7ed558ccdull, h ^= h >> 32;
        x = gm_wc_load8(w + n - 8); /* the last 8, overlapping */
    } else if (n >= 4) {
        x = gm_wc_load4(w) | gm_wc_load4(w + n - 4) << 32;
    } else {
        x = (uint64_t)w[0] | (uint64_t)w[n / 2] << 8 | (uint64_t)w[n - 1] << 16;
    }
    h = (h ^ x) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h >> 32);
}

/* Are a[0..n) and b[0..n) the same (1 <= n <= GM_WC_KEY)? */
static inline bool gm_wc_same(const uint8_t *a, const uint8_t *b, size_t n)
{
    if (n >= 8) {
        for (size_t i = 0; i + 8 < n; i += 8)
            if (gm_wc_load8(a + i) != gm_wc_load8(b + i))
                return false;
        return gm_wc_load8(a + n - 8) == gm_wc_load8(b + n - 8);
    }
    if (n >= 4)
        return gm_wc_load4(a) == gm_wc_load4(b) && gm_wc_load4(a + n - 4) == gm_wc_load4(b + n - 4);
    return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
}

/*
 * The cached ids of w[0..n) (hash h): the slot (ids, nids), or NULL when
 * absent. Valid until the next put. (Its set's slots: note [word cache].)
 */
static inline const gm_wc_slot *gm_word_cache_get(const gm_word_cache *c, const uint8_t *w,
                                                  size_t n, uint32_t h)
{
    if (!c->slots)
        return NULL;
    const gm_wc_slot *s = &c->slots[(h & (GM_WC_SLOTS / GM_WC_WAYS - 1)) * GM_WC_WAYS];
    for (int i = 0; i < GM_WC_WAYS; i++)
        if (s[i].hash == h && s[i].klen == n && gm_wc_same(s[i].key, w, n))
            return &s[i];
    return NULL;
}

/*
 * Caches ids[0..nids) for w[0..n) (hash h) when they fit, replacing the
 * word that was in its slot. Allocates the slots on first use; when that
 * fails the cache stays empty (it is only a cache).
 */
void gm_word_cache_put(gm_word_cache *c, const uint8_t *w, size_t n, uint32_t h,
                       const uint32_t *ids, size_t nids);

#endif
