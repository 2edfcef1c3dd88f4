/* IR building with sticky failures, and JSON string spellings (irb.h). */
#include "schema/irb.h"

#include <stdarg.h>
#include <string.h>

#include "base/error.h"

void gm_irb_init(gm_irb *b, gm_ebnf *g, size_t max_nodes, gm_error *err)
{
    memset(b, 0, sizeof *b);
    b->g = g;
    b->st = GM_OK;
    b->err = err;
    b->empty = b->nothing = b->hexdigit = b->all_escapes = GM_EX_NONE;
    b->max_nodes = max_nodes ? max_nodes : 1000000;
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

/* The escapes (after a backslash) of the controls in mask (bit c = U+00c). */
static uint32_t control_escapes(gm_irb *b, uint32_t mask)
{
    uint32_t alts[3];
    size_t n = 0;
    static const char shorts[] = {8, 'b', 9, 't', 10, 'n', 12, 'f', 13, 'r'};
    uint32_t sbits[8] = {0};
    bool any_short = false;
    for (size_t i = 0; i < sizeof shorts; i += 2)
        if (mask >> shorts[i] & 1) {
            sbits[(unsigned char)shorts[i + 1] >> 5] |= 1u << (shorts[i + 1] & 31);
            any_short = true;
        }
    if (any_short)
        alts[n++] = gm_irb_byteset(b, sbits);
    if (mask == UINT32_MAX) {
        alts[n++] = gm_irb_seq3(b, gm_irb_lit(b, "u00"), gm_irb_byterange(b, '0', '1'), hexdigit(b));
    } else {
        uint32_t hi_alts[2];
        size_t nh = 0;
        for (unsigned hi = 0; hi < 2; hi++) {
            uint32_t bits[8] = {0};
            bool any = false;
            for (unsigned lo = 0; lo < 16; lo++)
                if (mask >> (hi * 16 + lo) & 1) {
                    hex_bits(bits, lo);
                    any = true;
                }
            if (any)
                hi_alts[nh++] = gm_irb_seq2(b, gm_irb_lit(b, hi ? "u001" : "u000"), gm_irb_byteset(b, bits));
        }
        alts[n++] = gm_irb_alt(b, hi_alts, nh);
    }
    return gm_irb_alt(b, alts, n);
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
    uint32_t alts[2];
    size_t n = 0;
    if (ns.n)
        alts[n++] = gm_irb_cpset(b, &ns);
    gm_cpset_free(m, &ns);
    /* escapes */
    uint32_t esc[5];
    size_t ne = 0;
    uint32_t ctl = 0;
    for (size_t i = 0; i < s->n && s->r[i].lo < 0x20; i++)
        for (uint32_t c = s->r[i].lo; c <= s->r[i].hi && c < 0x20; c++)
            ctl |= 1u << c;
    bool all = ctl == UINT32_MAX && gm_cpset_has(s, '"') && gm_cpset_has(s, '\\') && gm_cpset_has(s, '/');
    if (all && b->all_escapes != GM_EX_NONE) {
        alts[n++] = b->all_escapes;
        return gm_irb_alt(b, alts, n);
    }
    uint32_t bits[8] = {0};
    bool any_bits = false;
    if (gm_cpset_has(s, '"'))
        bits['"' >> 5] |= 1u << ('"' & 31), any_bits = true;
    if (gm_cpset_has(s, '\\'))
        bits['\\' >> 5] |= 1u << ('\\' & 31), any_bits = true;
    if (gm_cpset_has(s, '/'))
        bits['/' >> 5] |= 1u << ('/' & 31), any_bits = true;
    if (any_bits)
        esc[ne++] = gm_irb_byteset(b, bits);
    if (ctl)
        esc[ne++] = control_escapes(b, ctl);
    if (ne) {
        alts[n] = gm_irb_seq2(b, gm_irb_lit(b, "\\"), gm_irb_alt(b, esc, ne));
        if (all)
            b->all_escapes = alts[n];
        n++;
    }
    return gm_irb_alt(b, alts, n);
}

/* Whether byte c of UTF-8 text needs more than its literal spelling. */
static bool special_byte(uint8_t c)
{
    return c < 0x20 || c == '"' || c == '\\' || c == '/';
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
        size_t j = i;
        while (j < n && !special_byte((uint8_t)s[j]))
            j++;
        if (j > i)
            parts[np++] = gm_irb_bytes(b, s + i, j - i);
        if (j < n) {
            gm_cpset one = {0};
            if (gm_cpset_add_range(b->g->mem, &one, (uint8_t)s[j], (uint8_t)s[j])) {
                gm_cpset_free(b->g->mem, &one);
                return check(b, GM_EX_NONE);
            }
            parts[np++] = gm_irb_json_set(b, &one);
            gm_cpset_free(b->g->mem, &one);
            j++;
        }
        i = j;
        if (np >= 62) {
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

uint32_t gm_irb_json_byteset(gm_irb *b, const uint32_t bits[8])
{
    if (b->st != GM_OK)
        return GM_EX_NONE;
    uint32_t lit[8];
    memcpy(lit, bits, sizeof lit);
    uint32_t ctl = bits[0]; /* bytes 0x00-0x1F */
    lit[0] = 0;
    lit['"' >> 5] &= ~(1u << ('"' & 31));
    lit['\\' >> 5] &= ~(1u << ('\\' & 31));
    uint32_t esc_bits[8] = {0};
    bool any_esc = false;
    const char specials[] = {'"', '\\', '/'};
    for (size_t i = 0; i < 3; i++)
        if (bits[(unsigned char)specials[i] >> 5] >> (specials[i] & 31) & 1) {
            esc_bits[(unsigned char)specials[i] >> 5] |= 1u << (specials[i] & 31);
            any_esc = true;
        }
    uint32_t esc[2], alts[2];
    size_t ne = 0, n = 0;
    if (any_esc)
        esc[ne++] = gm_irb_byteset(b, esc_bits);
    if (ctl)
        esc[ne++] = control_escapes(b, ctl);
    alts[n++] = gm_irb_byteset(b, lit);
    if (ne)
        alts[n++] = gm_irb_seq2(b, gm_irb_lit(b, "\\"), gm_irb_alt(b, esc, ne));
    return gm_irb_alt(b, alts, n);
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
