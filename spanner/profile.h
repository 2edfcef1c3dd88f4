/* Building one lexer state's profile (spanner.h, note [token classes]). */
#ifndef GM_SPANNER_PROFILE_H
#define GM_SPANNER_PROFILE_H

#include "spanner/tables.h"

gm_status gm_profile_build(const gm_spanner *sp, uint32_t q, gm_profile **out, gm_error *err);
void gm_profile_destroy(gm_mem *m, gm_profile *p);
/* Fills the first-byte split fields of p (from its state) — also used by the loader. */
void gm_profile_set_split0(const gm_spanner *sp, gm_profile *p);

#endif
