/*
 * A regex as grammar IR (ir/ebnf_parse.h): the lexer's regex parser
 * (lexer/regex.h, Python re syntax) builds its AST, which is walked into
 * IR nodes: characters and raw bytes of a concatenation become one
 * literal, sets become code point sets, and concatenation, alternation
 * and counted repetition map one to one. No automaton is built here; the
 * engine compiles the IR like any grammar.
 */
#include <string.h>

#include "ir/ebnf_parse.h"
#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "lexer/utf8_ranges.h"

typedef struct rx_walk {
    gm_ebnf *g;
    const gm_regex *re;
    uint32_t *memo;       /* [re->nnodes] IR node of each AST node, GM_EX_NONE until built */
    uint8_t *lit;         /* literal bytes being gathered */
    size_t nlit, lit_cap;
    bool json;            /* GM_EBNF_RE_JSON_STRING: no '"', '\\' or control character */
    bool lit_bad;         /* the literal being gathered holds one of those */
} rx_walk;

/* Whether code point cp is left out under GM_EBNF_RE_JSON_STRING. */
static bool json_forbidden(uint32_t cp)
{
    return cp < 0x20 || cp == '"' || cp == '\\';
}

static uint32_t build(rx_walk *w, uint32_t node);

/* Whether an AST node is one literal character or byte (joined into a BYTES run). */
static bool literal_unit(const gm_rx_node *n)
{
    return n->kind == GM_RX_BYTE || (n->kind == GM_RX_CHAR && !(n->cp >= 0xD800 && n->cp <= 0xDFFF));
}

static bool lit_push(rx_walk *w, const gm_rx_node *n)
{
    uint8_t u[4];
    int k = 1;
    if (w->json && json_forbidden(n->cp))
        w->lit_bad = true;
    if (n->kind == GM_RX_BYTE)
        u[0] = (uint8_t)n->cp;
    else
        k = gm_utf8_encode_char(n->cp, u);
    if (w->nlit + (size_t)k > w->lit_cap) {
        size_t cap = w->lit_cap ? w->lit_cap * 2 : 32;
        while (cap < w->nlit + (size_t)k)
            cap *= 2;
        uint8_t *p = gm_mem_realloc(w->g->mem, w->lit, cap);
        if (!p)
            return false;
        w->lit = p;
        w->lit_cap = cap;
    }
    memcpy(w->lit + w->nlit, u, (size_t)k);
    w->nlit += (size_t)k;
    return true;
}

static uint32_t build_concat(rx_walk *w, const gm_rx_node *n)
{
    gm_mem *m = w->g->mem;
    uint32_t *ids = gm_mem_alloc(m, (n->count ? n->count : 1) * sizeof *ids);
    if (!ids)
        return GM_EX_NONE;
    size_t nids = 0;
    uint32_t id = GM_EX_NONE;
    for (uint32_t i = 0; i < n->count;) {
        const gm_rx_node *k = &w->re->nodes[w->re->kids[n->first + i]];
        if (literal_unit(k)) {
            w->nlit = 0;
            w->lit_bad = false;
            while (i < n->count && literal_unit(&w->re->nodes[w->re->kids[n->first + i]])) {
                if (!lit_push(w, &w->re->nodes[w->re->kids[n->first + i]]))
                    goto out;
                i++;
            }
            id = w->lit_bad ? gm_ebnf_add_nothing(w->g) : gm_ebnf_add_bytes(w->g, w->lit, w->nlit);
        } else {
            id = build(w, w->re->kids[n->first + i]);
            i++;
        }
        if (id == GM_EX_NONE)
            goto out;
        ids[nids++] = id;
    }
    id = gm_ebnf_add_seq(w->g, ids, nids);
out:
    gm_mem_free(m, ids);
    return id;
}

/* s less the characters json_forbidden names: s = not(not s + them). */
static int remove_json_forbidden(gm_mem *m, gm_cpset *s)
{
    return gm_cpset_negate(m, s) || gm_cpset_add_range(m, s, 0, 0x1f) ||
           gm_cpset_add_range(m, s, '"', '"') || gm_cpset_add_range(m, s, '\\', '\\') ||
           gm_cpset_negate(m, s);
}

static uint32_t build(rx_walk *w, uint32_t node)
{
    if (w->memo[node] != GM_EX_NONE)
        return w->memo[node];
    const gm_rx_node *n = &w->re->nodes[node];
    gm_ebnf *g = w->g;
    uint32_t id = GM_EX_NONE;
    switch (n->kind) {
    case GM_RX_EMPTY: id = gm_ebnf_add_empty(g); break;
    case GM_RX_CHAR:
    case GM_RX_BYTE:
        if (!literal_unit(n)) {
            id = gm_ebnf_add_nothing(g); /* a surrogate: no UTF-8 text holds it */
            break;
        }
        w->nlit = 0;
        w->lit_bad = false;
        id = !lit_push(w, n) ? GM_EX_NONE
             : w->lit_bad    ? gm_ebnf_add_nothing(g)
                             : gm_ebnf_add_bytes(g, w->lit, w->nlit);
        break;
    case GM_RX_SET: {
        gm_cpset s = {0};
        if (gm_cpset_copy(g->mem, &s, &w->re->sets[n->set]) ||
            (w->json && remove_json_forbidden(g->mem, &s))) {
            gm_cpset_free(g->mem, &s);
            break;
        }
        id = gm_ebnf_add_set(g, &s);
        break;
    }
    case GM_RX_CONCAT: id = build_concat(w, n); break;
    case GM_RX_ALT: {
        uint32_t *ids = gm_mem_alloc(g->mem, (n->count ? n->count : 1) * sizeof *ids);
        if (!ids)
            break;
        uint32_t i = 0;
        for (; i < n->count; i++)
            if ((ids[i] = build(w, w->re->kids[n->first + i])) == GM_EX_NONE)
                break;
        if (i == n->count)
            id = gm_ebnf_add_alt(g, ids, n->count);
        gm_mem_free(g->mem, ids);
        break;
    }
    case GM_RX_REPEAT: {
        uint32_t k = build(w, w->re->kids[n->first]);
        if (k != GM_EX_NONE)
            id = gm_ebnf_add_repeat(g, k, n->min, n->max == GM_RX_INF ? GM_EX_INF : n->max);
        break;
    }
    case GM_RX_LOOK: break; /* never in a finished AST (lexer/regex.h) */
    }
    w->memo[node] = id;
    return id;
}

