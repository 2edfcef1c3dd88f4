/*
 * Characters as the pre-tokenizer patterns see them: White_Space and case
 * folding with Oniguruma's meaning, shared by the regex engine
 * (encode_regex.c) and the hand-written matchers (encode_pretok.c).
 */
#ifndef GM_SPANNER_ENCODE_CHARS_H
#define GM_SPANNER_ENCODE_CHARS_H

#include <stdbool.h>
#include <stdint.h>

/* Whether c is White_Space (\s in Oniguruma, char::is_whitespace in Rust). */
bool gm_pre_is_space(uint32_t c);

/*
 * Simple case folding as (?i:...) compares characters: ASCII letters to
 * lower case, other code points c to tolower(toupper(c)); an ill-formed
 * byte (c >= 0x110000, as the engine reads it) is itself.
 */
uint32_t gm_pre_fold(uint32_t c);

#endif
