/*
 * A thin layer over the gm_ebnf node builder (ir/ebnf.h) for the
 * schema compiler: failures are sticky (a builder returns GM_EX_NONE once
 * anything failed, and every builder passes GM_EX_NONE through), NOTHING
 * and EMPTY simplify away (a sequence with NOTHING is NOTHING, an
 * alternative drops it), and the JSON string spellings of code points,
 * sets, literals and regexes live here (note [string encoding]).
 *
 * note [string encoding]
 * A JSON string can spell one character several ways ("é" as its UTF-8
 * bytes, "\u00e9" or "\u00E9"; "/" or "\/"). The grammars accept every
 * spelling RFC 8259 allows, for every character and in any mix: the character
 * literally (UTF-8) unless it is '"', '\' or a C0 control U+0000-U+001F;
 * the short escapes \" \\ \/ \b \f \n \r \t; and \uXXXX with hex digits
 * in either case for every character of the BMP, a surrogate pair
 * \uD83D\uDE00 for one past it (high then low, each in either case). A
 * lone surrogate spells no character and is refused. Spellings are
 * generated per character from code point sets (gm_irb_json_set), so
 * minLength/maxLength count characters however they are spelled, and
 * pattern, enum, const, format and property-name languages, which are
 * languages of characters, keep their meaning whatever the spelling.
 * The \u spellings of a set are a hex-digit automaton built per digit
 * (hex_window: digits whose remaining values are the same set share a
 * branch), the escapes of a set one rule `esc` that every use of the set
 * references (never inlined: the literal spelling keeps its automaton
 * states, the escapes add one edge); a serializer's output
 * (ensure_ascii=True or False, JavaScript, serde_json, Go, PHP's \/) is
 * one of the spellings accepted.
 */
#ifndef GM_SCHEMA_IRB_H
#define GM_SCHEMA_IRB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/hash.h"
#include "base/vec.h"
#include "ir/ebnf.h"
#include "lexer/cpset.h"
#include "lexer/regex.h"

typedef struct gm_irb {
    gm_ebnf *g;
    gm_status st;         /* first failure */
    gm_error *err;
    uint32_t empty, nothing; /* shared nodes (GM_EX_NONE until first use) */
    uint32_t hexdigit;    /* [0-9a-fA-F] */
    uint32_t hexany[5];   /* [k]: k hex digits of any value */
    gm_intern esc_sets;   /* code point sets (their ranges) whose escapes have a rule */
    GM_VEC(uint32_t) esc_refs; /* [id of a set]: the reference to its escapes' rule */
    uint32_t ascii[128];  /* [c]: the spellings of ASCII character c, made on first use */
    size_t max_nodes;     /* node budget (GM_ERR_LIMIT past it) */
} gm_irb;

void gm_irb_init(gm_irb *b, gm_ebnf *g, size_t max_nodes, gm_error *err);
void gm_irb_free(gm_irb *b);

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
/* The escaped spellings (\X, \uXXXX) of the code points of s: a reference to their rule. */
uint32_t gm_irb_json_escapes(gm_irb *b, const gm_cpset *s);
/* The spellings of one character of any kind (the body of the shared `char` rule). */
uint32_t gm_irb_json_char(gm_irb *b);

#endif
