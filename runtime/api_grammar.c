/*
 * Public grammar objects, refcounted: Lark text -> cfg -> lexer + LALR(1)
 * tables; GBNF, EBNF or regex text -> grammar IR -> Earley rule automata.
 */
#include <stdio.h>
#include <string.h>

#include "ir/ebnf_parse.h"
#include "dispatch/ir_import.h"
#include "base/file.h"
#include "parser/bundled.h"
#include "parser/contextual.h"
#include "parser/grammar.h"
#include "runtime/blocks.h"
#include "runtime/objects.h"
#include "base/mapping.h"
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
    if (g->ir) {
        gm_ebnf_free(g->ir);
        gm_mem_free(&g->mem, g->ir);
    }
    gm_blocks_free(g);
    gm_mem_free(&g->mem, g->stag_src);
    gm_egrammar_destroy(g->eg);
    gm_ctx_lexers_destroy(g->ctx);
    gm_lr_table_destroy(g->lr);
    gm_lexer_destroy(g->lexer);
    if (!g->cfg) {
        /* Loaded from a compiled file: the layer's arrays are the grammar's own. */
        gm_mem_free(&g->mem, g->postlex.at);
        gm_mem_free(&g->mem, g->postlex.after);
        gm_mem_free(&g->mem, g->postlex.try_before);
        gm_mem_free(&g->mem, g->postlex.renamed);
        gm_mem_free(&g->mem, g->postlex.bracket);
    }
    gm_cfg_destroy(g->cfg);
    gm_realloc_fn fn = g->mem.fn;
    void *ud = g->mem.ud;
    gm_mapping *map = g->mem.mapping; /* note [mapped compiled files]: after the rest */
    fn(ud, g, 0);
    gm_mapping_release(map);
}

/* Whether the post-lexing layer names terminals only a contextual lexer can treat so. */
static bool needs_contextual(const gm_postlex *pl)
{
    if (pl->glued)
        return true;
    for (uint32_t t = 0; pl->nolex && t < pl->nterminals; t++)
        if (pl->nolex[t])
            return true;
    return false;
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
    if (st == GM_OK && opts && opts->lexer == GM_LEXER_CONTEXTUAL) {
        /* The lexers themselves are built on first use (note [lazy lexers]). */
        st = gm_ctx_lexers_create(&g->mem, g->cfg, g->lr, lo.conflicts == GM_CONFLICTS_LARK, &lim,
                                  &g->ctx, err);
    } else if (st == GM_OK && opts && opts->lexer != GM_LEXER_BASIC) {
        st = gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_options.lexer %d is not a lexer",
                          (int)opts->lexer);
    } else if (st == GM_OK && needs_contextual(&g->postlex)) {
        /* The basic lexer cannot honour them: it would lex "/" of a division
         * as a regular expression (javascript.lark), a wrong language. */
        st = gm_error_set(err, GM_ERR_UNSUPPORTED,
                          "the grammar's %%insert uses nolex or glued, which only the "
                          "contextual lexer honours: build it with GM_LEXER_CONTEXTUAL "
                          "(--lexer=contextual, lexer=\"contextual\")");
    }
    return st;
}

/* The format of a grammar text: opts->format, else by the file name's extension. */
static gm_grammar_format format_of(const char *name, const gm_grammar_options *opts)
{
    if (opts && opts->format != GM_FORMAT_AUTO)
        return opts->format;
    const char *dot = name ? strrchr(name, '.') : NULL;
    if (dot && !strchr(dot, '/')) {
        if (!strcmp(dot, ".gbnf"))
            return GM_FORMAT_GBNF;
        if (!strcmp(dot, ".ebnf"))
            return GM_FORMAT_EBNF;
        if (!strcmp(dot, ".regex"))
            return GM_FORMAT_REGEX;
    }
    return GM_FORMAT_LARK;
}

