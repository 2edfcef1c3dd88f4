/*
 * The lexer stage: terminal regexes -> one minimal byte-level DFA whose
 * accepting states are resolved to a single terminal -> the lexing
 * transducer (1-lookahead maximal munch; in Lark mode with bounded
 * backtracking, note [lexer backtracking]) that later stages run byte by byte.
 *
 * This header is the contract with the rest of gramask. The spanner walks
 * every vocabulary token through gm_lexer_step() from every state, so the
 * tables are plain arrays and the step is an inline function.
 *
 * note [lexing transducer]
 * A lexer state q is the DFA state reached by the bytes of the lexeme read
 * so far (state 0 = start, nothing pending). On byte b:
 *   - if next(q, b) exists, go there and emit nothing;
 *   - else if q accepts terminal T, emit T (the caller drops it when T is
 *     ignored) and restart on b: go to next(0, b), which must exist;
 *   - else the input is not in the lexical language (a lexing error).
 * At end of input the pending lexeme is emitted when q accepts, and q == 0
 * is a clean end; any other q is an error. Which terminal a lexeme is, and
 * how long, is Python's re.match's answer for each terminal (lexer/ordered.h
 * note [ordered matching]: lazy quantifiers, alternation order and
 * lookarounds mean what they mean there); among terminals, gramask's lexer
 * takes the longest, equal lengths settled by gm_terminal_spec priority,
 * then literal over regex, then declaration order, and in Lark mode the
 * lexer is Lark's own (note [Lark's lexer] in lexer_build.c).
 * A state may accept depending on the byte after the lexeme (a lookahead
 * that looks past its end): cond[q] then gives the terminal per next byte
 * class; accept[q] is the terminal when that byte ends the lexeme (it is
 * the same for every such byte, or the builder refuses the grammar).
 * No transition leads back to state 0 (the builder keeps the start state
 * apart, lexer/dfa.h note [start state]), so q == 0 means exactly "nothing
 * pending". Every state is live: the DFA is minimal and trimmed, so from
 * every state some lexeme can still be completed and Prod(q) is not empty
 * (the start state excepted when no terminal matches anything).
 *
 * note [lexer backtracking]
 * Lark's lexer matches with Python's re, which backtracks: when a longer
 * lexeme dies, it falls back to the longest match found so far. SynCode's
 * Python _NL needs this (a line end may continue into a docstring, so after
 * "\n    f" the lexeme is still alive; "o" kills it and Lark falls back to
 * the line end). gm_lexer_add_backtracking (lexer/backtrack.c) adds states
 * ndfa..nstates-1 for it, each (main, fallback T, relex r, window length):
 * the DFA state of the longer match, the terminal accepted where the window
 * began, and the transducer state reached by re-lexing the window's bytes
 * from the start. A byte the main match cannot take emits T and is stepped
 * from r, so the bytes never need to be kept. Bounds, the departures from
 * Lark: windows nest at most GM_LEX_BACKTRACK_MAX deep (a window's re-lexed
 * state may itself wait on a fallback; the depth of a state is one more
 * than its re-lexed state's), a window holds no space, tab or line break
 * when the grammar has an indentation layer (so a line width is the same
 * for the main match and the fallback), re-lexing it must complete no
 * lexeme, and when T is the
 * indentation layer's line end (line_end), the main match must still be
 * able to become T itself (Lark's idiom: a terminal that may run on, as _NL
 * into a docstring). Past any of these the longer match is committed to (a
 * lexing error if it dies, where Lark would still fall back). A token that
 * ends in s can be finished through the main match or through the fallback:
 * the spanner's Prod set of s holds the pair (T, Prod(r)) beside Prod(main)
 * (spanner/tables.h, note [fallback pairs]); a line end's width is not known
 * there, hence the last bound, under which Prod(main) holds T and the pair
 * adds nothing. gm_lexer_break gives what ends a pending lexeme for both
 * kinds of state; relex[s] < s, so a chain of breaks ends.
 */
#ifndef GM_LEXER_H
#define GM_LEXER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/mem.h"

