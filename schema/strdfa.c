/* Products of string languages over code point classes, and their emission (strdfa.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "schema/strdfa.h"

#define NONE UINT32_MAX

/* ---- code point classes ---- */

typedef struct classes {
    uint32_t n;
    uint32_t *lo, *hi;       /* class k: lo[k] .. hi[k] */
} classes;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

typedef GM_VEC(uint32_t) u32vec;

static int add_bound(gm_mem *m, u32vec *b, uint32_t x)
{
    return gm_vec_push(m, b, x);
}

static int collect_bounds(gm_mem *m, const gm_regex *re, uint32_t node, u32vec *b, uint8_t *seen)
{
    if (seen[node])
        return 0;
    seen[node] = 1;
    const gm_rx_node *x = &re->nodes[node];
    switch (x->kind) {
    case GM_RX_CHAR:
        return add_bound(m, b, x->cp) || add_bound(m, b, x->cp + 1);
    case GM_RX_SET: {
        const gm_cpset *s = &re->sets[x->set];
        for (size_t i = 0; i < s->n; i++)
            if (add_bound(m, b, s->r[i].lo) || add_bound(m, b, s->r[i].hi + 1))
                return -1;
        return 0;
    }
    case GM_RX_CONCAT:
    case GM_RX_ALT:
    case GM_RX_REPEAT:
        for (uint32_t i = 0; i < x->count; i++)
            if (collect_bounds(m, re, re->kids[x->first + i], b, seen))
                return -1;
        return 0;
    default:
        return 0;
    }
}

/* The class of code point cp, NONE for a surrogate. */
static uint32_t class_of(const classes *cl, uint32_t cp)
{
    uint32_t a = 0, z = cl->n;
    while (a < z) {
        uint32_t mid = (a + z) / 2;
        if (cl->hi[mid] < cp)
            a = mid + 1;
        else
            z = mid;
    }
    return a < cl->n && cl->lo[a] <= cp ? a : NONE;
}

/* ---- Thompson NFA over classes ---- */

typedef struct nedge {
    uint32_t from, to;
    uint32_t lo, hi;         /* classes, or NONE for an epsilon edge */
} nedge;

typedef struct nfa {
    sctx *c;
    const classes *cl;
    uint32_t nstates;
    GM_VEC(nedge) edges;
    bool failed;
} nfa;

static uint32_t nstate(nfa *a)
{
    if (a->nstates >= SC_SDFA_MAX_NFA) {
        a->failed = true;
        return NONE;
    }
    return a->nstates++;
}

static void nedge_add(nfa *a, uint32_t from, uint32_t to, uint32_t lo, uint32_t hi)
{
    nedge e = {from, to, lo, hi};
    if (gm_vec_push(a->c->mem, &a->edges, e))
        a->failed = true;
}

static void set_edges(nfa *a, const gm_cpset *s, uint32_t from, uint32_t to)
{
    for (size_t i = 0; i < s->n; i++) {
        uint32_t lo = s->r[i].lo, hi = s->r[i].hi;
        /* the classes inside [lo, hi], skipping the surrogates */
        uint32_t k = class_of(a->cl, lo);
        if (k == NONE)
            k = class_of(a->cl, lo <= 0xDFFF ? 0xE000 : lo);
        uint32_t j = class_of(a->cl, hi);
        if (j == NONE)
            j = hi >= 0xD800 ? class_of(a->cl, 0xD7FF) : NONE;
        if (k == NONE || j == NONE || k > j)
            continue;
        nedge_add(a, from, to, k, j);
    }
}

