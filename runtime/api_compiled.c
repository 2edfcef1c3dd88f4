/* Public compiled grammars: a grammar and a vocabulary joined by the spanner. */
#include <string.h>

#include "runtime/ctx_spanners.h"
#include "runtime/engine.h"
#include "runtime/blocks.h"
#include "runtime/objects.h"
#include "runtime/stag_source.h"
#include "base/mapping.h"
#include "base/error.h"
#include "parser/ctypedef.h"
#include "runtime/cdecl_index.h"

void gm_compile_options_init_defaults(gm_compile_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    gm_limits_init_defaults(&opts->limits);
}

static void compiled_free(gm_compiled *c)
{
    gm_cblocks_destroy(c);
    if (c->inner) {
        for (uint32_t i = 0; i < c->grammar->blocks->n; i++)
            gm_compiled_destroy(c->inner[i]);
        gm_mem_free(&c->mem, c->inner);
    }
    gm_eengine_destroy(c->eengine);
    gm_ctx_spanners_destroy(c->ctx);
    gm_spanner_destroy(c->spanner);
    gm_ctypedef_destroy(c->ctd);
    gm_cindex_destroy(c->cidx);
    gm_grammar_destroy(c->grammar);
    gm_vocab_destroy(c->vocab);
    gm_realloc_fn fn = c->mem.fn;
    void *ud = c->mem.ud;
    gm_mapping *map = c->mem.mapping; /* note [mapped compiled files]: after the rest */
    fn(ud, c, 0);
    gm_mapping_release(map);
}

/*
 * A grammar with code blocks: each block's bundled grammar (LALR) compiled
 * with the same vocabulary, then the blocks' tables, which borrow them
 * (note [code blocks] in engine_blocks.c): the one place where compiling a
 * grammar compiles others.
 */
static gm_status compile_blocks(gm_compiled *c, gm_error *err)
{
    const gm_gblocks *gb = c->grammar->blocks;
    if (!(c->inner = gm_mem_calloc(&c->mem, gb->n, sizeof *c->inner)))
        return gm_mem_fail(&c->mem, err, "code blocks");
    for (uint32_t i = 0; i < gb->n; i++) {
        gm_compile_options co;
        gm_compile_options_init_defaults(&co);
        gm_status st = gm_compiled_create(gb->v[i].inner, c->vocab, &co, &c->inner[i], err);
        if (st != GM_OK) {
            gm_error_prefix(err, "code block %s", gb->v[i].name);
            return st;
        }
        if (c->inner[i]->ctd) /* engine_blocks.c walks the inner spanner without the layer */
            return gm_error_set(err, GM_ERR_UNSUPPORTED,
                                "code block %s: C's typedef-name layer (runtime/cdecl.h) is not "
                                "applied in code blocks yet", gb->v[i].name);
    }
    return gm_cblocks_create(c, err);
}