/* Regex flags, as Python's re and Lark's /.../flags use them. */
enum {
    GM_RE_IGNORECASE = 1u << 0, /* i: Unicode simple case folding */
    GM_RE_DOTALL = 1u << 1,     /* s: '.' also matches '\n' */
    GM_RE_MULTILINE = 1u << 2,  /* m: accepted; only affects anchors, which terminals reject */
    GM_RE_VERBOSE = 1u << 3,    /* x: whitespace and # comments in the pattern are ignored */
    GM_RE_UNICODE = 1u << 4,    /* u: Unicode classes (the default for str patterns) */
    GM_RE_ASCII = 1u << 5,      /* a: \w \d \s and case folding are ASCII-only */
    GM_RE_LARK_MATCH = 1u << 6, /* no letter: the regex is a terminal, which means what re.match
                                   finds: lazy quantifiers and lookarounds are kept for the
                                   ordered determinizer (lexer/ordered.h); gm_lexer_build sets it */
    GM_RE_XGRAMMAR = 1u << 7,   /* no letter: XGrammar's additions, \u{...} \cX \e (?<name>...)
                                   (note [xgrammar regex] in regex_parse.c); ir/ebnf_regex.c sets it */
    GM_RE_XGR_FOLD_ASCII = 1u << 8, /* no letter: a leading (?i) folds ASCII letters only, as the
                                       i flag of XGrammar's Regex(...) does; ir/ebnf_parse.c sets it */
};

/*
 * Parses Lark/Python flag letters ("imsx", "i", ...) into GM_RE_* bits.
 * Returns the offset of the first unknown letter, or len when all are known.
 */
size_t gm_re_flags_parse(const char *letters, size_t len, unsigned *flags);

/* Sentinel for "no transition" and "no terminal". */
#define GM_LEX_DEAD UINT32_MAX
#define GM_LEX_NONE UINT32_MAX
/* The class argument of gm_lexer_accept for "a byte that ends the lexeme" (accept[q]). */
#define GM_LEX_STOP UINT32_MAX
/* Most windows nested in one another (note [lexer backtracking]). */
#define GM_LEX_BACKTRACK_MAX 8
/* Most terminals one byte can emit: a break per nested window, then the last lexeme's. */
#define GM_LEX_MAX_EMIT (GM_LEX_BACKTRACK_MAX + 1)

/* A terminal as the grammar front end hands it to the lexer builder. */
typedef struct gm_terminal_spec {
    const char *name;        /* NUL-terminated, for diagnostics and dumps */
    const char *pattern;     /* regex source, or the literal's UTF-8 bytes; NULL for a
                                %declare'd terminal that the lexer never produces */
    size_t pattern_len;
    unsigned flags;          /* GM_RE_*; for literals only GM_RE_IGNORECASE matters */
    int32_t priority;        /* higher wins among equal-length matches (Lark: default 0) */
    bool is_literal;         /* "..." string in the grammar (wins over a regex at equal priority) */
    bool ignored;            /* %ignore'd: lexed but never passed to the parser */
    bool lark;               /* Lark's lexer (lexer_build.c note [Lark's lexer]): set on every
                                spec or on none (gm_lexer_build_grammar sets them in Lark mode) */
    bool line_end;           /* the indentation layer's line end (note [lexer backtracking]) */
    gm_srcloc loc;           /* definition site for diagnostics (line 0 = unknown) */
} gm_terminal_spec;

/* Per-terminal data the lexer keeps (copied from the specs). */
typedef struct gm_lex_terminal {
    char *name;              /* owned copy */
    bool ignored;
    bool declared_only;      /* pattern was NULL */
} gm_lex_terminal;

/*
 * The lexing DFA. Immutable after gm_lexer_build(); safe to share between
 * threads. Terminal ids are the indices of the specs given to the builder.
 */
