/*
 * Byte-level NFAs built from regex ASTs (Thompson's construction, built
 * right to left so no fragment has dangling exits). Code point sets become
 * small deterministic UTF-8 byte automata with shared prefixes and
 * suffixes (note [UTF-8 sets]). A state may carry a tag: the NFA accepts
 * with that tag there (the lexer tags each terminal's final state with the
 * terminal id).
 *
 * Build with gm_nfa_init, gm_nfa_add_regex / gm_nfa_new_state /
 * gm_nfa_add_eps, then gm_nfa_finish, which lays the edges out per state
 * for the determinizer. Every state count is checked against the limit.
 *
 * Epsilon edges keep their order: the first is the path Python's re tries
 * first (alternatives left to right, a greedy loop before its exit, a lazy
 * one after), which the ordered determinizer (lexer/ordered.h) follows. A
 * lookaround of a terminal regex (GM_RX_LOOK, kept under GM_RE_LARK_MATCH)
 * becomes a state with a look id and one epsilon edge: passing it is
 * conditional, and only the ordered determinizer understands it.
 */
#ifndef GM_LEXER_NFA_H
#define GM_LEXER_NFA_H

#include <stdint.h>

#include "gramask.h"
#include "lexer/regex.h"
#include "base/hash.h"
#include "base/mem.h"

#define GM_NFA_NO_TAG UINT32_MAX

typedef struct gm_nfa_edge {
    uint32_t to;
    uint8_t lo, hi;  /* byte range; unused for epsilon edges */
    uint8_t eps;     /* 1 = epsilon edge */
} gm_nfa_edge;

typedef struct gm_nfa_raw_edge {
    uint32_t from;
    gm_nfa_edge e;
} gm_nfa_raw_edge;

typedef struct gm_nfa {
    gm_mem *mem;
    uint32_t nstates;
    uint32_t max_states;   /* gm_limits.max_nfa_states */
    uint32_t *tag;         /* [nstates] GM_NFA_NO_TAG or the tag */
    size_t tag_cap;
    uint32_t *look;        /* [nstates] GM_NFA_NO_TAG or the look id of a lookaround state;
                              NULL while the NFA has none */
    size_t look_cap;
    uint32_t nlooks;       /* look ids handed out so far (gm_nfa_add_regex) */
    gm_nfa_raw_edge *raw;  /* edges in creation order (until gm_nfa_finish) */
    size_t nraw, raw_cap;
    gm_intern cache;       /* edge lists of frozen byte states (note [UTF-8 sets]) */
    uint32_t *cache_state; /* cache id -> state */
    size_t cache_state_cap;
    /* After gm_nfa_finish: */
    uint32_t start;
    uint32_t *off;         /* [nstates + 1] edges of state s: edges[off[s] .. off[s+1]) */
    gm_nfa_edge *edges;    /* byte edges first, then epsilon edges, per state */
    uint32_t *nbyte;       /* [nstates] number of byte edges of each state */
} gm_nfa;

void gm_nfa_init(gm_nfa *nfa, gm_mem *m, const gm_limits *limits);
void gm_nfa_free(gm_nfa *nfa);

/* A new state (GM_NFA_NO_TAG or a tag); UINT32_MAX when the limit or memory ran out (see gm_nfa_fail). */
uint32_t gm_nfa_new_state(gm_nfa *nfa, uint32_t tag);
int gm_nfa_add_eps(gm_nfa *nfa, uint32_t from, uint32_t to);
int gm_nfa_add_range(gm_nfa *nfa, uint32_t from, uint8_t lo, uint8_t hi, uint32_t to);

/*
 * Adds the states of re, leading to `out` when the regex has matched;
 * returns the entry state in *entry. Errors: GM_ERR_LIMIT (states) or
 * GM_ERR_NOMEM, with err filled. The lookarounds of re get look ids
 * nlooks, nlooks + 1, ... in the order of their node ids (nlooks grows by
 * their number): the caller compiles their bodies under the same ids.
 */
gm_status gm_nfa_add_regex(gm_nfa *nfa, const gm_regex *re, uint32_t out, uint32_t *entry,
                           gm_error *err);

/* Freezes the NFA with the given start state. */
gm_status gm_nfa_finish(gm_nfa *nfa, uint32_t start, gm_error *err);

/* The error for a failed gm_nfa_new_state / add_* (limit or memory). */
gm_status gm_nfa_fail(gm_nfa *nfa, gm_error *err);

#endif
