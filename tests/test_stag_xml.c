/*
 * The XML argument styles of a json_schema format (dispatch/stag_xml.c,
 * note [xml styles]) against their definition: each structural tag is
 * compiled to the grammar IR and its language checked with the independent
 * reference recognizer (tests/earley_ref): tool-call arguments as the
 * models' templates render them must be sentences; wrong tags, wrong value
 * types, missing required parameters and broken wrappers must not.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/stag.h"
#include "schema/schema.h"
#include "tests/earley_ref.h"

typedef struct lang {
    gm_mem mem;
    gm_ebnf g;
    gm_eref *r;
} lang;

/* {"type": "json_schema", "json_schema": schema, "style": style, extra} compiled. */
static void compile(lang *l, const char *style, const char *schema, const char *extra)
{
    char json[4096];
    snprintf(json, sizeof json, "{\"type\": \"structural_tag\", \"format\": {\"type\": "
             "\"json_schema\", \"json_schema\": %s, \"style\": \"%s\"%s}}", schema, style,
             extra ? extra : "");
    gm_mem_init(&l->mem, NULL, 0);
    gm_ebnf_init(&l->g, &l->mem);
    gm_stag_options o = {0};
    gm_schema_options_init_defaults(&o.schema);
    gm_limits_init_defaults(&o.limits);
    gm_error err;
    if (gm_stag_compile(&l->mem, "t.json", json, strlen(json), &o, &l->g, &err))
        fail_msg("compile: %s\n%s", err.message, json);
    if (gm_eref_create(&l->g, &l->r, &err))
        fail_msg("reference: %s", err.message);
}

static void release(lang *l)
{
    gm_eref_destroy(l->r);
    gm_ebnf_free(&l->g);
}

static void expect(lang *l, const char *text, bool sentence)
{
    gm_eref_rollback(l->r, 0);
    bool complete = gm_eref_feed(l->r, text, strlen(text)) && gm_eref_accepting(l->r);
    if (complete != sentence)
        fail_msg("'%s': complete %d, expected %d", text, complete, sentence);
}

static const char name_age[] =
    "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, "
    "\"age\": {\"type\": \"integer\"}}, \"required\": [\"name\", \"age\"]}";

static void plain_styles(void **state)
{
    (void)state;
    lang l;
    compile(&l, "qwen_xml", name_age, NULL);
    expect(&l, "<parameter=name>Bob</parameter><parameter=age>\t100\n</parameter>", true);
    expect(&l, "\n<parameter=name> Bob\n</parameter>\n<parameter=age>100</parameter>\n", true);
    expect(&l, "<parameter=name>a<b>c</b></parameter><parameter=age>1</parameter>", true);
    expect(&l, "<parameter=name>Bob</parameter>", false);                      /* required */
    expect(&l, "<parameter=age>1</parameter><parameter=name>B</parameter>", false); /* order */
    expect(&l, "<parameter=name>Bob</parameter><parameter=age>\"1\"</parameter>", false);
    expect(&l, "<parameter=name>B</parameter>x</parameter><parameter=age>1</parameter>", false);
    expect(&l, "<parameter=name>B</parameter><parameter=age>1</parameter>"
               "<parameter=x>1</parameter>", false); /* no additionalProperties: none */
    release(&l);
    compile(&l, "minimax_xml", name_age, NULL);
    expect(&l, "<parameter name=\"name\">Bob</parameter><parameter name=\"age\">7</parameter>",
           true);
    expect(&l, "<parameter=name>Bob</parameter><parameter=age>7</parameter>", false);
    release(&l);
    compile(&l, "deepseek_xml", name_age, NULL);
    expect(&l, "<\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter name=\"name\" string=\"true\">Bob"
               "</\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter><\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter name=\"age\" string=\"false\">7</\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter>", true);
    expect(&l, "<\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter name=\"name\" string=\"yes\">Bob"
               "</\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter>", false);
    release(&l);
    compile(&l, "glm_xml", name_age, NULL);
    expect(&l, "<arg_key>name</arg_key>\n<arg_value>Bob</arg_value>\n<arg_key>age</arg_key>"
               "<arg_value>7</arg_value>", true);
    expect(&l, "<arg_key>name</arg_key><arg_value>Bob</arg_value>", false);
    release(&l);
    /* the older name of the qwen_xml style */
    gm_mem_init(&l.mem, NULL, 0);
    gm_ebnf_init(&l.g, &l.mem);
    char json[1024];
    snprintf(json, sizeof json, "{\"type\": \"qwen_xml_parameter\", \"json_schema\": %s}",
             name_age);
    gm_error err;
    assert_int_equal(gm_stag_compile(&l.mem, "t", json, strlen(json), NULL, &l.g, &err), GM_OK);
    assert_int_equal(gm_eref_create(&l.g, &l.r, &err), GM_OK);
    expect(&l, "<parameter=name>Bob</parameter><parameter=age>1</parameter>", true);
    release(&l);
}