static uint32_t build(nfa *a, const gm_regex *re, uint32_t node, uint32_t out, unsigned depth)
{
    if (a->failed || depth > 4 * GM_REGEX_MAX_DEPTH) {
        a->failed = true;
        return NONE;
    }
    const gm_rx_node *x = &re->nodes[node];
    switch (x->kind) {
    case GM_RX_EMPTY:
        return out;
    case GM_RX_CHAR:
    case GM_RX_SET: {
        uint32_t s = nstate(a);
        if (s == NONE)
            return NONE;
        if (x->kind == GM_RX_SET) {
            set_edges(a, &re->sets[x->set], s, out);
        } else {
            gm_cpset one = {0};
            if (gm_cpset_add_range(a->c->mem, &one, x->cp, x->cp)) {
                a->failed = true;
                return NONE;
            }
            set_edges(a, &one, s, out);
            gm_cpset_free(a->c->mem, &one);
        }
        return s;
    }
    case GM_RX_CONCAT:
        for (uint32_t i = x->count; i-- > 0 && out != NONE;)
            out = build(a, re, re->kids[x->first + i], out, depth + 1);
        return out;
    case GM_RX_ALT: {
        uint32_t s = nstate(a);
        for (uint32_t i = 0; i < x->count && s != NONE && !a->failed; i++) {
            uint32_t e = build(a, re, re->kids[x->first + i], out, depth + 1);
            if (e != NONE)
                nedge_add(a, s, e, NONE, NONE);
        }
        return a->failed ? NONE : s;
    }
    case GM_RX_REPEAT: {
        uint32_t kid = re->kids[x->first], cur = out;
        if (x->max == GM_RX_INF) {
            uint32_t loop = nstate(a);
            if (loop == NONE)
                return NONE;
            uint32_t e = build(a, re, kid, loop, depth + 1);
            if (e == NONE)
                return NONE;
            nedge_add(a, loop, e, NONE, NONE);
            nedge_add(a, loop, out, NONE, NONE);
            cur = loop;
        } else {
            for (uint32_t j = x->min; j < x->max && cur != NONE; j++) {
                uint32_t e = build(a, re, kid, cur, depth + 1), ch = nstate(a);
                if (e == NONE || ch == NONE)
                    return NONE;
                nedge_add(a, ch, e, NONE, NONE);
                nedge_add(a, ch, out, NONE, NONE);
                cur = ch;
            }
        }
        for (uint32_t i = 0; i < x->min && cur != NONE; i++)
            cur = build(a, re, kid, cur, depth + 1);
        return cur;
    }
    default:
        a->failed = true;
        return NONE;
    }
}

static int cmp_edge_from(const void *x, const void *y)
{
    const nedge *a = x, *b = y;
    return a->from < b->from ? -1 : a->from > b->from;
}

/* ---- subset construction ---- */

typedef struct closer {
    const nfa *a;
    const uint32_t *off;     /* edges of NFA state s: a->edges.v[off[s] .. off[s+1]) */
    uint32_t *mark, gen;
    u32vec stack, set;
} closer;

/* The epsilon closure of the seeds, sorted, in cl->set. */
static int closure(closer *cl, sctx *c, const uint32_t *seeds, size_t n)
{
    cl->gen++;
    cl->set.n = 0;
    cl->stack.n = 0;
    for (size_t i = 0; i < n; i++)
        if (cl->mark[seeds[i]] != cl->gen) {
            cl->mark[seeds[i]] = cl->gen;
            if (gm_vec_push(c->mem, &cl->stack, seeds[i]))
                return -1;
        }
    while (cl->stack.n) {
        uint32_t s = cl->stack.v[--cl->stack.n];
        if (gm_vec_push(c->mem, &cl->set, s))
            return -1;
        for (uint32_t k = cl->off[s]; k < cl->off[s + 1]; k++) {
            const nedge *e = &cl->a->edges.v[k];
            if (e->lo == NONE && cl->mark[e->to] != cl->gen) {
                cl->mark[e->to] = cl->gen;
                if (gm_vec_push(c->mem, &cl->stack, e->to))
                    return -1;
            }
        }
    }
    qsort(cl->set.v, cl->set.n, sizeof *cl->set.v, cmp_u32);
    return 0;
}

typedef struct event {
    uint32_t at;             /* class */
    uint32_t to;
    int start;               /* 1: an edge starts covering at `at`; 0: it stops */
} event;

static int cmp_event(const void *x, const void *y)
{
    const event *a = x, *b = y;
    return a->at < b->at ? -1 : a->at > b->at;
}

