/*
 * The automaton of UNTIL(L, which) (ir/ebnf.h, note [until]): the
 * Aho–Corasick automaton of the strings L, cut at the first occurrence.
 *
 * States are the prefixes of strings of L (the trie), state 0 the empty
 * one. From a state that has not completed a string, byte b goes to the
 * longest suffix of (state . b) that is a prefix of some string (the
 * Aho–Corasick goto/failure function, made total). A state whose string
 * ends with some L[i] is a hit: the first occurrence ended there, so it has
 * no transitions. UNTIL(L, i) accepts at the hits whose string ends with
 * L[i]; UNTIL(L, NONE) at every state that is not a hit.
 */
#ifndef GM_EARLEY_UNTIL_H
#define GM_EARLEY_UNTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/mem.h"
#include "ir/ebnf.h"

#define GM_UNTIL_NONE UINT32_MAX

typedef struct gm_until {
    gm_mem *mem;
    uint32_t nstates;
    uint32_t nstrings;
    uint32_t *next;           /* [nstates * 256]: next state, GM_UNTIL_NONE from a hit */
    bool *hit;                /* [nstates] */
    uint32_t *ends;           /* [nstates * nwords] bit i: the state's string ends with L[i] */
    uint32_t nwords;          /* (nstrings + 31) / 32 */
} gm_until;

/*
 * Builds the automaton of node (a GM_EX_UNTIL node of g). At most
 * max_states states (the total length of the strings + 1): GM_ERR_LIMIT
 * beyond. GM_ERR_GRAMMAR when a string is empty.
 */
gm_status gm_until_build(gm_mem *m, const gm_ebnf *g, uint32_t node, uint32_t max_states,
                         gm_until *out, gm_error *err);
void gm_until_free(gm_until *u);

/* Whether state s accepts for `which` (an index into L, or GM_EX_NONE). */
static inline bool gm_until_accepts(const gm_until *u, uint32_t s, uint32_t which)
{
    if (which == GM_EX_NONE)
        return !u->hit[s];
    return u->hit[s] && ((u->ends[(size_t)s * u->nwords + which / 32] >> (which % 32)) & 1);
}

#endif
