/*
 * The encoder's word cache.
 *
 * note [word cache]
 * Text repeats its words, and the model's answer for a word (BPE merges,
 * or for pre-tokenized text everything after the first pre-tokenizer step)
 * depends on the word's bytes alone; Hugging Face tokenizers caches it
 * too. This cache is direct-mapped: 8192 slots of one cache line each (a
 * word of up to 26 bytes, up to 8 ids), a new word replacing the one in its
 * slot, so its memory is fixed (512 KiB per workspace, allocated on first
 * use) and a lookup is one hash, one line and one compare. Words longer
 * than 26 bytes or of more than 8 ids are rare in text and go to the model
 * every time. A cache belongs to one workspace (note [encoder workspaces]
 * in encode_text.c), so it needs no lock.
 */
#include "spanner/encode_cache.h"

#include <string.h>

_Static_assert(sizeof(gm_wc_slot) == 64, "a word cache slot is one cache line");
_Static_assert((GM_WC_SLOTS & (GM_WC_SLOTS - 1)) == 0, "slots: a power of two");

void gm_word_cache_free(gm_word_cache *c)
{
    gm_mem_free(c->mem, c->slots);
    c->slots = NULL;
}

uint32_t gm_word_cache_hash(const uint8_t *w, size_t n)
{
    /* 8 bytes at a time (the last load overlapping), multiply and fold */
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    uint64_t x;
    for (; i + 8 <= n; i += 8) {
        memcpy(&x, w + i, 8);
        h = (h ^ x) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    if (i < n) {
        x = 0;
        memcpy(&x, w + i, n - i);
        h = (h ^ x) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    h *= 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h >> 32);
}

const gm_wc_slot *gm_word_cache_get(const gm_word_cache *c, const uint8_t *w, size_t n,
                                    uint32_t h)
{
    if (!c->slots)
        return NULL;
    const gm_wc_slot *s = &c->slots[h & (GM_WC_SLOTS - 1)];
    if (s->hash == h && s->klen == n && !memcmp(s->key, w, n))
        return s;
    return NULL;
}

void gm_word_cache_put(gm_word_cache *c, const uint8_t *w, size_t n, uint32_t h,
                       const uint32_t *ids, size_t nids)
{
    if (!gm_word_cache_fits(n) || nids > GM_WC_IDS)
        return;
    if (!c->slots) {
        c->slots = gm_mem_calloc(c->mem, GM_WC_SLOTS, sizeof *c->slots);
        if (!c->slots)
            return;
    }
    gm_wc_slot *s = &c->slots[h & (GM_WC_SLOTS - 1)];
    s->hash = h;
    s->klen = (uint8_t)n;
    s->nids = (uint8_t)nids;
    memcpy(s->key, w, n);
    if (nids)
        memcpy(s->ids, ids, nids * sizeof *ids);
}
