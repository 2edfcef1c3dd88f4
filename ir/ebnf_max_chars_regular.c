/*
 * note [max_chars on regular bodies]
 * note [rule max_chars] (ebnf_max_chars.c) gives r[max_chars=n] the strings
 * w of the body's language R none of whose proper prefixes of n characters
 * or more is in R. Where R is regular (no special token, no free text, no
 * recursive rule: ir_nfa.h) that language is built here exactly, whatever
 * the body's shape (a sequence holding other rules, Substring(...), ...):
 * the subset automaton of R's NFA times a count of the characters read,
 * saturated at n; a state that has n characters or more and is accepting
 * ends the occurrence, so it has no way on. Characters are counted at the
 * bytes that start one (not 10xxxxxx), as literal_chars does. The product
 * is trimmed (every state can still end) and written back into the IR as
 * one rule per state (`s ::= "" | %[bytes] t | ...`, right-linear: the
 * engine builds such a cycle as a loop, note [tail calls]); r's body
 * becomes a reference to the start state's rule. The printer writes r's
 * body as written and not the state rules, so that printed text parses
 * back to the same build (gm_ebnf_print's fixed point). More than
 * MAX_PRODUCT_STATES states is GM_ERR_LIMIT naming the rule.
 *
 * Rules are bounded callees first (gm_ebnf_limit_chars_all in
 * ebnf_max_chars.c), so that a bounded rule used inside another's body
 * counts with its own bound, as XGrammar nests budgets.
 */
#include "ir/ebnf_max_chars_regular.h"

#include <string.h>

#include "base/hash.h"
#include "base/vec.h"
#include "ir/ir_nfa.h"

#define MAX_PRODUCT_STATES (1u << 15)

typedef struct pstate {
    gm_irnfa_set set;
    uint32_t chars;     /* characters read, saturated at n */
    uint32_t pad;
} pstate;

typedef struct pedge {
    uint32_t from, to;
    uint8_t byte;
} pedge;

static gm_status irnfa_status(const gm_irnfa *a, const char **why)
{
    switch (a->fail) {
    case GM_IRNFA_NOMEM:
        return GM_ERR_NOMEM;
    case GM_IRNFA_BIG:
        *why = "max_chars on a body whose automaton has more than 256 states (before the count) "
               "is not supported";
        return GM_ERR_LIMIT;
    case GM_IRNFA_TOKEN:
        *why = "max_chars on a body that holds a special token and strings longer than the "
               "bound is not supported";
        return GM_ERR_UNSUPPORTED;
    case GM_IRNFA_NESTED:
        *why = "max_chars on a body that uses a rule with a lookahead assertion is not supported";
        return GM_ERR_UNSUPPORTED;
    case GM_IRNFA_DEPTH:
        *why = "max_chars on a body nested too deep";
        return GM_ERR_LIMIT;
    default:
        *why = "max_chars is supported on a rule whose body is a regular language (no recursive "
               "rule, no free text) or a repetition of single characters, or holds no string "
               "longer than the bound";
        return GM_ERR_UNSUPPORTED;
    }
}

