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
 *
 * note [offending-token insertion]
 * JavaScript's automatic semicolon insertion inserts ";" before a token the
 * parser cannot take when a line end precedes it, or when the token is "}"
 * (and at end of input when the parser cannot end there), provided the
 * parser can take the ";" there. That depends on the parser's stack, which
 * a finite lexer state cannot hold. The grammar says
 *     %insert ASI at NEWLINE ML_COMMENT after "return" ... offending "}"
 * With an `offending` list the layer's state has a second bit, "a line end
 * came since the last terminal fed" (set by every `at` terminal; the first
 * bit and its forced insertion work as in note [semicolon insertion]).
 * A terminal T fed while the bit is set, or listed after `offending`, goes
 * to the parser as the element GM_POSTLEX_TRY | T, which means: if the
 * parser cannot take T but can take the inserted terminal, feed the
 * inserted terminal first, then T. A `rename F T'` pair makes the layer
 * feed T' in place of F after a line end (before the test), for the
 * grammar's "no line terminator here" before a terminal. At end of input
 * the same is tried
 * before $end. The decision is made by whoever holds the parser's stack
 * (the matcher's walk on its real and virtual stacks, runtime/layer.c; the
 * always-accepted tables when the anchored part of the stack decides it,
 * spanner/accept.c; `gramask parse`), so masks stay exact: the lexer state
 * carries the two bits (four flag values), the class sequences carry the
 * marked elements, and nothing is guessed. The inserted terminal should be
 * one of its own (not ";") so that the grammar can refuse insertions where
 * ECMAScript does (an empty statement, the header of a for statement).
 *
 * note [indentation]
 * Python's INDENT and DEDENT depend on a stack of indentation widths, which
 * no finite lexer state can hold. The grammar declares the layer with
 *     %indent _NEWLINE _INDENT _DEDENT "(" ")" "[" "]" "{" "}"
 * _NEWLINE is a terminal whose lexeme runs from a line end over blank and
 * comment lines to the next line's indentation; _INDENT and _DEDENT are
 * %declare'd; the pairs after them are the bracket terminals (open, close).
 * As in Lark's Indenter: while a bracket is open, _NEWLINE is dropped
 * (implicit line joining); otherwise _NEWLINE is fed, then the width w of
 * its lexeme (gm_postlex_width) is compared with the top of the width stack
 * (initially [0]): larger -> _INDENT (push w); smaller -> one _DEDENT per
 * popped level until w equals the top (no equal level: a syntax error). At
 * end of input one _DEDENT per level above 0. With the %indent directive the
 * input starts as if right after a line end (line_start: a virtual '\n'
 * precedes it), so the first line's indentation is measured too and an
 * indented first line is rejected, as Python does; grammars that get the
 * layer from Lark's PythonIndenter defaults keep Lark's behaviour (the first
 * line is not measured).
 * The matcher keeps the width stack and the bracket depth beside the LR
 * stack; the spanner keeps the width of a pending _NEWLINE lexeme in its
 * lexer state (widths up to GM_INDENT_MAX_WIDTH), so a token's class
 * records the width of each line end it completes, and the mask walk
 * applies the layer on the real stacks: masks stay exact.
 */
#ifndef GM_PARSER_POSTLEX_H
#define GM_PARSER_POSTLEX_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/mem.h"

#define GM_POSTLEX_NONE UINT32_MAX

/* A fed element marked "insert before it if the parser cannot take it"
   (note [offending-token insertion]); terminal ids stay below it. */
#define GM_POSTLEX_TRY 0x20000000u

/* The flag bit of note [offending-token insertion]: a line end came since the last terminal. */
#define GM_POSTLEX_LINE_SEEN 2u

/* Widest indentation the layer tracks; wider lines count as this wide (saturating). */
#define GM_INDENT_MAX_WIDTH 254

typedef struct gm_postlex {
    bool insertion;          /* semicolon insertion is on */
    uint32_t insert;         /* the terminal fed at a triggered line end (";") */
    uint8_t *at;             /* [nterminals] 1: a line-end terminal (never fed itself) */
    uint8_t *after;          /* [nterminals] 1: sets the flag when fed */
    uint32_t nterminals;
    bool offending;          /* note [offending-token insertion] is on (with insertion) */
    uint8_t *try_before;     /* [nterminals] 1: always fed marked GM_POSTLEX_TRY ("}") */
    uint32_t *renamed;       /* [nterminals] fed in its place after a line end, or
                                GM_POSTLEX_NONE (with offending on) */
    uint8_t *nolex;          /* [nterminals] 1: never added to a contextual lexer for the
                                rule (parser/contextual.c); only in a cfg, NULL when loaded */
    uint8_t *glued;          /* [nterminals] 1: nothing ignored may precede it (contextual.c);
                                NULL when none, or when loaded */

    bool indentation;        /* note [indentation] is on */
    uint32_t newline;        /* the _NEWLINE terminal */
    uint32_t indent;         /* the _INDENT terminal */
    uint32_t dedent;         /* the _DEDENT terminal */
    int8_t *bracket;         /* [nterminals] +1 opening bracket, -1 closing, 0 other */
    uint32_t tab_width;      /* columns a tab counts for (8) */
    bool line_start;         /* the input starts as if after a line end (a virtual '\n') */
} gm_postlex;

