/*
 * Lark's contextual lexer (lexer='contextual', Lark's default for LALR):
 * in each parser state only the terminals that state accepts are lexed.
 *
 * note [contextual lexer]
 * A lexeme is lexed by the lexer of the parser state that is current when
 * it starts (the state after the previous terminals were fed, a post-
 * lexing layer's included). That lexer has the terminals with an action in
 * the state's row of the LALR table, the %ignore'd ones, the
 * indentation layer's line end (Lark's always_accept of its Indenter), the
 * terminals that may follow the semicolon layer's inserted terminal where the
 * state takes it (note [offending-token insertion] in postlex.h), and
 * the semicolon layer's line-end terminals (which the parser never sees); in
 * Lark mode it is Lark's basic lexer over them (its own order, its own
 * string folding), so a keyword the state does not accept is a name there,
 * and a name it does not accept is no lexeme at all. States with the same
 * set share one lexer. An ignored lexeme leaves the parser state as it is,
 * so the next lexeme uses the same lexer; a lexeme that falls back to a
 * shorter match is followed by the bytes after it, lexed by the lexer of
 * the state the shorter match leads to (as Lark's next match does).
 */
#ifndef GM_PARSER_CONTEXTUAL_H
#define GM_PARSER_CONTEXTUAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "gramask.h"
#include "lexer/lexer.h"
#include "parser/cfg.h"
#include "parser/lr.h"

typedef struct gm_ctx_lexers {
    gm_mem *mem;
    const gm_cfg *g;
    bool lark;
    gm_limits limits;
    uint32_t nsets;
    uint32_t nstates_total;  /* LR states */
    uint32_t words;          /* 64-bit words per set */
    uint32_t *set_of;        /* [LR states] the set (lexer) of each state */
    uint64_t *sets;          /* [nsets * words] the terminals of each lexer */
    uint32_t *nstates_of;    /* [nsets] how many states use it */
    /* [nsets] built on first use and published with a compare-and-swap: a grammar's
       matchers share them between threads, and most are never used (note [lazy lexers]) */
    _Atomic(gm_lexer *) *lexers;
} gm_ctx_lexers;

/* The lexer sets of the states of t over g's terminals (lexers are built later). */
gm_status gm_ctx_lexers_create(gm_mem *m, const gm_cfg *g, const gm_lr_table *t, bool lark,
                               const gm_limits *limits, gm_ctx_lexers **out, gm_error *err);
void gm_ctx_lexers_destroy(gm_ctx_lexers *c);

/*
 * note [lazy lexers]
 * A grammar has a lexer set per distinct row of acceptable terminals: 55 to
 * 261 for the bundled grammars, each a DFA built like the basic lexer (~5 ms
 * and ~140 KB for Java's). Decoding a file uses a third of them or fewer, so
 * building them all with the grammar cost 15x the basic lexer's compile time
 * and most of the contextual lexer's memory. They are built when a lexeme
 * first starts in a state of theirs (the spanner of a lexer is built then
 * too); a lexer that cannot be built (a state limit) fails that mask with its
 * error, as a spanner does.
 */

/* The lexer of lexer set k, built on first use (thread-safe). */
gm_status gm_ctx_lexers_lexer(gm_ctx_lexers *c, uint32_t k, const gm_lexer **out, gm_error *err);

/* The lexer of parser state `state`. */
static inline gm_status gm_ctx_lexers_get(gm_ctx_lexers *c, uint32_t state, const gm_lexer **out,
                                          gm_error *err)
{
    return gm_ctx_lexers_lexer(c, c->set_of[state], out, err);
}

static inline bool gm_ctx_lexers_has(const gm_ctx_lexers *c, uint32_t k, uint32_t terminal)
{
    return (c->sets[(size_t)k * c->words + (terminal >> 6)] >> (terminal & 63)) & 1;
}

/*
 * An input of at most 24 bytes on which lexer k finds a first lexeme that
 * the basic lexer (every terminal) does not (another terminal or length,
 * or a lexing error): where a state's lexer and the basic one would lex
 * differently and the state can still accept what it lexes. Its bytes in
 * out[0..*n), the two first lexemes (terminal GM_LEX_DEAD: a lexing error),
 * *found false when the search finds none.
 */
gm_status gm_ctx_lexers_witness(gm_ctx_lexers *c, const gm_lexer *basic, uint32_t k, uint8_t *out,
                                size_t *n, gm_lexeme *lb, gm_lexeme *lk, bool *found, gm_error *err);

#endif
