/*
 * Inside the Earley engine: the objects of engine.h as the recognizer
 * (eset.c), the token-mask cache (maskcache.c), the cross-grammar cache
 * (xcache.c) and the API glue (engine_api.c) share them.
 *
 * note [hash-consed Earley sets]
 * An Earley set is an immutable object: its items (automaton state,
 * repetition counter, origin) where an origin is a pointer to the set the
 * item's rule started in (NULL: this set itself), plus flags. Sets are
 * hash-consed: two sets with the same items and the same origin objects
 * are one object. The set after reading a symbol is then a function of
 * the set object alone, so (set, symbol) -> next set is cached, and masks
 * are memoized per set object: inside a JSON string the set after every
 * plain character is the same object, and the second object of an array
 * of objects reuses the sets of the first from its second element on.
 * Positions never appear: origins are objects, not indices.
 *
 * References go from newer sets to older ones (an origin exists before the
 * items naming it), so reference counts free everything (no cycles). The
 * hash-cons table and the transition cache hold one reference to each set
 * they contain; past their memory budget both are emptied (sets in use
 * live on through their own references; later equal sets are new objects,
 * which is correct, only less shared).
 *
 * note [earley pruning]
 * (ZapFormat, "Earley-Driven Dynamic Pruning".) An item whose state has no
 * outgoing edge has done all it can once its completion is processed: it
 * is dropped. And an origin is only ever asked for its items that wait on
 * a rule (completion), so items name as origin the *projection* of a set
 * onto its waiting items, itself a hash-consed set: two sets that differ
 * only in items that scan give equal origins, and what is built on them is
 * shared. GM_EVARIANT_NO_PRUNING keeps both out.
 *
 * Threads: the tables, the scratch-free parts of stepping and the mask
 * cache's lazy entries are guarded by one mutex per engine; a set's mask
 * memo is published with a compare-and-swap and read without the lock.
 */
#ifndef GM_EARLEY_EENGINE_H
#define GM_EARLEY_EENGINE_H

#include <pthread.h>
#include <stdatomic.h>

#include "earley/engine.h"
#include "earley/fsm.h"
#include "base/vec.h"

typedef struct gm_eitem {
    uint32_t state;
    uint32_t count;       /* repetition rules: counter << 1 | progress bit; else 0 */
    gm_estate *origin;    /* NULL: the set holding the item */
} gm_eitem;

typedef struct gm_ewait {
    uint32_t rule;        /* an item waits on this rule... */
    uint32_t item;        /* ...at this index */
} gm_ewait;

/* gm_estate.flags */
enum {
    GM_ES_ACCEPTING = 1,  /* the root completed from the start: EOS allowed */
    GM_ES_ESCAPED = 2,    /* a rule started at the mask cache's outer set completed */
    GM_ES_START = 4,      /* the start set, or its projection */
    GM_ES_OUTER = 8,      /* the outer set of the mask cache (no items) */
};

/* What completing a rule at an origin set adds (note [completion memos] in eset.c). */
typedef struct gm_ecomp {
    uint32_t rule;
    uint32_t n;
    uint8_t flags;        /* GM_ES_ACCEPTING, GM_ES_ESCAPED */
    gm_eitem *items;
} gm_ecomp;

/* A set's token mask, memoized by the mask cache (maskcache.c) in one of its
   three forms; the set owns it and frees it with itself (eset.c). */
typedef struct gm_ememo {
    uint8_t form;
    uint32_t n;
    uint32_t v[];
} gm_ememo;

