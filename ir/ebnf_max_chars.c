/*
 * note [rule max_chars]
 * XGrammar's name[max_chars=n] bounds each occurrence of the rule to n
 * characters (code points; a special token counts none: it is atomic, as
 * XGrammar's "best effort"): where the occurrence's text has n characters
 * or more and the rule could end there, it ends there; where it could not,
 * it goes on to the first place where it can. As a language, with R the
 * body's: the strings w of R none of whose proper prefixes of n characters
 * or more is in R. Unlike a token budget this depends on the text alone,
 * so it is a rewrite of the body, done once when the grammar is parsed:
 *   - a body that holds no string of more than n characters is unchanged;
 *   - X{lo,hi} with X one character (a class, a one-character literal, an
 *     alternation of those), reached through rules that are only a
 *     reference, becomes X{lo, max(lo, min(hi, n))} (the engine counts
 *     large bounds without states);
 *   - any other regular body is built exactly (note [max_chars on regular
 *     bodies] in ebnf_max_chars_regular.c);
 *   - any other body is GM_ERR_UNSUPPORTED naming the rule, never compiled
 *     without its bound. That covers free text (`TEXT: /(\n|.)*\/`), a
 *     class repeated, and short fixed forms: what XGrammar's examples use.
 * The attribute stays on the rule for printing; the rewritten body is its
 * own fixed point, so printed text parses back to the same grammar.
 */
#include "ir/ebnf_max_chars.h"
#include "ir/ebnf_max_chars_regular.h"

#include "base/utf8.h"

/* Characters of a literal (its code points; bytes that are not UTF-8 count one each). */
static uint64_t literal_chars(const gm_ebnf *g, const gm_ex *x)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < x->count; i++)
        n += (g->bytes[x->first + i] & 0xC0) != 0x80;
    return n;
}

#define MANY UINT64_MAX

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > MANY - b ? MANY : a + b; }

/*
 * The most characters of a string of node's language (MANY: unbounded or
 * too deep to tell); seen[r] marks the rules on the walk (recursion: MANY).
 */
static uint64_t most_chars(const gm_ebnf *g, uint32_t node, uint8_t *seen, uint32_t depth)
{
    const gm_ex *x = &g->nodes[node];
    if (depth > GM_EBNF_MAX_DEPTH)
        return MANY;
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_EMPTY:
    case GM_EX_NOTHING:
    case GM_EX_TOKEN:
        return 0;
    case GM_EX_BYTES:
        return literal_chars(g, x);
    case GM_EX_SET:
    case GM_EX_BYTESET:
        return 1;
    case GM_EX_UNTIL:
        return MANY;
    case GM_EX_REF: {
        const gm_ebnf_rule *r = &g->rules[x->arg];
        if (seen[x->arg] || r->body == GM_EX_NONE)
            return MANY;
        seen[x->arg] = 1;
        uint64_t n = most_chars(g, r->body, seen, depth + 1);
        seen[x->arg] = 0;
        return n;
    }
    case GM_EX_SEQ:
    case GM_EX_ALT: {
        uint64_t n = 0;
        for (uint32_t i = 0; i < x->count; i++) {
            uint64_t k = most_chars(g, g->kids[x->first + i], seen, depth + 1);
            n = x->kind == GM_EX_SEQ ? add_sat(n, k) : (k > n ? k : n);
        }
        return n;
    }
    case GM_EX_REPEAT: {
        uint64_t k = most_chars(g, g->kids[x->first], seen, depth + 1);
        if (k == 0 || x->max == 0) /* x{0}: only the empty string */
            return 0;
        if (x->max == GM_EX_INF || k == MANY)
            return MANY;
        return k > MANY / x->max ? MANY : k * x->max;
    }
    }
    return MANY;
}

/* Whether every string of node's language is exactly one character. */
static bool one_char(const gm_ebnf *g, uint32_t node, uint32_t depth)
{
    const gm_ex *x = &g->nodes[node];
    if (depth > 64)
        return false;
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_SET:
        return true;
    case GM_EX_BYTES: {
        uint32_t cp;
        return x->count > 0 &&
               gm_utf8_decode(g->bytes + x->first, x->count, &cp) == x->count;
    }
    case GM_EX_ALT:
        for (uint32_t i = 0; i < x->count; i++)
            if (!one_char(g, g->kids[x->first + i], depth + 1))
                return false;
        return true;
    default:
        return false;
    }
}

