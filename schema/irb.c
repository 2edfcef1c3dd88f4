/* IR building with sticky failures, and JSON string spellings (irb.h). */
#include "schema/irb.h"

#include <stdarg.h>
#include <string.h>

#include "base/error.h"
#include "base/utf8.h"
#include "base/vec.h"

void gm_irb_init(gm_irb *b, gm_ebnf *g, size_t max_nodes, gm_error *err)
{
    memset(b, 0, sizeof *b);
    b->g = g;
    b->st = GM_OK;
    b->err = err;
    b->empty = b->nothing = b->hexdigit = GM_EX_NONE;
    for (size_t i = 0; i < sizeof b->hexany / sizeof *b->hexany; i++)
        b->hexany[i] = GM_EX_NONE;
    for (size_t i = 0; i < sizeof b->ascii / sizeof *b->ascii; i++)
        b->ascii[i] = GM_EX_NONE;
    b->max_nodes = max_nodes ? max_nodes : 1000000;
    gm_intern_init(&b->esc_sets, g->mem);
}

void gm_irb_free(gm_irb *b)
{
    gm_intern_free(&b->esc_sets);
    gm_vec_free(b->g->mem, &b->esc_refs);
}

uint32_t gm_irb_fail(gm_irb *b, gm_status st, const char *fmt, ...)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    b->st = st;
    if (b->err) {
        va_list ap;
        va_start(ap, fmt);
        gm_error_vset(b->err, st, fmt, ap);
        va_end(ap);
    }
    return GM_EX_NONE;
}

/* Checks a new node: memory and the node budget. */
static uint32_t check(gm_irb *b, uint32_t x)
{
    if (x == GM_EX_NONE) {
        if (b->st == GM_OK) {
            b->st = gm_mem_fail(b->g->mem, b->err, "a grammar");
        }
        return GM_EX_NONE;
    }
    if (b->g->nnodes > b->max_nodes)
        return gm_irb_fail(b, GM_ERR_LIMIT,
                           "the schema's grammar needs more than %zu expression nodes "
                           "(gm_limits.max_nfa_states)",
                           b->max_nodes);
    return x;
}

bool gm_irb_is_nothing(const gm_irb *b, uint32_t x)
{
    return x != GM_EX_NONE && b->g->nodes[x].kind == GM_EX_NOTHING;
}

bool gm_irb_is_empty(const gm_irb *b, uint32_t x)
{
    return x != GM_EX_NONE && b->g->nodes[x].kind == GM_EX_EMPTY;
}

uint32_t gm_irb_empty(gm_irb *b)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    if (b->empty == GM_EX_NONE)
        b->empty = check(b, gm_ebnf_add_empty(b->g));
    return b->empty;
}

uint32_t gm_irb_nothing(gm_irb *b)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    if (b->nothing == GM_EX_NONE)
        b->nothing = check(b, gm_ebnf_add_nothing(b->g));
    return b->nothing;
}

uint32_t gm_irb_bytes(gm_irb *b, const void *s, size_t n)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    if (n == 0)
        return gm_irb_empty(b);
    return check(b, gm_ebnf_add_bytes(b->g, s, n));
}

uint32_t gm_irb_lit(gm_irb *b, const char *s)
{
    return gm_irb_bytes(b, s, strlen(s));
}

uint32_t gm_irb_byteset(gm_irb *b, const uint32_t bits[8])
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    uint32_t any = 0;
    for (int i = 0; i < 8; i++)
        any |= bits[i];
    if (!any)
        return gm_irb_nothing(b);
    return check(b, gm_ebnf_add_byteset(b->g, bits));
}

uint32_t gm_irb_byterange(gm_irb *b, uint8_t lo, uint8_t hi)
{
    uint32_t bits[8] = {0};
    for (unsigned c = lo; c <= hi; c++)
        bits[c >> 5] |= 1u << (c & 31);
    if (lo == hi)
        return gm_irb_bytes(b, &lo, 1);
    return gm_irb_byteset(b, bits);
}

