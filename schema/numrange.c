/*
 * Exact digit-range grammars for minimum / maximum / exclusive* and for
 * multipleOf 10^-s.
 *
 * note [number ranges]
 * A value splits into its sign and its magnitude; the magnitude's text is
 * an integer part without leading zeros and an optional fraction. For an
 * interval [L, H] of magnitudes, with L = Li.Lf and H = Hi.Hf:
 *   - integer parts strictly between Li and Hi take any fraction; their
 *     language is the classic digit-range split by length, then digit by
 *     digit while the prefix equals a bound's prefix (same_len);
 *   - integer part Li takes fractions >= Lf, Hi fractions <= Hf, compared
 *     digit by digit as strings padded with zeros (frac_node: each side of
 *     the comparison is FREE, TIGHT (equal so far), or its exhausted form:
 *     NZ "some nonzero digit must come" for an exclusive lower bound, ZERO
 *     "only zeros may come" for an upper one);
 *   - zero is "0", "0.00", and also "-0", "-0.0" when 0 is in the interval.
 * Integers (type integer) are the integer parts of [ceil L, floor H]
 * followed, from draft 6 on, by an optional zero fraction ("5.0" is the
 * integer 5). Exponents are allowed where they cannot move a value across a
 * bound: on a side whose magnitudes are [0, inf) or (0, inf), that is for
 * unbounded numbers and for bounds at zero (minimum: 0, exclusiveMinimum:
 * 0). Elsewhere numbers are written without exponent.
 */
#include <string.h>

#include "schema/numrange.h"

#define MAXD (SC_NUM_MAX_DIGITS + 2)

typedef enum side { FREE, TIGHT, NZ, ZERO, DEAD } side;

typedef struct nr {
    gm_irb *b;
    int32_t max_frac;
    bool nonint;     /* the fraction must hold a nonzero digit */
} nr;

static uint32_t drange(nr *r, char lo, char hi)
{
    if (lo > hi)
        return gm_irb_nothing(r->b);
    return gm_irb_byterange(r->b, (uint8_t)lo, (uint8_t)hi);
}

static uint32_t digits(nr *r, uint32_t min, uint32_t max)
{
    return gm_irb_repeat(r->b, drange(r, '0', '9'), min, max);
}

static uint32_t zeros(nr *r, uint32_t min)
{
    return gm_irb_repeat(r->b, gm_irb_lit(r->b, "0"), min, GM_EX_INF);
}

/* Remaining significant fraction positions from position i (UINT32_MAX: unlimited). */
static uint32_t room(const nr *r, uint32_t i)
{
    if (r->max_frac < 0)
        return UINT32_MAX;
    return (uint32_t)r->max_frac > i ? (uint32_t)r->max_frac - i : 0;
}

/* Any digits from position i (nonempty when need). */
static uint32_t any_frac(nr *r, uint32_t i, bool need)
{
    uint32_t k = room(r, i);
    if (k == UINT32_MAX)
        return digits(r, need ? 1 : 0, GM_EX_INF);
    if (k == 0)
        return zeros(r, need ? 1 : 0);
    return gm_irb_seq2(r->b, digits(r, need ? 1 : 0, k), zeros(r, 0));
}

/* Digits from position i holding some nonzero digit. */
static uint32_t nz_frac(nr *r, uint32_t i)
{
    uint32_t k = room(r, i);
    if (k == UINT32_MAX)
        return gm_irb_seq3(r->b, zeros(r, 0), drange(r, '1', '9'), digits(r, 0, GM_EX_INF));
    if (k == 0)
        return gm_irb_nothing(r->b);
    return gm_irb_alt2(r->b, gm_irb_seq2(r->b, drange(r, '1', '9'), any_frac(r, i + 1, false)),
                       gm_irb_seq2(r->b, gm_irb_lit(r->b, "0"), nz_frac(r, i + 1)));
}

/*
 * Fraction digits from position i under the comparison states (note
 * [number ranges]); x / y are the bounds' fraction digits (NUL-terminated).
 */
