/*
 * Numbers and strings: numeric ranges with multipleOf (numrange.c does the
 * digit work), strings with lengths, patterns and formats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/ecma_regex.h"
#include "schema/emit.h"
#include "schema/formats.h"
#include "schema/numrange.h"
#include "schema/strdfa.h"

/* ---- numbers ---- */

#define MAX_ENUMERATED 1000 /* multiples listed one by one in a bounded range */
#define MAX_MODULUS 1024    /* divisibility automata for unbounded ranges (k rules; XGrammar's
                               bound for an integer multipleOf) */

static bool fits_i64(const gm_dec *d, int64_t *out)
{
    char buf[64];
    if (!gm_dec_is_integer(d) || gm_dec_int_digits(d, buf, sizeof buf) || strlen(buf) > 17)
        return false;
    int64_t v = 0;
    for (const char *p = buf; *p; p++)
        v = v * 10 + (*p - '0');
    *out = d->neg ? -v : v;
    return true;
}

/* Integer bounds of the shape as an inclusive int64 range (false when they do not fit). */
static bool int_bounds(const sc_shape *sh, int64_t *lo, int64_t *hi)
{
    if (!sh->lo.set || !sh->hi.set)
        return false;
    /* ceil / floor through the integer part, then exclusivity */
    gm_dec l = sh->lo.v, h = sh->hi.v;
    char buf[64];
    if (gm_dec_int_digits(&l, buf, sizeof buf) || strlen(buf) > 17 ||
        gm_dec_int_digits(&h, buf, sizeof buf) || strlen(buf) > 17)
        return false;
    double dl = gm_dec_to_double(&l), dh = gm_dec_to_double(&h);
    int64_t a = (int64_t)dl, b = (int64_t)dh; /* truncation toward zero; fixed below */
    gm_dec t;
    gm_dec_from_int(&t, a);
    while (gm_dec_cmp(&t, &l) < 0 || (sh->lo.excl && gm_dec_cmp(&t, &l) == 0))
        gm_dec_from_int(&t, ++a);
    gm_dec_from_int(&t, a - 1);
    while (gm_dec_cmp(&t, &l) > 0 || (!sh->lo.excl && gm_dec_cmp(&t, &l) == 0))
        gm_dec_from_int(&t, --a - 1);
    gm_dec_from_int(&t, b);
    while (gm_dec_cmp(&t, &h) > 0 || (sh->hi.excl && gm_dec_cmp(&t, &h) == 0))
        gm_dec_from_int(&t, --b);
    gm_dec_from_int(&t, b + 1);
    while (gm_dec_cmp(&t, &h) < 0 || (!sh->hi.excl && gm_dec_cmp(&t, &h) == 0))
        gm_dec_from_int(&t, ++b + 1);
    *lo = a;
    *hi = b;
    return true;
}

/* The texts of the single value v (as a decimal string). */
static uint32_t value_texts(sctx *c, const gm_dec *v, bool integer, bool int_frac)
{
    sc_numspec sp = {0};
    sp.max_frac = -1;
    sp.has_lo = sp.has_hi = true;
    sp.lo = sp.hi = *v;
    sp.integer = integer;
    sp.int_frac = int_frac;
    return sc_numrange(&c->b, &sp);
}

/*
 * Left-linear rules for the positive integers that are multiples of k: the REF to R_0.
 * R_r derives the numbers (no leading zero) whose remainder mod k is r: a first digit d
 * with d mod k = r, or R_p followed by a digit d with (10p + d) mod k = r. Each (p, d)
 * pair feeds one R_r, so the rules hold 10k alternatives at most, built in O(10k).
 */