uint32_t gm_irb_cpset(gm_irb *b, const gm_cpset *s)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    if (s->n == 0)
        return gm_irb_nothing(b);
    /* an ASCII set is one byte set (cheaper for the engine than a code point set) */
    if (s->r[s->n - 1].hi < 0x80) {
        uint32_t bits[8] = {0};
        for (size_t i = 0; i < s->n; i++)
            for (uint32_t c = s->r[i].lo; c <= s->r[i].hi; c++)
                bits[c >> 5] |= 1u << (c & 31);
        if (s->n == 1 && s->r[0].lo == s->r[0].hi) {
            uint8_t c = (uint8_t)s->r[0].lo;
            return gm_irb_bytes(b, &c, 1);
        }
        return gm_irb_byteset(b, bits);
    }
    gm_cpset copy = {0};
    if (gm_cpset_copy(b->g->mem, &copy, s)) {
        gm_cpset_free(b->g->mem, &copy);
        return check(b, GM_EX_NONE);
    }
    return check(b, gm_ebnf_add_set(b->g, &copy));
}

uint32_t gm_irb_ref(gm_irb *b, uint32_t rule)
{
    if (b->st != GM_OK || rule == GM_EX_NONE)
        return GM_EX_NONE;
    return check(b, gm_ebnf_add_ref(b->g, rule));
}

/*
 * SEQ (seq) or ALT of ids[0..n): GM_EX_NONE passes through; in a sequence
 * NOTHING absorbs and EMPTY drops, in an alternative NOTHING and repeats
 * drop; zero or one kid left is EMPTY/NOTHING or that kid.
 */
static uint32_t combine(gm_irb *b, const uint32_t *ids, size_t n, bool seq)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    uint32_t buf[16];
    uint32_t *keep = n <= 16 ? buf : gm_mem_alloc(b->g->mem, n * sizeof *keep);
    if (!keep)
        return check(b, GM_EX_NONE);
    size_t k = 0;
    uint32_t r = GM_EX_NONE;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] == GM_EX_NONE)
            goto done;
        if (gm_irb_is_nothing(b, ids[i])) {
            if (!seq)
                continue;
            r = gm_irb_nothing(b);
            goto done;
        }
        if (seq && gm_irb_is_empty(b, ids[i]))
            continue;
        bool dup = false;
        for (size_t j = 0; j < k && !seq && !dup; j++)
            dup = keep[j] == ids[i];
        if (!dup)
            keep[k++] = ids[i];
    }
    if (k == 0)
        r = seq ? gm_irb_empty(b) : gm_irb_nothing(b);
    else if (k == 1)
        r = keep[0];
    else
        r = check(b, seq ? gm_ebnf_add_seq(b->g, keep, k) : gm_ebnf_add_alt(b->g, keep, k));
done:
    if (keep != buf)
        gm_mem_free(b->g->mem, keep);
    return r;
}

uint32_t gm_irb_seq(gm_irb *b, const uint32_t *ids, size_t n)
{
    return combine(b, ids, n, true);
}

uint32_t gm_irb_seq2(gm_irb *b, uint32_t x, uint32_t y)
{
    uint32_t k[2] = {x, y};
    return gm_irb_seq(b, k, 2);
}

uint32_t gm_irb_seq3(gm_irb *b, uint32_t x, uint32_t y, uint32_t z)
{
    uint32_t k[3] = {x, y, z};
    return gm_irb_seq(b, k, 3);
}

uint32_t gm_irb_alt(gm_irb *b, const uint32_t *ids, size_t n)
{
    return combine(b, ids, n, false);
}

uint32_t gm_irb_alt2(gm_irb *b, uint32_t x, uint32_t y)
{
    uint32_t k[2] = {x, y};
    return gm_irb_alt(b, k, 2);
}

