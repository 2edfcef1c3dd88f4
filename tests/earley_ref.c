/*
 * The reference recognizer of tests/earley_ref.h: IR -> BNF desugaring,
 * pruning, and a textbook Earley recognizer with byte-level code point
 * matching. Written for obviousness, not speed; nothing here is shared
 * with earley/ (only the IR's definition).
 */
#include "tests/earley_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

#define TERM 0x80000000u   /* symbols >= TERM are terminals (index = sym - TERM) */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fputs("earley_ref: out of memory\n", stderr);
        abort();
    }
    return q;
}

#define GROW(arr, n, cap)                                                  \
    do {                                                                   \
        if ((n) >= (cap)) {                                                \
            (cap) = (cap) ? 2 * (cap) : 16;                                \
            (arr) = xrealloc((arr), (size_t)(cap) * sizeof *(arr));        \
        }                                                                  \
    } while (0)

enum { T_BYTES, T_CPSET, T_TOKEN };

typedef struct rterm {
    int kind;
    uint32_t bits[8];     /* T_BYTES: the bytes it matches */
    uint32_t *lo, *hi;    /* T_CPSET: sorted disjoint ranges, surrogates removed */
    size_t nr;
    uint8_t *text;        /* T_TOKEN */
    size_t len;
} rterm;

typedef struct ritem {
    uint32_t prod, dot, origin;
    uint32_t partial;     /* bytes of a code point begun at the CPSET after the dot: n << 24 | bytes */
} ritem;

typedef struct rset {
    ritem *items;
    uint32_t n, cap;
    uint64_t *slots;      /* gen << 32 | (item + 1) */
    uint32_t nslots, gen;
    uint64_t *wait;       /* (nonterminal after the dot) << 32 | item, sorted */
    uint32_t nwait, wait_cap;
    uint32_t *scan;       /* items whose dot is at a terminal */
    uint32_t nscan, scan_cap;
    bool accept;
} rset;

struct gm_eref {
    /* the BNF */
    uint32_t nnt;
    uint32_t nprods, prods_cap;
    uint32_t *plhs, *pstart, *plen;
    uint32_t *rhs;
    size_t nrhs, rhs_cap;
    uint32_t *nt_first;   /* [nnt + 1] productions of a nonterminal: nt_prods[nt_first[A] ..] */
    uint32_t *nt_prods;
    uint8_t *nullable;    /* [nnt] */
    rterm *terms;
    uint32_t nterms, terms_cap;
    uint32_t byte_term[256];
    uint32_t eps;         /* nonterminal deriving only "" */
    uint32_t start_prod;
    /* the chart */
    rset *sets;
    size_t nsets_cap;
    size_t ncommit;       /* committed sets (prefix length + 1) */
    uint32_t *pred_stamp; /* [nnt] closure stamp when predicted */
    uint32_t stamp;
};

/* ---- building the BNF ------------------------------------------------------- */

static uint32_t new_nt(gm_eref *r) { return r->nnt++; }

static void add_prod(gm_eref *r, uint32_t lhs, const uint32_t *syms, size_t n)
{
    if (r->nprods == r->prods_cap) {
        r->prods_cap = r->prods_cap ? 2 * r->prods_cap : 64;
        r->plhs = xrealloc(r->plhs, r->prods_cap * sizeof *r->plhs);
        r->pstart = xrealloc(r->pstart, r->prods_cap * sizeof *r->pstart);
        r->plen = xrealloc(r->plen, r->prods_cap * sizeof *r->plen);
    }
    r->plhs[r->nprods] = lhs;
    r->pstart[r->nprods] = (uint32_t)r->nrhs;
    uint32_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (syms[i] == r->eps)
            continue; /* "" in a sequence */
        GROW(r->rhs, r->nrhs, r->rhs_cap);
        r->rhs[r->nrhs++] = syms[i];
        len++;
    }
    r->plen[r->nprods++] = len;
}

static uint32_t add_term(gm_eref *r, const rterm *t)
{
    GROW(r->terms, r->nterms, r->terms_cap);
    r->terms[r->nterms] = *t;
    return TERM | r->nterms++;
}

static uint32_t byteclass(gm_eref *r, const uint32_t bits[8])
{
    rterm t = {.kind = T_BYTES};
    memcpy(t.bits, bits, sizeof t.bits);
    return add_term(r, &t);
}

static uint32_t byte_sym(gm_eref *r, uint8_t b)
{
    if (r->byte_term[b] == 0) {
        uint32_t bits[8] = {0};
        bits[b >> 5] = 1u << (b & 31);
        r->byte_term[b] = byteclass(r, bits);
    }
    return r->byte_term[b];
}

static uint32_t cpset_sym(gm_eref *r, const gm_cpset *s)
{
    rterm t = {.kind = T_CPSET};
    size_t cap = s->n + 1;
    t.lo = xrealloc(NULL, cap * sizeof *t.lo);
    t.hi = xrealloc(NULL, cap * sizeof *t.hi);
    for (size_t i = 0; i < s->n; i++) {
        uint32_t lo = s->r[i].lo, hi = s->r[i].hi;
        /* surrogates match nothing: cut them out */
        if (lo < 0xD800 && hi >= 0xD800) {
            t.lo[t.nr] = lo;
            t.hi[t.nr++] = 0xD7FF;
            lo = 0xE000;
        } else if (lo >= 0xD800 && lo <= 0xDFFF) {
            lo = 0xE000;
        }
        if (lo <= hi) {
            t.lo[t.nr] = lo;
            t.hi[t.nr++] = hi;
        }
    }
    return add_term(r, &t);
}