struct gm_estate {
    atomic_uint refs;
    uint32_t nitems;
    uint32_t nwait;
    uint8_t flags;        /* GM_ES_* */
    uint8_t interned;     /* in the hash-cons table (under the lock): only then may it
                             cache transitions; cleared for good when the tables empty */
    uint8_t u8loop;       /* 0 not known, 1 no, 2 a UTF-8 loop, 3 a counted one (notes
                             [utf-8 loops], [counted loops] in closed.c; under the lock) */
    uint64_t hash;
    _Atomic(gm_estate *) proj;   /* projection onto waiting items (note [earley pruning]) */
    _Atomic(void *) memo;        /* mask memo (maskcache.c) */
    uint64_t loops[4];    /* bytes known to lead back to this set, bytes known to lead */
    uint64_t shifts[4];   /* to it with counters moved on (note [counted loops] in */
    uint64_t noloop[4];   /* closed.c), bytes known to do neither (under the lock) */
    uint32_t slack;       /* iterations every item of a bounded repetition may still
                             start (note [counted loops]); UINT32_MAX: no such item */
    gm_ecomp *comp;       /* completion memos, under the lock */
    uint32_t ncomp, comp_cap;
    gm_estate **next;     /* interned sets: the set after each byte class, NULL = not
                             known yet, the engine's outer set = dead (note
                             [transition arrays] in eset.c; under the lock) */
    gm_eitem *items;      /* sorted by state, count, origin */
    gm_ewait *wait;       /* sorted by rule */
};

typedef struct gm_etrans {
    gm_estate *from;      /* NULL = empty slot */
    uint32_t sym;         /* byte, or 256 + special-token symbol */
    gm_estate *to;        /* NULL = dead */
} gm_etrans;

typedef struct gm_ementry gm_ementry;
typedef GM_VEC(uint32_t) gm_u32vec;
typedef struct gm_exunits gm_exunits;

/* What lies below each node of a vocabulary trie (closed.c). */
typedef struct gm_tbelow {
    uint64_t *bytes;      /* [nodes][4] the bytes of the strings strictly below the node */
    uint8_t *utf8;        /* [nodes] bit q: every string below, read from state q of the
                             UTF-8 automaton, is a well-formed UTF-8 prefix */
    uint16_t *deep;       /* [nodes] the length of the longest token at or below the
                             node (saturated) */
    uint32_t node1[256];  /* the node of the one-byte string b, or UINT32_MAX */
} gm_tbelow;
gm_tbelow *gm_tbelow_create(gm_mem *m, const gm_trie *t);   /* NULL: out of memory */
void gm_tbelow_destroy(gm_mem *m, gm_tbelow *b);

/* What a walk from a UTF-8 loop does inside it (closed.c, note [string
   interiors]): per vocabulary and set of ASCII loop bytes. */
enum { GM_EINT_STATES = 8, GM_EINT_GROUPS = GM_EINT_STATES << 8 };
typedef struct gm_eint_group {
    uint8_t q, byte;          /* the parent's UTF-8 state, the byte that leaves */
    uint32_t first, n;        /* its nodes: front[first .. first + n) */
} gm_eint_group;
typedef struct gm_einterior {
    uint64_t loops[2];        /* the ASCII bytes that lead from the loop back to it */
    uint32_t *acc;            /* [words] the tokens whose path stays inside */
    gm_eint_group *groups;    /* in (q, byte) order */
    uint32_t ngroups;
    uint32_t *front;          /* the frontier's nodes, by group, ascending in each */
    uint32_t nfront;
    size_t bytes;
} gm_einterior;
gm_einterior *gm_einterior_create(gm_mem *m, const gm_trie *t, uint32_t words,
                                  const uint64_t loops[2]); /* NULL: out of memory */
void gm_einterior_destroy(gm_mem *m, gm_einterior *x);