static gm_status limit(sctx *c, const char *what)
{
    if (c->st == GM_OK)
        c->st = gm_error_set(c->err, GM_ERR_LIMIT, "a string automaton with more than %s", what);
    return c->st;
}

gm_status sc_sdfa_product(sctx *c, const sc_lang *langs, size_t n, sc_sdfa *out)
{
    memset(out, 0, sizeof *out);
    gm_mem *m = c->mem;
    if (n > SC_SDFA_MAX_PARTS)
        return limit(c, "31 languages (a fixed limit)");
    /* classes */
    u32vec b = {0};
    classes cl = {0};
    nfa a = {c, &cl, 0, {0}, false};
    closer cs = {0};
    gm_intern subsets;
    gm_intern_init(&subsets, m);
    uint32_t *finals = NULL, *off = NULL;
    GM_VEC(event) ev = {0};
    GM_VEC(sc_sdfa_edge) edges = {0};
    u32vec targets = {0}, eoff = {0};
    gm_status st = GM_OK;
    if (add_bound(m, &b, 0) || add_bound(m, &b, 0xD800) || add_bound(m, &b, 0xE000) ||
        add_bound(m, &b, GM_CP_MAX + 1))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        uint8_t *seen = gm_mem_calloc(m, langs[i].re->nnodes + 1, 1);
        if (!seen || collect_bounds(m, langs[i].re, langs[i].root, &b, seen)) {
            gm_mem_free(m, seen);
            goto nomem;
        }
        gm_mem_free(m, seen);
    }
    qsort(b.v, b.n, sizeof *b.v, cmp_u32);
    cl.lo = gm_mem_alloc(m, b.n * sizeof *cl.lo);
    cl.hi = gm_mem_alloc(m, b.n * sizeof *cl.hi);
    if (!cl.lo || !cl.hi)
        goto nomem;
    {
        size_t u = 0;
        for (size_t i = 0; i < b.n; i++)
            if (!u || b.v[u - 1] != b.v[i])
                b.v[u++] = b.v[i];
        b.n = u;
    }
    for (size_t i = 0; i + 1 < b.n; i++)
        if (b.v[i] <= GM_CP_MAX && b.v[i] != 0xD800) { /* [D800, E000) holds the surrogates */
            cl.lo[cl.n] = b.v[i];
            cl.hi[cl.n] = b.v[i + 1] - 1;
            cl.n++;
        }
    if (cl.n > SC_SDFA_MAX_CLASSES) {
        st = limit(c, "4096 character classes (a fixed limit)");
        goto out;
    }
    /* the NFA */
    finals = gm_mem_alloc(m, (n + 1) * sizeof *finals);
    uint32_t *entries = gm_mem_alloc(m, (n + 2) * sizeof *entries);
    if (!finals || !entries) {
        gm_mem_free(m, entries);
        goto nomem;
    }
    for (size_t i = 0; i < n && !a.failed; i++) {
        finals[i] = nstate(&a);
        entries[i] = finals[i] == NONE ? NONE : build(&a, langs[i].re, langs[i].root, finals[i], 0);
    }
    /* the universe: a state looping on every class keeps a subset alive when every language
       has died, so that complements (no pattern matches, not a listed name) stay reachable */
    uint32_t uni = nstate(&a);
    if (uni != NONE && cl.n)
        nedge_add(&a, uni, uni, 0, cl.n - 1);
    entries[n] = uni;
    if (a.failed) {
        gm_mem_free(m, entries);
        if (a.nstates >= SC_SDFA_MAX_NFA) {
            st = limit(c, "200000 NFA states (a fixed limit)");
            goto out;
        }
        goto nomem;
    }
    qsort(a.edges.v, a.edges.n, sizeof *a.edges.v, cmp_edge_from);
    off = gm_mem_calloc(m, (size_t)a.nstates + 2, sizeof *off);
    cs.mark = gm_mem_calloc(m, (size_t)a.nstates + 1, sizeof *cs.mark);
    if (!off || !cs.mark) {
        gm_mem_free(m, entries);
        goto nomem;
    }
    for (size_t k = 0; k < a.edges.n; k++)
        off[a.edges.v[k].from + 1]++;
    for (uint32_t s = 0; s < a.nstates; s++)
        off[s + 1] += off[s];
    cs.a = &a;
    cs.off = off;
    uint32_t id;
    int rc = closure(&cs, c, entries, n + 1);
    gm_mem_free(m, entries);
    if (rc || gm_intern_put(&subsets, cs.set.v, cs.set.n * sizeof *cs.set.v, &id, NULL))
        goto nomem;
    /* explore */
    for (uint32_t s = 0; s < subsets.count; s++) {
        if (s >= c->opts.max_automaton_states) {
            char what[160];
            snprintf(what, sizeof what, "%u states, the limit max_automaton_states "
                     "(gm_schema_options; --max-automaton-states=N on the command line)",
                     c->opts.max_automaton_states);
            st = limit(c, what);
            goto out;
        }
        size_t klen;
        const uint32_t *sub = gm_intern_key(&subsets, s, &klen);
        size_t sn = klen / sizeof *sub;
        uint32_t label = 0;
        ev.n = 0;
        for (size_t i = 0; i < sn; i++) {
            uint32_t q = sub[i];
            for (size_t l = 0; l < n; l++)
                if (finals[l] == q)
                    label |= 1u << l;
            for (uint32_t k = off[q]; k < off[q + 1]; k++) {
                const nedge *e = &a.edges.v[k];
                if (e->lo == NONE)
                    continue;
                event x = {e->lo, e->to, 1}, y = {e->hi + 1, e->to, 0};
                if (gm_vec_push(m, &ev, x) || gm_vec_push(m, &ev, y))
                    goto nomem;
            }
        }
        if (gm_vec_push(m, &eoff, (uint32_t)edges.n))
            goto nomem;
        qsort(ev.v, ev.n, sizeof *ev.v, cmp_event);
        /* sweep: between event points the active edges, hence the target, stay the same */
        GM_VEC(uint32_t) active = {0};
        uint32_t prev_target = NONE;
        for (size_t i = 0; i < ev.n;) {
            uint32_t at = ev.v[i].at;
            for (; i < ev.n && ev.v[i].at == at; i++) {
                if (ev.v[i].start) {
                    if (gm_vec_push(m, &active, ev.v[i].to)) {
                        gm_vec_free(m, &active);
                        goto nomem;
                    }
                } else {
                    for (size_t k = 0; k < active.n; k++)
                        if (active.v[k] == ev.v[i].to) {
                            active.v[k] = active.v[--active.n];
                            break;
                        }
                }
            }
            uint32_t until = i < ev.n ? ev.v[i].at : cl.n;
            if (at >= cl.n || until <= at)
                continue;
            if (!active.n) {
                prev_target = NONE;
                continue;
            }
            if (closure(&cs, c, active.v, active.n) ||
                gm_intern_put(&subsets, cs.set.v, cs.set.n * sizeof *cs.set.v, &id, NULL)) {
                gm_vec_free(m, &active);
                goto nomem;
            }
            if (id == prev_target && edges.n && edges.v[edges.n - 1].hi + 1 == at) {
                edges.v[edges.n - 1].hi = until - 1;
            } else {
                sc_sdfa_edge e = {at, until - 1, id};
                if (gm_vec_push(m, &edges, e)) {
                    gm_vec_free(m, &active);
                    goto nomem;
                }
            }
            prev_target = id;
        }
        gm_vec_free(m, &active);
        if (gm_vec_push(m, &targets, label))
            goto nomem;
    }
    if (gm_vec_push(m, &eoff, (uint32_t)edges.n))
        goto nomem;
    out->nstates = subsets.count;
    out->label = targets.v;
    targets.v = NULL;
    out->off = eoff.v;
    eoff.v = NULL;
    out->edges = edges.v;
    edges.v = NULL;
    out->nclasses = cl.n;
    out->class_lo = cl.lo;
    out->class_hi = cl.hi;
    cl.lo = cl.hi = NULL;
    goto out;
