/*
 * Code point ranges as UTF-8 byte-range sequences. A range [lo, hi] of
 * scalar values is split into sequences like [E1-EC][80-BF][80-BF] such
 * that a byte string matches one of the sequences iff it is the well-formed
 * UTF-8 encoding of a code point in the range: surrogates (U+D800-U+DFFF)
 * are dropped, and no sequence admits an overlong form or a value above
 * U+10FFFF, because each sequence is built from the encodings of its own
 * first and last code point.
 */
#ifndef GM_LEXER_UTF8_RANGES_H
#define GM_LEXER_UTF8_RANGES_H

#include <stddef.h>
#include <stdint.h>

#include "base/utf8.h"

typedef struct gm_utf8_seq {
    uint8_t len;      /* 1..4 */
    uint8_t lo[4];    /* byte i matches lo[i]..hi[i] */
    uint8_t hi[4];
} gm_utf8_seq;

/*
 * Calls fn for each sequence covering [lo, hi] (lo <= hi <= U+10FFFF), in
 * increasing code point order. Stops and returns fn's value when it is
 * non-zero; returns 0 otherwise.
 */
int gm_utf8_sequences(uint32_t lo, uint32_t hi, int (*fn)(void *ud, const gm_utf8_seq *seq),
                      void *ud);

/* Encodes a scalar value (not a surrogate, <= U+10FFFF); returns the length 1..4. */
int gm_utf8_encode_char(uint32_t cp, uint8_t out[4]);


#endif
