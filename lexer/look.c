/*
 * Lookaround bodies for the ordered determinizer (lexer/ordered.h): a
 * lookahead's body becomes a DFA run beside the paths, a lookbehind's the
 * byte sets its last bytes must be in.
 */
#include <string.h>

#include "lexer/lexer.h"
#include "lexer/nfa.h"
#include "lexer/ordered.h"
#include "base/error.h"

static bool has_look(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *x = &re->nodes[node];
    if (x->kind == GM_RX_LOOK)
        return true;
    if (x->kind == GM_RX_CONCAT || x->kind == GM_RX_ALT || x->kind == GM_RX_REPEAT)
        for (uint32_t i = 0; i < (x->kind == GM_RX_REPEAT ? 1 : x->count); i++)
            if (has_look(re, re->kids[x->first + i]))
                return true;
    return false;
}

/* The ASCII bytes a one-character node matches into set; false when it is not one. */
static bool ascii_char(const gm_regex *re, uint32_t node, uint8_t set[32])
{
    const gm_rx_node *x = &re->nodes[node];
    switch (x->kind) {
    case GM_RX_CHAR:
    case GM_RX_BYTE:
        if (x->cp >= 0x80)
            return false;
        set[x->cp >> 3] |= (uint8_t)(1u << (x->cp & 7));
        return true;
    case GM_RX_SET: {
        const gm_cpset *s = &re->sets[x->set];
        for (size_t i = 0; i < s->n; i++) {
            if (s->r[i].hi >= 0x80)
                return false;
            for (uint32_t c = s->r[i].lo; c <= s->r[i].hi; c++)
                set[c >> 3] |= (uint8_t)(1u << (c & 7));
        }
        return true;
    }
    case GM_RX_ALT:
        for (uint32_t i = 0; i < x->count; i++)
            if (!ascii_char(re, re->kids[x->first + i], set))
                return false;
        return true;
    default:
        return false;
    }
}

gm_status gm_look_compile(const gm_regex *re, uint32_t node, gm_mem *m, const gm_limits *limits,
                          gm_look *lk, gm_error *e)
{
    gm_limits lim0;
    gm_limits_init_defaults(&lim0);
    const gm_limits *lim = limits ? limits : &lim0;
    const gm_rx_node *x = &re->nodes[node];
    uint32_t body = re->kids[x->first];
    memset(lk, 0, sizeof *lk);
    lk->body.mem = m;
    lk->kind = x->look;
    lk->at = x->at;
    if (has_look(re, body)) {
        gm_error_set(e, GM_ERR_UNSUPPORTED, "unsupported construct: a lookaround inside %s",
                     gm_regex_look_name(x->look));
        e->column = x->at + 1;
        return GM_ERR_UNSUPPORTED;
    }
    if (x->look == GM_RX_BEHIND || x->look == GM_RX_NOT_BEHIND) {
        const gm_rx_node *b = &re->nodes[body];
        uint32_t n = b->kind == GM_RX_CONCAT ? b->count : 1;
        bool ok = n <= GM_LOOK_BEHIND_MAX;
        for (uint32_t i = 0; i < n && ok; i++)
            ok = ascii_char(re, b->kind == GM_RX_CONCAT ? re->kids[b->first + i] : body, lk->set[i]);
        if (!ok) {
            gm_error_set(e, GM_ERR_UNSUPPORTED,
                         "unsupported construct: %s over anything but up to %d ASCII characters "
                         "(gramask checks a lookbehind against the lexeme's last bytes)",
                         gm_regex_look_name(x->look), GM_LOOK_BEHIND_MAX);
            e->column = x->at + 1;
            return GM_ERR_UNSUPPORTED;
        }
        lk->width = n;
        return GM_OK;
    }
    /* A lookahead: the DFA of its body, labelled where the body has matched. */
    gm_regex sub = *re;
    sub.root = body;
    gm_nfa nfa;
    gm_nfa_init(&nfa, m, lim);
    gm_dfa d;
    memset(&d, 0, sizeof d);
    d.mem = m;
    uint32_t start = gm_nfa_new_state(&nfa, GM_NFA_NO_TAG), final = gm_nfa_new_state(&nfa, 0), entry;
    gm_status st = start == UINT32_MAX || final == UINT32_MAX ? gm_nfa_fail(&nfa, e) : GM_OK;
    if (st == GM_OK)
        st = gm_nfa_add_regex(&nfa, &sub, final, &entry, e);
    if (st == GM_OK && gm_nfa_add_eps(&nfa, start, entry))
        st = gm_nfa_fail(&nfa, e);
    if (st == GM_OK)
        st = gm_nfa_finish(&nfa, start, e);
    if (st == GM_OK)
        st = gm_dfa_determinize(&nfa, m, lim->max_dfa_states, false, &d, e);
    gm_nfa_free(&nfa);
    if (st == GM_OK) {
        for (uint32_t q = 0; q < d.nstates; q++)
            d.label[q] = d.tag_off[q + 1] > d.tag_off[q] ? 0 : GM_LEX_NONE;
        st = gm_dfa_minimize(&d, false, &lk->body, e);
    }
    gm_dfa_free(&d);
    return st;
}

