/*
 * Kimi K3's tool-call preset (kimi_k3, kimi_k3_xml: one format under two
 * names), as python/gramask/builtin_structural_tag.py builds it: blocks
 * <|open|>NAME<|sep|>...<|close|>NAME<|sep|>, a turn
 *   [REASONING<|close|>think<|sep|><|open|>response<|sep|>]TEXT<|close|>response<|sep|>
 *   [<|open|>tools<|sep|>CALL...<|close|>tools<|sep|>]<|close|>message<|sep|>
 * with CALL = <|open|>call tool="NAME" index="N"<|sep|>ARGS<|close|>call<|sep|>
 * and ARGS the kimi_k3_xml parameters (dispatch/stag_xml.c). The prompt
 * opened the first block: think when reasoning is allowed or forced, the
 * response when it is forbidden (the template's thinking off), so the
 * output starts inside it. Calls are joined with nothing between them.
 */
#include "dispatch/tool_families.h"

#include <string.h>

#define OPEN "<|open|>"
#define CLOSE "<|close|>"
#define SEP "<|sep|>"
/* free text and reasoning hold no block marker (a prefix of an end is fine: note [until]) */
#define EXCLUDES "[\"" OPEN "\", \"" CLOSE "\"]"

/* s escaped for a JSON string (a tool name holds no control characters: tools.c) */
static void put_escaped(gm_strbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\')
            gm_strbuf_putc(b, '\\');
        gm_strbuf_putc(b, s[i]);
    }
}

static void put_call(gm_strbuf *b, const gm_family_tool *t)
{
    gm_strbuf_puts(b, "{\"type\": \"tag\", \"begin\": \"" OPEN "call tool=\\\"");
    put_escaped(b, t->name, t->name_len);
    gm_strbuf_puts(b, "\\\" index=\\\"\", \"content\": {\"type\": \"sequence\", \"elements\": ["
                      "{\"type\": \"regex\", \"pattern\": \"[0-9]+\"}, {\"type\": "
                      "\"const_string\", \"value\": \"\\\"" SEP "\"}, {\"type\": "
                      "\"json_schema\", \"json_schema\": ");
    if (t->schema)
        gm_strbuf_append(b, t->schema, t->schema_len);
    else
        gm_strbuf_puts(b, "{\"type\": \"object\"}");
    gm_strbuf_puts(b, ", \"style\": \"kimi_k3_xml\"}]}, \"end\": \"" CLOSE "call" SEP "\"}");
}

static void put_calls(gm_strbuf *b, const gm_family_turn *turn)
{
    gm_strbuf_puts(b, "{\"type\": \"tags_with_separator\", \"tags\": [");
    for (uint32_t i = 0; i < turn->ntools; i++) {
        gm_strbuf_puts(b, i ? ",\n  " : "\n  ");
        put_call(b, &turn->tools[i]);
    }
    gm_strbuf_printf(b, "], \"separator\": \"\", \"at_least_one\": true%s}",
                     turn->parallel ? "" : ", \"stop_after_first\": true");
}

void gm_tool_family_put_kimi_k3(const gm_family_turn *turn, gm_strbuf *b)
{
    bool think = turn->reasoning != GM_REASONING_FORBIDDEN;
    gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [\n");
    if (think) {
        gm_strbuf_puts(b, "{\"type\": \"tag\", \"begin\": \"\", \"content\": ");
        /* forced: one character at least, then any text */
        if (turn->reasoning == GM_REASONING_FORCED)
            gm_strbuf_puts(b, "{\"type\": \"sequence\", \"elements\": [{\"type\": \"regex\", "
                              "\"pattern\": \"[\\\\s\\\\S]\"}, ");
        gm_strbuf_puts(b, "{\"type\": \"any_text\", \"excludes\": " EXCLUDES "}");
        if (turn->reasoning == GM_REASONING_FORCED)
            gm_strbuf_puts(b, "]}");
        gm_strbuf_puts(b, ", \"end\": \"" CLOSE "think" SEP "\"},\n");
    }
    gm_strbuf_printf(b, "{\"type\": \"tag\", \"begin\": \"%s\", \"content\": {\"type\": "
                        "\"any_text\", \"excludes\": " EXCLUDES "}, \"end\": \"" CLOSE
                        "response" SEP "\"},\n",
                     think ? OPEN "response" SEP : "");
    bool calls = turn->choice != GM_TOOL_CHOICE_NONE && turn->ntools > 0;
    if (calls && turn->choice == GM_TOOL_CHOICE_AUTO) {
        gm_strbuf_puts(b, "{\"type\": \"optional\", \"content\": {\"type\": \"tag\", \"begin\": \""
                          OPEN "tools" SEP "\", \"content\": ");
        put_calls(b, turn);
        gm_strbuf_puts(b, ", \"end\": \"" CLOSE "tools" SEP "\"}},\n");
    } else if (calls) {
        /* required or named: the section, at least one call */
        gm_strbuf_puts(b, "{\"type\": \"const_string\", \"value\": \"" OPEN "tools" SEP "\"}, ");
        put_calls(b, turn);
        gm_strbuf_puts(b, ", {\"type\": \"const_string\", \"value\": \"" CLOSE "tools" SEP
                          "\"},\n");
    }
    gm_strbuf_puts(b, "{\"type\": \"const_string\", \"value\": \"" CLOSE "message" SEP "\"}]}");
}
