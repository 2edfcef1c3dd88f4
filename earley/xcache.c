/*
 * The cross-grammar cache of one vocabulary (XGrammar 2 §3.3): token-mask
 * cache entries (maskcache.c, note [token-mask cache]) shared by every
 * grammar compiled for the vocabulary.
 *
 * note [cross-grammar hashing]
 * An entry depends on what the items derived from its seed item can read:
 * the automata reachable from the seed's state (through byte, reference
 * and special-token edges, into referenced rules, recursion included),
 * the repetition bounds of those rules, the seed's counter class — and,
 * for the uncertain part only, the follow set of the seed's rule. The key
 * of an entry names that structure exactly (note [unit keys] in xkey.c:
 * rule automata serialized once per strongly connected component and
 * interned here), so equal keys mean equal accepted and raw-uncertain sets
 * whatever grammar they come from (a JSON string or number rule in two
 * different grammars, their whitespace, a shared sub-grammar). This is
 * XGrammar 2's hierarchical hashing of leaf automata, acyclic references
 * and cycles, with interned serializations in place of hashes, so that a
 * hash collision is harmless.
 *
 * A hit with the same follow set is perfect: the entry is taken as it is.
 * A hit with another follow set is partial: the accepted tokens are
 * shared, and only the raw-uncertain tokens (those whose walk completed
 * the seed's rule before their last byte) are walked again to keep those
 * whose next byte may follow the rule in this grammar.
 *
 * Entries are immutable once published and live as long as the cache;
 * engines point into them. One mutex guards the table.
 */
#include <string.h>

#include "earley/eengine.h"
#include "base/error.h"
#include "base/hash.h"

enum { XCACHE_INTERIORS = 32 };

typedef struct xfollow {
    uint64_t follow[4];
    uint32_t nunc;
    uint32_t *unc;            /* trie nodes, ascending */
    struct xfollow *next;
} xfollow;

struct gm_xentry {
    uint64_t hash;
    uint32_t klen;
    uint32_t *key;
    uint8_t form;             /* accepted tokens, as in maskcache.c */
    uint32_t nacc;
    uint32_t *acc;
    uint32_t nraw;
    uint32_t *raw;            /* raw-uncertain trie nodes, ascending */
    xfollow *follows;
    struct gm_xentry *chain;
};

/* An interned unit serialization (note [unit keys] in xkey.c). */
typedef struct xunit {
    uint64_t hash;
    uint32_t n, id;
    uint32_t *ser;
    struct xunit *chain;
} xunit;

struct gm_excache {
    gm_mem *mem;
    const gm_vocab_data *v;
    const gm_trie *t;
    pthread_mutex_t lock;
    gm_tbelow *below;         /* built on first use */
    gm_xentry **buckets;
    size_t nbuckets, n;
    xunit **ubuckets;
    size_t nubuckets, nunits;
    size_t bytes, budget;
    gm_einterior *interiors[XCACHE_INTERIORS]; /* note [string interiors] in closed.c */
    uint32_t ninteriors;
};

enum { XCACHE_BUDGET = 512u << 20 };

gm_status gm_excache_create(gm_mem *m, const gm_vocab_data *v, const gm_trie *t,
                            gm_excache **out, gm_error *err)
{
    *out = NULL;
    gm_excache *x = gm_mem_calloc(m, 1, sizeof *x);
    if (!x)
        return gm_mem_fail(m, err, "the cross-grammar cache");
    x->mem = m;
    x->v = v;
    x->t = t;
    x->budget = m->limit / 4 < XCACHE_BUDGET ? m->limit / 4 : XCACHE_BUDGET;
    /* What lies below each trie node is the vocabulary's, built with its
       cache rather than inside the first mask of the first grammar (a few
       milliseconds for 128K tokens); retried on first use if memory ran out. */
    x->below = gm_tbelow_create(m, t);
    if (pthread_mutex_init(&x->lock, NULL)) {
        gm_mem_free(m, x);
        return gm_error_set(err, GM_ERR_NOMEM, "the cross-grammar cache: cannot create a mutex");
    }
    *out = x;
    return GM_OK;
}

static void xentry_free(gm_mem *m, gm_xentry *xe)
{
    for (xfollow *f = xe->follows, *nf; f; f = nf) {
        nf = f->next;
        gm_mem_free(m, f->unc);
        gm_mem_free(m, f);
    }
    gm_mem_free(m, xe->key);
    gm_mem_free(m, xe->acc);
    gm_mem_free(m, xe->raw);
    gm_mem_free(m, xe);
}

