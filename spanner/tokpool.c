/* Token sets shared between spanners (spanner/tokpool.h, note [shared token sets]). */
#include "spanner/tokpool.h"

#include <string.h>

#include "base/bitset.h"

enum { CHAINS = 1024 };

gm_status gm_tokpool_create(gm_mem *m, const gm_trie *trie, uint32_t nbits, gm_tokpool **out,
                            gm_error *err)
{
    *out = NULL;
    gm_tokpool *f = gm_mem_calloc(m, 1, sizeof *f);
    if (!f)
        return gm_mem_fail(m, err, "the shared token sets");
    f->mem = m;
    f->trie = trie;
    f->nbits = nbits;
    if (pthread_mutex_init(&f->lock, NULL) != 0) {
        gm_mem_free(m, f);
        return gm_error_set(err, GM_ERR_NOMEM, "cannot create a lock for the shared token sets");
    }
    gm_intern_init(&f->sets, m);
    f->nchains = CHAINS;
    f->chains = gm_mem_calloc(m, f->nchains, sizeof *f->chains);
    if (!f->chains) {
        gm_tokpool_destroy(f);
        return gm_mem_fail(m, err, "the shared token sets");
    }
    *out = f;
    return GM_OK;
}

void gm_tokpool_destroy(gm_tokpool *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->n; i++) {
        gm_mem_free(f->mem, atomic_load(&f->entries[i]->bits));
        gm_mem_free(f->mem, f->entries[i]);
    }
    gm_mem_free(f->mem, f->entries);
    if (f->chains)
        for (uint32_t i = 0; i < f->nchains; i++)
            for (gm_pooled *p = f->chains[i], *next; p; p = next) {
                next = p->next;
                gm_tokset_free(f->mem, &p->set);
                gm_mem_free(f->mem, p);
            }
    gm_mem_free(f->mem, f->chains);
    gm_intern_free(&f->sets);
    pthread_mutex_destroy(&f->lock);
    gm_mem_free(f->mem, f);
}

gm_filter *gm_tokpool_filter(gm_tokpool *f, const uint8_t bytes[32], gm_error *err)
{
    gm_filter *e = NULL;
    pthread_mutex_lock(&f->lock);
    uint32_t id = gm_intern_find(&f->sets, bytes, 32);
    if (id != UINT32_MAX) {
        e = f->entries[id];
        goto out;
    }
    /* Everything a new entry needs comes before the key is interned, so ids and entries
     * stay in step when an allocation fails. */
    if (f->n == f->cap) {
        uint32_t cap = f->cap ? 2 * f->cap : 16;
        gm_filter **grown = gm_mem_reallocarray(f->mem, f->entries, cap, sizeof *grown);
        if (!grown)
            goto nomem;
        f->entries = grown;
        f->cap = cap;
    }
    if (!(e = gm_mem_calloc(f->mem, 1, sizeof *e)))
        goto nomem;
    if (gm_intern_put(&f->sets, bytes, 32, &id, NULL) != 0) {
        gm_mem_free(f->mem, e);
        goto nomem;
    }
    memcpy(e->bytes, bytes, 32);
    atomic_init(&e->bits, NULL);
    f->entries[f->n++] = e;
    goto out;
nomem:
    gm_mem_fail(f->mem, err, "the first-byte filters");
    e = NULL;
out:
    pthread_mutex_unlock(&f->lock);
    return e;
}

const uint32_t *gm_tokpool_filter_bits(gm_tokpool *f, gm_filter *e, gm_error *err)
{
    uint32_t *bits = atomic_load_explicit(&e->bits, memory_order_acquire);
    if (bits)
        return bits;
    bits = gm_mem_calloc(f->mem, GM_MASK_WORDS(f->nbits), sizeof(uint32_t));
    if (!bits) {
        gm_mem_fail(f->mem, err, "a token filter");
        return NULL;
    }
    const gm_trie *tr = f->trie;
    /* Children of the root are the nodes of depth 1; each subtree ends at skip. */
    for (uint32_t i = 1; i < tr->nnodes; i = tr->nodes[i].skip) {
        uint8_t b = tr->nodes[i].byte;
        if (!((e->bytes[b >> 3] >> (b & 7)) & 1))
            continue;
        for (uint32_t j = i; j < tr->nodes[i].skip; j++)
            for (uint32_t k = tr->nodes[j].tok_begin; k < tr->nodes[j].tok_end; k++) {
                uint32_t t = tr->tokens[k];
                bits[t >> 5] |= (uint32_t)1 << (t & 31);
            }
    }
    uint32_t *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&e->bits, &expected, bits, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        /* Another thread built it first. */
        gm_mem_free(f->mem, bits);
        return expected;
    }
    return bits;
}

/* A set's hash, over its representation (sets of different forms are never pooled together). */
static uint64_t set_hash(const gm_tokset *set, uint32_t nbits)
{
    uint64_t h = gm_hash_mix64(set->kind * 0x9e3779b97f4a7c15ULL + set->count);
    switch (set->kind) {
    case GM_TOKSET_LIST:
    case GM_TOKSET_COMPLEMENT:
        return gm_hash_bytes(set->u.ids, (size_t)set->n * sizeof *set->u.ids, h);
    case GM_TOKSET_BITSET:
        return gm_hash_bytes(set->u.words, GM_MASK_WORDS(nbits) * sizeof *set->u.words, h);
    default:
        return h;
    }
}