typedef struct builder {
    gm_eref *r;
    const gm_ebnf *g;
    uint32_t *node_sym;   /* [nnodes] */
    uint32_t *rule_nt;    /* [nrules] */
} builder;

typedef struct rep_memo {
    uint32_t kind, count, sym;
} rep_memo;

typedef struct rep_ctx {
    builder *b;
    uint32_t x;           /* the repeated symbol */
    rep_memo *memo;
    size_t n, cap;
} rep_ctx;

static uint32_t memo_find(const rep_ctx *c, uint32_t kind, uint32_t count)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->memo[i].kind == kind && c->memo[i].count == count)
            return c->memo[i].sym;
    return UINT32_MAX;
}

static void memo_put(rep_ctx *c, uint32_t kind, uint32_t count, uint32_t sym)
{
    GROW(c->memo, c->n, c->cap);
    c->memo[c->n++] = (rep_memo){kind, count, sym};
}

/* x exactly m times: X(m) -> X(m/2) X(m - m/2). */
static uint32_t rep_exact(rep_ctx *c, uint32_t m)
{
    gm_eref *r = c->b->r;
    if (m == 0)
        return r->eps;
    if (m == 1)
        return c->x;
    uint32_t s = memo_find(c, 0, m);
    if (s != UINT32_MAX)
        return s;
    s = new_nt(r);
    memo_put(c, 0, m, s);
    uint32_t rhs[2] = {rep_exact(c, m / 2), rep_exact(c, m - m / 2)};
    add_prod(r, s, rhs, 2);
    return s;
}

/* x zero to n times: U(1) -> x | "", U(n) -> U(n/2) U(n - n/2) (ambiguous; Earley does not mind). */
static uint32_t rep_upto(rep_ctx *c, uint32_t n)
{
    gm_eref *r = c->b->r;
    if (n == 0)
        return r->eps;
    uint32_t s = memo_find(c, 1, n);
    if (s != UINT32_MAX)
        return s;
    s = new_nt(r);
    memo_put(c, 1, n, s);
    if (n == 1) {
        add_prod(r, s, &c->x, 1);
        add_prod(r, s, NULL, 0);
    } else {
        uint32_t rhs[2] = {rep_upto(c, n / 2), rep_upto(c, n - n / 2)};
        add_prod(r, s, rhs, 2);
    }
    return s;
}

static uint32_t build_repeat(builder *b, uint32_t x, uint32_t min, uint32_t max)
{
    gm_eref *r = b->r;
    rep_ctx c = {.b = b, .x = x};
    uint32_t head = rep_exact(&c, min), tail;
    if (max == GM_EX_INF) {
        tail = new_nt(r); /* T -> x T | "" */
        uint32_t rhs[2] = {x, tail};
        add_prod(r, tail, rhs, 2);
        add_prod(r, tail, NULL, 0);
    } else {
        tail = rep_upto(&c, max - min);
    }
    free(c.memo);
    uint32_t s = new_nt(r), rhs[2] = {head, tail};
    add_prod(r, s, rhs, 2);
    return s;
}

/*
 * UTF-8 by brute force over base/utf8.c's decoder (not the engine's
 * automaton): q[0..n) is 1 when it is one whole valid character, 0 when
 * some continuation bytes complete it, -1 when nothing does.
 */
static int utf8_status_need(const uint8_t *q, size_t n, size_t *need)
{
    uint32_t cp;
    *need = 0;
    if (gm_utf8_decode(q, n, &cp) == n)
        return 1;
    if (n >= 4)
        return -1;
    /*
     * One, two or three more continuation bytes, drawn from the bounds of
     * the continuation ranges of the Unicode standard's table 3-7 (80..BF,
     * A0..BF, 80..9F, 90..BF, 80..8F): every range holds one of them, so a
     * completion exists exactly when one made of them does. All 64 values
     * per byte cost 2^18 decodes per prefix, which made a fuzz input with
     * many Until states time out.
     */
    static const uint8_t cont[6] = {0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf};
    uint8_t t[4];
    memcpy(t, q, n);
    for (size_t k = 1; n + k <= 4; k++) {
        size_t combos = k == 1 ? 6 : k == 2 ? 36 : 216;
        for (size_t v = 0; v < combos; v++) {
            for (size_t j = 0, w = v; j < k; j++, w /= 6)
                t[n + j] = cont[w % 6];
            if (gm_utf8_decode(t, n + k, &cp) == n + k) {
                *need = k;
                return 0;
            }
        }
    }
    return -1;
}

static int utf8_status(const uint8_t *q, size_t n)
{
    size_t need;
    return utf8_status_need(q, n, &need);
}

/*
 * The pending bytes of an unfinished character, up to equivalence: two
 * pendings with the same signature (how many bytes they still need, which
 * next bytes keep them a valid prefix, and which complete them) have the
 * same futures (in UTF-8 only the first continuation byte is constrained). Class 0 is "no
 * pending bytes".
 */
typedef struct u8class {
    uint8_t rep[4];      /* a representative pending */
    size_t len;
    size_t need;         /* the fewest bytes that complete it */
    uint32_t ok[8], done[8];
} u8class;

typedef struct u8classes {
    u8class c[16];
    uint32_t n;
} u8classes;

