/*
 * Structural tags and tool presets (dispatch/) against their definitions:
 * each structural tag is compiled to the grammar IR and its language
 * checked with the independent reference recognizer (tests/earley_ref):
 * texts that must be sentences, texts that must not, and prefixes that must
 * or must not lead anywhere. Errors name the JSON pointer and line:column.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "dispatch/stag.h"
#include "dispatch/tools.h"
#include "tests/earley_ref.h"

static const char *const harmony[] = {"<|start|>", "<|end|>", "<|message|>", "<|channel|>",
                                      "<|constrain|>", "<|return|>", "<|call|>", NULL};

/* Feeds text to r, special tokens (from specials) as themselves. */
static bool feed(gm_eref *r, const char *text, const char *const *specials)
{
    size_t n = strlen(text);
    for (size_t i = 0; i < n;) {
        size_t k = 0;
        for (; specials && specials[k]; k++)
            if (!strncmp(text + i, specials[k], strlen(specials[k])))
                break;
        if (specials && specials[k]) {
            if (!gm_eref_feed_special(r, specials[k], strlen(specials[k])))
                return false;
            i += strlen(specials[k]);
        } else {
            if (!gm_eref_feed(r, text + i, 1))
                return false;
            i++;
        }
    }
    return true;
}

typedef struct lang {
    gm_mem mem;
    gm_ebnf g;
    gm_eref *r;
    const char *const *specials;
} lang;

static void compile(lang *l, const char *json, const char *const *specials)
{
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
    l->specials = specials;
}

static void release(lang *l)
{
    gm_eref_destroy(l->r);
    gm_ebnf_free(&l->g);
}

/* Whether text is a sentence (complete) or at least a viable prefix. */
static void expect(lang *l, const char *text, bool sentence, bool prefix)
{
    gm_eref_rollback(l->r, 0);
    bool viable = feed(l->r, text, l->specials);
    bool complete = viable && gm_eref_accepting(l->r);
    if (viable != prefix || complete != sentence)
        fail_msg("'%s': viable %d complete %d, expected %d %d", text, viable, complete, prefix,
                 sentence);
}

#define YES(l, t) expect(l, t, true, true)
#define NO(l, t) expect(l, t, false, false)
#define PREFIX(l, t) expect(l, t, false, true)

static void basic_formats(void **state)
{
    (void)state;
    lang l;
    compile(&l, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"const_string\", \"value\": "
                "\"a\"}, {\"type\": \"or\", \"elements\": [{\"type\": \"const_string\", \"text\": "
                "\"b\"}, {\"type\": \"regex\", \"pattern\": \"[0-9]+\"}]}, {\"type\": \"grammar\","
                " \"grammar\": \"root ::= \\\"x\\\"+\"}]}",
            NULL);
    YES(&l, "abx");
    YES(&l, "a12xx");
    NO(&l, "ax");
    PREFIX(&l, "a1");
    NO(&l, "abxy");
    release(&l);
}

static void tag_with_any_text(void **state)
{
    (void)state;
    lang l;
    compile(&l, "{\"type\": \"structural_tag\", \"format\": {\"type\": \"tag\", \"begin\": "
                "\"<think>\", \"content\": {\"type\": \"any_text\", \"excluded_str\": [\"BAD\"]}, "
                "\"end\": \"</think>\"}}",
            NULL);
    YES(&l, "<think></think>");
    YES(&l, "<think>a < b </thin </think>");
    NO(&l, "<think>a</think>b");
    NO(&l, "<think>a</think></think>");
    NO(&l, "<think>xBADx</think>");
    PREFIX(&l, "<think>BA");
    release(&l);
}

static const char triggered_json[] =
    "{\"type\": \"triggered_tags\", \"triggers\": [\"<f=\"], \"tags\": ["
    "{\"begin\": \"<f=a>\", \"content\": {\"type\": \"const_string\", \"value\": \"1\"}, "
    "\"end\": \"</f>\"},"
    "{\"type\": \"tag\", \"begin\": \"<f=b>\", \"content\": {\"type\": \"json_schema\", "
    "\"json_schema\": {\"type\": \"integer\"}}, \"end\": \"</f>\"}]%s}";

