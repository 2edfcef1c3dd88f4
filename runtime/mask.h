/*
 * Computing the next-token mask of one matcher state — spanner state, LR
 * stack, layers' state — from the spanner's profiles. Allocation-free
 * except when a profile or filter is built for the first time (lazy
 * compilation) and in the rare overflow path of deeply nested reductions.
 */
#ifndef GM_RUNTIME_MASK_H
#define GM_RUNTIME_MASK_H

#include <stdbool.h>
#include <stdint.h>

#include "parser/lr.h"
#include "runtime/layer.h"
#include "spanner/spanner.h"

/* A matcher state as the mask computation reads it (all borrowed). */
typedef struct gm_mask_state {
    uint32_t q;               /* spanner state */
    const gm_lr_node *stack;
    const gm_layer_state *layer;
    const struct gm_ctx_saved_window *win; /* contextual lexer: the pending window, or NULL */
} gm_mask_state;

/*
 * Writes into mask (GM_MASK_WORDS(sp->nbits) words, zeroed here first) the
 * tokens allowed in state s. EOS ids are not set (the caller decides them
 * with gm_mask_can_end).
 */
gm_status gm_mask_fill(gm_spanner *sp, const gm_mask_state *s, uint32_t *mask, gm_error *err);

/*
 * gm_mask_fill under the contextual lexer (runtime/ctx_spanners.h, note
 * [contextual masks]): s->q is a state of the spanner of the lexer of the
 * stack's top.
 */
struct gm_ctx_spanners;
gm_status gm_mask_fill_ctx(struct gm_ctx_spanners *ctx, const gm_mask_state *s, uint32_t *mask,
                           gm_error *err);
/* gm_mask_pending_viable and gm_mask_can_end under the contextual lexer. */
bool gm_mask_pending_viable_ctx(struct gm_ctx_spanners *ctx, const gm_mask_state *s);
bool gm_mask_can_end_ctx(struct gm_ctx_spanners *ctx, const gm_mask_state *s);

/* Whether the output can end in s: the pending lexeme completes and $end is accepted. */
bool gm_mask_can_end(const gm_spanner *sp, const gm_mask_state *s);

/*
 * Whether the output can end after bytes[0..n) from s (the bytes accepted,
 * then gm_mask_can_end), on a virtual stack (no allocation): 1 yes, 0 no,
 * -1 the overlay overflowed (unknown: step the bytes for real).
 */
int gm_mask_can_end_after(const gm_spanner *sp, const gm_mask_state *s, const uint8_t *bytes,
                          size_t n);

/* Whether the pending lexeme of s can still become something the stack accepts. */
bool gm_mask_pending_viable(const gm_spanner *sp, const gm_mask_state *s);

#endif
