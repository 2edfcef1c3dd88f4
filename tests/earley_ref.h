/*
 * A slow, independent reference recognizer for the grammar IR
 * (ir/ebnf.h), for tests: brute-force token masks of the Earley engine,
 * acceptance tests of the JSON Schema and TagDispatch builders.
 *
 * It shares no code with the engine. The IR is desugared into plain BNF
 * over byte classes, code point sets and special tokens (repetitions by
 * binary splitting, UNTIL by its Aho-Corasick-like automaton written
 * naively), unproductive symbols are removed, and a textbook Earley
 * recognizer (with Aycock and Horspool's nullable fix) runs over it.
 * A code point set is matched byte by byte: an item may hold the first
 * bytes of a character, and it survives only while some code point of
 * the set starts with those bytes, so the recognizer is exact at the
 * byte level: a prefix is viable iff it is a prefix of some sentence.
 *
 * Input is a sequence of symbols: bytes, and special tokens (GM_EX_TOKEN)
 * given by their text, which only a special token fed with
 * gm_eref_feed_special matches (never the same bytes fed as bytes).
 *
 * The recognizer keeps a committed prefix (one Earley set per symbol);
 * gm_eref_try* extend it without committing. Lookahead assertions
 * (gm_ebnf_rule.lookahead) are not supported (gm_eref_create fails).
 * Memory comes from malloc; running out aborts (test code). Not
 * thread-safe: one gm_eref per thread.
 */
#ifndef GM_TESTS_EARLEY_REF_H
#define GM_TESTS_EARLEY_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ebnf.h"

typedef struct gm_eref gm_eref;

/*
 * A recognizer for g (which must have passed gm_ebnf_check; it is not
 * needed afterwards). GM_ERR_UNSUPPORTED when a reachable rule has a
 * lookahead assertion, GM_ERR_GRAMMAR when the root's language is empty.
 */
gm_status gm_eref_create(const gm_ebnf *g, gm_eref **out, gm_error *err);
void gm_eref_destroy(gm_eref *r);

/*
 * Extends the committed prefix by bytes (or by one special token given by
 * its text). Returns false, leaving the prefix unchanged, when the result
 * is not a prefix of any sentence.
 */
bool gm_eref_feed(gm_eref *r, const void *bytes, size_t len);
bool gm_eref_feed_special(gm_eref *r, const void *text, size_t len);

/* Whether the committed prefix is a sentence of the language. */
bool gm_eref_accepting(const gm_eref *r);

/* The committed prefix's length in symbols; rollback to a shorter one. */
size_t gm_eref_length(const gm_eref *r);
void gm_eref_rollback(gm_eref *r, size_t length);

/*
 * Without committing: whether prefix + ext is a prefix of some sentence
 * (the return value) and whether it is a sentence (*complete, may be NULL).
 */
bool gm_eref_try(gm_eref *r, const void *ext, size_t len, bool *complete);
bool gm_eref_try_special(gm_eref *r, const void *text, size_t len, bool *complete);

/*
 * gm_eref_try for n extensions at once (the tokens of a vocabulary):
 * viable[i] and complete[i] (may be NULL) get 0/1. Extensions are visited
 * in sorted order so that the Earley sets of a common prefix are built
 * once, and a dead prefix skips every extension that starts with it.
 */
void gm_eref_try_all(gm_eref *r, const uint8_t *const *ext, const uint32_t *len, size_t n,
                     uint8_t *viable, uint8_t *complete);

/* Grammar size after desugaring, for messages: nonterminals, productions, items of the last set. */
void gm_eref_stats(const gm_eref *r, size_t *nonterminals, size_t *productions, size_t *items);

#endif
