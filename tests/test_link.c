/*
 * gm_grammar_link (XGrammar's Lark dialect: %json and named grammars),
 * written against include/gramask.h: an EBNF grammar whose placeholder
 * rule is replaced by a regex grammar and a JSON Schema accepts exactly
 * what the same grammar written out in one EBNF text accepts, on every
 * string of up to five characters over its alphabet; the parts' own rule
 * names (the same as the main grammar's) do not clash; refused inputs name
 * what is wrong.
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

static gm_compiled *compile(gm_grammar *g)
{
    gm_compiled *c;
    gm_error err;
    if (gm_compiled_create(g, vocab, NULL, &c, &err))
        fail_msg("%s", err.message);
    return c;
}

/* Whether c accepts s[0..len) as a whole. */
static bool accepts(gm_compiled *c, const char *s, size_t len)
{
    gm_matcher *m;
    gm_error err;
    if (gm_matcher_create(c, NULL, &m, &err))
        fail_msg("%s", err.message);
    bool yes = gm_matcher_accept_bytes(m, (const uint8_t *)s, len, &err) == GM_OK &&
               gm_matcher_is_accepting(m);
    gm_matcher_destroy(m);
    return yes;
}

static void test_link_matches_written_out(void **state)
{
    (void)state;
    /* x and y are placeholders; the regex part has a rule called x too (its own root's
       copy), the schema part rules of its own */
    gm_grammar *main_g = make("root ::= \"[\" x (\",\" x)* \"]\" y\nx ::= \"\"\ny ::= \"\"",
                              GM_FORMAT_EBNF);
    gm_grammar *parts[2] = {make("root ::= x+\nx ::= \"a\" | \"bc\"", GM_FORMAT_EBNF),
                            make("(1|2)?", GM_FORMAT_REGEX)};
    const char *names[2] = {"x", "y"};
    gm_grammar *linked;
    gm_error err;
    if (gm_grammar_link(main_g, names, parts, 2, NULL, &linked, &err))
        fail_msg("%s", err.message);
    gm_grammar *want_g = make("root ::= \"[\" x (\",\" x)* \"]\" (\"1\" | \"2\")?\n"
                              "x ::= (\"a\" | \"bc\")+", GM_FORMAT_EBNF);
    gm_compiled *got = compile(linked), *want = compile(want_g);
    static const char alphabet[] = "[],abc12";
    const size_t na = sizeof alphabet - 1;
    char s[8];
    for (size_t len = 0; len <= 5; len++) {
        size_t total = 1;
        for (size_t k = 0; k < len; k++)
            total *= na;
        for (size_t code = 0; code < total; code++) {
            size_t x = code;
            for (size_t k = 0; k < len; k++, x /= na)
                s[k] = alphabet[x % na];
            bool w = accepts(want, s, len);
            if (accepts(got, s, len) != w)
                fail_msg("linked grammar on \"%.*s\": want %d", (int)len, s, w);
        }
    }
    gm_compiled_destroy(got);
    gm_compiled_destroy(want);
    gm_grammar_destroy(want_g);
    gm_grammar_destroy(linked);
    gm_grammar_destroy(parts[0]);
    gm_grammar_destroy(parts[1]);
    gm_grammar_destroy(main_g);
}

static void test_refused(void **state)
{
    (void)state;
    gm_grammar *main_g = make("root ::= x\nx ::= \"\"", GM_FORMAT_EBNF);
    gm_grammar *lark = make("start: \"a\"", GM_FORMAT_LARK);
    gm_grammar *part = make("a+", GM_FORMAT_REGEX);
    gm_grammar *out = (gm_grammar *)1;
    gm_error err;
    const char *x = "x", *missing = "missing";
    assert_int_equal(gm_grammar_link(main_g, &x, &lark, 1, NULL, &out, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "part 0"));
    assert_null(out);
    assert_int_equal(gm_grammar_link(lark, &x, &part, 1, NULL, &out, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "main grammar"));
    assert_int_equal(gm_grammar_link(main_g, &missing, &part, 1, NULL, &out, &err),
                     GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "no rule missing"));
    assert_int_equal(gm_grammar_link(main_g, NULL, &part, 1, NULL, &out, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_grammar_link(main_g, &x, &part, 1, NULL, NULL, &err), GM_ERR_ARGUMENT);
    gm_grammar_destroy(main_g);
    gm_grammar_destroy(lark);
    gm_grammar_destroy(part);
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
        cmocka_unit_test(test_link_matches_written_out),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