static uint32_t u8class_of(u8classes *U, const uint8_t *q, size_t n)
{
    if (n == 0)
        return 0;
    u8class k = {.len = n};
    memcpy(k.rep, q, n);
    utf8_status_need(q, n, &k.need);
    uint8_t t[5];
    memcpy(t, q, n);
    for (unsigned c = 0; c < 256; c++) {
        t[n] = (uint8_t)c;
        int st = utf8_status(t, n + 1);
        if (st >= 0)
            k.ok[c >> 5] |= 1u << (c & 31);
        if (st == 1)
            k.done[c >> 5] |= 1u << (c & 31);
    }
    for (uint32_t i = 1; i < U->n; i++)
        if (U->c[i].need == k.need && !memcmp(U->c[i].ok, k.ok, sizeof k.ok) &&
            !memcmp(U->c[i].done, k.done, sizeof k.done))
            return i;
    if (U->n == 16)
        abort();
    U->c[U->n] = k;
    return U->n++;
}

typedef struct ustate {
    uint32_t s, u, cnt, nt;
} ustate;

/*
 * UNTIL(L, which) of ir/ebnf.h note [until], as a right-linear
 * grammar over the states "longest suffix of the text that is a proper
 * prefix of a string of L", transitions found by brute force; in UTF-8
 * mode times the pending bytes of a character (above) and the number of
 * characters completed (counted when they complete, so the text of
 * UNTIL(L, i), which excludes L[i], has the count less L[i]'s characters).
 */
static uint32_t build_until(builder *b, const gm_ex *x)
{
    gm_eref *r = b->r;
    const gm_ebnf *g = b->g;
    uint32_t n = x->count;
    bool utf8 = !(x->min & GM_UNTIL_BYTES);
    uint32_t maxc = x->max;
    const uint8_t **L = xrealloc(NULL, n * sizeof *L);
    uint32_t *Llen = xrealloc(NULL, n * sizeof *Llen);
    size_t total = 0;
    for (uint32_t j = 0; j < n; j++) {
        const gm_ex *k = &g->nodes[g->kids[x->first + j]];
        L[j] = g->bytes + k->first;
        Llen[j] = k->count;
        total += k->count;
    }
    uint32_t end_chars = 0;
    if (x->arg != GM_EX_NONE)
        for (uint32_t i = 0; i < Llen[x->arg];) {
            uint32_t cp;
            size_t k = gm_utf8_decode(L[x->arg] + i, Llen[x->arg] - i, &cp);
            i += k ? (uint32_t)k : 1;
            end_chars++;
        }
    uint32_t cap = maxc == GM_EX_INF ? 0 : maxc + end_chars;
    /* states: distinct proper prefixes (pointer into some L[j], length) */
    const uint8_t **sp = xrealloc(NULL, (total + 1) * sizeof *sp);
    uint32_t *sl = xrealloc(NULL, (total + 1) * sizeof *sl);
    uint32_t ns = 0;
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t l = 0; l < Llen[j]; l++) {
            bool dup = false;
            for (uint32_t s = 0; s < ns && !dup; s++)
                dup = sl[s] == l && memcmp(sp[s], L[j], l) == 0;
            if (!dup) {
                sp[ns] = L[j];
                sl[ns++] = l;
            }
        }
    /* the Aho-Corasick moves by brute force: next state, or a hit (mine or not) */
    uint32_t *next = xrealloc(NULL, (size_t)ns * 256 * sizeof *next);
    uint8_t *hit = xrealloc(NULL, (size_t)ns * 256); /* 0 none, 1 another's, 2 mine */
    uint8_t *t = xrealloc(NULL, total + 2);
    for (uint32_t s = 0; s < ns; s++)
        for (unsigned c = 0; c < 256; c++) {
            memcpy(t, sp[s], sl[s]);
            t[sl[s]] = (uint8_t)c;
            uint32_t tl = sl[s] + 1;
            uint8_t h = 0;
            for (uint32_t j = 0; j < n; j++)
                if (Llen[j] <= tl && memcmp(t + tl - Llen[j], L[j], Llen[j]) == 0)
                    h = h == 2 || j == x->arg ? 2 : 1;
            uint32_t *nx = &next[(size_t)s * 256 + c];
            hit[(size_t)s * 256 + c] = h;
            *nx = UINT32_MAX;
            if (h)
                continue;
            for (uint32_t k = tl + 1; k-- > 0 && *nx == UINT32_MAX;)
                for (uint32_t q = 0; q < ns; q++)
                    if (sl[q] == k && memcmp(sp[q], t + tl - k, k) == 0) {
                        *nx = q;
                        break;
                    }
        }
    /* the product, reachable states only */
    u8classes U = {.n = 1};
    /* The UTF-8 step of a pending class and a byte, brute-forced once each:
     * u8class_of costs 256 status checks of up to 2^18 completions, too much
     * to repeat per state and byte (a fuzz input with many states timed out). */
    int8_t ustep[16][256];
    uint8_t unext[16][256];
    memset(ustep, 2, sizeof ustep);
    ustate *st = NULL;
    size_t nst = 0, capst = 0;
    GROW(st, nst, capst);
    st[nst++] = (ustate){0, 0, 0, new_nt(r)};
    for (size_t i = 0; i < nst; i++) {
        ustate cur = st[i];
        uint32_t acc[8] = {0};
        bool any_acc = false;
        /* target of each byte: index into st, or none */
        uint32_t to[256];
        for (unsigned c = 0; c < 256; c++) {
            to[c] = UINT32_MAX;
            uint32_t u2 = 0, cnt2 = cur.cnt;
            if (utf8) {
                if (ustep[cur.u][c] == 2) {
                    uint8_t q[5];
                    memcpy(q, U.c[cur.u].rep, U.c[cur.u].len);
                    size_t ql = cur.u ? U.c[cur.u].len : 0;
                    q[ql] = (uint8_t)c;
                    ustep[cur.u][c] = (int8_t)utf8_status(q, ql + 1);
                    unext[cur.u][c] = ustep[cur.u][c] == 0 ? (uint8_t)u8class_of(&U, q, ql + 1) : 0;
                }
                int us = ustep[cur.u][c];
                if (us < 0)
                    continue;
                if (us == 1)
                    cnt2 += maxc != GM_EX_INF;
                else
                    u2 = unext[cur.u][c];
                if (cnt2 > cap)
                    continue;
            }
            uint8_t h = hit[(size_t)cur.s * 256 + c];
            if (h == 2 && u2 == 0 &&
                (maxc == GM_EX_INF || cnt2 - end_chars <= maxc)) {
                acc[c >> 5] |= 1u << (c & 31);
                any_acc = true;
            }
            if (h)
                continue;
            uint32_t s2 = next[(size_t)cur.s * 256 + c];
            size_t k = 0;
            while (k < nst && !(st[k].s == s2 && st[k].u == u2 && st[k].cnt == cnt2))
                k++;
            if (k == nst) {
                GROW(st, nst, capst);
                st[nst++] = (ustate){s2, u2, cnt2, new_nt(r)};
            }
            to[c] = (uint32_t)k;
        }
        for (unsigned c = 0; c < 256; c++) {
            if (to[c] == UINT32_MAX)
                continue;
            uint32_t bits[8] = {0}, target = to[c];
            for (unsigned d = c; d < 256; d++)
                if (to[d] == target) {
                    bits[d >> 5] |= 1u << (d & 31);
                    to[d] = UINT32_MAX;
                }
            uint32_t rhs[2] = {byteclass(r, bits), st[target].nt};
            add_prod(r, cur.nt, rhs, 2);
        }
        if (x->arg == GM_EX_NONE) {
            if (cur.u == 0 && (maxc == GM_EX_INF || cur.cnt <= maxc))
                add_prod(r, cur.nt, NULL, 0);
        } else if (any_acc) {
            uint32_t sym = byteclass(r, acc);
            add_prod(r, cur.nt, &sym, 1);
        }
    }
    uint32_t start = st[0].nt;
    free(st);
    free(L);
    free(Llen);
    free(sp);
    free(sl);
    free(t);
    free(next);
    free(hit);
    return start;
}

