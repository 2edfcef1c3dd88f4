/*
 * The model-family tool presets (dispatch/tool_families.h) against their
 * definitions: each preset's structural tag is compiled to the grammar IR and
 * its language checked with the independent reference recognizer
 * (tests/earley_ref) on turns as the models' chat templates render them
 * (python/tests/test_builtin_structural_tag_models.py checks the same
 * renderings token by token through the templates themselves): single and
 * parallel calls, text before, reasoning allowed, forced and forbidden; a
 * wrong tool name, bad arguments and broken delimiters are not sentences.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <string.h>

#include "dispatch/stag.h"
#include "dispatch/tool_families.h"
#include "dispatch/tools.h"
#include "tests/earley_ref.h"

typedef struct lang {
    gm_mem mem;
    gm_ebnf g;
    gm_eref *r;
} lang;

static const char tools_json[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": "
    "{\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"string\"}}, "
    "\"required\": [\"location\"], \"additionalProperties\": false}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"parameters\": "
    "{\"type\": \"object\", \"properties\": {\"timezone\": {\"type\": \"string\"}}, "
    "\"required\": [\"timezone\"], \"additionalProperties\": false}}}]";

static void structural_tag(gm_mem *m, gm_strbuf *st, const char *family, gm_tool_choice choice,
                           const char *named, int parallel, gm_reasoning reasoning)
{
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = gm_tool_format_named(family);
    assert_int_not_equal(o.format, 0);
    assert_string_equal(gm_tool_format_name(o.format), family);
    o.tool_choice = choice;
    o.tool_name = named;
    o.parallel = parallel;
    o.reasoning = reasoning;
    gm_strbuf_init(st, m);
    gm_error err;
    if (gm_tools_structural_tag(m, "tools.json", tools_json, strlen(tools_json), &o, st, &err))
        fail_msg("%s: %s", family, err.message);
}

static void preset(lang *l, const char *family, gm_tool_choice choice, const char *named,
                   int parallel, gm_reasoning reasoning)
{
    gm_mem_init(&l->mem, NULL, 0);
    gm_strbuf st;
    structural_tag(&l->mem, &st, family, choice, named, parallel, reasoning);
    const char *json = gm_strbuf_str(&st);
    gm_ebnf_init(&l->g, &l->mem);
    gm_stag_options o = {0};
    gm_schema_options_init_defaults(&o.schema);
    gm_limits_init_defaults(&o.limits);
    /* free text as bytes: the reference recognizer's UTF-8 check of free text is slow
       (brute force per byte), and these turns are valid UTF-8 either way */
    o.free_text_bytes = true;
    gm_error err;
    if (gm_stag_compile(&l->mem, "t.json", json, strlen(json), &o, &l->g, &err))
        fail_msg("%s: compile: %s\n%s", family, err.message, json);
    gm_strbuf_free(&st);
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
    bool viable = gm_eref_feed(l->r, text, strlen(text));
    bool complete = viable && gm_eref_accepting(l->r);
    if (complete != sentence)
        fail_msg("'%s': complete %d, expected %d", text, complete, sentence);
}

#define YES(l, t) expect(l, t, true)
#define NO(l, t) expect(l, t, false)

/* What each family's template renders for get_weather(Beijing) and get_time(UTC). */
typedef struct family_case {
    const char *family;
    const char *think;      /* what the model writes to close the open reasoning block */
    const char *one, *two;  /* one call, two parallel calls */
    const char *wrong_name, *bad_args, *broken;
} family_case;