static uint32_t frac_node(nr *r, uint32_t i, const char *x, bool xe, side lo, const char *y, bool ye,
                          side hi, bool need)
{
    if (lo == TIGHT && !x[i])
        lo = xe ? NZ : FREE;
    if (hi == TIGHT && !y[i])
        hi = ye ? DEAD : ZERO;
    if (hi == DEAD)
        return gm_irb_nothing(r->b);
    if (lo != TIGHT && hi != TIGHT) {
        if (lo == FREE)
            return hi == ZERO ? zeros(r, need ? 1 : 0) : any_frac(r, i, need);
        return hi == ZERO ? gm_irb_nothing(r->b) : nz_frac(r, i);
    }
    char lo_d = lo == TIGHT ? x[i] : '0';
    char hi_d = hi == TIGHT ? y[i] : hi == ZERO ? '0' : '9';
    if (room(r, i) == 0 && hi_d > '0')
        hi_d = '0';
    uint32_t alts[4];
    size_t n = 0;
    if (!need && lo == FREE)
        alts[n++] = gm_irb_empty(r->b);
    /* digits d in [lo_d, hi_d], grouped by the states they lead to */
    char d = lo_d;
    while (d <= hi_d && r->b->st == GM_OK) {
        side nlo = (lo == TIGHT && d == lo_d) ? TIGHT : (lo == NZ && d == '0') ? NZ : FREE;
        side nhi = (hi == TIGHT && d == hi_d) ? TIGHT : hi == ZERO ? ZERO : FREE;
        char e = d;
        /* extend over digits leading to the same states */
        while (e + 1 <= hi_d) {
            char f = (char)(e + 1);
            side flo = (lo == TIGHT && f == lo_d) ? TIGHT : (lo == NZ && f == '0') ? NZ : FREE;
            side fhi = (hi == TIGHT && f == hi_d) ? TIGHT : hi == ZERO ? ZERO : FREE;
            if (flo != nlo || fhi != nhi)
                break;
            e = f;
        }
        alts[n++] = gm_irb_seq2(r->b, drange(r, d, e), frac_node(r, i + 1, x, xe, nlo, y, ye, nhi, false));
        d = (char)(e + 1);
        if (n == 4 && d <= hi_d) {
            uint32_t merged = gm_irb_alt(r->b, alts, n);
            n = 0;
            alts[n++] = merged;
        }
    }
    return gm_irb_alt(r->b, alts, n);
}

/* The fraction part ("" or "." digits) of values with a fixed integer part. x, y: NULL = no bound. */
static uint32_t frac_text(nr *r, const char *x, bool xe, const char *y, bool ye)
{
    static const char none[] = "";
    bool zero_ok = (!x || (!x[0] && !xe)) && (!y || y[0] || !ye) && !r->nonint;
    side lo = x ? TIGHT : FREE;
    if (r->nonint && !(x && x[0]))
        lo = NZ; /* a fraction above a nonzero bound is nonzero anyway */
    uint32_t digs = frac_node(r, 0, x ? x : none, xe, lo, y ? y : none, ye, y ? TIGHT : FREE, true);
    uint32_t dot = gm_irb_seq2(r->b, gm_irb_lit(r->b, "."), digs);
    return zero_ok ? gm_irb_alt2(r->b, gm_irb_empty(r->b), dot) : dot;
}

/* Integer strings of length L between lo and hi (both of length L) from position pos. */
static uint32_t same_len(nr *r, const char *lo, const char *hi, size_t pos, bool tl, bool th, size_t L)
{
    if (pos == L)
        return gm_irb_empty(r->b);
    /* a bound whose remaining digits are all 0 (lower) or all 9 (upper) constrains nothing */
    if (tl && strspn(lo + pos, "0") == L - pos)
        tl = false;
    if (th && strspn(hi + pos, "9") == L - pos)
        th = false;
    if (!tl && !th)
        return digits(r, (uint32_t)(L - pos), (uint32_t)(L - pos));
    char lo_d = tl ? lo[pos] : '0', hi_d = th ? hi[pos] : '9';
    if (pos + 1 == L)
        return drange(r, lo_d, hi_d);
    if (tl && th && lo_d == hi_d)
        return gm_irb_seq2(r->b, drange(r, lo_d, lo_d), same_len(r, lo, hi, pos + 1, true, true, L));
    uint32_t alts[3];
    size_t n = 0;
    if (tl)
        alts[n++] = gm_irb_seq2(r->b, drange(r, lo_d, lo_d), same_len(r, lo, hi, pos + 1, true, false, L));
    char a = (char)(lo_d + (tl ? 1 : 0)), z = (char)(hi_d - (th ? 1 : 0));
    if (a <= z)
        alts[n++] = gm_irb_seq2(r->b, drange(r, a, z), digits(r, (uint32_t)(L - pos - 1), (uint32_t)(L - pos - 1)));
    if (th)
        alts[n++] = gm_irb_seq2(r->b, drange(r, hi_d, hi_d), same_len(r, lo, hi, pos + 1, false, true, L));
    return gm_irb_alt(r->b, alts, n);
}