uint32_t gm_irb_repeat(gm_irb *b, uint32_t x, uint32_t min, uint32_t max)
{
    if (b->st != GM_OK || x == GM_EX_NONE)
        return GM_EX_NONE;
    if (max != GM_EX_INF && max < min)
        return gm_irb_nothing(b);
    if (max == 0 || gm_irb_is_empty(b, x))
        return gm_irb_empty(b);
    if (gm_irb_is_nothing(b, x))
        return min == 0 ? gm_irb_empty(b) : gm_irb_nothing(b);
    if (min == 1 && max == 1)
        return x;
    if (max != GM_EX_INF && max > GM_EBNF_MAX_REPEAT)
        max = GM_EX_INF; /* beyond the IR's bound: no string that long is realistic */
    if (min > GM_EBNF_MAX_REPEAT)
        return gm_irb_fail(b, GM_ERR_LIMIT, "a repetition of at least %u, over the limit of %u",
                           min, GM_EBNF_MAX_REPEAT);
    return check(b, gm_ebnf_add_repeat(b->g, x, min, max));
}

uint32_t gm_irb_opt(gm_irb *b, uint32_t x)
{
    return gm_irb_repeat(b, x, 0, 1);
}

uint32_t gm_irb_rule(gm_irb *b, const char *hint, uint32_t body)
{
    if (b->st != GM_OK || body == GM_EX_NONE)
        return GM_EX_NONE;
    uint32_t r = gm_ebnf_fresh_rule(b->g, hint);
    if (r == GM_EX_NONE)
        return check(b, GM_EX_NONE);
    b->g->rules[r].body = body;
    return gm_irb_ref(b, r);
}

/* ---- note [string encoding] ---- */

static uint32_t hexdigit(gm_irb *b)
{
    if (b->hexdigit == GM_EX_NONE && b->st == GM_OK) {
        uint32_t bits[8] = {0};
        for (unsigned c = 0; c < 256; c++)
            if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
                bits[c >> 5] |= 1u << (c & 31);
        b->hexdigit = gm_irb_byteset(b, bits);
    }
    return b->hexdigit;
}

/* Both cases of hex digit v. */
static void hex_bits(uint32_t bits[8], unsigned v)
{
    static const char lo[] = "0123456789abcdef", up[] = "0123456789ABCDEF";
    bits[(unsigned char)lo[v] >> 5] |= 1u << (lo[v] & 31);
    bits[(unsigned char)up[v] >> 5] |= 1u << (up[v] & 31);
}

/* One hex digit of those in mask (bit v: digit v), either case. */
static uint32_t hex_digits(gm_irb *b, uint32_t mask)
{
    if (mask == 0xFFFF)
        return hexdigit(b);
    uint32_t bits[8] = {0};
    for (unsigned v = 0; v < 16; v++)
        if (mask >> v & 1)
            hex_bits(bits, v);
    if (mask && !(mask & (mask - 1)) && mask < 1u << 10) {
        uint8_t c = (uint8_t)('0' + __builtin_ctz(mask)); /* one decimal digit: a byte */
        return gm_irb_bytes(b, &c, 1);
    }
    return gm_irb_byteset(b, bits);
}

/* k hex digits of any value. */
static uint32_t hex_any(gm_irb *b, unsigned k)
{
    if (b->hexany[k] == GM_EX_NONE && b->st == GM_OK)
        b->hexany[k] = k == 1 ? hexdigit(b) : gm_irb_seq2(b, hexdigit(b), hex_any(b, k - 1));
    return b->hexany[k];
}

/* Whether r[0..n) clipped to [a, a + w) and s[0..m) clipped to [c, c + w) are one set shifted. */
static bool same_window(const gm_cprange *r, size_t n, uint32_t a, const gm_cprange *s, size_t m,
                        uint32_t c, uint32_t w)
{
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++) {
        uint32_t rl = (r[i].lo > a ? r[i].lo : a) - a, rh = (r[i].hi < a + w - 1 ? r[i].hi : a + w - 1) - a;
        uint32_t sl = (s[i].lo > c ? s[i].lo : c) - c, sh = (s[i].hi < c + w - 1 ? s[i].hi : c + w - 1) - c;
        if (rl != sl || rh != sh)
            return false;
    }
    return true;
}

