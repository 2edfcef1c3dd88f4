/*
 * Exact numeric grammars: the JSON number texts whose value lies in an
 * interval (note [number ranges] in numrange.c).
 */
#ifndef GM_SCHEMA_NUMRANGE_H
#define GM_SCHEMA_NUMRANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "schema/decimal.h"
#include "schema/irb.h"

#define SC_NUM_MAX_DIGITS 400 /* bounds with longer integer parts are refused */

typedef struct sc_numspec {
    bool has_lo, lo_excl;
    bool has_hi, hi_excl;
    gm_dec lo, hi;
    bool integer;     /* integer values only */
    bool int_frac;    /* integers may be written with a zero fraction: 5.0, 5.00 (draft 6+) */
    int32_t max_frac; /* -1: any fraction; else digits past this many after the point are 0 */
    bool nonint;      /* non-integer values only (written without exponent) */
} sc_numspec;

/*
 * The number texts (JSON syntax) of the values in the spec's interval.
 * NOTHING when the interval is empty; GM_EX_NONE after a failure (b->st:
 * GM_ERR_LIMIT for bounds with more than SC_NUM_MAX_DIGITS integer digits).
 */
uint32_t sc_numrange(gm_irb *b, const sc_numspec *sp);

#endif
