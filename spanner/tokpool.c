/* Token sets shared between spanners (spanner/tokpool.h, note [shared token sets]). */
#include "spanner/tokpool.h"

#include <string.h>

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
    f->scratch = gm_mem_calloc(m, GM_MASK_WORDS(nbits) + 1, sizeof *f->scratch);
    if (!f->chains || !f->scratch) {
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
    gm_mem_free(f->mem, f->scratch);
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

/* Whether pooled set p holds exactly the tokens of bits (f->scratch is free: under the lock). */
static bool same_set(gm_tokpool *f, const gm_pooled *p, const uint32_t *bits)
{
    size_t words = GM_MASK_WORDS(f->nbits);
    memset(f->scratch, 0, words * sizeof *f->scratch);
    gm_tokset_or_into(&p->set, f->scratch, f->nbits);
    return memcmp(f->scratch, bits, words * sizeof *bits) == 0;
}

/* The set of bits as a list (the list-only variant); -1 when memory ran out. */
static int list_from_bits(gm_mem *m, gm_tokset *set, const uint32_t *bits, uint32_t nbits)
{
    uint32_t n = 0;
    for (size_t w = 0; w < GM_MASK_WORDS(nbits); w++)
        n += (uint32_t)__builtin_popcount(bits[w]);
    uint32_t *ids = gm_mem_alloc(m, (size_t)(n ? n : 1) * sizeof *ids);
    if (!ids)
        return -1;
    uint32_t j = 0;
    for (size_t w = 0; w < GM_MASK_WORDS(nbits); w++)
        for (uint32_t x = bits[w]; x; x &= x - 1)
            ids[j++] = (uint32_t)(w * 32 + (size_t)__builtin_ctz(x));
    int rc = gm_tokset_list_from_sorted(m, set, ids, n);
    gm_mem_free(m, ids);
    return rc;
}

const gm_tokset *gm_tokpool_set(gm_tokpool *f, const uint32_t *bits, bool list)
{
    uint64_t h = gm_hash_bytes(bits, GM_MASK_WORDS(f->nbits) * sizeof *bits, list);
    const gm_tokset *out = NULL;
    pthread_mutex_lock(&f->lock);
    gm_pooled **chain = &f->chains[h % f->nchains];
    for (const gm_pooled *p = *chain; p && !out; p = p->next)
        if (p->hash == h && p->list == list && same_set(f, p, bits))
            out = &p->set;
    if (!out) {
        gm_pooled *p = gm_mem_calloc(f->mem, 1, sizeof *p);
        int rc = !p ? -1
                 : list ? list_from_bits(f->mem, &p->set, bits, f->nbits)
                        : gm_tokset_from_bits(f->mem, &p->set, bits, f->nbits);
        if (rc) {
            gm_mem_free(f->mem, p);
        } else {
            p->hash = h;
            p->list = list;
            p->next = *chain;
            *chain = p;
            f->npooled++;
            f->pooled_bytes += sizeof *p + gm_tokset_bytes(&p->set, f->nbits);
            out = &p->set;
        }
    }
    pthread_mutex_unlock(&f->lock);
    return out;
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