static void values(void **state)
{
    (void)state;
    lang l;
    compile(&l, "qwen_xml",
            "{\"type\": \"object\", \"properties\": {"
            "\"c\": {\"const\": \"red\"}, \"e\": {\"enum\": [\"a b\", 3]},"
            "\"p\": {\"type\": \"string\", \"pattern\": \"^$|^https://x\\\\.com/\"},"
            "\"o\": {\"type\": \"object\", \"properties\": {\"k\": {\"type\": \"boolean\"}}},"
            "\"r\": {\"$ref\": \"#/$defs/N\"}, \"n\": {\"type\": [\"string\", \"null\"]}},"
            "\"$defs\": {\"N\": {\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/I\"}},"
            "\"I\": {\"type\": \"integer\"}}}", NULL);
    expect(&l, "", true); /* nothing required */
    expect(&l, "<parameter=c>red</parameter>", true);
    expect(&l, "<parameter=c>\"red\"</parameter>", false); /* a const string is raw */
    expect(&l, "<parameter=e>a b</parameter>", true);
    expect(&l, "<parameter=e>3</parameter>", true);
    expect(&l, "<parameter=e>4</parameter>", false);
    expect(&l, "<parameter=p></parameter>", true);
    expect(&l, "<parameter=p>https://x.com/</parameter>", true);
    expect(&l, "<parameter=p>http://x.com/</parameter>", false);
    expect(&l, "<parameter=o>{\"k\": true}</parameter>", true); /* nested values are JSON */
    expect(&l, "<parameter=o>{\"k\": 1}</parameter>", false);
    expect(&l, "<parameter=r>[1, 2]</parameter>", true);
    expect(&l, "<parameter=r>[1, \"2\"]</parameter>", false);
    expect(&l, "<parameter=n>null</parameter>", true);
    expect(&l, "<parameter=n>any text</parameter>", true);
    /* a string constant, an enum of strings, a patterned string: the raw text is the
       string, so whitespace around it would change it (a parser keeps it: "\tred") */
    expect(&l, "<parameter=c>\tred\n</parameter>", false);
    expect(&l, "<parameter=p> https://x.com/</parameter>", false);
    release(&l);
    compile(&l, "minimax_xml", "{\"type\": \"object\", \"properties\": {\"s\": {\"enum\": "
            "[\"Poor\", \"Good\"]}}}", NULL);
    expect(&l, "<parameter name=\"s\">Poor</parameter>", true);
    expect(&l, "<parameter name=\"s\">\n\nPoor </parameter>", false);
    release(&l);
    /* DeepSeek's string attribute says how the value is read: "true" for a string (raw),
       "false" for JSON; a number written as a string would parse as "9" */
    compile(&l, "deepseek_xml", name_age, NULL);
    expect(&l, "<\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter name=\"name\" string=\"false\">Bob"
               "</\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter><\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter name=\"age\" string=\"false\">7</\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter>", false);
    expect(&l, "<\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter name=\"name\" string=\"true\">Bob"
               "</\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter><\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter name=\"age\" string=\"true\">7</\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter>", false);
    release(&l);
    /* any_order: any order, keys and values checked, at least the required count */
    compile(&l, "qwen_xml", name_age, ", \"any_order\": true");
    expect(&l, "<parameter=age>1</parameter><parameter=name>B</parameter>", true);
    expect(&l, "<parameter=age>1</parameter>", false);
    expect(&l, "<parameter=age>x</parameter><parameter=name>B</parameter>", false);
    release(&l);
}

