/*
 * Byte automata of IR expressions (ir_nfa.h): a Thompson construction from
 * the end of the expression (as earley/fsm_build.c builds rule automata),
 * references expanded in place, then the epsilon closures and the byte
 * steps as state sets, for callers that walk sets of states.
 */
#include "ir/ir_nfa.h"

#include <string.h>

#include "base/vec.h"
#include "lexer/utf8_ranges.h"

typedef struct la_edge {
    uint32_t from, to;
    uint16_t lo, hi;     /* bytes lo..hi; lo > hi: an epsilon edge */
} la_edge;

typedef struct la_nfa {
    gm_mem *m;
    const gm_ebnf *src;
    GM_VEC(la_edge) edges;
    uint32_t n;          /* states */
    uint8_t *active;     /* [src rules] being expanded */
    int fail;            /* GM_IRNFA_* */
    uint32_t bad_rule;   /* GM_IRNFA_RECURSIVE, GM_IRNFA_NESTED: the rule */
} la_nfa;

static uint32_t la_state(la_nfa *a)
{
    if (a->n >= GM_IRNFA_MAX_STATES) {
        if (!a->fail)
            a->fail = GM_IRNFA_BIG;
        return GM_EX_NONE;
    }
    return a->n++;
}

static int la_add(la_nfa *a, uint32_t from, uint32_t lo, uint32_t hi, uint32_t to)
{
    la_edge e = {from, to, (uint16_t)lo, (uint16_t)hi};
    if (gm_vec_push(a->m, &a->edges, e)) {
        a->fail = GM_IRNFA_NOMEM;
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
        a->fail = GM_IRNFA_DEPTH;
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
        if (a->active[r] || g->rules[r].body == GM_EX_NONE || g->rules[r].body >= g->nnodes) {
            a->fail = GM_IRNFA_RECURSIVE;
            a->bad_rule = r;
            return GM_EX_NONE;
        }
        if (g->rules[r].lookahead != GM_EX_NONE) {
            a->fail = GM_IRNFA_NESTED;
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
        a->fail = GM_IRNFA_TOKEN;
        return GM_EX_NONE;
    default:
        a->fail = GM_IRNFA_UNTIL;
        return GM_EX_NONE;
    }
}

static gm_irnfa_set closure_of(const uint32_t *eoff, const uint32_t *eps, uint32_t s, uint32_t *stack)
{
    gm_irnfa_set c;
    memset(&c, 0, sizeof c);
    size_t sp = 0;
    gm_irnfa_add(&c, s);
    stack[sp++] = s;
    while (sp) {
        uint32_t x = stack[--sp];
        for (uint32_t j = eoff[x]; j < eoff[x + 1]; j++)
            if (!gm_irnfa_has(&c, eps[j])) {
                gm_irnfa_add(&c, eps[j]);
                stack[sp++] = eps[j];
            }
    }
    return c;
}

static int make_steps(gm_mem *m, const la_nfa *a, uint32_t start, uint32_t final, gm_irnfa *d)
{
    uint32_t n = a->n;
    d->n = n;
    d->final = final;
    d->step = gm_mem_calloc(m, (size_t)256 * n, sizeof *d->step);
    uint32_t *eoff = gm_mem_calloc(m, (size_t)n + 1, sizeof *eoff);
    uint32_t *eps = gm_mem_calloc(m, a->edges.n + 1, sizeof *eps);
    uint32_t *stack = gm_mem_calloc(m, (size_t)n + 1, sizeof *stack);
    gm_irnfa_set *clo = gm_mem_calloc(m, n, sizeof *clo);
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
            gm_irnfa_set *t = &d->step[(size_t)b * n + e->from];
            for (uint32_t w = 0; w < GM_IRNFA_WORDS; w++)
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

gm_irnfa_set gm_irnfa_step(const gm_irnfa *d, const gm_irnfa_set *s, uint8_t b)
{
    gm_irnfa_set out;
    memset(&out, 0, sizeof out);
    for (uint32_t w = 0; w < GM_IRNFA_WORDS; w++)
        for (uint64_t bits = s->w[w]; bits; bits &= bits - 1) {
            uint32_t x = w * 64 + (uint32_t)__builtin_ctzll(bits);
            const gm_irnfa_set *t = &d->step[(size_t)b * d->n + x];
            for (uint32_t k = 0; k < GM_IRNFA_WORDS; k++)
                out.w[k] |= t->w[k];
        }
    return out;
}

int gm_irnfa_build(gm_mem *m, const gm_ebnf *g, uint32_t node, gm_irnfa *out)
{
    memset(out, 0, sizeof *out);
    la_nfa a;
    memset(&a, 0, sizeof a);
    a.m = m;
    a.src = g;
    a.active = gm_mem_calloc(m, g->nrules ? g->nrules : 1, 1);
    int rc = -1;
    if (!a.active) {
        out->fail = GM_IRNFA_NOMEM;
        goto done;
    }
    uint32_t final = la_state(&a);
    uint32_t start = final == GM_EX_NONE ? GM_EX_NONE : la_frag(&a, node, final, 0);
    if (start == GM_EX_NONE) {
        out->fail = a.fail ? a.fail : GM_IRNFA_NOMEM;
        out->bad_rule = a.bad_rule;
        goto done;
    }
    if (make_steps(m, &a, start, final, out)) {
        gm_mem_free(m, out->step);
        out->step = NULL;
        out->fail = GM_IRNFA_NOMEM;
        goto done;
    }
    rc = 0;
done:
    gm_vec_free(m, &a.edges);
    gm_mem_free(m, a.active);
    return rc;
}

void gm_irnfa_free(gm_mem *m, gm_irnfa *a)
{
    gm_mem_free(m, a->step);
    a->step = NULL;
}