static int cmp_int(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb)
        return la < lb ? -1 : 1;
    int c = strcmp(a, b);
    return c < 0 ? -1 : c > 0;
}

/* Integer strings (no leading zeros) in [a, b]; b NULL: unbounded. */
static uint32_t int_range(nr *r, const char *a, const char *b)
{
    if (b && cmp_int(a, b) > 0)
        return gm_irb_nothing(r->b);
    size_t la = strlen(a), lb = b ? strlen(b) : 0;
    char nines[MAXD], first[MAXD];
    if (b && la == lb)
        return same_len(r, a, b, 0, true, true, la);
    if (!b && !strcmp(a, "0"))
        return gm_irb_alt2(r->b, gm_irb_lit(r->b, "0"),
                           gm_irb_seq2(r->b, drange(r, '1', '9'), digits(r, 0, GM_EX_INF)));
    if (!b && a[0] == '1' && strspn(a + 1, "0") == la - 1)
        return gm_irb_seq2(r->b, drange(r, '1', '9'), digits(r, (uint32_t)la - 1, GM_EX_INF));
    memset(nines, '9', la);
    nines[la] = 0;
    uint32_t alts[3];
    size_t n = 0;
    alts[n++] = same_len(r, a, nines, 0, true, true, la);
    if (!b) {
        alts[n++] = gm_irb_seq2(r->b, drange(r, '1', '9'), digits(r, (uint32_t)la, GM_EX_INF));
    } else {
        if (la + 1 < lb)
            alts[n++] = gm_irb_seq2(r->b, drange(r, '1', '9'), digits(r, (uint32_t)la, (uint32_t)(lb - 2)));
        first[0] = '1';
        memset(first + 1, '0', lb - 1);
        first[lb] = 0;
        alts[n++] = same_len(r, first, b, 0, true, true, lb);
    }
    return gm_irb_alt(r->b, alts, n);
}

/* s += 1 (digit string). */
static void incr(char *s)
{
    size_t n = strlen(s);
    size_t i = n;
    while (i > 0 && s[i - 1] == '9')
        s[--i] = '0';
    if (i == 0) {
        memmove(s + 1, s, n + 1);
        s[0] = '1';
    } else {
        s[i - 1]++;
    }
}

/* s -= 1 (s > 0). */
static void decr(char *s)
{
    size_t n = strlen(s);
    size_t i = n;
    while (i > 0 && s[i - 1] == '0')
        s[--i] = '9';
    s[i - 1]--;
    if (s[0] == '0' && n > 1)
        memmove(s, s + 1, n);
}

static bool split(nr *r, const gm_dec *v, char *ip, char *fp)
{
    if (gm_dec_int_digits(v, ip, MAXD) || gm_dec_frac_digits(v, fp, MAXD)) {
        gm_irb_fail(r->b, GM_ERR_LIMIT, "a numeric bound with more than %d digits",
                    SC_NUM_MAX_DIGITS);
        return false;
    }
    return true;
}

