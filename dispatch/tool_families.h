/*
 * Tool-call presets of model families under XGrammar's names
 * (get_model_structural_tag): each family's format is data (a begin
 * template, an end, a trigger, the section around parallel calls, the
 * reasoning block's end); tool_choice, parallel calls and reasoning are one
 * construction for all of them (note [tool families]). dispatch/tools.c
 * reads the tools and calls this for formats beyond its own four.
 *
 * note [tool families]
 * The turn starts where the model's output starts. A family whose prompt
 * opens a reasoning block (qwen_3, kimi, deepseek_*, glm_4_7, minimax,
 * cohere, exaone) starts inside it: reasoning allowed: any text up to its
 * end (`</think>`, Cohere `<|END_THINKING|>`), then the family's fixed
 * suffix; forced: at least one character before the end; forbidden: the
 * block was closed by the prompt (MiniMax writes its empty block itself).
 * Then:
 *   auto      free text, calls dispatched on the trigger (inside the
 *             family's section, one or more calls, where it has one);
 *   required  at least one call: the section right away (after the
 *             family's fixed prefix), else triggered calls with free text
 *             before the first and after the calls;
 *   named     that tool's calls only, at least one;
 *   none      free text;
 * parallel calls off: one call. Free text never holds the family's
 * reasoning markers. Arguments are JSON (style "json") or the family's XML
 * parameters (json_schema style qwen_xml, deepseek_xml, minimax_xml,
 * glm_xml, cohere_xml: compiled where dispatch/stag.c supports the style).
 * Kimi K3 (kimi_k3, kimi_k3_xml) is a sequence of blocks rather than calls
 * in free text: dispatch/tool_family_kimi_k3.c.
 */
#ifndef GM_DISPATCH_TOOL_FAMILIES_H
#define GM_DISPATCH_TOOL_FAMILIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/strbuf.h"

typedef struct gm_family_tool {
    const char *name;         /* no control characters, quotes or angle brackets */
    uint32_t name_len;
    const char *schema;       /* the parameters' JSON text, NULL: any object */
    size_t schema_len;
} gm_family_tool;

typedef struct gm_family_turn {
    const gm_family_tool *tools; /* the selected tools (a named choice: that one) */
    uint32_t ntools;
    gm_tool_choice choice;       /* AUTO, REQUIRED, NONE or NAMED (not DEFAULT) */
    bool parallel;
    gm_reasoning reasoning;
} gm_family_turn;

/* The family's name ("qwen_3"...), or NULL when f is not a family of this file. */
const char *gm_tool_family_name(gm_tool_format f);

/* The family called name, or 0. */
gm_tool_format gm_tool_family_named(const char *name);

/* Appends the "format" value of the family's structural tag to out. */
void gm_tool_family_put(gm_tool_format f, const gm_family_turn *turn, gm_strbuf *out);
/* `, "special_token_candidates": [...]` of the family's delimiters that its
   tokenizer has as tokens (note [special token candidates]), or nothing. */
void gm_tool_family_put_candidates(gm_tool_format f, gm_strbuf *out);

/* Kimi K3's (kimi_k3, kimi_k3_xml) "format" value (dispatch/tool_family_kimi_k3.c). */
void gm_tool_family_put_kimi_k3(const gm_family_turn *turn, gm_strbuf *out);

#endif
