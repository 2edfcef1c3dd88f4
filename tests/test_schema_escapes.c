/*
 * JSON Schema grammars accept every spelling of a string that RFC 8259
 * allows (note [string encoding] in schema/irb.h), judged by the reference
 * recognizer (tests/earley_ref) against independent references:
 *   - edge cases (escaped quotes and backslashes, upper-case hex, surrogate
 *     pairs, lone surrogates, lengths counted in characters, enum/const,
 *     patterns, formats, keys) with their verdict written here, each also
 *     judged by Python's json + python3-jsonschema (tests/schema_escapes.py),
 *     lone surrogates excepted: Python's json reads them, RFC 8259 leaves
 *     them unpredictable and gramask refuses them (no UTF-8 spells them);
 *   - MaskBench (../shared/maskbench, every 6th schema with instances, any
 *     order as `gramask maskbench` compiles them): each instance as MaskBench
 *     spells it, re-serialized with json.dumps(ensure_ascii=True) strings,
 *     and with every character spelled at random, must get one verdict, and
 *     that verdict is python3-jsonschema's wherever it and MaskBench's label
 *     agree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "earley_ref.h"
#include "schema/schema.h"

static bool accepts(const gm_ebnf *g, const void *text, size_t n)
{
    gm_eref *r;
    gm_error err;
    assert_int_equal(gm_eref_create(g, &r, &err), GM_OK);
    bool ok = gm_eref_feed(r, text, n) && gm_eref_accepting(r);
    gm_eref_destroy(r);
    return ok;
}

typedef struct ecase {
    const char *schema;
    const char *text;
    bool valid;
    bool lone;              /* holds a lone surrogate: Python's json reads it, gramask refuses */
} ecase;

#define S_STR "{\"type\":\"string\"}"
#define S_MAX1 "{\"type\":\"string\",\"maxLength\":1}"
#define S_MIN2 "{\"type\":\"string\",\"minLength\":2}"
#define S_ENUM "{\"enum\":[\"a\\\"b\",\"Zo\\u00eb\",\"\\ud83d\\ude00\",\"c\\\\d\"]}"
#define S_CONST "{\"const\":\"a/b\"}"
#define S_LOWER "{\"type\":\"string\",\"pattern\":\"^[a-z]+$\"}"
#define S_EMOJI "{\"type\":\"string\",\"pattern\":\"^[\\ud83d\\ude00-\\ud83d\\ude02]x?$\"}"
#define S_LENPAT "{\"type\":\"string\",\"pattern\":\"^[^a]*$\",\"maxLength\":2,\"minLength\":2}"
#define S_DATE "{\"type\":\"string\",\"format\":\"date\"}"
#define S_KEYS "{\"type\":\"object\",\"properties\":{\"\\u00e9\":{\"type\":\"integer\"},\"a\":{\"type\":\"integer\"}}," \
               "\"additionalProperties\":{\"type\":\"string\"}}"
#define S_PP "{\"type\":\"object\",\"patternProperties\":{\"^x-\":{\"type\":\"integer\"}},\"additionalProperties\":false}"
#define S_PN "{\"type\":\"object\",\"propertyNames\":{\"maxLength\":1}}"
#define S_NOT "{\"type\":\"string\",\"not\":{\"enum\":[\"a\",\"\\\"\"]}}"

