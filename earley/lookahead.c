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
 * of at most LA_MAX_STATES states, built here from the IR; references in
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
#include "lexer/utf8_ranges.h"

#define LA_MAX_STATES 256u
#define LA_WORDS (LA_MAX_STATES / 64)
#define LA_MAX_VISITS (1u << 20)

/* Why building an assertion's automaton failed. */
enum { LA_OK, LA_NOMEM, LA_BIG, LA_RECURSIVE, LA_TOKEN, LA_UNTIL, LA_NESTED, LA_DEPTH };

typedef struct la_edge {
    uint32_t from, to;
    uint16_t lo, hi;     /* bytes lo..hi; lo > hi: an epsilon edge */
} la_edge;

typedef struct mset {
    uint64_t w[LA_WORDS];
} mset;

typedef struct la_nfa {
    gm_mem *m;
    const gm_ebnf *src;
    GM_VEC(la_edge) edges;
    uint32_t n;          /* states */
    uint8_t *active;     /* [src rules] being expanded */
    int fail;            /* LA_* */
    uint32_t bad_rule;   /* LA_RECURSIVE, LA_NESTED: the rule */
} la_nfa;

static uint32_t la_state(la_nfa *a)
{
    if (a->n >= LA_MAX_STATES) {
        if (!a->fail)
            a->fail = LA_BIG;
        return GM_EX_NONE;
    }
    return a->n++;
}

static int la_add(la_nfa *a, uint32_t from, uint32_t lo, uint32_t hi, uint32_t to)
{
    la_edge e = {from, to, (uint16_t)lo, (uint16_t)hi};
    if (gm_vec_push(a->m, &a->edges, e)) {
        a->fail = LA_NOMEM;
        return -1;
    }
    return 0;
}

static int la_eps(la_nfa *a, uint32_t from, uint32_t to)
{
    return la_add(a, from, 1, 0, to);
}

typedef struct la_seq_ctx {
    la_nfa *a;
    uint32_t in, out;
} la_seq_ctx;

/* One UTF-8 byte-range sequence from c->in to c->out. */
static int la_utf8_seq(void *ud, const gm_utf8_seq *s)
{
    la_seq_ctx *c = ud;
    uint32_t at = c->in;
    for (uint8_t i = 0; i < s->len; i++) {
        uint32_t to = i + 1 == s->len ? c->out : la_state(c->a);
        if (to == GM_EX_NONE || la_add(c->a, at, s->lo[i], s->hi[i], to))
            return -1;
        at = to;
    }
    return 0;
}

/* The automaton of node, built from its end: returns its entry state, whose
   strings lead to out; GM_EX_NONE with a->fail set on failure. */
