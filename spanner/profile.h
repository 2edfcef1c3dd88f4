/* Building one lexer state's profile (spanner.h, note [token classes]). */
#ifndef GM_SPANNER_PROFILE_H
#define GM_SPANNER_PROFILE_H

#include "spanner/tables.h"

gm_status gm_profile_build(const gm_spanner *sp, uint32_t q, gm_profile **out, gm_error *err);
void gm_profile_destroy(gm_mem *m, gm_profile *p);

/*
 * The classes of the rest of the tokens of classes first..first+count-1 of
 * profile p (of spanner from; their sequences share elements 0..depth)
 * after their element `depth`, lexed by spanner `to` from its
 * no-lexeme state (runtime/ctx_spanners.h, note [contextual masks]): a
 * profile whose items say where each token's rest starts. Tokens `to`
 * fails on without an element are left out; those it fails on after one
 * are in GM_PROD_SWITCH classes. GM_OK with *out NULL when the rests do not
 * start in one state of `to` (the caller answers the tokens another way).
 */
gm_status gm_profile_build_suffixes(const gm_spanner *from, const gm_profile *p, uint32_t first,
                                    uint32_t count, uint32_t depth, const gm_spanner *to,
                                    gm_profile **out, gm_error *err);

/* A cached suffix profile of a class (gm_class.suffixes): a list by (depth, lexer). */
typedef struct gm_suffixes {
    struct gm_suffixes *next;
    uint32_t depth;          /* the element after which ... */
    uint32_t lexer;          /* ... this lexer (the caller's id) takes over */
    gm_profile *p;
} gm_suffixes;
/* Fills the first-byte split fields of p (from its state) — also used by the loader. */
void gm_profile_set_split0(const gm_spanner *sp, gm_profile *p);

#endif
