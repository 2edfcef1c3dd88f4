/*
 * Subset construction of a rule's NFA (fsm_build.c builds the NFA, note
 * [fragments]; fsm_minimize.c minimizes the result): note [subset
 * construction] in fsm_det.c.
 */
#ifndef GM_EARLEY_FSM_DET_H
#define GM_EARLEY_FSM_DET_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "base/mem.h"
#include "base/vec.h"
#include "earley/fsm_minimize.h"

/* An NFA edge: symbols lo..hi from state `from` to state `to`; lo > hi: an epsilon edge. */
typedef struct gm_nfa_edge {
    uint32_t from;
    uint32_t lo, hi;
    uint32_t to;
} gm_nfa_edge;

/* Working memory of gm_fsm_determinize, kept from one NFA to the next. */
typedef struct gm_fsm_det {
    gm_mem *mem;
    uint32_t *eoff;       /* [nn + 1] epsilon edges: eps[eoff[s] ..) */
    uint32_t *eps;
    uint32_t *soff;       /* [nn + 1] symbol edges: sym[soff[s] ..) */
    gm_fsm_edge *sym;
    uint8_t *keep;        /* [nn] kept in DFA states: symbol edges, or accepting */
    uint32_t acc;
    uint32_t *mark;       /* [nn] closure stamp */
    uint32_t stamp;
    uint32_t *single;     /* [nn] DFA state of closure({s}), or UINT32_MAX */
    GM_VEC(uint32_t) eoff_v, soff_v, eps_v, mark_v, single_v;
    GM_VEC(uint8_t) keep_v;
    GM_VEC(gm_fsm_edge) sym_v;
    GM_VEC(uint32_t) set; /* closure being built */
    GM_VEC(uint32_t) stack, members, bucket, targets, off;
    GM_VEC(uint8_t) flags;
    GM_VEC(gm_fsm_edge) cand; /* byte edges of a DFA state's members */
    GM_VEC(uint64_t) big; /* (symbol, target) of their reference and token edges */
    GM_VEC(gm_fsm_edge) out; /* the DFA's edges */
    gm_intern sets;
} gm_fsm_det;

void gm_fsm_det_init(gm_fsm_det *d, gm_mem *m);
void gm_fsm_det_free(gm_fsm_det *d);

/*
 * The DFA of the NFA with nstates states and edges[0..nedges), from state
 * `start`, accepting at state `acc`, into *out (arrays on d's gm_mem):
 * states numbered breadth-first from the start (0), edges by symbol,
 * adjacent ranges to one state merged, flags GM_FS_ACCEPT. Returns 0, -1
 * when out of memory, -2 past max_states states.
 */
int gm_fsm_determinize(gm_fsm_det *d, const gm_nfa_edge *edges, size_t nedges, uint32_t nstates,
                       uint32_t start, uint32_t acc, uint32_t max_states, gm_fsm_dfa *out);

#endif
