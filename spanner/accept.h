/*
 * Parser preprocessing (seed paper §5, DESIGN.md §3): for a profile and an
 * LR state s, which classes are accepted on EVERY stack whose top is s
 * (always-accepted, A), which are rejected on every such stack (dropped),
 * and which depend on what lies below s (context-dependent, D).
 *
 * note [always-accepted entries]
 * A class (E, P) is simulated from a stack whose only known elements are
 * its top GM_ANCHOR_STATES states (the seed paper anchors on the top state
 * alone; but right after a shift the next terminal usually reduces and pops
 * that state, so with one state most classes came out context-dependent —
 * two to three states decide most reductions, which are short): if all of
 * E and then some T of P shift without a reduction popping below the known
 * states, it is accepted whatever lies below; if an error comes first,
 * rejected; if a reduction needs states below them, it depends on them.
 * Entries are found by hashing (profile, anchor states): a lexer state's
 * profile has a row of buckets, the suffix profiles of the contextual
 * lexer share one larger row per spanner. An entry keeps
 * the union of the accepted classes' tokens as one token set and the list
 * of context-dependent classes, which the mask walk then checks on the
 * real stack. The indentation layer's state beside the stack matters to
 * line ends: entries are also keyed on its count of open brackets (0, 1, 2,
 * or GM_ACCEPT_PARENS and more), and a line end inside brackets is dropped
 * (implicit line joining), so it decides nothing; outside them, a line end
 * in a sequence reads the width stack, so its class is context-dependent,
 * and a pending one in a Prod set fits where _NEWLINE shifts. Under the
 * contextual lexer, where the lexer changes after an element on the known
 * states, the rests of the class's tokens (and of the classes sharing that
 * prefix) are lexed by the new lexer: their suffix profile's classes are
 * simulated on from there, recursively, and decide the group when they are
 * all decided. Entries are built on first use per
 * (profile, LR state) and published like profiles (no locks); an entry
 * that cannot be allocated is simply not used.
 */
#ifndef GM_SPANNER_ACCEPT_H
#define GM_SPANNER_ACCEPT_H

#include <stdatomic.h>
#include <stdint.h>

#include "spanner/tables.h"
#include "spanner/tokpool.h"

/* States of the stack top an entry is keyed on. */
#define GM_ANCHOR_STATES 4
/*
 * note [deeper anchors]
 * When the entry on GM_ANCHOR_STATES states leaves most of a profile's classes
 * context-dependent (GM_ANCHOR_DEEPEN of them at least, more than it accepts),
 * the mask walk asks for the entry on up to GM_ANCHOR_DEEP top states instead:
 * a reduction that pops more than the four known states is the usual cause
 * (Rust's token trees: after `{ tts }` closes inside a macro's arguments,
 * `delim_tt` pops three states and the tree list's `tts tt` two more, so every
 * next token read below the anchor; rust.lark at llama3 walked ~3,800 classes
 * on the real stack at such steps, 200 us). More known states only decide
 * more classes (a verdict still never assumes what lies below them): masks
 * are unchanged. Deeper entries are keyed by their state count like any
 * other and are built only for such heavy profiles.
 */
#define GM_ANCHOR_DEEP 8
#define GM_ANCHOR_DEEPEN 64
/* Open-bracket counts entries tell apart: 0 .. GM_ACCEPT_PARENS - 1, and that many or more. */
#define GM_ACCEPT_PARENS 3
/* Hash buckets per profile (entry chains), and for all the suffix profiles a spanner
 * walks (thousands of them have entries under Python's contextual lexer, most a few). */
#define GM_ACCEPT_BUCKETS 256
#define GM_ACCEPT_SUFFIX_BUCKETS 4096

typedef struct gm_accept_entry {
    struct gm_accept_entry *next; /* same bucket */
    const gm_profile *profile; /* whose entry (the suffix profiles share their buckets) */
    uint32_t anchor[GM_ANCHOR_DEEP]; /* bottom first; nanchor used */
    uint32_t nanchor;         /* < GM_ANCHOR_STATES: the whole stack (its bottom is state 0) */
    uint32_t parens;          /* the layer's open brackets, at most GM_ACCEPT_PARENS (or more) */
    const gm_tokset *accepted; /* tokens of the always-accepted classes (pooled: note [shared
                                  token sets] in spanner/tokpool.h) */
    uint32_t ndep;
    uint32_t *dep;            /* context-dependent classes, in profile order */
    uint32_t *dep_shared;     /* [ndep] common prefix of dep[i]'s sequence with dep[i-1]'s */
    uint32_t nacc, nrej;      /* class counts, for reports */
} gm_accept_entry;

/*
 * The entry of profile p for a stack whose top states are anchor[0..n)
 * (bottom first) and `open` open brackets of the indentation layer (0
 * without one), built on first use; NULL when it could not be built (out
 * of memory or past the memory limit) — callers then walk all of p's classes.
 */
const gm_accept_entry *gm_accept_entry_get(gm_spanner *sp, const gm_profile *p,
                                           const uint32_t *anchor, uint32_t n, int32_t open);

void gm_accept_free_all(gm_spanner *sp);


#endif
