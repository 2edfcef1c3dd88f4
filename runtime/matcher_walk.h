/*
 * Positions of a matcher's sequence held outside the matcher: a state and
 * whether it ended with EOS. Walks over alternatives (runtime/draft_tree.c)
 * step and fill from them without touching the matcher's own state or
 * history; states are persistent, so a position costs a reference.
 * Implemented in runtime/matcher.c.
 */
#ifndef GM_RUNTIME_MATCHER_WALK_H
#define GM_RUNTIME_MATCHER_WALK_H

#include "gramask.h"
#include "runtime/engine.h"
#include "base/mem.h"

typedef struct gm_mpos {
    gm_mstate s;              /* references owned */
    bool terminated;          /* EOS accepted */
} gm_mpos;

/* Checks m is usable (fn names the caller) and sets *root to its current position. */
gm_status gm_matcher_walk_begin_(gm_matcher *m, const char *fn, gm_mpos *root, gm_error *err);
void gm_matcher_pos_release_(gm_matcher *m, gm_mpos *p);
/* One token from `from`, as gm_matcher_accept_token: GM_ERR_REJECTED / GM_ERR_STATE
   leave *to unset; another failure marks m failed. */
gm_status gm_matcher_pos_step_(gm_matcher *m, const gm_mpos *from, uint32_t token, gm_mpos *to,
                               gm_error *err);
/* Whether the output may end at p (EOS not yet accepted). */
bool gm_matcher_pos_can_end_(const gm_matcher *m, const gm_mpos *p);
/* The mask at p (gm_compiled_mask_words() words): gm_matcher_fill_mask's, all zero after
   EOS (the EOS ids with eos_after_end). */
gm_status gm_matcher_pos_fill_(gm_matcher *m, const gm_mpos *p, uint32_t *mask, gm_error *err);
uint32_t gm_matcher_vocab_size_(const gm_matcher *m);
gm_mem *gm_matcher_mem_(const gm_matcher *m);

#endif