static void triggered(const char *extra, lang *l)
{
    char json[1024];
    snprintf(json, sizeof json, triggered_json, extra);
    compile(l, json, NULL);
}

static void triggered_tags(void **state)
{
    (void)state;
    lang l;
    triggered("", &l);
    YES(&l, "");
    YES(&l, "hello < f= <f");
    YES(&l, "x<f=a>1</f>y");
    YES(&l, "<f=b>-12</f><f=a>1</f>");
    NO(&l, "x<f=c>1</f>");
    NO(&l, "<f=a>2</f>");
    NO(&l, "<f=b>1.5</f>");
    PREFIX(&l, "x<f=a>1</f");
    release(&l);

    triggered(", \"at_least_one\": true", &l);
    PREFIX(&l, "");
    NO(&l, "hello");
    YES(&l, "<f=a>1</f>");
    YES(&l, "<f=a>1</f>then<f=b>2</f>end");
    NO(&l, "x<f=a>1</f>");
    release(&l);

    triggered(", \"at_least_one\": true, \"text_before_first\": true", &l);
    YES(&l, "x<f=a>1</f>");
    PREFIX(&l, "x");
    release(&l);

    triggered(", \"stop_after_first\": true", &l);
    YES(&l, "text");
    YES(&l, "text<f=a>1</f>");
    NO(&l, "<f=a>1</f>tail");
    NO(&l, "<f=a>1</f><f=a>1</f>");
    release(&l);

    triggered(", \"excluded_str\": [\"STOP\"]", &l);
    YES(&l, "a<f=a>1</f>b");
    NO(&l, "aSTOPb");
    release(&l);
}

static void tags_with_separator(void **state)
{
    (void)state;
    lang l;
    compile(&l, "{\"type\": \"tags_with_separator\", \"separator\": \",\", \"tags\": ["
                "{\"begin\": \"(\", \"content\": {\"type\": \"regex\", \"pattern\": \"[a-z]*\"}, "
                "\"end\": \")\"}]}",
            NULL);
    YES(&l, "");
    YES(&l, "(ab)");
    YES(&l, "(a),(),(b)");
    NO(&l, "(a)(b)");
    PREFIX(&l, "(a),");
    release(&l);
}

static void first_version(void **state)
{
    (void)state;
    lang l;
    compile(&l, "{\"type\": \"structural_tag\", \"structures\": [{\"begin\": \"<fn=x>\", "
                "\"schema\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": "
                "\"boolean\"}}, \"required\": [\"a\"]}, \"end\": \"</fn>\"}], \"triggers\": "
                "[\"<fn=\"]}",
            NULL);
    YES(&l, "call <fn=x>{\"a\": true}</fn> done");
    NO(&l, "<fn=x>{}</fn>");
    release(&l);
}

static void special_tokens(void **state)
{
    (void)state;
    static const char *const specials[] = {"<|m|>", "<|e|>", NULL};
    lang l;
    compile(&l, "{\"special_tokens\": [\"<|m|>\", \"<|e|>\"], \"type\": \"tag\", \"begin\": "
                "\"<|m|>x\", \"content\": {\"type\": \"any_text\"}, \"end\": \"<|e|>\"}",
            specials);
    YES(&l, "<|m|>xanything <|e|>");
    NO(&l, "x");
    release(&l);
    /* The same text fed as bytes is not the special token. */
    compile(&l, "{\"special_tokens\": [\"<|m|>\"], \"type\": \"const_string\", \"value\": "
                "\"<|m|>\"}",
            NULL);
    NO(&l, "<|m|>");
    release(&l);
}