/* Compiles a checked grammar IR into g's Earley automata. */
static gm_status build_earley(gm_grammar *g, const gm_ebnf *src, const gm_grammar_options *opts,
                              gm_error *err)
{
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    g->engine = GM_ENGINE_EARLEY;
    gm_fcache *cache = opts && opts->cache ? opts->cache->rules : NULL;
    /* every caller had src checked with opts (gm_ebnf_parse, gm_ebnf_from_regex, and
       for gm_grammar_from_ebnf the compiler that made the IR) */
    gm_status st = gm_egrammar_build_checked(&g->mem, src, &lim, cache, &g->eg, err);
    if (st != GM_OK)
        return st;
    /* a copy of the IR, for gm_grammar_combine (api_combine.c) */
    g->ir = gm_mem_alloc(&g->mem, sizeof *g->ir);
    if (!g->ir)
        return gm_mem_fail(&g->mem, err, "a grammar's IR");
    gm_ebnf_init(g->ir, &g->mem);
    uint32_t ref;
    if ((st = gm_ebnf_import(g->ir, src, "", &ref, err)) != GM_OK)
        return st;
    g->ir->root = g->ir->nodes[ref].arg;
    return GM_OK;
}

/* GBNF, EBNF or regex text -> IR -> automata. */
static gm_status load_earley(gm_grammar *g, gm_grammar_format format, const char *name,
                             const char *text, size_t len, const gm_grammar_options *opts,
                             gm_error *err)
{
    gm_ebnf ir;
    gm_ebnf_init(&ir, &g->mem);
    gm_status st;
    if (format == GM_FORMAT_REGEX) {
        /* A regex file's trailing line break is not part of the pattern. */
        while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
            len--;
        st = gm_ebnf_from_regex(&ir, name, text, len, 0, opts, err);
    } else {
        st = gm_ebnf_parse(&ir, name, text, len,
                           format == GM_FORMAT_GBNF ? GM_EBNF_GBNF : GM_EBNF_XGRAMMAR, opts, err);
    }
    if (st == GM_OK)
        st = build_earley(g, &ir, opts, err);
    gm_ebnf_free(&ir);
    return st;
}

static gm_status create(const char *text, size_t len, const char *name, const char *path,
                        const gm_grammar_options *opts, gm_grammar **out, gm_error *err)
{
    if (!out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_create: out is NULL");
    *out = NULL;
    gm_grammar_format format = format_of(path ? path : name, opts);
    if (format < GM_FORMAT_AUTO || format > GM_FORMAT_REGEX)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_options.format %d is not a format",
                            (int)format);
    gm_grammar *g = grammar_new(opts);
    if (!g)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a grammar");
    gm_status st;
    if (format == GM_FORMAT_LARK) {
        st = path ? gm_grammar_load_file(&g->mem, path, opts, &g->cfg, err)
                  : gm_grammar_load(&g->mem, name, text, len, opts, &g->cfg, err);
        if (st == GM_OK)
            st = build(g, opts, err);
    } else if (path) {
        gm_limits lim;
        gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
        char *file_text = NULL;
        size_t file_len = 0;
        st = gm_file_read(&g->mem, path, lim.max_input_bytes, &file_text, &file_len, err);
        if (st == GM_OK)
            st = load_earley(g, format, path, file_text, file_len, opts, err);
        gm_mem_free(&g->mem, file_text);
    } else {
        st = load_earley(g, format, name, text, len, opts, err);
    }
    if (st != GM_OK) {
        grammar_free(g);
        return st;
    }
    *out = g;
    return GM_OK;
}