static void cohere(void **state)
{
    (void)state;
    lang l;
    compile(&l, "cohere_xml",
            "{\"type\": \"object\", \"properties\": {"
            "\"config\": {\"type\": \"object\", \"properties\": {\"mode\": {\"type\": \"string\"},"
            "\"on\": {\"type\": \"boolean\"}}, \"required\": [\"mode\"]},"
            "\"items\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}},"
            "\"v\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"integer\"}]}},"
            "\"required\": [\"config\"]}", NULL);
    expect(&l, "<cofl:value name=\"config\" type=\"dict\"><cofl:value name=\"mode\" type=\"raw\">"
               "fast</cofl:value><cofl:value name=\"on\" type=\"json\">true</cofl:value>"
               "</cofl:value><cofl:value name=\"items\" type=\"list\"><cofl:value type=\"raw\">a"
               "</cofl:value><cofl:value type=\"raw\">b</cofl:value></cofl:value>", true);
    expect(&l, "<cofl:value name=\"config\" type=\"json\">{\"mode\": \"x\"}</cofl:value>", false);
    expect(&l, "<cofl:value name=\"config\" type=\"dict\"><cofl:value name=\"mode\" type=\"raw\">"
               "x</cofl:value></cofl:value><cofl:value name=\"items\" type=\"list\">"
               "<cofl:value name=\"0\" type=\"raw\">a</cofl:value></cofl:value>", false);
    /* each alternative carries its own type */
    const char *cfg = "<cofl:value name=\"config\" type=\"dict\"><cofl:value name=\"mode\" "
                      "type=\"raw\">x</cofl:value></cofl:value>";
    char buf[512];
    snprintf(buf, sizeof buf, "%s<cofl:value name=\"v\" type=\"raw\">hi</cofl:value>", cfg);
    expect(&l, buf, true);
    snprintf(buf, sizeof buf, "%s<cofl:value name=\"v\" type=\"json\">7</cofl:value>", cfg);
    expect(&l, buf, true);
    snprintf(buf, sizeof buf, "%s<cofl:value name=\"v\" type=\"json\">hi</cofl:value>", cfg);
    expect(&l, buf, false);
    release(&l);
    /* a dict that contains itself through $ref */
    compile(&l, "cohere_xml",
            "{\"type\": \"object\", \"properties\": {\"root\": {\"$ref\": \"#/$defs/Node\"}},"
            "\"$defs\": {\"Node\": {\"type\": \"object\", \"properties\": {\"name\": {\"type\": "
            "\"string\"}, \"next\": {\"$ref\": \"#/$defs/Node\"}}, \"required\": [\"name\"]}}}",
            NULL);
    expect(&l, "<cofl:value name=\"root\" type=\"dict\"><cofl:value name=\"name\" type=\"raw\">a"
               "</cofl:value><cofl:value name=\"next\" type=\"dict\"><cofl:value name=\"name\" "
               "type=\"raw\">b</cofl:value></cofl:value></cofl:value>", true);
    expect(&l, "<cofl:value name=\"root\" type=\"dict\"><cofl:value name=\"next\" type=\"dict\">"
               "</cofl:value></cofl:value>", false);
    release(&l);
    /* additional keys are the identifiers that are not declared */
    compile(&l, "cohere_xml",
            "{\"type\": \"object\", \"properties\": {\"foo\": {\"type\": \"integer\"}},"
            "\"additionalProperties\": {\"type\": \"string\"}}", NULL);
    expect(&l, "<cofl:value name=\"fo\" type=\"raw\">x</cofl:value>", true);
    expect(&l, "<cofl:value name=\"foox\" type=\"raw\">x</cofl:value>", true);
    expect(&l, "<cofl:value name=\"foo\" type=\"raw\">x</cofl:value>", false);
    expect(&l, "<cofl:value name=\"foo\" type=\"json\">1</cofl:value>", true);
    release(&l);
}

