/* Tool-call presets of model families (dispatch/tool_families.h, note [tool families]). */
#include "dispatch/tool_families.h"

#include <string.h>

/*
 * In a call's begin template, NAME stands for the tool's name and INDEX for
 * a decimal call index: characters a tool name cannot hold (tools.c refuses
 * control characters in names).
 */
#define NAME "\x01"
#define INDEX "\x02"
#define MAX_EXCLUDES 8
#define MAX_SPECIALS 10

typedef struct family {
    gm_tool_format format;
    const char *name;
    const char *begin;          /* template: text, NAME, at most one INDEX */
    const char *end;
    const char *trigger;        /* of a call in free text, or of the section */
    const char *section[2];     /* begin and end around one or more calls, or NULL */
    const char *separator;      /* between calls in the section */
    const char *required_prefix; /* before the section when a call is required */
    const char *style;          /* json_schema style of the arguments */
    const char *think_end;      /* the end of the block the prompt opened, or NULL */
    const char *think_suffix;   /* fixed text after it */
    const char *think_empty;    /* what the model writes when reasoning is off */
    const char *excludes[MAX_EXCLUDES];           /* free text may not hold these */
    const char *reasoning_excludes[MAX_EXCLUDES]; /* nor the reasoning (empty: any text) */
    const char *specials[MAX_SPECIALS]; /* delimiters that are one token in the family's
                                           tokenizer (note [special token candidates] in
                                           runtime/stag_source.c) */
} family;

#define THINK "<think>", "</think>"
#define DS_CALLS {"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"}
#define GLM_ARGS "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"
/* the families' delimiters that their tokenizers hold as added tokens (as
   python/gramask/builtin_structural_tag.py lists them) */
#define QWEN_SPECIALS {"<tool_call>", "</tool_call>", THINK}
#define DS_SPECIALS {"<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>", \
                     "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", THINK}

