/*
 * The state equivalence of a deterministic automaton with partial
 * transitions over symbol ranges: the coarsest partition of the states
 * that respects their flags and their transitions (a missing transition
 * differs from every present one). What fsm_build.c quotients a rule's
 * automaton by to make it minimal.
 *
 * Valmari and Lehtinen's refinement ("Efficient minimization of DFAs with
 * partial transition functions", STACS 2008): Hopcroft's "process the
 * smaller half" over blocks of states and cords of transitions, O(m log n)
 * for m transitions over the elementary symbol intervals, whatever the
 * number of rounds Moore's refinement would need (a literal of k bytes
 * takes k rounds there).
 */
#ifndef GM_EARLEY_FSM_MINIMIZE_H
#define GM_EARLEY_FSM_MINIMIZE_H

#include <stdint.h>

#include "base/mem.h"

typedef struct gm_fsm_edge {
    uint32_t lo, hi, to;      /* symbols lo..hi (inclusive) go to state `to` */
} gm_fsm_edge;

/*
 * block[s] (s < n) gets the block of state s, *nblocks their number. The
 * edges of s are edges[off[s] .. off[s + 1]), ranges of one state disjoint.
 * For a trimmed automaton (every state reachable and able to reach an
 * accepting one) two states share a block iff they are equivalent.
 * Returns 0, or -1 when out of memory.
 */
int gm_fsm_partition(gm_mem *m, uint32_t n, const uint32_t *off, const gm_fsm_edge *edges,
                     const uint8_t *flags, uint32_t *block, uint32_t *nblocks);

#endif
