/*
 * The token spanner: which vocabulary tokens realize which terminal
 * sequences from which lexer state (seed paper §4, DESIGN.md §3).
 *
 * note [token classes]
 * Run the lexing transducer over token t from lexer state q: it emits
 * terminals E = T1..Tk (ignored ones dropped) and ends in state q'. t is
 * allowed on a parser stack exactly when E·T can be fed to the stack for
 * some T in Prod(q'), or E alone can when Prod(q') holds an ignored
 * terminal. So for a fixed q, t is characterized by its class (E, P) with
 * P = Prod(q'); the seed paper's realizable sequences from q are the E·T,
 * and its inverse token spanner table T_inv(q, E·T) is the union of the
 * token sets of the classes (E, P) with T in P. A profile holds the classes
 * of one lexer state, sorted by E so that a walk over them shares the
 * parser simulation of common prefixes (the sequences form a trie).
 *
 * note [first-byte split]
 * Most tokens cannot continue the pending lexeme at all: their first byte
 * has no transition from q. For all of them the transducer emits accept(q)
 * and then lexes the whole token from the start state, so their mask is
 * "the mask of the start state on the stack after accept(q)", filtered to
 * the tokens whose first byte ends the lexeme. Profiles leave those tokens
 * out and record the filter instead (one bitset per distinct set of
 * stopping bytes, shared by all states with that set): the start state's
 * profile serves every state, and per-state profiles stay small (only
 * tokens that continue the lexeme for at least one byte).
 *
 * note [spanner states]
 * The transducer the spanner composes with the vocabulary is the lexer
 * followed by the post-lexing layers (parser/postlex.h), and its states are:
 *   q < nlex: a lexer state with the layers' finite state: the semicolon
 *     flag (nflags values: 2 when insertion is on, 4 with the offending rule, else 1) and, for lexer
 *     states whose lexeme can still become the indentation layer's
 *     _NEWLINE, the width of its last line so far (0..GM_INDENT_MAX_WIDTH).
 *     Width 0 (or no width) is state slot = lexer state * nflags + flag,
 *     below nplain, which is also where its profile is kept
 *     (gm_spanner_slot); widths 1.. of a (lexer state, flag) that tracks
 *     them are ids nplain + 256 * block + width, the block's slot in
 *     block_slot. So q decodes by arithmetic, with no array per state
 *     (python.lark's contextual spanners had 3.3 M states, 255 widths for
 *     each lexer state that can still become _NEWLINE, 10 bytes each);
 *     gm_spanner_dfa/_flag/_width decode q, gm_spanner_id builds it;
 *   nlex <= q < nstates: virtual start states. A SentencePiece decoder
 *     removes the first space(s) of the whole text (strip_leading), so the
 *     grammar must not see them: before any byte is output the matcher is
 *     in "start, k spaces still to strip" (k = strip_leading .. 1); a space
 *     there only lowers k, any other byte is lexed from the start state.
 * The lexer's start state has no incoming transitions, so lexer state 0
 * (with either flag) and the virtual states are exactly the states with no
 * lexeme pending. gm_spanner_step is the transducer step over these states;
 * it reports the element the parser gets (never an ignored terminal): a
 * terminal id, or GM_SEQ_LINE | width for a completed _NEWLINE, which the
 * layer turns into _NEWLINE, _INDENT, _DEDENTs or nothing on the real stacks.
 */
#ifndef GM_SPANNER_TABLES_H
#define GM_SPANNER_TABLES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gramask.h"
#include "lexer/lexer.h"
#include "parser/lr.h"
#include "parser/postlex.h"
#include "vocab/tokset.h"
#include "vocab/vocab.h"
#include "base/mem.h"

#define GM_SPANNER_NONE UINT32_MAX
/*
 * A completed indentation line end in a class sequence: GM_SEQ_LINE | its
 * width, or GM_SEQ_LINE_REL | k when it completes the lexeme pending before
 * the token and its last line continued that lexeme's last line: its width
 * is then the state's pending width + k. Relative widths let all widths of
 * one lexer state share one profile (gm_spanner_profile_state).
 */
