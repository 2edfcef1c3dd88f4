/* The rule automata cache (earley/fsm_cache.h, note [rule automata cache]). */
#include "earley/fsm_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "base/hash.h"
#include "base/vec.h"

enum { DEFAULT_MAX_BYTES = 64u << 20 };

typedef struct entry {
    uint32_t nstates, nedges;
    uint32_t *off;
    gm_fsm_edge *edges;
    uint8_t *flags;
    uint8_t x_nullable;
} entry;

struct gm_fcache {
    gm_mem mem;
    pthread_mutex_t lock;
    size_t max_bytes;
    gm_intern keys;           /* key -> index into entries */
    GM_VEC(entry) entries;
    uint64_t bytes, hits, misses;
};

gm_status gm_fcache_create(const gm_allocator *al, size_t max_bytes, gm_fcache **out,
                           gm_error *err)
{
    *out = NULL;
    gm_mem m;
    gm_mem_init(&m, al, SIZE_MAX);
    gm_fcache *c = gm_mem_calloc(&m, 1, sizeof *c);
    if (!c)
        return gm_mem_fail(&m, err, "a grammar cache");
    c->mem = m;
    if (pthread_mutex_init(&c->lock, NULL)) {
        gm_mem_free(&m, c);
        return gm_error_set(err, GM_ERR_NOMEM, "a grammar cache: cannot create a mutex");
    }
    c->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
    gm_intern_init(&c->keys, &c->mem);
    *out = c;
    return GM_OK;
}

static void entry_free(gm_mem *m, entry *e)
{
    gm_mem_free(m, e->off);
    gm_mem_free(m, e->edges);
    gm_mem_free(m, e->flags);
}

/* Empties the cache (under the lock). */
static void clear(gm_fcache *c)
{
    for (size_t i = 0; i < c->entries.n; i++)
        entry_free(&c->mem, &c->entries.v[i]);
    c->entries.n = 0;
    gm_intern_free(&c->keys);
    gm_intern_init(&c->keys, &c->mem);
    c->bytes = 0;
}

void gm_fcache_destroy(gm_fcache *c)
{
    if (!c)
        return;
    clear(c);
    gm_vec_free(&c->mem, &c->entries);
    pthread_mutex_destroy(&c->lock);
    gm_mem m = c->mem;
    gm_mem_free(&m, c);
}

/* Copies the arrays of a dfa onto m; false when out of memory (nothing left allocated). */
static bool copy_arrays(gm_mem *m, uint32_t nstates, uint32_t nedges, const uint32_t *off,
                        const gm_fsm_edge *edges, const uint8_t *flags, uint32_t **ooff,
                        gm_fsm_edge **oedges, uint8_t **oflags)
{
    *ooff = gm_mem_alloc(m, ((size_t)nstates + 1) * sizeof **ooff);
    *oedges = gm_mem_alloc(m, (nedges ? nedges : 1) * sizeof **oedges);
    *oflags = gm_mem_alloc(m, nstates ? nstates : 1);
    if (!*ooff || !*oedges || !*oflags) {
        gm_mem_free(m, *ooff);
        gm_mem_free(m, *oedges);
        gm_mem_free(m, *oflags);
        *ooff = NULL;
        *oedges = NULL;
        *oflags = NULL;
        return false;
    }
    memcpy(*ooff, off, ((size_t)nstates + 1) * sizeof **ooff);
    memcpy(*oedges, edges, (size_t)nedges * sizeof **oedges);
    memcpy(*oflags, flags, nstates);
    return true;
}

int gm_fcache_get(gm_fcache *c, const uint32_t *key, size_t nwords, gm_mem *m,
                  gm_fcache_dfa *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&c->lock);
    uint32_t id = gm_intern_find(&c->keys, key, nwords * sizeof *key);
    int rc = 0;
    if (id == UINT32_MAX) {
        c->misses++;
    } else {
        const entry *e = &c->entries.v[id];
        c->hits++;
        rc = -1;
        if (copy_arrays(m, e->nstates, e->nedges, e->off, e->edges, e->flags, &out->off,
                        &out->edges, &out->flags)) {
            out->nstates = e->nstates;
            out->x_nullable = e->x_nullable;
            rc = 1;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

void gm_fcache_put(gm_fcache *c, const uint32_t *key, size_t nwords, const gm_fcache_dfa *d)
{
    uint32_t nedges = d->off[d->nstates];
    uint64_t size = (uint64_t)nwords * 4 + ((uint64_t)d->nstates + 1) * 4 +
                    (uint64_t)nedges * sizeof *d->edges + d->nstates + 64;
    pthread_mutex_lock(&c->lock);
    if (size > c->max_bytes)
        goto out;
    if (c->bytes + size > c->max_bytes)
        clear(c);
    if (gm_intern_find(&c->keys, key, nwords * sizeof *key) != UINT32_MAX)
        goto out; /* another thread put it first */
    entry e;
    memset(&e, 0, sizeof e);
    if (gm_vec_reserve(&c->mem, &c->entries, c->entries.n + 1) ||
        !copy_arrays(&c->mem, d->nstates, nedges, d->off, d->edges, d->flags, &e.off, &e.edges,
                     &e.flags))
        goto out;
    uint32_t id;
    int added;
    if (gm_intern_put(&c->keys, key, nwords * sizeof *key, &id, &added) || !added ||
        id != c->entries.n) {
        entry_free(&c->mem, &e);
        goto out;
    }
    e.nstates = d->nstates;
    e.nedges = nedges;
    e.x_nullable = d->x_nullable;
    c->entries.v[c->entries.n++] = e;
    c->bytes += size;
out:
    pthread_mutex_unlock(&c->lock);
}

void gm_fcache_get_stats(gm_fcache *c, gm_fcache_stats *out)
{
    pthread_mutex_lock(&c->lock);
    out->hits = c->hits;
    out->misses = c->misses;
    out->entries = c->entries.n;
    out->bytes = c->bytes;
    pthread_mutex_unlock(&c->lock);
}
