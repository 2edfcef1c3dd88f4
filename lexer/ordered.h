/*
 * The ordered determinizer: the lexer's DFA with Python's re.match meaning,
 * lazy quantifiers, alternation order and lookarounds included.
 *
 * note [ordered matching]
 * Python's re.match is a backtracking search that returns the first way
 * the pattern matches, trying the paths of the NFA in order (alternatives
 * left to right, a greedy loop before its exit, a lazy one after). Its
 * match end is what a DFA over ordered lists of NFA paths finds, as RE2's
 * DFA does for leftmost-first matching: a state is the list of live paths
 * in priority order (a path reached again later is dropped: same future,
 * lower priority), and once a path matches, every path after it is cut, for
 * it could only give a match Python never reaches. The last position where
 * the DFA had a match is then Python's match end. Lark's lexer is one
 * re.match over the alternation of its terminals in Lark's order, so with
 * the cut across terminals (global_cut) the DFA's longest match is Lark's
 * lexeme, whatever the tie rules make of it; gramask's own lexer cuts only
 * within a terminal (each terminal means what re.match finds for it) and
 * takes the longest match over terminals, ties settled by the caller.
 *
 * Lookarounds are conditions on a path. A lookahead (?=Y) or (?!Y) starts
 * Y's DFA beside the path, which then carries the condition (the look and
 * Y's state) until Y matches or dies: the path is killed or freed of it.
 * So the language stays regular, whatever Y's length. A path that reaches
 * its terminal's end with a condition still open is a match only if the
 * bytes after the lexeme settle it: gramask decides a lexeme on the one
 * byte after it, so the condition must be settled by that byte (or the end
 * of input): the state's label then depends on the next byte (label rows,
 * below); a lookahead that would need more is refused. A lookbehind (?<=S)
 * or (?<!S) is checked against the last bytes of the lexeme, which the
 * state then carries (history): S must be a fixed sequence of ASCII
 * characters (sets), and it may not look before the lexeme's start (the
 * previous lexeme, which Lark's re sees and gramask's states do not).
 *
 * Markers (Lark's string folding, lexer_build.c note [Lark's lexer]) are
 * extra NFA fragments matched in plain subset fashion beside the paths:
 * they only tell which whole strings the lexeme equals.
 *
 * Labels. The caller's resolve function turns what matched at a state
 * (terminals in priority order, markers present) into one terminal. With
 * lookaheads past the lexeme's end the answer depends on the next byte, so
 * each state has a label per byte and for the end of input (a row of 257);
 * a state whose row is one terminal (or none) for every byte gets that
 * terminal as its gm_dfa label, any other the label nterminals + k for
 * row k of `rows`. Minimization keeps states with different labels apart.
 */
#ifndef GM_LEXER_ORDERED_H
#define GM_LEXER_ORDERED_H

#include <stdbool.h>
#include <stdint.h>

#include "gramask.h"
#include "lexer/dfa.h"
#include "lexer/nfa.h"

/* Longest lookbehind, in bytes. */
#define GM_LOOK_BEHIND_MAX 4
/* A row of labels: one per byte value, then the end of input. */
#define GM_ORD_ROW 257

typedef struct gm_look {
    uint8_t kind;            /* GM_RX_AHEAD, GM_RX_NOT_AHEAD, GM_RX_BEHIND, GM_RX_NOT_BEHIND */
    uint32_t term;           /* the terminal whose pattern holds it (errors) */
    uint32_t at;             /* its byte offset in that pattern (errors) */
    gm_dfa body;             /* lookahead: its body's DFA (a label: the body matched) */
    uint32_t width;          /* lookbehind: the bytes it looks back over */
    uint8_t set[GM_LOOK_BEHIND_MAX][32]; /* lookbehind: the bytes allowed at each, earliest first */
} gm_look;

/*
 * The body of the lookaround at node (a GM_RX_LOOK of re) into *lk (kind,
 * at, and the DFA or byte sets; term is left 0). GM_ERR_UNSUPPORTED with
 * err->column for a lookaround inside it or a lookbehind that is not a
 * fixed string of ASCII characters of at most GM_LOOK_BEHIND_MAX; limits
 * may be NULL. Free lk->body with gm_dfa_free.
 */
struct gm_regex;
gm_status gm_look_compile(const struct gm_regex *re, uint32_t node, gm_mem *m,
                          const gm_limits *limits, gm_look *lk, gm_error *err);

/*
 * The label of a state for one next byte: matched[0..n) are the terminals
 * whose match there stands, in priority order (at most one with
 * global_cut), markers[0..nm) the markers the lexeme equals (ascending).
 * Returns a terminal or GM_LEX_NONE.
 */
typedef uint32_t (*gm_ord_resolve_fn)(void *ud, const uint32_t *matched, uint32_t n,
                                      const uint32_t *markers, uint32_t nm);

typedef struct gm_ord_input {
    const gm_nfa *nfa;         /* finished; a final state is tagged with its terminal id */
    uint32_t nterminals;
    const uint32_t *owner;     /* [nfa states] terminal of each path state (GM_LEX_NONE: other) */
    bool global_cut;           /* a match cuts every path after it, not just its terminal's */
    const uint8_t *ordered;    /* [nterminals] without global_cut: whether a match of the terminal
                                  cuts its later paths (re.match's answer); a terminal without
                                  means its whole language (every path kept). NULL: all do */
    const gm_look *looks;      /* [nfa->nlooks] */
    const uint32_t *marker_entry; /* [nmarkers] NFA entry of each marker; its final state is
                                     tagged nterminals + marker id */
    uint32_t nmarkers;
    gm_ord_resolve_fn resolve;
    void *resolve_ud;
    uint32_t max_states;       /* 0: gm_limits default */
} gm_ord_input;

typedef struct gm_ord_rows {
    uint32_t n;
    uint32_t *rows;            /* [n * GM_ORD_ROW] terminal or GM_LEX_NONE */
} gm_ord_rows;

/*
 * The DFA of the ordered lists (start state kept apart, note [start
 * state]), labels as above, rows in *rows (allocated from m; free with
 * gm_mem_free(m, rows->rows)). GM_ERR_UNSUPPORTED for a lookaround gramask
 * cannot follow: err names it, and *bad_look is its index (the caller
 * locates it), else UINT32_MAX.
 */
gm_status gm_ord_determinize(const gm_ord_input *in, gm_mem *m, gm_dfa *out, gm_ord_rows *rows,
                             uint32_t *bad_look, gm_error *err);

/*
 * What re.match finds at the start of text[0..len) for the ordered NFA of
 * `in`: its length in *match_len (-1: no match) and its label (the resolve
 * function's answer). The steps of gm_ord_determinize, run on the bytes
 * without building states (the reference the tests and Lark's string
 * folding use). Errors as gm_ord_determinize.
 */
gm_status gm_ord_match(const gm_ord_input *in, gm_mem *m, const uint8_t *text, size_t len,
                       long *match_len, uint32_t *label, uint32_t *bad_look, gm_error *err);

#endif
