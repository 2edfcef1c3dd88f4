/*
 * Masks under Lark's contextual lexer (parser/contextual.h): one token
 * spanner per contextual lexer, built on first use, and the byte step that
 * switches lexer at each lexeme boundary.
 *
 * note [contextual masks]
 * Under the contextual lexer a lexeme is lexed by the lexer of the parser
 * state current when it starts (note [contextual lexer]). That state is the
 * top of the LR stack: nothing reaches the parser while a lexeme is
 * pending, and an ignored lexeme leaves the stack as it is. So a matcher
 * state stays (spanner state q, stacks), q being a state of the spanner of
 * lexer(top): each contextual lexer gets its own spanner (same terminal ids,
 * same LR table; the lexers are built with the grammar, the spanners and
 * their profiles on first use, and states with one terminal set share both).
 * Accepting a byte runs that spanner's transducer step; where a lexeme ends
 * its element goes through the layers to the stack and the next lexeme
 * starts in the no-lexeme state of the spanner of the new top
 * (gm_ctx_step).
 *
 * A mask from (q, stack) with lexer k walks the classes of q's profile in
 * spanner k (runtime/mask.c, note [class walk]). A class's sequence E and
 * Prod set were lexed by lexer k all along, which is exact as long as the
 * lexer stays k: after each element the walk looks at the top of its
 * virtual stack, and where the lexer of that state is another one, k', the
 * class diverges there. Its tokens (and those of every class after it that
 * shares the diverging prefix) are then split where that element's lexeme
 * ended, and their rests are lexed from the no-lexeme state of spanner k':
 * a suffix profile (gm_profile_build_suffixes), whose classes the walk
 * continues with on the stack after the prefix, recursively (a rest may
 * diverge again). Suffix profiles are built on first use and kept with the
 * class by (element, lexer); past GM_SUFFIX_DEPTH levels, or when the rests
 * start in different states, the tokens are run one by one through
 * gm_ctx_step on a copy of the stack. Since lexer k may fail on a rest that
 * another lexer takes, contextual spanners keep the tokens that fail after
 * an element in classes with prod GM_PROD_SWITCH (possible only where the
 * lexer changes), and their first-byte filters hold every byte that ends
 * the pending lexeme (note [first-byte split]), the tokens then walked in
 * the profile of the no-lexeme state of the lexer after that lexeme's
 * terminal. Always-accepted entries (spanner/accept.h) follow a class
 * whose lexer changes inside the known top of the stack into its suffix
 * profile, on the known states: when every suffix class is decided there,
 * the accepted ones join the entry and the walk never sees the group, else
 * the walk does the whole group on the real stack. (Python's lexer changes
 * after most terminals: before the entries followed the changes, a corpus
 * mask walked 540 classes and 66 suffix profiles, against 170 classes under
 * the basic lexer; p50 per mask was 8x the basic lexer's, now 1.1x.)
 *
 * The result is exact by construction: every token is lexed as the
 * contextual lexer lexes it, on the real stack; tests/test_ctxmask checks
 * it against a plain contextual lexer on full vocabularies.
 *
 * Lexers that back up: note [contextual fallbacks]. Compiled files do not
 * hold contextual lexers: gm_compiled_save refuses them.
 *
 * The cost, by `python3 bench/bench_contextual.py` (`make bench`;
 * bench/results/contextual.md): llama3, the corpus traces of the bundled
 * Go, Java and Python grammars and 16 stdlib files under Lark's
 * python.lark, each lexer in its own process, first-use builds inside the
 * timed masks. Lazily (the default) the grammar and compile times are the
 * basic lexer's (the lexers themselves are built on first use: note [lazy
 * lexers]); memory after the trace is 1.83x (Go: 38.9 / 21.3 MB), 1.87x
 * (Java: 37.1 / 19.8), 1.91x (Python: 46.3 / 24.3) and 1.69x (python.lark:
 * 87.9 / 52.1) the basic lexer's (the shared walks, note [shared walks],
 * hold about 1 MB of it), p50 per mask 1.0-1.3x (python.lark 4.4x), mean
 * 2.7-5.1x, p99 2.6-7.5x: the mean and the tail are the first-use builds
 * (before the walks were shared, on a slower machine: mean 2.3-7x, p99
 * 2.7-20x). (Pooling the token sets, note [shared token sets], halved both
 * lexers' memory; what stays is the contextual lexer's own.)
 * Where it goes: each lexer used is a DFA as large as a good part of the
 * basic one (Java: 80 of its 261 lexers, 8.9 MB of plain 16-bit
 * transitions, a fifth of its trace's memory, until near rows were patched:
 * note [transition rows], Java 40.3 -> 36.2 MB after its trace, for 6 %
 * more instructions; python.lark's Lark-mode lexers carry up to 10,000
 * backtracking states each, whose repeated rows are kept once:
 * gm_lexer.row16, 152.6 -> 118.4 MB after its trace), built in the mask
 * that first needs it (27 % of Java's trace instructions, 41 % before the
 * determinizer stepped classes in groups: lexer/ordered.c, class_groups;
 * the trace 12.3 -> 9.8 G instructions), plus each
 * lexer's spanner, its profiles and the suffix profiles, about half of the
 * Python trace's time. Always-accepted entries of suffix profiles of 16
 * classes or more (runtime/mask.c, walk_suffixes) cost Go 8 MB and Python
 * 7 MB before their sets were pooled, and gave p50 6.3 -> 4.5 us (Go), 4.9
 * -> 3.1 us (Python), 23 -> 10 us (python.lark). (python.lark's indentation layer gives each lexer
 * state that can still become _NEWLINE 255 width states: 3.3 M states in
 * its spanners, which keep no array per state since note [spanner states]
 * decodes them by arithmetic.)
 *
 * An eager compile builds a profile for every state of every lexer (Java:
 * 67,568 profiles). The part of a profile that follows the pending lexeme
 * depends only on the sub-automaton of its state, which the lexers repeat
 * (Go's 137 lexers have 24,300 states but 856 distinct sub-automata, Java's
 * 261 have 67,568 and 1,496, the bundled Python's 185 have 33,408 and 979,
 * python.lark's 146 have 234,022 and 12,981): those walks are shared
 * (note [shared walks]), which took an eager compile from 19-57x the basic
 * one's time to 5.2-9.7x (Java 30 s -> 3.0 s, Go 13 -> 1.9 s, Python 11
 * -> 2.4 s; memory 3.3-4.4x, 57-83 MB: a profile per state). What each
 * lexer still pays on its own, Java's eager compile: the start profiles
 * (261 walks of the whole vocabulary, 0.4 s), the rests after a lexeme
 * that ends inside a token (each lexer lexes them its own way; with
 * assembling each profile's classes, about 27 us a profile), and the
 * lexers. Within 2x would need start profiles composed from shared walks
 * (the start profile restricted to tokens of first byte b is the walk of
 * the state after b over b's subtree) and rests shared between lexers that
 * lex them alike, or profiles that stop at the first lexeme's end (the
 * mask walk already continues rests in suffix profiles).
 */
