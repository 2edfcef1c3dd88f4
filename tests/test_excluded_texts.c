/*
 * JSON strings that avoid several texts (schema/exclude.c note [excluded
 * texts]: an XML value's closing tag and a family's special tokens) against
 * brute force with the reference recognizer (tests/earley_ref): every string
 * of up to 5 units over an alphabet of the texts' characters, another
 * character and an escaped '<', as a string value and as a key, is a
 * sentence iff its text (the spelling between the quotes) holds none of the
 * texts. Sets whose texts share prefixes, one a prefix of another, and
 * multi-byte characters; sets outside the construction are refused.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/stag.h"
#include "schema/schema.h"
#include "tests/earley_ref.h"

typedef struct set {
    const char *texts[4];
    size_t n;
} set;

static bool holds_any(const char *s, const set *x)
{
    for (size_t i = 0; i < x->n; i++)
        if (strstr(s, x->texts[i]))
            return true;
    return false;
}

static void brute_force(void **state)
{
    (void)state;
    static const set sets[] = {
        {{"<ab>", "<ba>"}, 2},
        {{"<a>", "<ab>", "</a>"}, 3},              /* <a> a prefix of <ab> */
        {{"<ab", "<a"}, 2},                        /* the shorter after the longer */
        {{"<\xef\xbd\x9c>", "<b\xef\xbd\x9c"}, 2}, /* ｜ (3 bytes) */
        {{"<a>", "<a>", "<bb"}, 3},                /* a text twice */
    };
    static const char *const units[] = {"<", "a", "b", ">", "/", "x", "\\u003c",
                                        "\xef\xbd\x9c"};
    enum { NU = sizeof units / sizeof *units, LEN = 5 };
    size_t checked = 0, sentences = 0;
    for (size_t si = 0; si < sizeof sets / sizeof *sets; si++) {
        for (int key = 0; key < 2; key++) {
            const char *schema = key ? "{\"type\": \"object\"}" : "{\"type\": \"string\"}";
            gm_mem mem;
            gm_mem_init(&mem, NULL, 0);
            gm_ebnf g;
            gm_ebnf_init(&g, &mem);
            gm_eref *r = NULL;
            gm_error err;
            if (gm_schema_compile_excluding_all(&mem, "s", schema, strlen(schema), NULL,
                                                sets[si].texts, sets[si].n, &g, &err))
                fail_msg("set %zu: compile: %s", si, err.message);
            if (gm_eref_create(&g, &r, &err))
                fail_msg("reference: %s", err.message);
            for (size_t n = 0; n <= LEN; n++) {
                size_t total = 1;
                for (size_t i = 0; i < n; i++)
                    total *= NU;
                for (size_t code = 0; code < total; code++) {
                    char body[64] = "", text[96];
                    size_t c = code;
                    for (size_t i = 0; i < n; i++, c /= NU)
                        strcat(body, units[c % NU]);
                    snprintf(text, sizeof text, key ? "{\"%s\": 1}" : "\"%s\"", body);
                    gm_eref_rollback(r, 0);
                    bool complete = gm_eref_feed(r, text, strlen(text)) && gm_eref_accepting(r);
                    bool want = !holds_any(body, &sets[si]);
                    if (complete != want)
                        fail_msg("set %zu: '%s': complete %d, expected %d", si, text, complete,
                                 want);
                    checked++;
                    sentences += want;
                }
            }
            gm_eref_destroy(r);
            gm_ebnf_free(&g);
        }
    }
    /* both answers occur many times */
    assert_true(sentences > 1000 && checked - sentences > 1000);
}

static void refused(void **state)
{
    (void)state;
    static const set bad[] = {
        {{"<a>", "[b]"}, 2}, /* different first characters */
        {{"<a<", "<b>"}, 2}, /* the first character again */
        {{"<a\"", "<b>"}, 2}, /* a character a string escapes */
        {{"<", "<b>"}, 2},   /* one character */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_ebnf g;
        gm_ebnf_init(&g, &mem);
        gm_error err;
        assert_int_equal(gm_schema_compile_excluding_all(&mem, "s", "{}", 2, NULL, bad[i].texts,
                                                         bad[i].n, &g, &err),
                         GM_ERR_UNSUPPORTED);
        assert_non_null(strstr(err.message, "strings that avoid"));
        gm_ebnf_free(&g);
    }
}