nomem:
    st = c->st = gm_mem_fail(m, c->err, "a string automaton");
out:
    gm_vec_free(m, &b);
    gm_mem_free(m, cl.lo);
    gm_mem_free(m, cl.hi);
    gm_vec_free(m, &a.edges);
    gm_mem_free(m, finals);
    gm_mem_free(m, off);
    gm_mem_free(m, cs.mark);
    gm_vec_free(m, &cs.stack);
    gm_vec_free(m, &cs.set);
    gm_intern_free(&subsets);
    gm_vec_free(m, &ev);
    gm_vec_free(m, &edges);
    gm_vec_free(m, &targets);
    gm_vec_free(m, &eoff);
    return st;
}

void sc_sdfa_free(sctx *c, sc_sdfa *a)
{
    gm_mem_free(c->mem, a->label);
    gm_mem_free(c->mem, a->off);
    gm_mem_free(c->mem, a->edges);
    gm_mem_free(c->mem, a->class_lo);
    gm_mem_free(c->mem, a->class_hi);
    memset(a, 0, sizeof *a);
}

/* ---- emission ---- */

typedef struct emitter {
    sctx *c;
    const sc_sdfa *a;
    uint32_t mask, want;
    bool *live;
    uint32_t *rule;          /* rule of a rule state, else GM_EX_NONE */
    bool *is_rule;
    const char *hint;
} emitter;

