/*
 * Helpers for terminals written for Python's re (lexer/ordered.h, note
 * [ordered matching], takes lazy quantifiers and lookarounds as they are):
 * the names of lookarounds, and Python's getwidth, which orders Lark's
 * lexer (lexer_build.c note [Lark's lexer]).
 */
#include "lexer/regex.h"

const char *gm_regex_look_name(int look)
{
    switch (look) {
    case GM_RX_AHEAD: return "lookahead (?=...)";
    case GM_RX_NOT_AHEAD: return "negative lookahead (?!...)";
    case GM_RX_BEHIND: return "lookbehind (?<=...)";
    default: return "negative lookbehind (?<!...)";
    }
}

/* ---- widths ---- */

static uint32_t sat_sum(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

static uint32_t sat_mul(uint32_t a, uint32_t k)
{
    return k && a > UINT32_MAX / k ? UINT32_MAX : a * k;
}

void gm_regex_width(const gm_regex *re, uint32_t node, bool exact, uint32_t *min, uint32_t *max)
{
    const gm_rx_node *n = &re->nodes[node];
    uint32_t lo = 0, hi = 0, a, b;
    switch (n->kind) {
    case GM_RX_EMPTY:
    case GM_RX_LOOK:
        break;
    case GM_RX_SET:
        if (exact && re->sets[n->set].n == 0) {
            lo = UINT32_MAX; /* matches nothing */
            break;
        }
        lo = hi = 1;
        break;
    case GM_RX_CHAR:
    case GM_RX_BYTE:
        lo = hi = 1;
        break;
    case GM_RX_CONCAT:
        for (uint32_t i = 0; i < n->count; i++) {
            gm_regex_width(re, re->kids[n->first + i], exact, &a, &b);
            if (a == UINT32_MAX && b == 0) {
                lo = UINT32_MAX, hi = 0;
                break;
            }
            lo = sat_sum(lo, a);
            hi = sat_sum(hi, b);
        }
        break;
    case GM_RX_ALT:
        lo = exact || n->count ? UINT32_MAX : 0;
        for (uint32_t i = 0; i < n->count; i++) {
            gm_regex_width(re, re->kids[n->first + i], exact, &a, &b);
            lo = a < lo ? a : lo;
            hi = b > hi ? b : hi;
        }
        break;
    case GM_RX_REPEAT:
        gm_regex_width(re, re->kids[n->first], exact, &a, &b);
        lo = n->min ? sat_mul(a, n->min) : 0;
        hi = !b || !n->max ? 0 : n->max == GM_RX_INF ? UINT32_MAX : sat_mul(b, n->max);
        break;
    }
    *min = lo;
    *max = hi;
}