#ifndef GM_RUNTIME_CTX_SPANNERS_H
#define GM_RUNTIME_CTX_SPANNERS_H

#include <stdatomic.h>
#include <string.h>

#include "base/error.h"

#include "gramask.h"
#include "parser/contextual.h"
#include "spanner/spanner.h"

/*
 * note [contextual fallbacks]
 * A lexer that backs up (note [lexer backtracking]) falls back to the
 * longest match T when the longer one dies, and lexes the bytes after T
 * (the window) again. Under the contextual lexer the window goes to the
 * lexer of the state after T, which may be another one, so the bytes are
 * needed: a state whose lexeme is in a backtracking state carries its
 * window (a matcher state at most GM_CTX_WINDOW bytes, a token run in a
 * mask GM_CTX_WINDOW_MAX; past them GM_ERR_LIMIT), and a fallback
 * feeds T and then steps the window's bytes again from the no-lexeme state
 * of the new lexer (in the same lexer this gives the state the lexer's own
 * tables name). Masks from such a state run every token, along the
 * vocabulary trie (runtime/mask.c, ctx_trie_walk: the window lies before
 * the token, so no profile applies); inside a token the window is the
 * token's own bytes, so suffix profiles start at the window, and a token
 * that ends in a window whose fallback changes the lexer (a fallback pair,
 * note [fallback pairs]) is run on its own.
 */
#define GM_CTX_WINDOW 256
#define GM_CTX_WINDOW_MAX 4096

/* A window while bytes are run. */
typedef struct gm_ctx_window {
    uint32_t n;
    uint8_t b[GM_CTX_WINDOW_MAX];
} gm_ctx_window;

/* A window as a matcher state keeps it. */
typedef struct gm_ctx_saved_window {
    uint16_t n;
    uint8_t b[GM_CTX_WINDOW];
} gm_ctx_saved_window;

/* Saved into a matcher state: false when it is longer than GM_CTX_WINDOW (err filled). */
static inline bool gm_ctx_window_save(const gm_ctx_window *w, gm_ctx_saved_window *out,
                                      gm_error *err)
{
    if (w->n > GM_CTX_WINDOW) {
        gm_error_set(err, GM_ERR_LIMIT,
                     "a lexeme backs up over more than %d bytes under the contextual lexer",
                     GM_CTX_WINDOW);
        return false;
    }
    out->n = (uint16_t)w->n;
    memcpy(out->b, w->b, w->n);
    return true;
}