static uint32_t multiples_of(sctx *c, uint32_t k, uint32_t node)
{
    gm_irb *b = &c->b;
    uint32_t *rules = gm_mem_alloc(c->mem, k * sizeof *rules);
    /* by_rule[r]: the alternatives of R_r, as (p, digit set) pairs; p = k for a first digit */
    typedef struct { uint32_t p; uint32_t bits[8]; } step;
    typedef GM_VEC(step) step_vec;
    step_vec *by_rule = gm_mem_alloc(c->mem, k * sizeof *by_rule);
    if (!rules || !by_rule) {
        gm_mem_free(c->mem, rules);
        gm_mem_free(c->mem, by_rule);
        return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    }
    memset(by_rule, 0, k * sizeof *by_rule);
    char hint[32];
    snprintf(hint, sizeof hint, "mod%u_", k);
    for (uint32_t r = 0; r < k && b->st == GM_OK; r++) {
        rules[r] = gm_ebnf_fresh_rule(c->g, hint);
        if (rules[r] == GM_EX_NONE)
            gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    }
    for (uint32_t p = 0; p <= k && b->st == GM_OK; p++) {
        for (uint32_t d = p == k ? 1 : 0; d <= 9; d++) {
            uint32_t r = (uint32_t)((p == k ? d : 10 * (uint64_t)p + d) % k);
            step_vec *v = &by_rule[r];
            if (!v->n || v->v[v->n - 1].p != p) {
                step s = {p, {0}};
                if (gm_vec_push(c->mem, v, s)) {
                    gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
                    break;
                }
            }
            v->v[v->n - 1].bits[('0' + d) >> 5] |= 1u << (('0' + d) & 31);
        }
    }
    GM_VEC(uint32_t) alts = {0};
    for (uint32_t r = 0; r < k && b->st == GM_OK; r++) {
        alts.n = 0;
        for (size_t i = 0; i < by_rule[r].n && b->st == GM_OK; i++) {
            const step *s = &by_rule[r].v[i];
            uint32_t digits = gm_irb_byteset(b, s->bits);
            uint32_t e = s->p == k ? digits : gm_irb_seq2(b, gm_irb_ref(b, rules[s->p]), digits);
            if (gm_vec_push(c->mem, &alts, e))
                gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        }
        uint32_t body = gm_irb_alt(b, alts.v, alts.n);
        if (b->st == GM_OK)
            c->g->rules[rules[r]].body = body;
    }
    gm_vec_free(c->mem, &alts);
    for (uint32_t r = 0; r < k; r++)
        gm_vec_free(c->mem, &by_rule[r]);
    gm_mem_free(c->mem, by_rule);
    uint32_t r0 = b->st == GM_OK ? gm_irb_ref(b, rules[0]) : GM_EX_NONE;
    gm_mem_free(c->mem, rules);
    (void)node;
    return r0;
}

/* The relaxation of an integer multipleOf: the integers of the shape's range, multiples or not. */
static uint32_t range_without_multiple(sctx *c, const sc_shape *sh, bool frac_zero)
{
    sc_numspec sp = {0};
    sp.max_frac = -1;
    sp.integer = true;
    sp.int_frac = frac_zero;
    sp.has_lo = sh->lo.set, sp.lo_excl = sh->lo.excl, sp.lo = sh->lo.v;
    sp.has_hi = sh->hi.set, sp.hi_excl = sh->hi.excl, sp.hi = sh->hi.v;
    return sc_numrange(&c->b, &sp);
}