static const family_case cases[] = {
    {"qwen_3", "Hmm.</think>\n\n",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Beijing\"}}\n"
     "</tool_call>",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Beijing\"}}\n"
     "</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": "
     "\"UTC\"}}\n</tool_call>",
     "<tool_call>\n{\"name\": \"get_date\", \"arguments\": {\"timezone\": \"UTC\"}}\n</tool_call>",
     "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": 1}}\n</tool_call>",
     "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}</tool_call>"},
    /* the DeepSeek V3 template (../shared/tokenizers/deepseek_v3), calls joined by "\n" */
    {"deepseek_r1", "Hmm.</think>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
     "{\"location\": \"Beijing\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
     "{\"location\": \"Beijing\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function"
     "<｜tool▁sep｜>get_time\n```json\n{\"timezone\": \"UTC\"}\n```<｜tool▁call▁end｜>"
     "<｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_date\n```json\n"
     "{\"timezone\": \"UTC\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n"
     "{\"tz\": \"UTC\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```\n"
     "{\"timezone\": \"UTC\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
    {"deepseek_v3_1", "Hmm.</think>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": "
     "\"Beijing\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"location\": "
     "\"Beijing\"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\": "
     "\"UTC\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_date<｜tool▁sep｜>{\"timezone\": \"UTC\"}"
     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\": [\"UTC\"]}"
     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{\"timezone\": \"UTC\"}"
     "<｜tool▁calls▁end｜>"},
    {"kimi", "Hmm.</think>",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
     "<|tool_call_argument_begin|>{\"location\": \"Beijing\"}<|tool_call_end|>"
     "<|tool_calls_section_end|>",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
     "<|tool_call_argument_begin|>{\"location\": \"Beijing\"}<|tool_call_end|>"
     "<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"timezone\": \"UTC\"}"
     "<|tool_call_end|><|tool_calls_section_end|>",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_date:0"
     "<|tool_call_argument_begin|>{\"timezone\": \"UTC\"}<|tool_call_end|>"
     "<|tool_calls_section_end|>",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0"
     "<|tool_call_argument_begin|>{\"timezone\": null}<|tool_call_end|>"
     "<|tool_calls_section_end|>",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:"
     "<|tool_call_argument_begin|>{\"timezone\": \"UTC\"}<|tool_call_end|>"
     "<|tool_calls_section_end|>"},
    {"exaone", "Hmm.</think>\n\n",
     "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Beijing\"}}"
     "</tool_call>",
     "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Beijing\"}}"
     "</tool_call><tool_call>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}"
     "</tool_call>",
     "<tool_call>{\"name\": \"get_date\", \"arguments\": {\"timezone\": \"UTC\"}}</tool_call>",
     "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>",
     "<tool_call>{\"name\": \"get_time\", \"arguments\": {\"timezone\": \"UTC\"}}"},
    /* XML arguments (json_schema styles, dispatch/stag_xml.c): strings raw */
    {"qwen_3_coder", "Hmm.</think>\n\n",
     "<tool_call>\n<function=get_weather>\n<parameter=location>\nBeijing\n</parameter>\n"
     "</function>\n</tool_call>",
     "<tool_call>\n<function=get_weather>\n<parameter=location>\nBeijing\n</parameter>\n"
     "</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=timezone>\nUTC\n"
     "</parameter>\n</function>\n</tool_call>",
     "<tool_call>\n<function=get_date>\n<parameter=timezone>\nUTC\n</parameter>\n"
     "</function>\n</tool_call>",
     "<tool_call>\n<function=get_time>\n<parameter=tz>\nUTC\n</parameter>\n"
     "</function>\n</tool_call>",
     "<tool_call>\n<function=get_time>\n<parameter=timezone>\nUTC\n</parameter>\n"
     "</tool_call>"},
    {"glm_4_7", "Hmm.</think>",
     "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Beijing</arg_value></tool_call>",
     "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Beijing</arg_value></tool_call>"
     "<tool_call>get_time<arg_key>timezone</arg_key><arg_value>UTC</arg_value></tool_call>",
     "<tool_call>get_date<arg_key>timezone</arg_key><arg_value>UTC</arg_value></tool_call>",
     "<tool_call>get_time<arg_key>zone</arg_key><arg_value>UTC</arg_value></tool_call>",
     "<tool_call>get_time<arg_key>timezone</arg_key>UTC</arg_value></tool_call>"},
};

static void families_on_turns(void **state)
{
    (void)state;
    char text[2048];
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const family_case *c = &cases[k];
        lang l;
        /* auto: text, calls, text before the calls, after the reasoning */
        preset(&l, c->family, GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_FORBIDDEN);
        YES(&l, "The answer is 42.");
        YES(&l, c->one);
        YES(&l, c->two);
        snprintf(text, sizeof text, "Let me look.%s", c->two);
        YES(&l, text);
        NO(&l, c->wrong_name);
        NO(&l, c->bad_args);
        NO(&l, c->broken);
        NO(&l, "<think>text");
        release(&l);
        /* the block the prompt opened: allowed (may be empty), forced (not empty) */
        preset(&l, c->family, GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_ALLOWED);
        snprintf(text, sizeof text, "%s%s", c->think, c->two);
        YES(&l, text);
        NO(&l, c->two);
        release(&l);
        preset(&l, c->family, GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_FORCED);
        YES(&l, text);
        snprintf(text, sizeof text, "%s%s", strstr(c->think, "</think>"), c->two);
        NO(&l, text);
        release(&l);
        /* required: at least one call; named: that tool only; none: text only */
        preset(&l, c->family, GM_TOOL_CHOICE_REQUIRED, NULL, -1, GM_REASONING_FORBIDDEN);
        NO(&l, "The answer is 42.");
        YES(&l, c->one);
        YES(&l, c->two);
        release(&l);
        preset(&l, c->family, GM_TOOL_CHOICE_NAMED, "get_weather", -1, GM_REASONING_FORBIDDEN);
        YES(&l, c->one);
        NO(&l, c->two);
        release(&l);
        preset(&l, c->family, GM_TOOL_CHOICE_NONE, NULL, -1, GM_REASONING_FORBIDDEN);
        YES(&l, "The answer is 42.");
        NO(&l, c->one);
        release(&l);
        /* parallel calls off: one call (in its section) */
        preset(&l, c->family, GM_TOOL_CHOICE_AUTO, NULL, 0, GM_REASONING_FORBIDDEN);
        YES(&l, c->one);
        NO(&l, c->two);
        release(&l);
    }
}