static uint32_t build_node(builder *b, uint32_t id)
{
    gm_eref *r = b->r;
    const gm_ebnf *g = b->g;
    const gm_ex *x = &g->nodes[id];
    const uint32_t *kids = g->kids ? g->kids + x->first : NULL;
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_EMPTY: return r->eps;
    case GM_EX_NOTHING: return new_nt(r);
    case GM_EX_BYTES: {
        if (x->count == 0)
            return r->eps;
        if (x->count == 1)
            return byte_sym(r, g->bytes[x->first]);
        uint32_t *syms = xrealloc(NULL, x->count * sizeof *syms);
        for (uint32_t i = 0; i < x->count; i++)
            syms[i] = byte_sym(r, g->bytes[x->first + i]);
        uint32_t s = new_nt(r);
        add_prod(r, s, syms, x->count);
        free(syms);
        return s;
    }
    case GM_EX_SET: return cpset_sym(r, &g->sets[x->arg]);
    case GM_EX_BYTESET: return byteclass(r, g->bytesets[x->arg]);
    case GM_EX_REF: return b->rule_nt[x->arg];
    case GM_EX_TOKEN: {
        rterm t = {.kind = T_TOKEN, .len = x->count};
        t.text = xrealloc(NULL, x->count);
        memcpy(t.text, g->bytes + x->first, x->count);
        return add_term(r, &t);
    }
    case GM_EX_SEQ: {
        uint32_t *syms = xrealloc(NULL, x->count * sizeof *syms);
        for (uint32_t i = 0; i < x->count; i++)
            syms[i] = b->node_sym[kids[i]];
        uint32_t s = new_nt(r);
        add_prod(r, s, syms, x->count);
        free(syms);
        return s;
    }
    case GM_EX_ALT: {
        uint32_t s = new_nt(r);
        for (uint32_t i = 0; i < x->count; i++)
            add_prod(r, s, &b->node_sym[kids[i]], 1);
        return s;
    }
    case GM_EX_REPEAT: return build_repeat(b, b->node_sym[kids[0]], x->min, x->max);
    case GM_EX_UNTIL: return build_until(b, x);
    }
    abort();
}

static bool term_productive(const rterm *t)
{
    switch (t->kind) {
    case T_BYTES:
        for (int i = 0; i < 8; i++)
            if (t->bits[i])
                return true;
        return false;
    case T_CPSET: return t->nr > 0;
    default: return true;
    }
}

#define NEVER UINT32_MAX

/*
 * Marks the left-hand sides of productions whose need[] drops to 0, by
 * worklist: need[p] counts the nonterminal occurrences of p not marked
 * yet (NEVER: p can never qualify).
 */
