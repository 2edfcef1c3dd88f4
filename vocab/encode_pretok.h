/*
 * Hand-written matchers for the pre-tokenizer patterns most tokenizers use
 * (note [known patterns] in encode_pretok.c). encode_regex.c runs one in
 * place of its backtracking program when a pattern is one of them, word
 * for word.
 */
#ifndef GM_SPANNER_ENCODE_PRETOK_H
#define GM_SPANNER_ENCODE_PRETOK_H

#include <stddef.h>
#include <stdint.h>

/*
 * The end of the leftmost-first match starting exactly at s[pos] (pos < n),
 * or GM_PRE_KNOWN_NOMATCH (GM_PRE_NOMATCH): what gm_pre_regex_match_at
 * gives for the pattern.
 */
typedef long (*gm_pre_known_fn)(const uint8_t *s, size_t n, size_t pos);

enum { GM_PRE_KNOWN_NOMATCH = -1 };

/* The matcher of pattern pat[0..len), or NULL when it is not a known one. */
gm_pre_known_fn gm_pre_known(const char *pat, size_t len);

#endif
