/*
 * What the files of the LALR(1) construction share: the grammar as the
 * construction sees it (augmented, with LR(0) items numbered and nullable
 * sets), the LR(0) automaton, and the lookahead sets. Internal to parser/.
 *
 * Items. Production p (0 .. nprods-1 the cfg's, nprods the augmented
 * $accept -> start) with the dot before its d-th symbol is the item
 * item_base[p] + d, so items of one production are consecutive and
 * "advance the dot" is "add one".
 */
#ifndef GM_PARSER_LALR_INTERNAL_H
#define GM_PARSER_LALR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "parser/cfg.h"
#include "parser/lr.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "base/vec.h"

#define GM_NOSYM UINT32_MAX

typedef struct gm_lalr_grammar {
    const gm_cfg *cfg;
    gm_mem *mem;             /* allocator of the arrays below */
    uint32_t nt;             /* cfg terminals ($end not included) */
    uint32_t nn;             /* nonterminals */
    uint32_t nsym;           /* nt + nn */
    uint32_t nprods;         /* cfg productions; the augmented production is number nprods */
    gm_sym aug_rhs;          /* right-hand side of the augmented production: the start symbol */
    uint32_t *plen;          /* [nprods + 1] right-hand-side lengths */
    const gm_sym **prhs;     /* [nprods + 1] right-hand sides */
    uint32_t *by_lhs_off;    /* [nn + 1] productions of nonterminal A (0-based) are */
    uint32_t *by_lhs;        /*   by_lhs[by_lhs_off[A] .. by_lhs_off[A + 1]), ascending */
    uint32_t nitems;
    uint32_t *item_base;     /* [nprods + 2] first item of each production (sentinel at the end) */
    uint32_t *item_prod;     /* [nitems] production of each item */
    uint32_t *item_next;     /* [nitems] cfg symbol after the dot, GM_NOSYM when complete */
    bool *nullable;          /* [nn] derives the empty string */
    uint32_t *nullable_from; /* [nprods + 1] smallest k with rhs[k ..) all nullable */
} gm_lalr_grammar;

/* Checks g (API misuse is GM_ERR_ARGUMENT) and derives the arrays above. */
gm_status gm_lalr_grammar_init(gm_mem *m, const gm_cfg *g, gm_lalr_grammar *G, gm_error *err);
void gm_lalr_grammar_free(gm_lalr_grammar *G);

static inline uint32_t gm_lalr_item_dot(const gm_lalr_grammar *G, uint32_t item)
{
    return item - G->item_base[G->item_prod[item]];
}

/* The LR(0) automaton. States are numbered in discovery order (breadth first,
   transitions of a state in ascending symbol order), which is deterministic
   and is the numbering of the tables and reports. */
typedef struct gm_lr0 {
    gm_mem *mem;
    uint32_t nstates;
    gm_intern kernels;       /* state s's kernel items (sorted uint32) are key s */
    uint32_t *trans_off;     /* [nstates + 1] transitions of s, ascending by symbol: */
    uint32_t *trans_sym;     /*   cfg symbol */
    uint32_t *trans_to;      /*   target state */
    uint32_t *red_off;       /* [nstates + 1] completed productions of s (augmented one */
    uint32_t *red_prod;      /*   excluded), ascending */
    uint32_t accept_state;   /* the state holding $accept -> start . */
} gm_lr0;

/* Builds the automaton; GM_ERR_LIMIT past max_states. */
gm_status gm_lr0_build(const gm_lalr_grammar *G, uint32_t max_states, gm_lr0 *A, gm_error *err);
void gm_lr0_free(gm_lr0 *A);

static inline const uint32_t *gm_lr0_kernel(const gm_lr0 *A, uint32_t s, uint32_t *n)
{
    size_t len;
    const void *k = gm_intern_key(&A->kernels, s, &len);
    *n = (uint32_t)(len / sizeof(uint32_t));
    return k;
}

/*
 * LALR(1) lookaheads of every reduction of A: for reduction r (an index
 * into A->red_prod), the terminals (cfg terminals, $end = G->nt) on which
 * it applies, as a bitset of *words 64-bit words at *la + r * *words
 * (allocated from G->mem).
 */
gm_status gm_lalr_lookaheads(const gm_lalr_grammar *G, const gm_lr0 *A, uint64_t **la,
                             uint32_t *words, gm_error *err);

/* One (state, lookahead) cell with more than one action, before resolution. */
typedef struct gm_lalr_cell {
    uint32_t state;
    uint32_t term;
    uint32_t shift;          /* shift/accept action, or GM_LR_ERROR */
    uint32_t nred;
    const uint32_t *reds;    /* productions reduced on term, ascending */
} gm_lalr_cell;

/* The working state of the conflict handling (parser/lr_conflicts.c). */
typedef struct gm_lalr_conflicts {
    const gm_lalr_grammar *G;
    const gm_lr0 *A;
    const gm_lalr_options *opts;
    GM_VEC(gm_lr_conflict) resolved; /* in a resolving mode */
    gm_strbuf text;          /* reports of unresolvable conflicts */
    uint32_t nerrors_sr, nerrors_rr; /* unresolvable conflicts by kind */
    GM_VEC(size_t) cells;    /* offset in text of each unresolved cell's report */
    uint32_t *dist;          /* lazily: shortest example length to each state */
    uint32_t *pred_state, *pred_sym;
    uint32_t *minlen, *minprod; /* shortest terminal string of each nonterminal */
    bool failed;             /* allocation failure while reporting */
} gm_lalr_conflicts;

void gm_lalr_conflicts_init(gm_lalr_conflicts *c, const gm_lalr_grammar *G, const gm_lr0 *A,
                            const gm_lalr_options *opts);
void gm_lalr_conflicts_free(gm_lalr_conflicts *c);
/*
 * Decides a cell with several actions: returns the action to keep (resolving
 * modes, after warning through opts->warn) or GM_LR_ERROR after recording an
 * unresolvable conflict in c->text.
 */
gm_lr_action gm_lalr_conflict_cell(gm_lalr_conflicts *c, const gm_lalr_cell *cell);
/* The final error for unresolved conflicts (GM_ERR_GRAMMAR, or the allocation failure). */
gm_status gm_lalr_conflicts_error(gm_lalr_conflicts *c, gm_error *err);

/* Text helpers shared by conflict messages and reports. */
void gm_lalr_put_symbol(gm_strbuf *b, const gm_cfg *g, uint32_t sym);
void gm_lalr_put_term(gm_strbuf *b, const gm_cfg *g, uint32_t term);
void gm_lalr_put_item(gm_strbuf *b, const gm_cfg *g, uint32_t prod, uint32_t dot);
void gm_lalr_put_rule(gm_strbuf *b, const gm_cfg *g, uint32_t prod);

#endif