struct gm_eengine {
    gm_mem *mem;
    const gm_egrammar *g;
    const gm_vocab_data *v;
    const gm_trie *t;
    gm_excache *x;
    uint32_t variant;
    gm_limits lim;
    uint32_t max_items;   /* Earley items in one set */
    pthread_mutex_t lock;
    /* Hash-cons table (note [hash-consed Earley sets]). */
    gm_estate **sets;
    size_t sets_slots, sets_n;
    /* Transition cache. */
    gm_etrans *tc;
    size_t tc_slots, tc_n;
    size_t table_bytes;   /* memory of the sets the tables hold */
    size_t table_budget;
    gm_estate *start, *outer;
    /* Special-token symbols -> vocabulary ids. */
    uint32_t *sym_off;    /* [ntokens + 1] */
    uint32_t *sym_ids;
    bool any_ids;         /* some symbol is a token id set (ir/ebnf.h note [token id sets]) */
    /* Token-mask cache (maskcache.c). */
    uint32_t T;           /* counter classes (note [repetition classes]) */
    uint32_t words;       /* 32-bit words of a mask */
    const gm_tbelow *below; /* what lies below each trie node (note [closed subtrees]):
                             the cross-grammar cache's, or own_below; NULL until needed */
    uint64_t *class_bytes;          /* [classes][4] the bytes of each byte class */
    gm_tbelow *own_below;
    _Atomic(gm_ementry *) *entry;   /* [states] entries of items without counters */
    gm_ementry **rep_entries;       /* hash table of repetition entries */
    size_t rep_slots, rep_n;
    gm_exunits *units;              /* components of the rule graph (xkey.c), or NULL */
    uint32_t *unit;                 /* [rules] cross-grammar unit (xkey.c, note [unit keys]) */
    uint32_t *unit_num;             /* [states] the state's number in its unit */
    uint32_t *krange_at;            /* [states] where a state's byte ranges of one target
                                       start in kranges (UINT32_MAX: not made yet) */
    uint32_t *krange_n;             /* [states] how many (keys, xkey.c) */
    GM_VEC(uint32_t) kranges;       /* (lo << 8 | hi, target) pairs */
    uint16_t krun[257];             /* the runs of the byte-class map (first bytes) */
    uint32_t nkruns;
    atomic_size_t memo_bytes, cache_bytes;
    size_t memo_budget;
    atomic_uint nentries, ncross, nderived, ninterior;
    atomic_ullong nuncertain;
};

struct gm_escratch {
    GM_VEC(gm_eitem) items;
    GM_VEC(uint8_t) done; /* [items] completion already taken from a memo */
    GM_VEC(gm_eitem) citems; /* a completion memo being built */
    uint64_t *slots;      /* dedup of items: generation << 32 | (index + 1) */
    uint32_t slot_mask;
    uint32_t gen;
    uint32_t *predicted;  /* [rules] gen when the rule's prediction closure was added */
    uint8_t flags;
    uint64_t work;        /* items added or found again since the operation began */
    uint64_t work_max;    /* its budget (gm_limits.max_earley_work); 0 = none (eager builds) */
    /* Mask walks (maskcache.c). */
    gm_estate **stack;    /* [max trie depth + 1] */
    uint8_t *unc;
    uint32_t *bits;       /* [words] */
    gm_u32vec nodes;          /* uncertain trie nodes of a mask being filled */
    gm_u32vec merged;         /* nodes merged from the seeds' ascending lists */
    GM_VEC(uint32_t) enodes;  /* uncertain trie nodes of an entry being built */
    GM_VEC(uint32_t) rnodes;  /* its raw-uncertain nodes (note [cross-grammar hashing]) */
    GM_VEC(uint32_t) key;     /* its structural key */
    bool deriving;            /* building a sibling's entry (note [sibling entries]) */
    uint32_t *knum;           /* [states] key numbering (GM_FSM_NONE = not seen) */
    uint32_t *krule;          /* [rules] */
    uint32_t *kqueue;         /* [states] */
};

/* The cross-grammar cache (xcache.c, note [cross-grammar hashing]). */
typedef struct gm_xentry gm_xentry;
typedef struct gm_xhit {
    gm_xentry *entry;
    uint8_t form;             /* accepted tokens: FORM_* of maskcache.c */
    uint32_t nacc;
    const uint32_t *acc;
    uint32_t nraw;
    const uint32_t *raw;      /* raw-uncertain trie nodes */
    bool perfect;             /* the follow set was there: unc is valid */
    uint32_t nunc;
    const uint32_t *unc;
} gm_xhit;
bool gm_excache_fits(const gm_excache *x, const gm_vocab_data *v, const gm_trie *t);
/* The number (> 0) of the unit serialized as ser[0..n) (note [unit keys] in
   xkey.c): equal serializations, equal numbers. 0 when out of memory or past
   the cache's budget. */
