/*
 * Profile walks shared between the contextual lexer's spanners.
 *
 * note [shared walks]
 * A profile build (spanner/profile.c, note [profile walk]) first follows
 * the pending lexeme down the vocabulary trie: the tokens that stay inside
 * it get the Prod set of the state they end in, and where a byte ends it
 * deeper than the first byte the rest of the subtree is lexed again from
 * the no-lexeme state. That first part depends only on the states the
 * lexeme can still go through (their moves, Prod sets and how each byte
 * ends them), not on the rest of the lexer; the contextual lexers of a
 * grammar repeat those sub-automata many times (a name's interior, a
 * string's, a comment's: Go's 137 lexers have 24,300 states but about 900
 * distinct ones), and it was most of an eager contextual compile (the
 * heavy walks are the interiors, which most tokens continue).
 *
 * So a lexer state's sub-automaton is described canonically, and the
 * walk's outcome kept under its description: the staying tokens by Prod set
 * (pooled token sets, Prod sets by content: each spanner numbers its own)
 * and the deep breaks (trie node, element, no-lexeme flag). A spanner whose
 * state has an equal description takes the staying tokens as whole classes
 * (no token is added one by one) and lexes the breaks' rests with its own
 * lexer: the profile is the one its own walk would give (tests/test_ctxmask
 * builds every profile of the lexers of eight grammars both ways and
 * compares them class by class).
 *
 * A description numbers the states a lexeme can go through from q in
 * breadth-first order over bytes 0..255 (the lexers' byte classes differ),
 * each with its Prod set (terminal ids are common to all the spanners of
 * one grammar), then for each byte in runs: the number of the state it
 * moves to, the element and flag of the break it makes, or failure. A state
 * whose own walk is heavy (GM_WALK_HEAVY trie nodes or more) is not entered
 * but described apart and named by its description's id, so the keyword
 * prefixes of a lexer (each heavy: letters continue them) have small
 * descriptions that name the name's interior. That interior sits in a
 * strongly connected component with the UTF-8 states of its Unicode letters
 * (hundreds); where a component holds one heavy state (its hub), the hub is
 * described once with all of them and each other state of it is "state k
 * of the hub's description" (Tarjan's components, per spanner when it is
 * attached). Equal descriptions mean equal sub-automata however the states
 * were split into described parts; a split that differs (a part still
 * being described is entered instead of named) only loses sharing.
 *
 * note [hubs of several heavy states]
 * A component may hold several heavy states: under llama3, the UTF-8
 * continuation states of a name's Unicode letters are heavy too (many
 * tokens start with continuation bytes). Then its heaviest state is its
 * hub (ties: the first Tarjan pops), and every other state of it, heavy or
 * not, is a state of the hub's description, as with one heavy state.
 * Described one by one instead, each heavy state's description entered the
 * others (a state under way is entered): JavaScript's eager compile wrote
 * 68,000 descriptions of about 280 states each (2.5 GB of keys), 73 % of its
 * 38 s, now 8.7 s. An alias names (hub description, index), so it is sound
 * whichever state is the hub; only sharing across lexers needs the same
 * choice, which the weight (the bytes that continue the lexeme, the
 * vocabulary) makes for the same sub-automaton.
 *
 * Built as before: a lexeme that backs up (its window is the lexer's own),
 * one that tracks line widths, Prod sets holding fallback pairs (numbered
 * per spanner), and sub-automata of more than GM_WALK_MAX_STATES light or
 * GM_WALK_MAX_STATES_HEAVY heavy states. An eager contextual compile
 * (Go's 48,600 profiles) went from 9.1 to 2.3 s with this.
 */
#ifndef GM_SPANNER_WALKSHARE_H
#define GM_SPANNER_WALKSHARE_H

#include <pthread.h>

#include "base/hash.h"
#include "base/vec.h"
#include "spanner/tables.h"

/* The most states one description numbers: for light walks, and for walks of GM_WALK_HEAVY
 * trie nodes or more (note [shared walks]). */
#define GM_WALK_MAX_STATES 64
#define GM_WALK_MAX_STATES_HEAVY 4096
#define GM_WALK_HEAVY 20000
/* Descriptions nested in one (heavy states described apart, referred to by id). */
#define GM_WALK_MAX_NESTING 32
/* A state whose walk is not shared. */
#define GM_WALK_NONE UINT32_MAX

/* Tokens that stay inside the lexeme and end in a state with this Prod set. */
typedef struct gm_walk_stay {
    uint32_t prod;               /* the Prod set in the template's prods: ignored, count, terms */
    const gm_tokset *tokens;     /* pooled (note [shared token sets]) */
} gm_walk_stay;

/* A subtree whose lexeme ends before its byte (deeper than the first). */
typedef struct gm_walk_break {
    uint32_t node;               /* the trie node of that byte */
    uint32_t emit;               /* the element, or GM_LEX_NONE */
    uint32_t flag;               /* the semicolon flag of the no-lexeme state after */
} gm_walk_break;

typedef GM_VEC(gm_walk_break) gm_walk_breaks;

typedef struct gm_walk_template {
    uint32_t nstays, nbreaks, nprods;
    gm_walk_stay *stays;
    gm_walk_break *breaks;
    uint32_t *prods;             /* [nprods] the stays' Prod sets */
} gm_walk_template;

typedef struct gm_walkshare {
    gm_mem *mem;
    pthread_mutex_t lock;        /* guards everything below */
    gm_intern descs;             /* description -> id */
    GM_VEC(gm_walk_template *) templates; /* by description id; NULL: none yet */
    size_t bytes;
} gm_walkshare;

gm_status gm_walkshare_create(gm_mem *m, gm_walkshare **out, gm_error *err);
void gm_walkshare_destroy(gm_walkshare *w);

/* What a spanner's descriptions know of each of its slots (width 0 lexer states). */
typedef struct gm_walk_slots {
    _Atomic(uint32_t) *desc;     /* 0: not described yet, 1: not shared, else description id + 2 */
    _Atomic(uint32_t) *index;    /* its number in its hub's description + 1, 0: none (yet) */
    uint8_t *heavy;              /* its walk can visit GM_WALK_HEAVY trie nodes or more */
    uint32_t *hub;               /* the heaviest state of its strongly connected component, or
                                    GM_WALK_NONE (it holds no heavy state) */
} gm_walk_slots;

/* Shares sp's walks through w (sp->walks, sp->walk_slots). */
gm_status gm_walkshare_attach(gm_walkshare *w, gm_spanner *sp, gm_error *err);
/* Frees what attach added to sp (gm_spanner_destroy calls it). */
void gm_walkshare_detach(gm_spanner *sp);

/*
 * The id of the description of the sub-automaton of lexer slot q of sp
 * (attached) into *id, GM_WALK_NONE when q's walk cannot be shared. 0, or
 * -1 on no memory.
 */
int gm_walkshare_describe(const gm_spanner *sp, uint32_t q, uint32_t *id);

/* The template of description id, or NULL. */
const gm_walk_template *gm_walkshare_find(gm_walkshare *w, uint32_t id);

/*
 * Keeps t (owned by w from now on, also on failure) for description id: the
 * template kept, t or one a concurrent build kept first; NULL on no memory.
 */
const gm_walk_template *gm_walkshare_add(gm_walkshare *w, uint32_t id, gm_walk_template *t);

/* The Prod set of sp equal to a template's prods[off...], or GM_WALK_NONE. */
uint32_t gm_walkshare_prod(const gm_spanner *sp, const gm_walk_template *t, uint32_t off);

/* Memory held. */
size_t gm_walkshare_bytes(gm_walkshare *w);

#endif
