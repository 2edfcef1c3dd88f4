/*
 * Integer multipleOf over unbounded ranges (schema/emit_scalar.c, the
 * divisibility rules): for each modulus k up to the bound (1024, XGrammar's
 * bound for an integer multipleOf), the grammar of {"type": "integer",
 * "multipleOf": k} (with a bound at zero, or none) must accept a number
 * exactly when integer arithmetic says it is a multiple in range, judged by
 * the reference recognizer on every integer of a window around zero, on
 * large multiples and their neighbours, and on the spellings JSON Schema
 * gives an integer (-0, 5.0). Past the bound the keyword is refused, and
 * relaxed with a warning under lenient.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "earley_ref.h"
#include "schema/schema.h"

static bool accepts_in(gm_eref *r, const char *text)
{
    bool complete = false;
    return gm_eref_try(r, text, strlen(text), &complete) && complete;
}

static bool accepts(const gm_ebnf *g, const char *text)
{
    gm_eref *r;
    gm_error err;
    assert_int_equal(gm_eref_create(g, &r, &err), GM_OK);
    bool ok = accepts_in(r, text);
    gm_eref_destroy(r);
    return ok;
}

static gm_status compile(gm_mem *m, const char *schema, bool lenient, gm_warning_fn warn, gm_ebnf *g,
                         gm_error *err)
{
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    o.lenient = lenient;
    o.warn = warn;
    gm_ebnf_init(g, m);
    gm_error_clear(err);
    return gm_schema_compile(m, "s.json", schema, strlen(schema), &o, g, err);
}

/* bound: 0 none, 1 minimum 0, 2 maximum 0, 3 exclusiveMinimum 0 */
static bool in_range(long long v, int bound)
{
    return bound == 0 || (bound == 1 && v >= 0) || (bound == 2 && v <= 0) || (bound == 3 && v > 0);
}

static void test_unbounded_moduli(void **state)
{
    (void)state;
    static const unsigned moduli[] = {2, 3, 7, 10, 12, 25, 999, 1000, 1023, 1024};
    static const char *const bounds[] = {"", ", \"minimum\": 0", ", \"maximum\": 0", ", \"exclusiveMinimum\": 0"};
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    size_t checked = 0, wrong = 0;
    for (size_t i = 0; i < sizeof moduli / sizeof *moduli; i++)
        for (int bound = 0; bound < 4; bound++) {
            unsigned k = moduli[i];
            char schema[160], text[64];
            snprintf(schema, sizeof schema, "{\"type\": \"integer\", \"multipleOf\": %u%s}", k, bounds[bound]);
            gm_ebnf g;
            gm_error err;
            gm_status st = compile(&m, schema, false, NULL, &g, &err);
            if (st != GM_OK)
                fail_msg("%s: %s: %s", schema, gm_status_name(st), err.message);
            /* a window around zero, then multiples of k and their neighbours */
            long long probes[700];
            size_t n = 0;
            for (long long v = -300; v <= 300; v++)
                probes[n++] = v;
            long long big[] = {(long long)k, 2 * (long long)k, -(long long)k, -3 * (long long)k,
                               (long long)k * 977, (long long)k * 123456789, -(long long)k * 31415926};
            for (size_t j = 0; j < sizeof big / sizeof *big; j++) {
                probes[n++] = big[j] - 1;
                probes[n++] = big[j];
                probes[n++] = big[j] + 1;
            }
            gm_eref *r;
            assert_int_equal(gm_eref_create(&g, &r, &err), GM_OK);
            for (size_t j = 0; j < n; j++) {
                long long v = probes[j];
                bool want = v % (long long)k == 0 && in_range(v, bound);
                snprintf(text, sizeof text, "%lld", v);
                bool got = accepts_in(r, text);
                /* an integer with a zero fraction is the same number (draft 6 on) */
                snprintf(text, sizeof text, "%lld.00", v);
                bool got_frac = accepts_in(r, text);
                checked++;
                if (got != want || got_frac != want) {
                    printf("  WRONG %s: %lld %s (%s with .00)\n", schema, v, got ? "accepted" : "refused",
                           got_frac ? "accepted" : "refused");
                    wrong++;
                }
            }
            /* -0 is zero; a leading zero or a fraction that is not zero is no integer */
            bool zero_ok = in_range(0, bound);
            if (accepts_in(r, "-0") != zero_ok || accepts_in(r, "0.0") != zero_ok || accepts_in(r, "00") ||
                accepts_in(r, "010") || accepts_in(r, "1e3") || accepts_in(r, "0.5")) {
                printf("  WRONG %s: zero or malformed spellings\n", schema);
                wrong++;
            }
            gm_eref_destroy(r);
            gm_ebnf_free(&g);
        }
    printf("%zu integers judged against arithmetic, %zu wrong\n", checked, wrong);
    assert_int_equal(wrong, 0);
    assert_int_equal(atomic_load(&m.used), 0);
}

static int nwarn;

static void count_warning(void *ud, const gm_error *w)
{
    (void)ud;
    if (strstr(w->message, "multipleOf"))
        nwarn++;
}

/* Past the bound: refused naming the keyword, or relaxed (the range kept) under lenient. */
static void test_past_the_bound(void **state)
{
    (void)state;
    static const char *const schemas[] = {
        "{\"type\": \"integer\", \"multipleOf\": 1025}",
        "{\"type\": \"integer\", \"multipleOf\": 1e30}",
    };
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    for (size_t i = 0; i < sizeof schemas / sizeof *schemas; i++) {
        gm_ebnf g;
        gm_error err;
        gm_status st = compile(&m, schemas[i], false, NULL, &g, &err);
        gm_ebnf_free(&g);
        if (st != GM_ERR_UNSUPPORTED || !strstr(err.message, "keyword 'multipleOf' at /multipleOf"))
            fail_msg("%s: %s: %s", schemas[i], gm_status_name(st), err.message);
        nwarn = 0;
        st = compile(&m, schemas[i], true, count_warning, &g, &err);
        if (st != GM_OK)
            fail_msg("%s (lenient): %s: %s", schemas[i], gm_status_name(st), err.message);
        assert_int_equal(nwarn, 1);
        assert_true(accepts(&g, "1025") && accepts(&g, "7") && !accepts(&g, "1.5"));
        gm_ebnf_free(&g);
    }
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unbounded_moduli),
        cmocka_unit_test(test_past_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