/* Magnitude texts in [L, H] (H NULL: unbounded). */
static uint32_t magnitude(nr *r, const gm_dec *L, bool lex, const gm_dec *H, bool hex, bool integer,
                          bool int_frac)
{
    char li[MAXD + 1], lf[MAXD], hi[MAXD + 1], hf[MAXD];
    if (!split(r, L, li, lf) || (H && !split(r, H, hi, hf)))
        return GM_EX_NONE;
    if (integer) {
        if (lf[0] || lex)
            incr(li);
        if (H) {
            if (!hf[0] && hex) {
                if (!strcmp(hi, "0"))
                    return gm_irb_nothing(r->b);
                decr(hi);
            }
            if (cmp_int(li, hi) > 0)
                return gm_irb_nothing(r->b);
        }
        uint32_t ip = int_range(r, li, H ? hi : NULL);
        if (!int_frac)
            return ip;
        return gm_irb_seq2(r->b, ip, gm_irb_opt(r->b, gm_irb_seq2(r->b, gm_irb_lit(r->b, "."), zeros(r, 1))));
    }
    if (H && gm_dec_cmp(L, H) > 0)
        return gm_irb_nothing(r->b);
    if (H && !strcmp(li, hi))
        return gm_irb_seq2(r->b, gm_irb_lit(r->b, li), frac_text(r, lf, lex, hf, hex));
    uint32_t alts[3];
    size_t n = 0;
    char mid_lo[MAXD + 1], mid_hi[MAXD + 1];
    strcpy(mid_lo, li);
    if (lf[0] || lex) {
        alts[n++] = gm_irb_seq2(r->b, gm_irb_lit(r->b, li), frac_text(r, lf, lex, NULL, false));
        incr(mid_lo);
    } /* else Li takes any fraction: it joins the middle range */
    if (H) {
        strcpy(mid_hi, hi);
        if (strcmp(mid_hi, "0"))
            decr(mid_hi);
        if (strcmp(hi, "0") && cmp_int(mid_lo, mid_hi) <= 0)
            alts[n++] = gm_irb_seq2(r->b, int_range(r, mid_lo, mid_hi), frac_text(r, NULL, false, NULL, false));
        alts[n++] = gm_irb_seq2(r->b, gm_irb_lit(r->b, hi), frac_text(r, NULL, false, hf, hex));
    } else {
        alts[n++] = gm_irb_seq2(r->b, int_range(r, mid_lo, NULL), frac_text(r, NULL, false, NULL, false));
    }
    return gm_irb_alt(r->b, alts, n);
}

static uint32_t exponent(nr *r)
{
    uint32_t e[8] = {0}, sign[8] = {0};
    e['e' >> 5] |= 1u << ('e' & 31);
    e['E' >> 5] |= 1u << ('E' & 31);
    sign['+' >> 5] |= 1u << ('+' & 31);
    sign['-' >> 5] |= 1u << ('-' & 31);
    return gm_irb_seq3(r->b, gm_irb_byteset(r->b, e), gm_irb_opt(r->b, gm_irb_byteset(r->b, sign)),
                       digits(r, 1, GM_EX_INF));
}

/* One side (sign) of the interval: magnitudes [L, H]; exponents when it is [0, inf) or (0, inf). */
static uint32_t side_texts(nr *r, const sc_numspec *sp, const gm_dec *L, bool lex, const gm_dec *H,
                           bool hex)
{
    uint32_t m = magnitude(r, L, lex, H, hex, sp->integer, sp->int_frac);
    if (!H && gm_dec_is_zero(L) && !sp->integer && sp->max_frac < 0 && !sp->nonint)
        m = gm_irb_seq2(r->b, m, gm_irb_opt(r->b, exponent(r)));
    return m;
}

uint32_t sc_numrange(gm_irb *b, const sc_numspec *sp)
{
    nr r = {b, sp->integer ? -1 : sp->max_frac, sp->nonint && !sp->integer};
    if (sp->nonint && sp->integer)
        return gm_irb_nothing(b);
    gm_dec zero, L, H;
    gm_dec_zero(&zero);
    uint32_t alts[2];
    size_t n = 0;
    /* values >= 0 */
    bool pos_empty = sp->has_hi && (sp->hi.neg || (gm_dec_is_zero(&sp->hi) && sp->hi_excl));
    if (!pos_empty) {
        bool lex = false;
        L = zero;
        if (sp->has_lo && !sp->lo.neg) {
            L = sp->lo;
            lex = sp->lo_excl;
        }
        alts[n++] = side_texts(&r, sp, &L, lex, sp->has_hi ? &sp->hi : NULL, sp->hi_excl);
    }
    /* values <= 0, by magnitude */
    bool neg_empty = sp->has_lo && (!sp->lo.neg && !(gm_dec_is_zero(&sp->lo) && !sp->lo_excl));
    if (!neg_empty) {
        bool lex = false;
        L = zero;
        if (sp->has_hi && !(sp->hi.neg == false && !gm_dec_is_zero(&sp->hi))) {
            /* hi <= 0: magnitudes start at |hi| */
            L = sp->hi;
            L.neg = false;
            lex = sp->hi_excl;
        }
        bool hex = false;
        const gm_dec *hp = NULL;
        if (sp->has_lo) {
            H = sp->lo;
            H.neg = false;
            hex = sp->lo_excl;
            hp = &H;
        }
        uint32_t m = side_texts(&r, sp, &L, lex, hp, hex);
        if (!gm_irb_is_nothing(b, m))
            alts[n++] = gm_irb_seq2(b, gm_irb_lit(b, "-"), m);
    }
    return gm_irb_alt(b, alts, n);
}