uint32_t gm_excache_unit(gm_excache *x, const uint32_t *ser, uint32_t n);
/* The key of the entry (state, counter class of ekey) in w->key; empty when
   the entry is not shared (xkey.c). The engine's lock is held. */
gm_status gm_exkey(gm_eengine *e, gm_escratch *w, uint32_t state, uint64_t ekey, gm_error *err);
void gm_exkey_fini(gm_eengine *e);
/* What lies below each trie node (computed on first use), or NULL. */
const gm_tbelow *gm_excache_below(gm_excache *x);
/* The interior of the ASCII loop bytes `loops` (built on first use), or NULL
   (out of memory, or past the cache's number of interiors). */
const gm_einterior *gm_excache_interior(gm_excache *x, const uint64_t loops[2]);
/*
 * Whether x is a UTF-8 loop without counters (note [string interiors]):
 * *is, and in sigma[q] the set x is in after the first bytes of a
 * character that leave the UTF-8 automaton in state q (sigma[0] = x). Its
 * interior is then the cross-grammar cache's of x->loops
 * (gm_excache_interior, which builds it with closed.c below the cache).
 * The engine's lock is held.
 */
gm_status gm_einterior_of(gm_eengine *e, gm_escratch *w, gm_estate *x, bool *is,
                          gm_estate *sigma[GM_EINT_STATES], gm_error *err);
/*
 * Whether every token below trie node `node` (one with children) is
 * accepted from the interned set x because the walk cannot leave x's
 * closed loop (closed.c, note [closed subtrees] in maskcache.c): *closed.
 * The engine's lock is held.
 */
gm_status gm_eclosed_below(gm_eengine *e, gm_escratch *w, gm_estate *x, const gm_tbelow *tb,
                           uint32_t node, bool *closed, gm_error *err);
bool gm_excache_lookup(gm_excache *x, const uint32_t *key, uint32_t klen, const uint64_t follow[4],
                       gm_xhit *hit);
/* Publishes an entry (or finds the one another engine published), with its
   uncertain nodes for `follow`; fills *hit with the cache's copies. -1 when
   out of memory or past the cache's budget (the caller keeps its own). */
int gm_excache_put(gm_excache *x, const uint32_t *key, uint32_t klen, uint8_t form,
                   const uint32_t *acc, uint32_t nacc_words, uint32_t nacc, const uint32_t *raw,
                   uint32_t nraw, const uint64_t follow[4], const uint32_t *unc, uint32_t nunc,
                   gm_xhit *hit);
int gm_excache_add_follow(gm_excache *x, gm_xentry *xe, const uint64_t follow[4],
                          const uint32_t *unc, uint32_t nunc, const uint32_t **stored);

/* The interned set of s's items less those i with drop[i] (note [token budgets]
   in ir/ebnf.h), flags kept: a new reference. The engine's lock is held. */
gm_status gm_eset_without(gm_eengine *e, const gm_estate *s, const uint8_t *drop, gm_estate **out,
                          gm_error *err);
/* Stepping (eset.c). The engine's lock is held by the caller. */
gm_status gm_eset_init(gm_eengine *e, gm_error *err);
void gm_eset_fini(gm_eengine *e);
/*
 * The set after s reads sym (a byte, or 256 + special-token symbol): a new
 * reference in *out, NULL when no item can read it (GM_OK). Errors:
 * GM_ERR_NOMEM, GM_ERR_LIMIT.
 */
gm_status gm_eset_step(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t sym,
                       gm_estate **out, gm_error *err);
