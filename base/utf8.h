/* UTF-8 decoding and encoding shared by the lexer and the vocabulary loader. */
#ifndef GM_BASE_UTF8_H
#define GM_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the well-formed UTF-8 character at s[0..len): returns its length
 * (1-4) and sets *cp, or returns 0 for anything ill-formed (truncated,
 * overlong, surrogate, past U+10FFFF, stray continuation byte).
 */
size_t gm_utf8_decode(const uint8_t *s, size_t len, uint32_t *cp);

/* Writes code point cp (<= U+10FFFF) as UTF-8 to out (room for 4); returns the length. */
size_t gm_utf8_encode(uint8_t *out, uint32_t cp);

/*
 * The automaton of valid UTF-8, a byte at a time: state GM_UTF8_START is a
 * character boundary (where valid text may end), states 1-7 are inside a
 * character; gm_utf8_step returns the state after byte b, or GM_UTF8_DEAD
 * when no valid UTF-8 continues that way (stray continuation, overlong,
 * surrogate, past U+10FFFF).
 */
#define GM_UTF8_START 0u
#define GM_UTF8_DEAD 0xffu
#define GM_UTF8_STATES 8u
unsigned gm_utf8_step(unsigned state, uint8_t b);

#endif