/*
 * The last k of four hex digits (either case) spelling the values of
 * r[0..n) inside the window [base, base + 16^k); r holds exactly the
 * (sorted, disjoint) ranges that meet the window. One branch per first
 * digit, digits whose rests are the same set sharing it: a range costs a
 * few nodes per digit, a full window one shared node.
 */
static uint32_t hex_window(gm_irb *b, const gm_cprange *r, size_t n, uint32_t base, unsigned k)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    uint32_t w = 1u << (4 * k);
    if (n == 0)
        return gm_irb_nothing(b);
    if (r[0].lo <= base && r[0].hi >= base + w - 1)
        return hex_any(b, k);
    if (k == 1) {
        uint32_t mask = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t lo = r[i].lo > base ? r[i].lo - base : 0, hi = r[i].hi < base + 15 ? r[i].hi - base : 15;
            for (uint32_t v = lo; v <= hi; v++)
                mask |= 1u << v;
        }
        return hex_digits(b, mask);
    }
    uint32_t cw = w >> 4, kid[16];
    const gm_cprange *kr[16];
    size_t kn[16], i = 0;
    for (unsigned d = 0; d < 16; d++) {
        uint32_t lo = base + d * cw, hi = lo + cw - 1;
        while (i < n && r[i].hi < lo)
            i++;
        size_t j = i;
        while (j < n && r[j].lo <= hi)
            j++;
        kr[d] = r + i;
        kn[d] = j - i;
        kid[d] = GM_EX_NONE;
        for (unsigned e = 0; e < d && kid[d] == GM_EX_NONE; e++)
            if (kn[e] && same_window(kr[e], kn[e], base + e * cw, kr[d], kn[d], lo, cw))
                kid[d] = kid[e];
        if (kid[d] == GM_EX_NONE)
            kid[d] = hex_window(b, kr[d], kn[d], lo, k - 1);
    }
    uint32_t alts[16];
    size_t na = 0;
    uint32_t done = 0;
    for (unsigned d = 0; d < 16; d++) {
        if ((done >> d & 1) || kid[d] == GM_EX_NONE || gm_irb_is_nothing(b, kid[d]))
            continue;
        uint32_t mask = 0;
        for (unsigned e = d; e < 16; e++)
            if (kid[e] == kid[d])
                mask |= 1u << e;
        done |= mask;
        alts[na++] = gm_irb_seq2(b, hex_digits(b, mask), kid[d]);
    }
    return gm_irb_alt(b, alts, na);
}

typedef GM_VEC(gm_cprange) rangevec;

/* A run of high surrogates hlo..hhi (offsets from D800) whose low surrogates are lr[l0, l0 + ln). */
typedef struct hrun {
    uint32_t hlo, hhi, l0, ln;
} hrun;

typedef GM_VEC(hrun) hrunvec;

static int add_low(gm_mem *m, hrunvec *runs, rangevec *lr, uint32_t h, uint32_t lo, uint32_t hi)
{
    gm_cprange x = {0xDC00 + lo, 0xDC00 + hi};
    hrun *last = runs->n ? &runs->v[runs->n - 1] : NULL;
    if (last && last->hlo == h && last->hhi == h && last->l0 + last->ln == lr->n) {
        last->ln++;
        return gm_vec_push(m, lr, x);
    }
    hrun run = {h, h, (uint32_t)lr->n, 1};
    return gm_vec_push(m, lr, x) || gm_vec_push(m, runs, run);
}

static bool same_lows(const rangevec *lr, const hrun *x, const hrun *y)
{
    if (x->ln != y->ln)
        return false;
    for (uint32_t i = 0; i < x->ln; i++)
        if (lr->v[x->l0 + i].lo != lr->v[y->l0 + i].lo || lr->v[x->l0 + i].hi != lr->v[y->l0 + i].hi)
            return false;
    return true;
}

/*
 * The surrogate-pair spellings of the code points of s past U+FFFF, after
 * "\u": high surrogate, "\u", low surrogate. High surrogates with the same
 * set of low ones share one branch.
 */
