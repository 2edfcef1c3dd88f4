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

/* ---- Lark's lexer order ---- */

static uint32_t sat_sum(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

uint32_t gm_regex_max_width(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *n = &re->nodes[node];
    uint32_t w = 0;
    switch (n->kind) {
    case GM_RX_EMPTY:
    case GM_RX_LOOK:
        return 0;
    case GM_RX_CHAR:
    case GM_RX_SET:
    case GM_RX_BYTE:
        return 1;
    case GM_RX_CONCAT:
        for (uint32_t i = 0; i < n->count; i++)
            w = sat_sum(w, gm_regex_max_width(re, re->kids[n->first + i]));
        return w;
    case GM_RX_ALT:
        for (uint32_t i = 0; i < n->count; i++) {
            uint32_t k = gm_regex_max_width(re, re->kids[n->first + i]);
            w = k > w ? k : w;
        }
        return w;
    case GM_RX_REPEAT: {
        uint32_t k = gm_regex_max_width(re, re->kids[n->first]);
        if (!k || !n->max)
            return 0;
        if (n->max == GM_RX_INF || k > UINT32_MAX / n->max)
            return UINT32_MAX;
        return k * n->max;
    }
    }
    return w;
}

uint32_t gm_regex_min_width(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *n = &re->nodes[node];
    uint32_t w = 0;
    switch (n->kind) {
    case GM_RX_EMPTY:
    case GM_RX_LOOK:
        return 0;
    case GM_RX_CHAR:
    case GM_RX_SET:
    case GM_RX_BYTE:
        return 1;
    case GM_RX_CONCAT:
        for (uint32_t i = 0; i < n->count; i++)
            w = sat_sum(w, gm_regex_min_width(re, re->kids[n->first + i]));
        return w;
    case GM_RX_ALT:
        w = UINT32_MAX;
        for (uint32_t i = 0; i < n->count; i++) {
            uint32_t k = gm_regex_min_width(re, re->kids[n->first + i]);
            w = k < w ? k : w;
        }
        return n->count ? w : 0;
    case GM_RX_REPEAT: {
        uint32_t k = gm_regex_min_width(re, re->kids[n->first]);
        if (!k || !n->min)
            return 0;
        if (k > UINT32_MAX / n->min)
            return UINT32_MAX;
        return k * n->min;
    }
    }
    return w;
}