/*
 * note [token reading]
 * The set after s reads one token that more than one way may take: over
 * every special-token symbol of syms[0..nsyms) (sorted; a token id set may
 * hold an ordinary token, ir/ebnf.h note [token id sets]), united with
 * `also` (may be NULL): the set that reading the token's bytes from s gave.
 * Both readings end at the same place of the output, so the union of their
 * items is the Earley set of that place. Not cached (rare: only grammars
 * with token id sets read a token two ways). NULL when nothing reads it.
 */
gm_status gm_eset_step_syms(gm_eengine *e, gm_escratch *w, gm_estate *s, const uint32_t *syms,
                            size_t nsyms, gm_estate *also, gm_estate **out, gm_error *err);
/* The transition of s over byte b when s has it cached: *out as
   gm_eset_step_borrowed gives it (the walks' fast path, inline). */
static inline bool gm_eset_cached(const gm_eengine *e, const gm_estate *s, uint8_t b,
                                  gm_estate **out)
{
    if (!s->next)
        return false;
    gm_estate *t = s->next[e->g->byte_class[b]];
    if (!t)
        return false;
    *out = t == e->outer ? NULL : t;
    return true;
}

/*
 * The same, for the walks of the mask cache when the state cache is on: a
 * borrowed pointer to an interned set, valid until gm_eset_maintain (which
 * the top-level operations call first, under the lock, to empty tables
 * past their budget).
 */
gm_status gm_eset_step_borrowed(gm_eengine *e, gm_escratch *w, gm_estate *s, uint8_t b,
                                gm_estate **out, gm_error *err);
/* Begins a top-level operation with w: empties the tables past their budget and
   gives w a fresh work budget (gm_limits.max_earley_work). */
void gm_eset_maintain(gm_eengine *e, gm_escratch *w);
/* The set holding item (state, count) with origin `origin` and its closure
   (the mask cache's walks start from one with the outer set as origin). */
gm_status gm_eset_seed(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                       gm_estate *origin, gm_estate **out, gm_error *err);
void gm_eset_free(gm_eengine *e, gm_estate *s);
gm_status gm_escratch_init_items(gm_eengine *e, gm_escratch *w, gm_error *err);

/* Token masks (maskcache.c). */
gm_status gm_emask_init(gm_eengine *e, gm_error *err);
void gm_emask_fini(gm_eengine *e);
gm_status gm_emask_fill(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t *mask,
                        gm_error *err);
gm_status gm_emask_build_all(gm_eengine *e, gm_escratch *w, gm_error *err);
/* The memo of s expanded into mask, if there is one (no lock needed). */
bool gm_emask_memo(gm_eengine *e, gm_estate *s, uint32_t *mask);

/*
 * An item at the start of a repetition rule whose counter has reached the
 * maximum: it may complete the rule (in the set it is made in) and do
 * nothing else. No byte, token or reference may start another iteration:
 * a reference first in the iteration (JSON Schema's whitespace rule
 * before an array's ',') started one past the maximum.
 */
static inline bool gm_eitem_rep_full(const gm_egrammar *g, const gm_eitem *it)
{
    const gm_frule *fr = &g->rules[g->state_rule[it->state]];
    return (g->state_flags[it->state] & GM_FS_REP_START) && fr->rep_max != GM_EX_INF &&
           (it->count >> 1) >= fr->rep_max;
}

/*
 * Whether `it` completes a rule that has a capture label: such items stay
 * in their set even when they can do nothing more (note [captures] in
 * earley/capture.c).
 */
static inline bool gm_eitem_captured(const gm_egrammar *g, const gm_eitem *it)
{
    const gm_frule *fr = &g->rules[g->state_rule[it->state]];
    if (fr->capture == GM_EX_INF)
        return false;
    if (fr->repeat)
        return (g->state_flags[it->state] & GM_FS_REP_START) && (it->count >> 1) >= fr->rep_min;
    return (g->state_flags[it->state] & GM_FS_ACCEPT) != 0;
}

#endif
