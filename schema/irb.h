/*
 * A thin layer over the gm_ebnf node builder (ir/ebnf.h) for the
 * schema compiler: failures are sticky (a builder returns GM_EX_NONE once
 * anything failed, and every builder passes GM_EX_NONE through), NOTHING
 * and EMPTY simplify away (a sequence with NOTHING is NOTHING, an
 * alternative drops it), and the JSON string encodings of code points,
 * sets, literals and regexes live here (note [string encoding]).
 *
 * note [string encoding]
 * A JSON string can spell one character several ways ("a" and "\u0061").
 * The grammars accept the spelling of serializers that write UTF-8 as is
 * (Python's json.dumps(ensure_ascii=False), JavaScript's JSON.stringify,
 * serde_json, Go with SetEscapeHTML(false)): every character literally,
 * except '"' and '\' which are escaped (\" \\), the C0 controls
 * U+0000-U+001F which are escaped as \b \f \n \r \t where those exist or as
 * \u00XX (hex digits in either case; both forms accepted for the five with
 * a short form), and '/' which may also be written \/ (PHP's default).
 * Every character then has a fixed set of spellings, each of them one
 * code point long, so minLength/maxLength count spellings, and pattern,
 * enum and property-name constraints stay regular. An instance that spells
 * an ordinary character with \uXXXX (ensure_ascii output) is refused.
 */
#ifndef GM_SCHEMA_IRB_H
#define GM_SCHEMA_IRB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "ir/ebnf.h"
#include "lexer/cpset.h"
#include "lexer/regex.h"

typedef struct gm_irb {
    gm_ebnf *g;
    gm_status st;         /* first failure */
    gm_error *err;
    uint32_t empty, nothing; /* shared nodes (GM_EX_NONE until first use) */
    uint32_t hexdigit;    /* [0-9a-fA-F] */
    uint32_t all_escapes; /* "\\" and every escape: the escape part of a set holding all specials */
    size_t max_nodes;     /* node budget (GM_ERR_LIMIT past it) */
} gm_irb;

void gm_irb_init(gm_irb *b, gm_ebnf *g, size_t max_nodes, gm_error *err);

/* Records a failure (the first one wins); returns GM_EX_NONE. */
uint32_t gm_irb_fail(gm_irb *b, gm_status st, const char *fmt, ...) GM_PRINTF(3, 4);

static inline bool gm_irb_ok(const gm_irb *b) { return b->st == GM_OK; }
bool gm_irb_is_nothing(const gm_irb *b, uint32_t x);
bool gm_irb_is_empty(const gm_irb *b, uint32_t x);

uint32_t gm_irb_empty(gm_irb *b);
uint32_t gm_irb_nothing(gm_irb *b);
uint32_t gm_irb_bytes(gm_irb *b, const void *s, size_t n);
uint32_t gm_irb_lit(gm_irb *b, const char *s); /* NUL-terminated bytes */
uint32_t gm_irb_byterange(gm_irb *b, uint8_t lo, uint8_t hi);
uint32_t gm_irb_byteset(gm_irb *b, const uint32_t bits[8]);
/* One code point of s (copied; an empty set is NOTHING). */
uint32_t gm_irb_cpset(gm_irb *b, const gm_cpset *s);
uint32_t gm_irb_ref(gm_irb *b, uint32_t rule);
uint32_t gm_irb_seq(gm_irb *b, const uint32_t *ids, size_t n);
uint32_t gm_irb_seq2(gm_irb *b, uint32_t x, uint32_t y);
uint32_t gm_irb_seq3(gm_irb *b, uint32_t x, uint32_t y, uint32_t z);
uint32_t gm_irb_alt(gm_irb *b, const uint32_t *ids, size_t n);
uint32_t gm_irb_alt2(gm_irb *b, uint32_t x, uint32_t y);
/* x{min,max}; max may be GM_EX_INF. */
uint32_t gm_irb_repeat(gm_irb *b, uint32_t x, uint32_t min, uint32_t max);
uint32_t gm_irb_opt(gm_irb *b, uint32_t x);

/* A rule named from hint (fresh) with the given body; the REF to it. */
uint32_t gm_irb_rule(gm_irb *b, const char *hint, uint32_t body);

/* ---- note [string encoding] ---- */

/* The spellings of one code point of s inside a JSON string. */
uint32_t gm_irb_json_set(gm_irb *b, const gm_cpset *s);
/* The spellings of the UTF-8 text s[0..n) (a string's body, without quotes). */
uint32_t gm_irb_json_text(gm_irb *b, const char *s, size_t n);
/* The spellings of the strings of a regex AST node (code points) inside a JSON string. */
uint32_t gm_irb_json_regex(gm_irb *b, const gm_regex *re, uint32_t node);
/* The spellings of one byte of bits (256-bit set) of UTF-8 text: ASCII specials escaped,
   other bytes as they are (for byte-level string automata, strdfa.c). */
uint32_t gm_irb_json_byteset(gm_irb *b, const uint32_t bits[8]);
/* The spellings of one character of any kind (the body of the shared `char` rule). */
uint32_t gm_irb_json_char(gm_irb *b);

#endif