#define GM_SEQ_LINE 0x80000000u
#define GM_SEQ_LINE_REL 0xc0000000u
#define GM_SEQ_WIDTH(e) ((e) & 0x3fffffffu)
/* A pending indentation line end in a Prod set (its width is not final yet). */
#define GM_SEQ_PENDING_LINE 0xfffffff0u
/*
 * note [fallback pairs]
 * A Prod set element GM_SEQ_PAIR | k is pair k of the spanner: a token
 * that ends in a backtracking state may be finished by the main match
 * dying, which hands the parser pair_emit[k] (the fallback's element, never
 * nothing) and leaves the re-lexed window, whose Prod set is pair_prod[k]
 * (lexer.h, note [lexer backtracking]). So the element stands for "emit,
 * then one of pair_prod's", which the mask checks on a copy of the stack.
 * A fallback that hands the parser nothing (an ignored terminal) adds the
 * window's Prod set itself instead.
 */
#define GM_SEQ_PAIR 0x40000000u
/*
 * The prod of a class of a contextual spanner (gm_spanner.contextual) whose
 * tokens the spanner's own lexer fails to lex after their elements E: they
 * are possible only where the lexer changes after one of them
 * (runtime/ctx_spanners.h, note [contextual masks]).
 */
#define GM_PROD_SWITCH 0xfffffffeu
#define GM_SEQ_IS_PAIR(e) (((e) & 0xc0000000u) == GM_SEQ_PAIR)

/* The byte step inside profile builds' trie walks: inlined there (GCC and Clang would not
   since its lexer transition reads a 16- or a 32-bit table: +7 % instructions). */
#if defined(__GNUC__)
#define GM_SPANNER_HOT static inline __attribute__((always_inline))
#else
#define GM_SPANNER_HOT static inline
#endif

struct gm_suffixes;

/* One class (E, P) of a profile (note [token classes]). */
typedef struct gm_class {
    uint32_t seq;            /* offset of E in the profile's seqs */
    uint32_t len;            /* |E| */
    uint32_t shared;         /* length of the common prefix of E with the previous class's E */
    uint32_t prod;           /* prod-set id of P */
    const gm_tokset *tokens; /* the tokens of the class, over ids [0, vocab size); pooled
                                (note [shared token sets] in spanner/tokpool.h) */
    /* Contextual spanners: the classes of the tokens' rest where another lexer takes over
     * (gm_suffixes, spanner/profile.h), built on first use; freed with the profile. */
    _Atomic(struct gm_suffixes *) suffixes;
} gm_class;

/* The classes of one lexer state, immutable once published. */
struct gm_accept_entry;

typedef struct gm_profile {
    uint32_t state;          /* lexer state q */
    uint32_t nclasses;
    gm_class *classes;       /* sorted by E (lexicographic), then by prod */
    uint32_t *seqs;          /* terminal sequences of the classes */
    uint32_t max_len;        /* longest E */
    uint32_t split0;         /* note [first-byte split]: filter id, or GM_SPANNER_NONE when no
                                token can end the lexeme at its first byte */
    uint32_t split0_emit;    /* accept(q) as the parser sees it: the terminal, or
                                GM_SPANNER_NONE when nothing reaches the parser */
    uint32_t split0_next;    /* the no-lexeme state after it (whose profile lexes the rest) */
    uint32_t ntokens;        /* tokens in the classes */
    size_t bytes;            /* memory held */
    /* A profile of token suffixes (gm_profile_build_suffixes): item_tok[0..nitems) sorted,
     * each token's rest starting at byte item_off[i]; NULL for a lexer state's profile. */
    uint32_t nitems;
    uint32_t *item_tok;
    uint16_t *item_off;
} gm_profile;

/*
 * Engine variants for the benchmark's ablation study (bench/): each switches
 * one technique off, so its effect can be measured. Masks stay exact in
 * every variant; only speed and size change. Set before the first use.
 */
enum {
    GM_VARIANT_NO_SPLIT0 = 1u << 0,   /* profiles hold every token: no first-byte filters */
    GM_VARIANT_NO_SHARING = 1u << 1,  /* the class walk re-feeds each class from the start */
    GM_VARIANT_LISTS_ONLY = 1u << 2,  /* token sets always as id lists (no adaptive storage) */
    GM_VARIANT_NO_ACCEPT_CACHE = 1u << 3, /* no always-accepted entries (spanner/accept.h) */
};

struct gm_spanner;
struct gm_walkshare;
struct gm_walk_slots;

/* Suffix profiles inside one another a mask walk follows; deeper, tokens go one by one. */
#define GM_SUFFIX_DEPTH 12

/*
 * The suffix profile of class ci of profile p of spanner `from` and the
 * classes after it sharing its elements 0..depth, lexed by lexer k after
 * that element, with k's spanner in *to (runtime/ctx_spanners.h,
 * gm_ctx_suffixes, which the spanner stage cannot call itself): false when
 * there is none or it could not be built. For always-accepted entries of
 * contextual spanners (note [always-accepted entries]).
 */