static void kimi(void **state)
{
    (void)state;
    lang l;
    compile(&l, "kimi_k3_xml",
            "{\"type\": \"object\", \"properties\": {\"a\\\"&b\": {\"type\": \"integer\"},"
            "\"s\": {\"type\": \"string\"}}}", NULL);
    expect(&l, "<|open|>argument key=\"a&quot;&amp;b\" type=\"number\"<|sep|>1"
               "<|close|>argument<|sep|>", true);
    expect(&l, "<|open|>argument key=\"a&quot;&amp;b\" type=\"integer\"<|sep|>1"
               "<|close|>argument<|sep|>", false); /* the renderer writes number */
    expect(&l, "<|open|>argument key=\"s\" type=\"string\"<|sep|>x<|close|>argument<|sep|>",
           true);
    expect(&l, "<|open|>argument key=\"s\" type=\"number\"<|sep|>1<|close|>argument<|sep|>",
           false);
    release(&l);
    /* free-form keys (a schema that says nothing) take any of the types */
    compile(&l, "kimi_k3_xml", "true", NULL);
    expect(&l, "<|open|>argument key=\"free\" type=\"boolean\"<|sep|>true"
               "<|close|>argument<|sep|>", true);
    expect(&l, "<|open|>argument key=\"free\" type=\"bool\"<|sep|>true"
               "<|close|>argument<|sep|>", false);
    release(&l);
}