static uint32_t la_frag(la_nfa *a, uint32_t node, uint32_t out, uint32_t depth)
{
    const gm_ebnf *g = a->src;
    if (depth > GM_EBNF_MAX_DEPTH) {
        a->fail = LA_DEPTH;
        return GM_EX_NONE;
    }
    const gm_ex *e = &g->nodes[node];
    switch (e->kind) {
    case GM_EX_EMPTY:
        return out;
    case GM_EX_NOTHING:
        return la_state(a);
    case GM_EX_BYTES: {
        uint32_t at = out;
        for (uint32_t i = e->count; i-- > 0;) {
            uint32_t in = la_state(a);
            uint8_t c = g->bytes[e->first + i];
            if (in == GM_EX_NONE || la_add(a, in, c, c, at))
                return GM_EX_NONE;
            at = in;
        }
        return at;
    }
    case GM_EX_SET: {
        const gm_cpset *s = &g->sets[e->arg];
        uint32_t in = la_state(a);
        if (in == GM_EX_NONE)
            return GM_EX_NONE;
        la_seq_ctx c = {a, in, out};
        for (size_t i = 0; i < s->n; i++) {
            uint32_t hi = s->r[i].hi > GM_CP_MAX ? GM_CP_MAX : s->r[i].hi;
            if (s->r[i].lo <= hi && gm_utf8_sequences(s->r[i].lo, hi, la_utf8_seq, &c))
                return GM_EX_NONE;
        }
        return in;
    }
    case GM_EX_BYTESET: {
        const uint32_t *bits = g->bytesets[e->arg];
        uint32_t in = la_state(a);
        if (in == GM_EX_NONE)
            return GM_EX_NONE;
        for (uint32_t c = 0; c < 256;) {
            if (!(bits[c >> 5] >> (c & 31) & 1)) {
                c++;
                continue;
            }
            uint32_t lo = c;
            while (c < 256 && (bits[c >> 5] >> (c & 31) & 1))
                c++;
            if (la_add(a, in, lo, c - 1, out))
                return GM_EX_NONE;
        }
        return in;
    }
    case GM_EX_REF: {
        uint32_t r = e->arg;
        if (a->active[r] || g->rules[r].body == GM_EX_NONE) {
            a->fail = LA_RECURSIVE;
            a->bad_rule = r;
            return GM_EX_NONE;
        }
        if (g->rules[r].lookahead != GM_EX_NONE) {
            a->fail = LA_NESTED;
            a->bad_rule = r;
            return GM_EX_NONE;
        }
        a->active[r] = 1;
        uint32_t in = la_frag(a, g->rules[r].body, out, depth + 1);
        a->active[r] = 0;
        return in;
    }
    case GM_EX_SEQ: {
        uint32_t at = out;
        for (uint32_t i = e->count; i-- > 0;)
            if ((at = la_frag(a, g->kids[e->first + i], at, depth + 1)) == GM_EX_NONE)
                return GM_EX_NONE;
        return at;
    }
    case GM_EX_ALT: {
        uint32_t in = la_state(a);
        if (in == GM_EX_NONE)
            return GM_EX_NONE;
        for (uint32_t i = 0; i < e->count; i++) {
            uint32_t k = la_frag(a, g->kids[e->first + i], out, depth + 1);
            if (k == GM_EX_NONE || la_eps(a, in, k))
                return GM_EX_NONE;
        }
        return in;
    }
    case GM_EX_REPEAT: {
        uint32_t kid = g->kids[e->first], at = out;
        if (e->max == GM_EX_INF) {
            uint32_t loop = la_state(a);
            uint32_t body = loop == GM_EX_NONE ? GM_EX_NONE : la_frag(a, kid, loop, depth + 1);
            if (body == GM_EX_NONE || la_eps(a, loop, out) || la_eps(a, loop, body))
                return GM_EX_NONE;
            at = loop;
        } else {
            /* optional copies: each may be skipped (no more copies after a skip
               is the same language, since the rest are optional too) */
            for (uint32_t i = e->min; i < e->max; i++) {
                uint32_t s = la_state(a);
                uint32_t body = s == GM_EX_NONE ? GM_EX_NONE : la_frag(a, kid, at, depth + 1);
                if (body == GM_EX_NONE || la_eps(a, s, out) || la_eps(a, s, body))
                    return GM_EX_NONE;
                at = s;
            }
        }
        for (uint32_t i = 0; i < e->min; i++)
            if ((at = la_frag(a, kid, at, depth + 1)) == GM_EX_NONE)
                return GM_EX_NONE;
        return at;
    }
    case GM_EX_TOKEN:
        a->fail = LA_TOKEN;
        return GM_EX_NONE;
    default:
        a->fail = LA_UNTIL;
        return GM_EX_NONE;
    }
}

static bool mset_has(const mset *s, uint32_t i)
{
    return s->w[i >> 6] >> (i & 63) & 1;
}

static void mset_set(mset *s, uint32_t i)
{
    s->w[i >> 6] |= (uint64_t)1 << (i & 63);
}

static bool mset_empty(const mset *s)
{
    for (uint32_t i = 0; i < LA_WORDS; i++)
        if (s->w[i])
            return false;
    return true;
}

/* The assertion's automaton, ready to step: closures and byte steps as sets. */
typedef struct la_dfa {
    uint32_t n, final;
    mset start;          /* closure of the start state */
    mset *step;          /* [256 * n]: closure of the targets of state s over byte b */
} la_dfa;

static mset closure_of(const uint32_t *eoff, const uint32_t *eps, uint32_t s, uint32_t *stack)
{
    mset c;
    memset(&c, 0, sizeof c);
    size_t sp = 0;
    mset_set(&c, s);
    stack[sp++] = s;
    while (sp) {
        uint32_t x = stack[--sp];
        for (uint32_t j = eoff[x]; j < eoff[x + 1]; j++)
            if (!mset_has(&c, eps[j])) {
                mset_set(&c, eps[j]);
                stack[sp++] = eps[j];
            }
    }
    return c;
}

static int la_dfa_make(gm_mem *m, const la_nfa *a, uint32_t start, uint32_t final, la_dfa *d)
{
    uint32_t n = a->n;
    d->n = n;
    d->final = final;
    d->step = gm_mem_calloc(m, (size_t)256 * n, sizeof *d->step);
    uint32_t *eoff = gm_mem_calloc(m, (size_t)n + 1, sizeof *eoff);
    uint32_t *eps = gm_mem_calloc(m, a->edges.n + 1, sizeof *eps);
    uint32_t *stack = gm_mem_calloc(m, (size_t)n + 1, sizeof *stack);
    mset *clo = gm_mem_calloc(m, n, sizeof *clo);
    int rc = -1;
    if (!d->step || !eoff || !eps || !stack || !clo)
        goto done;
    for (size_t i = 0; i < a->edges.n; i++)
        if (a->edges.v[i].lo > a->edges.v[i].hi)
            eoff[a->edges.v[i].from + 1]++;
    for (uint32_t s = 0; s < n; s++)
        eoff[s + 1] += eoff[s];
    {
        uint32_t *fill = stack; /* borrowed as a cursor array */
        memcpy(fill, eoff, (size_t)n * sizeof *fill);
        for (size_t i = 0; i < a->edges.n; i++)
            if (a->edges.v[i].lo > a->edges.v[i].hi)
                eps[fill[a->edges.v[i].from]++] = a->edges.v[i].to;
    }
    for (uint32_t s = 0; s < n; s++)
        clo[s] = closure_of(eoff, eps, s, stack);
    d->start = clo[start];
    for (size_t i = 0; i < a->edges.n; i++) {
        const la_edge *e = &a->edges.v[i];
        for (uint32_t b = e->lo; b <= e->hi; b++) {
            mset *t = &d->step[(size_t)b * n + e->from];
            for (uint32_t w = 0; w < LA_WORDS; w++)
                t->w[w] |= clo[e->to].w[w];
        }
    }
    rc = 0;
done:
    gm_mem_free(m, eoff);
    gm_mem_free(m, eps);
    gm_mem_free(m, stack);
    gm_mem_free(m, clo);
    return rc;
}

