/*
 * note [implied lookaheads]
 * XGrammar's `R ::= body (= expr)` (note [lookahead assertions] in
 * ir/ebnf_parse.c): an occurrence of R that ends at position i of the
 * input x is allowed only where the rest x[i..] does not contradict expr,
 * that is, x[i..] begins with a string of L(expr) or is a prefix of one
 * (the end of the input satisfies an assertion not yet contradicted). This
 * is XGrammar's reading: its mask cache rejects a token whose bytes after
 * R's end leave L(expr)'s prefixes, and nothing checks the assertion at
 * the end of the input (its own JSON grammars put assertions on rules that
 * end the root). XGrammar writes assertions that its grammar already
 * guarantees (its lookahead analyzer derives them from the rule's uses),
 * as hints for its mask cache.
 *
 * gramask takes an assertion when it is implied, so that dropping it keeps
 * the language and the masks stay exact, and refuses the grammar
 * otherwise (GM_ERR_UNSUPPORTED naming the rule and a byte that may follow
 * it where the assertion fails): an assertion that restricts the language
 * would need every Earley item after R's end to carry the assertion's
 * state (and the mask cache to key on it), which the engine does not do.
 *
 * The check runs on the rule automata (fsm.h) with R kept as a rule of its
 * own (never inlined nor built in place, so each occurrence is a reference
 * edge): from the target of every edge over R, it walks what the input can
 * go on with, together with the set of states of expr's automaton (an NFA
 * of at most GM_IRNFA_MAX_STATES states, built here from the IR; references in
 * expr are expanded, so they must not be recursive). Entering a rule goes
 * to its start; completing a rule goes to the target of every edge over it
 * (every use, not only the one it was entered from) and, for the root, to
 * the end of the input. That over-approximates the continuations, so a
 * grammar passing the check has the assertion everywhere; a grammar where
 * the assertion holds only through the calling context may be refused
 * (the message says "may"). A walk stops where expr is complete (the
 * assertion holds) and fails where expr's state set becomes empty.
 */
#include "earley/lookahead.h"

#include <stdio.h>
#include <string.h>

#include "base/hash.h"
#include "base/vec.h"
#include "earley/fsm.h"
#include "ir/ir_nfa.h"

#define LA_MAX_VISITS (1u << 20)

typedef gm_irnfa_set mset;

/* ---- the walk ------------------------------------------------------------ */

typedef struct walk_key {
    uint32_t state;
    uint32_t pad;
    mset set;
} walk_key;

typedef struct walker {
    gm_mem *m;
    const gm_egrammar *g;
    const gm_irnfa *d;
    const uint32_t *ret_off, *ret; /* targets of the edges over each rule */
    gm_intern seen;
    GM_VEC(uint32_t) queue;
} walker;

/* 0 added or seen, -1 out of memory, -2 too many. */
static int walk_push(walker *w, uint32_t state, const mset *set)
{
    walk_key k;
    memset(&k, 0, sizeof k);
    k.state = state;
    k.set = *set;
    uint32_t id;
    int added = 0;
    if (gm_intern_put(&w->seen, &k, sizeof k, &id, &added))
        return -1;
    if (!added)
        return 0;
    if (w->seen.count > LA_MAX_VISITS)
        return -2;
    return gm_vec_push(w->m, &w->queue, id) ? -1 : 0;
}

static void byte_text(uint32_t b, char out[8])
{
    if (b == '\'' || b == '\\')
        snprintf(out, 8, "'\\%c'", (char)b);
    else if (b >= 0x20 && b < 0x7f)
        snprintf(out, 8, "'%c'", (char)b);
    else
        snprintf(out, 8, "0x%02X", b);
}

static const char *frule_name(const gm_egrammar *g, uint32_t r)
{
    return g->names + g->rules[r].name;
}

/* Walks from every end of out rule `rule`: GM_OK, or the error. */
static gm_status walk(walker *w, const gm_ebnf *src, uint32_t src_rule, uint32_t rule,
                      gm_error *err)
{
    const gm_egrammar *g = w->g;
    const gm_irnfa *d = w->d;
    int rc = 0;
    for (uint32_t t = w->ret_off[rule]; t < w->ret_off[rule + 1] && !rc; t++)
        rc = walk_push(w, w->ret[t], &d->start);
    for (size_t qi = 0; qi < w->queue.n && !rc; qi++) {
        size_t klen;
        walk_key k;
        memcpy(&k, gm_intern_key(&w->seen, w->queue.v[qi], &klen), sizeof k);
        uint32_t s = k.state, p = g->state_rule[s];
        uint8_t f = g->state_flags[s];
        const gm_frule *pr = &g->rules[p];
        if ((f & GM_FS_ACCEPT) || (pr->repeat && (f & GM_FS_REP_START)))
            for (uint32_t t = w->ret_off[p]; t < w->ret_off[p + 1] && !rc; t++)
                rc = walk_push(w, w->ret[t], &k.set);
        if (!rc && pr->repeat && (f & GM_FS_ITER_END))
            rc = walk_push(w, pr->start, &k.set);
        for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1] && !rc; j++)
            rc = walk_push(w, g->rules[g->refs[j].sym].start, &k.set);
        if (rc)
            break;
        if (g->tok_off[s] != g->tok_off[s + 1])
            return gm_error_set_at(err, GM_ERR_UNSUPPORTED, src->rules[src_rule].loc, NULL, 0,
                                   "rule %s: its lookahead assertion (= ...) is not implied by "
                                   "the grammar: the rule may be followed by a special token "
                                   "(read by rule %s), which the assertion does not allow; "
                                   "gramask takes a lookahead assertion only where the text "
                                   "after the rule always satisfies it (note [implied "
                                   "lookaheads])",
                                   src->rules[src_rule].name, frule_name(g, p));
        for (uint32_t b = 0; b < 256 && !rc; b++) {
            uint32_t t = gm_fsm_next(g, s, (uint8_t)b);
            if (t == GM_FSM_NONE)
                continue;
            mset next = gm_irnfa_step(d, &k.set, (uint8_t)b);
            if (gm_irnfa_has(&next, d->final))
                continue; /* the assertion holds on this path */
            if (gm_irnfa_empty(&next)) {
                char bt[8];
                byte_text(b, bt);
                return gm_error_set_at(err, GM_ERR_UNSUPPORTED, src->rules[src_rule].loc, NULL,
                                       0,
                                       "rule %s: its lookahead assertion (= ...) is not implied "
                                       "by the grammar: the text after the rule may go on with "
                                       "byte %s (read by rule %s), which the assertion does not "
                                       "allow; gramask takes a lookahead assertion only where "
                                       "the text after the rule always satisfies it (note "
                                       "[implied lookaheads])",
                                       src->rules[src_rule].name, bt, frule_name(g, p));
            }
            rc = walk_push(w, t, &next);
        }
    }
    if (rc == -2)
        return gm_error_set_at(err, GM_ERR_LIMIT, src->rules[src_rule].loc, NULL, 0,
                               "rule %s: checking its lookahead assertion visits more than %u "
                               "(state, assertion state) pairs",
                               src->rules[src_rule].name, LA_MAX_VISITS);
    if (rc)
        return gm_mem_fail(w->m, err, "the lookahead check");
    return GM_OK;
}

