/*
 * gm_matcher_temperature: XGrammar's rule temperatures (note [rule
 * temperatures] in earley/temperature.c) through the public API: the
 * innermost open rule's temperature at each step, the largest and smallest
 * where readings disagree, none outside and after the end, kept across
 * clone and rollback and through a compiled file (the Earley payload's
 * version 4), and masks equal to the same grammar without the attribute.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gramask.h"

static gm_vocab *make_vocab(void)
{
    static const char *const words[] = {"a", "b", "x", "z", "ab", "xz"};
    const uint8_t *toks[6];
    size_t lens[6];
    for (size_t i = 0; i < 6; i++) {
        toks[i] = (const uint8_t *)words[i];
        lens[i] = strlen(words[i]);
    }
    gm_vocab *v;
    gm_error err;
    if (gm_vocab_create_from_tokens(toks, lens, 6, NULL, NULL, 0, NULL, &v, &err))
        fail_msg("vocab: %s", err.message);
    return v;
}

static gm_compiled *compile(gm_vocab *v, const char *text)
{
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = GM_FORMAT_EBNF;
    gm_grammar *g;
    gm_compiled *c;
    gm_error err;
    if (gm_grammar_create(text, strlen(text), "t.ebnf", &go, &g, &err))
        fail_msg("grammar: %s", err.message);
    if (gm_compiled_create(g, v, NULL, &c, &err))
        fail_msg("compile: %s", err.message);
    gm_grammar_destroy(g);
    return c;
}

static gm_matcher *matcher(gm_compiled *c)
{
    gm_matcher_options mo = {.terminate_without_stop_token = true};
    gm_matcher *m;
    gm_error err;
    if (gm_matcher_create(c, &mo, &m, &err))
        fail_msg("matcher: %s", err.message);
    return m;
}

static void expect(gm_matcher *m, float hi, float lo)
{
    float h, l;
    gm_error err;
    assert_int_equal(gm_matcher_temperature(m, &h, &l, &err), GM_OK);
    if (fabsf(h - hi) > 1e-6f || fabsf(l - lo) > 1e-6f)
        fail_msg("temperature (%g, %g), wanted (%g, %g)", (double)h, (double)l, (double)hi,
                 (double)lo);
}

static void step(gm_matcher *m, const char *s)
{
    gm_error err;
    if (gm_matcher_accept_bytes(m, (const uint8_t *)s, strlen(s), &err))
        fail_msg("accept %s: %s", s, err.message);
}

static const char nested[] = "root ::= \"a\" outer \"z\"\n"
                             "outer[temperature=0.6] ::= \"x\" inner \"x\"\n"
                             "inner[temperature=0.25] ::= \"b\"+\n";
static const char plain[] = "root ::= \"a\" outer \"z\"\n"
                            "outer ::= \"x\" inner \"x\"\n"
                            "inner ::= \"b\"+\n";

static void nested_rules(void **state)
{
    (void)state;
    gm_vocab *v = make_vocab();
    gm_compiled *c = compile(v, nested), *p = compile(v, plain);
    gm_matcher *m = matcher(c), *q = matcher(p);
    static const char *const steps[] = {"", "a", "x", "b", "b", "x", "z"};
    static const float hi[] = {-1, 0.6f, 0.25f, 0.6f, 0.6f, -1, -1};
    static const float lo[] = {-1, 0.6f, 0.25f, 0.25f, 0.25f, -1, -1};
    for (size_t i = 0; i < 7; i++) {
        step(m, steps[i]);
        step(q, steps[i]);
        expect(m, hi[i], lo[i]);
        uint32_t a[1], b[1];
        gm_error err;
        assert_int_equal(gm_matcher_fill_mask(m, a, 1, &err), GM_OK);
        assert_int_equal(gm_matcher_fill_mask(q, b, 1, &err), GM_OK);
        assert_int_equal(a[0], b[0]); /* the attribute changes no mask */
    }
    gm_matcher_destroy(m);
    gm_matcher_destroy(q);
    gm_compiled_destroy(p);
    gm_compiled_destroy(c);
    gm_vocab_destroy(v);
}

static void clone_rollback_and_file(void **state)
{
    (void)state;
    gm_vocab *v = make_vocab();
    gm_compiled *c = compile(v, nested);
    uint8_t *bytes;
    size_t len;
    gm_error err;
    assert_int_equal(gm_compiled_save_bytes(c, &bytes, &len, &err), GM_OK);
    gm_compiled *back;
    assert_int_equal(gm_compiled_load_bytes(bytes, len, NULL, &back, &err), GM_OK);
    gm_compiled_free_bytes(c, bytes);
    gm_compiled *both[] = {c, back};
    for (size_t k = 0; k < 2; k++) {
        gm_matcher_options mo = {.terminate_without_stop_token = true, .max_rollback = 8};
        gm_matcher *m;
        assert_int_equal(gm_matcher_create(both[k], &mo, &m, &err), GM_OK);
        assert_int_equal(gm_matcher_accept_token(m, 0, &err), GM_OK); /* a */
        assert_int_equal(gm_matcher_accept_token(m, 2, &err), GM_OK); /* x */
        expect(m, 0.25f, 0.25f);
        gm_matcher *d;
        assert_int_equal(gm_matcher_clone(m, &d, &err), GM_OK);
        assert_int_equal(gm_matcher_rollback(m, 1, &err), GM_OK);
        expect(m, 0.6f, 0.6f);
        expect(d, 0.25f, 0.25f);
        gm_matcher_destroy(d);
        gm_matcher_destroy(m);
    }
    gm_compiled_destroy(back);
    gm_compiled_destroy(c);
    gm_vocab_destroy(v);
}

static void arguments(void **state)
{
    (void)state;
    float h, l;
    gm_error err;
    assert_int_equal(gm_matcher_temperature(NULL, &h, &l, &err), GM_ERR_ARGUMENT);
    gm_vocab *v = make_vocab();
    gm_compiled *c = compile(v, "root ::= \"a\"");
    gm_matcher *m = matcher(c);
    assert_int_equal(gm_matcher_temperature(m, NULL, &l, &err), GM_ERR_ARGUMENT);
    expect(m, -1, -1); /* a grammar without temperatures */
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    gm_vocab_destroy(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nested_rules),
        cmocka_unit_test(clone_rollback_and_file),
        cmocka_unit_test(arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
