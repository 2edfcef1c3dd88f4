/*
 * The rule automata of an Earley grammar (gm_egrammar, engine.h): what
 * gm_egrammar_build makes of the IR (fsm_build.c), what the recognizer
 * (eset.c) and the token-mask cache (maskcache.c) read, what
 * gm_egrammar_write / gm_egrammar_read serialize (fsm_io.c).
 *
 * Every rule is one minimal deterministic automaton over symbols: bytes,
 * rule references and special-token symbols. States of all rules are
 * numbered globally; a rule owns the run [first, first + nstates). Byte
 * transitions are a dense table over byte classes (the coarsest partition
 * of 0..255 that every state respects); references and special tokens are
 * short sorted edge lists. Every state can reach an accepting state (the
 * automata are trimmed) and every rule derives some string, so every
 * Earley item the recognizer keeps can still be completed (the mask cache
 * relies on it: note [token-mask cache] in maskcache.c).
 *
 * note [repetition rules]
 * A bounded repetition x{m,n} with large bounds is not expanded into n
 * copies of x: it becomes a rule of its own whose automaton reads one
 * iteration of x, and whose Earley items carry a counter (iterations
 * done) and a progress bit (the current iteration has read input). The
 * automaton has a fresh start state (GM_FS_REP_START, no incoming edges);
 * at an accepting state of x (GM_FS_ITER_END) an item with progress
 * closes its iteration and goes back to the start with counter + 1; the
 * item completes the rule at the start when counter >= min, and may start
 * another iteration only while counter < max. Empty iterations are never
 * counted (a nullable x makes min 0 instead), so the counter grows only
 * with input. With max unbounded the counter saturates at min.
 */
#ifndef GM_EARLEY_FSM_H
#define GM_EARLEY_FSM_H

#include <stdbool.h>
#include <stdint.h>

#include "earley/engine.h"

#define GM_FSM_NONE UINT32_MAX

/* State flags. */
enum {
    GM_FS_ACCEPT = 1,     /* a normal rule may complete here */
    GM_FS_ITER_END = 2,   /* repetition rule: an iteration of x may end here */
    GM_FS_REP_START = 4,  /* repetition rule: the start (completes when counter >= min) */
    GM_FS_SCANS = 8,      /* has byte transitions */
    GM_FS_WAITS = 16,     /* has reference edges */
    GM_FS_TOKENS = 32,    /* has special-token edges */
};

typedef struct gm_frule {
    uint32_t first;       /* states [first, first + nstates) */
    uint32_t nstates;
    uint32_t start;       /* global id of the start state */
    uint32_t rep_min;     /* repetition rules (note [repetition rules]) */
    uint32_t rep_max;     /* GM_EX_INF: unbounded */
    uint8_t repeat;       /* 1 for a repetition rule */
    uint8_t nullable;
    uint8_t follow_eof;   /* the end of input may follow the rule */
    uint32_t name;        /* offset of its NUL-terminated name in names */
    uint32_t max_tokens;  /* token budget of an occurrence, GM_EX_INF for none (note
                             [token budgets] in ir/ebnf.h; runtime/engine_budget.c) */
    uint32_t capture;     /* offset of its capture label in names, GM_EX_INF for none
                             (note [captures] in earley/capture.c) */
    float temperature;    /* XGrammar's r[temperature=t], < 0 for none (note [rule
                             temperatures] in earley/temperature.c) */
    uint64_t follow[4];   /* bytes that may follow a completion of the rule (a superset) */
} gm_frule;

typedef struct gm_fedge {
    uint32_t sym;         /* reference edges: rule; token edges: special-token symbol */
    uint32_t to;          /* global state */
} gm_fedge;

struct gm_egrammar {
    gm_mem *mem;
    uint32_t nrules;
    uint32_t root;
    gm_frule *rules;
    char *names;          /* rule names, NUL-terminated, back to back */
    uint32_t names_len;
    uint32_t nstates;
    uint32_t *state_rule; /* [nstates] */
    uint8_t *state_flags; /* [nstates] GM_FS_* */
    uint32_t nclasses;    /* byte classes (1..256) */
    uint8_t byte_class[256];
    uint32_t *trans;      /* [nstates * nclasses] target or GM_FSM_NONE */
    uint32_t *ref_off;    /* [nstates + 1] reference edges of s: refs[ref_off[s] ..) by rule */
    gm_fedge *refs;
    uint32_t *tok_off;    /* [nstates + 1] token edges of s: toks[tok_off[s] ..) by symbol */
    gm_fedge *toks;
    uint32_t ntokens;     /* special-token symbols */
    uint32_t *tok_text_off; /* [ntokens + 1] text of symbol i: tok_text[off[i] .. off[i+1]) */
    uint8_t *tok_text;
    uint32_t *pred_off;   /* [nrules + 1] prediction closures (note [prediction closures]) */
    uint32_t *pred;       /* the states predicted with rule r: pred[pred_off[r] ..), sorted */
    uint64_t *hash;       /* [nstates] structural hash of what a state's items can read,
                             at rule start states and reference targets, 0 elsewhere
                             (note [structural hashes] in fsm.c) */
};

static inline uint32_t gm_fsm_next(const gm_egrammar *g, uint32_t s, uint8_t b)
{
    return g->trans[(size_t)s * g->nclasses + g->byte_class[b]];
}

/* The runs of the byte-class map (a state's target is constant on each):
   their first bytes in run[0..n), run[n] = 256; n is the result. */
static inline uint32_t gm_fsm_class_runs(const gm_egrammar *g, uint16_t run[257])
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < 256; b++)
        if (b == 0 || g->byte_class[b] != g->byte_class[b - 1])
            run[n++] = (uint16_t)b;
    run[n] = 256;
    return n;
}

/* The target of s over reference `rule`, or GM_FSM_NONE. */
uint32_t gm_fsm_ref_next(const gm_egrammar *g, uint32_t s, uint32_t rule);

/* Fills the derived fields of a grammar whose automata are set (nullable,
   follow sets, state flags, hashes): fsm_build.c, also used by fsm_io.c. */
gm_status gm_fsm_finish(gm_egrammar *g, gm_error *err);
/* The same, given s's byte transitions as pairs (class, target) at
   pairs[2 * off[s] .. 2 * off[s + 1]), by class (saves scanning g->trans). */
gm_status gm_fsm_finish_sparse(gm_egrammar *g, const uint32_t *off, const uint32_t *pairs,
                               gm_error *err);

/* A rule with a token budget reads bytes only: no references, no special
   tokens, no repetition rule (note [counting regions] in budget.c needs one
   item per occurrence). GM_ERR_UNSUPPORTED naming the rule otherwise. */
gm_status gm_fsm_check_budgets(const gm_egrammar *g, gm_error *err);

#endif