static uint32_t pair_escapes(gm_irb *b, const gm_cpset *s)
{
    gm_mem *m = b->g->mem;
    hrunvec runs = {0};
    rangevec lr = {0}, hr = {0};
    GM_VEC(uint32_t) alts = {0};
    uint8_t *used = NULL;
    uint32_t r = GM_EX_NONE;
    int rc = 0;
    for (size_t i = 0; i < s->n && !rc; i++) {
        if (s->r[i].hi < 0x10000)
            continue;
        uint32_t v = (s->r[i].lo < 0x10000 ? 0x10000 : s->r[i].lo) - 0x10000, z = s->r[i].hi - 0x10000;
        uint32_t h1 = v >> 10, h2 = z >> 10;
        if (h1 == h2) {
            rc = add_low(m, &runs, &lr, h1, v & 0x3FF, z & 0x3FF);
            continue;
        }
        rc = add_low(m, &runs, &lr, h1, v & 0x3FF, 0x3FF);
        if (!rc && h2 > h1 + 1) {
            gm_cprange all = {0xDC00, 0xDFFF};
            hrun run = {h1 + 1, h2 - 1, (uint32_t)lr.n, 1};
            rc = gm_vec_push(m, &lr, all) || gm_vec_push(m, &runs, run);
        }
        if (!rc)
            rc = add_low(m, &runs, &lr, h2, 0, z & 0x3FF);
    }
    if (!rc && runs.n && !(used = gm_mem_calloc(m, runs.n, 1)))
        rc = -1;
    for (size_t i = 0; i < runs.n && !rc && b->st == GM_OK; i++) {
        if (used[i])
            continue;
        hr.n = 0;
        for (size_t j = i; j < runs.n && !rc; j++)
            if (!used[j] && same_lows(&lr, &runs.v[i], &runs.v[j])) {
                used[j] = 1;
                gm_cprange h = {0xD800 + runs.v[j].hlo, 0xD800 + runs.v[j].hhi};
                if (hr.n && hr.v[hr.n - 1].hi + 1 == h.lo)
                    hr.v[hr.n - 1].hi = h.hi; /* adjacent: one range, so full windows show */
                else
                    rc = gm_vec_push(m, &hr, h);
            }
        if (!rc)
            rc = gm_vec_push(m, &alts, gm_irb_seq3(b, hex_window(b, hr.v, hr.n, 0, 4), gm_irb_lit(b, "\\u"),
                                                   hex_window(b, lr.v + runs.v[i].l0, runs.v[i].ln, 0, 4)));
    }
    if (rc)
        check(b, GM_EX_NONE);
    else
        r = gm_irb_alt(b, alts.v, alts.n);
    gm_vec_free(m, &runs);
    gm_vec_free(m, &lr);
    gm_vec_free(m, &hr);
    gm_vec_free(m, &alts);
    gm_mem_free(m, used);
    return r;
}

/* The \u spellings of the code points of s, after "\u": 4 hex digits for
   the BMP (surrogates excluded), a surrogate pair past it. */
static uint32_t u_escapes(gm_irb *b, const gm_cpset *s)
{
    gm_mem *m = b->g->mem;
    rangevec bmp = {0};
    int rc = 0;
    for (size_t i = 0; i < s->n && s->r[i].lo <= 0xFFFF && !rc; i++) {
        uint32_t lo = s->r[i].lo, hi = s->r[i].hi > 0xFFFF ? 0xFFFF : s->r[i].hi;
        gm_cprange x = {lo, hi < 0xD800 ? hi : 0xD7FF}, y = {lo > 0xE000 ? lo : 0xE000, hi};
        if (lo < 0xD800)
            rc = gm_vec_push(m, &bmp, x);
        if (!rc && hi >= 0xE000)
            rc = gm_vec_push(m, &bmp, y);
    }
    uint32_t r = GM_EX_NONE;
    if (rc)
        check(b, GM_EX_NONE);
    else
        r = gm_irb_alt2(b, hex_window(b, bmp.v, bmp.n, 0, 4), pair_escapes(b, s));
    gm_vec_free(m, &bmp);
    return r;
}

