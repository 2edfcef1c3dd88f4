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
 * So a lexer state's sub-automaton is described canonically — its states
 * numbered in breadth-first order over bytes 0..255, each with its Prod set
 * (terminal ids are common to all the spanners of one grammar), and for
 * each byte the state it moves to, or the element and the no-lexeme flag a
 * break gives — and the walk's outcome is kept under that description: the
 * staying tokens by Prod set (pooled token sets) and the deep breaks (trie
 * node, element, flag). A spanner whose state has an equal description
 * adds those tokens and lexes the breaks' rests with its own lexer: the
 * profile is the one its own walk would give (tests/test_ctxmask checks
 * every profile of every lexer of the bundled grammars both ways). States
 * the description cannot make exact are built as before: a lexeme that
 * backs up (its window is the lexer's own), one that tracks line widths,
 * Prod sets holding fallback pairs (numbered per spanner), and
 * sub-automata of more than GM_WALK_MAX_STATES states.
 */
#ifndef GM_SPANNER_WALKSHARE_H
#define GM_SPANNER_WALKSHARE_H

#include <pthread.h>

#include "base/hash.h"
#include "base/vec.h"
#include "spanner/tables.h"

#define GM_WALK_MAX_STATES 64

/* Tokens that stay inside the lexeme and end in a state with this Prod set. */
typedef struct gm_walk_stay {
    uint32_t state;              /* the first described state with the Prod set */
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
    uint32_t nstays, nbreaks;
    gm_walk_stay *stays;
    gm_walk_break *breaks;
} gm_walk_template;

typedef GM_VEC(uint32_t) gm_walk_words;

typedef struct gm_walkshare {
    gm_mem *mem;
    pthread_mutex_t lock;        /* guards everything below */
    gm_intern keys;              /* description -> template index */
    GM_VEC(gm_walk_template *) templates;
    size_t bytes;
} gm_walkshare;

gm_status gm_walkshare_create(gm_mem *m, gm_walkshare **out, gm_error *err);
void gm_walkshare_destroy(gm_walkshare *w);

/*
 * The description of the sub-automaton of lexer slot q of sp into key, and
 * the slot of each described state into states (in order). 1 when q's walk
 * can be shared, 0 when not, -1 on no memory.
 */
int gm_walkshare_describe(const gm_spanner *sp, uint32_t q, gm_walk_words *key,
                          gm_walk_words *states);

/* The template kept under key, or NULL. */
const gm_walk_template *gm_walkshare_find(gm_walkshare *w, const gm_walk_words *key);

/*
 * Keeps t (owned by w from now on, also on failure) under key: the template
 * kept, t or one a concurrent build kept first; NULL on no memory.
 */
const gm_walk_template *gm_walkshare_add(gm_walkshare *w, const gm_walk_words *key,
                                         gm_walk_template *t);

/* Memory held. */
size_t gm_walkshare_bytes(gm_walkshare *w);

#endif
