/* First-byte split filters shared between spanners (spanner/filters.h, note [shared filters]). */
#include "spanner/filters.h"

#include <string.h>

gm_status gm_filters_create(gm_mem *m, const gm_trie *trie, uint32_t nbits, gm_filters **out,
                            gm_error *err)
{
    *out = NULL;
    gm_filters *f = gm_mem_calloc(m, 1, sizeof *f);
    if (!f)
        return gm_mem_fail(m, err, "the first-byte filters");
    f->mem = m;
    f->trie = trie;
    f->nbits = nbits;
    if (pthread_mutex_init(&f->lock, NULL) != 0) {
        gm_mem_free(m, f);
        return gm_error_set(err, GM_ERR_NOMEM, "cannot create a lock for the first-byte filters");
    }
    gm_intern_init(&f->sets, m);
    *out = f;
    return GM_OK;
}

void gm_filters_destroy(gm_filters *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; i < f->n; i++) {
        gm_mem_free(f->mem, atomic_load(&f->entries[i]->bits));
        gm_mem_free(f->mem, f->entries[i]);
    }
    gm_mem_free(f->mem, f->entries);
    gm_intern_free(&f->sets);
    pthread_mutex_destroy(&f->lock);
    gm_mem_free(f->mem, f);
}

gm_filter *gm_filters_get(gm_filters *f, const uint8_t bytes[32], gm_error *err)
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

const uint32_t *gm_filters_bits(gm_filters *f, gm_filter *e, gm_error *err)
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

size_t gm_filters_bytes(gm_filters *f)
{
    size_t bytes = 0;
    pthread_mutex_lock(&f->lock);
    for (uint32_t i = 0; i < f->n; i++)
        if (atomic_load_explicit(&f->entries[i]->bits, memory_order_acquire))
            bytes += GM_MASK_WORDS(f->nbits) * sizeof(uint32_t);
    pthread_mutex_unlock(&f->lock);
    return bytes;
}