/*
 * The escapes of the code points of s: "\\" then a short escape or "u" and
 * hex digits. A rule, one per set (gm_ebnf_merge_rules finds no more), kept
 * from inlining: in place, the hex digits' states would be copied into
 * every position that spells a character (each character of an enum value,
 * each edge of a key automaton), while a reference adds one edge there.
 */
static uint32_t escapes(gm_irb *b, const gm_cpset *s)
{
    if (!s->n)
        return gm_irb_nothing(b);
    uint32_t id;
    int added;
    if (gm_intern_put(&b->esc_sets, s->r, s->n * sizeof *s->r, &id, &added))
        return check(b, GM_EX_NONE);
    if (!added)
        return b->esc_refs.v[id];
    static const char shorts[] = {'"', '"', '\\', '\\', '/', '/', 8, 'b', 9, 't', 10, 'n', 12, 'f', 13, 'r'};
    uint32_t bits[8] = {0};
    for (size_t i = 0; i < sizeof shorts; i += 2)
        if (gm_cpset_has(s, (unsigned char)shorts[i]))
            bits[(unsigned char)shorts[i + 1] >> 5] |= 1u << (shorts[i + 1] & 31);
    uint32_t body = gm_irb_seq2(b, gm_irb_lit(b, "\\"),
                                gm_irb_alt2(b, gm_irb_byteset(b, bits),
                                            gm_irb_seq2(b, gm_irb_lit(b, "u"), u_escapes(b, s))));
    uint32_t r = gm_irb_rule(b, "esc", body);
    if (r != GM_EX_NONE)
        b->g->rules[b->g->nodes[r].arg].noinline = 1;
    if (gm_vec_push(b->g->mem, &b->esc_refs, r))
        return check(b, GM_EX_NONE);
    return r;
}

uint32_t gm_irb_json_escapes(gm_irb *b, const gm_cpset *s)
{
    return b->st == GM_OK ? escapes(b, s) : GM_EX_NONE;
}

uint32_t gm_irb_json_set(gm_irb *b, const gm_cpset *s)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    gm_mem *m = b->g->mem;
    /* literal part: s minus '"', '\' and the controls, as ~(~s | special) */
    gm_cpset special = {0}, ns = {0};
    int rc = gm_cpset_add_range(m, &special, 0, 0x1F) || gm_cpset_add_range(m, &special, '"', '"') ||
             gm_cpset_add_range(m, &special, '\\', '\\') || gm_cpset_copy(m, &ns, s) ||
             gm_cpset_negate(m, &ns) || gm_cpset_add_set(m, &ns, &special) || gm_cpset_negate(m, &ns);
    gm_cpset_free(m, &special);
    if (rc) {
        gm_cpset_free(m, &ns);
        return check(b, GM_EX_NONE);
    }
    uint32_t lit = ns.n ? gm_irb_cpset(b, &ns) : gm_irb_nothing(b);
    gm_cpset_free(m, &ns);
    return gm_irb_alt2(b, lit, escapes(b, s));
}

/* The spellings of code point cp (ASCII ones made once per builder). */
static uint32_t json_cp(gm_irb *b, uint32_t cp)
{
    if (cp < 0x80 && b->ascii[cp] != GM_EX_NONE)
        return b->ascii[cp];
    gm_cpset one = {0};
    if (gm_cpset_add_range(b->g->mem, &one, cp, cp)) {
        gm_cpset_free(b->g->mem, &one);
        return check(b, GM_EX_NONE);
    }
    uint32_t r = gm_irb_json_set(b, &one);
    gm_cpset_free(b->g->mem, &one);
    if (cp < 0x80)
        b->ascii[cp] = r;
    return r;
}

