/*
 * Tool-call presets: a list of tools (OpenAI style) and a model's calling
 * format -> the structural tag (dispatch/stag.h) that constrains a whole
 * assistant turn of that model.
 *
 * note [tool formats]
 * A turn starts where the model's output starts (after the prompt's
 * assistant header) and ends at the format's end. NAME is a tool's name,
 * ARGS a JSON value of its `parameters` schema (an object of any members
 * when the tool has none).
 *   llama       <function=NAME>ARGS</function>, in free text (Llama 3.x
 *               custom tools); the trigger is `<function=`.
 *   llama-json  {"name": "NAME", "parameters": ARGS} (Llama 3.x JSON tool
 *               calling); the trigger is `{"name":`.
 *   qwen        <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call>
 *               (Hermes style, Qwen 2.5/3), after an optional, forced or
 *               forbidden <think>...</think>.
 *   harmony     OpenAI Harmony (gpt-oss): messages `<|channel|>analysis
 *               <|message|>TEXT<|end|>` and preambles `<|channel|>commentary
 *               <|message|>TEXT<|end|>`, separated by `<|start|>assistant`,
 *               then either a call `<|channel|>commentary to=functions.NAME
 *               [ ]<|constrain|>json<|message|>ARGS<|call|>` or the answer
 *               `<|channel|>final<|message|>TEXT` (then `<|return|>`, which is
 *               gpt-oss's EOS). Every `<|...|>` is a special token. One call
 *               per turn: `<|call|>` stops the model.
 * tool_choice: auto (free text, calls allowed), required (at least one
 * call; free text may come first), a named function (at least one call, of
 * that tool only), none (no call; the free text may not hold a trigger).
 * parallel calls off: at most one call per turn (stop_after_first).
 * Free text never holds a trigger outside a call (note [until]).
 */
#ifndef GM_DISPATCH_TOOLS_H
#define GM_DISPATCH_TOOLS_H

#include <stddef.h>

#include "gramask.h"
#include "base/mem.h"
#include "base/strbuf.h"

/* The format called `name` ("llama", "llama-json", "qwen", "harmony"), or 0. */
gm_tool_format gm_tool_format_named(const char *name);
const char *gm_tool_format_name(gm_tool_format f);

/*
 * Appends to out the structural tag for the tools JSON text tools[0..len):
 * an array of tools ({"type": "function", "function": {name, description,
 * parameters}} or bare {name, parameters}), or an object {"tools": [...],
 * "tool_choice": ..., "parallel_tool_calls": ...} whose settings apply
 * where opts leaves them at their defaults. Errors name the JSON pointer.
 */
gm_status gm_tools_structural_tag(gm_mem *m, const char *name, const char *tools, size_t len,
                                  const gm_tools_options *opts, gm_strbuf *out, gm_error *err);

#endif