static const ecase cases[] = {
    {S_STR, "\"Zo\\u00eb\"", true, false},
    {S_STR, "\"Zo\\u00EB\"", true, false},
    {S_STR, "\"Zo\\u00Eb\"", true, false},
    {S_STR, "\"\\u0022\\u005C\\u005c\\u002F\\/\"", true, false},
    {S_STR, "\"\\u0000\\u001f\\u001F\\b\\f\\n\\r\\t\"", true, false},
    {S_STR, "\"\\uD83D\\uDE00\"", true, false},
    {S_STR, "\"\\ud83d\\ude00\"", true, false},
    {S_STR, "\"\\uD83d\\uDe00x\"", true, false},
    {S_STR, "\"\\uFFFF\\uE000\\uD7FF\\uDBFF\\uDFFF\"", true, false},
    {S_STR, "\"\\uD83D\"", false, true},
    {S_STR, "\"\\uDE00\"", false, true},
    {S_STR, "\"\\uDE00\\uD83D\"", false, true},
    {S_STR, "\"\\uD83D\\uD83D\"", false, true},
    {S_STR, "\"\\uD83Dx\"", false, true},
    {S_STR, "\"\\uD83D\\n\"", false, true},
    {S_STR, "\"\\u00\"", false, false},
    {S_STR, "\"\\u00g0\"", false, false},
    {S_STR, "\"\\U0041\"", false, false},
    {S_STR, "\"\\x41\"", false, false},
    {S_STR, "\"\\a\"", false, false},
    {S_STR, "\"\\u0022\"\"", false, false},
    {S_MAX1, "\"\\u00e9\"", true, false},
    {S_MAX1, "\"\\uD83D\\uDE00\"", true, false},
    {S_MAX1, "\"\\u005C\"", true, false},
    {S_MAX1, "\"\\u0061b\"", false, false},
    {S_MAX1, "\"\\u0061\\u0062\"", false, false},
    {S_MAX1, "\"\\uD83D\\uDE00\\uD83D\\uDE00\"", false, false},
    {S_MIN2, "\"\\uD83D\\uDE00\"", false, false},
    {S_MIN2, "\"\\uD83D\\uDE00a\"", true, false},
    {S_MIN2, "\"\\u0061\"", false, false},
    {S_MIN2, "\"\\n\\u000a\"", true, false},
    {S_ENUM, "\"a\\u0022b\"", true, false},
    {S_ENUM, "\"\\u0061\\u0022\\u0062\"", true, false},
    {S_ENUM, "\"a\\u0022c\"", false, false},
    {S_ENUM, "\"Zo\\u00eb\"", true, false},
    {S_ENUM, "\"Zo\\u00EB\"", true, false},
    {S_ENUM, "\"Zo\xc3\xab\"", true, false},
    {S_ENUM, "\"Zo\\u00ec\"", false, false},
    {S_ENUM, "\"\\ud83d\\ude00\"", true, false},
    {S_ENUM, "\"\xf0\x9f\x98\x80\"", true, false},
    {S_ENUM, "\"\\ud83d\\ude01\"", false, false},
    {S_ENUM, "\"c\\u005cd\"", true, false},
    {S_ENUM, "\"c\\\\d\"", true, false},
    {S_ENUM, "\"c\\u005c\\u005cd\"", false, false},
    {S_CONST, "\"a\\/b\"", true, false},
    {S_CONST, "\"a\\u002fb\"", true, false},
    {S_CONST, "\"a\\u002Fb\"", true, false},
    {S_CONST, "\"a\\\\b\"", false, false},
    {S_LOWER, "\"\\u0061bc\"", true, false},
    {S_LOWER, "\"\\u007a\\u007A\"", true, false},
    {S_LOWER, "\"\\u0041\"", false, false},
    {S_LOWER, "\"\\u005a\"", false, false},
    {S_LOWER, "\"a\\u00e9\"", false, false},
    {S_EMOJI, "\"\\uD83D\\uDE01\"", true, false},
    {S_EMOJI, "\"\xf0\x9f\x98\x81\\u0078\"", true, false},
    {S_EMOJI, "\"\\uD83D\\uDE03\"", false, false},
    {S_EMOJI, "\"\\uD83C\\uDE01\"", false, false},
    {S_LENPAT, "\"\\u0062\\u0063\"", true, false},
    {S_LENPAT, "\"\\u0062\\u0061\"", false, false},
    {S_LENPAT, "\"b\\uD83D\\uDE00\"", true, false},
    {S_LENPAT, "\"b\\uD83D\\uDE00c\"", false, false},
    {S_DATE, "\"2024-01-0\\u0031\"", true, false},
    {S_DATE, "\"2024\\u002d01-01\"", true, false},
    {S_DATE, "\"2024-01-3\\u0032\"", false, false},
    {S_KEYS, "{\"\\u00e9\": 1}", true, false},
    {S_KEYS, "{\"\\u00E9\": \"x\"}", false, false},
    {S_KEYS, "{\"\\u00e8\": \"x\"}", true, false},
    {S_KEYS, "{\"\\u0061\": 1, \"b\": \"s\"}", true, false},
    {S_KEYS, "{\"\\u0061\": \"s\"}", false, false},
    {S_KEYS, "{\"\\u0062\": 1}", false, false},
    {S_PP, "{\"\\u0078-a\": 1}", true, false},
    {S_PP, "{\"x\\u002Da\": \"s\"}", false, false},
    {S_PP, "{\"\\u0079\": 1}", false, false},
    {S_PN, "{\"\\uD83D\\uDE00\": 1}", true, false},
    {S_PN, "{\"\\u0061\\u0062\": 1}", false, false},
    {S_NOT, "\"\\u0061\"", false, false},
    {S_NOT, "\"\\u0022\"", false, false},
    {S_NOT, "\"\\u0062\"", true, false},
};

static bool compile(gm_mem *m, const char *schema, size_t len, bool any_order, gm_ebnf *g)
{
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    o.any_order = any_order;
    gm_error err;
    gm_ebnf_init(g, m);
    gm_status st = gm_schema_compile(m, "schema", schema, len, &o, g, &err);
    if (st != GM_OK)
        gm_ebnf_free(g);
    return st == GM_OK;
}