static const family families[] = {
    {GM_TOOLS_QWEN_3, "qwen_3", "<tool_call>\n{\"name\": \"" NAME "\", \"arguments\": ",
     "}\n</tool_call>", "<tool_call>", {NULL, NULL}, "", "", "json", "</think>", "\n\n", "",
     {THINK}, {0}, QWEN_SPECIALS},
    {GM_TOOLS_QWEN_3_5, "qwen_3_5", "<tool_call>\n<function=" NAME ">\n",
     "\n</function>\n</tool_call>", "<tool_call>\n<function=", {NULL, NULL}, "", "", "qwen_xml",
     "</think>", "\n\n", "", {THINK}, {0}, QWEN_SPECIALS},
    {GM_TOOLS_QWEN_3_CODER, "qwen_3_coder", "<tool_call>\n<function=" NAME ">\n",
     "\n</function>\n</tool_call>", "<tool_call>\n<function=", {NULL, NULL}, "", "", "qwen_xml",
     "</think>", "\n\n", "", {THINK}, {0}, QWEN_SPECIALS},
    {GM_TOOLS_KIMI, "kimi",
     "<|tool_call_begin|>functions." NAME ":" INDEX "<|tool_call_argument_begin|>",
     "<|tool_call_end|>", "<|tool_calls_section_begin|>",
     {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"}, "", "", "json", "</think>",
     "", "", {THINK, "<|tool_call_begin|>"}, {0},
     {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
      "<|tool_call_argument_begin|>", "<|tool_call_end|>", THINK}},
    {GM_TOOLS_DEEPSEEK_R1, "deepseek_r1",
     "<｜tool▁call▁begin｜>function<｜tool▁sep｜>" NAME "\n```json\n", "\n```<｜tool▁call▁end｜>",
     "<｜tool▁calls▁begin｜>", DS_CALLS, "\n", "", "json", "</think>", "", "", {THINK}, {0},
     DS_SPECIALS},
    {GM_TOOLS_DEEPSEEK_V3_1, "deepseek_v3_1", "<｜tool▁call▁begin｜>" NAME "<｜tool▁sep｜>",
     "<｜tool▁call▁end｜>", "<｜tool▁calls▁begin｜>", DS_CALLS, "", "", "json", "</think>", "", "",
     {THINK}, {0}, DS_SPECIALS},
    {GM_TOOLS_DEEPSEEK_V3_2, "deepseek_v3_2", "<｜DSML｜invoke name=\"" NAME "\">\n",
     "</｜DSML｜invoke>\n", "<｜DSML｜function_calls>",
     {"<｜DSML｜function_calls>\n", "</｜DSML｜function_calls>"}, "", "\n\n", "deepseek_xml",
     "</think>", "", "", {THINK}, {0}, {THINK}},
    {GM_TOOLS_DEEPSEEK_V4, "deepseek_v4", "<｜DSML｜invoke name=\"" NAME "\">\n",
     "</｜DSML｜invoke>\n", "<｜DSML｜tool_calls>",
     {"<｜DSML｜tool_calls>\n", "</｜DSML｜tool_calls>"}, "", "\n\n", "deepseek_xml", "</think>",
     "", "", {THINK}, {0}, {THINK}},
    {GM_TOOLS_GLM_4_7, "glm_4_7", "<tool_call>" NAME, "</tool_call>", "<tool_call>",
     {NULL, NULL}, "", "", "glm_xml", "</think>", "", "", {THINK, "</tool_call>", GLM_ARGS},
     {THINK, "<tool_call>", "</tool_call>", GLM_ARGS}, {THINK, "<tool_call>", "</tool_call>", GLM_ARGS}},
    {GM_TOOLS_MINIMAX, "minimax", "<invoke name=\"" NAME "\">\n", "</invoke>\n",
     "<minimax:tool_call>", {"<minimax:tool_call>\n", "</minimax:tool_call>"}, "", "\n",
     "minimax_xml", "</think>", "\n\n", "\n</think>\n\n\n\n", {THINK}, {0}, {THINK, "<minimax:tool_call>", "</minimax:tool_call>"}},
    {GM_TOOLS_COHERE, "cohere", "<cofl:tool_call id=\"" INDEX "\" name=\"" NAME "\">",
     "</cofl:tool_call>", "<cofl:tool_calls>", {"<cofl:tool_calls>", "</cofl:tool_calls>"}, "",
     "", "cohere_xml", "<|END_THINKING|>", "", "", {"<|START_THINKING|>", "<|END_THINKING|>"},
     {0}, {"<|START_THINKING|>", "<|END_THINKING|>"}},
    {GM_TOOLS_EXAONE, "exaone", "<tool_call>{\"name\": \"" NAME "\", \"arguments\": ",
     "}</tool_call>", "<tool_call>", {NULL, NULL}, "", "", "json", "</think>", "\n\n", "",
     {THINK}, {0}, {"<tool_call>", "</tool_call>", THINK}},
    /* Kimi K3's blocks are not one call format in free text: tool_family_kimi_k3.c */
    {GM_TOOLS_KIMI_K3, "kimi_k3", NULL, NULL, NULL, {NULL, NULL}, NULL, NULL, NULL, NULL, NULL,
     NULL, {0}, {0}, {"<|open|>", "<|close|>", "<|sep|>"}},
    {GM_TOOLS_KIMI_K3_XML, "kimi_k3_xml", NULL, NULL, NULL, {NULL, NULL}, NULL, NULL, NULL, NULL,
     NULL, NULL, {0}, {0}, {"<|open|>", "<|close|>", "<|sep|>"}},
};

static const family *family_of(gm_tool_format f)
{
    for (size_t k = 0; k < sizeof families / sizeof *families; k++)
        if (families[k].format == f)
            return &families[k];
    return NULL;
}

const char *gm_tool_family_name(gm_tool_format f)
{
    const family *fam = family_of(f);
    return fam ? fam->name : NULL;
}

gm_tool_format gm_tool_family_named(const char *name)
{
    for (size_t k = 0; name && k < sizeof families / sizeof *families; k++)
        if (!strcmp(families[k].name, name))
            return families[k].format;
    return (gm_tool_format)0;
}

/* ---- JSON output ---------------------------------------------------------- */

/* s[0..n) escaped for a JSON string, NAME replaced by the tool's name (t may be NULL). */
static void put_escaped(gm_strbuf *b, const char *s, size_t n, const gm_family_tool *t)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x01 && t) {
            put_escaped(b, t->name, t->name_len, NULL);
        } else if (c == '"' || c == '\\') {
            gm_strbuf_putc(b, '\\');
            gm_strbuf_putc(b, (char)c);
        } else if (c == '\n') {
            gm_strbuf_puts(b, "\\n");
        } else if (c < 0x20) {
            gm_strbuf_printf(b, "\\u%04x", c);
        } else {
            gm_strbuf_putc(b, (char)c);
        }
    }
}

