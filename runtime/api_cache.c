/* The public grammar cache (gm_grammar_cache_create): the Earley engine's rule automata cache. */
#include <stdlib.h>

#include "earley/fsm_cache.h"
#include "runtime/objects.h"
#include "base/error.h"

gm_status gm_grammar_cache_create(const gm_allocator *allocator, size_t max_bytes,
                                  gm_grammar_cache **out, gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_cache_create: out is NULL");
    *out = NULL;
    gm_fcache *rules;
    gm_status st = gm_fcache_create(allocator, max_bytes, &rules, err);
    if (st != GM_OK)
        return st;
    gm_mem m;
    gm_mem_init(&m, allocator, SIZE_MAX);
    gm_grammar_cache *c = gm_mem_alloc(&m, sizeof *c);
    if (!c) {
        gm_fcache_destroy(rules);
        return gm_mem_fail(&m, err, "a grammar cache");
    }
    c->mem = m;
    c->rules = rules;
    *out = c;
    return GM_OK;
}

void gm_grammar_cache_destroy(gm_grammar_cache *c)
{
    if (!c)
        return;
    gm_fcache_destroy(c->rules);
    gm_mem m = c->mem;
    gm_mem_free(&m, c);
}

void gm_grammar_cache_get_stats(gm_grammar_cache *c, gm_grammar_cache_stats *out)
{
    if (!out)
        return;
    *out = (gm_grammar_cache_stats){0, 0, 0, 0};
    if (!c)
        return;
    gm_fcache_stats s;
    gm_fcache_get_stats(c->rules, &s);
    *out = (gm_grammar_cache_stats){s.hits, s.misses, s.entries, s.bytes};
}
