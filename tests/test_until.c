/*
 * The UNTIL automaton (ir/until.c) against the definition of note
 * [until] written out by brute force: w is in UNTIL(L, i) iff w ends with
 * L[i] and no proper prefix of w contains a string of L; w is in
 * UNTIL(L, NONE) iff no string of L occurs in w. Random small alphabets make
 * overlaps (a string inside another, suffixes of each other) common.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ir/until.h"

static bool contains(const uint8_t *w, size_t n, const uint8_t *s, size_t k)
{
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(w + i, s, k))
            return true;
    return false;
}

typedef struct strings {
    uint8_t s[6][6];
    size_t len[6];
    size_t n;
} strings;

static bool any_in(const strings *L, const uint8_t *w, size_t n)
{
    for (size_t j = 0; j < L->n; j++)
        if (contains(w, n, L->s[j], L->len[j]))
            return true;
    return false;
}

static bool ref_accepts(const strings *L, const uint8_t *w, size_t n, uint32_t which)
{
    if (which == GM_EX_NONE)
        return !any_in(L, w, n);
    size_t k = L->len[which];
    if (n < k || memcmp(w + n - k, L->s[which], k))
        return false;
    return n == 0 || !any_in(L, w, n - 1);
}

/* Runs w through the automaton: the state, or GM_UNTIL_NONE when it died. */
static uint32_t run(const gm_until *u, const uint8_t *w, size_t n)
{
    uint32_t q = 0;
    for (size_t i = 0; i < n && q != GM_UNTIL_NONE; i++)
        q = u->next[(size_t)q * 256 + w[i]];
    return q;
}

static void random_against_definition(void **state)
{
    (void)state;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    uint64_t seed = 12345;
    for (int round = 0; round < 400; round++) {
        strings L;
        L.n = 1 + gm_test_rand(&seed) % 4;
        unsigned alpha = 2 + gm_test_rand(&seed) % 2;
        for (size_t j = 0; j < L.n; j++) {
            L.len[j] = 1 + gm_test_rand(&seed) % 4;
            for (size_t k = 0; k < L.len[j]; k++)
                L.s[j][k] = (uint8_t)('a' + gm_test_rand(&seed) % alpha);
        }
        gm_ebnf g;
        gm_ebnf_init(&g, &mem);
        uint32_t ids[6];
        for (size_t j = 0; j < L.n; j++)
            ids[j] = gm_ebnf_add_bytes(&g, L.s[j], L.len[j]);
        for (uint32_t which = 0; which <= L.n; which++) {
            uint32_t w_ = which == L.n ? GM_EX_NONE : which;
            uint32_t node = gm_ebnf_add_until(&g, ids, L.n, w_);
            gm_until u;
            gm_error err;
            assert_int_equal(gm_until_build(&mem, &g, node, 1000, &u, &err), GM_OK);
            for (int t = 0; t < 200; t++) {
                uint8_t w[10];
                size_t n = gm_test_rand(&seed) % 10;
                for (size_t k = 0; k < n; k++)
                    w[k] = (uint8_t)('a' + gm_test_rand(&seed) % alpha);
                uint32_t q = run(&u, w, n);
                bool got = q != GM_UNTIL_NONE && gm_until_accepts(&u, q, w_);
                if (got != ref_accepts(&L, w, n, w_))
                    fail_msg("round %d which %u: '%.*s' got %d", round, which, (int)n, w, got);
                /* Viability: a live state can still reach an accepting one,
                   exactly when some extension of w is in the language. */
            }
            gm_until_free(&u);
        }
        gm_ebnf_free(&g);
    }
    assert_int_equal(atomic_load(&mem.used), 0);
}

static void limits_and_errors(void **state)
{
    (void)state;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &mem);
    uint32_t ids[2] = {gm_ebnf_add_bytes(&g, "<tool_call>", 11),
                       gm_ebnf_add_bytes(&g, "<function=", 10)};
    uint32_t node = gm_ebnf_add_until(&g, ids, 2, 0);
    gm_until u;
    gm_error err;
    assert_int_equal(gm_until_build(&mem, &g, node, 10, &u, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "22 automaton states (limit 10)"));
    assert_int_equal(gm_until_build(&mem, &g, node, 100, &u, &err), GM_OK);
    assert_int_equal(u.nstates, 21);
    const char *text = "a <tool_call>";
    uint32_t q = run(&u, (const uint8_t *)text, strlen(text));
    assert_true(gm_until_accepts(&u, q, 0));
    assert_false(gm_until_accepts(&u, q, 1));
    assert_int_equal(run(&u, (const uint8_t *)"<tool_call>x", 12), GM_UNTIL_NONE);
    gm_until_free(&u);
    gm_ebnf_free(&g);
    assert_int_equal(atomic_load(&mem.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_against_definition),
        cmocka_unit_test(limits_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
