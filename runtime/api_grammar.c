/* Public grammar objects: Lark text -> cfg -> lexer + LALR(1) tables, refcounted. */
#include <stdio.h>
#include <string.h>

#include "parser/bundled.h"
#include "parser/grammar.h"
#include "runtime/objects.h"
#include "base/error.h"

void gm_grammar_options_init_defaults(gm_grammar_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    gm_limits_init_defaults(&opts->limits);
}

static gm_grammar *grammar_new(const gm_grammar_options *opts)
{
    gm_allocator al = opts ? opts->allocator : (gm_allocator){0};
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    gm_mem boot;
    gm_mem_init(&boot, &al, lim.max_memory);
    gm_grammar *g = boot.fn(boot.ud, NULL, sizeof *g);
    if (!g)
        return NULL;
    memset(g, 0, sizeof *g);
    gm_mem_init(&g->mem, &al, lim.max_memory);
    atomic_init(&g->refs, 1);
    g->engine = GM_ENGINE_LALR;
    return g;
}

static void grammar_free(gm_grammar *g)
{
    gm_lr_table_destroy(g->lr);
    gm_lexer_destroy(g->lexer);
    if (!g->cfg) {
        /* Loaded from a compiled file: the layer's arrays are the grammar's own. */
        gm_mem_free(&g->mem, g->postlex.at);
        gm_mem_free(&g->mem, g->postlex.after);
        gm_mem_free(&g->mem, g->postlex.bracket);
    }
    gm_cfg_destroy(g->cfg);
    gm_realloc_fn fn = g->mem.fn;
    void *ud = g->mem.ud;
    fn(ud, g, 0);
}

/* Builds the lexer and the tables of a loaded cfg. */
static gm_status build(gm_grammar *g, const gm_grammar_options *opts, gm_error *err)
{
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    gm_status st = gm_lexer_build_grammar(&g->mem, g->cfg->terminals, g->cfg->nterminals,
                                          opts && opts->conflicts == GM_CONFLICTS_LARK, &lim,
                                          opts ? opts->warn : NULL, opts ? opts->warn_ud : NULL,
                                          &g->lexer, err);
    if (st != GM_OK)
        return st;
    gm_lalr_options lo = {0};
    lo.conflicts = opts ? opts->conflicts : GM_CONFLICTS_ERROR;
    lo.limits = lim;
    lo.warn = opts ? opts->warn : NULL;
    lo.warn_ud = opts ? opts->warn_ud : NULL;
    st = gm_lalr_build(&g->mem, g->cfg, &lo, &g->lr, err);
    g->postlex = g->cfg->postlex; /* arrays stay the cfg's */
    return st;
}

static gm_status create(const char *text, size_t len, const char *name, const char *path,
                        const gm_grammar_options *opts, gm_grammar **out, gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_create: out is NULL");
    *out = NULL;
    if (opts && opts->format != GM_FORMAT_AUTO && opts->format != GM_FORMAT_LARK)
        return gm_error_set(err, GM_ERR_UNSUPPORTED,
                            "grammar format %d: only Lark grammars are built so far (the Earley "
                            "engine for GBNF, EBNF and regex grammars is not wired in yet)",
                            (int)opts->format);
    gm_grammar *g = grammar_new(opts);
    if (!g)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a grammar");
    gm_status st = path ? gm_grammar_load_file(&g->mem, path, opts, &g->cfg, err)
                        : gm_grammar_load(&g->mem, name, text, len, opts, &g->cfg, err);
    if (st == GM_OK)
        st = build(g, opts, err);
    if (st != GM_OK) {
        grammar_free(g);
        return st;
    }
    *out = g;
    return GM_OK;
}

gm_status gm_grammar_create(const char *text, size_t len, const char *name,
                            const gm_grammar_options *opts, gm_grammar **out, gm_error *err)
{
    if (!text)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_create: text is NULL");
    return create(text, len, name, NULL, opts, out, err);
}

gm_status gm_grammar_create_from_file(const char *path, const gm_grammar_options *opts,
                                      gm_grammar **out, gm_error *err)
{
    if (!path)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_create_from_file: path is NULL");
    return create(NULL, 0, NULL, path, opts, out, err);
}

gm_status gm_grammar_create_bundled(const char *name, const gm_grammar_options *opts,
                                    gm_grammar **out, gm_error *err)
{
    if (!name)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_create_bundled: name is NULL");
    size_t len;
    const char *text = gm_bundled_grammar(name, &len);
    if (!text)
        return gm_error_set(err, GM_ERR_ARGUMENT, "no bundled grammar is named '%s'", name);
    char label[96];
    snprintf(label, sizeof label, "<bundled>/%s.lark", name);
    return create(text, len, label, NULL, opts, out, err);
}

gm_grammar *gm_grammar_retain(gm_grammar *g)
{
    if (g)
        atomic_fetch_add(&g->refs, 1);
    return g;
}

void gm_grammar_destroy(gm_grammar *g)
{
    if (g && atomic_fetch_sub(&g->refs, 1) == 1)
        grammar_free(g);
}

gm_engine gm_grammar_engine(const gm_grammar *g) { return g ? g->engine : GM_ENGINE_LALR; }
