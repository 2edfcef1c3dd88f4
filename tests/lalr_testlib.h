/*
 * Helpers of the LALR(1) tests: loading grammars through the front end, an
 * Earley recognizer as an independent reference for the language of a cfg,
 * a slow reference for the LALR(1) tables, random grammars, sentences and
 * walks.
 */
#ifndef GM_TESTS_LALR_TESTLIB_H
#define GM_TESTS_LALR_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parser/cfg.h"
#include "parser/lr.h"

/*
 * The grammar front end (gm_grammar_load) on a text or a file, warnings
 * dropped; fails the test on an error. lt_cfg_try_parse returns NULL
 * instead. Free with lt_cfg_free.
 */
gm_cfg *lt_cfg_parse(gm_mem *m, const char *file, const char *text);
gm_cfg *lt_cfg_try_parse(gm_mem *m, const char *file, const char *text);
gm_cfg *lt_cfg_load_file(gm_mem *m, const char *path);
void lt_cfg_free(gm_cfg *g);

/* Terminal id of a name as the cfg spells it ("NUMBER", "\"+\""); fails the test when absent. */
uint32_t lt_term(const gm_cfg *g, const char *name);

/* Earley recognizer: whether terms[0..n) is a sentence of g. */
bool lt_earley_accepts(const gm_cfg *g, const uint32_t *terms, size_t n);
/* Same encoding as lt_lr_run: the length of the longest prefix of terms that is a prefix of
   a sentence when that is not all of it, else n (a sentence) or n + 1. g must be reduced
   (every nonterminal derives a terminal string). */
size_t lt_earley_run(const gm_cfg *g, const uint32_t *terms, size_t n);

/* A deterministic PRNG (xorshift64*). */
typedef struct lt_rng {
    uint64_t s;
} lt_rng;
uint64_t lt_rand(lt_rng *r);
static inline uint32_t lt_below(lt_rng *r, uint32_t n) { return n ? (uint32_t)(lt_rand(r) % n) : 0; }

/*
 * A random sentence of g by a random derivation that switches to the
 * shortest expansions when `budget` symbols have been produced. Writes at
 * most cap terminals; returns the length, or SIZE_MAX when the sentence did
 * not fit (or g's start derives nothing).
 */
size_t lt_random_sentence(const gm_cfg *g, lt_rng *r, size_t budget, uint32_t *out, size_t cap);

/*
 * A random walk of the tables: from the initial stack, repeatedly feed a
 * random viable terminal; stop (at an accepting point) with probability
 * growing with the length. Returns the length (<= cap) of the sequence.
 */
size_t lt_random_walk(const gm_lr_table *t, gm_mem *m, lt_rng *r, size_t target, uint32_t *out, size_t cap);

/* Feeds seq to the tables from the initial stack: the index of the first rejected terminal,
   n when all were fed and the input is accepted, n + 1 when all were fed but not accepted. */
size_t lt_lr_run(const gm_lr_table *t, gm_mem *m, const uint32_t *seq, size_t n);

/*
 * Text of a random grammar in the reader's format: up to max_terms literal
 * terminals "a", "b", ..., up to max_nonterms rules (start, n1, n2, ...), each
 * with up to max_alts alternatives of up to max_len symbols (some empty).
 * malloc'ed. The grammar may be unreduced: check with lt_cfg_is_reduced.
 */
char *lt_random_grammar_text(lt_rng *r, uint32_t max_terms, uint32_t max_nonterms, uint32_t max_alts,
                             uint32_t max_len);
/* Every nonterminal derives a terminal string and is reachable from the start. */
bool lt_cfg_is_reduced(const gm_cfg *g);

/*
 * Checks tables built in GM_CONFLICTS_BISON mode against a slow reference
 * (note [reference LALR] in lalr_testlib.c): the LR(0) transitions against
 * the kernels, every lookahead, accept, and the kept and dropped actions.
 * At most 64 * 64 terminals. On a difference returns false with why.
 */
bool lt_check_lalr_reference(const gm_cfg *g, const gm_lr_table *t, char *why, size_t cap);

#endif