static void put_text(gm_strbuf *b, const char *s, size_t n, const gm_family_tool *t)
{
    gm_strbuf_putc(b, '"');
    put_escaped(b, s, n, t);
    gm_strbuf_putc(b, '"');
}

static void put_cstr(gm_strbuf *b, const char *s) { put_text(b, s, strlen(s), NULL); }

static void put_const(gm_strbuf *b, const char *prefix, const char *s)
{
    gm_strbuf_puts(b, "{\"type\": \"const_string\", \"value\": \"");
    put_escaped(b, prefix, strlen(prefix), NULL);
    put_escaped(b, s, strlen(s), NULL);
    gm_strbuf_puts(b, "\"}");
}

/* A JSON list of the items and, when not NULL, extra. */
static void put_list(gm_strbuf *b, const char *const *items, const char *extra)
{
    gm_strbuf_putc(b, '[');
    size_t k = 0;
    for (; k < MAX_EXCLUDES && items[k]; k++) {
        if (k)
            gm_strbuf_puts(b, ", ");
        put_cstr(b, items[k]);
    }
    if (extra) {
        if (k)
            gm_strbuf_puts(b, ", ");
        put_cstr(b, extra);
    }
    gm_strbuf_putc(b, ']');
}

static void put_schema(gm_strbuf *b, const family *fam, const gm_family_tool *t)
{
    gm_strbuf_puts(b, "{\"type\": \"json_schema\", \"json_schema\": ");
    if (t->schema)
        gm_strbuf_append(b, t->schema, t->schema_len);
    else
        gm_strbuf_puts(b, "{\"type\": \"object\"}");
    if (strcmp(fam->style, "json"))
        gm_strbuf_printf(b, ", \"style\": \"%s\"", fam->style);
    gm_strbuf_putc(b, '}');
}

/*
 * One call: tag{begin, arguments, end}; a template with INDEX ends the begin
 * there, and the content is the index's digits, the rest of the template,
 * then the arguments.
 */
static void put_call(gm_strbuf *b, const family *fam, const gm_family_tool *t)
{
    const char *index = strchr(fam->begin, 0x02);
    size_t head = index ? (size_t)(index - fam->begin) : strlen(fam->begin);
    gm_strbuf_puts(b, "{\"type\": \"tag\", \"begin\": ");
    put_text(b, fam->begin, head, t);
    gm_strbuf_puts(b, ", \"content\": ");
    if (index) {
        gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"regex\", "
                          "\"pattern\": \"[0-9]+\"}, {\"type\": \"const_string\", \"value\": ");
        put_text(b, index + 1, strlen(index + 1), t);
        gm_strbuf_puts(b, "}, ");
        put_schema(b, fam, t);
        gm_strbuf_puts(b, "]}");
    } else {
        put_schema(b, fam, t);
    }
    gm_strbuf_puts(b, ", \"end\": ");
    put_cstr(b, fam->end);
    gm_strbuf_putc(b, '}');
}

static void put_calls(gm_strbuf *b, const family *fam, const gm_family_turn *turn)
{
    gm_strbuf_putc(b, '[');
    for (uint32_t i = 0; i < turn->ntools; i++) {
        gm_strbuf_puts(b, i ? ",\n  " : "\n  ");
        put_call(b, fam, &turn->tools[i]);
    }
    gm_strbuf_putc(b, ']');
}

