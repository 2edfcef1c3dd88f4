/*
 * The minimal automaton of a deterministic automaton with partial
 * transitions over symbol ranges: what fsm_build.c makes of a rule's
 * subset construction (note [minimization]).
 */
#ifndef GM_EARLEY_FSM_MINIMIZE_H
#define GM_EARLEY_FSM_MINIMIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/mem.h"
#include "base/vec.h"

typedef struct gm_fsm_edge {
    uint32_t lo, hi, to;      /* symbols lo..hi (inclusive) go to state `to` */
} gm_fsm_edge;

/* An automaton: states 0..nstates-1, start 0; the edges of s are
   edges[off[s] .. off[s + 1]), by symbol, ranges disjoint. */
typedef struct gm_fsm_dfa {
    uint32_t nstates;
    uint32_t *off;            /* [nstates + 1] */
    gm_fsm_edge *edges;
    uint8_t *flags;           /* [nstates] */
} gm_fsm_dfa;

void gm_fsm_dfa_free(gm_mem *m, gm_fsm_dfa *d);

/* Working memory of gm_fsm_minimize, kept from one automaton to the next. */
typedef struct gm_fsm_min {
    gm_mem *mem;
    GM_VEC(uint32_t) pred_off, pred, queue, blk, elems, loc, first, past, mk, stamp;
    GM_VEC(uint32_t) touched, moved, sig, sig_off, grp, gcount, tmp, blocks, slots, num;
    GM_VEC(uint64_t) hash;
    GM_VEC(uint8_t) live;
    GM_VEC(gm_fsm_edge) out_edges;
} gm_fsm_min;

void gm_fsm_min_init(gm_fsm_min *w, gm_mem *m);
void gm_fsm_min_free(gm_fsm_min *w);

/*
 * The minimal automaton of d (left as it is) into *out (arrays allocated
 * on w's gm_mem): the states reachable from the start that can reach a
 * state whose flags meet `accepting`, quotiented by equivalence (flags and
 * languages), numbered breadth-first from the start with edges in symbol
 * order, adjacent ranges to one state merged. 0 states when the start
 * cannot reach acceptance. Returns 0; 1 when d itself is that automaton
 * (minimal, numbered so: gm_fsm_is_bfs), *out untouched; -1 when out of
 * memory.
 */
int gm_fsm_minimize(gm_fsm_min *w, const gm_fsm_dfa *d, uint8_t accepting, gm_fsm_dfa *out);

/* Whether d's states are numbered breadth-first from 0 (edges in order) and no
   two adjacent ranges of a state go to one state. */
bool gm_fsm_is_bfs(const gm_fsm_dfa *d);

#endif
