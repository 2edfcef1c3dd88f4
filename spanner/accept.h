/*
 * Parser preprocessing (seed paper §5, DESIGN.md §3): for a profile and an
 * LR state s, which classes are accepted on EVERY stack whose top is s
 * (always-accepted, A), which are rejected on every such stack (dropped),
 * and which depend on what lies below s (context-dependent, D).
 *
 * note [always-accepted entries]
 * A class (E, P) is simulated from a stack whose only known element is s:
 * if all of E and then some T of P shift without a reduction popping s,
 * it is accepted whatever lies below; if an error comes first, rejected;
 * if a reduction needs states below s, it depends on them. An entry keeps
 * the union of the accepted classes' tokens as one token set and the list
 * of context-dependent classes, which the mask walk then checks on the
 * real stack. Classes whose sequences hold a line end of the indentation
 * layer (or whose Prod set holds a pending one) read the layer's state, so
 * they are always context-dependent. Entries are built on first use per
 * (profile, LR state) and published like profiles (no locks); an entry
 * that cannot be allocated is simply not used.
 */
#ifndef GM_SPANNER_ACCEPT_H
#define GM_SPANNER_ACCEPT_H

#include <stdatomic.h>
#include <stdint.h>

#include "spanner/spanner.h"

typedef struct gm_accept_entry {
    gm_tokset accepted;       /* tokens of the always-accepted classes */
    uint32_t ndep;
    uint32_t *dep;            /* context-dependent classes, in profile order */
    uint32_t *dep_shared;     /* [ndep] common prefix of dep[i]'s sequence with dep[i-1]'s */
    uint32_t nacc, nrej;      /* class counts, for reports */
} gm_accept_entry;

/*
 * The entry of profile p at LR state s, built on first use; NULL when it
 * could not be built (out of memory or past the memory limit) — callers
 * then walk all of p's classes.
 */
const gm_accept_entry *gm_accept_entry_get(gm_spanner *sp, const gm_profile *p, uint32_t s);

void gm_accept_free_all(gm_spanner *sp);

#endif