static void propagate(gm_eref *r, uint32_t *need, const uint32_t *occ_first, const uint32_t *occ,
                      uint8_t *mark, uint32_t *queue)
{
    uint32_t qn = 0;
    for (uint32_t p = 0; p < r->nprods; p++)
        if (need[p] == 0 && !mark[r->plhs[p]]) {
            mark[r->plhs[p]] = 1;
            queue[qn++] = r->plhs[p];
        }
    for (uint32_t qh = 0; qh < qn; qh++) {
        uint32_t a = queue[qh];
        for (uint32_t k = occ_first[a]; k < occ_first[a + 1]; k++) {
            uint32_t p = occ[k];
            if (need[p] != NEVER && need[p] > 0 && --need[p] == 0 && !mark[r->plhs[p]]) {
                mark[r->plhs[p]] = 1;
                queue[qn++] = r->plhs[p];
            }
        }
    }
}

/*
 * Keeps the productions whose symbols all derive some string (plen of
 * the others becomes NEVER), computes which nonterminals derive "", and
 * indexes productions by left-hand side.
 */
static void prune(gm_eref *r)
{
    uint32_t N = r->nnt, P = r->nprods;
    uint8_t *productive = xrealloc(NULL, N);
    memset(productive, 0, N);
    uint32_t *need = xrealloc(NULL, (P ? P : 1) * sizeof *need);
    uint32_t *queue = xrealloc(NULL, (N ? N : 1) * sizeof *queue);
    memset(queue, 0, (N ? N : 1) * sizeof *queue);
    /* the productions each nonterminal occurs in, once per occurrence (CSR) */
    uint32_t *occ_first = xrealloc(NULL, (N + 1) * sizeof *occ_first);
    memset(occ_first, 0, (N + 1) * sizeof *occ_first);
    for (size_t i = 0; i < r->nrhs; i++)
        if (!(r->rhs[i] & TERM))
            occ_first[r->rhs[i] + 1]++;
    for (uint32_t a = 0; a < N; a++)
        occ_first[a + 1] += occ_first[a];
    uint32_t *occ = xrealloc(NULL, (occ_first[N] ? occ_first[N] : 1) * sizeof *occ);
    memset(occ, 0, (occ_first[N] ? occ_first[N] : 1) * sizeof *occ);
    uint32_t *fill = xrealloc(NULL, (N + 1) * sizeof *fill);
    memcpy(fill, occ_first, (N + 1) * sizeof *fill);
    for (uint32_t p = 0; p < P; p++)
        for (uint32_t i = 0; i < r->plen[p]; i++) {
            uint32_t s = r->rhs[r->pstart[p] + i];
            if (!(s & TERM))
                occ[fill[s]++] = p;
        }
    /* productive: a production qualifies when its terminals match something */
    for (uint32_t p = 0; p < P; p++) {
        need[p] = 0;
        for (uint32_t i = 0; i < r->plen[p] && need[p] != NEVER; i++) {
            uint32_t s = r->rhs[r->pstart[p] + i];
            if (!(s & TERM))
                need[p]++;
            else if (!term_productive(&r->terms[s & ~TERM]))
                need[p] = NEVER;
        }
    }
    propagate(r, need, occ_first, occ, productive, queue);
    /* kept: every symbol productive, i.e. need reached 0 */
    for (uint32_t p = 0; p < P; p++)
        if (need[p] != 0)
            r->plen[p] = NEVER;
    /* nullable, over the kept productions: no terminal, every nonterminal nullable */
    for (uint32_t p = 0; p < P; p++) {
        need[p] = r->plen[p];
        for (uint32_t i = 0; need[p] != NEVER && i < r->plen[p]; i++)
            if (r->rhs[r->pstart[p] + i] & TERM)
                need[p] = NEVER;
    }
    propagate(r, need, occ_first, occ, r->nullable, queue);
    /* productions by left-hand side */
    r->nt_first = xrealloc(NULL, (N + 1) * sizeof *r->nt_first);
    memset(r->nt_first, 0, (N + 1) * sizeof *r->nt_first);
    for (uint32_t p = 0; p < P; p++)
        if (r->plen[p] != NEVER)
            r->nt_first[r->plhs[p] + 1]++;
    for (uint32_t a = 0; a < N; a++)
        r->nt_first[a + 1] += r->nt_first[a];
    r->nt_prods = xrealloc(NULL, (r->nt_first[N] ? r->nt_first[N] : 1) * sizeof *r->nt_prods);
    memcpy(fill, r->nt_first, (N + 1) * sizeof *fill);
    for (uint32_t p = 0; p < P; p++)
        if (r->plen[p] != NEVER)
            r->nt_prods[fill[r->plhs[p]]++] = p;
    free(productive);
    free(need);
    free(queue);
    free(occ_first);
    free(occ);
    free(fill);
}

