/*
 * Post-lexing layers: what sits between the lexer's terminals and the LR
 * parser when a language's token stream is not context-free at the lexical
 * level.
 *
 * note [semicolon insertion]
 * Go (and similar languages) end statements at line ends, but only after
 * certain tokens. The grammar says so with a gramask directive:
 *     %insert ";" at NEWLINE after NAME INT "break" ")" "]" "}" ...
 * NEWLINE is a terminal the lexer produces at line ends; it never reaches
 * the parser. When the previous parser-visible terminal is one of the
 * `after` list, the layer feeds the terminal ";" in its place, otherwise
 * nothing; at end of input too. So the layer's whole state is one flag
 * ("the last terminal triggers insertion"), and the spanner folds it into
 * the lexer state (each lexer state exists with the flag clear and set):
 * masks stay exact because the transducer the spanner composes with the
 * vocabulary is the lexer followed by this layer, with its state in q.
 *
 * Comments that span lines must act as line ends: the grammar makes them a
 * terminal of their own that the directive also names (`at NEWLINE ML_COMMENT`).
 */
#ifndef GM_PARSER_POSTLEX_H
#define GM_PARSER_POSTLEX_H

#include <stdbool.h>
#include <stdint.h>

#include "src/base/mem.h"

#define GM_POSTLEX_NONE UINT32_MAX

typedef struct gm_postlex {
    bool insertion;          /* semicolon insertion is on */
    uint32_t insert;         /* the terminal fed at a triggered line end (";") */
    uint8_t *at;             /* [nterminals] 1: a line-end terminal (never fed itself) */
    uint8_t *after;          /* [nterminals] 1: sets the flag when fed */
    uint32_t nterminals;
} gm_postlex;

/*
 * One terminal from the lexer (ignored ones are never passed here): writes
 * what the parser gets (0 or 1 terminal) to *out and returns how many;
 * updates *flag.
 */
static inline uint32_t gm_postlex_map(const gm_postlex *pl, uint32_t term, uint8_t *flag,
                                      uint32_t *out)
{
    if (!pl || !pl->insertion) {
        *out = term;
        return 1;
    }
    if (pl->at[term]) {
        uint32_t n = 0;
        if (*flag)
            out[n++] = pl->insert;
        *flag = 0;
        return n;
    }
    *out = term;
    *flag = pl->after[term];
    return 1;
}

/* What the parser gets at end of input before $end (0 or 1 terminal). */
static inline uint32_t gm_postlex_end(const gm_postlex *pl, uint8_t flag, uint32_t *out)
{
    if (pl && pl->insertion && flag) {
        *out = pl->insert;
        return 1;
    }
    return 0;
}

#endif
