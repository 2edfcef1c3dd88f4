/*
 * Tests of the automata algorithms against slow references:
 *   - Hopcroft (minimize.c) against Moore (minimize_ref.c) on random partial
 *     DFAs with several labels, with and without the start kept apart, plus
 *     language equivalence of the result with its input on random strings;
 *   - subset construction against a direct NFA simulation (sets of states
 *     with epsilon closures) on random regexes and random inputs;
 *   - byte classes of minimal DFAs are fully merged and canonical.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "lexer/nfa.h"
#include "lexer/regex.h"

static uint32_t rnd_state = 12345;

static uint32_t rnd(uint32_t n)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (rnd_state >> 8) % n;
}

/* A random DFA: n states, k classes (byte b is in class b % k), partial, a few labels. */
static void random_dfa(gm_mem *m, gm_dfa *d, uint32_t n, uint32_t k, uint32_t nlabels, uint32_t density,
                       bool into_start)
{
    memset(d, 0, sizeof *d);
    d->mem = m;
    d->nstates = n;
    d->nclasses = k;
    for (int b = 0; b < 256; b++)
        d->byte_class[b] = (uint8_t)(b % k);
    d->next = gm_mem_reallocarray(m, NULL, (size_t)n * k, sizeof *d->next);
    d->label = gm_mem_reallocarray(m, NULL, n, sizeof *d->label);
    assert_non_null(d->next);
    assert_non_null(d->label);
    for (uint32_t s = 0; s < n; s++) {
        d->label[s] = rnd(3) == 0 ? rnd(nlabels) : GM_LEX_NONE;
        for (uint32_t c = 0; c < k; c++)
            d->next[(size_t)s * k + c] = rnd(100) >= density || (!into_start && n == 1) ? GM_LEX_DEAD
                                         : into_start ? rnd(n) : 1 + rnd(n - 1);
    }
}

static bool same_tables(const gm_dfa *a, const gm_dfa *b)
{
    return a->nstates == b->nstates && a->nclasses == b->nclasses &&
           !memcmp(a->byte_class, b->byte_class, 256) &&
           !memcmp(a->next, b->next, (size_t)a->nstates * a->nclasses * sizeof *a->next) &&
           !memcmp(a->label, b->label, a->nstates * sizeof *a->label);
}

static void hopcroft_equals_moore(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    unsigned long compared = 0, merged = 0;
    for (int round = 0; round < 3000; round++) {
        uint32_t n = 1 + rnd(60), k = 1 + rnd(5), nlabels = 1 + rnd(4), density = 20 + rnd(81);
        gm_dfa d, h, r;
        bool apart = rnd(2);
        /* As from the determinizer, nothing enters the start when it is kept apart. */
        random_dfa(&m, &d, n, k, nlabels, density, !apart);
        assert_int_equal(gm_dfa_minimize(&d, apart, &h, &err), GM_OK);
        assert_int_equal(gm_dfa_minimize_ref(&d, apart, &r, &err), GM_OK);
        if (!same_tables(&h, &r))
            fail_msg("round %d (n=%u k=%u): Hopcroft %u states, Moore %u", round, n, k, h.nstates, r.nstates);
        /* The quotient accepts the same labelled language as its input. */
        for (int t = 0; t < 50; t++) {
            uint8_t s[12];
            size_t len = rnd(12);
            for (size_t i = 0; i < len; i++)
                s[i] = (uint8_t)rnd(256);
            assert_int_equal(gm_dfa_match(&d, s, len), gm_dfa_match(&h, s, len));
        }
        /* note [start state]: nothing leads back to the start when it is kept apart. */
        if (apart && n > 1)
            for (size_t i = 0; i < (size_t)h.nstates * h.nclasses; i++)
                assert_int_not_equal(h.next[i], 0);
        compared++;
        merged += d.nstates - h.nstates;
        gm_dfa_free(&d);
        gm_dfa_free(&h);
        gm_dfa_free(&r);
    }
    assert_true(merged > compared); /* the random DFAs did have states to merge */
    assert_int_equal(atomic_load(&m.used), 0);
}

/* ---- NFA simulation reference ---- */

typedef struct sim {
    const gm_nfa *nfa;
    uint8_t *cur, *nxt;
} sim;

static void add_closure(const gm_nfa *nfa, uint8_t *set, uint32_t s)
{
    if (set[s])
        return;
    set[s] = 1;
    for (uint32_t i = nfa->off[s] + nfa->nbyte[s]; i < nfa->off[s + 1]; i++)
        add_closure(nfa, set, nfa->edges[i].to);
}

static bool nfa_accepts(const gm_nfa *nfa, const uint8_t *text, size_t len)
{
    uint32_t n = nfa->nstates;
    uint8_t *cur = calloc(n, 1), *nxt = calloc(n, 1);
    add_closure(nfa, cur, nfa->start);
    for (size_t i = 0; i < len; i++) {
        memset(nxt, 0, n);
        for (uint32_t s = 0; s < n; s++) {
            if (!cur[s])
                continue;
            for (uint32_t e = nfa->off[s]; e < nfa->off[s] + nfa->nbyte[s]; e++)
                if (nfa->edges[e].lo <= text[i] && text[i] <= nfa->edges[e].hi)
                    add_closure(nfa, nxt, nfa->edges[e].to);
        }
        uint8_t *t = cur;
        cur = nxt;
        nxt = t;
    }
    bool acc = false;
    for (uint32_t s = 0; s < n; s++)
        acc |= cur[s] && nfa->tag[s] != GM_NFA_NO_TAG;
    free(cur);
    free(nxt);
    return acc;
}

