/* Subset construction (earley/fsm_det.h). */
#include "earley/fsm_det.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "earley/fsm.h"

#define NONE UINT32_MAX

/*
 * note [subset construction]
 * A DFA state is the set of the NFA states its inputs reach, closed under
 * epsilon edges and then cut down to the states that matter: those with
 * symbol edges, and the accepting one. Two closures that differ only in
 * states that just pass control on (an alternative's entry, a counter of a
 * bounded repetition that may stop) lead the same way, so they are one
 * state; the result is closer to minimal and minimization has less to
 * merge. Per DFA state, the symbol edges of its members split the symbols
 * into intervals at their boundaries; each interval's targets, closed, are
 * the next state. A single target (the common case) is closed once per
 * NFA state and remembered. The working memory is kept from rule to rule.
 */

void gm_fsm_det_init(gm_fsm_det *d, gm_mem *m)
{
    memset(d, 0, sizeof *d);
    d->mem = m;
    gm_intern_init(&d->sets, m);
}

void gm_fsm_det_free(gm_fsm_det *d)
{
    gm_mem *m = d->mem;
    gm_vec_free(m, &d->eoff_v);
    gm_vec_free(m, &d->soff_v);
    gm_vec_free(m, &d->eps_v);
    gm_vec_free(m, &d->mark_v);
    gm_vec_free(m, &d->single_v);
    gm_vec_free(m, &d->keep_v);
    gm_vec_free(m, &d->sym_v);
    gm_vec_free(m, &d->set);
    gm_vec_free(m, &d->stack);
    gm_vec_free(m, &d->members);
    gm_vec_free(m, &d->bucket);
    gm_vec_free(m, &d->targets);
    gm_vec_free(m, &d->off);
    gm_vec_free(m, &d->flags);
    gm_vec_free(m, &d->cand);
    gm_vec_free(m, &d->big);
    gm_vec_free(m, &d->out);
    gm_intern_free(&d->sets);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Sorts short arrays by insertion (most NFA state sets and edge lists are short). */
enum { SHORT_SORT = 24 };

#define DEFINE_SORT(name, T, cmp)                                                              \
    static void name(T *v, size_t n)                                                           \
    {                                                                                          \
        if (n > SHORT_SORT) {                                                                  \
            qsort(v, n, sizeof *v, cmp);                                                       \
            return;                                                                            \
        }                                                                                      \
        for (size_t i = 1; i < n; i++) {                                                       \
            T x = v[i];                                                                        \
            size_t j = i;                                                                      \
            for (; j > 0 && v[j - 1] > x; j--)                                                 \
                v[j] = v[j - 1];                                                               \
            v[j] = x;                                                                          \
        }                                                                                      \
    }
DEFINE_SORT(sort_u32, uint32_t, cmp_u32)
DEFINE_SORT(sort_u64, uint64_t, cmp_u64)

/* Closes the states d->set under epsilon edges, keeps those that matter,
   sorts them; interns the set: the DFA state id (note [subset construction]). */
static int close_and_intern(gm_fsm_det *d, uint32_t *id)
{
    gm_mem *m = d->mem;
    d->stamp++;
    d->stack.n = 0;
    if (gm_vec_reserve(m, &d->stack, d->set.n))
        return -1;
    for (size_t i = 0; i < d->set.n; i++)
        if (d->mark[d->set.v[i]] != d->stamp) {
            d->mark[d->set.v[i]] = d->stamp;
            d->stack.v[d->stack.n++] = d->set.v[i];
        }
    d->set.n = 0;
    while (d->stack.n) {
        uint32_t s = d->stack.v[--d->stack.n];
        if (d->keep[s] && gm_vec_push(m, &d->set, s))
            return -1;
        uint32_t e0 = d->eoff[s], e1 = d->eoff[s + 1];
        if (e0 == e1)
            continue;
        if (gm_vec_reserve(m, &d->stack, d->stack.n + (e1 - e0)))
            return -1;
        for (uint32_t i = e0; i < e1; i++) {
            uint32_t t = d->eps[i];
            if (d->mark[t] != d->stamp) {
                d->mark[t] = d->stamp;
                d->stack.v[d->stack.n++] = t;
            }
        }
    }
    sort_u32(d->set.v, d->set.n);
    return gm_intern_put(&d->sets, d->set.v, d->set.n * sizeof *d->set.v, id, NULL);
}

/* The DFA state of closure(targets[0..n)), closure({t}) remembered per t. */
static int target_state(gm_fsm_det *d, const uint32_t *targets, size_t n, uint32_t *id)
{
    size_t k = 1;
    while (k < n && targets[k] == targets[0])
        k++;
    if (k == n) {
        uint32_t t = targets[0];
        if (d->single[t] != NONE) {
            *id = d->single[t];
            return 0;
        }
        d->set.n = 0;
        if (gm_vec_push(d->mem, &d->set, t) || close_and_intern(d, id))
            return -1;
        d->single[t] = *id;
        return 0;
    }
    d->set.n = 0;
    if (gm_vec_reserve(d->mem, &d->set, n))
        return -1;
    memcpy(d->set.v, targets, n * sizeof *targets);
    d->set.n = n;
    return close_and_intern(d, id);
}

/* Appends edge lo..hi -> to of the state being made, merged with the last when adjacent. */
static int out_edge(gm_fsm_det *d, size_t first, uint32_t lo, uint32_t hi, uint32_t to)
{
    size_t n = d->out.n;
    if (n > first && d->out.v[n - 1].to == to && (uint64_t)d->out.v[n - 1].hi + 1 == lo) {
        d->out.v[n - 1].hi = hi;
        return 0;
    }
    return gm_vec_push(d->mem, &d->out, ((gm_fsm_edge){lo, hi, to}));
}

/* Sets the NFA in d's arrays. */
static int det_load(gm_fsm_det *d, const gm_nfa_edge *edges, size_t ne, uint32_t nn, uint32_t acc)
{
    gm_mem *m = d->mem;
    if (gm_vec_reserve(m, &d->eoff_v, (size_t)nn + 2) || gm_vec_reserve(m, &d->soff_v, (size_t)nn + 2) ||
        gm_vec_reserve(m, &d->eps_v, ne + 1) || gm_vec_reserve(m, &d->sym_v, ne + 1) ||
        gm_vec_reserve(m, &d->mark_v, (size_t)nn + 1) || gm_vec_reserve(m, &d->single_v, (size_t)nn + 1) ||
        gm_vec_reserve(m, &d->keep_v, (size_t)nn + 1))
        return -1;
    d->eoff = d->eoff_v.v;
    d->soff = d->soff_v.v;
    d->eps = d->eps_v.v;
    d->sym = d->sym_v.v;
    d->mark = d->mark_v.v;
    d->single = d->single_v.v;
    d->keep = d->keep_v.v;
    d->acc = acc;
    d->stamp = 0;
    memset(d->eoff, 0, ((size_t)nn + 2) * sizeof *d->eoff);
    memset(d->soff, 0, ((size_t)nn + 2) * sizeof *d->soff);
    memset(d->mark, 0, (size_t)nn * sizeof *d->mark);
    memset(d->single, 0xff, (size_t)nn * sizeof *d->single);
    /* CSR of each kind, edges of a state in the order they were added */
    for (size_t i = 0; i < ne; i++) {
        const gm_nfa_edge *r = &edges[i];
        if (r->lo > r->hi)
            d->eoff[r->from + 2]++;
        else
            d->soff[r->from + 2]++;
    }
    for (uint32_t s = 0; s < nn; s++) {
        d->eoff[s + 2] += d->eoff[s + 1];
        d->soff[s + 2] += d->soff[s + 1];
    }
    for (size_t i = 0; i < ne; i++) {
        const gm_nfa_edge *r = &edges[i];
        if (r->lo > r->hi)
            d->eps[d->eoff[r->from + 1]++] = r->to;
        else
            d->sym[d->soff[r->from + 1]++] = (gm_fsm_edge){r->lo, r->hi, r->to};
    }
    for (uint32_t s = 0; s < nn; s++)
        d->keep[s] = d->soff[s + 1] > d->soff[s] || s == acc;
    gm_intern_clear(&d->sets);
    return 0;
}

/*
 * The edges of DFA state `members` (its NFA states) into d->out. Byte
 * boundaries are marked in a bitmap, so the intervals come out sorted
 * without a sort; references and special tokens are single symbols,
 * sorted with their targets.
 */
static int det_edges(gm_fsm_det *d, const uint32_t *members, size_t kn)
{
    gm_mem *m = d->mem;
    uint64_t bound[5] = {0, 0, 0, 0, 0};
    d->cand.n = d->big.n = 0;
    for (size_t i = 0; i < kn; i++) {
        uint32_t s = members[i], j0 = d->soff[s], j1 = d->soff[s + 1];
        if (gm_vec_reserve(m, &d->cand, d->cand.n + (j1 - j0)))
            return -1;
        for (uint32_t j = j0; j < j1; j++) {
            const gm_fsm_edge *e = &d->sym[j];
            if (e->lo < 256) {
                uint32_t h = e->hi + 1;
                bound[e->lo >> 6] |= (uint64_t)1 << (e->lo & 63);
                bound[h >> 6] |= (uint64_t)1 << (h & 63);
                d->cand.v[d->cand.n++] = (gm_fsm_edge){e->lo, e->hi, e->to};
            } else if (gm_vec_push(m, &d->big, (uint64_t)e->lo << 32 | e->to)) {
                return -1;
            }
        }
    }
    size_t first = d->out.n;
    /* The byte edges by lo: when they do not overlap (most states), each is
       an interval of one target as it stands. */
    gm_fsm_edge *cv = d->cand.v;
    bool disjoint = true;
    for (size_t i = 1; i < d->cand.n; i++) {
        gm_fsm_edge x = cv[i];
        size_t j = i;
        for (; j > 0 && cv[j - 1].lo > x.lo; j--)
            cv[j] = cv[j - 1];
        cv[j] = x;
    }
    for (size_t i = 1; i < d->cand.n && disjoint; i++)
        disjoint = cv[i].lo > cv[i - 1].hi;
    if (disjoint) {
        for (size_t i = 0; i < d->cand.n; i++) {
            uint32_t to;
            if (target_state(d, &cv[i].to, 1, &to) || out_edge(d, first, cv[i].lo, cv[i].hi, to))
                return -1;
        }
    } else {
        /* byte intervals [pts[i], pts[i + 1]) */
        uint16_t idx[257];
        uint16_t pts[258];
        uint32_t np = 0;
        for (int wi = 0; wi < 5; wi++)
            for (uint64_t x = bound[wi]; x; x &= x - 1) {
                uint32_t p = (uint32_t)wi * 64 + (uint32_t)__builtin_ctzll(x);
                idx[p] = (uint16_t)np;
                pts[np++] = (uint16_t)p;
            }
        uint32_t cnt[258];
        memset(cnt, 0, (np + 1) * sizeof *cnt);
        size_t total = 0;
        for (size_t j = 0; j < d->cand.n; j++) {
            uint32_t a = idx[d->cand.v[j].lo], z = idx[d->cand.v[j].hi + 1];
            for (uint32_t i = a; i < z; i++)
                cnt[i + 1]++;
            total += z - a;
        }
        for (uint32_t i = 0; i < np; i++)
            cnt[i + 1] += cnt[i];
        if (gm_vec_reserve(m, &d->bucket, total + 1))
            return -1;
        for (size_t j = 0; j < d->cand.n; j++) {
            uint32_t a = idx[d->cand.v[j].lo], z = idx[d->cand.v[j].hi + 1];
            for (uint32_t i = a; i < z; i++)
                d->bucket.v[cnt[i]++] = d->cand.v[j].to;
        }
        /* cnt[i] is now the end of interval i's targets (the start of i + 1's);
           intervals cut apart by other members' boundaries often have the
           targets of the one before (in the same order): closed once */
        uint32_t p0 = 0, p1 = 0, pto = NONE;
        for (uint32_t i = 0; i + 1 < np; i++) {
            uint32_t b0 = i ? cnt[i - 1] : 0, b1 = cnt[i], to;
            if (b0 == b1)
                continue;
            if (pto != NONE && b1 - b0 == p1 - p0 &&
                !memcmp(d->bucket.v + b0, d->bucket.v + p0, (b1 - b0) * sizeof *d->bucket.v))
                to = pto;
            else if (target_state(d, d->bucket.v + b0, b1 - b0, &to))
                return -1;
            p0 = b0;
            p1 = b1;
            pto = to;
            if (out_edge(d, first, pts[i], pts[i + 1] - 1u, to))
                return -1;
        }
    }
    if (d->big.n) {
        /* (symbol, target) pairs in order; each symbol's targets together */
        sort_u64(d->big.v, d->big.n);
        for (size_t i = 0; i < d->big.n;) {
            uint32_t sym = (uint32_t)(d->big.v[i] >> 32);
            size_t e = i;
            d->targets.n = 0;
            for (; e < d->big.n && (uint32_t)(d->big.v[e] >> 32) == sym; e++)
                if (gm_vec_push(m, &d->targets, (uint32_t)d->big.v[e]))
                    return -1;
            uint32_t to;
            if (target_state(d, d->targets.v, d->targets.n, &to) || out_edge(d, first, sym, sym, to))
                return -1;
            i = e;
        }
    }
    return 0;
}

int gm_fsm_determinize(gm_fsm_det *d, const gm_nfa_edge *edges, size_t nedges, uint32_t nstates,
                       uint32_t start, uint32_t acc, uint32_t max_states, gm_fsm_dfa *out)
{
    gm_mem *m = d->mem;
    memset(out, 0, sizeof *out);
    d->out.n = d->off.n = d->flags.n = 0;
    uint32_t id;
    d->set.n = 0;
    if (det_load(d, edges, nedges, nstates, acc) || gm_vec_push(m, &d->set, start) ||
        close_and_intern(d, &id))
        return -1;
    for (uint32_t cur = 0; cur < d->sets.count; cur++) {
        if (cur >= max_states)
            return -2;
        size_t klen;
        const uint32_t *key = gm_intern_key(&d->sets, cur, &klen);
        size_t kn = klen / sizeof *key;
        /* a copy: interning below may move the key */
        d->members.n = 0;
        if (gm_vec_reserve(m, &d->members, kn + 1))
            return -1;
        if (klen)
            memcpy(d->members.v, key, klen);
        uint8_t f = 0;
        for (size_t i = 0; i < kn; i++)
            if (d->members.v[i] == acc)
                f = GM_FS_ACCEPT;
        if (gm_vec_push(m, &d->off, (uint32_t)d->out.n) || gm_vec_push(m, &d->flags, f) ||
            det_edges(d, d->members.v, kn))
            return -1;
    }
    if (gm_vec_push(m, &d->off, (uint32_t)d->out.n))
        return -1;
    uint32_t n = d->sets.count;
    out->off = gm_mem_alloc(m, ((size_t)n + 1) * sizeof *out->off);
    out->flags = gm_mem_alloc(m, n ? n : 1);
    out->edges = gm_mem_alloc(m, (d->out.n ? d->out.n : 1) * sizeof *out->edges);
    if (!out->off || !out->flags || !out->edges) {
        gm_fsm_dfa_free(m, out);
        return -1;
    }
    out->nstates = n;
    memcpy(out->off, d->off.v, ((size_t)n + 1) * sizeof *out->off);
    memcpy(out->flags, d->flags.v, n);
    if (d->out.n)
        memcpy(out->edges, d->out.v, d->out.n * sizeof *out->edges);
    return 0;
}
