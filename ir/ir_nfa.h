/*
 * Byte automata of IR expressions, for analyses that step a set of states
 * byte by byte: lookahead assertions (earley/lookahead.c) and max_chars on
 * a regular body (ir/ebnf_max_chars_regular.c). An expression's references
 * are expanded in place, so they must not be recursive; special tokens and
 * free text (UNTIL) are not taken. At most GM_IRNFA_MAX_STATES states, so
 * that a set of them is a few words.
 */
#ifndef GM_IR_IR_NFA_H
#define GM_IR_IR_NFA_H

#include <stdbool.h>
#include <stdint.h>

#include "base/mem.h"
#include "ir/ebnf.h"

#define GM_IRNFA_MAX_STATES 256u
#define GM_IRNFA_WORDS (GM_IRNFA_MAX_STATES / 64)

/* Why gm_irnfa_build failed. */
enum {
    GM_IRNFA_OK,
    GM_IRNFA_NOMEM,
    GM_IRNFA_BIG,        /* more than GM_IRNFA_MAX_STATES states */
    GM_IRNFA_RECURSIVE,  /* a rule reached again through itself (bad_rule) */
    GM_IRNFA_TOKEN,      /* a special token */
    GM_IRNFA_UNTIL,      /* free text */
    GM_IRNFA_NESTED,     /* a rule with a lookahead assertion (bad_rule) */
    GM_IRNFA_DEPTH,      /* nested deeper than GM_EBNF_MAX_DEPTH */
};

typedef struct gm_irnfa_set {
    uint64_t w[GM_IRNFA_WORDS];
} gm_irnfa_set;

typedef struct gm_irnfa {
    uint32_t n;           /* states */
    uint32_t final;       /* the accepting state */
    gm_irnfa_set start;   /* the closure of the start state */
    gm_irnfa_set *step;   /* [256 * n]: the closure of the targets of state s over byte b */
    int fail;             /* GM_IRNFA_* when gm_irnfa_build failed */
    uint32_t bad_rule;
} gm_irnfa;

/* The automaton of node's language: 0, or -1 with out->fail (and out->bad_rule) set. */
int gm_irnfa_build(gm_mem *m, const gm_ebnf *g, uint32_t node, gm_irnfa *out);
void gm_irnfa_free(gm_mem *m, gm_irnfa *a);
/* The set reached from s over byte b (closed under epsilon moves). */
gm_irnfa_set gm_irnfa_step(const gm_irnfa *a, const gm_irnfa_set *s, uint8_t b);

static inline bool gm_irnfa_has(const gm_irnfa_set *s, uint32_t i)
{
    return s->w[i >> 6] >> (i & 63) & 1;
}

static inline void gm_irnfa_add(gm_irnfa_set *s, uint32_t i)
{
    s->w[i >> 6] |= (uint64_t)1 << (i & 63);
}

static inline bool gm_irnfa_empty(const gm_irnfa_set *s)
{
    for (uint32_t i = 0; i < GM_IRNFA_WORDS; i++)
        if (s->w[i])
            return false;
    return true;
}

#endif