typedef bool (*gm_suffixes_fn)(void *ud, const struct gm_spanner *from, const gm_profile *p,
                               uint32_t ci, uint32_t depth, uint32_t k, const gm_profile **sub,
                               const struct gm_spanner **to);

typedef struct gm_spanner {
    gm_mem *mem;
    uint32_t variant;        /* GM_VARIANT_* (0: the full engine) */
    bool contextual;         /* one of the contextual lexer's spanners: profiles keep the
                                tokens that fail after an element (GM_PROD_SWITCH) */
    const uint32_t *lexer_of; /* contextual: [LR states] the lexer of each state, and ... */
    uint32_t lexer_id;       /* ... this spanner's */
    gm_suffixes_fn suffixes; /* contextual: the suffix profiles where the lexer changes */
    void *suffixes_ud;
    struct gm_walkshare *walks; /* contextual: walks shared with the other spanners, or NULL
                                   (spanner/walkshare.h, note [shared walks]) */
    /* with walks: what they know of each slot, built on first use (note [per-state attach]) */
    _Atomic(struct gm_walk_slots *) walk_slots;
    const gm_lexer *lexer;   /* borrowed: must outlive the spanner */
    const gm_lr_table *lr;
    const gm_vocab_data *vocab;
    const gm_trie *trie;
    const gm_postlex *postlex; /* NULL when the grammar has no post-lexing layer */
    uint32_t nbits;          /* vocabulary size: bits of a mask */
    uint32_t nflags;         /* semicolon-layer flag values (note [spanner states]): 1, 2 or 4 */
    uint32_t flag_bits;      /* log2(nflags) */
    bool plain;              /* one flag and no widths: a state below nlex is its lexer state */
    uint32_t nplain;         /* lexer states * nflags: the width-0 states, each its slot */
    uint32_t nlex;           /* ids of states with a lexer state (note [spanner states]) */
    uint32_t nstates;        /* nlex + virtual start states */
    uint32_t *width_block;   /* [nplain] the block of widths of a slot, or GM_SPANNER_NONE;
                                NULL when plain */
    uint32_t *block_slot;    /* [blocks] the slot of a block */
    uint32_t start;          /* the state of an empty output (virtual when strip_leading > 0) */
    uint32_t lex_start;      /* where lexing starts: 0, or the state after the virtual line end
                                of an indentation layer with line_start (postlex.h) */

    /* Distinct Prod(q) sets. */
    uint32_t nprods;
    uint32_t *slot_prod;     /* [nslots] prod-set id (all widths of a lexer state share it):
                                read with gm_spanner_prod */
    uint32_t *prod_off;      /* [nprods + 1] parser terminals of set i:
                                prod_terms[prod_off[i], prod_off[i+1]) */
    uint32_t *prod_terms;
    uint8_t *prod_ignored;   /* [nprods] the lexeme may end as nothing the parser sees
                                (an ignored terminal, or a line end that inserts nothing) */
    uint32_t npairs;         /* note [fallback pairs] */
    uint32_t *pair_emit;     /* [npairs] */
    uint32_t *pair_prod;     /* [npairs] */

    /* First-byte split filters (note [first-byte split]). */
    uint32_t nsplit0;
    uint32_t *state_split0;  /* [nslots] filter id or GM_SPANNER_NONE (widths share it) */
    struct gm_filter **split0_filter; /* [nsplit0] its entry in pool */
    struct gm_tokpool *pool; /* note [shared token sets]: the grammar's, or owned (own_pool) */
    bool own_pool;

    /* Per profile (gm_spanner_slot): all widths of a lexer state share one, so these are
     * not per state (an indentation grammar has up to GM_INDENT_MAX_WIDTH + 1 states a
     * lexer state, and 16 bytes a state were most of a contextual spanner's memory). */
    uint32_t nslots;
    _Atomic(gm_profile *) *profiles; /* [nslots] lazily built */
    /* Always-accepted entries per profile (spanner/accept.h): [nslots] rows of
     * hash buckets, both built on first use. */
    _Atomic(_Atomic(struct gm_accept_entry *) *) *accept_rows;
    /* The suffix profiles' entries walked with this spanner (GM_ACCEPT_SUFFIX_BUCKETS
     * buckets, keyed by profile too), built on first use. */
    _Atomic(_Atomic(struct gm_accept_entry *) *) suffix_accept;
} gm_spanner;