/* A random regex over a small alphabet, with every operator of the AST. */
static void random_regex(char *out, size_t cap, int depth)
{
    static const char *atoms[] = {"a", "b", "é", ".", "[ab]", "[^a]", "\\d", "(?i:k)", "[a-é]", "\\w"};
    static const char *quants[] = {"", "", "*", "+", "?", "{2}", "{0,2}", "{1,}"};
    size_t n = strlen(out);
    if (n + 40 > cap)
        return;
    int kind = depth > 3 ? 0 : (int)rnd(4);
    if (kind == 0) {
        snprintf(out + n, cap - n, "%s%s", atoms[rnd(10)], quants[rnd(8)]);
    } else if (kind == 1) {
        random_regex(out, cap, depth + 1);
        random_regex(out, cap, depth + 1);
    } else if (kind == 2) {
        strcat(out, "(?:");
        random_regex(out, cap, depth + 1);
        strcat(out, "|");
        random_regex(out, cap, depth + 1);
        strcat(out, ")");
        n = strlen(out);
        snprintf(out + n, cap - n, "%s", quants[rnd(8)]);
    } else {
        strcat(out, "(?:");
        random_regex(out, cap, depth + 1);
        strcat(out, ")");
        n = strlen(out);
        snprintf(out + n, cap - n, "%s", quants[rnd(8)]);
    }
}

static void subset_construction_matches_nfa(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_uclass uc;
    gm_uclass_init(&uc, &m);
    gm_error err;
    const char *alphabet[] = {"a", "b", "k", "K", "é", "\xc3", "\xa9", "1", "\n", "\xe2\x84\xaa", "z"};
    for (int round = 0; round < 400; round++) {
        char pattern[512] = "";
        random_regex(pattern, sizeof pattern, 0);
        gm_regex re;
        gm_regex_init(&re, &m);
        if (gm_regex_parse(&re, &uc, pattern, strlen(pattern), 0, NULL, &err) != GM_OK)
            fail_msg("/%s/: %s", pattern, err.message);
        gm_nfa nfa;
        gm_nfa_init(&nfa, &m, NULL);
        uint32_t start = gm_nfa_new_state(&nfa, GM_NFA_NO_TAG), final = gm_nfa_new_state(&nfa, 0), entry;
        assert_int_equal(gm_nfa_add_regex(&nfa, &re, final, &entry, &err), GM_OK);
        assert_int_equal(gm_nfa_add_eps(&nfa, start, entry), 0);
        assert_int_equal(gm_nfa_finish(&nfa, start, &err), GM_OK);
        gm_regex_free(&re);
        gm_dfa raw, min;
        bool apart = round % 2;
        assert_int_equal(gm_dfa_determinize(&nfa, &m, 0, apart, &raw, &err), GM_OK);
        for (uint32_t q = 0; q < raw.nstates; q++)
            raw.label[q] = raw.tag_off[q + 1] > raw.tag_off[q] ? 0 : GM_LEX_NONE;
        assert_int_equal(gm_dfa_minimize(&raw, apart, &min, &err), GM_OK);
        for (int t = 0; t < 60; t++) {
            char text[64] = "";
            int parts = (int)rnd(7);
            for (int i = 0; i < parts; i++)
                strcat(text, alphabet[rnd(11)]);
            size_t len = strlen(text);
            bool want = nfa_accepts(&nfa, (const uint8_t *)text, len);
            bool got_raw = gm_dfa_match(&raw, (const uint8_t *)text, len) != GM_LEX_NONE;
            bool got_min = gm_dfa_match(&min, (const uint8_t *)text, len) != GM_LEX_NONE;
            if (want != got_raw || want != got_min)
                fail_msg("/%s/ on \"%s\": NFA %d, DFA %d, minimal DFA %d", pattern, text, want, got_raw, got_min);
        }
        /* Classes of the minimal DFA are merged: no two columns are equal. */
        for (uint32_t c1 = 0; c1 < min.nclasses; c1++)
            for (uint32_t c2 = c1 + 1; c2 < min.nclasses; c2++) {
                bool differ = false;
                for (uint32_t q = 0; q < min.nstates && !differ; q++)
                    differ = min.next[(size_t)q * min.nclasses + c1] != min.next[(size_t)q * min.nclasses + c2];
                if (!differ)
                    fail_msg("/%s/: classes %u and %u are equal", pattern, c1, c2);
            }
        gm_dfa_free(&raw);
        gm_dfa_free(&min);
        gm_nfa_free(&nfa);
    }
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Suffix sharing keeps \w small (note [UTF-8 sets]). */
static void utf8_sets_are_compact(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa d, raw;
    gm_regex_stats st;
    gm_error err;
    assert_int_equal(gm_regex_compile(&m, NULL, "\\w", 2, 0, NULL, &d, &raw, &st, &err), GM_OK);
    /* The NFA of a set is its trie with shared suffixes: within a small factor of the minimal DFA. */
    assert_true(st.nfa_states <= 2 * st.min_states + 8);
    assert_true(st.dfa_states == st.min_states);
    gm_dfa_free(&d);
    gm_dfa_free(&raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hopcroft_equals_moore),
        cmocka_unit_test(subset_construction_matches_nfa),
        cmocka_unit_test(utf8_sets_are_compact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
