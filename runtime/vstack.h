/*
 * A virtual LR stack: a real persistent stack (borrowed, never modified)
 * with an overlay of states pushed on top and a count of real nodes popped
 * below it. Feeding terminals to it answers "could these be shifted?"
 * without allocating; the overlay lives in a caller's buffer.
 *
 * note [virtual stacks]
 * A reduction first pops overlay entries, then moves `base` down the real
 * stack; pushes go to the overlay. So the real stack is read-only and many
 * virtual stacks (the snapshots of a class walk) can share it.
 */
#ifndef GM_RUNTIME_VSTACK_H
#define GM_RUNTIME_VSTACK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "parser/lr.h"
#include "runtime/indent.h"

typedef struct gm_vstack {
    const gm_lr_node *base;  /* top of the part of the real stack still in place */
    uint32_t *ov;            /* overlay states, bottom first */
    uint32_t n;              /* overlay entries in use */
    uint32_t cap;            /* overlay capacity */
    /* The indentation layer's state, virtual in the same way (note [indentation]). */
    const gm_indent *ibase;  /* real width stack still in place (NULL: just [0]) */
    uint32_t *iov;           /* overlay widths, bottom first */
    uint32_t in;             /* overlay widths in use */
    uint32_t icap;
    int32_t parens;          /* open brackets */
    uint32_t low;            /* the least overlay length reductions reached (0 once they pop
                                the real stack); callers that want it set it to n first */
} gm_vstack;

typedef enum gm_vfeed {
    GM_VFEED_SHIFTED,        /* the terminal was shifted */
    GM_VFEED_REJECTED,       /* a syntax error: not viable */
    GM_VFEED_ACCEPTED,       /* $end reached ACCEPT */
    GM_VFEED_OVERFLOW        /* the overlay is full: answer unknown, caller falls back */
} gm_vfeed;

static inline uint32_t gm_vstack_top(const gm_vstack *vs)
{
    return vs->n ? vs->ov[vs->n - 1] : vs->base->state;
}

/*
 * Feeds one terminal (reductions, then shift or accept). On REJECTED and
 * OVERFLOW the virtual stack is left in an unspecified state. Reduction
 * loops (tables with loop_guard set: Lark-resolved conflicts, or tables
 * read from a file) reject the terminal after the same number of
 * reductions as gm_lr_feed (parser/lr_stack.c, note [reduction loops]).
 */
static inline gm_vfeed gm_vstack_feed(const gm_lr_table *t, gm_vstack *vs, uint32_t term)
{
    /* The stack height gm_lr_feed would see: the real nodes below base plus the overlay. */
    uint64_t budget = t->loop_guard
                          ? (uint64_t)t->loop_guard * ((uint64_t)vs->base->depth + vs->n + 2)
                          : UINT64_MAX;
    for (;;) {
        uint32_t top = gm_vstack_top(vs);
        gm_lr_action a = gm_lr_action_of(t, top, term);
        switch (GM_LR_KIND(a)) {
        case GM_LR_SHIFT:
            if (vs->n == vs->cap)
                return GM_VFEED_OVERFLOW;
            vs->ov[vs->n++] = GM_LR_ARG(a);
            return GM_VFEED_SHIFTED;
        case GM_LR_REDUCE: {
            if (budget-- == 0)
                return GM_VFEED_REJECTED;
            uint32_t p = GM_LR_ARG(a);
            uint32_t len = t->prod_len[p];
            uint32_t from_ov = len < vs->n ? len : vs->n;
            vs->n -= from_ov;
            if (vs->n < vs->low)
                vs->low = vs->n;
            for (len -= from_ov; len; len--)
                vs->base = vs->base->parent;
            uint32_t g = gm_lr_goto_la(t, gm_vstack_top(vs), t->prod_lhs[p], term);
            if (g == UINT32_MAX)
                return GM_VFEED_REJECTED; /* only in tables read from a file */
            if (vs->n == vs->cap)
                return GM_VFEED_OVERFLOW;
            vs->ov[vs->n++] = g;
            break;
        }
        case GM_LR_ACCEPT:
            return GM_VFEED_ACCEPTED;
        default:
            return GM_VFEED_REJECTED;
        }
    }
}

#endif
