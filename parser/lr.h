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
#include "src/base/mem.h"
#include "src/base/strbuf.h"

/* An action: kind in the low 2 bits, argument (state or production) above. */
typedef uint32_t gm_lr_action;
#define GM_LR_ERROR 0u
#define GM_LR_SHIFT 1u
#define GM_LR_REDUCE 2u
#define GM_LR_ACCEPT 3u
#define GM_LR_KIND(a) ((a) & 3u)
#define GM_LR_ARG(a) ((a) >> 2)

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
} gm_lr_table;

static inline gm_lr_action gm_lr_action_of(const gm_lr_table *t, uint32_t state, uint32_t term)
{
    return t->action[(size_t)state * t->nterms + term];
}

static inline uint32_t gm_lr_goto_of(const gm_lr_table *t, uint32_t state, uint32_t nonterm)
{
    return t->go[(size_t)state * t->nnonterms + nonterm];
}

typedef struct gm_lalr_options {
    gm_conflict_mode conflicts;
    gm_limits limits;        /* max_lr_states; zero fields = defaults */
    gm_warning_fn warn;      /* resolved conflicts (Lark mode) are reported here */
    void *warn_ud;
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

/* Whether the input can end here: $end leads to ACCEPT. */
bool gm_lr_accepts(const gm_lr_table *t, const gm_lr_node *top);

/* Terminals viable at top (including $end as t->eof), as a bitset of nterms bits. */
void gm_lr_expected(const gm_lr_table *t, const gm_lr_node *top, uint64_t *bits);

#endif
