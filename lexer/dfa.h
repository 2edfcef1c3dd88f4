/*
 * Byte DFAs between the NFA and the lexer tables: subset construction
 * (determinize.c), minimization (minimize.c: Hopcroft; minimize_ref.c:
 * Moore, the slow reference the tests compare it with), and the quotient
 * both minimizers share (dfa.c), which numbers states canonically so that
 * equal languages give byte-identical tables.
 *
 * A DFA here has a dense table over byte classes, state 0 as the start,
 * GM_LEX_DEAD for missing transitions and one label per state
 * (GM_LEX_NONE = not accepting). Minimization keeps states with different
 * labels apart.
 *
 * note [start state]
 * The lexing transducer reads "state 0" as "no lexeme pending", so no
 * transition may lead back to state 0. With start_apart the determinizer
 * never reuses the start subset for a later state and the minimizers keep
 * the start state in a block of its own. A DFA for a single regex (the
 * `regex` command, the differential tests) does not need this and gets the
 * textbook minimal automaton.
 */
#ifndef GM_LEXER_DFA_H
#define GM_LEXER_DFA_H

#include <stdbool.h>
#include <stdint.h>

#include "gramask.h"
#include "lexer/nfa.h"
#include "lexer/uclass.h"
#include "base/mem.h"

typedef struct gm_dfa {
    gm_mem *mem;
    uint32_t nstates;
    uint32_t nclasses;
    uint8_t byte_class[256];
    uint32_t *next;     /* [nstates * nclasses] target or GM_LEX_DEAD */
    uint32_t *label;    /* [nstates] GM_LEX_NONE or a label */
    /* Subset construction only (NULL otherwise): the NFA tags present in each state. */
    uint32_t *tag_off;  /* [nstates + 1] */
    uint32_t *tags;     /* tags of state s: tags[tag_off[s] .. tag_off[s+1]), ascending */
} gm_dfa;

void gm_dfa_free(gm_dfa *d);

/*
 * Subset construction over byte equivalence classes. Labels are left
 * GM_LEX_NONE; the caller sets them from the tags. GM_ERR_LIMIT past
 * max_states (0 = gm_limits default).
 */
gm_status gm_dfa_determinize(const gm_nfa *nfa, gm_mem *m, uint32_t max_states, bool start_apart,
                             gm_dfa *out, gm_error *err);

/* Hopcroft's algorithm; out is canonical (gm_dfa_quotient). */
gm_status gm_dfa_minimize(const gm_dfa *in, bool start_apart, gm_dfa *out, gm_error *err);

/* Moore's algorithm (simple and slow): the reference for tests. */
gm_status gm_dfa_minimize_ref(const gm_dfa *in, bool start_apart, gm_dfa *out, gm_error *err);

/*
 * The quotient of `in` (plus an implicit sink state numbered in->nstates)
 * by a partition: block[s] for s in 0..nstates (the sink included). Blocks
 * are numbered from 0; the sink's block becomes GM_LEX_DEAD. States are
 * numbered in breadth-first order from the start over ascending bytes, and
 * byte classes are merged when every state treats them alike, so equal
 * languages give identical tables.
 */
gm_status gm_dfa_quotient(const gm_dfa *in, const uint32_t *block, uint32_t nblocks, gm_dfa *out,
                          gm_error *err);

/* Sizes along the way from one regex to its minimal DFA. */
typedef struct gm_regex_stats {
    uint32_t nfa_states;
    uint32_t dfa_states;
    uint32_t min_states;
    uint32_t min_classes;
} gm_regex_stats;

/*
 * One regex (GM_RE_* flags) to its minimal DFA, accepting with label 0
 * (regex_compile.c). uc may be NULL (a private cache is used); stats and
 * dfa (the unminimized DFA, for tests) may be NULL. Errors as
 * gm_regex_parse, plus GM_ERR_LIMIT for NFA/DFA states.
 */
gm_status gm_regex_compile(gm_mem *m, gm_uclass *uc, const char *pattern, size_t len,
                           unsigned flags, const gm_limits *limits, gm_dfa *min, gm_dfa *dfa,
                           gm_regex_stats *stats, gm_error *err);

/* The same from a parsed regex AST (its root); re is not changed. */
gm_status gm_regex_compile_ast(gm_mem *m, const gm_regex *re, const gm_limits *limits, gm_dfa *min,
                               gm_dfa *dfa, gm_regex_stats *stats, gm_error *err);

/* Runs the DFA over text; returns the label reached, or GM_LEX_NONE. */
uint32_t gm_dfa_match(const gm_dfa *d, const uint8_t *text, size_t len);

#endif