static void errors(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        gm_status code;
        const char *msg;
    } cases[] = {
        {"[1]", GM_ERR_FORMAT, "structural tag /: Structural tag must be an object"},
        {"{\"type\": \"nope\"}", GM_ERR_UNSUPPORTED,
         "structural tag /type: Format type not recognized: nope (format type \"nope\" is not "
         "supported"},
        {"{\"type\": \"any_tokens\", \"exclude_tokens\": [\"x\"]}", GM_ERR_FORMAT,
         "structural tag /exclude_tokens/0: Token string resolution requires tokenizer_info"},
        {"{\"type\": \"structural_tag\", \"format\": {\"type\": \"sequence\", \"elements\": [\n"
         "  {\"type\": \"tag\", \"begin\": \"a\", \"end\": \"b\"}]}}",
         GM_ERR_FORMAT, "t.json:2:3: structural tag /format/elements/0: Tag format must have a "
         "content field (missing \"content\")"},
        {"{\"type\": \"triggered_tags\", \"triggers\": [\"<f=\"], \"tags\": [{\"begin\": \"<g>\", "
         "\"content\": {\"type\": \"any_text\"}, \"end\": \"x\"}]}",
         GM_ERR_FORMAT, "structural tag /tags/0: the begin \"<g>\" starts with none of the "
                        "triggers"},
        {"{\"type\": \"json_schema\", \"json_schema\": {\"type\": \"array\", \"uniqueItems\": "
         "true}}",
         GM_ERR_UNSUPPORTED, "uniqueItems"},
        {"{\"type\": \"regex\", \"pattern\": \"a(\"}", GM_ERR_SYNTAX, "/pattern"},
        {"{\"type\": \"const_string\"}", GM_ERR_FORMAT, "missing \"value\""},
        {"{\"type\": \"any_text\", \"excluded_str\": [\"\"]}", GM_ERR_FORMAT,
         "/excluded_str/0: expected a non-empty string"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_ebnf g;
        gm_ebnf_init(&g, &mem);
        gm_error err;
        gm_status st = gm_stag_compile(&mem, "t.json", cases[k].json, strlen(cases[k].json),
                                       NULL, &g, &err);
        if (st != cases[k].code || !strstr(err.message, cases[k].msg))
            fail_msg("case %zu: %s: %s", k, gm_status_name(st), err.message);
        gm_ebnf_free(&g);
        assert_int_equal(atomic_load(&mem.used), 0);
    }
}

/* ---- presets -------------------------------------------------------------- */

