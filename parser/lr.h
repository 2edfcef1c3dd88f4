/*
 * LALR(1) parse tables and the LR runtime over a persistent stack.
 *
 * Terminal indices are those of the gm_cfg, plus `$end` = cfg->nterminals
 * (table->eof). Nonterminal indices here are 0-based (cfg symbol minus
 * cfg->nterminals). Production ids are the cfg's; the augmented production
 * S' -> start is implicit: ACCEPT is the action on $end where it would be
 * reduced.
 *
 * The tables are exact LALR(1): an entry is GM_LR_ERROR wherever LALR(1)
 * has no action (no default reductions that hide errors), because the
 * spanner decides from these entries whether a terminal sequence can
 * continue a stack. Storage may be compressed, but lookups stay O(1).
 */
#ifndef GM_PARSER_LR_H
#define GM_PARSER_LR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "parser/cfg.h"
#include "base/mem.h"
#include "base/strbuf.h"

/* An action: kind in the low 2 bits, argument (state or production) above. */
typedef uint32_t gm_lr_action;
#define GM_LR_ERROR 0u
#define GM_LR_SHIFT 1u
#define GM_LR_REDUCE 2u
#define GM_LR_ACCEPT 3u
#define GM_LR_KIND(a) ((a) & 3u)
#define GM_LR_ARG(a) ((a) >> 2)

/* An LR(0) item: production `prod` (t->nprods for the augmented $accept -> start)
   with the dot before its `dot`-th symbol. */
typedef struct gm_lr_item {
    uint32_t prod;
    uint32_t dot;
} gm_lr_item;

/* A conflict that the construction resolved (GM_CONFLICTS_LARK, GM_CONFLICTS_BISON).
   Shift/reduce when `kept` or `dropped` is a shift (ACCEPT counts as the shift of
   $end), reduce/reduce otherwise. A cell with a shift and n reductions gives n-1
   reduce/reduce records and one shift/reduce record, as Bison counts them. */
typedef struct gm_lr_conflict {
    uint32_t state;
    uint32_t term;           /* lookahead terminal (eof for $end) */
    gm_lr_action kept;       /* the action in the table */
    gm_lr_action dropped;    /* the action it won over */
} gm_lr_conflict;

typedef struct gm_lr_table {
    gm_mem *mem;             /* allocator of the arrays below (owned by the caller) */
    uint32_t nstates;        /* state 0 is the initial state */
    uint32_t nterms;         /* cfg terminals + 1 ($end) */
    uint32_t eof;            /* index of $end = nterms - 1 */
    uint32_t nnonterms;
    uint32_t nprods;
    uint32_t *prod_lhs;      /* [nprods] 0-based nonterminal */
    uint32_t *prod_len;      /* [nprods] right-hand-side length */
    gm_lr_action *action;    /* [nstates * nterms] */
    uint32_t *go;            /* [nstates * nnonterms] goto state, or UINT32_MAX */
    uint32_t *accessing;     /* [nstates] the symbol shifted to enter the state (cfg symbol id;
                                UINT32_MAX for state 0) */
    uint32_t start;          /* 0-based start nonterminal */
    uint32_t accept_state;   /* the state reached by the start symbol: ACCEPT on $end */
    uint32_t *kernel_off;    /* [nstates + 1] kernel items of state s are */
    gm_lr_item *kernel;      /*   kernel[kernel_off[s] .. kernel_off[s + 1]) (reports, diagnostics) */
    gm_lr_conflict *conflicts; /* [nconflicts] resolved conflicts, by state then terminal */
    uint32_t nconflicts;
    uint32_t loop_guard;     /* 0 when reductions always terminate (no conflict was resolved);
                                else the runtime rejects a terminal after more than
                                loop_guard * (stack depth + 2) reductions (note [reduction loops]) */
    uint32_t *unit_row;      /* [nstates * nnonterms] note [unit chains]: the row of unit_go
                                for the goto cell, or UINT32_MAX (then go[] alone); NULL: none */
    uint32_t nunit_rows;
    uint32_t *unit_go;       /* [nunit_rows * nterms] */
} gm_lr_table;

static inline gm_lr_action gm_lr_action_of(const gm_lr_table *t, uint32_t state, uint32_t term)
{
    return t->action[(size_t)state * t->nterms + term];
}

static inline uint32_t gm_lr_goto_of(const gm_lr_table *t, uint32_t state, uint32_t nonterm)
{
    return t->go[(size_t)state * t->nnonterms + nonterm];
}

/*
 * note [unit chains]
 * A grammar written for Lark reduces through long chains of unit rules
 * (test: or_test, or_test: and_test, ... down to atom): after each, the
 * state the goto enters only reduces again by a rule of one symbol, which
 * pops that very state. Such a reduction is fixed by the state below and
 * the lookahead, so it is precomputed: for a goto cell (state p,
 * nonterminal A) whose target has a unit reduction, unit_go gives per
 * lookahead the state reached once every unit reduction it implies is done
 * (goto(p, B) for the last B of the chain). The stack and every answer are
 * the same as reducing one by one; the runtime skips the intermediate
 * pushes and lookups. A chain that comes back to a nonterminal (a cycle,
 * possible only with resolved conflicts) keeps the plain goto there, so the
 * reduction-loop guard still sees it.
 */

