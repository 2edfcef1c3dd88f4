/*
 * The Markdown code-block preset (issue 17 item 4): free text in which
 * "```LANG\n" opens a block of the bundled LALR grammar LANG, closed by the
 * first "\n```" (note [code blocks] in runtime/engine_blocks.c).
 */
#ifndef GM_DISPATCH_CODEBLOCKS_H
#define GM_DISPATCH_CODEBLOCKS_H

#include <stddef.h>

#include "gramask.h"
#include "base/mem.h"
#include "base/strbuf.h"

/*
 * Appends to out the structural tag of Markdown answers whose fenced code
 * blocks are in the languages langs[0..n) (bundled grammar names: json,
 * python, go, java): a triggered_tags format with the trigger "```" and
 * one tag {"begin": "```LANG\n", "content": {"type": "lalr", "grammar":
 * LANG}, "end": "\n```"} per language. "```" in the free text must open one
 * of these blocks. GM_ERR_ARGUMENT for no language, an unknown one or one
 * listed twice. Simpler than CommonMark: fences are exactly "```LANG\n" and
 * "\n```" (no "~~~", no indented fences, no other languages, and a line
 * starting with ``` in a block always closes it; what follows on that line
 * is free text).
 */
gm_status gm_code_blocks_structural_tag(const char *const *langs, size_t n, gm_strbuf *out,
                                        gm_error *err);

#endif