/*
 * The indentation width of a _NEWLINE lexeme, as Lark's Indenter computes
 * it: over the text after its last '\n', spaces count 1 and tabs
 * tab_width (saturating at GM_INDENT_MAX_WIDTH). The spanner tracks the
 * same count byte by byte: 0 at '\n', +1 at ' ', +tab_width at '\t', +0
 * otherwise.
 */
static inline uint32_t gm_postlex_width(const gm_postlex *pl, const uint8_t *lexeme, size_t len)
{
    uint32_t w = 0;
    for (size_t i = 0; i < len; i++) {
        w = lexeme[i] == '\n' ? 0 : w + (lexeme[i] == ' ') + (lexeme[i] == '\t') * pl->tab_width;
        if (w > GM_INDENT_MAX_WIDTH)
            w = GM_INDENT_MAX_WIDTH;
    }
    return w;
}

/*
 * One terminal from the lexer (ignored ones are never passed here): writes
 * what the parser gets (0 or 1 terminal, possibly marked GM_POSTLEX_TRY) to
 * *out and returns how many; updates *flag (bit 0: the last terminal
 * triggers insertion; GM_POSTLEX_LINE_SEEN with the offending rule on).
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
        if (*flag & 1)
            out[n++] = pl->insert;
        *flag = pl->offending ? GM_POSTLEX_LINE_SEEN : 0;
        return n;
    }
    bool line = pl->offending && (*flag & GM_POSTLEX_LINE_SEEN);
    *flag = pl->after[term];
    if (line && pl->renamed[term] != GM_POSTLEX_NONE)
        term = pl->renamed[term];
    bool try_it = line || (pl->offending && pl->try_before[term]);
    *out = try_it ? term | GM_POSTLEX_TRY : term;
    return 1;
}

/*
 * What the parser gets at end of input before $end (0 or 1 terminal); with
 * the offending rule on, the insertion before $end is then still tried.
 */
static inline uint32_t gm_postlex_end(const gm_postlex *pl, uint8_t flag, uint32_t *out)
{
    if (pl && pl->insertion && (flag & 1)) {
        *out = pl->insert;
        return 1;
    }
    return 0;
}

/*
 * The layers over a whole stream of lexemes (parser/postlex.c): what
 * `gramask parse` and tests feed the LR parser, one lexeme at a time,
 * exactly as note [semicolon insertion] and note [indentation] say. The
 * matcher applies the same rules on its persistent stacks; this is their
 * plain form, and the reference tests compare against.
 *
 * A value object that never allocates: widths strictly increase up the
 * stack and are at most GM_INDENT_MAX_WIDTH, so the stack and the output
 * of one lexeme have fixed bounds. Not thread-safe (one per stream).
 */
#define GM_POSTLEX_MAX_OUT (GM_INDENT_MAX_WIDTH + 3)

typedef struct gm_postlex_stream {
    const gm_postlex *pl;    /* the layers (NULL or none on: terminals pass through) */
    uint8_t flag;            /* semicolon insertion: the last terminal triggers it */
    int32_t depth;           /* open brackets (closing ones subtract) */
    uint32_t levels;         /* entries of width (1 + indentation levels) */
    uint8_t width[GM_INDENT_MAX_WIDTH + 2]; /* the width stack, width[0] = 0 */
    uint32_t out[GM_POSTLEX_MAX_OUT];       /* terminals of the last feed or end */
} gm_postlex_stream;

/* Starts a stream (pl may be NULL); pl must outlive it. */
void gm_postlex_stream_init(gm_postlex_stream *s, const gm_postlex *pl);

/*
 * Feeds one lexeme of terminal `term` (never an %ignore'd one) with its
 * bytes. Sets *out to the terminals the parser gets, in order (valid until
 * the next call), and *n to their number (0 when the layer drops the
 * lexeme). Errors (the stream is then unusable until init):
 * GM_ERR_REJECTED for a line end whose width matches no indentation level
 * (Python's "unindent does not match any outer indentation level"); the
 * message has no location (the caller knows where the lexeme is). Widths
 * saturate at GM_INDENT_MAX_WIDTH, as gm_postlex_width says.
 */
gm_status gm_postlex_stream_feed(gm_postlex_stream *s, uint32_t term, const uint8_t *lexeme,
                                 size_t len, const uint32_t **out, size_t *n, gm_error *err);

/* End of input: the terminals the parser gets before $end (an inserted ";",
   one dedent per open indentation level). */
void gm_postlex_stream_end(gm_postlex_stream *s, const uint32_t **out, size_t *n);

#endif