static const char tools_json[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "
    "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": "
    "[\"city\"], \"additionalProperties\": false}}},"
    " {\"name\": \"now\"}]";

static void preset(lang *l, gm_tool_format f, gm_tool_choice choice, const char *named,
                   int parallel, gm_reasoning reasoning)
{
    gm_mem_init(&l->mem, NULL, 0);
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = f;
    o.tool_choice = choice;
    o.tool_name = named;
    o.parallel = parallel;
    o.reasoning = reasoning;
    gm_strbuf st;
    gm_strbuf_init(&st, &l->mem);
    gm_error err;
    if (gm_tools_structural_tag(&l->mem, "tools.json", tools_json, strlen(tools_json), &o, &st,
                                &err))
        fail_msg("preset: %s", err.message);
    compile(l, gm_strbuf_str(&st), f == GM_TOOLS_HARMONY ? harmony : NULL);
    gm_strbuf_free(&st);
}

static void llama_presets(void **state)
{
    (void)state;
    lang l;
    preset(&l, GM_TOOLS_LLAMA, GM_TOOL_CHOICE_AUTO, NULL, -1, 0);
    YES(&l, "Sure.");
    YES(&l, "<function=get_weather>{\"city\": \"Paris\"}</function>");
    YES(&l, "a<function=now>{}</function><function=now>{\"x\": 1}</function>");
    NO(&l, "<function=get_weather>{}</function>");
    NO(&l, "<function=other>{}</function>");
    release(&l);
    preset(&l, GM_TOOLS_LLAMA, GM_TOOL_CHOICE_REQUIRED, NULL, 0, 0);
    PREFIX(&l, "Sure.");
    YES(&l, "Calling:<function=now>{}</function>");
    NO(&l, "<function=now>{}</function><function=now>{}</function>");
    release(&l);
    preset(&l, GM_TOOLS_LLAMA, GM_TOOL_CHOICE_NAMED, "now", -1, 0);
    NO(&l, "<function=get_weather>{\"city\": \"Paris\"}</function>");
    YES(&l, "<function=now>{}</function>");
    release(&l);
    preset(&l, GM_TOOLS_LLAMA, GM_TOOL_CHOICE_NONE, NULL, -1, 0);
    YES(&l, "just text");
    NO(&l, "<function=now>{}</function>");
    release(&l);
    preset(&l, GM_TOOLS_LLAMA_JSON, GM_TOOL_CHOICE_AUTO, NULL, -1, 0);
    YES(&l, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
    NO(&l, "{\"name\": \"get_weather\", \"parameters\": {\"town\": \"Oslo\"}}");
    release(&l);
}

static void qwen_presets(void **state)
{
    (void)state;
    static const char call[] =
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n"
        "</tool_call>";
    char text[512];
    lang l;
    preset(&l, GM_TOOLS_QWEN, GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_ALLOWED);
    snprintf(text, sizeof text, "<think>\nhmm\n</think>\n\nOk.\n%s\n%s", call, call);
    YES(&l, text);
    YES(&l, call);
    YES(&l, "plain answer");
    NO(&l, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_call>");
    release(&l);
    preset(&l, GM_TOOLS_QWEN, GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_FORCED);
    NO(&l, call);
    snprintf(text, sizeof text, "<think>x</think>%s", call);
    YES(&l, text);
    release(&l);
    preset(&l, GM_TOOLS_QWEN, GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_FORBIDDEN);
    NO(&l, "<think>x</think>answer");
    YES(&l, call);
    release(&l);
}

static void harmony_presets(void **state)
{
    (void)state;
    lang l;
    preset(&l, GM_TOOLS_HARMONY, GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_ALLOWED);
    YES(&l, "<|channel|>final<|message|>2 + 2 = 4.");
    YES(&l, "<|channel|>final<|message|>2 + 2 = 4.<|return|>");
    YES(&l, "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>"
            "commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"SF\"}"
            "<|call|>");
    YES(&l, "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>commentary"
            "<|message|>plan<|end|><|start|>assistant<|channel|>commentary to=functions.now"
            "<|constrain|>json<|message|>{}<|call|>");
    NO(&l, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}"
           "<|call|>");
    NO(&l, "<|channel|>final<|message|>a<|return|>b");
    PREFIX(&l, "<|channel|>analysis<|message|>x<|end|>");
    release(&l);
    preset(&l, GM_TOOLS_HARMONY, GM_TOOL_CHOICE_REQUIRED, NULL, -1, GM_REASONING_FORCED);
    NO(&l, "<|channel|>final<|message|>x");
    NO(&l, "<|channel|>commentary to=functions.now<|message|>{}<|call|>");
    YES(&l, "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary "
            "to=functions.now<|message|>{}<|call|>");
    release(&l);
}

static void preset_errors(void **state)
{
    (void)state;
    static const struct {
        const char *json;
        const char *msg;
    } cases[] = {
        {"{\"tools\": 3}", "expected an array of tools"},
        {"[{\"type\": \"retrieval\"}]", "tools /0: a builtin tool (type \"retrieval\"): only the "
                                          "harmony format"},
        {"[{\"function\": {\"name\": \"a<b\"}}]", "angle brackets"},
        {"[{\"name\": \"a\"}, {\"name\": \"a\"}]", "two tools are named \"a\""},
        {"{\"tools\": [], \"tool_choice\": \"sometimes\"}", "/tool_choice: expected auto"},
        {"{\"tools\": [{\"name\": \"a\"}], \"tool_choice\": {\"type\": \"function\", "
         "\"function\": {\"name\": \"b\"}}}",
         "tool_choice names \"b\", which is not one of the tools"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_tools_options o;
        gm_tools_options_init_defaults(&o);
        o.format = GM_TOOLS_QWEN;
        gm_strbuf out;
        gm_strbuf_init(&out, &mem);
        gm_error err;
        gm_status st = gm_tools_structural_tag(&mem, "tools.json", cases[k].json,
                                               strlen(cases[k].json), &o, &out, &err);
        if (st == GM_OK || !strstr(err.message, cases[k].msg))
            fail_msg("case %zu: %s: %s", k, gm_status_name(st), err.message);
        gm_strbuf_free(&out);
        assert_int_equal(atomic_load(&mem.used), 0);
    }
}

/* XGrammar's current formats: end lists, token begins and ends, token, dispatch, repeats. */
static void xgrammar_formats(void **state)
{
    (void)state;
    lang l;
    compile(&l, "{\"type\": \"tag\", \"begin\": \"<a>\", \"content\": {\"type\": \"any_text\"}, "
                "\"end\": [\"</a>\", \"</b>\"]}",
            NULL);
    YES(&l, "<a>x</a>");
    YES(&l, "<a>x</b>");
    YES(&l, "<a></b>");
    NO(&l, "<a>x</a></b>");
    NO(&l, "<a>x</b>y");
    PREFIX(&l, "<a>x</");
    release(&l);
    compile(&l, "{\"type\": \"tag\", \"begin\": \"<a>\", \"content\": {\"type\": "
                "\"const_string\", \"value\": \"1\"}, \"end\": [\"</a>\", \"</b>\"]}",
            NULL);
    YES(&l, "<a>1</b>");
    YES(&l, "<a>1</a>");
    NO(&l, "<a>1</c>");
    release(&l);
    compile(&l, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"tag\", \"begin\": "
                "{\"type\": \"token\", \"token\": \"<|start|>\"}, \"content\": {\"type\": "
                "\"any_text\"}, \"end\": {\"type\": \"token\", \"token\": \"<|end|>\"}}, "
                "{\"type\": \"token\", \"token\": \"<|call|>\"}]}",
            harmony);
    YES(&l, "<|start|>hi <|end|><|call|>");
    PREFIX(&l, "<|start|>hi <|end|>");
    NO(&l, "<|start|>hi <|call|>");
    release(&l);
    const char *dispatch = "{\"type\": \"dispatch\", \"rules\": [[\"<f>\", {\"type\": "
                           "\"const_string\", \"value\": \"1\"}], [\"<g>\", {\"type\": "
                           "\"const_string\", \"value\": \"2\"}]], \"excludes\": [\"BAD\"]%s}";
    char json[512];
    snprintf(json, sizeof json, dispatch, "");
    compile(&l, json, NULL);
    YES(&l, "");
    YES(&l, "ab<f>1cd<g>2");
    YES(&l, "ab<f>1cd<g>2ef");
    NO(&l, "ab<f>2");
    NO(&l, "aBADb");
    PREFIX(&l, "ab<f>");
    release(&l);
    snprintf(json, sizeof json, dispatch, ", \"loop\": false");
    compile(&l, json, NULL);
    YES(&l, "x<f>1");
    YES(&l, "xyz");
    NO(&l, "<f>1<g>2");
    NO(&l, "<f>1x");
    release(&l);
    compile(&l, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"repeat\", \"min\": 2, "
                "\"max\": 3, \"content\": {\"type\": \"const_string\", \"value\": \"a\"}}, "
                "{\"type\": \"optional\", \"content\": {\"type\": \"const_string\", \"value\": "
                "\"b\"}}, {\"type\": \"plus\", \"content\": {\"type\": \"const_string\", "
                "\"value\": \"c\"}}, {\"type\": \"star\", \"content\": {\"type\": \"repeat\", "
                "\"min\": 1, \"max\": -1, \"content\": {\"type\": \"const_string\", \"value\": "
                "\"d\"}}}]}",
            NULL);
    YES(&l, "aac");
    YES(&l, "aaabccdddd");
    NO(&l, "ac");
    NO(&l, "aaaac");
    NO(&l, "aabbc");
    PREFIX(&l, "aab");
    release(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(basic_formats),   cmocka_unit_test(tag_with_any_text),
        cmocka_unit_test(triggered_tags),  cmocka_unit_test(tags_with_separator),
        cmocka_unit_test(first_version),   cmocka_unit_test(special_tokens),
        cmocka_unit_test(errors),          cmocka_unit_test(llama_presets),
        cmocka_unit_test(qwen_presets),    cmocka_unit_test(harmony_presets),
        cmocka_unit_test(preset_errors),   cmocka_unit_test(xgrammar_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