gm_status gm_eref_create(const gm_ebnf *g, gm_eref **out, gm_error *err)
{
    *out = NULL;
    for (uint32_t i = 0; i < g->nrules; i++)
        if (g->rules[i].lookahead != GM_EX_NONE)
            return gm_error_set(err, GM_ERR_UNSUPPORTED,
                                "earley_ref: rule '%s' has a lookahead assertion", g->rules[i].name);
    if (g->root == GM_EX_NONE || g->root >= g->nrules || g->rules[g->root].body == GM_EX_NONE)
        return gm_error_set(err, GM_ERR_GRAMMAR, "earley_ref: no root rule");
    gm_eref *r = xrealloc(NULL, sizeof *r);
    memset(r, 0, sizeof *r);
    r->eps = new_nt(r);
    add_prod(r, r->eps, NULL, 0);
    builder b = {.r = r, .g = g};
    b.node_sym = xrealloc(NULL, (g->nnodes ? g->nnodes : 1) * sizeof *b.node_sym);
    b.rule_nt = xrealloc(NULL, (g->nrules ? g->nrules : 1) * sizeof *b.rule_nt);
    for (uint32_t i = 0; i < g->nrules; i++)
        b.rule_nt[i] = new_nt(r);
    /* children come before their parents in the node array */
    for (uint32_t i = 0; i < g->nnodes; i++)
        b.node_sym[i] = build_node(&b, i);
    for (uint32_t i = 0; i < g->nrules; i++)
        if (g->rules[i].body != GM_EX_NONE)
            add_prod(r, b.rule_nt[i], &b.node_sym[g->rules[i].body], 1);
    uint32_t start = new_nt(r);
    r->start_prod = r->nprods;
    add_prod(r, start, &b.rule_nt[g->root], 1);
    free(b.node_sym);
    free(b.rule_nt);
    r->nullable = xrealloc(NULL, r->nnt);
    memset(r->nullable, 0, r->nnt);
    prune(r);
    if (r->plen[r->start_prod] == NEVER) {
        gm_eref_destroy(r);
        return gm_error_set(err, GM_ERR_GRAMMAR, "earley_ref: the root's language is empty");
    }
    r->pred_stamp = xrealloc(NULL, r->nnt * sizeof *r->pred_stamp);
    memset(r->pred_stamp, 0, r->nnt * sizeof *r->pred_stamp);
    *out = r;
    gm_eref_rollback(r, 0);
    return GM_OK;
}

void gm_eref_destroy(gm_eref *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; i < r->nterms; i++) {
        free(r->terms[i].lo);
        free(r->terms[i].hi);
        free(r->terms[i].text);
    }
    for (size_t i = 0; i < r->nsets_cap; i++) {
        free(r->sets[i].items);
        free(r->sets[i].slots);
        free(r->sets[i].wait);
        free(r->sets[i].scan);
    }
    free(r->sets);
    free(r->terms);
    free(r->plhs);
    free(r->pstart);
    free(r->plen);
    free(r->rhs);
    free(r->nt_first);
    free(r->nt_prods);
    free(r->nullable);
    free(r->pred_stamp);
    free(r);
}

/* ---- UTF-8, written out ------------------------------------------------------ */

/*
 * Classifies q[0..n) (n >= 1): 2 = one whole well-formed character (*cp),
 * 1 = the start of one, whose possible code points are [*lo, *hi],
 * 0 = not the start of any well-formed character.
 */
static int utf8_class(const uint8_t *q, int n, uint32_t *cp, uint32_t *lo, uint32_t *hi)
{
    uint8_t b0 = q[0], lo2 = 0x80, hi2 = 0xBF;
    int need;
    uint32_t minv, maxv;
    if (b0 < 0x80) {
        *cp = b0;
        return n == 1 ? 2 : 0;
    }
    if (b0 < 0xC2)
        return 0;
    if (b0 < 0xE0) {
        need = 2, minv = 0x80, maxv = 0x7FF;
    } else if (b0 < 0xF0) {
        need = 3, minv = 0x800, maxv = 0xFFFF;
        if (b0 == 0xE0)
            lo2 = 0xA0;
        if (b0 == 0xED)
            hi2 = 0x9F;
    } else if (b0 < 0xF5) {
        need = 4, minv = 0x10000, maxv = 0x10FFFF;
        if (b0 == 0xF0)
            lo2 = 0x90;
        if (b0 == 0xF4)
            hi2 = 0x8F;
    } else {
        return 0;
    }
    if (n > need)
        return 0;
    uint32_t v = b0 & (0x7Fu >> need);
    for (int i = 1; i < n; i++) {
        if (q[i] < 0x80 || q[i] > 0xBF || (i == 1 && (q[1] < lo2 || q[1] > hi2)))
            return 0;
        v = v << 6 | (q[i] & 0x3F);
    }
    if (n == need) {
        *cp = v;
        return 2;
    }
    int rem = 6 * (need - n);
    *lo = v << rem;
    *hi = v << rem | ((1u << rem) - 1);
    if (*lo < minv)
        *lo = minv;
    if (*hi > maxv)
        *hi = maxv;
    return *lo <= *hi ? 1 : 0;
}

/* Whether the set has a code point in [lo, hi]. */
static bool set_meets(const rterm *t, uint32_t lo, uint32_t hi)
{
    size_t a = 0, b = t->nr;
    while (a < b) { /* first range ending at or after lo */
        size_t m = a + (b - a) / 2;
        if (t->hi[m] < lo)
            a = m + 1;
        else
            b = m;
    }
    return a < t->nr && t->lo[a] <= hi;
}

/* ---- the Earley recognizer -------------------------------------------------- */