typedef struct gm_lexer {
    gm_mem *mem;             /* allocator of all arrays below (owned by the caller) */
    uint32_t nstates;        /* state 0 is the start state */
    uint32_t ndfa;           /* states below are the DFA's, the others backtracking states
                                (note [lexer backtracking]); nstates without backtracking */
    uint32_t nclasses;       /* byte equivalence classes */
    uint32_t nterminals;
    uint8_t byte_class[256]; /* byte -> class */
    /* [nstates * nclasses] next state, or GM_LEX_DEAD: read with gm_lexer_move. A built lexer
       of fewer than UINT16_MAX states keeps them in next16 (UINT16_MAX for GM_LEX_DEAD) and
       next is NULL: the tables are half the size, and a grammar under the contextual lexer
       has a lexer per set of acceptable terminals (gm_lexer_compact). */
    uint32_t *next;
    uint16_t *next16;
    /* [nstates] the row of next16 each state's transitions start from, or NULL (the state's
       own); where the state differs from that row, patch holds its cells (note [transition
       rows], lexer/compact.c): patch[patch_at[q] + c] is q's cell for class c when its upper
       half is q (its lower half is then the target, UINT16_MAX for GM_LEX_DEAD). patch and
       patch_at are NULL when no state differs from its row. */
    uint16_t *row16;
    uint32_t *patch_at;
    uint32_t *patch;
    uint32_t *accept;        /* [nstates] terminal accepted in the state when the next byte ends
                                the lexeme (or the input ends), or GM_LEX_NONE (always for
                                backtracking states) */
    uint32_t *cond;          /* [ndfa] GM_LEX_NONE, or the row of cond_rows that says which
                                terminal the state accepts per next byte class (a lookahead
                                past the lexeme's end); NULL when no state has one */
    uint32_t ncond;
    uint32_t *cond_rows;     /* [ncond * (nclasses + 1)] a terminal or GM_LEX_NONE per next
                                byte class, then for the end of input */
    uint32_t *bt_main;       /* [nstates - ndfa] DFA state of the longer match */
    uint32_t *bt_fallback;   /* [nstates - ndfa] terminal the window falls back to */
    uint32_t *bt_relex;      /* [nstates - ndfa] state of the re-lexed window (< the state) */
    uint32_t line_end;       /* the terminal of a gm_terminal_spec with line_end, or GM_LEX_NONE */
    uint32_t prod_words;     /* 64-bit words per row of prod */
    uint64_t *prod;          /* [nstates * prod_words] Prod(q): terminals whose lexeme can
                                still be completed from q (accept(q) included) */
    gm_lex_terminal *terminals; /* [nterminals] */
} gm_lexer;

/*
 * Builds the lexing DFA for specs[0..n). Errors (GM_ERR_SYNTAX for a bad
 * regex, GM_ERR_UNSUPPORTED for a construct gramask rejects, GM_ERR_GRAMMAR
 * for a terminal matching the empty string, GM_ERR_LIMIT for state limits)
 * name the terminal and locate the problem at the spec's loc plus the column
 * inside the pattern. Warnings (a terminal that can never be produced:
 * another always wins) go to warn, which may be NULL.
 *
 * In detail: err->line/column are the spec's loc (its definition site; no
 * location when loc.line is 0 and loc.file NULL), and the message reads
 * "terminal NAME: <what> at column C" followed by the pattern and a caret
 * under column C (bytes, from 1). Warnings carry code GM_ERR_GRAMMAR and
 * name the terminals that take the lexemes and why (priority, literal over
 * regex, declaration order), or say that the pattern matches nothing.
 * The regex dialect is lexer/regex.h note [regex dialect]. m is used for
 * all allocations, temporary ones included; *out is NULL on failure.
 * GM_ERR_ARGUMENT for NULL arguments or a spec without a name.
 */
gm_status gm_lexer_build(gm_mem *m, const gm_terminal_spec *specs, uint32_t n,
                         const gm_limits *limits, gm_warning_fn warn, void *warn_ud,
                         gm_lexer **out, gm_error *err);
void gm_lexer_destroy(gm_lexer *lx);

/*
 * Adds the backtracking states of note [lexer backtracking] (Lark's
 * semantics, bounded). GM_ERR_LIMIT past max_states of them. On failure
 * the lexer is unchanged, except when only the final gm_lexer_compact
 * fails (GM_ERR_NOMEM): the lexer then has its backtracking states, in
 * 32-bit tables.
 */
gm_status gm_lexer_add_backtracking(gm_lexer *lx, uint32_t max_states, gm_error *err);

/*
 * gm_lexer_build for a grammar; with lark set, as Lark runs it: Lark's
 * lexer (sets `lark` on every spec) which falls back to the longest match
 * (gm_lexer_add_backtracking, at most limits->max_dfa_states states), as
 * Python's re does.
 */