/* The XML families write their arguments' style for the structural-tag compiler. */
static void xml_families(void **state)
{
    (void)state;
    static const char *const xml[][2] = {
        {"qwen_3_5", "qwen_xml"},         {"qwen_3_coder", "qwen_xml"},
        {"deepseek_v3_2", "deepseek_xml"}, {"deepseek_v4", "deepseek_xml"},
        {"glm_4_7", "glm_xml"},           {"minimax", "minimax_xml"},
        {"cohere", "cohere_xml"}};
    for (size_t k = 0; k < sizeof xml / sizeof *xml; k++) {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        char style[64];
        snprintf(style, sizeof style, "\"style\": \"%s\"", xml[k][1]);
        gm_strbuf st;
        structural_tag(&m, &st, xml[k][0], GM_TOOL_CHOICE_REQUIRED, NULL, -1,
                       GM_REASONING_ALLOWED);
        const char *json = gm_strbuf_str(&st);
        if (!strstr(json, style) || !strstr(json, "get_time"))
            fail_msg("%s: %s", xml[k][0], json);
        gm_strbuf_free(&st);
    }
    assert_int_equal(gm_tool_format_named("kimi_k3"), GM_TOOLS_KIMI_K3);
    assert_int_equal(gm_tool_format_named("kimi_k3_xml"), GM_TOOLS_KIMI_K3_XML);
    assert_null(gm_tool_family_name(GM_TOOLS_HARMONY));
}

/*
 * Kimi K3 (kimi_k3, kimi_k3_xml) on the turns of XGrammar's
 * test_builtin_structural_tag.py (its kimi_k3 instances: the block layout of
 * the model's renderer) and python/tests/test_builtin_structural_tag_models.py:
 * the prompt opened the think block (reasoning allowed or forced) or the
 * response block (forbidden), so the output starts inside it.
 */