static gm_status build_error(const gm_ebnf *src, uint32_t r, const gm_irnfa *a, gm_mem *m,
                             gm_error *err)
{
    const char *name = src->rules[r].name;
    gm_srcloc loc = src->rules[r].loc;
    switch (a->fail) {
    case GM_IRNFA_BIG:
        return gm_error_set_at(err, GM_ERR_LIMIT, loc, NULL, 0,
                               "rule %s: its lookahead assertion needs more than %u automaton "
                               "states", name, GM_IRNFA_MAX_STATES);
    case GM_IRNFA_RECURSIVE:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: its lookahead assertion refers to rule %s "
                               "recursively; an assertion must be a regular language",
                               name, src->rules[a->bad_rule].name);
    case GM_IRNFA_NESTED:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: its lookahead assertion refers to rule %s, which has "
                               "a lookahead assertion itself", name,
                               src->rules[a->bad_rule].name);
    case GM_IRNFA_TOKEN:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: a special token in a lookahead assertion is not "
                               "supported", name);
    case GM_IRNFA_UNTIL:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: free text (TagDispatch, Until) in a lookahead "
                               "assertion is not supported", name);
    case GM_IRNFA_DEPTH:
        return gm_error_set_at(err, GM_ERR_LIMIT, loc, NULL, 0,
                               "rule %s: its lookahead assertion is nested deeper than %u",
                               name, GM_EBNF_MAX_DEPTH);
    default:
        return gm_mem_fail(m, err, "a lookahead assertion");
    }
}

gm_status gm_lookahead_check(gm_mem *m, const gm_ebnf *src, const uint32_t *out_rule,
                             const gm_egrammar *g, gm_error *err)
{
    bool any = false;
    for (uint32_t r = 0; r < src->nrules; r++)
        if (src->rules[r].lookahead != GM_EX_NONE && out_rule[r] != GM_EX_NONE)
            any = true;
    if (!any)
        return GM_OK;
    gm_status st = GM_OK;
    walker w;
    memset(&w, 0, sizeof w);
    w.m = m;
    w.g = g;
    gm_intern_init(&w.seen, m);
    uint32_t *ret_off = gm_mem_calloc(m, (size_t)g->nrules + 1, sizeof *ret_off);
    uint32_t *ret = gm_mem_calloc(m, (size_t)g->ref_off[g->nstates] + 1, sizeof *ret);
    uint32_t *fill = gm_mem_calloc(m, (size_t)g->nrules + 1, sizeof *fill);
    if (!ret_off || !ret || !fill) {
        st = gm_mem_fail(m, err, "the lookahead check");
        goto done;
    }
    /* the targets of the reference edges over each rule: where it returns to */
    for (uint32_t j = 0; j < g->ref_off[g->nstates]; j++)
        ret_off[g->refs[j].sym + 1]++;
    for (uint32_t r = 0; r < g->nrules; r++)
        ret_off[r + 1] += ret_off[r];
    memcpy(fill, ret_off, (size_t)g->nrules * sizeof *fill);
    for (uint32_t j = 0; j < g->ref_off[g->nstates]; j++)
        ret[fill[g->refs[j].sym]++] = g->refs[j].to;
    w.ret_off = ret_off;
    w.ret = ret;
    for (uint32_t r = 0; r < src->nrules && st == GM_OK; r++) {
        uint32_t la = src->rules[r].lookahead;
        if (la == GM_EX_NONE || out_rule[r] == GM_EX_NONE)
            continue;
        gm_irnfa d;
        if (gm_irnfa_build(m, src, la, &d)) {
            st = build_error(src, r, &d, m, err);
            break;
        }
        if (!gm_irnfa_has(&d.start, d.final)) { /* else expr holds "" and the assertion always */
            w.d = &d;
            w.queue.n = 0;
            gm_intern_clear(&w.seen);
            st = walk(&w, src, r, out_rule[r], err);
        }
        gm_irnfa_free(m, &d);
    }
done:
    gm_mem_free(m, ret_off);
    gm_mem_free(m, ret);
    gm_mem_free(m, fill);
    gm_vec_free(m, &w.queue);
    gm_intern_free(&w.seen);
    return st;
}
