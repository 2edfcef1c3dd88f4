/*
 * ECMA-262 regular expressions, as JSON Schema's `pattern`,
 * `patternProperties` and format definitions use them, read into the
 * lexer's regex AST (lexer/regex.h) over code points.
 *
 * note [ecma patterns]
 * Meaning (ECMA-262 with the u flag, the JSON Schema 2020-12 reading, and
 * Annex B's leniencies that real schemas rely on):
 *   - `.` is any code point but the line terminators \n \r U+2028 U+2029;
 *     \d = [0-9], \w = [A-Za-z0-9_] (ASCII only, unlike Python), \s = the
 *     WhiteSpace and LineTerminator code points (U+FEFF included), \D \W
 *     \S their complements; \p{..} / \P{..} general categories (L, Letter,
 *     Lu, Nd, digit, ...); \cX, \0, \xHH, \uHHHH, surrogate pairs \uD83D\uDE00,
 *     \u{H...}; an escaped non-alphanumeric character is itself; [^] is any
 *     code point and [] none; a `{` that starts no quantifier is literal.
 *   - A pattern is not anchored: a string is in the language when the
 *     pattern matches somewhere in it. ^ and $ assert the string's start
 *     and end (no multiline flag exists), wherever they occur: the result
 *     is the exact language (note [anchors] in ecma_regex.c).
 *   - Lookarounds (?= (?! (?<= (?<!, word boundaries \b \B and back
 *     references \1 \k<name> have no regular equivalent in general: they
 *     are GM_ERR_UNSUPPORTED naming the construct, or, with
 *     GM_ECMA_LENIENT, relaxed to a superset (an assertion is dropped, a
 *     back reference matches any string) and reported in *relaxed.
 *   - Lazy quantifiers match the same language as greedy ones (the
 *     question is whether a match exists, not which one).
 * Counts above limits->max_regex_repeat are GM_ERR_LIMIT; syntax errors
 * are GM_ERR_SYNTAX. Errors set err->column to the 1-based byte column in
 * the pattern.
 */
#ifndef GM_SCHEMA_ECMA_REGEX_H
#define GM_SCHEMA_ECMA_REGEX_H

#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "lexer/regex.h"

enum {
    GM_ECMA_WHOLE = 1u << 0,   /* match the whole string (as if wrapped in ^(?:...)$) */
    GM_ECMA_LENIENT = 1u << 1, /* relax what has no regular equivalent (see above) */
};

/* What a lenient parse relaxed (bits of *relaxed). */
enum {
    GM_ECMA_RELAXED_LOOKAROUND = 1u << 0,
    GM_ECMA_RELAXED_BOUNDARY = 1u << 1,
    GM_ECMA_RELAXED_BACKREF = 1u << 2,
};

/*
 * Parses pattern[0..len) (UTF-8) into re, freshly initialized (gm_regex_init):
 * re->root matches exactly the strings the pattern accepts under JSON
 * Schema's `pattern` semantics (or, with GM_ECMA_WHOLE, full matches).
 * relaxed may be NULL.
 */
gm_status gm_ecma_regex_parse(gm_regex *re, const char *pattern, size_t len, unsigned flags,
                              const gm_limits *limits, unsigned *relaxed, gm_error *err);

#endif