#define K3_THINK "Some reasoning.<|close|>think<|sep|>"
#define K3_EMPTY "<|open|>response<|sep|><|close|>response<|sep|>"
#define K3_CALL(tool, n, args) \
    "<|open|>call tool=\"" tool "\" index=\"" n "\"<|sep|>" args "<|close|>call<|sep|>"
#define K3_ARG(key, type, value) \
    "<|open|>argument key=\"" key "\" type=\"" type "\"<|sep|>" value "<|close|>argument<|sep|>"
#define K3_TOOLS(calls) "<|open|>tools<|sep|>" calls "<|close|>tools<|sep|>"
#define K3_END "<|close|>message<|sep|>"
#define K3_WEATHER K3_CALL("get_weather", "1", K3_ARG("location", "string", "Beijing"))
#define K3_TIME K3_CALL("get_time", "2", K3_ARG("timezone", "string", "UTC"))

static void kimi_k3(void **state)
{
    (void)state;
    static const char *const names[] = {"kimi_k3", "kimi_k3_xml"};
    for (size_t k = 0; k < 2; k++) {
        lang l;
        preset(&l, names[k], GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_ALLOWED);
        YES(&l, K3_THINK "<|open|>response<|sep|>Hello!<|close|>response<|sep|>" K3_END);
        YES(&l, "<|close|>think<|sep|><|open|>response<|sep|>Hello!<|close|>response<|sep|>"
                K3_END);
        YES(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_WEATHER) K3_END);
        YES(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_WEATHER K3_TIME) K3_END);
        YES(&l, K3_THINK "<|open|>response<|sep|>Let me look.<|close|>response<|sep|>"
                K3_TOOLS(K3_WEATHER K3_TIME) K3_END);
        /* a raw string may hold a partial close marker */
        YES(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_CALL("get_weather", "1", K3_ARG(
                    "location", "string", "a<|close|>argument text"))) K3_END);
        /* the prompt sent the think block's opening marker */
        NO(&l, "<|open|>think<|sep|>" K3_THINK K3_EMPTY K3_END);
        NO(&l, K3_EMPTY K3_END);                                  /* think not closed */
        NO(&l, K3_THINK K3_EMPTY K3_WEATHER K3_END);              /* call outside the section */
        NO(&l, K3_THINK K3_EMPTY K3_TOOLS("") K3_END);            /* empty section */
        NO(&l, K3_THINK K3_END);                                  /* no response block */
        NO(&l, K3_THINK K3_EMPTY);                                /* no message end */
        NO(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_CALL("get_date", "1", "")) K3_END);
        NO(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_CALL("get_time", "1", K3_ARG("tz", "string", "UTC")))
               K3_END);
        NO(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_CALL("get_time", "1", K3_ARG("timezone", "number",
                                                                          "1"))) K3_END);
        NO(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_CALL("get_time", "", K3_ARG("timezone", "string",
                                                                         "UTC"))) K3_END);
        release(&l);
        preset(&l, names[k], GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_FORCED);
        YES(&l, K3_THINK K3_EMPTY K3_TOOLS(K3_WEATHER) K3_END);
        NO(&l, "<|close|>think<|sep|>" K3_EMPTY K3_TOOLS(K3_WEATHER) K3_END);
        release(&l);
        /* forbidden: the prompt opened the response block */
        preset(&l, names[k], GM_TOOL_CHOICE_AUTO, NULL, -1, GM_REASONING_FORBIDDEN);
        YES(&l, "Hello!<|close|>response<|sep|>" K3_END);
        YES(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_WEATHER K3_TIME) K3_END);
        NO(&l, "<|open|>response<|sep|>Hello!<|close|>response<|sep|>" K3_END);
        NO(&l, K3_THINK "Hello!<|close|>response<|sep|>" K3_END);
        release(&l);
        preset(&l, names[k], GM_TOOL_CHOICE_REQUIRED, NULL, -1, GM_REASONING_FORBIDDEN);
        NO(&l, "Hello!<|close|>response<|sep|>" K3_END);
        YES(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_WEATHER) K3_END);
        YES(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_WEATHER K3_TIME) K3_END);
        release(&l);
        preset(&l, names[k], GM_TOOL_CHOICE_NAMED, "get_time", -1, GM_REASONING_FORBIDDEN);
        YES(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_TIME) K3_END);
        NO(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_WEATHER) K3_END);
        release(&l);
        preset(&l, names[k], GM_TOOL_CHOICE_NONE, NULL, -1, GM_REASONING_FORBIDDEN);
        YES(&l, "Hello!<|close|>response<|sep|>" K3_END);
        NO(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_TIME) K3_END);
        release(&l);
        preset(&l, names[k], GM_TOOL_CHOICE_AUTO, NULL, 0, GM_REASONING_FORBIDDEN);
        YES(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_TIME) K3_END);
        NO(&l, "<|close|>response<|sep|>" K3_TOOLS(K3_WEATHER K3_TIME) K3_END);
        release(&l);
    }
}