static mset la_step(const la_dfa *d, const mset *s, uint8_t b)
{
    mset out;
    memset(&out, 0, sizeof out);
    for (uint32_t w = 0; w < LA_WORDS; w++)
        for (uint64_t bits = s->w[w]; bits; bits &= bits - 1) {
            uint32_t x = w * 64 + (uint32_t)__builtin_ctzll(bits);
            const mset *t = &d->step[(size_t)b * d->n + x];
            for (uint32_t k = 0; k < LA_WORDS; k++)
                out.w[k] |= t->w[k];
        }
    return out;
}

/* ---- the walk ------------------------------------------------------------ */

typedef struct walk_key {
    uint32_t state;
    uint32_t pad;
    mset set;
} walk_key;

typedef struct walker {
    gm_mem *m;
    const gm_egrammar *g;
    const la_dfa *d;
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
    const la_dfa *d = w->d;
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
            mset next = la_step(d, &k.set, (uint8_t)b);
            if (mset_has(&next, d->final))
                continue; /* the assertion holds on this path */
            if (mset_empty(&next)) {
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

static gm_status build_error(const gm_ebnf *src, uint32_t r, const la_nfa *a, gm_mem *m,
                             gm_error *err)
{
    const char *name = src->rules[r].name;
    gm_srcloc loc = src->rules[r].loc;
    switch (a->fail) {
    case LA_BIG:
        return gm_error_set_at(err, GM_ERR_LIMIT, loc, NULL, 0,
                               "rule %s: its lookahead assertion needs more than %u automaton "
                               "states", name, LA_MAX_STATES);
    case LA_RECURSIVE:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: its lookahead assertion refers to rule %s "
                               "recursively; an assertion must be a regular language",
                               name, src->rules[a->bad_rule].name);
    case LA_NESTED:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: its lookahead assertion refers to rule %s, which has "
                               "a lookahead assertion itself", name,
                               src->rules[a->bad_rule].name);
    case LA_TOKEN:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: a special token in a lookahead assertion is not "
                               "supported", name);
    case LA_UNTIL:
        return gm_error_set_at(err, GM_ERR_UNSUPPORTED, loc, NULL, 0,
                               "rule %s: free text (TagDispatch, Until) in a lookahead "
                               "assertion is not supported", name);
    case LA_DEPTH:
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
    la_nfa a;
    memset(&a, 0, sizeof a);
    a.m = m;
    a.src = src;
    uint32_t *ret_off = gm_mem_calloc(m, (size_t)g->nrules + 1, sizeof *ret_off);
    uint32_t *ret = gm_mem_calloc(m, (size_t)g->ref_off[g->nstates] + 1, sizeof *ret);
    uint32_t *fill = gm_mem_calloc(m, (size_t)g->nrules + 1, sizeof *fill);
    a.active = gm_mem_calloc(m, src->nrules ? src->nrules : 1, 1);
    if (!ret_off || !ret || !fill || !a.active) {
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
        a.edges.n = 0;
        a.n = 0;
        a.fail = LA_OK;
        uint32_t final = la_state(&a);
        uint32_t start = final == GM_EX_NONE ? GM_EX_NONE : la_frag(&a, la, final, 0);
        if (start == GM_EX_NONE) {
            st = build_error(src, r, &a, m, err);
            break;
        }
        la_dfa d;
        memset(&d, 0, sizeof d);
        if (la_dfa_make(m, &a, start, final, &d)) {
            gm_mem_free(m, d.step);
            st = gm_mem_fail(m, err, "a lookahead assertion");
            break;
        }
        if (!mset_has(&d.start, final)) { /* else expr holds "" and the assertion always */
            w.d = &d;
            w.queue.n = 0;
            gm_intern_clear(&w.seen);
            st = walk(&w, src, r, out_rule[r], err);
        }
        gm_mem_free(m, d.step);
    }
done:
    gm_vec_free(m, &a.edges);
    gm_mem_free(m, a.active);
    gm_mem_free(m, ret_off);
    gm_mem_free(m, ret);
    gm_mem_free(m, fill);
    gm_vec_free(m, &w.queue);
    gm_intern_free(&w.seen);
    return st;
}