static void test_edge_cases(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    size_t n = sizeof cases / sizeof *cases, wrong = 0;
    for (size_t i = 0; i < n; i++)
        for (int any = 0; any < 2; any++) {
            gm_ebnf g;
            if (!compile(&m, cases[i].schema, strlen(cases[i].schema), any, &g))
                fail_msg("%s does not compile", cases[i].schema);
            bool got = accepts(&g, cases[i].text, strlen(cases[i].text));
            gm_ebnf_free(&g);
            if (got != cases[i].valid) {
                printf("  WRONG %s%s: %s %s\n", cases[i].schema, any ? " (any order)" : "",
                       cases[i].text, got ? "accepted" : "refused");
                wrong++;
            }
        }
    /* the written verdicts against Python's */
    char path[] = "/tmp/gm_schema_esc_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "S %s\n%zu ", cases[i].schema, i);
        for (const char *p = cases[i].text; *p; p++)
            fprintf(f, "%02x", (unsigned char)*p);
        fputc('\n', f);
    }
    fclose(f);
    FILE *py = gm_test_python("tests/schema_escapes.py", path);
    char line[64];
    size_t k = 0, differ = 0;
    while (fgets(line, sizeof line, py) && k < n) {
        /* Python's json reads lone surrogates: a valid string for it */
        char want = cases[k].lone || cases[k].valid ? '1' : '0';
        if (line[0] != want && !(line[0] == 'x' && want == '0')) {
            printf("  PYTHON differs on %s: %s -> %c\n", cases[k].schema, cases[k].text, line[0]);
            differ++;
        }
        k++;
    }
    assert_int_equal(pclose(py), 0);
    remove(path);
    printf("%zu edge cases, two layouts each; Python judged %zu\n", n, k);
    assert_int_equal(k, n);
    assert_int_equal(differ, 0);
    assert_int_equal(wrong, 0);
}

static void test_maskbench(void **state)
{
    (void)state;
    const char *dev = gm_test_shared_path("maskbench/dev.jsonl.gz");
    FILE *probe = fopen(dev, "rb");
    if (!probe) {
        print_message("no %s: skipped\n", dev);
        skip();
    }
    fclose(probe);
    FILE *py = gm_test_python("tests/schema_escapes.py", dev);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    char *line = NULL;
    size_t cap = 0;
    gm_ebnf g;
    bool have = false;
    size_t schemas = 0, compiled = 0, instances = 0, judged = 0, label_differs = 0, with_escape = 0;
    size_t respelled_differs = 0, judge_differs = 0;
    uint8_t *buf[3] = {NULL, NULL, NULL};
    size_t bcap = 0;
    while (getline(&line, &cap, py) > 0) {
        if (!strncmp(line, "S ", 2)) {
            if (have)
                gm_ebnf_free(&g);
            schemas++;
            have = compile(&m, line + 2, strlen(line + 2) - 1, true, &g);
            compiled += have;
            continue;
        }
        if (!have)
            continue;
        if (strlen(line) > bcap) {
            bcap = strlen(line);
            for (int j = 0; j < 3; j++)
                buf[j] = realloc(buf[j], bcap);
        }
        int judge = line[0] - '0', label = line[2] - '0';
        const char *p = line + 4;
        size_t len[3];
        bool got[3];
        for (int j = 0; j < 3; j++) {
            len[j] = gm_test_unhex(p, buf[j], bcap);
            p += 2 * len[j] + 1;
            got[j] = accepts(&g, buf[j], len[j]);
        }
        instances++;
        with_escape += memchr(buf[1], '\\', len[1]) != NULL;
        if (got[1] != got[0] || got[2] != got[0]) {
            respelled_differs++;
            printf("  RESPELLED: %.*s -> %d, ascii %d, mixed %d: %.*s\n", (int)len[0], buf[0], got[0],
                   got[1], got[2], (int)len[2], buf[2]);
        }
        if (judge != label) {
            label_differs++;
            continue;
        }
        judged++;
        if (got[1] != (judge == 1)) {
            judge_differs++;
            printf("  JUDGE: python3-jsonschema says %s, the grammar %s %.*s\n",
                   judge ? "valid" : "invalid", got[1] ? "accepts" : "refuses", (int)len[1], buf[1]);
        }
    }
    if (have)
        gm_ebnf_free(&g);
    free(line);
    for (int j = 0; j < 3; j++)
        free(buf[j]);
    assert_int_equal(pclose(py), 0);
    printf("MaskBench: %zu schemas, %zu compiled; %zu instances (%zu with escapes in the ensure_ascii "
           "spelling), %zu judged by python3-jsonschema (%zu where it and the label differ)\n",
           schemas, compiled, instances, with_escape, judged, label_differs);
    assert_int_equal(respelled_differs, 0);
    assert_int_equal(judge_differs, 0);
    assert_true(compiled >= 500 && instances >= 1500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edge_cases),
        cmocka_unit_test(test_maskbench),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