gm_status gm_lexer_build_grammar(gm_mem *m, gm_terminal_spec *specs, uint32_t n, bool lark,
                                 const gm_limits *limits, gm_warning_fn warn, void *warn_ud,
                                 gm_lexer **out, gm_error *err);

/*
 * Bytes a backtracking window may not hold: they move the line widths of
 * an indentation layer (only when the lexer has its line end).
 */
static inline bool gm_lexer_window_stop(const gm_lexer *lx, uint8_t b)
{
    return lx->line_end != GM_LEX_NONE && (b == ' ' || b == '\t' || b == '\n');
}

/*
 * The terminal state q accepts when a byte of class cls follows the lexeme
 * (cls == nclasses: the end of input; GM_LEX_STOP: any byte q has no
 * transition on), or GM_LEX_NONE (always for a backtracking state, whose
 * lexeme ends by gm_lexer_break).
 */
static inline uint32_t gm_lexer_accept(const gm_lexer *lx, uint32_t q, uint32_t cls)
{
    if (q >= lx->ndfa)
        return GM_LEX_NONE;
    if (lx->cond && lx->cond[q] != GM_LEX_NONE && cls != GM_LEX_STOP)
        return lx->cond_rows[(size_t)lx->cond[q] * (lx->nclasses + 1) + cls];
    return lx->accept[q];
}

/*
 * Whether DFA state q's lexeme is a match before some next byte. Reaching
 * such a state ends the window of an earlier match (note [lexer
 * backtracking]) even when the byte after it says no.
 */
static inline bool gm_lexer_may_accept(const gm_lexer *lx, uint32_t q)
{
    return q && q < lx->ndfa &&
           (lx->accept[q] != GM_LEX_NONE || (lx->cond && lx->cond[q] != GM_LEX_NONE));
}

/*
 * What ends the lexeme pending in q when a byte of class cls cannot
 * continue it (cls == nclasses: the end of input): the terminal *t it
 * becomes and the state *resume that takes the byte (0: a new lexeme).
 * False when q's lexeme is no terminal (a lexing error).
 */
static inline bool gm_lexer_break(const gm_lexer *lx, uint32_t q, uint32_t cls, uint32_t *t,
                                  uint32_t *resume)
{
    if (q < lx->ndfa) {
        *t = gm_lexer_accept(lx, q, cls);
        *resume = 0;
        return *t != GM_LEX_NONE;
    }
    *t = lx->bt_fallback[q - lx->ndfa];
    *resume = lx->bt_relex[q - lx->ndfa];
    return true;
}

/* The DFA state of transducer state q (the main match of a backtracking state). */
static inline uint32_t gm_lexer_dfa_state(const gm_lexer *lx, uint32_t q)
{
    return q < lx->ndfa || q == GM_LEX_DEAD ? q : lx->bt_main[q - lx->ndfa];
}

/* gm_lexer_move for a lexer without patch cells. */
static inline uint32_t gm_lexer_move_plain(const gm_lexer *lx, uint32_t q, uint32_t c)
{
    if (lx->next16) {
        size_t row = lx->row16 ? lx->row16[q] : q;
        uint16_t n = lx->next16[row * lx->nclasses + c];
        return n == UINT16_MAX ? GM_LEX_DEAD : n;
    }
    return lx->next[(size_t)q * lx->nclasses + c];
}

/* gm_lexer_move for a lexer with patch cells (note [transition rows]). */
static inline uint32_t gm_lexer_move_patched(const gm_lexer *lx, uint32_t q, uint32_t c)
{
    uint32_t p = lx->patch[lx->patch_at[q] + c];
    uint16_t n = p >> 16 == q ? (uint16_t)p : lx->next16[(size_t)lx->row16[q] * lx->nclasses + c];
    return n == UINT16_MAX ? GM_LEX_DEAD : n;
}

/*
 * The transition of state q on byte class c, or GM_LEX_DEAD. (Loops that
 * move millions of times pick one of the two above once: the test costs
 * 3-6 % of a profile build's instructions.)
 */
