/*
 * minProperties/maxProperties on objects whose members come in any order
 * (schema/emit_struct.c, any_order_counted), judged by counting: for every
 * schema with 1 to 4 listed properties, every set of them required, and
 * property count bounds around them (additionalProperties false), the
 * any-order grammar must accept a compact object exactly when its distinct
 * names include the required ones and number between the bounds (a name may
 * repeat in any order, note [any order]: a parser keeps one of the values);
 * every sequence of up to 5 listed names is tried. Past 8
 * members the bounds are refused as before (an error naming the keyword).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "earley_ref.h"
#include "schema/schema.h"

static const char names[] = "abcd";

static gm_status compile(gm_mem *m, const char *schema, gm_ebnf *g, gm_error *err)
{
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    o.any_order = true;
    o.whitespace = GM_SCHEMA_WS_COMPACT;
    gm_ebnf_init(g, m);
    gm_error_clear(err);
    return gm_schema_compile(m, "s.json", schema, strlen(schema), &o, g, err);
}

static void test_counted_any_order(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    size_t schemas = 0, texts = 0, wrong = 0;
    for (uint32_t n = 1; n <= 4; n++)
        for (uint32_t req = 0; req < 1u << n; req++)
            for (uint32_t mn = 0; mn <= n + 1; mn++)
                for (uint32_t mx = mn; mx <= n + 1; mx++) {
                    if (mn == 0 && mx == n + 1)
                        continue; /* no bound: not this path */
                    char schema[512];
                    int at = snprintf(schema, sizeof schema, "{\"type\": \"object\", \"properties\": {");
                    for (uint32_t i = 0; i < n; i++)
                        at += snprintf(schema + at, sizeof schema - at, "%s\"%c\": {\"type\": \"integer\"}",
                                       i ? ", " : "", names[i]);
                    at += snprintf(schema + at, sizeof schema - at, "}, \"required\": [");
                    for (uint32_t i = 0, k = 0; i < n; i++)
                        if (req >> i & 1)
                            at += snprintf(schema + at, sizeof schema - at, "%s\"%c\"", k++ ? ", " : "", names[i]);
                    at += snprintf(schema + at, sizeof schema - at,
                                   "], \"additionalProperties\": false, \"minProperties\": %u", mn);
                    if (mx <= n) /* mx == n + 1 stands for no maxProperties */
                        at += snprintf(schema + at, sizeof schema - at, ", \"maxProperties\": %u", mx);
                    snprintf(schema + at, sizeof schema - at, "}");
                    gm_ebnf g;
                    gm_error err;
                    gm_status st = compile(&m, schema, &g, &err);
                    bool satisfiable = false;
                    for (uint32_t S = 0; S < 1u << n; S++) {
                        uint32_t k = (uint32_t)__builtin_popcount(S);
                        satisfiable |= (S & req) == req && k >= mn && k <= mx;
                    }
                    if (!satisfiable) {
                        /* no instance: an error saying so, never a grammar */
                        gm_ebnf_free(&g);
                        if (st == GM_OK)
                            fail_msg("%s: compiled, but no object satisfies it", schema);
                        continue;
                    }
                    if (st != GM_OK) {
                        gm_ebnf_free(&g);
                        fail_msg("%s: %s: %s", schema, gm_status_name(st), err.message);
                    }
                    schemas++;
                    gm_eref *r;
                    assert_int_equal(gm_eref_create(&g, &r, &err), GM_OK);
                    /* every sequence of 0..5 names out of n, repeats included */
                    for (uint32_t len = 0; len <= 5; len++) {
                        uint32_t total = 1;
                        for (uint32_t i = 0; i < len; i++)
                            total *= n;
                        for (uint32_t code = 0; code < total; code++) {
                            char text[64] = "{";
                            uint32_t seen = 0, x = code;
                            for (uint32_t i = 0; i < len; i++, x /= n) {
                                uint32_t j = x % n;
                                seen |= 1u << j;
                                size_t tl = strlen(text);
                                snprintf(text + tl, sizeof text - tl, "%s\"%c\":1", i ? "," : "", names[j]);
                            }
                            strcat(text, "}");
                            uint32_t k = (uint32_t)__builtin_popcount(seen);
                            bool want = len > 0 ? (seen & req) == req && k >= mn && (mx > n || k <= mx)
                                                : req == 0 && mn == 0;
                            bool complete = false;
                            bool got = gm_eref_try(r, text, strlen(text), &complete) && complete;
                            texts++;
                            if (got != want) {
                                printf("  WRONG %s: %s %s\n", schema, text, got ? "accepted" : "refused");
                                wrong++;
                            }
                        }
                    }
                    gm_eref_destroy(r);
                    gm_ebnf_free(&g);
                }
    printf("%zu schemas, %zu objects judged by counting, %zu wrong\n", schemas, texts, wrong);
    assert_int_equal(wrong, 0);
    assert_true(schemas > 100);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Nine members in any order with a count bound: refused, naming the keyword. */
static void test_too_many_members(void **state)
{
    (void)state;
    const char *schema = "{\"type\": \"object\", \"properties\": {\"a\": {}, \"b\": {}, \"c\": {}, \"d\": {}, "
                         "\"e\": {}, \"f\": {}, \"g\": {}, \"h\": {}, \"i\": {}}, \"additionalProperties\": false, "
                         "\"maxProperties\": 2}";
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_error err;
    gm_status st = compile(&m, schema, &g, &err);
    gm_ebnf_free(&g);
    if (st != GM_ERR_UNSUPPORTED || !strstr(err.message, "keyword 'maxProperties' at /maxProperties"))
        fail_msg("%s: %s", gm_status_name(st), err.message);
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counted_any_order),
        cmocka_unit_test(test_too_many_members),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
