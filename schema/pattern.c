/*
 * Compiled patterns of a schema (`pattern`, `patternProperties` keys,
 * format regexes), cached by text: the regex AST for grammars, and a
 * minimal DFA built on first use for matching constant strings (enum
 * members, property names) against them.
 */
#include <stdio.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "schema/ecma_regex.h"
#include "schema/internal.h"

struct sc_pattern {
    gm_regex re;
    gm_dfa dfa;       /* minimal DFA over UTF-8 bytes, label 0 = accepting */
    bool dfa_built;
};

gm_status sc_regex_dfa(gm_mem *m, const gm_regex *re, uint32_t root, const gm_limits *limits,
                       gm_dfa *min, gm_error *err)
{
    gm_regex view = *re; /* the lexer compiles re->root */
    view.root = root;
    return gm_regex_compile_ast(m, &view, limits, min, NULL, NULL, err);
}

sc_pattern *sc_pattern_get(sctx *c, uint32_t node, const char *kw, const char *text, size_t len,
                           unsigned flags)
{
    if (c->st != GM_OK)
        return NULL;
    gm_strbuf key;
    gm_strbuf_init(&key, c->mem);
    gm_strbuf_putc(&key, (char)('0' + (flags & GM_ECMA_WHOLE)));
    gm_strbuf_append(&key, text, len);
    if (key.failed) {
        gm_strbuf_free(&key);
        c->st = gm_mem_fail(c->mem, c->err, "a pattern");
        return NULL;
    }
    uint32_t id;
    int added;
    if (gm_intern_put(&c->pat_index, key.s, key.n, &id, &added)) {
        gm_strbuf_free(&key);
        c->st = gm_mem_fail(c->mem, c->err, "a pattern");
        return NULL;
    }
    gm_strbuf_free(&key);
    if (!added)
        return c->pats.v[id];
    sc_pattern *p = gm_mem_calloc(c->mem, 1, sizeof *p);
    if (!p || gm_vec_push(c->mem, &c->pats, p)) {
        gm_mem_free(c->mem, p);
        c->st = gm_mem_fail(c->mem, c->err, "a pattern");
        return NULL;
    }
    gm_regex_init(&p->re, c->mem);
    gm_error e;
    gm_error_clear(&e);
    unsigned relaxed = 0;
    gm_status st = gm_ecma_regex_parse(&p->re, text, len, flags | (c->opts.lenient ? GM_ECMA_LENIENT : 0),
                                       &c->opts.limits, &relaxed, &e);
    if (st != GM_OK) {
        c->pats.v[id] = NULL; /* the compile stops at this error anyway */
        gm_regex_free(&p->re);
        gm_mem_free(c->mem, p);
        sc_fail(c, st == GM_ERR_SYNTAX ? GM_ERR_GRAMMAR : st, node, kw, "the pattern '%.*s': %s at "
                "column %u", (int)(len > 200 ? 200 : len), text, e.message, e.column);
        return NULL;
    }
    if (relaxed) {
        char why[400];
        snprintf(why, sizeof why, "the pattern '%.*s' uses %s%s%s", (int)(len > 200 ? 200 : len), text,
                 relaxed & GM_ECMA_RELAXED_LOOKAROUND ? "lookarounds " : "",
                 relaxed & GM_ECMA_RELAXED_BOUNDARY ? "word boundaries " : "",
                 relaxed & GM_ECMA_RELAXED_BACKREF ? "back references " : "");
        sc_relax(c, node, kw, why);
    }
    return p;
}

gm_regex *sc_pattern_regex(sc_pattern *p)
{
    return &p->re;
}

int sc_pattern_match(sctx *c, uint32_t node, const char *kw, sc_pattern *p, const char *s,
                     size_t n)
{
    if (!p->dfa_built) {
        gm_error e;
        gm_status st = sc_regex_dfa(c->mem, &p->re, p->re.root, &c->opts.limits, &p->dfa, &e);
        if (st != GM_OK) {
            sc_fail(c, st, node, kw, "matching a constant against the pattern: %s", e.message);
            return -1;
        }
        p->dfa_built = true;
    }
    return gm_dfa_match(&p->dfa, (const uint8_t *)s, n) != GM_LEX_NONE;
}

void sc_patterns_free(sctx *c)
{
    for (size_t i = 0; i < c->pats.n; i++) {
        sc_pattern *p = c->pats.v[i];
        if (!p)
            continue;
        gm_regex_free(&p->re);
        if (p->dfa_built)
            gm_dfa_free(&p->dfa);
        gm_mem_free(c->mem, p);
    }
    gm_vec_free(c->mem, &c->pats);
    gm_intern_free(&c->pat_index);
}
