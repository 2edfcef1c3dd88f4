/*
 * The `format` grammars (schema/formats.c, note [formats]) against
 * independent judges (tests/schema_formats.py): python3-jsonschema's
 * FormatChecker for date, ipv4 and ipv6, Python's uuid, and small
 * procedural RFC parsers with Python's datetime for time, date-time,
 * duration, hostname, email, json-pointer and relative-json-pointer; hand-
 * picked strings with written verdicts for uri, uri-reference, iri and
 * uri-template. For each format, {"type": "string", "format": F} must
 * accept the JSON string (spelled with and without \u escapes) exactly
 * when the judge says the string is valid: hand-picked edge cases, random
 * valid values and their mutations (a character inserted, deleted or
 * replaced, non-ASCII digits among them). The one approximation note
 * [formats] documents (a leap second at an offset of a fractional hour:
 * its minute is not checked) is judged apart: the grammar must accept those
 * strings (a superset there, never a subset), and they are counted.
 * With gm_schema_options.format_annotation a format constrains nothing,
 * in strings, in enum/const filtering and in property names.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "earley_ref.h"
#include "schema/schema.h"

#define STRINGS_PER_FORMAT "300"

static void test_formats(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    FILE *py = gm_test_python("tests/schema_formats.py", STRINGS_PER_FORMAT);
    char *line = NULL;
    size_t cap = 0;
    gm_ebnf g;
    gm_eref *r = NULL;
    char fmt[64] = "";
    size_t formats = 0, judged = 0, valid = 0, known = 0, wrong = 0;
    uint8_t *buf = NULL;
    size_t bcap = 0;
    while (getline(&line, &cap, py) > 0) {
        if (!strncmp(line, "F ", 2)) {
            if (r) {
                gm_eref_destroy(r);
                gm_ebnf_free(&g);
            }
            snprintf(fmt, sizeof fmt, "%.*s", (int)strcspn(line + 2, "\n"), line + 2);
            char schema[128];
            snprintf(schema, sizeof schema, "{\"type\": \"string\", \"format\": \"%s\"}", fmt);
            gm_schema_options o;
            gm_schema_options_init_defaults(&o);
            gm_error err;
            gm_ebnf_init(&g, &m);
            gm_status st = gm_schema_compile(&m, "schema", schema, strlen(schema), &o, &g, &err);
            if (st != GM_OK)
                fail_msg("%s: %s: %s", schema, gm_status_name(st), err.message);
            assert_int_equal(gm_eref_create(&g, &r, &err), GM_OK);
            formats++;
            continue;
        }
        assert_non_null(r);
        if (strlen(line) > bcap) {
            bcap = strlen(line);
            buf = realloc(buf, bcap);
            assert_non_null(buf);
        }
        bool want = line[0] == '1', approximated = line[0] == '2';
        size_t n = gm_test_unhex(line + 2, buf, bcap);
        bool complete = false;
        bool got = gm_eref_try(r, buf, n, &complete) && complete;
        judged++;
        valid += want;
        known += approximated;
        if (approximated)
            want = true; /* the grammar's documented superset */
        if (got != want) {
            printf("  WRONG format %s: %s, the grammar %s ", fmt, want ? "valid" : "invalid",
                   got ? "accepts" : "refuses");
            gm_test_show_bytes(stdout, buf, n);
            putchar('\n');
            wrong++;
        }
    }
    if (r) {
        gm_eref_destroy(r);
        gm_ebnf_free(&g);
    }
    free(line);
    free(buf);
    assert_int_equal(pclose(py), 0);
    printf("%zu formats, %zu JSON strings judged (%zu valid, %zu inside the documented leap-second "
           "approximation), %zu wrong\n", formats, judged, valid, known, wrong);
    assert_int_equal(wrong, 0);
    assert_true(formats >= 15 && judged >= 6000 && valid >= 1500);
    assert_int_equal(atomic_load(&m.used), 0);
}

static bool accepts(const char *schema, bool annotation, const char *text)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    assert_false(o.format_annotation);
    o.format_annotation = annotation;
    gm_error err;
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_status st = gm_schema_compile(&m, "schema", schema, strlen(schema), &o, &g, &err);
    if (st != GM_OK)
        fail_msg("%s: %s: %s", schema, gm_status_name(st), err.message);
    gm_eref *r;
    assert_int_equal(gm_eref_create(&g, &r, &err), GM_OK);
    bool complete = false;
    bool ok = gm_eref_try(r, text, strlen(text), &complete) && complete;
    gm_eref_destroy(r);
    gm_ebnf_free(&g);
    assert_int_equal(atomic_load(&m.used), 0);
    return ok;
}

static void test_format_annotation(void **state)
{
    (void)state;
    static const struct {
        const char *schema, *text;
        bool asserted; /* the verdict with formats asserted (the default); annotation: valid */
    } cases[] = {
        {"{\"type\": \"string\", \"format\": \"email\"}", "\"a@b.c\"", true},
        {"{\"type\": \"string\", \"format\": \"email\"}", "\"not an email\"", false},
        {"{\"type\": \"string\", \"format\": \"date\"}", "\"2024-02-30\"", false},
        {"{\"enum\": [\"x\", \"1.2.3.4\"], \"format\": \"ipv4\"}", "\"x\"", false},
        {"{\"enum\": [\"x\", \"1.2.3.4\"], \"format\": \"ipv4\"}", "\"1.2.3.4\"", true},
        {"{\"type\": \"object\", \"propertyNames\": {\"format\": \"uuid\"}}", "{\"k\": 1}", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (accepts(cases[i].schema, false, cases[i].text) != cases[i].asserted)
            fail_msg("asserted: %s on %s", cases[i].schema, cases[i].text);
        if (!accepts(cases[i].schema, true, cases[i].text))
            fail_msg("annotation: %s refuses %s", cases[i].schema, cases[i].text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_format_annotation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