/* Multiples of the integer m (> 1) within the shape's bounds. */
static uint32_t int_multiples(sctx *c, sc_shape *sh, const gm_dec *m, uint32_t node, bool integer,
                              bool int_frac)
{
    gm_irb *b = &c->b;
    int64_t k, lo, hi;
    bool frac_zero = int_frac || !integer; /* 10.0 is a multiple of 5 */
    if (!fits_i64(m, &k) || k <= 0)
        return sc_relax(c, node, "multipleOf", "a multipleOf too large to enforce")
                   ? range_without_multiple(c, sh, frac_zero) : GM_EX_NONE;
    if (int_bounds(sh, &lo, &hi)) {
        if (hi < lo)
            return gm_irb_nothing(b);
        int64_t first = lo >= 0 ? (lo + k - 1) / k * k : -((-lo) / k * k);
        if (first < lo)
            first += k;
        uint64_t count = first > hi ? 0 : (uint64_t)((hi - first) / k) + 1;
        if (count <= MAX_ENUMERATED) {
            GM_VEC(uint32_t) alts = {0};
            for (int64_t v = first; v <= hi && b->st == GM_OK; v += k) {
                gm_dec d;
                gm_dec_from_int(&d, v);
                if (gm_vec_push(c->mem, &alts, value_texts(c, &d, true, frac_zero)))
                    gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
            }
            uint32_t r = gm_irb_alt(b, alts.v, alts.n);
            gm_vec_free(c->mem, &alts);
            return r;
        }
    }
    /* unbounded: a divisibility automaton, with bounds only at zero */
    bool lo_zero = sh->lo.set && gm_dec_is_zero(&sh->lo.v), hi_zero = sh->hi.set && gm_dec_is_zero(&sh->hi.v);
    if ((sh->lo.set && !lo_zero) || (sh->hi.set && !hi_zero) || k > MAX_MODULUS) {
        if (!sc_relax(c, node, "multipleOf", "multipleOf with a range that is too wide to list "
                      "(the range is kept, the divisibility is not)"))
            return GM_EX_NONE;
        return range_without_multiple(c, sh, frac_zero);
    }
    uint32_t pos = multiples_of(c, (uint32_t)k, node);
    uint32_t frac = frac_zero ? gm_irb_opt(b, gm_irb_seq2(b, gm_irb_lit(b, "."),
                                           gm_irb_repeat(b, gm_irb_lit(b, "0"), 1, GM_EX_INF)))
                              : gm_irb_empty(b);
    uint32_t zero = gm_irb_seq2(b, gm_irb_lit(b, "0"), frac);
    uint32_t nonzero = gm_irb_seq2(b, pos, frac);
    bool zero_ok = !(lo_zero && sh->lo.excl) && !(hi_zero && sh->hi.excl);
    uint32_t alts[4];
    size_t n = 0;
    if (zero_ok) {
        alts[n++] = zero;
        alts[n++] = gm_irb_seq2(b, gm_irb_lit(b, "-"), zero);
    }
    if (!hi_zero)
        alts[n++] = nonzero;
    if (!lo_zero)
        alts[n++] = gm_irb_seq2(b, gm_irb_lit(b, "-"), nonzero);
    return gm_irb_alt(b, alts, n);
}

static int cmp_dec(const void *x, const void *y)
{
    return gm_dec_cmp(x, y);
}

/* Numbers of the shape but the values a negated enum excludes: the intervals between them. */
static uint32_t number_with_holes(sctx *c, sc_shape *sh, const gm_dec *holes, size_t nh)
{
    gm_irb *b = &c->b;
    if (sh->mults.n && !sc_relax(c, sh->mults.v[0].node, "multipleOf", "multipleOf with values "
                                 "excluded by 'not'"))
        return GM_EX_NONE;
    uint32_t alts[65];
    size_t n = 0;
    sc_numspec sp = {0};
    sp.max_frac = -1;
    sp.integer = !(sh->types & T_NUM);
    sp.int_frac = !sh->int_strict;
    sp.has_lo = sh->lo.set, sp.lo_excl = sh->lo.excl, sp.lo = sh->lo.v;
    for (size_t i = 0; i <= nh; i++) {
        sc_numspec piece = sp;
        if (i < nh) {
            piece.has_hi = true;
            piece.hi_excl = true;
            piece.hi = holes[i];
        } else {
            piece.has_hi = sh->hi.set, piece.hi_excl = sh->hi.excl, piece.hi = sh->hi.v;
        }
        alts[n++] = sc_numrange(b, &piece);
        sp.has_lo = true;
        sp.lo_excl = true;
        if (i < nh)
            sp.lo = holes[i];
    }
    return gm_irb_alt(b, alts, n);
}

#define RX_NONE (UINT32_MAX - 1) /* decimal_multiples: not this shape */

/*
 * Multiples of m = a x 10^-s where a divides 10^t for some t <= s (0.5,
 * 0.25, 0.2, 0.125, ...), over ranges bounded at most at zero: the value
 * x 10^s is a multiple of a iff its last t digits are, and those are the
 * fraction digits s-t+1 .. s; later fraction digits are zeros. RX_NONE
 * when m or the range is not of that shape.
 */