static bool in_region(const emitter *e, uint32_t s)
{
    return (e->a->label[s] & e->mask) == e->want;
}

static uint32_t expr(emitter *e, uint32_t s, unsigned depth);

static uint32_t next_of(emitter *e, uint32_t t, unsigned depth)
{
    if (!e->is_rule[t] && depth > 150)
        e->is_rule[t] = true; /* a long chain: cut into rules so expressions stay shallow */
    if (!e->is_rule[t])
        return expr(e, t, depth + 1);
    if (e->rule[t] == GM_EX_NONE) {
        e->rule[t] = gm_ebnf_fresh_rule(e->c->g, e->hint);
        if (e->rule[t] == GM_EX_NONE)
            return gm_irb_fail(&e->c->b, GM_ERR_NOMEM, "out of memory");
        uint32_t body = expr(e, t, 0);
        if (body == GM_EX_NONE)
            return GM_EX_NONE;
        e->c->g->rules[e->rule[t]].body = body;
    }
    return gm_irb_ref(&e->c->b, e->rule[t]);
}

/* The code points of classes lo..hi, added to s. */
static int add_classes(sctx *c, const sc_sdfa *a, gm_cpset *s, uint32_t lo, uint32_t hi)
{
    for (uint32_t k = lo; k <= hi; k++)
        if (gm_cpset_add_range(c->mem, s, a->class_lo[k], a->class_hi[k]))
            return -1;
    return 0;
}

static uint32_t expr(emitter *e, uint32_t s, unsigned depth)
{
    sctx *c = e->c;
    gm_irb *b = &c->b;
    const sc_sdfa *a = e->a;
    GM_VEC(uint32_t) tgt = {0};
    GM_VEC(gm_cpset) sets = {0};
    gm_cpset self = {0};
    uint32_t r = GM_EX_NONE;
    for (uint32_t k = a->off[s]; k < a->off[s + 1]; k++) {
        const sc_sdfa_edge *ed = &a->edges[k];
        if (!e->live[ed->to])
            continue;
        gm_cpset *into = &self;
        if (ed->to != s) {
            size_t j = 0;
            while (j < tgt.n && tgt.v[j] != ed->to)
                j++;
            if (j == tgt.n) {
                gm_cpset none = {0};
                if (gm_vec_push(c->mem, &tgt, ed->to) || gm_vec_push(c->mem, &sets, none))
                    goto nomem;
            }
            into = &sets.v[j];
        }
        if (add_classes(c, a, into, ed->lo, ed->hi))
            goto nomem;
    }
    {
        GM_VEC(uint32_t) alts = {0};
        if (in_region(e, s) && gm_vec_push(c->mem, &alts, gm_irb_empty(b)))
            goto nomem;
        for (size_t j = 0; j < tgt.n && b->st == GM_OK; j++) {
            uint32_t x = gm_irb_seq2(b, gm_irb_json_set(b, &sets.v[j]), next_of(e, tgt.v[j], depth));
            if (gm_vec_push(c->mem, &alts, x)) {
                gm_vec_free(c->mem, &alts);
                goto nomem;
            }
        }
        r = gm_irb_alt(b, alts.v, alts.n);
        gm_vec_free(c->mem, &alts);
        if (self.n)
            r = gm_irb_seq2(b, gm_irb_repeat(b, gm_irb_json_set(b, &self), 0, GM_EX_INF), r);
    }
    goto out;
nomem:
    r = gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
out:
    for (size_t j = 0; j < sets.n; j++)
        gm_cpset_free(c->mem, &sets.v[j]);
    gm_vec_free(c->mem, &sets);
    gm_vec_free(c->mem, &tgt);
    gm_cpset_free(c->mem, &self);
    return r;
}