/*
 * Harmony's builtin tools ({"type": "web_search_preview", "name": "browser.search"},
 * python): `<|channel|>commentary to=NAME code<|message|>ARGS<|call|>`, as XGrammar's
 * harmony preset and its test_harmony_builtin_tool_instance; not on the analysis
 * channel, not as a function; other formats refuse builtin tools.
 */
static const char *const harmony_specials[] = {"<|start|>", "<|end|>", "<|message|>",
                                               "<|channel|>", "<|constrain|>", "<|return|>",
                                               "<|call|>"};

/* As expect(), Harmony's markers fed as the special tokens they are. */
static void expect_harmony(lang *l, const char *text, bool sentence)
{
    gm_eref_rollback(l->r, 0);
    bool viable = true;
    for (size_t i = 0, n = strlen(text); viable && i < n;) {
        size_t k = 0, len = 0;
        for (; k < sizeof harmony_specials / sizeof *harmony_specials; k++)
            if (!strncmp(text + i, harmony_specials[k], len = strlen(harmony_specials[k])))
                break;
        if (k < sizeof harmony_specials / sizeof *harmony_specials) {
            viable = gm_eref_feed_special(l->r, harmony_specials[k], len);
            i += len;
        } else {
            viable = gm_eref_feed(l->r, text + i, 1);
            i++;
        }
    }
    bool complete = viable && gm_eref_accepting(l->r);
    if (complete != sentence)
        fail_msg("'%s': complete %d, expected %d", text, complete, sentence);
}

#define HYES(l, t) expect_harmony(l, t, true)
#define HNO(l, t) expect_harmony(l, t, false)