static uint32_t decimal_multiples(sctx *c, sc_shape *sh, const gm_dec *m)
{
    gm_irb *b = &c->b;
    if (m->nd > 6 || m->exp >= 0)
        return RX_NONE;
    uint32_t a = 0, s = (uint32_t)-m->exp, t = 0;
    for (uint32_t i = 0; i < m->nd; i++)
        a = a * 10 + (uint32_t)(m->d[i] - '0');
    uint64_t p = 1;
    while (t <= s && p % a)
        p *= 10, t++;
    if (p % a || t > s || s > 12)
        return RX_NONE;
    bool lo_zero = sh->lo.set && gm_dec_is_zero(&sh->lo.v), hi_zero = sh->hi.set && gm_dec_is_zero(&sh->hi.v);
    if ((sh->lo.set && !lo_zero) || (sh->hi.set && !hi_zero))
        return RX_NONE;
    /* the fraction: s - t free digits, then a t-digit multiple of a (its trailing zeros
       optional), then zeros; or at most s - t digits (the rest are zeros) */
    uint32_t digit = gm_irb_byterange(b, '0', '9'), zero = gm_irb_lit(b, "0");
    GM_VEC(uint32_t) ws = {0};
    for (uint64_t w = 0; w < p && b->st == GM_OK; w += a) {
        char buf[32];
        snprintf(buf, sizeof buf, "%0*llu", (int)(t % 16), (unsigned long long)w);
        size_t n = strlen(buf);
        while (n > 0 && buf[n - 1] == '0')
            n--;
        if (n == 0)
            continue; /* all zeros: the short fractions below */
        if (gm_vec_push(c->mem, &ws, gm_irb_bytes(b, buf, n)))
            gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    }
    uint32_t tail = gm_irb_seq2(b, gm_irb_alt(b, ws.v, ws.n), gm_irb_repeat(b, zero, 0, GM_EX_INF));
    gm_vec_free(c->mem, &ws);
    uint32_t full = gm_irb_seq2(b, gm_irb_repeat(b, digit, s - t, s - t), tail);
    uint32_t shortf = s > t ? gm_irb_seq2(b, gm_irb_repeat(b, digit, 1, s - t), gm_irb_repeat(b, zero, 0, GM_EX_INF))
                            : gm_irb_repeat(b, zero, 1, GM_EX_INF);
    uint32_t frac = gm_irb_opt(b, gm_irb_seq2(b, gm_irb_lit(b, "."), gm_irb_alt2(b, full, shortf)));
    uint32_t nat = gm_irb_alt2(b, zero, gm_irb_seq2(b, gm_irb_byterange(b, '1', '9'),
                                                   gm_irb_repeat(b, digit, 0, GM_EX_INF)));
    uint32_t any = gm_irb_seq2(b, nat, frac); /* every multiple >= 0 */
    if (!lo_zero && !hi_zero)
        return gm_irb_seq2(b, gm_irb_opt(b, gm_irb_lit(b, "-")), any);
    if (lo_zero ? sh->lo.excl : sh->hi.excl)
        return RX_NONE; /* zero excluded: not this shape */
    /* a bound at zero: that side takes every magnitude, the other only zero's forms */
    uint32_t zeros = gm_irb_seq2(b, zero, gm_irb_opt(b, gm_irb_seq2(b, gm_irb_lit(b, "."),
                                                                    gm_irb_repeat(b, zero, 1, GM_EX_INF))));
    uint32_t minus = gm_irb_lit(b, "-");
    return lo_zero ? gm_irb_alt2(b, any, gm_irb_seq2(b, minus, zeros))
                   : gm_irb_alt2(b, gm_irb_seq2(b, minus, any), zeros);
}