static inline void gm_ctx_window_load(const gm_ctx_saved_window *w, gm_ctx_window *out)
{
    out->n = w ? w->n : 0;
    if (w)
        memcpy(out->b, w->b, w->n);
}

typedef struct gm_ctx_spanners {
    gm_mem *mem;
    gm_ctx_lexers *lexers;   /* borrowed; lexers built on first use (note [lazy lexers]) */
    const gm_postlex *postlex;
    const gm_lr_table *lr;
    const gm_vocab_data *vocab;
    const gm_trie *trie;
    _Atomic(gm_spanner *) *sp;   /* [lexers->nsets] built on first use */
    gm_tokpool *pool;            /* the spanners' shared token sets (note [shared token sets]) */
    struct gm_walkshare *walks;  /* their shared profile walks (note [shared walks]), or NULL */
} gm_ctx_spanners;

/* Spanners for the lexers of `lexers`. All inputs are borrowed and must outlive the result. */
gm_status gm_ctx_spanners_create(gm_mem *m, gm_ctx_lexers *lexers, const gm_postlex *postlex,
                                 const gm_lr_table *lr, const gm_vocab_data *vocab,
                                 const gm_trie *trie, gm_ctx_spanners **out, gm_error *err);
void gm_ctx_spanners_destroy(gm_ctx_spanners *cs);

/* The spanner of lexer k, created on first use (thread-safe); NULL with err filled. */
gm_spanner *gm_ctx_spanner(gm_ctx_spanners *cs, uint32_t k, gm_error *err);

/* The lexer of LR state s. */
static inline uint32_t gm_ctx_lexer_of(const gm_ctx_spanners *cs, uint32_t s)
{
    return cs->lexers->set_of[s];
}

/*
 * The suffix profile of class ci of profile p (of spanner `from`) and the
 * classes after it that share its elements 0..depth, after that element,
 * where lexer k takes over (spanner/profile.h, gm_profile_build_suffixes),
 * built on first use and kept with class ci (thread-safe). *out NULL when
 * the rests have no common profile.
 */
gm_status gm_ctx_suffixes(gm_ctx_spanners *cs, const gm_spanner *from, const gm_profile *p,
                          uint32_t ci, uint32_t depth, uint32_t k, const gm_profile **out,
                          gm_error *err);

/* Every spanner with all its profiles (eager compilation). */
gm_status gm_ctx_spanners_build_all(gm_ctx_spanners *cs, gm_progress_fn progress, void *ud,
                                    gm_error *err);
/* Totals over the spanners built so far. */
void gm_ctx_spanners_stats(gm_ctx_spanners *cs, gm_spanner_stats *st);

/*
 * Feeds one element of the transducer to the caller's stack: 1 shifted
 * (*top: the new top LR state), 0 rejected, -1 the caller's overlay is
 * full, -2 another failure (err filled).
 */
typedef int (*gm_ctx_feed_fn)(void *ud, const gm_spanner *sp, uint32_t elem, uint32_t *top);

/*
 * One byte under the contextual lexer (note [contextual masks]) from state
 * *q of spanner *sp (lexer *k) with window *win (note [contextual
 * fallbacks]), which are updated: each lexeme the byte ends goes to feed,
 * and the byte goes on in the spanner of the lexer of the new top. 1 ok, 0
 * rejected, or feed's negative answer (-2: err filled; also a window past
 * GM_CTX_WINDOW bytes).
 */
int gm_ctx_step(gm_ctx_spanners *cs, gm_spanner **sp, uint32_t *k, uint32_t *q,
                gm_ctx_window *win, uint8_t b, gm_ctx_feed_fn feed, void *ud, gm_error *err);

/*
 * Ends the input: the pending lexeme (with its fallbacks) goes to feed;
 * *q becomes a no-lexeme state of *sp. As gm_ctx_step's answers.
 */
int gm_ctx_finish(gm_ctx_spanners *cs, gm_spanner **sp, uint32_t *k, uint32_t *q,
                  gm_ctx_window *win, gm_ctx_feed_fn feed, void *ud, gm_error *err);

/* The fallback of backtracking state *q, as a byte the longer match cannot take makes it. */
int gm_ctx_fallback(gm_ctx_spanners *cs, gm_spanner **sp, uint32_t *k, uint32_t *q,
                    gm_ctx_window *win, gm_ctx_feed_fn feed, void *ud, gm_error *err);

/* Whether q is a backtracking state (its lexeme has a window). */
static inline bool gm_ctx_backtracking(const gm_spanner *sp, uint32_t q)
{
    return q < sp->nlex && gm_spanner_dfa(sp, q) >= sp->lexer->ndfa;
}

#endif
