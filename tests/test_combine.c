/*
 * gm_grammar_combine (XGrammar's Grammar.union / Grammar.concat), written
 * against include/gramask.h: on every string of up to six characters over
 * the grammars' alphabet, the union accepts it iff one of the grammars
 * does, and the concatenation iff some split of it is accepted piece by
 * piece, in order (each checked on the grammars themselves); rule names
 * shared by the grammars do not clash; refused inputs name the grammar.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gramask.h"
#include "tests/apitest.h"

static gm_vocab *vocab;

static gm_grammar *make(const char *text, gm_grammar_format format)
{
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = format;
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_create(text, strlen(text), "t", &go, &g, &err))
        fail_msg("%s: %s", text, err.message);
    return g;
}

/* Whether g accepts s[0..len) as a whole. */
static bool accepts(gm_grammar *g, const char *s, size_t len)
{
    gm_compiled *c;
    gm_matcher *m;
    gm_error err;
    if (gm_compiled_create(g, vocab, NULL, &c, &err) || gm_matcher_create(c, NULL, &m, &err))
        fail_msg("%s", err.message);
    bool yes = gm_matcher_accept_bytes(m, (const uint8_t *)s, len, &err) == GM_OK &&
               gm_matcher_is_accepting(m);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    return yes;
}

static const char *const parts[][2] = {
    /* the same rule names in each, so a clash would show */
    {"root ::= r | \"\"\nr ::= \"a\" r | \"b\"", NULL},
    {"root ::= r \"c\"\nr ::= \"ab\" | \"c\"", NULL},
    {"(a|bc)*c?", "regex"},
};

static void test_union_and_concat(void **state)
{
    (void)state;
    gm_grammar *g[3];
    for (int i = 0; i < 3; i++)
        g[i] = make(parts[i][0], parts[i][1] ? GM_FORMAT_REGEX : GM_FORMAT_EBNF);
    gm_grammar *u, *c;
    gm_error err;
    if (gm_grammar_combine(g, 3, GM_COMBINE_UNION, NULL, &u, &err) ||
        gm_grammar_combine(g, 3, GM_COMBINE_CONCAT, NULL, &c, &err))
        fail_msg("%s", err.message);
    static const char alphabet[] = "abc";
    char s[8];
    for (size_t len = 0; len <= 6; len++) {
        size_t total = 1;
        for (size_t k = 0; k < len; k++)
            total *= 3;
        for (size_t code = 0; code < total; code++) {
            size_t x = code;
            for (size_t k = 0; k < len; k++, x /= 3)
                s[k] = alphabet[x % 3];
            bool any = false;
            for (int i = 0; i < 3; i++)
                any = any || accepts(g[i], s, len);
            bool split = false;
            for (size_t i = 0; i <= len && !split; i++)
                for (size_t j = i; j <= len && !split; j++)
                    split = accepts(g[0], s, i) && accepts(g[1], s + i, j - i) &&
                            accepts(g[2], s + j, len - j);
            if (accepts(u, s, len) != any)
                fail_msg("union on \"%.*s\": want %d", (int)len, s, any);
            if (accepts(c, s, len) != split)
                fail_msg("concat on \"%.*s\": want %d", (int)len, s, split);
        }
    }
    gm_grammar_destroy(u);
    gm_grammar_destroy(c);
    for (int i = 0; i < 3; i++)
        gm_grammar_destroy(g[i]);
}

static void test_refused(void **state)
{
    (void)state;
    gm_grammar *g[2] = {make("root ::= \"a\"", GM_FORMAT_EBNF), make("start: \"a\"", GM_FORMAT_LARK)};
    gm_grammar *out = (gm_grammar *)1;
    gm_error err;
    assert_int_equal(gm_grammar_combine(g, 2, GM_COMBINE_UNION, NULL, &out, &err),
                     GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "grammar 1 is a Lark grammar"));
    assert_null(out);
    assert_int_equal(gm_grammar_combine(g, 0, GM_COMBINE_UNION, NULL, &out, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_grammar_combine(g, 1, (gm_combine)7, NULL, &out, &err), GM_ERR_ARGUMENT);
    gm_grammar_destroy(g[0]);
    gm_grammar_destroy(g[1]);
}

static int setup(void **state)
{
    (void)state;
    static const char *const toks[] = {"a", "b", "c", "</s>"};
    gm_error err;
    return gm_apitest_vocab(toks, 4, 3, &vocab, &err) == GM_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    gm_vocab_destroy(vocab);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_union_and_concat),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