uint32_t sc_emit_number(sctx *c, sc_shape *sh)
{
    if (sh->nonint) {
        if (!(sh->types & T_NUM))
            return gm_irb_nothing(&c->b);
        if ((sh->mults.n || sh->notenums.n) &&
            !sc_relax(c, sh->nodes.v[0], "not", "non-integer numbers with multipleOf or excluded values"))
            return GM_EX_NONE;
        sc_numspec sp = {0};
        sp.max_frac = -1;
        sp.nonint = true;
        sp.has_lo = sh->lo.set, sp.lo_excl = sh->lo.excl, sp.lo = sh->lo.v;
        sp.has_hi = sh->hi.set, sp.hi_excl = sh->hi.excl, sp.hi = sh->hi.v;
        return sc_numrange(&c->b, &sp);
    }
    gm_dec holes[64];
    size_t nh = 0;
    for (size_t i = 0; i < sh->notenums.n; i++)
        for (uint32_t j = 0; j < sh->notenums.v[i]->n; j++) {
            const gm_jv *x = sh->notenums.v[i]->u.items[j];
            if (x->kind != GM_JV_NUMBER)
                continue;
            if (nh == 64 || gm_dec_parse(&holes[nh], x->u.s, x->n)) {
                if (!sc_relax(c, sh->nodes.v[0], "not", "'not' of more than 64 numbers, or of numbers "
                              "too precise to compare"))
                    return GM_EX_NONE;
                continue;
            }
            nh++;
        }
    if (nh) {
        qsort(holes, nh, sizeof *holes, cmp_dec);
        size_t u = 0;
        for (size_t i = 0; i < nh; i++)
            if (!u || gm_dec_cmp(&holes[u - 1], &holes[i]))
                holes[u++] = holes[i];
        return number_with_holes(c, sh, holes, u);
    }
    bool integer = !(sh->types & T_NUM);
    bool int_frac = !sh->int_strict;
    sc_numspec sp = {0};
    sp.max_frac = -1;
    sp.integer = integer;
    sp.int_frac = int_frac;
    sp.has_lo = sh->lo.set, sp.lo_excl = sh->lo.excl, sp.lo = sh->lo.v;
    sp.has_hi = sh->hi.set, sp.hi_excl = sh->hi.excl, sp.hi = sh->hi.v;
    if (sh->mults.n) {
        const sc_mult *m = NULL;
        for (size_t i = 0; i < sh->mults.n && !m; i++) {
            bool all = true;
            for (size_t j = 0; j < sh->mults.n && all; j++)
                all = gm_dec_is_multiple(&sh->mults.v[i].m, &sh->mults.v[j].m) == 1;
            if (all)
                m = &sh->mults.v[i];
        }
        if (!m) {
            if (!sc_relax(c, sh->mults.v[0].node, "multipleOf", "several multipleOf values, none a "
                          "multiple of the others"))
                return GM_EX_NONE;
        } else if (gm_dec_is_integer(&m->m)) {
            if (m->m.nd == 1 && m->m.d[0] == '1' && m->m.exp == 0) {
                sp.integer = true;
                sp.int_frac = true; /* 5.0 is a multiple of 1 in every draft */
            } else {
                return int_multiples(c, sh, &m->m, m->node, integer, int_frac);
            }
        } else if (m->m.nd == 1 && m->m.d[0] == '1') {
            if (!integer)
                sp.max_frac = -m->m.exp; /* multipleOf 0.01: at most two decimals */
        } else {
            /* a x 10^-s with a > 1: scaled, an integer multiple problem; list it when bounded */
            int64_t lo, hi;
            if (!integer) {
                uint32_t r = decimal_multiples(c, sh, &m->m);
                if (r != RX_NONE)
                    return r;
            }
            if (!int_bounds(sh, &lo, &hi) || integer) {
                if (!sc_relax(c, m->node, "multipleOf", "a fractional multipleOf over an unbounded "
                              "range (the range is kept, the divisibility is not)"))
                    return GM_EX_NONE;
                return sc_numrange(&c->b, &sp);
            }
            /* enumerate the multiples q*m in [lo', hi'] with q integer */
            double mv = gm_dec_to_double(&m->m);
            double qlo = gm_dec_to_double(&sh->lo.v) / mv, qhi = gm_dec_to_double(&sh->hi.v) / mv;
            if (qhi - qlo > MAX_ENUMERATED) {
                if (!sc_relax(c, m->node, "multipleOf", "a fractional multipleOf over a wide range "
                              "(the range is kept, the divisibility is not)"))
                    return GM_EX_NONE;
                return sc_numrange(&c->b, &sp);
            }
            GM_VEC(uint32_t) alts = {0};
            for (int64_t q = (int64_t)qlo - 1; q <= (int64_t)qhi + 1 && c->b.st == GM_OK; q++) {
                /* v = q * m exactly: the digits of m times q, same exponent */
                gm_dec v;
                char buf[GM_DEC_MAX_DIGITS + 40];
                snprintf(buf, sizeof buf, "%lld%.*se%d", (long long)q, (int)m->m.nd, m->m.d, m->m.exp);
                /* q * digits: multiply through a double-free path */
                unsigned __int128 digits = 0;
                for (uint32_t i = 0; i < m->m.nd; i++)
                    digits = digits * 10 + (unsigned)(m->m.d[i] - '0');
                unsigned __int128 prod = digits * (unsigned __int128)(q < 0 ? -q : q);
                char pd[64];
                int pn = 0;
                char rev[64];
                do {
                    rev[pn++] = (char)('0' + (int)(prod % 10));
                    prod /= 10;
                } while (prod && pn < 60);
                for (int i = 0; i < pn; i++)
                    pd[i] = rev[pn - 1 - i];
                snprintf(buf, sizeof buf, "%s%.*se%d", q < 0 ? "-" : "", pn, pd, m->m.exp);
                if (gm_dec_parse(&v, buf, strlen(buf)))
                    continue;
                int cl = gm_dec_cmp(&v, &sh->lo.v), ch = gm_dec_cmp(&v, &sh->hi.v);
                if (cl < 0 || (cl == 0 && sh->lo.excl) || ch > 0 || (ch == 0 && sh->hi.excl))
                    continue;
                if (gm_vec_push(c->mem, &alts, value_texts(c, &v, false, true)))
                    gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
            }
            uint32_t r = gm_irb_alt(&c->b, alts.v, alts.n);
            gm_vec_free(c->mem, &alts);
            return r;
        }
    }
    if (!sp.has_lo && !sp.has_hi && sp.max_frac < 0) {
        if (!sp.integer)
            return sc_number(c);
        if (sp.int_frac)
            return sc_integer(c);
    }
    return sc_numrange(&c->b, &sp);
}