uint32_t gm_irb_json_text(gm_irb *b, const char *s, size_t n)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    uint32_t parts[64];
    size_t np = 0;
    uint32_t acc = gm_irb_empty(b);
    size_t i = 0;
    while (i < n && b->st == GM_OK) {
        uint32_t cp;
        size_t k = gm_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        if (!k)
            return gm_irb_fail(b, GM_ERR_GRAMMAR, "a string that is not UTF-8");
        parts[np++] = json_cp(b, cp);
        i += k;
        if (np == 64) {
            acc = gm_irb_seq2(b, acc, gm_irb_seq(b, parts, np));
            np = 0;
        }
    }
    return gm_irb_seq2(b, acc, gm_irb_seq(b, parts, np));
}

static uint32_t json_regex_node(gm_irb *b, const gm_regex *re, uint32_t node, uint32_t *memo,
                                unsigned depth)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    if (memo[node] != GM_EX_NONE)
        return memo[node];
    if (depth > 2 * GM_REGEX_MAX_DEPTH + 50)
        return gm_irb_fail(b, GM_ERR_LIMIT, "a pattern nested too deeply");
    const gm_rx_node *x = &re->nodes[node];
    uint32_t r = GM_EX_NONE;
    switch (x->kind) {
    case GM_RX_EMPTY:
        r = gm_irb_empty(b);
        break;
    case GM_RX_CHAR:
    case GM_RX_SET: {
        gm_cpset one = {0};
        const gm_cpset *s = &one;
        if (x->kind == GM_RX_SET)
            s = &re->sets[x->set];
        else if (gm_cpset_add_range(b->g->mem, &one, x->cp, x->cp))
            return check(b, GM_EX_NONE);
        r = gm_irb_json_set(b, s);
        gm_cpset_free(b->g->mem, &one);
        break;
    }
    case GM_RX_BYTE: {
        uint8_t c = (uint8_t)x->cp;
        r = gm_irb_bytes(b, &c, 1);
        break;
    }
    case GM_RX_CONCAT:
    case GM_RX_ALT: {
        uint32_t buf[16];
        uint32_t *kids = x->count <= 16 ? buf : gm_mem_alloc(b->g->mem, x->count * sizeof *kids);
        if (!kids)
            return check(b, GM_EX_NONE);
        for (uint32_t i = 0; i < x->count; i++)
            kids[i] = json_regex_node(b, re, re->kids[x->first + i], memo, depth + 1);
        r = x->kind == GM_RX_CONCAT ? gm_irb_seq(b, kids, x->count) : gm_irb_alt(b, kids, x->count);
        if (kids != buf)
            gm_mem_free(b->g->mem, kids);
        break;
    }
    case GM_RX_REPEAT:
        r = gm_irb_repeat(b, json_regex_node(b, re, re->kids[x->first], memo, depth + 1), x->min,
                          x->max == GM_RX_INF ? GM_EX_INF : x->max);
        break;
    default:
        r = gm_irb_fail(b, GM_ERR_UNSUPPORTED, "a lookaround in a pattern");
        break;
    }
    memo[node] = r;
    return r;
}

uint32_t gm_irb_json_regex(gm_irb *b, const gm_regex *re, uint32_t node)
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    uint32_t *memo = gm_mem_reallocarray(b->g->mem, NULL, re->nnodes ? re->nnodes : 1, sizeof *memo);
    if (!memo)
        return check(b, GM_EX_NONE);
    for (size_t i = 0; i < re->nnodes; i++)
        memo[i] = GM_EX_NONE;
    uint32_t r = json_regex_node(b, re, node, memo, 0);
    gm_mem_free(b->g->mem, memo);
    return r;
}

uint32_t gm_irb_json_char(gm_irb *b)
{
    gm_cpset all = {0};
    if (gm_cpset_add_range(b->g->mem, &all, 0, GM_CP_MAX)) {
        gm_cpset_free(b->g->mem, &all);
        return check(b, GM_EX_NONE);
    }
    uint32_t r = gm_irb_json_set(b, &all);
    gm_cpset_free(b->g->mem, &all);
    return r;
}
