/*
 * Structural tags (XGrammar's `structural_tag` response format) compiled to
 * the grammar IR: free text scanned for triggers, tags whose contents are
 * JSON Schemas, grammars, regexes or nested formats — TagDispatch
 * (XGrammar 2 §3.1) as one Earley grammar.
 *
 * note [structural tags]
 * Accepted, as XGrammar documents them (docs/tutorials/structural_tag.md):
 *   {"type": "structural_tag", "format": F}, or F itself, or the first
 *   version {"type": "structural_tag", "structures": [{begin, schema, end}],
 *   "triggers": [...]} (a triggered_tags of those tags);
 *   F is one of
 *     const_string {value | text}        the string
 *     json_schema {json_schema}          JSON valid under the schema (schema/)
 *     grammar {grammar}                  XGrammar EBNF text
 *     regex {pattern}                    Python re syntax (lexer/regex.h)
 *     json_schema {style?, any_order?, max_whitespace_cnt?}: style "json"
 *                                        or an XML argument style (qwen_xml,
 *                                        minimax_xml, deepseek_xml, glm_xml,
 *                                        cohere_xml, kimi_k3_xml: note [xml
 *                                        styles] in stag_xml.c); the others
 *                                        set gm_schema_options
 *     qwen_xml_parameter {json_schema}   json_schema with style qwen_xml
 *     sequence {elements}, or {elements}
 *     optional, plus, star {content}     content 0-1, 1+, 0+ times
 *     repeat {min, max, content}         min..max times (max -1: no bound)
 *     tag {begin, content, end}          begin content end; begin a string or a
 *                                        token format, end a string, a list of
 *                                        strings (any one ends it) or a token
 *     token {token}                      the special token of that text (ids are
 *                                        refused: the IR names tokens by text)
 *     dispatch {rules, loop?, excludes?} free text up to the first pattern of the
 *                                        rules [[pattern, format], ...], then its
 *                                        format; loop: again, ending in free text
 *     any_text {excludes?, max_chars?, max_tokens?}
 *                                        free text (below) in which no excluded
 *                                        string occurs; directly inside a tag
 *                                        whose end is text, also none of the end
 *                                        before the end itself (note [until]);
 *                                        at most max_chars characters (the end
 *                                        not counted); max_tokens 0: empty, more
 *                                        is GM_ERR_UNSUPPORTED (the matcher does
 *                                        not count the tokens of a region)
 *     triggered_tags {triggers, tags, at_least_one?, stop_after_first?,
 *                     excludes?}
 *     tags_with_separator {tags, separator, at_least_one?, stop_after_first?}
 * Free text (any_text, the text of triggered_tags) is valid UTF-8, complete
 * where it ends (note [until]), unless the document says "free_text":
 * "bytes" (or gm_stag_options.free_text_bytes): then any bytes, and no
 * max_chars. Every object's keys are checked: one the format does not take
 * is GM_ERR_FORMAT naming its pointer (nothing is ignored silently).
 * gramask's additions:
 *   "special_tokens": [...] at the top level (beside the options' list):
 *     wherever one of these texts appears in a begin, end, trigger, separator
 *     or constant string, it stands for that special token of the tokenizer
 *     (GM_EX_TOKEN), which only the token's id produces — Harmony's
 *     `<|channel|>`; a special token cannot be spelled as text;
 *   "special_token_candidates": [...] at the top level: texts that are a
 *     special token where the vocabulary has a token of exactly that text (an
 *     added token: a model family's delimiters), and text where it has none
 *     (note [special token candidates] in runtime/stag_source.c: the grammar
 *     is compiled again for a vocabulary that has some);
 *   free text never holds a special token's text (note [special texts in
 *     free text] in stag.c);
 *   "free_text": "utf8" (the default) or "bytes", at the top level;
 *   "excluded_str": the older name of "excludes";
 *   triggered_tags "text_before_first": with at_least_one, free text may
 *     come before the first tag (XGrammar starts the output with it);
 *   lalr {grammar}: a program of a bundled LALR grammar ("python", "go",
 *     "java", "json"), only as the content of a tag whose begin and end are
 *     text of 1 to GM_STAG_MAX_FENCE bytes; the content is the code up to
 *     the first occurrence of the end (Markdown's closing fence), which must
 *     be a whole program there (note [code blocks] in runtime/engine_blocks.c).
 * triggered_tags semantics: free text up to the first trigger; the text
 * after it must continue one of the tags whose begin starts with that
 * trigger (every tag's begin starts with exactly one trigger); after the tag's
 * end, free text again; the structure may end wherever free text may.
 * stop_after_first ends it after one tag; at_least_one requires one.
 * Refused with GM_ERR_UNSUPPORTED naming the type and its JSON pointer:
 * exclude_token, any_tokens, token_dispatch,
 * token_triggered_tags and any other type. Every error names the JSON pointer
 * and the line:column in the document.
 */
#ifndef GM_DISPATCH_STAG_H
#define GM_DISPATCH_STAG_H

#include <stddef.h>

#include "gramask.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "ir/ebnf.h"

#define GM_STAG_MAX_FENCE 64 /* bytes of the begin and end of a tag with lalr content */

typedef struct gm_stag_options {
    const char *const *special_tokens; /* texts standing for special tokens (may be NULL) */
    size_t n_special_tokens;
    gm_schema_options schema;          /* how json_schema contents are compiled */
    gm_limits limits;
    bool free_text_bytes;              /* free text any bytes, not only valid UTF-8 (the
                                          document's "free_text" overrides it) */
    gm_strbuf *candidates;             /* out (may be NULL): the document's
                                          special_token_candidates appended, each
                                          followed by a NUL */
    bool unshared;                     /* for tests: each schema compiled where it is used,
                                          XML arguments and repeated calls written in place
                                          (note [schema memo], note [shared alternatives]):
                                          the grammar before those, its masks the same */
} gm_stag_options;

/*
 * Compiles the structural tag json[0..len) into g (freshly initialized on
 * m), root rule "root", checked. name labels errors (may be NULL).
 */
gm_status gm_stag_compile(gm_mem *m, const char *name, const char *json, size_t len,
                          const gm_stag_options *opts, gm_ebnf *g, gm_error *err);

#endif