/* Ids per block of widths (note [spanner states]): widths 1..GM_INDENT_MAX_WIDTH. */
#define GM_SPANNER_BLOCK_BITS 8
_Static_assert(GM_INDENT_MAX_WIDTH < (1u << GM_SPANNER_BLOCK_BITS), "widths fit in a block");

/* The state of width w (1..GM_INDENT_MAX_WIDTH) of block b. */
static inline uint32_t gm_spanner_block_id(const gm_spanner *sp, uint32_t b, uint32_t w)
{
    return sp->nplain + (b << GM_SPANNER_BLOCK_BITS) + w;
}

static inline uint32_t gm_spanner_id(const gm_spanner *sp, uint32_t dfa, uint32_t flag,
                                     uint32_t width)
{
    uint32_t slot = dfa << sp->flag_bits | flag;
    if (width == 0 || sp->plain || sp->width_block[slot] == GM_SPANNER_NONE)
        return slot;
    return gm_spanner_block_id(sp, sp->width_block[slot], width);
}

/* The slot of lexer-state id q < nlex: its (lexer state, flag). */
static inline uint32_t gm_spanner_lex_slot(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nplain ? q : sp->block_slot[(q - sp->nplain) >> GM_SPANNER_BLOCK_BITS];
}

/* The lexer state, semicolon flag and pending line width of q < nlex. */
static inline uint32_t gm_spanner_dfa(const gm_spanner *sp, uint32_t q)
{
    return gm_spanner_lex_slot(sp, q) >> sp->flag_bits;
}

static inline uint32_t gm_spanner_flag(const gm_spanner *sp, uint32_t q)
{
    return gm_spanner_lex_slot(sp, q) & (sp->nflags - 1);
}

static inline uint32_t gm_spanner_width(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nplain ? 0 : (q - sp->nplain) & ((1u << GM_SPANNER_BLOCK_BITS) - 1);
}

/* Whether a lexeme is under way in state q. */
static inline bool gm_spanner_pending(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nlex && gm_spanner_dfa(sp, q) != 0;
}

/* The width after byte b on a line of width w (postlex.h, gm_postlex_width). */
static inline uint32_t gm_spanner_width_step(const gm_spanner *sp, uint32_t w, uint8_t b)
{
    if (b == '\n')
        return 0;
    return w + (b == ' ') + (b == '\t') * sp->postlex->tab_width;
}

/*
 * What the parser gets for lexer terminal t emitted with semicolon flag *flag
 * (updated) and line width `width`: a terminal, GM_SEQ_LINE | width for the
 * indentation layer's _NEWLINE, or GM_LEX_NONE for nothing.
 */
static inline uint32_t gm_spanner_map(const gm_spanner *sp, uint32_t t, uint32_t *flag,
                                      uint32_t width)
{
    if (sp->lexer->terminals[t].ignored)
        return GM_LEX_NONE;
    if (!sp->postlex)
        return t;
    if (sp->postlex->indentation && t == sp->postlex->newline)
        return GM_SEQ_LINE | width;
    if (sp->nflags == 1)
        return t;
    uint8_t f = (uint8_t)*flag;
    uint32_t out;
    uint32_t n = gm_postlex_map(sp->postlex, t, &f, &out);
    *flag = f;
    return n ? out : GM_LEX_NONE;
}

/*
 * The state entering lexer state n on byte b from q < nlex (a transition),
 * whose slot is from_slot: with q's semicolon flag and line width (the
 * width is only read when n tracks widths: most states do not).
 */
static inline bool gm_spanner_enter(const gm_spanner *sp, uint32_t n, uint32_t from_slot,
                                    uint32_t q, uint8_t b, uint32_t *q_next)
{
    if (sp->plain) {
        *q_next = n;
        return true;
    }
    uint32_t slot = n << sp->flag_bits | (from_slot & (sp->nflags - 1));
    uint32_t block = sp->width_block[slot];
    if (block != GM_SPANNER_NONE) {
        /* Saturating: widths past GM_INDENT_MAX_WIDTH all count as that width. */
        uint32_t w = gm_spanner_width_step(sp, gm_spanner_width(sp, q), b);
        if (w > GM_INDENT_MAX_WIDTH)
            w = GM_INDENT_MAX_WIDTH;
        if (w) {
            *q_next = gm_spanner_block_id(sp, block, w);
            return true;
        }
    }
    *q_next = slot;
    return true;
}

/* Most elements one byte (or the end of input) hands the parser. */
#define GM_SPANNER_MAX_EMIT GM_LEX_MAX_EMIT

