/*
 * The matcher's side of the post-lexing layers (parser/postlex.h): the
 * indentation width stack as a persistent list (shared between forks and
 * kept in the rollback history like the LR stack), and feeding one element
 * of a class sequence — a terminal, or a completed line end with its width —
 * through the layer to the LR parser, on real or virtual stacks.
 */
#ifndef GM_RUNTIME_LAYER_H
#define GM_RUNTIME_LAYER_H

#include <stdatomic.h>
#include <stdint.h>

#include "gramask.h"
#include "base/mem.h"
#include "runtime/indent.h"

struct gm_spanner;
struct gm_vstack;
struct gm_lr_node;

/*
 * Feeds one class-sequence element (a terminal, or GM_SEQ_LINE[_REL] | w;
 * relative widths add rel_width) to a virtual stack through the layers.
 * Returns a gm_vfeed (runtime/vstack.h).
 */
int gm_layer_vfeed(const struct gm_spanner *sp, struct gm_vstack *vs, uint32_t elem,
                   uint32_t rel_width);
/* Whether a Prod-set element can come next on vs (the pending line end included). */
int gm_layer_vviable(const struct gm_spanner *sp, const struct gm_vstack *vs, uint32_t elem,
                     uint32_t *scratch, uint32_t cap);
/* Feeds what the layers add at end of input (one _DEDENT per open level). */
int gm_layer_vend(const struct gm_spanner *sp, struct gm_vstack *vs);

/*
 * The same on real persistent stacks: *stack and *ls are replaced by new
 * references on success (the old ones released); GM_ERR_REJECTED leaves
 * them as they were; GM_ERR_NOMEM when a node could not be allocated.
 */
gm_status gm_layer_feed(const struct gm_spanner *sp, gm_mem *m, struct gm_lr_node **stack,
                        gm_layer_state *ls, uint32_t elem, uint32_t rel_width);

#endif
