/*
 * The UNTIL automaton (ir/until.c) against the definition of note
 * [until] written out by brute force: w is in UNTIL(L, i) iff w ends with
 * L[i] and no proper prefix of w contains a string of L; w is in
 * UNTIL(L, NONE) iff no string of L occurs in w. Random small alphabets make
 * overlaps (a string inside another, suffixes of each other) common.
 * Then the whole engine (public API, rule automata with the UTF-8 automaton
 * and the character count, note [until]) on the Until(...) grammars of
 * tests/earley_ref_cases.py against that script's Python judge: every
 * string's viability (accept_bytes) and completeness (is_accepting).
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
            uint32_t node = gm_ebnf_add_until(&g, ids, L.n, w_, 0, GM_EX_INF);
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
    uint32_t node = gm_ebnf_add_until(&g, ids, 2, 0, 0, GM_EX_INF);
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

/* Checks the strings read so far against the engine compiled from grammar text. */
static void engine_case(const char *text, uint8_t **s, const uint32_t *slen, const uint8_t *v,
                        const uint8_t *c, size_t n)
{
    static const uint8_t tok[] = "a", eos_text[] = "<eos>";
    const uint8_t *toks[2] = {tok, eos_text};
    size_t lens[2] = {1, 5};
    bool special[2] = {false, true};
    uint32_t eos = 1;
    gm_vocab *vocab;
    gm_grammar *g;
    gm_compiled *cg;
    gm_matcher *m;
    gm_error err;
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = GM_FORMAT_EBNF;
    if (gm_vocab_create_from_tokens(toks, lens, 2, special, &eos, 1, NULL, &vocab, &err) ||
        gm_grammar_create(text, strlen(text), "until.ebnf", &go, &g, &err) ||
        gm_compiled_create(g, vocab, NULL, &cg, &err) || gm_matcher_create(cg, NULL, &m, &err))
        fail_msg("%s: %s", text, err.message);
    for (size_t i = 0; i < n; i++) {
        gm_matcher_reset(m);
        /* a byte at a time: every prefix must be viable exactly when the judge says */
        bool ok = gm_matcher_accept_bytes(m, s[i], slen[i], &err) == GM_OK;
        bool done = ok && gm_matcher_is_accepting(m);
        if (ok != v[i] || done != c[i]) {
            gm_test_show_bytes(stderr, s[i], slen[i]);
            fail_msg("\n%s: engine viable %d complete %d, judge %d %d", text, ok, done, v[i],
                     c[i]);
        }
    }
    gm_matcher_destroy(m);
    gm_compiled_destroy(cg);
    gm_grammar_destroy(g);
    gm_vocab_destroy(vocab);
}

static void engine_against_judge(void **state)
{
    (void)state;
    FILE *f = gm_test_python("tests/earley_ref_cases.py", "15");
    static char line[1 << 16];
    char text[4096] = "";
    uint8_t **s = NULL, *v = NULL, *c = NULL;
    uint32_t *slen = NULL;
    size_t n = 0, cap = 0, ncases = 0, nstrings = 0;
    bool until = false;
    for (;;) {
        bool more = fgets(line, sizeof line, f) != NULL;
        if (!more || line[0] != 'S') {
            if (until) {
                engine_case(text, s, slen, v, c, n);
                ncases++;
                nstrings += n;
            }
            for (size_t i = 0; i < n; i++)
                free(s[i]);
            n = 0;
            if (!more)
                break;
            size_t len = gm_test_unhex(line + 2, (uint8_t *)text, sizeof text - 1);
            text[len] = 0;
            until = line[0] == 'X' && strstr(text, "Until(") != NULL;
            continue;
        }
        if (!until)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            s = realloc(s, cap * sizeof *s);
            slen = realloc(slen, cap * sizeof *slen);
            v = realloc(v, cap);
            c = realloc(c, cap);
        }
        uint8_t buf[4096];
        size_t k = gm_test_unhex(line + 2, buf, sizeof buf);
        const char *p = strchr(line + 2, ' ');
        assert_non_null(p);
        s[n] = malloc(k + 1);
        memcpy(s[n], buf, k);
        slen[n] = (uint32_t)k;
        v[n] = (uint8_t)(p[1] - '0');
        c[n] = (uint8_t)(p[3] - '0');
        n++;
    }
    assert_int_equal(pclose(f), 0);
    free(s);
    free(slen);
    free(v);
    free(c);
    printf("until: %zu Until grammars, %zu strings: the engine agrees with the judge\n", ncases,
           nstrings);
    assert_true(ncases >= 18 && nstrings > 5000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_against_definition),
        cmocka_unit_test(engine_against_judge),
        cmocka_unit_test(limits_and_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