/*
 * Ends the lexeme pending in q (lexer.h, gm_lexer_break) because the next
 * byte, of class cls (lexer classes; nclasses: the end of input,
 * GM_LEX_STOP: any byte that cannot continue it), cannot continue it:
 * *emit is what the parser gets (GM_LEX_NONE for nothing), *resume the
 * state that takes the byte: a no-lexeme state, or the state of a re-lexed
 * backtracking window. False when q's lexeme is no terminal. q must have a
 * lexeme pending.
 */
static inline bool gm_spanner_break(const gm_spanner *sp, uint32_t q, uint32_t cls, uint32_t *emit,
                                    uint32_t *resume)
{
    uint32_t t, r, slot = gm_spanner_lex_slot(sp, q), flag = slot & (sp->nflags - 1);
    if (!gm_lexer_break(sp->lexer, slot >> sp->flag_bits, cls, &t, &r))
        return false;
    /* A backtracking window holds no space, tab or line break: the widths agree. */
    *emit = gm_spanner_map(sp, t, &flag, gm_spanner_width(sp, q));
    *resume = gm_spanner_id(sp, r, flag, 0);
    return true;
}

/*
 * The transducer step over spanner states (note [spanner states]): the
 * elements for the parser go to emit[0..*nemit) (at most
 * GM_SPANNER_MAX_EMIT). False on a lexing error.
 */
GM_SPANNER_HOT bool gm_spanner_step(const gm_spanner *sp, uint32_t q, uint8_t b, uint32_t *q_next,
                                    uint32_t *emit, uint32_t *nemit)
{
    const gm_lexer *lx = sp->lexer;
    *nemit = 0;
    if (q >= sp->nlex) {
        if (b == ' ') {
            *q_next = q + 1 < sp->nstates ? q + 1 : sp->lex_start;
            return true;
        }
        q = sp->lex_start;
    }
    uint32_t cls = lx->byte_class[b];
    for (;;) {
        uint32_t slot = gm_spanner_lex_slot(sp, q), dfa = slot >> sp->flag_bits;
        uint32_t n = gm_lexer_move(lx, dfa, cls);
        if (n != GM_LEX_DEAD)
            return gm_spanner_enter(sp, n, slot, q, b, q_next);
        uint32_t e;
        if (dfa == 0 || !gm_spanner_break(sp, q, cls, &e, &q))
            return false;
        if (e != GM_LEX_NONE)
            emit[(*nemit)++] = e;
    }
}

/*
 * Ends the input in state q: the pending lexeme (and those of re-lexed
 * backtracking windows) go to emit[0..*nemit) as the parser sees them,
 * *after is the no-lexeme state that follows. False when a lexeme is not a
 * complete terminal. With no lexeme pending: true, nothing, q itself.
 */
static inline bool gm_spanner_finish(const gm_spanner *sp, uint32_t q, uint32_t *emit,
                                     uint32_t *nemit, uint32_t *after)
{
    *nemit = 0;
    while (gm_spanner_pending(sp, q)) {
        uint32_t e;
        if (!gm_spanner_break(sp, q, sp->lexer->nclasses, &e, &q))
            return false;
        if (e != GM_LEX_NONE)
            emit[(*nemit)++] = e;
    }
    *after = q;
    return true;
}

/* The terminal the semicolon layer feeds at end of input in no-lexeme state q, or GM_LEX_NONE. */
static inline uint32_t gm_spanner_end(const gm_spanner *sp, uint32_t q)
{
    uint32_t out;
    if (q < sp->nlex && gm_postlex_end(sp->postlex, gm_spanner_flag(sp, q), &out))
        return out;
    return GM_LEX_NONE;
}

/* The state whose profile serves q: widths share the profile of width 0. */
static inline uint32_t gm_spanner_profile_state(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nlex ? gm_spanner_lex_slot(sp, q) : q;
}

/* Where the profile of q (of every width of q's lexer state) is kept: [0, nslots). */
static inline uint32_t gm_spanner_slot(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nlex ? gm_spanner_lex_slot(sp, q) : sp->nplain + (q - sp->nlex);
}

/* The state whose profile is kept in slot i (gm_spanner_slot's inverse on profile states). */
static inline uint32_t gm_spanner_slot_state(const gm_spanner *sp, uint32_t i)
{
    return i < sp->nplain ? i : sp->nlex + (i - sp->nplain);
}

/* The prod-set id of Prod(q). */
static inline uint32_t gm_spanner_prod(const gm_spanner *sp, uint32_t q)
{
    return sp->slot_prod[gm_spanner_slot(sp, q)];
}

#endif