gm_status gm_ebnf_limit_chars(gm_ebnf *g, uint32_t r, const char **why)
{
    uint32_t n = g->rules[r].max_chars, body = g->rules[r].body;
    *why = NULL;
    uint8_t *seen = gm_mem_calloc(g->mem, g->nrules, 1);
    if (!seen)
        return GM_ERR_NOMEM;
    seen[r] = 1;
    uint64_t most = most_chars(g, body, seen, 0);
    gm_mem_free(g->mem, seen);
    if (most <= n)
        return GM_OK;
    /* through rules that are only a reference (not recursive: at most nrules steps) */
    uint32_t node = body;
    for (uint32_t steps = 0; g->nodes[node].kind == GM_EX_REF && steps < g->nrules; steps++) {
        const gm_ebnf_rule *t = &g->rules[g->nodes[node].arg];
        if (t->body == GM_EX_NONE)
            break;
        node = t->body;
    }
    const gm_ex *x = &g->nodes[node];
    if (x->kind != GM_EX_REPEAT || !one_char(g, g->kids[x->first], 0))
        return gm_ebnf_limit_chars_regular(g, r, why); /* note [max_chars on regular bodies] */
    uint32_t hi = x->max < n ? x->max : n;
    if (hi < x->min)
        hi = x->min;
    if (hi != GM_EX_INF && hi > GM_EBNF_MAX_REPEAT) {
        *why = "max_chars on a repetition is at most 1000000";
        return GM_ERR_LIMIT;
    }
    uint32_t id = gm_ebnf_add_repeat(g, g->kids[x->first], x->min, hi);
    if (id == GM_EX_NONE)
        return GM_ERR_NOMEM;
    g->rules[r].body = id;
    return GM_OK;
}

/* ---- callees first ------------------------------------------------------- */

/* Marks in reach[] the rules that node's expansion uses (a DAG walk, stamped). */
static int reach_rules(const gm_ebnf *g, uint32_t node, uint8_t *stamp, uint8_t *reach,
                       uint32_t *stack, size_t cap)
{
    size_t sp = 0;
    if (node == GM_EX_NONE || node >= g->nnodes)
        return 0;
    stack[sp++] = node;
    stamp[node] = 1;
    while (sp) {
        const gm_ex *x = &g->nodes[stack[--sp]];
        uint32_t kids[1];
        const uint32_t *k = NULL;
        uint32_t nk = 0;
        if (x->kind == GM_EX_REF) {
            if (reach[x->arg] || g->rules[x->arg].body == GM_EX_NONE)
                continue;
            reach[x->arg] = 1;
            kids[0] = g->rules[x->arg].body;
            k = kids;
            nk = 1;
        } else if (x->kind == GM_EX_SEQ || x->kind == GM_EX_ALT) {
            k = g->kids + x->first;
            nk = x->count;
        } else if (x->kind == GM_EX_REPEAT) {
            k = g->kids + x->first;
            nk = 1;
        }
        for (uint32_t i = 0; i < nk; i++)
            if (k[i] < g->nnodes && !stamp[k[i]]) {
                if (sp >= cap)
                    return -1;
                stamp[k[i]] = 1;
                stack[sp++] = k[i];
            }
    }
    return 0;
}

typedef struct order_ctx {
    gm_ebnf *g;
    uint8_t *done;        /* [ndone] bounded already (or on the way) */
    uint32_t ndone;
    uint32_t *bad;
    const char **why;
} order_ctx;

static gm_status limit_in_order(order_ctx *c, uint32_t r, uint32_t depth)
{
    gm_ebnf *g = c->g;
    if (r >= c->ndone || c->done[r])
        return GM_OK;
    c->done[r] = 1;
    if (depth > g->nrules)
        return GM_OK;
    /* the bounded rules r's body uses, bounded first */
    uint32_t nn = g->nnodes, nr = g->nrules;
    uint8_t *stamp = gm_mem_calloc(g->mem, nn ? nn : 1, 1);
    uint8_t *reach = gm_mem_calloc(g->mem, nr, 1);
    uint32_t *stack = gm_mem_calloc(g->mem, (size_t)nn + 1, sizeof *stack);
    gm_status st = GM_OK;
    if (!stamp || !reach || !stack || reach_rules(g, g->rules[r].body, stamp, reach, stack, nn + 1))
        st = GM_ERR_NOMEM;
    for (uint32_t q = 0; q < nr && st == GM_OK; q++)
        if (reach[q] && q != r && g->rules[q].max_chars != GM_EX_INF)
            st = limit_in_order(c, q, depth + 1);
    gm_mem_free(g->mem, stamp);
    gm_mem_free(g->mem, reach);
    gm_mem_free(g->mem, stack);
    if (st)
        return st;
    if ((st = gm_ebnf_limit_chars(g, r, c->why)) && st != GM_ERR_NOMEM)
        *c->bad = r;
    return st;
}

gm_status gm_ebnf_limit_chars_all(gm_ebnf *g, uint32_t *bad, const char **why)
{
    *bad = GM_EX_NONE;
    *why = NULL;
    uint32_t nr = g->nrules; /* the rules bounding adds are bounded already */
    uint8_t *done = gm_mem_calloc(g->mem, nr ? nr : 1, 1);
    if (!done)
        return GM_ERR_NOMEM;
    order_ctx c = {g, done, nr, bad, why};
    gm_status st = GM_OK;
    for (uint32_t r = 0; r < nr && st == GM_OK; r++)
        if (g->rules[r].max_chars != GM_EX_INF && g->rules[r].body != GM_EX_NONE)
            st = limit_in_order(&c, r, 0);
    gm_mem_free(g->mem, done);
    return st;
}