void gm_excache_destroy(gm_excache *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->nbuckets; i++)
        for (gm_xentry *xe = x->buckets[i], *nx; xe; xe = nx) {
            nx = xe->chain;
            xentry_free(x->mem, xe);
        }
    gm_mem_free(x->mem, x->buckets);
    for (size_t i = 0; i < x->nubuckets; i++)
        for (xunit *u = x->ubuckets[i], *nu; u; u = nu) {
            nu = u->chain;
            gm_mem_free(x->mem, u->ser);
            gm_mem_free(x->mem, u);
        }
    gm_mem_free(x->mem, x->ubuckets);
    gm_tbelow_destroy(x->mem, x->below);
    for (uint32_t i = 0; i < x->ninteriors; i++)
        gm_einterior_destroy(x->mem, x->interiors[i]);
    pthread_mutex_destroy(&x->lock);
    gm_mem_free(x->mem, x);
}

bool gm_excache_fits(const gm_excache *x, const gm_vocab_data *v, const gm_trie *t)
{
    return x->v == v && x->t == t;
}

const gm_tbelow *gm_excache_below(gm_excache *x)
{
    pthread_mutex_lock(&x->lock);
    if (!x->below)
        x->below = gm_tbelow_create(x->mem, x->t);
    const gm_tbelow *s = x->below;
    pthread_mutex_unlock(&x->lock);
    return s;
}

const gm_einterior *gm_excache_interior(gm_excache *x, const uint64_t loops[2])
{
    gm_einterior *in = NULL;
    pthread_mutex_lock(&x->lock);
    for (uint32_t i = 0; i < x->ninteriors && !in; i++)
        if (x->interiors[i]->loops[0] == loops[0] && x->interiors[i]->loops[1] == loops[1])
            in = x->interiors[i];
    if (!in && x->ninteriors < XCACHE_INTERIORS &&
        (in = gm_einterior_create(x->mem, x->t, (x->v->size + 31) / 32, loops))) {
        x->interiors[x->ninteriors++] = in;
        x->bytes += in->bytes;
    }
    pthread_mutex_unlock(&x->lock);
    return in;
}

uint32_t gm_excache_unit(gm_excache *x, const uint32_t *ser, uint32_t n)
{
    uint64_t h = gm_hash_bytes(ser, (size_t)n * 4, 0x52);
    uint32_t id = 0;
    pthread_mutex_lock(&x->lock);
    if (x->nubuckets)
        for (xunit *u = x->ubuckets[h & (x->nubuckets - 1)]; u; u = u->chain)
            if (u->hash == h && u->n == n && !memcmp(u->ser, ser, (size_t)n * 4)) {
                id = u->id;
                goto out;
            }
    if (x->bytes > x->budget || x->nunits >= UINT32_MAX - 2)
        goto out;
    if ((x->nunits + 1) * 2 > x->nubuckets) {
        size_t nb = x->nubuckets ? x->nubuckets * 2 : 64;
        xunit **b = gm_mem_calloc(x->mem, nb, sizeof *b);
        if (!b)
            goto out;
        for (size_t i = 0; i < x->nubuckets; i++)
            for (xunit *u = x->ubuckets[i], *nu; u; u = nu) {
                nu = u->chain;
                u->chain = b[u->hash & (nb - 1)];
                b[u->hash & (nb - 1)] = u;
            }
        gm_mem_free(x->mem, x->ubuckets);
        x->ubuckets = b;
        x->nubuckets = nb;
    }
    xunit *u = gm_mem_alloc(x->mem, sizeof *u);
    uint32_t *c = gm_mem_alloc(x->mem, (n ? n : 1) * sizeof *c);
    if (!u || !c) {
        gm_mem_free(x->mem, u);
        gm_mem_free(x->mem, c);
        goto out;
    }
    if (n)
        memcpy(c, ser, (size_t)n * 4);
    u->hash = h;
    u->n = n;
    u->ser = c;
    u->id = id = (uint32_t)++x->nunits;
    u->chain = x->ubuckets[h & (x->nubuckets - 1)];
    x->ubuckets[h & (x->nubuckets - 1)] = u;
    x->bytes += sizeof *u + (size_t)n * 4;
out:
    pthread_mutex_unlock(&x->lock);
    return id;
}

static gm_xentry *find_locked(gm_excache *x, const uint32_t *key, uint32_t klen, uint64_t h)
{
    if (!x->nbuckets)
        return NULL;
    for (gm_xentry *xe = x->buckets[h & (x->nbuckets - 1)]; xe; xe = xe->chain)
        if (xe->hash == h && xe->klen == klen && !memcmp(xe->key, key, (size_t)klen * 4))
            return xe;
    return NULL;
}

static const xfollow *follow_locked(const gm_xentry *xe, const uint64_t follow[4])
{
    for (const xfollow *f = xe->follows; f; f = f->next)
        if (!memcmp(f->follow, follow, sizeof f->follow))
            return f;
    return NULL;
}