gm_status gm_ebnf_add_regex(gm_ebnf *g, const char *pattern, size_t len, unsigned flags,
                            const gm_limits *limits, uint32_t *node, gm_error *err)
{
    gm_mem *m = g->mem;
    gm_uclass uc;
    gm_uclass_init(&uc, m);
    gm_regex re;
    gm_regex_init(&re, m);
    *node = GM_EX_NONE;
    /* XGrammar's regex (lexer/regex_parse.c note [xgrammar regex]); a ^ that begins the
       pattern and a $ that ends it hold wherever the whole text is matched, as here */
    size_t lead = len && pattern[0] == '^';
    size_t trail = 0;
    if (len > lead && pattern[len - 1] == '$') {
        size_t k = 0;
        while (k + 1 < len - lead && pattern[len - 2 - k] == '\\')
            k++;
        trail = k % 2 == 0;
    }
    /* The default repetition limit guards the lexer's DFAs, which unroll counts; the
       engine keeps a count here as a counter (note [repetition rules] in earley/fsm.h),
       so under the default a count may go up to the IR's own bound, as in EBNF (XGrammar's
       a{2,50000}). A limit set to anything else is kept. */
    gm_limits lim, dflt;
    gm_limits_init_defaults(&dflt);
    gm_limits_resolve(&lim, limits);
    if (lim.max_regex_repeat == dflt.max_regex_repeat)
        lim.max_regex_repeat = GM_EBNF_MAX_REPEAT;
    gm_status st = gm_regex_parse(&re, &uc, pattern + lead, len - lead - trail,
                                  (flags & ~(unsigned)(GM_RE_LARK_MATCH | GM_EBNF_RE_JSON_STRING)) |
                                      GM_RE_XGRAMMAR,
                                  &lim, err);
    if (st != GM_OK && err && err->column)
        err->column += (uint32_t)lead;
    if (st == GM_OK) {
        rx_walk w = {.g = g, .re = &re, .json = (flags & GM_EBNF_RE_JSON_STRING) != 0};
        w.memo = gm_mem_alloc(m, (re.nnodes ? re.nnodes : 1) * sizeof *w.memo);
        if (w.memo) {
            memset(w.memo, 0xff, re.nnodes * sizeof *w.memo);
            *node = build(&w, re.root);
        }
        gm_mem_free(m, w.memo);
        gm_mem_free(m, w.lit);
        if (*node == GM_EX_NONE)
            st = gm_mem_fail(m, err, "building a regex grammar");
    }
    gm_regex_free(&re);
    gm_uclass_free(&uc);
    return st;
}

gm_status gm_ebnf_from_regex(gm_ebnf *g, const char *file, const char *pattern, size_t len,
                             unsigned flags, const gm_grammar_options *opts, gm_error *err)
{
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    const char *name = file ? file : "<regex>";
    if (len > lim.max_input_bytes)
        return gm_error_set_file(err, GM_ERR_LIMIT, name,
                                 "the regex has %zu bytes, more than the limit of %u", len,
                                 lim.max_input_bytes);
    const char *fname = gm_ebnf_file(g, name);
    uint32_t r = gm_ebnf_rule_get(g, "root", 4);
    if (!fname || r == GM_EX_NONE)
        return gm_mem_fail(g->mem, err, "building a regex grammar");
    uint32_t node;
    gm_error rerr;
    gm_error_clear(&rerr);
    gm_status st = gm_ebnf_add_regex(g, pattern, len, flags, &lim, &node, &rerr);
    if (st == GM_ERR_NOMEM) {
        if (err)
            *err = rerr;
        return st;
    }
    if (st) {
        /* a regex is one line of text: locate the error at its column, with a caret */
        gm_srcloc loc = {fname, 1, rerr.column ? rerr.column : 1};
        if (memchr(pattern, '\n', len))
            loc = gm_srcloc_of_offset(fname, pattern, len, rerr.column ? rerr.column - 1 : 0);
        return gm_error_set_at(err, st, loc, pattern, len, "%s", rerr.message);
    }
    g->rules[r].body = node;
    g->rules[r].loc = (gm_srcloc){fname, 1, 1};
    g->root = r;
    return gm_ebnf_check(g, opts, err);
}