/*
 * Kimi K3's closing tag "<|close|>argument<|sep|>" in its JSON values: the
 * strings hold neither block marker (so never the tag; spelled with an escape
 * they may), with the brute force above for that pair of texts.
 */
static void kimi_k3_json_values(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"type\": \"json_schema\", \"style\": \"kimi_k3_xml\", \"json_schema\": "
        "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"array\", "
        "\"items\": {\"type\": \"string\"}}}}}";
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &mem);
    gm_stag_options o = {0};
    gm_schema_options_init_defaults(&o.schema);
    gm_limits_init_defaults(&o.limits);
    gm_error err;
    if (gm_stag_compile(&mem, "t.json", doc, strlen(doc), &o, &g, &err))
        fail_msg("compile: %s", err.message);
    gm_eref *r = NULL;
    if (gm_eref_create(&g, &r, &err))
        fail_msg("reference: %s", err.message);
    static const struct {
        const char *item;
        bool ok;
    } items[] = {
        {"x", true},
        {"x<|close|", true},
        {"<|clos", true},
        {"\\u003c|close|>argument<|sep|>", true},
        {"x<|close|>argument<|sep|>", false},
        {"<|close|>", false},
        {"a<|open|>b", false},
        {"<|<|close|>", false},
    };
    for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
        char text[256];
        snprintf(text, sizeof text, "<|open|>argument key=\"a\" type=\"array\"<|sep|>[\"%s\"]"
                 "<|close|>argument<|sep|>", items[i].item);
        gm_eref_rollback(r, 0);
        bool complete = gm_eref_feed(r, text, strlen(text)) && gm_eref_accepting(r);
        if (complete != items[i].ok)
            fail_msg("'%s': complete %d, expected %d", text, complete, items[i].ok);
    }
    gm_eref_destroy(r);
    gm_ebnf_free(&g);
}

/*
 * A raw string parameter with maxLength: at most that many characters and
 * never the closing tag (the old reading, any characters up to the bound,
 * let a value hold the tag a parser cuts it at).
 */
static void raw_string_max_length(void **state)
{
    (void)state;
    static const char doc[] =
        "{\"type\": \"json_schema\", \"style\": \"qwen_xml\", \"json_schema\": "
        "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\", "
        "\"maxLength\": 16}}, \"required\": [\"s\"]}}";
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &mem);
    gm_stag_options o = {0};
    gm_schema_options_init_defaults(&o.schema);
    gm_limits_init_defaults(&o.limits);
    gm_error err;
    if (gm_stag_compile(&mem, "t.json", doc, strlen(doc), &o, &g, &err))
        fail_msg("compile: %s", err.message);
    gm_eref *r = NULL;
    if (gm_eref_create(&g, &r, &err))
        fail_msg("reference: %s", err.message);
    static const struct {
        const char *value;
        bool ok;
    } values[] = {
        {"", true},
        {"ab c\n", true},
        {"0123456789abcdef", true},  /* 16 */
        {"0123456789abcdefg", false}, /* 17 */
        {"a</parameter", true},
        {"a</parameter>b", false},
        {"</parameter>", false},
        {"\xc3\xa9\xc3\xa9", true},   /* two characters */
    };
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char text[256];
        snprintf(text, sizeof text, "<parameter=s>%s</parameter>", values[i].value);
        gm_eref_rollback(r, 0);
        bool complete = gm_eref_feed(r, text, strlen(text)) && gm_eref_accepting(r);
        if (complete != values[i].ok)
            fail_msg("'%s': complete %d, expected %d", text, complete, values[i].ok);
    }
    gm_eref_destroy(r);
    gm_ebnf_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(brute_force),
        cmocka_unit_test(refused),
        cmocka_unit_test(kimi_k3_json_values),
        cmocka_unit_test(raw_string_max_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