/* ---- strings ---- */

#define RX_FAILED UINT32_MAX

/*
 * node's language restricted to lengths [lo, hi] by rewriting counted
 * repetitions (a fixed-width body in a concatenation with one variable
 * part); RX_FAILED when the shape does not allow it.
 */
static uint32_t restrict_len(gm_regex *re, uint32_t node, uint32_t lo, uint32_t hi, int depth)
{
    uint32_t mn, mx;
    gm_regex_width(re, node, true, &mn, &mx);
    if (lo <= mn && (hi == UINT32_MAX || (mx != UINT32_MAX && mx <= hi)))
        return node;
    if (depth > 50)
        return RX_FAILED;
    /* a copy: adding nodes below may move re->nodes */
    const gm_rx_node xn = re->nodes[node], *x = &xn;
    if (x->kind == GM_RX_REPEAT) {
        uint32_t kid = re->kids[x->first];
        uint32_t a, b;
        gm_regex_width(re, kid, true, &a, &b);
        if (a != b || a == 0 || a == UINT32_MAX)
            return RX_FAILED;
        uint32_t nmin = x->min, nmax = x->max == GM_RX_INF ? UINT32_MAX : x->max;
        uint32_t need = (lo + a - 1) / a;
        if (need > nmin)
            nmin = need;
        if (hi != UINT32_MAX && hi / a < nmax)
            nmax = hi / a;
        uint32_t id = gm_regex_add_parent(re, GM_RX_REPEAT, &kid, 1);
        if (id == UINT32_MAX)
            return RX_FAILED;
        re->nodes[id].min = nmin;
        re->nodes[id].max = nmax == UINT32_MAX ? GM_RX_INF : nmax;
        if (nmax != UINT32_MAX && nmax < nmin) {
            gm_cpset none = {0};
            return gm_regex_add_set(re, &none);
        }
        return id;
    }
    if (x->kind == GM_RX_CONCAT) {
        uint32_t var = UINT32_MAX;
        uint64_t fixed = 0;
        for (uint32_t i = 0; i < x->count; i++) {
            uint32_t a, b;
            gm_regex_width(re, re->kids[x->first + i], true, &a, &b);
            if (a == b) {
                fixed += a;
            } else if (var == UINT32_MAX) {
                var = i;
            } else {
                return RX_FAILED;
            }
        }
        if (var == UINT32_MAX || fixed > lo + (uint64_t)UINT32_MAX)
            return RX_FAILED;
        uint32_t vlo = lo > fixed ? lo - (uint32_t)fixed : 0;
        uint32_t vhi = hi == UINT32_MAX ? UINT32_MAX : (hi >= fixed ? hi - (uint32_t)fixed : 0);
        if (hi != UINT32_MAX && hi < fixed) {
            gm_cpset none = {0};
            return gm_regex_add_set(re, &none);
        }
        uint32_t nv = restrict_len(re, re->kids[x->first + var], vlo, vhi, depth + 1);
        if (nv == RX_FAILED)
            return RX_FAILED;
        uint32_t kids[64];
        if (x->count > 64)
            return RX_FAILED;
        for (uint32_t i = 0; i < x->count; i++)
            kids[i] = i == var ? nv : re->kids[re->nodes[node].first + i];
        uint32_t id = gm_regex_add_parent(re, GM_RX_CONCAT, kids, x->count);
        return id == UINT32_MAX ? RX_FAILED : id;
    }
    if (x->kind == GM_RX_ALT) {
        uint32_t kids[64];
        if (x->count > 64)
            return RX_FAILED;
        for (uint32_t i = 0; i < x->count; i++) {
            kids[i] = restrict_len(re, re->kids[re->nodes[node].first + i], lo, hi, depth + 1);
            if (kids[i] == RX_FAILED)
                return RX_FAILED;
        }
        uint32_t id = gm_regex_add_parent(re, GM_RX_ALT, kids, x->count);
        return id == UINT32_MAX ? RX_FAILED : id;
    }
    return RX_FAILED;
}