static void harmony_builtin_tools(void **state)
{
    (void)state;
    static const char tools[] =
        "[{\"type\": \"web_search_preview\", \"name\": \"browser.search\", \"parameters\": "
        "{\"type\": \"object\", \"properties\": {\"query\": {\"type\": \"string\"}}, "
        "\"required\": [\"query\"]}}, {\"type\": \"python\"},"
        " {\"type\": \"function\", \"function\": {\"name\": \"get_time\"}}]";
    gm_reasoning rs[] = {GM_REASONING_FORBIDDEN, GM_REASONING_ALLOWED};
    for (size_t k = 0; k < 2; k++) {
        lang l;
        gm_mem_init(&l.mem, NULL, 0);
        gm_tools_options o;
        gm_tools_options_init_defaults(&o);
        o.format = GM_TOOLS_HARMONY;
        o.reasoning = rs[k];
        gm_strbuf st;
        gm_strbuf_init(&st, &l.mem);
        gm_error err;
        if (gm_tools_structural_tag(&l.mem, "tools.json", tools, strlen(tools), &o, &st, &err))
            fail_msg("harmony: %s", err.message);
        gm_ebnf_init(&l.g, &l.mem);
        gm_stag_options so = {0};
        gm_schema_options_init_defaults(&so.schema);
        gm_limits_init_defaults(&so.limits);
        so.free_text_bytes = true;
        if (gm_stag_compile(&l.mem, "t.json", gm_strbuf_str(&st), st.n, &so, &l.g, &err) ||
            gm_eref_create(&l.g, &l.r, &err))
            fail_msg("harmony: %s\n%s", err.message, gm_strbuf_str(&st));
        gm_strbuf_free(&st);
        HYES(&l, "<|channel|>commentary to=browser.search code<|message|>{\"query\": \"weather\"}"
                 "<|call|>");
        HYES(&l, "<|channel|>commentary to=python code<|message|>{\"code\": \"1+1\"}<|call|>");
        HYES(&l, "<|channel|>commentary to=functions.get_time <|constrain|>json<|message|>{}"
                 "<|call|>");
        HYES(&l, "<|channel|>final<|message|>It is sunny.");
        HNO(&l, "<|channel|>analysis to=browser.search<|message|>{\"query\": \"weather\"}"
                "<|call|>");
        HNO(&l, "<|channel|>commentary to=browser.search code<|message|>{\"q\": \"weather\"}"
                "<|call|>");
        HNO(&l, "<|channel|>commentary to=functions.browser.search code<|message|>"
                "{\"query\": \"weather\"}<|call|>");
        HNO(&l, "<|channel|>commentary to=browser.open code<|message|>{}<|call|>");
        if (rs[k] == GM_REASONING_ALLOWED)
            HYES(&l, "<|channel|>analysis<|message|>Search.<|end|><|start|>assistant<|channel|>"
                     "commentary to=browser.search code<|message|>{\"query\": \"w\"}<|call|>");
        release(&l);
    }
    /* a builtin tool's name is its type unless given; other formats refuse it */
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    o.format = GM_TOOLS_QWEN_3;
    gm_strbuf st;
    gm_strbuf_init(&st, &m);
    gm_error err;
    assert_int_equal(gm_tools_structural_tag(&m, "tools.json", tools, strlen(tools), &o, &st,
                                             &err), GM_ERR_FORMAT);
    if (!strstr(err.message, "tools /0: a builtin tool (type \"web_search_preview\"): only the "
                             "harmony format"))
        fail_msg("%s", err.message);
    gm_strbuf_free(&st);
}

/* An any_text exclude that is a prefix of its tag's end (Kimi K3's "<|close|>" before
   "<|close|>think<|sep|>") keeps the end reachable: the text may not hold it, the end may. */
static void exclude_prefix_of_end(void **state)
{
    (void)state;
    static const char json[] =
        "{\"type\": \"structural_tag\", \"format\": {\"type\": \"tag\", \"begin\": \"\", "
        "\"content\": {\"type\": \"any_text\", \"excludes\": [\"<|close|>\", \"<|open|>\"]}, "
        "\"end\": \"<|close|>think<|sep|>\"}}";
    lang l;
    gm_mem_init(&l.mem, NULL, 0);
    gm_ebnf_init(&l.g, &l.mem);
    gm_stag_options o = {0};
    gm_schema_options_init_defaults(&o.schema);
    gm_limits_init_defaults(&o.limits);
    o.free_text_bytes = true;
    gm_error err;
    if (gm_stag_compile(&l.mem, "t.json", json, strlen(json), &o, &l.g, &err) ||
        gm_eref_create(&l.g, &l.r, &err))
        fail_msg("%s", err.message);
    YES(&l, "Some reasoning.<|close|>think<|sep|>");
    YES(&l, "<|close|>think<|sep|>");
    NO(&l, "a<|close|>b<|close|>think<|sep|>");
    NO(&l, "<|open|>x<|close|>think<|sep|>");
    NO(&l, "a<|close|>thin");
    release(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(families_on_turns),
        cmocka_unit_test(xml_families),
        cmocka_unit_test(exclude_prefix_of_end),
        cmocka_unit_test(kimi_k3),
        cmocka_unit_test(harmony_builtin_tools),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