bool gm_excache_lookup(gm_excache *x, const uint32_t *key, uint32_t klen, const uint64_t follow[4],
                       gm_xhit *hit)
{
    uint64_t h = gm_hash_bytes(key, (size_t)klen * 4, 0x51);
    pthread_mutex_lock(&x->lock);
    gm_xentry *xe = find_locked(x, key, klen, h);
    if (xe) {
        hit->entry = xe;
        hit->form = xe->form;
        hit->nacc = xe->nacc;
        hit->acc = xe->acc;
        hit->nraw = xe->nraw;
        hit->raw = xe->raw;
        const xfollow *f = follow_locked(xe, follow);
        hit->perfect = f != NULL;
        hit->nunc = f ? f->nunc : 0;
        hit->unc = f ? f->unc : NULL;
    }
    pthread_mutex_unlock(&x->lock);
    return xe != NULL;
}

static uint32_t *copy_u32(gm_mem *m, const uint32_t *a, size_t n)
{
    uint32_t *c = gm_mem_alloc(m, (n ? n : 1) * sizeof *c);
    if (c && n)
        memcpy(c, a, n * sizeof *c);
    return c;
}

/* Adds follow set `follow` with its uncertain nodes to xe; the stored copy in *unc. */
static int add_follow_locked(gm_excache *x, gm_xentry *xe, const uint64_t follow[4],
                             const uint32_t *unc, uint32_t nunc, const uint32_t **stored)
{
    const xfollow *f = follow_locked(xe, follow);
    if (!f) {
        xfollow *nf = gm_mem_calloc(x->mem, 1, sizeof *nf);
        uint32_t *c = copy_u32(x->mem, unc, nunc);
        if (!nf || !c) {
            gm_mem_free(x->mem, nf);
            gm_mem_free(x->mem, c);
            return -1;
        }
        memcpy(nf->follow, follow, sizeof nf->follow);
        nf->nunc = nunc;
        nf->unc = c;
        nf->next = xe->follows;
        xe->follows = nf;
        x->bytes += sizeof *nf + (size_t)nunc * 4;
        f = nf;
    }
    *stored = f->unc;
    return 0;
}

int gm_excache_add_follow(gm_excache *x, gm_xentry *xe, const uint64_t follow[4],
                          const uint32_t *unc, uint32_t nunc, const uint32_t **stored)
{
    pthread_mutex_lock(&x->lock);
    int rc = add_follow_locked(x, xe, follow, unc, nunc, stored);
    pthread_mutex_unlock(&x->lock);
    return rc;
}

int gm_excache_put(gm_excache *x, const uint32_t *key, uint32_t klen, uint8_t form,
                   const uint32_t *acc, uint32_t nacc_words, uint32_t nacc, const uint32_t *raw,
                   uint32_t nraw, const uint64_t follow[4], const uint32_t *unc, uint32_t nunc,
                   gm_xhit *hit)
{
    uint64_t h = gm_hash_bytes(key, (size_t)klen * 4, 0x51);
    int rc = -1;
    pthread_mutex_lock(&x->lock);
    gm_xentry *xe = find_locked(x, key, klen, h);
    if (!xe) {
        if (x->bytes > x->budget)
            goto out;
        if ((x->n + 1) * 2 > x->nbuckets) {
            size_t nb = x->nbuckets ? x->nbuckets * 2 : 256;
            gm_xentry **b = gm_mem_calloc(x->mem, nb, sizeof *b);
            if (!b)
                goto out;
            for (size_t i = 0; i < x->nbuckets; i++)
                for (gm_xentry *e = x->buckets[i], *ne; e; e = ne) {
                    ne = e->chain;
                    e->chain = b[e->hash & (nb - 1)];
                    b[e->hash & (nb - 1)] = e;
                }
            gm_mem_free(x->mem, x->buckets);
            x->buckets = b;
            x->nbuckets = nb;
        }
        xe = gm_mem_calloc(x->mem, 1, sizeof *xe);
        if (!xe)
            goto out;
        xe->hash = h;
        xe->klen = klen;
        xe->key = copy_u32(x->mem, key, klen);
        xe->form = form;
        xe->nacc = nacc;
        xe->acc = copy_u32(x->mem, acc, nacc_words);
        xe->nraw = nraw;
        xe->raw = copy_u32(x->mem, raw, nraw);
        if (!xe->key || !xe->acc || !xe->raw) {
            xentry_free(x->mem, xe);
            goto out;
        }
        xe->chain = x->buckets[h & (x->nbuckets - 1)];
        x->buckets[h & (x->nbuckets - 1)] = xe;
        x->n++;
        x->bytes += sizeof *xe + ((size_t)klen + nacc_words + nraw) * 4;
    }
    const uint32_t *stored;
    if (add_follow_locked(x, xe, follow, unc, nunc, &stored))
        goto out;
    hit->entry = xe;
    hit->form = xe->form;
    hit->nacc = xe->nacc;
    hit->acc = xe->acc;
    hit->nraw = xe->nraw;
    hit->raw = xe->raw;
    hit->perfect = true;
    hit->nunc = nunc;
    hit->unc = stored;
    rc = 0;
out:
    pthread_mutex_unlock(&x->lock);
    return rc;
}