gm_status gm_compiled_create(gm_grammar *g, gm_vocab *v, const gm_compile_options *opts,
                             gm_compiled **out, gm_error *err)
{
    if (!out || !g || !v)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_compiled_create: NULL argument");
    *out = NULL;
    gm_allocator al = opts ? opts->allocator : (gm_allocator){0};
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    gm_mem boot;
    gm_mem_init(&boot, &al, lim.max_memory);
    gm_compiled *c = boot.fn(boot.ud, NULL, sizeof *c);
    if (!c)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory compiling a grammar");
    memset(c, 0, sizeof *c);
    gm_mem_init(&c->mem, &al, lim.max_memory);
    atomic_init(&c->refs, 1);
    c->vocab = gm_vocab_retain(v);
    /* the delimiters this vocabulary has as tokens (note [special token candidates]) */
    gm_status st = gm_stag_source_for_vocab(g, v, &c->grammar, err);
    if (st != GM_OK) {
        compiled_free(c);
        return st;
    }
    g = c->grammar;
    if (g->engine == GM_ENGINE_EARLEY) {
        c->ops = &gm_engine_earley;
        gm_eengine_options eo = {0};
        eo.eager = opts && opts->eager;
        eo.limits = lim;
        gm_excache *x = gm_vocab_excache(v, err);
        st = x ? gm_eengine_create(&c->mem, g->eg, v->data, v->trie, x, &eo, &c->eengine, err)
               : err && err->code != GM_OK ? err->code : GM_ERR_NOMEM;
        if (st == GM_OK && gm_egrammar_has_budgets(g->eg)) {
            if (g->blocks)
                st = gm_error_set(err, GM_ERR_UNSUPPORTED, "a token budget (max_tokens) in a "
                                  "grammar with code blocks (lalr content) is not supported");
            c->ops = &gm_engine_budget;
        }
        if (st == GM_OK && g->blocks) {
            c->ops = &gm_engine_blocks;
            st = compile_blocks(c, err);
        }
    } else if (g->cfg && gm_ctypedef_wanted(g->cfg) &&
               (g->ctx || g->lexer->nstates != g->lexer->ndfa || g->postlex.insertion ||
                g->postlex.indentation)) {
        st = gm_error_set(err, GM_ERR_UNSUPPORTED,
                          "the typedef-name layer (C's TYPEDEF_NAME, parser/ctypedef.h) in masks "
                          "needs the basic lexer without backtracking and no other post-lexing "
                          "layer (runtime/cdecl.h)");
    } else {
        c->ops = &gm_engine_lalr;
        st = gm_spanner_create(&c->mem, g->lexer, &g->postlex, g->lr, v->data, v->trie,
                               &c->spanner, err);
        if (st == GM_OK && g->cfg && gm_ctypedef_wanted(g->cfg))
            st = gm_ctypedef_create(&c->mem, g->cfg, g->lr, &c->ctd, err);
        if (st == GM_OK && c->ctd)
            st = gm_cindex_create(&c->mem, v->data, g->lexer, &c->cidx, err);
        if (st == GM_OK && g->ctx)
            st = gm_ctx_spanners_create(&c->mem, g->ctx, &g->postlex, g->lr, v->data, v->trie,
                                        &c->ctx, err);
        if (st == GM_OK && opts && opts->eager)
            st = c->ctx ? gm_ctx_spanners_build_all(c->ctx, opts->progress, opts->progress_ud, err)
                        : gm_spanner_build_all_progress(c->spanner, opts->progress,
                                                        opts->progress_ud, err);
    }
    if (st != GM_OK) {
        compiled_free(c);
        return st;
    }
    *out = c;
    return GM_OK;
}

gm_compiled *gm_compiled_retain(gm_compiled *c)
{
    if (c)
        atomic_fetch_add(&c->refs, 1);
    return c;
}

void gm_compiled_destroy(gm_compiled *c)
{
    if (c && atomic_fetch_sub(&c->refs, 1) == 1)
        compiled_free(c);
}

uint32_t gm_compiled_vocab_size(const gm_compiled *c) { return c ? c->vocab->data->size : 0; }

size_t gm_compiled_mask_words(const gm_compiled *c)
{
    return c ? GM_MASK_WORDS(c->vocab->data->size) : 0;
}

const gm_vocab *gm_compiled_vocab(const gm_compiled *c) { return c ? c->vocab : NULL; }

void gm_compiled_get_stats(const gm_compiled *c, gm_compiled_stats *stats)
{
    if (!stats)
        return;
    memset(stats, 0, sizeof *stats);
    if (!c)
        return;
    const gm_grammar *g = c->grammar;
    stats->engine = g->engine;
    stats->vocab_size = c->vocab->data->size;
    if (g->engine == GM_ENGINE_EARLEY) {
        gm_egrammar_stats gs;
        gm_egrammar_get_stats(g->eg, &gs);
        stats->rules = gs.rules;
        stats->fsm_states = gs.states;
        gm_eengine_stats es;
        gm_eengine_get_stats(c->eengine, &es);
        stats->cache_entries = es.cache_entries;
        stats->cross_hits = es.cross_hits;
        stats->uncertain_tokens = es.uncertain;
        stats->table_bytes = es.cache_bytes;
    } else {
        stats->lexer_states = g->lexer->nstates;
        stats->terminals = g->lexer->nterminals;
        stats->lr_states = g->lr->nstates;
        stats->productions = g->lr->nprods;
        gm_spanner_stats st;
        if (c->ctx)
            gm_ctx_spanners_stats(c->ctx, &st);
        else
            gm_spanner_stats_get(c->spanner, &st);
        stats->profiles_built = st.profiles;
        stats->classes = st.classes;
        stats->table_bytes = st.bytes;
    }
    stats->memory_bytes = atomic_load(&c->mem.used) + atomic_load(&g->mem.used) +
                          atomic_load(&c->vocab->mem.used);
}