/* States on a cycle longer than a self-loop (Tarjan, iteratively) become rules. */
static int mark_cycles(sctx *c, const sc_sdfa *a, const bool *live, bool *is_rule)
{
    uint32_t n = a->nstates;
    uint32_t *index = gm_mem_calloc(c->mem, n + 1, sizeof *index);
    uint32_t *low = gm_mem_calloc(c->mem, n + 1, sizeof *low);
    uint32_t *stack = gm_mem_calloc(c->mem, n + 1, sizeof *stack);
    uint32_t *fv = gm_mem_calloc(c->mem, n + 1, sizeof *fv), *fe = gm_mem_calloc(c->mem, n + 1, sizeof *fe);
    bool *on = gm_mem_calloc(c->mem, n + 1, sizeof *on);
    int rc = 0;
    if (!index || !low || !stack || !fv || !fe || !on) {
        rc = -1;
        goto out;
    }
    uint32_t next_index = 0, sp = 0;
    for (uint32_t root = 0; root < n; root++) {
        if (!live[root] || index[root])
            continue;
        uint32_t fp = 0;
        fv[fp] = root;
        fe[fp++] = a->off[root];
        index[root] = low[root] = ++next_index;
        stack[sp++] = root;
        on[root] = true;
        while (fp) {
            uint32_t u = fv[fp - 1];
            bool pushed = false;
            while (fe[fp - 1] < a->off[u + 1]) {
                uint32_t w = a->edges[fe[fp - 1]++].to;
                if (!live[w] || w == u)
                    continue;
                if (!index[w]) {
                    index[w] = low[w] = ++next_index;
                    stack[sp++] = w;
                    on[w] = true;
                    fv[fp] = w;
                    fe[fp++] = a->off[w];
                    pushed = true;
                    break;
                }
                if (on[w] && index[w] < low[u])
                    low[u] = index[w];
            }
            if (pushed)
                continue;
            if (low[u] == index[u]) {
                uint32_t top = sp, w;
                do {
                    w = stack[--sp];
                    on[w] = false;
                } while (w != u);
                if (top - sp > 1)
                    for (uint32_t k = sp; k < top; k++)
                        is_rule[stack[k]] = true;
            }
            fp--;
            if (fp && low[u] < low[fv[fp - 1]])
                low[fv[fp - 1]] = low[u];
        }
    }
out:
    gm_mem_free(c->mem, index);
    gm_mem_free(c->mem, low);
    gm_mem_free(c->mem, stack);
    gm_mem_free(c->mem, fv);
    gm_mem_free(c->mem, fe);
    gm_mem_free(c->mem, on);
    return rc;
}

