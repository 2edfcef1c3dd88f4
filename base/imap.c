/* The integer map (base/imap.h). */
#include "base/imap.h"

#include <string.h>

#include "base/hash.h"

void gm_imap_init(gm_imap *t, gm_mem *m)
{
    memset(t, 0, sizeof *t);
    t->mem = m;
    t->gen = 1;
}

void gm_imap_free(gm_imap *t)
{
    gm_mem_free(t->mem, t->slots);
    gm_imap_init(t, t->mem);
}

void gm_imap_clear(gm_imap *t)
{
    t->count = 0;
    if (++t->gen == 0) {
        /* wrapped around: old generations could look current again */
        if (t->slots)
            memset(t->slots, 0, t->nslots * sizeof *t->slots);
        t->gen = 1;
    }
}

static size_t slot_of(const gm_imap *t, uint64_t key)
{
    size_t mask = t->nslots - 1;
    size_t i = (size_t)gm_hash_mix64(key) & mask;
    while (t->slots[i].gen == t->gen && t->slots[i].key != key)
        i = (i + 1) & mask;
    return i;
}

uint32_t gm_imap_get(const gm_imap *t, uint64_t key)
{
    if (!t->count)
        return GM_IMAP_NONE;
    const gm_imap_slot *s = &t->slots[slot_of(t, key)];
    return s->gen == t->gen ? s->val : GM_IMAP_NONE;
}

static int grow(gm_imap *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 64;
    gm_imap_slot *slots = gm_mem_calloc(t->mem, n, sizeof *slots);
    if (!slots)
        return -1;
    gm_imap old = *t;
    t->slots = slots;
    t->nslots = n;
    uint32_t gen = t->gen;
    t->gen = 1;
    for (size_t i = 0; i < old.nslots; i++)
        if (old.slots[i].gen == gen) {
            gm_imap_slot *s = &t->slots[slot_of(t, old.slots[i].key)];
            *s = old.slots[i];
            s->gen = 1;
        }
    gm_mem_free(t->mem, old.slots);
    return 0;
}

int gm_imap_put(gm_imap *t, uint64_t key, uint32_t val)
{
    if ((t->count + 1) * 2 > t->nslots && grow(t))
        return -1;
    gm_imap_slot *s = &t->slots[slot_of(t, key)];
    if (s->gen != t->gen) {
        s->gen = t->gen;
        s->key = key;
        t->count++;
    }
    s->val = val;
    return 0;
}