static uint64_t item_hash(const ritem *it)
{
    uint64_t h = it->prod * 0x9E3779B97F4A7C15ull;
    h ^= (it->dot + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
    h ^= (it->origin + 0x85EBCA77C2B2AE63ull) * 0x165667B19E3779F9ull;
    h ^= (it->partial + 0x27D4EB2F165667C5ull) * 0x94D049BB133111EBull;
    h ^= h >> 31;
    return h * 0xBF58476D1CE4E5B9ull;
}

static rset *get_set(gm_eref *r, size_t k)
{
    if (k >= r->nsets_cap) {
        size_t cap = r->nsets_cap ? r->nsets_cap * 2 : 64;
        while (cap <= k)
            cap *= 2;
        r->sets = xrealloc(r->sets, cap * sizeof *r->sets);
        memset(r->sets + r->nsets_cap, 0, (cap - r->nsets_cap) * sizeof *r->sets);
        r->nsets_cap = cap;
    }
    return &r->sets[k];
}

static void set_reset(rset *s)
{
    s->n = s->nwait = s->nscan = 0;
    s->accept = false;
    if (++s->gen == 0) { /* stale slots could look current: clear them */
        memset(s->slots, 0, s->nslots * sizeof *s->slots);
        s->gen = 1;
    }
}

static void set_rehash(rset *s)
{
    uint32_t n = s->nslots ? s->nslots * 2 : 64;
    free(s->slots);
    s->slots = xrealloc(NULL, n * sizeof *s->slots);
    memset(s->slots, 0, n * sizeof *s->slots);
    s->nslots = n;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t j = (uint32_t)item_hash(&s->items[i]) & (n - 1);
        while ((uint32_t)(s->slots[j] >> 32) == s->gen)
            j = (j + 1) & (n - 1);
        s->slots[j] = (uint64_t)s->gen << 32 | (i + 1);
    }
}