gm_status gm_grammar_from_ebnf(const gm_ebnf *src, const gm_grammar_options *opts,
                               gm_grammar **out, gm_error *err)
{
    if (!out || !src)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_grammar_from_ebnf: NULL argument");
    *out = NULL;
    gm_grammar *g = grammar_new(opts);
    if (!g)
        return gm_error_set(err, GM_ERR_NOMEM, "out of memory creating a grammar");
    gm_status st = build_earley(g, src, opts, err);
    if (st == GM_OK)
        st = gm_blocks_attach(g, opts, err);
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

/* ---- code blocks ---------------------------------------------------------------
   A TagDispatch grammar's code blocks hold bundled grammars (note [code blocks] in
   engine_blocks.c): the one place where making a grammar makes others, so it lives
   beside the grammar's own constructors and the composite engine only reads them. */

/* Reads one length-prefixed part of a block symbol's text. */
static bool take_part(const uint8_t **p, size_t *rem, uint8_t *dst, uint32_t *len)
{
    if (*rem < 1 || (*p)[0] > GM_STAG_MAX_FENCE || (size_t)(*p)[0] + 1 > *rem)
        return false;
    *len = (*p)[0];
    memcpy(dst, *p + 1, *len);
    *rem -= *len + 1;
    *p += *len + 1;
    return true;
}

gm_status gm_blocks_attach(gm_grammar *g, const gm_grammar_options *opts, gm_error *err)
{
    uint32_t ns = gm_egrammar_nsymbols(g->eg), n = 0;
    for (uint32_t s = 0; s < ns; s++) {
        size_t len;
        const uint8_t *t = gm_egrammar_symbol(g->eg, s, &len);
        n += len >= 2 && !memcmp(t, GM_ESYM_EXTERNAL, 2);
    }
    if (!n)
        return GM_OK;
    gm_gblocks *b = gm_mem_calloc(&g->mem, 1, sizeof *b);
    gm_block *v = b ? gm_mem_calloc(&g->mem, n, sizeof *v) : NULL;
    if (!v) {
        gm_mem_free(&g->mem, b);
        return gm_mem_fail(&g->mem, err, "code blocks");
    }
    b->v = v;
    g->blocks = b;
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    if (opts) {
        go.allocator = opts->allocator;
        go.limits = opts->limits;
    }
    for (uint32_t s = 0; s < ns; s++) {
        size_t len;
        const uint8_t *t = gm_egrammar_symbol(g->eg, s, &len);
        if (len < 2 || memcmp(t, GM_ESYM_EXTERNAL, 2))
            continue;
        gm_block *k = &v[b->n];
        const uint8_t *p = t + 2;
        size_t rem = len - 2;
        uint32_t nlen;
        if (!take_part(&p, &rem, (uint8_t *)k->name, &nlen) ||
            !take_part(&p, &rem, k->begin, &k->begin_len) ||
            !take_part(&p, &rem, k->end, &k->end_len) || rem || !k->begin_len || !k->end_len)
            return gm_error_set(err, GM_ERR_GRAMMAR, "a malformed code-block symbol");
        k->name[nlen] = 0;
        k->sym = s;
        for (uint32_t i = 0; i < b->n && !k->inner; i++)
            if (!strcmp(v[i].name, k->name))
                k->inner = gm_grammar_retain(v[i].inner);
        gm_status st = k->inner ? GM_OK : gm_grammar_create_bundled(k->name, &go, &k->inner, err);
        if (st == GM_ERR_UNSUPPORTED && !k->inner) {
            /* A language only the contextual lexer lexes right (javascript.lark's
             * %insert nolex/glued: `/` as division or a regex by parser state). */
            gm_grammar_options gc = go;
            gc.lexer = GM_LEXER_CONTEXTUAL;
            st = gm_grammar_create_bundled(k->name, &gc, &k->inner, err);
        }
        if (st != GM_OK)
            return st;
        b->n++;
    }
    return GM_OK;
}

void gm_blocks_free(gm_grammar *g)
{
    gm_gblocks *b = g->blocks;
    if (!b)
        return;
    for (uint32_t i = 0; i < b->n; i++)
        gm_grammar_destroy(b->v[i].inner);
    gm_mem_free(&g->mem, b->v);
    gm_mem_free(&g->mem, b);
    g->blocks = NULL;
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