static bool same_set(const gm_tokset *a, const gm_tokset *b, uint32_t nbits)
{
    if (a->kind != b->kind || a->count != b->count || a->n != b->n)
        return false;
    switch (a->kind) {
    case GM_TOKSET_LIST:
    case GM_TOKSET_COMPLEMENT:
        return !memcmp(a->u.ids, b->u.ids, (size_t)a->n * sizeof *a->u.ids);
    case GM_TOKSET_BITSET:
        return !memcmp(a->u.words, b->u.words, GM_MASK_WORDS(nbits) * sizeof *a->u.words);
    default:
        return true;
    }
}

/* Twice the chains when they grow long (under the lock); kept as they are without memory. */
static void grow(gm_tokpool *f)
{
    uint32_t n = f->nchains * 2;
    gm_pooled **chains = gm_mem_calloc(f->mem, n, sizeof *chains);
    if (!chains)
        return;
    for (uint32_t i = 0; i < f->nchains; i++)
        for (gm_pooled *p = f->chains[i], *next; p; p = next) {
            next = p->next;
            p->next = chains[p->hash % n];
            chains[p->hash % n] = p;
        }
    gm_mem_free(f->mem, f->chains);
    f->chains = chains;
    f->nchains = n;
}

const gm_tokset *gm_tokpool_adopt(gm_tokpool *f, gm_tokset *set)
{
    uint64_t h = set_hash(set, f->nbits);
    const gm_tokset *out = NULL;
    gm_pooled *fresh = NULL;
    pthread_mutex_lock(&f->lock);
    for (const gm_pooled *p = f->chains[h % f->nchains]; p && !out; p = p->next)
        if (p->hash == h && same_set(&p->set, set, f->nbits))
            out = &p->set;
    if (!out && (fresh = gm_mem_alloc(f->mem, sizeof *fresh))) {
        fresh->hash = h;
        fresh->set = *set;
        fresh->next = f->chains[h % f->nchains];
        f->chains[h % f->nchains] = fresh;
        f->npooled++;
        f->pooled_bytes += sizeof *fresh + gm_tokset_bytes(set, f->nbits);
        if (f->npooled > 2 * (size_t)f->nchains)
            grow(f);
        out = &fresh->set;
    }
    pthread_mutex_unlock(&f->lock);
    if (!fresh)
        gm_tokset_free(f->mem, set); /* pooled already, or no memory */
    memset(set, 0, sizeof *set);
    return out;
}

const gm_tokset *gm_tokpool_set(gm_tokpool *f, const uint32_t *bits, bool list)
{
    gm_tokset set = {0};
    uint32_t n = list ? gm_count_bits32(bits, GM_MASK_WORDS(f->nbits)) : 0;
    uint32_t *ids = list ? gm_mem_alloc(f->mem, (size_t)(n ? n : 1) * sizeof *ids) : NULL;
    if (list && !ids)
        return NULL;
    if (list) {
        uint32_t j = 0;
        for (size_t w = 0; w < GM_MASK_WORDS(f->nbits); w++)
            for (uint32_t x = bits[w]; x; x &= x - 1)
                ids[j++] = (uint32_t)(w * 32 + (size_t)__builtin_ctz(x));
    }
    int rc = list ? gm_tokset_list_from_sorted(f->mem, &set, ids, n)
                  : gm_tokset_from_bits(f->mem, &set, bits, f->nbits);
    gm_mem_free(f->mem, ids);
    return rc ? NULL : gm_tokpool_adopt(f, &set);
}

size_t gm_tokpool_bytes(gm_tokpool *f)
{
    size_t bytes = 0;
    pthread_mutex_lock(&f->lock);
    for (uint32_t i = 0; i < f->n; i++)
        if (atomic_load_explicit(&f->entries[i]->bits, memory_order_acquire))
            bytes += GM_MASK_WORDS(f->nbits) * sizeof(uint32_t);
    bytes += f->pooled_bytes;
    pthread_mutex_unlock(&f->lock);
    return bytes;
}

/*
 * Filters read from a compiled file (note [mapped compiled files]): the
 * bitset is checked to be exactly the filter's tokens (every token of the
 * trie under one of its first bytes set, and no other bit) without building
 * one, then used as the filter's own, in place when the file is mapped.
 */
bool gm_tokpool_filter_matches(const gm_tokpool *f, const gm_filter *e, const uint32_t *bits)
{
    const gm_trie *tr = f->trie;
    size_t expected = 0, set = 0;
    for (uint32_t i = 1; i < tr->nnodes; i = tr->nodes[i].skip) {
        uint8_t b = tr->nodes[i].byte;
        if (!((e->bytes[b >> 3] >> (b & 7)) & 1))
            continue;
        uint32_t k0 = tr->nodes[i].tok_begin, k1 = tr->nodes[tr->nodes[i].skip - 1].tok_end;
        for (uint32_t k = k0; k < k1; k++) {
            uint32_t t = tr->tokens[k];
            if (!((bits[t >> 5] >> (t & 31)) & 1))
                return false;
        }
        expected += k1 - k0;
    }
    for (size_t w = 0; w < GM_MASK_WORDS(f->nbits); w++)
        set += (size_t)__builtin_popcount(bits[w]);
    return set == expected;
}

void gm_tokpool_filter_adopt(gm_tokpool *f, gm_filter *e, uint32_t *bits)
{
    uint32_t *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&e->bits, &expected, bits, memory_order_acq_rel,
                                                 memory_order_acquire))
        gm_mem_free(f->mem, bits);
}