static inline uint32_t gm_lexer_move(const gm_lexer *lx, uint32_t q, uint32_t c)
{
    return lx->patch ? gm_lexer_move_patched(lx, q, c) : gm_lexer_move_plain(lx, q, c);
}

/*
 * Moves a built lexer's transitions from next to next16 when it has fewer
 * than UINT16_MAX states (the builders and the loader call it last), equal
 * rows shared when that saves a quarter of the table (row16).
 * GM_ERR_NOMEM (err filled) when the smaller table cannot be allocated;
 * the lexer is then as it was.
 */
gm_status gm_lexer_compact(gm_lexer *lx, gm_error *err);

/*
 * Packs a compact lexer's rows again with near rows patched (patch; note
 * [transition rows]) when that saves a quarter of the table, for lexers
 * that come many to a grammar: the contextual lexer's. A move then costs
 * one more load and test (6 % more instructions in Java's contextual
 * corpus trace, for 11 % less memory; the basic lexer, one per grammar,
 * would save a hundred kilobytes). Nothing to do for a lexer of 32-bit
 * tables or one already patched. GM_ERR_NOMEM as gm_lexer_compact.
 */
gm_status gm_lexer_patch_rows(gm_lexer *lx, gm_error *err);

/*
 * One byte of the transducer (note [lexing transducer]): the terminals it
 * completes go to emitted[0..*nemitted) (at most GM_LEX_MAX_EMIT). False on
 * a lexing error.
 */
static inline bool gm_lexer_step(const gm_lexer *lx, uint32_t q, uint8_t b, uint32_t *q_next,
                                 uint32_t *emitted, uint32_t *nemitted)
{
    uint32_t c = lx->byte_class[b];
    *nemitted = 0;
    for (;;) {
        uint32_t n = gm_lexer_move(lx, q, c);
        if (n != GM_LEX_DEAD) {
            *q_next = n;
            return true;
        }
        uint32_t t;
        if (q == 0 || !gm_lexer_break(lx, q, c, &t, &q))
            return false;
        emitted[(*nemitted)++] = t;
    }
}

/*
 * The deepest nesting the states re-lexing window[0..n) from the start reach
 * on the way (0 for a DFA state, 1 + its re-lexed state's for a
 * backtracking state), or UINT32_MAX when the re-lexing completes a lexeme or the window
 * holds a byte it may not (note [lexer backtracking]). lexer_run.c.
 */
uint32_t gm_lexer_window_depth(const gm_lexer *lx, const uint8_t *window, size_t n);

static inline bool gm_lexer_can_produce(const gm_lexer *lx, uint32_t q, uint32_t terminal)
{
    const uint64_t *row = lx->prod + (size_t)q * lx->prod_words;
    return (row[terminal >> 6] >> (terminal & 63)) & 1;
}

/* One lexeme of gm_lexer_run's output (ignored ones included). */
typedef struct gm_lexeme {
    uint32_t terminal;
    size_t start, end;       /* byte offsets [start, end) */
} gm_lexeme;

typedef gm_status (*gm_lexeme_fn)(void *ud, const gm_lexeme *lexeme);

/*
 * Lexes a whole buffer with the transducer, calling fn per lexeme. On a
 * lexing error returns GM_ERR_REJECTED with *error_offset at the offending
 * byte (or len for an unfinished lexeme at end of input).
 * As gm_lexer_step, nothing is emitted for a lexeme followed by a byte that
 * cannot start another one. A status other than GM_OK returned by fn stops
 * the run and is returned. Allocates nothing; error_offset may be NULL.
 */
gm_status gm_lexer_run(const gm_lexer *lx, const uint8_t *text, size_t len, gm_lexeme_fn fn,
                       void *ud, size_t *error_offset, gm_error *err);

/*
 * The one lexeme that starts at text[pos] (the next call starts where it
 * ends), as gm_lexer_run finds it, backing up included; at the end of the
 * input a lexeme with terminal GM_LEX_NONE. For a lexer that changes from
 * lexeme to lexeme (Lark's contextual lexer: the parser's state picks it).
 * Errors as gm_lexer_run's.
 */
gm_status gm_lexer_next(const gm_lexer *lx, const uint8_t *text, size_t len, size_t pos,
                        gm_lexeme *out, size_t *error_offset, gm_error *err);

#endif