/* The goto of (state, nonterm) and the unit reductions lookahead term then implies. */
static inline uint32_t gm_lr_goto_la(const gm_lr_table *t, uint32_t state, uint32_t nonterm,
                                     uint32_t term)
{
    size_t cell = (size_t)state * t->nnonterms + nonterm;
    uint32_t r = t->unit_row ? t->unit_row[cell] : UINT32_MAX;
    return r == UINT32_MAX ? t->go[cell] : t->unit_go[(size_t)r * t->nterms + term];
}

/*
 * Whether unit_row and unit_go (read from a compiled file) are what
 * gm_lr_unit_chains makes of action and go, recomputed cell by cell without
 * a second table: GM_OK; GM_ERR_FORMAT with *why (err untouched);
 * GM_ERR_NOMEM (err filled). unit_row must be set.
 */
gm_status gm_lr_unit_chains_check(const gm_lr_table *t, const char **why, gm_error *err);

/* Fills unit_row and unit_go from action and go (note [unit chains]). */
gm_status gm_lr_unit_chains(gm_lr_table *t, gm_error *err);

typedef struct gm_lalr_options {
    gm_conflict_mode conflicts;
    gm_limits limits;        /* max_lr_states; zero fields = defaults */
    gm_warning_fn warn;      /* resolved conflicts (Lark mode) are reported here */
    void *warn_ud;
    gm_strbuf *conflict_report; /* when not NULL, receives the full text of every unresolved
                                   conflict (the error message holds as many as fit) */
} gm_lalr_options;

/*
 * Builds the LALR(1) tables of g. In GM_CONFLICTS_ERROR mode a grammar with
 * conflicts fails with GM_ERR_GRAMMAR and a Bison-like report of the first
 * conflicts (state, items, lookahead, the two actions, an example terminal
 * sequence reaching the state) in err.
 */
gm_status gm_lalr_build(gm_mem *m, const gm_cfg *g, const gm_lalr_options *opts,
                        gm_lr_table **out, gm_error *err);
void gm_lr_table_destroy(gm_lr_table *t);

/* The stable text report (terminals, rules, states with items and actions, conflicts). */
gm_status gm_lr_report(const gm_cfg *g, const gm_lr_table *t, gm_strbuf *out, gm_error *err);

/*
 * The persistent stack: immutable nodes shared between stacks (parent
 * pointers), so fork is copying a pointer and rollback is keeping the old
 * top. Reference counts are atomic because forked matchers may run on
 * different threads.
 */
typedef struct gm_lr_node {
    struct gm_lr_node *parent; /* NULL for the bottom node (state 0) */
    uint32_t state;
    uint32_t depth;            /* number of nodes below this one */
    atomic_uint refs;
} gm_lr_node;

/* A new bottom-of-stack node in state 0, with one reference. NULL on allocation failure. */
gm_lr_node *gm_lr_stack_new(gm_mem *m);
void gm_lr_node_retain(gm_lr_node *n);
/* Drops one reference; frees nodes whose count reaches zero (iteratively). NULL is fine. */
void gm_lr_node_release(gm_mem *m, gm_lr_node *n);

/*
 * Feeds one terminal: the reductions it implies, then its shift. On success
 * *out is a new reference to the new top (top itself is unchanged and still
 * owned by the caller). GM_ERR_REJECTED when the terminal is not viable (no
 * allocation happened then), GM_ERR_NOMEM on allocation failure.
 */
gm_status gm_lr_feed(const gm_lr_table *t, gm_mem *m, gm_lr_node *top, uint32_t term,
                     gm_lr_node **out);

/* Maximum overlay depth of the allocation-free checks below. */
#define GM_LR_OVERLAY_MAX 512

/*
 * Whether terms[0..n) can be fed in order to the stack top, without
 * changing it or allocating (an overlay of pushed states on the C stack).
 * A sequence needing more than GM_LR_OVERLAY_MAX overlay entries is
 * reported as not viable only if it truly is not: the check falls back to
 * a slower exact path (never a wrong answer).
 */
bool gm_lr_can_feed(const gm_lr_table *t, const gm_lr_node *top, const uint32_t *terms, size_t n);

/* The exact path gm_lr_can_feed falls back on (note [overlay simulation] in
   parser/lr_stack.c); callable directly so tests compare both paths. */
bool gm_lr_can_feed_segmented(const gm_lr_table *t, const gm_lr_node *top, const uint32_t *terms,
                              size_t n);

/* Whether the input can end here: $end leads to ACCEPT. */
bool gm_lr_accepts(const gm_lr_table *t, const gm_lr_node *top);

/* Terminals viable at top (including $end as t->eof), as a bitset of nterms bits. */
void gm_lr_expected(const gm_lr_table *t, const gm_lr_node *top, uint64_t *bits);

#endif