uint32_t sc_sdfa_emit(sctx *c, const sc_sdfa *a, uint32_t mask, uint32_t want, const char *hint)
{
    gm_irb *b = &c->b;
    if (!a->nstates)
        return gm_irb_nothing(b);
    emitter e = {c, a, mask, want, NULL, NULL, NULL, hint};
    uint32_t n = a->nstates;
    e.live = gm_mem_calloc(c->mem, n + 1, sizeof *e.live);
    e.rule = gm_mem_alloc(c->mem, (n + 1) * sizeof *e.rule);
    e.is_rule = gm_mem_calloc(c->mem, n + 1, sizeof *e.is_rule);
    uint32_t *indeg = gm_mem_calloc(c->mem, n + 1, sizeof *indeg);
    uint32_t r = GM_EX_NONE;
    if (!e.live || !e.rule || !e.is_rule || !indeg) {
        r = gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        goto out;
    }
    /* live: a state of the region is reachable */
    for (uint32_t s = 0; s < n; s++)
        e.live[s] = in_region(&e, s);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t s = 0; s < n; s++)
            for (uint32_t k = a->off[s]; k < a->off[s + 1] && !e.live[s]; k++)
                if (e.live[a->edges[k].to])
                    e.live[s] = changed = true;
    }
    if (!e.live[0]) {
        r = gm_irb_nothing(b);
        goto out;
    }
    for (uint32_t s = 0; s < n; s++) {
        e.rule[s] = GM_EX_NONE;
        if (!e.live[s])
            continue;
        uint32_t last = NONE;
        for (uint32_t k = a->off[s]; k < a->off[s + 1]; k++) {
            uint32_t w = a->edges[k].to;
            if (!e.live[w] || w == s || w == last)
                continue;
            last = w;
            indeg[w]++;
        }
    }
    for (uint32_t s = 0; s < n; s++)
        if (e.live[s] && indeg[s] > 1)
            e.is_rule[s] = true;
    if (mark_cycles(c, a, e.live, e.is_rule)) {
        r = gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        goto out;
    }
    r = e.is_rule[0] || indeg[0] ? (e.is_rule[0] = true, next_of(&e, 0, 0)) : expr(&e, 0, 0);
out:
    gm_mem_free(c->mem, e.live);
    gm_mem_free(c->mem, e.rule);
    gm_mem_free(c->mem, e.is_rule);
    gm_mem_free(c->mem, indeg);
    return r;
}

/* ---- common languages ---- */

uint32_t sc_regex_words(gm_regex *re, const char *const *words, const uint32_t *lens, size_t n)
{
    GM_VEC(uint32_t) alts = {0}, chars = {0};
    uint32_t r = NONE;
    for (size_t i = 0; i < n; i++) {
        chars.n = 0;
        for (uint32_t p = 0; p < lens[i];) {
            uint32_t cp;
            size_t k = gm_utf8_decode((const uint8_t *)words[i] + p, lens[i] - p, &cp);
            if (!k)
                break;
            p += (uint32_t)k;
            uint32_t id = gm_regex_add_node(re, GM_RX_CHAR);
            if (id == NONE || gm_vec_push(re->mem, &chars, id))
                goto out;
            re->nodes[id].cp = cp;
        }
        uint32_t w = gm_regex_add_parent(re, GM_RX_CONCAT, chars.v, chars.n);
        if (w == NONE || gm_vec_push(re->mem, &alts, w))
            goto out;
    }
    r = gm_regex_add_parent(re, GM_RX_ALT, alts.v, alts.n);
out:
    gm_vec_free(re->mem, &alts);
    gm_vec_free(re->mem, &chars);
    return r;
}

uint32_t sc_regex_length(gm_regex *re, uint32_t lo, uint32_t hi)
{
    gm_cpset all = {0};
    if (gm_cpset_add_range(re->mem, &all, 0, GM_CP_MAX)) {
        gm_cpset_free(re->mem, &all);
        return NONE;
    }
    uint32_t set = gm_regex_add_set(re, &all);
    if (set == NONE)
        return NONE;
    uint32_t a = gm_regex_add_parent(re, GM_RX_REPEAT, &set, 1);
    if (a == NONE)
        return NONE;
    re->nodes[a].min = re->nodes[a].max = lo;
    uint32_t b = gm_regex_add_parent(re, GM_RX_REPEAT, &set, 1);
    if (b == NONE)
        return NONE;
    re->nodes[b].min = 0;
    re->nodes[b].max = hi == UINT32_MAX ? GM_RX_INF : hi - lo;
    uint32_t k[2] = {a, b};
    return gm_regex_add_parent(re, GM_RX_CONCAT, k, 2);
}
