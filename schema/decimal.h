/*
 * Exact decimal numbers for JSON Schema's numeric keywords: a JSON number
 * lexeme read without rounding, so that `maximum: 0.1`, `const:
 * 18446744073709551615` and `multipleOf: 0.01` mean what they say. A value
 * is sign x digits x 10^exp with no leading or trailing zero digit (zero
 * has no digits), so equal values have equal representations.
 */
#ifndef GM_SCHEMA_DECIMAL_H
#define GM_SCHEMA_DECIMAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GM_DEC_MAX_DIGITS 96   /* significant digits kept exactly */
#define GM_DEC_MAX_EXP 100000  /* |exponent| beyond this is refused */

typedef struct gm_dec {
    bool neg;                   /* never set for zero */
    uint32_t nd;                /* significant digits; 0 for zero */
    int32_t exp;                /* value = d[0..nd) x 10^exp */
    char d[GM_DEC_MAX_DIGITS];  /* '0'..'9'; d[0] and d[nd-1] are not '0' */
} gm_dec;

/*
 * Reads a JSON number lexeme (RFC 8259 syntax). Returns 0, or -1 when the
 * text is not a number or holds more than GM_DEC_MAX_DIGITS significant
 * digits or an exponent out of range.
 */
int gm_dec_parse(gm_dec *out, const char *s, size_t len);

void gm_dec_zero(gm_dec *out);
/* An integer (|v| < 10^18) as a decimal. */
void gm_dec_from_int(gm_dec *out, int64_t v);

/* -1, 0, 1 as a < b, a == b, a > b. */
int gm_dec_cmp(const gm_dec *a, const gm_dec *b);
static inline bool gm_dec_is_zero(const gm_dec *a) { return a->nd == 0; }
bool gm_dec_is_integer(const gm_dec *a);

/* Digits of the integer part of |a| ("0" for |a| < 1) and of its fraction
   ("" for an integer), written to buf (NUL-terminated); 0, or -1 when they
   need more than cap bytes. */
int gm_dec_int_digits(const gm_dec *a, char *buf, size_t cap);
int gm_dec_frac_digits(const gm_dec *a, char *buf, size_t cap);

/* Writes a in plain positional notation ("-12.5", "0.001", "1000"); 0 or -1 when cap is short. */
int gm_dec_format(const gm_dec *a, char *buf, size_t cap);

/*
 * Whether a is an integer multiple of m (m > 0). Exact for the digits
 * kept; 0/1, or -1 when the quotient is too large to decide here.
 */
int gm_dec_is_multiple(const gm_dec *a, const gm_dec *m);

/* a as a double (for messages and heuristics only). */
double gm_dec_to_double(const gm_dec *a);

#endif
