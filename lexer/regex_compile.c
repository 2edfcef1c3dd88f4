/* One regex to its minimal DFA: the path the `regex` command, the tests and the fuzzer take. */
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/nfa.h"
#include "lexer/regex.h"
#include "base/error.h"

gm_status gm_regex_compile_ast(gm_mem *m, const gm_regex *re, const gm_limits *limits, gm_dfa *min,
                               gm_dfa *dfa, gm_regex_stats *stats, gm_error *err)
{
    gm_nfa nfa;
    gm_nfa_init(&nfa, m, limits);
    gm_dfa d;
    memset(&d, 0, sizeof d);
    d.mem = m;
    memset(min, 0, sizeof *min);
    min->mem = m;
    if (stats)
        memset(stats, 0, sizeof *stats);
    gm_status st = GM_OK;
    uint32_t start = gm_nfa_new_state(&nfa, GM_NFA_NO_TAG);
    uint32_t final = start == UINT32_MAX ? start : gm_nfa_new_state(&nfa, 0);
    uint32_t entry = UINT32_MAX;
    if (final == UINT32_MAX)
        st = gm_nfa_fail(&nfa, err);
    if (st == GM_OK)
        st = gm_nfa_add_regex(&nfa, re, final, &entry, err);
    if (st == GM_OK && gm_nfa_add_eps(&nfa, start, entry))
        st = gm_nfa_fail(&nfa, err);
    if (st == GM_OK)
        st = gm_nfa_finish(&nfa, start, err);
    if (stats)
        stats->nfa_states = nfa.nstates;
    if (st == GM_OK)
        st = gm_dfa_determinize(&nfa, m, limits ? limits->max_dfa_states : 0, false, &d, err);
    gm_nfa_free(&nfa);
    if (st == GM_OK) {
        for (uint32_t q = 0; q < d.nstates; q++)
            d.label[q] = d.tag_off[q + 1] > d.tag_off[q] ? 0 : GM_LEX_NONE;
        if (stats)
            stats->dfa_states = d.nstates;
        st = gm_dfa_minimize(&d, false, min, err);
    }
    if (st == GM_OK && stats) {
        stats->min_states = min->nstates;
        stats->min_classes = min->nclasses;
    }
    if (st == GM_OK && dfa)
        *dfa = d;
    else
        gm_dfa_free(&d);
    return st;
}

gm_status gm_regex_compile(gm_mem *m, gm_uclass *uc, const char *pattern, size_t len,
                           unsigned flags, const gm_limits *limits, gm_dfa *min, gm_dfa *dfa,
                           gm_regex_stats *stats, gm_error *err)
{
    gm_uclass own;
    gm_uclass_init(&own, m);
    if (!uc)
        uc = &own;
    gm_regex re;
    gm_regex_init(&re, m);
    memset(min, 0, sizeof *min);
    min->mem = m;
    if (stats)
        memset(stats, 0, sizeof *stats);
    /* The full-match meaning: a terminal's re.match meaning needs the ordered lexer. */
    gm_status st = gm_regex_parse(&re, uc, pattern, len, flags & ~(unsigned)GM_RE_LARK_MATCH, limits, err);
    if (st == GM_OK)
        st = gm_regex_compile_ast(m, &re, limits, min, dfa, stats, err);
    gm_regex_free(&re);
    gm_uclass_free(&own);
    return st;
}