/*
 * Strings through a string automaton (note [string automata]): the
 * patterns and formats must match, the length must fit, the excluded
 * strings and the negated patterns must not match. Past a limit of the
 * automaton: *too_large, and the limit named in why[0..cap).
 */
static uint32_t string_automaton(sctx *c, sc_shape *sh, sc_pattern **pats, size_t np, uint32_t lo,
                                 uint32_t hi, bool *too_large, char *why, size_t cap)
{
    gm_irb *b = &c->b;
    sc_lang langs[SC_SDFA_MAX_PARTS];
    size_t n = 0;
    uint32_t want = 0;
    gm_regex re;
    gm_regex_init(&re, c->mem);
    *too_large = false;
    for (size_t i = 0; i < np && n < SC_SDFA_MAX_PARTS; i++) {
        gm_regex *pr = sc_pattern_regex(pats[i]);
        want |= 1u << n;
        langs[n++] = (sc_lang){pr, pr->root};
    }
    if (lo > 0 || hi != UINT32_MAX) {
        uint32_t root = sc_regex_length(&re, lo, hi);
        if (root == UINT32_MAX) {
            gm_regex_free(&re);
            return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
        }
        want |= 1u << n;
        langs[n++] = (sc_lang){&re, root};
    }
    GM_VEC(const char *) words = {0};
    GM_VEC(uint32_t) lens = {0};
    for (size_t i = 0; i < sh->notenums.n; i++) {
        const gm_jv *l = sh->notenums.v[i];
        for (uint32_t j = 0; j < l->n; j++)
            if (l->u.items[j]->kind == GM_JV_STRING &&
                (gm_vec_push(c->mem, &words, l->u.items[j]->u.s) || gm_vec_push(c->mem, &lens, l->u.items[j]->n))) {
                gm_vec_free(c->mem, &words);
                gm_vec_free(c->mem, &lens);
                gm_regex_free(&re);
                return gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
            }
    }
    if (words.n) {
        uint32_t root = sc_regex_words(&re, words.v, lens.v, words.n);
        if (root != UINT32_MAX && n < SC_SDFA_MAX_PARTS)
            langs[n++] = (sc_lang){&re, root};
    }
    gm_vec_free(c->mem, &words);
    gm_vec_free(c->mem, &lens);
    for (size_t i = 0; i < sh->notpats.n && n < SC_SDFA_MAX_PARTS; i++) {
        const sc_strc *st = &sh->notpats.v[i];
        sc_pattern *p = sc_pattern_get(c, st->node, "not", st->value->u.s, st->value->n, 0);
        if (!p) {
            gm_regex_free(&re);
            return GM_EX_NONE;
        }
        langs[n++] = (sc_lang){sc_pattern_regex(p), sc_pattern_regex(p)->root};
    }
    sc_sdfa a;
    uint32_t r = GM_EX_NONE;
    if (sc_sdfa_product(c, langs, n, &a) == GM_OK) {
        uint32_t mask = n >= 32 ? UINT32_MAX : (1u << n) - 1;
        r = sc_quoted(c, sc_sdfa_emit(c, &a, mask, want, "str"));
        sc_sdfa_free(c, &a);
    } else if (c->st == GM_ERR_LIMIT) {
        snprintf(why, cap, "the string constraints combined in one automaton: %.300s", c->err->message);
        c->st = GM_OK;
        gm_error_clear(c->err);
        *too_large = true;
    }
    gm_regex_free(&re);
    return r;
}

