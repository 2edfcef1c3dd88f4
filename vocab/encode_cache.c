/*
 * The encoder's word cache.
 *
 * note [word cache]
 * Text repeats its words, and the model's answer for a word (BPE merges,
 * or for pre-tokenized text everything after the first pre-tokenizer step)
 * depends on the word's bytes alone; Hugging Face tokenizers caches it
 * too (10000 words). This cache is four-way set-associative: 4096 sets
 * of four slots of 128 bytes (a word of up to 58 bytes, as indentation in
 * U+2581 takes 3 a space; up to 16 ids), a new word going first in its set
 * and the others down, the oldest out. So its memory is fixed (2 MiB per
 * workspace, allocated on first use), it holds the 10000-odd distinct
 * words of a few hundred KB of code, and a lookup is one hash and a set
 * (hash and length compared before any key). Longer words, or words of
 * more ids, are rare and go to the model every time. A cache belongs to
 * one workspace (note [encoder workspaces] in encode_text.c), so it needs
 * no lock.
 */
#include "vocab/encode_cache.h"

#include <string.h>

_Static_assert(sizeof(gm_wc_slot) == 128, "a word cache slot is two cache lines");
_Static_assert((GM_WC_SLOTS & (GM_WC_SLOTS - 1)) == 0 && GM_WC_SLOTS % GM_WC_WAYS == 0 &&
                   ((GM_WC_SLOTS / GM_WC_WAYS) & (GM_WC_SLOTS / GM_WC_WAYS - 1)) == 0,
               "sets: a power of two");

void gm_word_cache_free(gm_word_cache *c)
{
    gm_mem_free(c->mem, c->slots);
    c->slots = NULL;
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
    /* the newest word goes first, the others move down, the oldest out */
    gm_wc_slot *s = &c->slots[(h & (GM_WC_SLOTS / GM_WC_WAYS - 1)) * GM_WC_WAYS];
    int used = 0;
    while (used < GM_WC_WAYS - 1 && s[used].klen)
        used++;
    memmove(s + 1, s, (size_t)used * sizeof *s);
    s->hash = h;
    s->klen = (uint8_t)n;
    s->nids = (uint8_t)nids;
    memcpy(s->key, w, n);
    if (nids)
        memcpy(s->ids, ids, nids * sizeof *ids);
}
