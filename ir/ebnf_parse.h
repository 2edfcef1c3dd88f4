/*
 * Front ends of the Earley engine: grammar text -> gm_ebnf (ir/ebnf.h).
 *
 *   GBNF   llama.cpp's dialect, exactly as its grammars/README.md defines it.
 *   EBNF   XGrammar's dialect: GBNF plus its additions (note [ebnf dialect]
 *          in ebnf_parse.c lists which are accepted and what they mean).
 *   regex  one regex (the lexer's dialect, lexer/regex.h) as a whole grammar
 *          whose root rule is named "root".
 *
 * Errors carry file:line:column and a caret line (gm_error_set_at).
 */
#ifndef GM_EARLEY_EBNF_PARSE_H
#define GM_EARLEY_EBNF_PARSE_H

#include <stddef.h>

#include "gramask.h"
#include "ir/ebnf.h"

typedef enum gm_ebnf_dialect {
    GM_EBNF_GBNF,
    GM_EBNF_XGRAMMAR,
} gm_ebnf_dialect;

/*
 * Parses text[0..len) into g (freshly initialized) and checks it
 * (gm_ebnf_check). `file` names it in errors (may be NULL). The root rule is
 * opts->start when given, else "root". opts may be NULL.
 */
gm_status gm_ebnf_parse(gm_ebnf *g, const char *file, const char *text, size_t len,
                        gm_ebnf_dialect dialect, const gm_grammar_options *opts, gm_error *err);

/*
 * The regex pattern[0..len) with GM_RE_* flags as a whole grammar: g
 * (freshly initialized) gets one rule "root" with the regex's language.
 */
gm_status gm_ebnf_from_regex(gm_ebnf *g, const char *file, const char *pattern, size_t len,
                             unsigned flags, const gm_grammar_options *opts, gm_error *err);

/*
 * Adds the regex pattern[0..len) (GM_RE_* flags) to g as an expression:
 * *node is its root. For builders (JSON Schema's `pattern` and `format`).
 * Errors name the construct and its column in the pattern (err->column).
 */
/* A gm_ebnf_add_regex flag beside GM_RE_*: no character the pattern matches is '"', '\\'
   or a control character U+0000-U+001F (XGrammar's Regex(..., json_string=true)). */
#define GM_EBNF_RE_JSON_STRING (1u << 16)
gm_status gm_ebnf_add_regex(gm_ebnf *g, const char *pattern, size_t len, unsigned flags,
                            const gm_limits *limits, uint32_t *node, gm_error *err);


#endif
