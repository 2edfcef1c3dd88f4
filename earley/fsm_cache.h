/*
 * A cache of rule automata across grammar builds (gm_egrammar_build with a
 * cache): tool sets that share tools, grammars that share helper rules,
 * the same grammar compiled again.
 *
 * note [rule automata cache]
 * A rule's automaton is a function of what build_rule reads: its body with
 * the inlined rules expanded (note [rule inlining]), which repetitions are
 * expanded and which are repetition rules, and the limits. fsm_build.c
 * writes exactly that into a key (rule_key), naming the rules the body
 * references and its special tokens by local numbers (first occurrence in
 * the walk), and stores the minimal automaton with those local symbols. A
 * hit maps them to the grammar's own rules and tokens, sorts each state's
 * edges by symbol again and renumbers the states breadth-first: the
 * automaton a fresh build makes, edge for edge. The walk creates the
 * referenced rules in the order the NFA construction would, so rules are
 * numbered as without the cache too.
 *
 * Entries are copied in and out under one mutex (grammars are built from
 * several threads); past max_bytes the cache is emptied before the next
 * entry goes in.
 */
#ifndef GM_EARLEY_FSM_CACHE_H
#define GM_EARLEY_FSM_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/mem.h"
#include "earley/fsm_minimize.h"

typedef struct gm_fcache gm_fcache;

/* One rule automaton, local state numbers, start 0. */
typedef struct gm_fcache_dfa {
    uint32_t nstates;
    uint32_t *off;            /* [nstates + 1] */
    gm_fsm_edge *edges;
    uint8_t *flags;           /* [nstates] */
    uint8_t x_nullable;       /* repetition rules (fsm_build.c) */
} gm_fcache_dfa;

typedef struct gm_fcache_stats {
    uint64_t hits, misses;    /* lookups */
    uint64_t entries;         /* held now */
    uint64_t bytes;           /* held now (keys and automata) */
} gm_fcache_stats;

/* max_bytes 0: 64 MiB. */
gm_status gm_fcache_create(const gm_allocator *al, size_t max_bytes, gm_fcache **out,
                           gm_error *err);
void gm_fcache_destroy(gm_fcache *c);

/*
 * The automaton stored under key[0..nwords), copied into *out with arrays
 * allocated on m: 1 when found, 0 when not, -1 when m is out of memory.
 */
int gm_fcache_get(gm_fcache *c, const uint32_t *key, size_t nwords, gm_mem *m,
                  gm_fcache_dfa *out);
/* Stores a copy of d under key (best effort: nothing happens when out of memory). */
void gm_fcache_put(gm_fcache *c, const uint32_t *key, size_t nwords, const gm_fcache_dfa *d);
void gm_fcache_get_stats(gm_fcache *c, gm_fcache_stats *out);

#endif