/* The part after the reasoning block (note [tool families]). */
static void put_answer(gm_strbuf *b, const family *fam, const gm_family_turn *turn)
{
    bool required = turn->choice == GM_TOOL_CHOICE_REQUIRED ||
                    turn->choice == GM_TOOL_CHOICE_NAMED;
    const char *one = turn->parallel ? "" : ", \"stop_after_first\": true";
    if (turn->choice == GM_TOOL_CHOICE_NONE || turn->ntools == 0) {
        /* no call: nor the trigger, which a parser would read as one */
        gm_strbuf_puts(b, "{\"type\": \"any_text\", \"excludes\": ");
        put_list(b, fam->reasoning_excludes[0] ? fam->reasoning_excludes : fam->excludes,
                 fam->trigger);
        gm_strbuf_putc(b, '}');
        return;
    }
    if (!fam->section[0]) {
        gm_strbuf_puts(b, "{\"type\": \"triggered_tags\", \"triggers\": [");
        put_cstr(b, fam->trigger);
        gm_strbuf_puts(b, "], \"tags\": ");
        put_calls(b, fam, turn);
        gm_strbuf_puts(b, ", \"excludes\": ");
        put_list(b, fam->excludes, NULL);
        if (required)
            gm_strbuf_puts(b, ", \"at_least_one\": true, \"text_before_first\": true");
        gm_strbuf_printf(b, "%s}", one);
        return;
    }
    if (!required) {
        gm_strbuf_puts(b, "{\"type\": \"triggered_tags\", \"triggers\": [");
        put_cstr(b, fam->trigger);
        gm_strbuf_puts(b, "], \"tags\": [{\"type\": \"tag\", \"begin\": ");
        put_cstr(b, fam->section[0]);
        gm_strbuf_puts(b, ", \"content\": ");
    } else {
        gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [");
        put_const(b, fam->required_prefix, fam->section[0]);
        gm_strbuf_puts(b, ", ");
    }
    gm_strbuf_puts(b, "{\"type\": \"tags_with_separator\", \"tags\": ");
    put_calls(b, fam, turn);
    gm_strbuf_puts(b, ", \"separator\": ");
    put_cstr(b, fam->separator);
    gm_strbuf_printf(b, ", \"at_least_one\": true%s}", one);
    if (!required) {
        gm_strbuf_puts(b, ", \"end\": ");
        put_cstr(b, fam->section[1]);
        gm_strbuf_puts(b, "}], \"excludes\": ");
        put_list(b, fam->excludes, NULL);
        gm_strbuf_putc(b, '}');
    } else {
        gm_strbuf_puts(b, ", ");
        put_const(b, "", fam->section[1]);
        gm_strbuf_puts(b, "]}");
    }
}

void gm_tool_family_put_candidates(gm_tool_format f, gm_strbuf *b)
{
    const family *fam = family_of(f);
    if (!fam || !fam->specials[0])
        return;
    gm_strbuf_puts(b, ", \"special_token_candidates\": [");
    for (size_t k = 0; k < MAX_SPECIALS && fam->specials[k]; k++) {
        if (k)
            gm_strbuf_puts(b, ", ");
        put_cstr(b, fam->specials[k]);
    }
    gm_strbuf_putc(b, ']');
}

void gm_tool_family_put(gm_tool_format f, const gm_family_turn *turn, gm_strbuf *b)
{
    const family *fam = family_of(f);
    if (!fam)
        return;
    if (!fam->begin) {
        gm_tool_family_put_kimi_k3(turn, b);
        return;
    }
    bool think = fam->think_end && turn->reasoning != GM_REASONING_FORBIDDEN;
    bool empty = fam->think_end && !think && fam->think_empty[0];
    if (think || empty)
        gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [");
    if (think) {
        gm_strbuf_puts(b, "{\"type\": \"tag\", \"begin\": \"\", \"content\": ");
        /* forced: one character at least, then any text */
        if (turn->reasoning == GM_REASONING_FORCED)
            gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"regex\", "
                              "\"pattern\": \"[\\\\s\\\\S]\"}, ");
        gm_strbuf_puts(b, "{\"type\": \"any_text\", \"excludes\": ");
        put_list(b, fam->reasoning_excludes, NULL);
        gm_strbuf_putc(b, '}');
        if (turn->reasoning == GM_REASONING_FORCED)
            gm_strbuf_puts(b, "]}");
        gm_strbuf_puts(b, ", \"end\": ");
        put_cstr(b, fam->think_end);
        gm_strbuf_puts(b, "},\n");
        if (fam->think_suffix[0]) {
            put_const(b, "", fam->think_suffix);
            gm_strbuf_puts(b, ",\n");
        }
    } else if (empty) {
        put_const(b, "", fam->think_empty);
        gm_strbuf_puts(b, ",\n");
    }
    put_answer(b, fam, turn);
    if (think || empty)
        gm_strbuf_puts(b, "]}");
}
