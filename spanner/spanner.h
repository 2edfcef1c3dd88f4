/*
 * The token spanner's entry points: creating it, and the profiles and
 * first-byte filters it builds on first use (profile.c, accept.c build the
 * parts; the notes and the tables are in spanner/tables.h).
 */
#ifndef GM_SPANNER_SPANNER_H
#define GM_SPANNER_SPANNER_H

#include "spanner/tokpool.h"
#include "spanner/tables.h"

/* postlex may be NULL (no layer). All inputs are borrowed and must outlive the spanner. */
gm_status gm_spanner_create(gm_mem *m, const gm_lexer *lexer, const gm_postlex *postlex,
                            const gm_lr_table *lr, const gm_vocab_data *vocab,
                            const gm_trie *trie, gm_spanner **out, gm_error *err);
/*
 * The spanner of lexer lexer_id of the contextual lexer, lexer_of[s] being
 * the lexer of LR state s (runtime/ctx_spanners.h, note [contextual
 * masks]): its profiles keep the tokens its lexer fails on after an element
 * (GM_PROD_SWITCH), its first-byte filters every byte that ends the pending
 * lexeme, and its always-accepted entries follow a class whose lexer
 * changes after an element into its suffix profile (sp->suffixes, set by
 * the caller). Its first-byte filters and always-accepted token sets are
 * kept in pool (note [shared token sets]), which must outlive it.
 */
gm_status gm_spanner_create_contextual(gm_mem *m, const gm_lexer *lexer, const gm_postlex *postlex,
                                       const gm_lr_table *lr, const gm_vocab_data *vocab,
                                       const gm_trie *trie, const uint32_t *lexer_of,
                                       uint32_t lexer_id, gm_tokpool *pool, gm_spanner **out,
                                       gm_error *err);
void gm_spanner_destroy(gm_spanner *sp);

/*
 * The profile of state q (of gm_spanner_profile_state(q)), built on first use. Thread-safe: concurrent
 * first uses may both build it; one copy wins and the other is freed.
 * NULL with err filled when memory runs out or hits the limit.
 */
const gm_profile *gm_spanner_profile(gm_spanner *sp, uint32_t q, gm_error *err);

/* The bitset (nbits bits) of first-byte split filter id, built on first use. */
const uint32_t *gm_spanner_split0(gm_spanner *sp, uint32_t id, gm_error *err);

/* Builds every profile and filter now (eager compilation). */
gm_status gm_spanner_build_all(gm_spanner *sp, gm_error *err);
/* The same, reporting each table built to progress (may be NULL). */
gm_status gm_spanner_build_all_progress(gm_spanner *sp, gm_progress_fn progress, void *ud,
                                        gm_error *err);

/* The same for the slots whose semicolon flag f has bit f set in flags (note [spanner
 * states]), the virtual start states and every filter: the others are built on first use,
 * as in a lazy compile (note [eager flags] in runtime/ctx_spanners.c). */
gm_status gm_spanner_build_flags(gm_spanner *sp, uint32_t flags, gm_progress_fn progress, void *ud,
                                 gm_error *err);

/* Totals over the profiles built so far. */
typedef struct gm_spanner_stats {
    uint32_t profiles;
    uint64_t classes;
    uint64_t class_tokens;
    size_t bytes;
} gm_spanner_stats;
void gm_spanner_stats_get(gm_spanner *sp, gm_spanner_stats *st);

#endif