gm_status gm_ebnf_limit_chars_regular(gm_ebnf *g, uint32_t r, const char **why)
{
    gm_mem *m = g->mem;
    uint32_t n = g->rules[r].max_chars;
    gm_irnfa a;
    if (gm_irnfa_build(m, g, g->rules[r].body, &a))
        return irnfa_status(&a, why);
    gm_status st = GM_OK;
    gm_intern seen;
    gm_intern_init(&seen, m);
    GM_VEC(pstate) states = {0};
    GM_VEC(pedge) edges = {0};
    uint8_t *live = NULL;
    uint32_t *rid = NULL, *rev_off = NULL, *rev = NULL, *stack = NULL;
    pstate s0;
    memset(&s0, 0, sizeof s0);
    s0.set = a.start;
    uint32_t id;
    int added;
    if (gm_intern_put(&seen, &s0, sizeof s0, &id, &added) || gm_vec_push(m, &states, s0))
        goto nomem;
    for (size_t i = 0; i < states.n; i++) {
        pstate cur = states.v[i];
        if (cur.chars >= n && gm_irnfa_has(&cur.set, a.final))
            continue; /* the occurrence ends here */
        for (uint32_t b = 0; b < 256; b++) {
            pstate nx;
            memset(&nx, 0, sizeof nx);
            nx.set = gm_irnfa_step(&a, &cur.set, (uint8_t)b);
            if (gm_irnfa_empty(&nx.set))
                continue;
            nx.chars = cur.chars + ((b & 0xC0) != 0x80);
            if (nx.chars > n)
                nx.chars = n;
            if (gm_intern_put(&seen, &nx, sizeof nx, &id, &added))
                goto nomem;
            if (added) {
                if (states.n >= MAX_PRODUCT_STATES) {
                    *why = "max_chars: the body bounded to the count needs more than 32768 "
                           "automaton states";
                    st = GM_ERR_LIMIT;
                    goto done;
                }
                if (gm_vec_push(m, &states, nx))
                    goto nomem;
            }
            pedge e = {(uint32_t)i, id, (uint8_t)b};
            if (gm_vec_push(m, &edges, e))
                goto nomem;
        }
    }
    /* trim: the states from which an accepting state is reachable */
    size_t ns = states.n;
    live = gm_mem_calloc(m, ns, 1);
    rid = gm_mem_calloc(m, ns, sizeof *rid);
    rev_off = gm_mem_calloc(m, ns + 1, sizeof *rev_off);
    rev = gm_mem_calloc(m, edges.n + 1, sizeof *rev);
    stack = gm_mem_calloc(m, ns + 1, sizeof *stack);
    if (!live || !rid || !rev_off || !rev || !stack)
        goto nomem;
    for (size_t j = 0; j < edges.n; j++)
        rev_off[edges.v[j].to + 1]++;
    for (size_t i = 0; i < ns; i++)
        rev_off[i + 1] += rev_off[i];
    {
        uint32_t *fill = rid; /* borrowed as cursors, before rid is filled */
        memcpy(fill, rev_off, ns * sizeof *fill);
        for (size_t j = 0; j < edges.n; j++)
            rev[fill[edges.v[j].to]++] = edges.v[j].from;
    }
    size_t sp = 0;
    for (size_t i = 0; i < ns; i++)
        if (gm_irnfa_has(&states.v[i].set, a.final)) {
            live[i] = 1;
            stack[sp++] = (uint32_t)i;
        }
    while (sp) {
        uint32_t x = stack[--sp];
        for (uint32_t j = rev_off[x]; j < rev_off[x + 1]; j++)
            if (!live[rev[j]]) {
                live[rev[j]] = 1;
                stack[sp++] = rev[j];
            }
    }
    if (!live[0]) {
        uint32_t nothing = gm_ebnf_add_nothing(g);
        if (nothing == GM_EX_NONE)
            goto nomem;
        g->rules[r].body = nothing;
        goto done;
    }
    /* one rule per live state; edges are sorted by source, then byte */
    char hint[96];
    size_t nl = strlen(g->rules[r].name);
    if (nl > 80)
        nl = 80;
    memcpy(hint, g->rules[r].name, nl);
    memcpy(hint + nl, "_chars", 7);
    for (size_t i = 0; i < ns; i++) {
        rid[i] = GM_EX_NONE;
        if (live[i] && (rid[i] = gm_ebnf_fresh_rule(g, hint)) == GM_EX_NONE)
            goto nomem;
    }
    size_t j = 0;
    for (size_t i = 0; i < ns; i++) {
        GM_VEC(uint32_t) alts = {0};
        int fail = 0;
        if (live[i] && gm_irnfa_has(&states.v[i].set, a.final))
            fail |= gm_vec_push(m, &alts, gm_ebnf_add_empty(g));
        size_t from = j;
        while (j < edges.n && edges.v[j].from == i)
            j++;
        /* the bytes of each live target, in order of first byte */
        uint32_t tg[256], nt = 0;
        uint32_t (*tbits)[8] = NULL;
        if (live[i] && j > from && !(tbits = gm_mem_calloc(m, j - from, sizeof *tbits)))
            fail = 1;
        for (size_t k = from; k < j && tbits; k++) {
            uint32_t t = edges.v[k].to, x = 0;
            if (!live[t])
                continue;
            while (x < nt && tg[x] != t)
                x++;
            if (x == nt)
                tg[nt++] = t;
            tbits[x][edges.v[k].byte >> 5] |= 1u << (edges.v[k].byte & 31);
        }
        for (uint32_t x = 0; x < nt && !fail; x++) {
            uint32_t seq[2] = {gm_ebnf_add_byteset(g, tbits[x]), gm_ebnf_add_ref(g, rid[tg[x]])};
            uint32_t e = seq[0] == GM_EX_NONE || seq[1] == GM_EX_NONE ? GM_EX_NONE
                                                                      : gm_ebnf_add_seq(g, seq, 2);
            fail |= e == GM_EX_NONE || gm_vec_push(m, &alts, e);
        }
        gm_mem_free(m, tbits);
        if (live[i] && !fail) {
            for (size_t k = 0; k < alts.n; k++)
                fail |= alts.v[k] == GM_EX_NONE;
            uint32_t body = fail ? GM_EX_NONE : gm_ebnf_add_alt(g, alts.v, alts.n);
            fail |= body == GM_EX_NONE;
            if (!fail) {
                g->rules[rid[i]].body = body;
                g->rules[rid[i]].loc = g->rules[r].loc;
            }
        }
        gm_vec_free(m, &alts);
        if (fail)
            goto nomem;
    }
    uint32_t start = gm_ebnf_add_ref(g, rid[0]);
    if (start == GM_EX_NONE)
        goto nomem;
    for (size_t i = 0; i < ns; i++)
        if (live[i])
            g->rules[rid[i]].chars_helper = 1;
    /* printed as written, which parses back to this same build: a fixed point */
    g->rules[r].chars_src = g->rules[r].body;
    g->rules[r].body = start;
    goto done;
nomem:
    st = GM_ERR_NOMEM;
done:
    gm_irnfa_free(m, &a);
    gm_intern_free(&seen);
    gm_vec_free(m, &states);
    gm_vec_free(m, &edges);
    gm_mem_free(m, live);
    gm_mem_free(m, rid);
    gm_mem_free(m, rev_off);
    gm_mem_free(m, rev);
    gm_mem_free(m, stack);
    return st;
}