static void add_item(rset *s, uint32_t prod, uint32_t dot, uint32_t origin, uint32_t partial)
{
    ritem it = {prod, dot, origin, partial};
    if ((s->n + 1) * 2 > s->nslots)
        set_rehash(s);
    uint32_t mask = s->nslots - 1, j = (uint32_t)item_hash(&it) & mask;
    while ((uint32_t)(s->slots[j] >> 32) == s->gen) {
        const ritem *o = &s->items[(uint32_t)s->slots[j] - 1];
        if (o->prod == prod && o->dot == dot && o->origin == origin && o->partial == partial)
            return;
        j = (j + 1) & mask;
    }
    GROW(s->items, s->n, s->cap);
    s->items[s->n] = it;
    s->slots[j] = (uint64_t)s->gen << 32 | (s->n + 1);
    s->n++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Predict and complete over set k until nothing changes; then index it for later completions. */
static void closure(gm_eref *r, size_t k)
{
    rset *s = &r->sets[k];
    if (++r->stamp == 0) {
        memset(r->pred_stamp, 0, r->nnt * sizeof *r->pred_stamp);
        r->stamp = 1;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        ritem it = s->items[i];
        uint32_t len = r->plen[it.prod];
        if (it.partial) {
            GROW(s->scan, s->nscan, s->scan_cap);
            s->scan[s->nscan++] = i;
            continue;
        }
        if (it.dot == len) {
            if (it.prod == r->start_prod)
                s->accept = true;
            /* origin == k: the nonterminal derived "", and every item of set k
               waiting on it has stepped over it already (nullable, below) */
            if (it.origin < k) {
                uint32_t lhs = r->plhs[it.prod];
                const rset *o = &r->sets[it.origin];
                uint64_t key = (uint64_t)lhs << 32;
                size_t a = 0, b = o->nwait;
                while (a < b) {
                    size_t m = a + (b - a) / 2;
                    if (o->wait[m] < key)
                        a = m + 1;
                    else
                        b = m;
                }
                for (; a < o->nwait && (o->wait[a] >> 32) == lhs; a++) {
                    const ritem *w = &o->items[(uint32_t)o->wait[a]];
                    add_item(s, w->prod, w->dot + 1, w->origin, 0);
                    s = &r->sets[k]; /* (add_item never moves sets, only items) */
                }
            }
            continue;
        }
        uint32_t sym = r->rhs[r->pstart[it.prod] + it.dot];
        if (sym & TERM) {
            GROW(s->scan, s->nscan, s->scan_cap);
            s->scan[s->nscan++] = i;
            continue;
        }
        GROW(s->wait, s->nwait, s->wait_cap);
        s->wait[s->nwait++] = (uint64_t)sym << 32 | i;
        if (r->pred_stamp[sym] != r->stamp) {
            r->pred_stamp[sym] = r->stamp;
            for (uint32_t j = r->nt_first[sym]; j < r->nt_first[sym + 1]; j++)
                add_item(s, r->nt_prods[j], 0, (uint32_t)k, 0);
        }
        if (r->nullable[sym])
            add_item(s, it.prod, it.dot + 1, it.origin, 0);
    }
    if (s->nwait > 1)
        qsort(s->wait, s->nwait, sizeof *s->wait, cmp_u64);
}

/* Builds set k + 1 from set k and one input symbol (a byte, or a special token's text). */
static bool step(gm_eref *r, size_t k, int byte, const uint8_t *text, size_t tlen)
{
    rset *dst = get_set(r, k + 1);
    rset *src = &r->sets[k];
    set_reset(dst);
    for (uint32_t j = 0; j < src->nscan; j++) {
        const ritem *it = &src->items[src->scan[j]];
        uint32_t sym = r->rhs[r->pstart[it->prod] + it->dot];
        const rterm *t = &r->terms[sym & ~TERM];
        if (byte < 0) {
            if (t->kind == T_TOKEN && !it->partial && t->len == tlen && memcmp(t->text, text, tlen) == 0)
                add_item(dst, it->prod, it->dot + 1, it->origin, 0);
            continue;
        }
        if (t->kind == T_BYTES) {
            if (t->bits[byte >> 5] >> (byte & 31) & 1)
                add_item(dst, it->prod, it->dot + 1, it->origin, 0);
        } else if (t->kind == T_CPSET) {
            uint8_t q[4];
            int n = (int)(it->partial >> 24);
            for (int i = 0; i < n; i++)
                q[i] = (uint8_t)(it->partial >> (16 - 8 * i));
            q[n++] = (uint8_t)byte;
            uint32_t cp = 0, lo = 0, hi = 0;
            int c = utf8_class(q, n, &cp, &lo, &hi);
            if (c == 2 && set_meets(t, cp, cp)) {
                add_item(dst, it->prod, it->dot + 1, it->origin, 0);
            } else if (c == 1 && set_meets(t, lo, hi)) {
                uint32_t packed = (uint32_t)n << 24;
                for (int i = 0; i < n; i++)
                    packed |= (uint32_t)q[i] << (16 - 8 * i);
                add_item(dst, it->prod, it->dot, it->origin, packed);
            }
        }
    }
    if (dst->n == 0)
        return false;
    closure(r, k + 1);
    return true;
}

/* Steps over ext from the committed prefix; the number of sets built (== len when viable). */
static size_t extend(gm_eref *r, const uint8_t *ext, size_t len)
{
    size_t k = r->ncommit - 1;
    for (size_t i = 0; i < len; i++)
        if (!step(r, k + i, ext[i], NULL, 0))
            return i;
    return len;
}

bool gm_eref_feed(gm_eref *r, const void *bytes, size_t len)
{
    if (extend(r, bytes, len) < len)
        return false;
    r->ncommit += len;
    return true;
}

bool gm_eref_feed_special(gm_eref *r, const void *text, size_t len)
{
    if (!step(r, r->ncommit - 1, -1, text, len))
        return false;
    r->ncommit++;
    return true;
}

bool gm_eref_accepting(const gm_eref *r) { return r->sets[r->ncommit - 1].accept; }

size_t gm_eref_length(const gm_eref *r) { return r->ncommit - 1; }

void gm_eref_rollback(gm_eref *r, size_t length)
{
    if (r->ncommit == 0 || length == 0) {
        rset *s = get_set(r, 0);
        set_reset(s);
        add_item(s, r->start_prod, 0, 0, 0);
        closure(r, 0);
        r->ncommit = 1;
    } else if (length + 1 < r->ncommit) {
        r->ncommit = length + 1;
    }
}

bool gm_eref_try(gm_eref *r, const void *ext, size_t len, bool *complete)
{
    bool ok = extend(r, ext, len) == len;
    if (complete)
        *complete = ok && r->sets[r->ncommit - 1 + len].accept;
    return ok;
}

bool gm_eref_try_special(gm_eref *r, const void *text, size_t len, bool *complete)
{
    bool ok = step(r, r->ncommit - 1, -1, text, len);
    if (complete)
        *complete = ok && r->sets[r->ncommit].accept;
    return ok;
}

typedef struct sort_ctx {
    const uint8_t *const *ext;
    const uint32_t *len;
} sort_ctx;

static _Thread_local sort_ctx sctx;

static int cmp_ext(const void *a, const void *b)
{
    uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
    uint32_t li = sctx.len[i], lj = sctx.len[j], m = li < lj ? li : lj;
    int c = m ? memcmp(sctx.ext[i], sctx.ext[j], m) : 0;
    if (c)
        return c;
    return li < lj ? -1 : li > lj;
}

void gm_eref_try_all(gm_eref *r, const uint8_t *const *ext, const uint32_t *len, size_t n,
                     uint8_t *viable, uint8_t *complete)
{
    uint32_t *order = xrealloc(NULL, (n ? n : 1) * sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    sctx = (sort_ctx){ext, len};
    qsort(order, n, sizeof *order, cmp_ext);
    size_t base = r->ncommit - 1;
    const uint8_t *prev = NULL;
    size_t built = 0;          /* sets base+1 .. base+built hold prev[0 .. built) */
    size_t dead = SIZE_MAX;    /* prev[0 .. dead) leads out of the language */
    for (size_t k = 0; k < n; k++) {
        uint32_t i = order[k];
        const uint8_t *t = ext[i];
        size_t l = len[i], lcp = 0;
        while (prev && lcp < l && lcp < built && t[lcp] == prev[lcp])
            lcp++;
        if (dead != SIZE_MAX && dead <= lcp) {
            viable[i] = 0;
            if (complete)
                complete[i] = 0;
            continue; /* a dead prefix of prev is a prefix of t */
        }
        dead = SIZE_MAX;
        built = lcp;
        while (built < l) {
            if (!step(r, base + built, t[built], NULL, 0)) {
                dead = built + 1;
                break;
            }
            built++;
        }
        prev = t;
        viable[i] = built == l;
        if (complete)
            complete[i] = built == l && r->sets[base + l].accept;
    }
    free(order);
}

void gm_eref_stats(const gm_eref *r, size_t *nonterminals, size_t *productions, size_t *items)
{
    *nonterminals = r->nnt;
    size_t p = 0;
    for (uint32_t i = 0; i < r->nprods; i++)
        p += r->plen[i] != NEVER;
    *productions = p;
    *items = r->sets[r->ncommit - 1].n;
}