static void errors(void **state)
{
    (void)state;
    static const struct {
        const char *json, *pointer;
    } cases[] = {
        {"{\"type\": \"json_schema\", \"json_schema\": {}, \"style\": \"yaml_xml\"}",
         "/style: style must be \"json\", \"qwen_xml\""},
        {"{\"type\": \"qwen_xml_parameter\", \"json_schema\": {}, \"style\": \"qwen_xml\"}",
         "/style: unknown key"},
        {"{\"type\": \"json_schema\", \"style\": \"qwen_xml\", \"json_schema\": {\"properties\":"
         " {\"a\": {\"$ref\": \"#/$defs/none\"}}}}", "$ref \"#/$defs/none\" points to nothing"},
        {"{\"type\": \"json_schema\", \"style\": \"glm_xml\", \"json_schema\": {\"properties\":"
         " {\"a\": {\"$ref\": \"other.json\"}}}}", "only local references"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_ebnf g;
        gm_ebnf_init(&g, &mem);
        gm_error err;
        gm_status st = gm_stag_compile(&mem, "t", cases[i].json, strlen(cases[i].json), NULL, &g,
                                       &err);
        if (st == GM_OK || !strstr(err.message, cases[i].pointer))
            fail_msg("case %zu: status %d, message '%s'", i, st, st ? err.message : "");
        gm_ebnf_free(&g);
    }
}

/*
 * A JSON value ends at the parameter's closing tag for a parser of the turn
 * (note [excluded text] in schema/exclude.c): no string in it may hold the
 * tag in its text, spelled with an escape it may.
 */
static void closing_tag_in_json(void **state)
{
    (void)state;
    static const char schema[] =
        "{\"type\": \"object\", \"properties\": {\"o\": {\"type\": \"object\"}, "
        "\"l\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}}";
    lang l;
    compile(&l, "qwen_xml", schema, NULL);
    expect(&l, "<parameter=o>{\"k\": \"x</parameter>\"}</parameter>", false);
    expect(&l, "<parameter=o>{\"x</parameter>\": 1}</parameter>", false);     /* a key */
    expect(&l, "<parameter=o>{\"k\": [\"<</parameter>\"]}</parameter>", false); /* a restart */
    expect(&l, "<parameter=l>[\"</parameter>\"]</parameter>", false);
    expect(&l, "<parameter=o>{\"k\": \"x<\\/parameter>\"}</parameter>", true);
    expect(&l, "<parameter=o>{\"k\": \"\\u003c/parameter>\"}</parameter>", true);
    expect(&l, "<parameter=o>{\"k\": \"</paramete</parameter <<a>\"}</parameter>", true);
    expect(&l, "<parameter=l>[\"</parameter\", \">\", \"<\"]</parameter>", true);
    release(&l);
    compile(&l, "glm_xml", schema, NULL);
    expect(&l, "<arg_key>l</arg_key><arg_value>[\"a</arg_value>\"]</arg_value>", false);
    expect(&l, "<arg_key>l</arg_key><arg_value>[\"a</arg_key></arg_value\"]</arg_value>",
           true);
    release(&l);
    compile(&l, "deepseek_xml", schema, NULL);
    expect(&l, "<\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter name=\"l\" string=\"false\">[\"</"
               "\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter>\"]</\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter>", false);
    expect(&l, "<\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter name=\"l\" string=\"false\">[\"</"
               "\xef\xbd\x9c" "DSML\xef\xbd\x9c\"]</\xef\xbd\x9c" "DSML\xef\xbd\x9c"
               "parameter>", true);
    release(&l);
}

/* Whether w occurs in s. */
static bool holds(const char *s, const char *w)
{
    return strstr(s, w) != NULL;
}

/*
 * gm_schema_compile_excluding against brute force: every string of up to 6
 * units over an alphabet of the excluded text's characters, one other
 * character and an escaped '<', as a string and as a key: a sentence iff its
 * text does not hold the excluded text.
 */
static void excluded_text(void **state)
{
    (void)state;
    static const char *const words[] = {"<ab>", "<a<", "<\xef\xbd\x9c>"};
    static const char *const units[] = {"<", "a", "b", ">", "x", "\\u003c", "\xef\xbd\x9c"};
    enum { NU = sizeof units / sizeof *units, LEN = 5 };
    for (size_t wi = 0; wi < sizeof words / sizeof *words; wi++) {
        for (int key = 0; key < 2; key++) {
            const char *schema = key ? "{\"type\": \"object\"}" : "{\"type\": \"string\"}";
            lang l;
            gm_mem_init(&l.mem, NULL, 0);
            gm_ebnf_init(&l.g, &l.mem);
            gm_error err;
            if (gm_schema_compile_excluding(&l.mem, "s", schema, strlen(schema), NULL,
                                            words[wi], &l.g, &err))
                fail_msg("compile: %s", err.message);
            if (gm_eref_create(&l.g, &l.r, &err))
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
                    expect(&l, text, !holds(body, words[wi]));
                }
            }
            release(&l);
        }
    }
    /* a text whose prefix ends as it begins is refused, not compiled wrong */
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &mem);
    gm_error err;
    assert_int_equal(gm_schema_compile_excluding(&mem, "s", "{}", 2, NULL, "<a<b", &g, &err),
                     GM_ERR_UNSUPPORTED);
    gm_ebnf_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_styles), cmocka_unit_test(values), cmocka_unit_test(cohere),
        cmocka_unit_test(kimi),         cmocka_unit_test(errors),
        cmocka_unit_test(closing_tag_in_json), cmocka_unit_test(excluded_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