uint32_t sc_emit_string(sctx *c, sc_shape *sh)
{
    gm_irb *b = &c->b;
    sc_pattern *pats[SC_SDFA_MAX_PARTS];
    size_t np = 0;
    for (size_t i = 0; i < sh->strs.n; i++) {
        const sc_strc *s = &sh->strs.v[i];
        sc_pattern *p = NULL;
        if (s->kw[0] == 'p') {
            p = sc_pattern_get(c, s->node, "pattern", s->value->u.s, s->value->n, 0);
        } else {
            const sc_format *f = sc_format_find(s->value->u.s);
            if (!f) {
                sc_warn(c, s->node, "format", "unknown format '%s' ignored (an annotation)",
                        s->value->u.s);
                continue;
            }
            if (f->approximate) {
                char why[160];
                snprintf(why, sizeof why, "the format '%s' is checked only approximately", f->name);
                if (!sc_relax(c, s->node, "format", why))
                    return GM_EX_NONE;
            }
            p = sc_pattern_get(c, s->node, "format", f->regex, strlen(f->regex), GM_ECMA_WHOLE);
        }
        if (!p)
            return GM_EX_NONE;
        if (np == SC_SDFA_MAX_PARTS - 3)
            return gm_irb_fail(b, GM_ERR_LIMIT, "more than %d patterns and formats on one string",
                               SC_SDFA_MAX_PARTS - 3);
        pats[np++] = p;
    }
    uint32_t lo = sh->min_len, hi = sh->max_len;
    if (hi != UINT32_MAX && lo > hi)
        return gm_irb_nothing(b);
    bool excluded = sh->notpats.n > 0;
    for (size_t i = 0; i < sh->notenums.n && !excluded; i++)
        for (uint32_t j = 0; j < sh->notenums.v[i]->n && !excluded; j++)
            excluded = sh->notenums.v[i]->u.items[j]->kind == GM_JV_STRING;
    if (np == 0 && !excluded) {
        if (lo == 0 && hi == UINT32_MAX)
            return sc_string(c);
        return sc_quoted(c, gm_irb_repeat(b, sc_char(c), lo, hi == UINT32_MAX ? GM_EX_INF : hi));
    }
    if (np == 1 && !excluded) {
        gm_regex *re = sc_pattern_regex(pats[0]);
        uint32_t root = lo > 0 || hi != UINT32_MAX ? restrict_len(re, re->root, lo, hi, 0) : re->root;
        if (root != RX_FAILED)
            return sc_quoted(c, gm_irb_json_regex(b, re, root));
    }
    /* several constraints: their product */
    bool too_large = false;
    uint32_t len_hi = hi;
    if (hi != UINT32_MAX && hi > 2000) {
        /* lengths past 2000 cost too many automaton states: keep them when one pattern
           allows it (restrict_len), else relax the length */
        if (!sc_relax(c, sh->len_node, "maxLength", "a length bound past 2000 together with "
                      "several patterns, formats or exclusions"))
            return GM_EX_NONE;
        len_hi = UINT32_MAX;
    }
    char why[400];
    uint32_t r = string_automaton(c, sh, pats, np, lo > 2000 ? 0 : lo, len_hi, &too_large, why, sizeof why);
    if (!too_large)
        return r;
    /* lenient: the first pattern is kept */
    if (!sc_relax_limit(c, np ? sh->strs.v[0].node : sh->len_node, np ? sh->strs.v[0].kw : "maxLength",
                        why))
        return GM_EX_NONE;
    if (!np)
        return sc_string(c);
    gm_regex *re = sc_pattern_regex(pats[0]);
    return sc_quoted(c, gm_irb_json_regex(b, re, re->root));
}
