/*
 * String languages as automata, for what a regex AST alone cannot say:
 * keys that must avoid the listed property names and fall into the right
 * patternProperties region, propertyNames on unlisted keys, a pattern
 * intersected with a length bound, several patterns on one string.
 *
 * note [string automata]
 * The languages are regex ASTs over code points (lexer/regex.h). Their
 * sets cut the code points into classes (intervals no set splits; the
 * surrogates are no class, so every path spells valid text), and one
 * subset construction over the union of their Thompson NFAs gives the
 * product automaton: a state is a set of NFA states, labelled with the bit
 * set of the languages whose final state it holds. A region is a set of
 * labels. Emission (sc_sdfa_emit) writes the strings of a region as an
 * expression over their JSON spellings (note [string encoding] in irb.h):
 * edges are code point sets, a state's self-loop becomes a repetition,
 * states entered from one place only are inlined there, and only states
 * entered from several places or on a longer cycle become rules, so that
 * typical key languages are a single expression.
 */
#ifndef GM_SCHEMA_STRDFA_H
#define GM_SCHEMA_STRDFA_H

#include <stdbool.h>
#include <stdint.h>

#include "lexer/regex.h"
#include "schema/internal.h"

#define SC_SDFA_MAX_PARTS 31     /* languages of one product */
                                 /* product states: gm_schema_options.max_automaton_states */
#define SC_SDFA_MAX_CLASSES 4096 /* code point classes */
#define SC_SDFA_MAX_NFA 200000   /* NFA states of all the languages */

typedef struct sc_sdfa_edge {
    uint32_t lo, hi;         /* classes lo..hi */
    uint32_t to;
} sc_sdfa_edge;

typedef struct sc_sdfa {
    uint32_t nstates;
    uint32_t *label;         /* [nstates]: bit i = language i accepts */
    uint32_t *off;           /* [nstates + 1]: edges of state s: edges[off[s] .. off[s+1]) */
    sc_sdfa_edge *edges;     /* sorted by class; missing classes lead nowhere */
    uint32_t nclasses;
    uint32_t *class_lo, *class_hi; /* [nclasses]: class k = code points class_lo[k] .. class_hi[k] */
} sc_sdfa;

/* One language: node `root` of a regex AST. */
typedef struct sc_lang {
    const gm_regex *re;
    uint32_t root;
} sc_lang;

/*
 * The product of langs[0..n) (n <= SC_SDFA_MAX_PARTS). GM_ERR_LIMIT (in c,
 * with a message naming the limit) past the limits above or past
 * c->opts.max_automaton_states states.
 */
gm_status sc_sdfa_product(sctx *c, const sc_lang *langs, size_t n, sc_sdfa *out);
void sc_sdfa_free(sctx *c, sc_sdfa *a);

/*
 * The JSON spellings of the strings whose path ends in a state whose label
 * l satisfies (l & mask) == want: an expression of c->g (NOTHING when there
 * are none). hint names the rules made.
 */
uint32_t sc_sdfa_emit(sctx *c, const sc_sdfa *a, uint32_t mask, uint32_t want, const char *hint);

/* Regex ASTs of common languages, added to re: a finite set of UTF-8 strings; strings of
   lo..hi code points (hi UINT32_MAX: unbounded). UINT32_MAX when memory ran out. */
uint32_t sc_regex_words(gm_regex *re, const char *const *words, const uint32_t *lens, size_t n);
uint32_t sc_regex_length(gm_regex *re, uint32_t lo, uint32_t hi);

#endif
