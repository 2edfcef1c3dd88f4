/*
 * Terminal regexes: Python `re` syntax (as Lark uses it) parsed into a small
 * AST of code point sets, raw bytes, concatenation, alternation and counted
 * repetition. Flags are applied while parsing (case-insensitive literals
 * become case-closed sets, '.' and \w take their flag-dependent sets), so
 * the AST has no flags and no groups left.
 *
 * note [regex dialect]
 * Accepted, with Python 3.11's meaning: literals; escapes \a \f \n \r \t
 * \v \\ \xhh \uhhhh \Uhhhhhhhh, octal \0, \0oo and \ooo, and any escaped
 * non-letter; '.'; classes [...] with ranges, negation and escapes (\b is
 * backspace inside a class); \d \w \s \D \W \S (note [Python classes]);
 * '|'; groups (...), (?:...), (?P<name>...); comments (?#...); quantifiers
 * * + ? {m} {m,} {,n} {m,n}, and their lazy (*?) and possessive (*+)
 * forms; flags i s m x u a as suffix flags, as global (?flags) at the start
 * and scoped (?flags-flags:...).
 *
 * Lazy and possessive quantifiers give the greedy language: the language
 * re.fullmatch accepts (the `regex` command's meaning). Possessive forms
 * differ from Python's backtracking semantics: Python's `a*+a` matches
 * nothing since the possessive loop never gives an `a` back, while gramask
 * reads it as `a*a`. Atomic groups (?>...) are rejected for that reason.
 * A terminal (GM_RE_LARK_MATCH, set by the lexer builder) keeps lazy
 * quantifiers and lookarounds in the AST, and the lexer gives it the
 * meaning of Python's re.match (lexer/ordered.h, note [ordered matching]);
 * there a possessive quantifier is rejected.
 *
 * Rejected with GM_ERR_UNSUPPORTED, naming the construct and its column:
 * backreferences \1 and (?P=name), lookahead (?=...) (?!...), lookbehind
 * (?<=...) (?<!...) (outside terminals; in terminals, the lexer refuses the
 * few it cannot follow: lexer/ordered.h), conditionals (?(id)...), atomic
 * groups, anchors ^ $ \A \Z, word boundaries \b \B, named characters
 * \N{...}, the flags L (locale) and t (template). Everything Python
 * rejects is GM_ERR_SYNTAX.
 * Counts above gm_limits.max_regex_repeat and nesting deeper than
 * GM_REGEX_MAX_DEPTH are GM_ERR_LIMIT.
 *
 * Code points that cannot appear in UTF-8 (surrogates) match nothing.
 */
#ifndef GM_LEXER_REGEX_H
#define GM_LEXER_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "lexer/cpset.h"
#include "lexer/uclass.h"
#include "base/mem.h"
#include "base/strbuf.h"

#define GM_REGEX_MAX_DEPTH 200
#define GM_RX_INF UINT32_MAX

typedef enum gm_rx_kind {
    GM_RX_EMPTY,  /* matches "" */
    GM_RX_CHAR,   /* one code point: cp */
    GM_RX_SET,    /* a code point set: sets[set] */
    GM_RX_BYTE,   /* one raw byte: cp (literals that are not UTF-8) */
    GM_RX_CONCAT, /* kids[first .. first+count) in order */
    GM_RX_ALT,    /* kids[first .. first+count) */
    GM_RX_REPEAT, /* kids[first] repeated min..max times (max may be GM_RX_INF) */
    GM_RX_LOOK,   /* lookaround (?=..) (?!..) (?<=..) (?<!..) on kids[first]: only under
                     GM_RE_LARK_MATCH (lexer/ordered.h) */
} gm_rx_kind;

/* gm_rx_node.look of a GM_RX_LOOK node. */
enum { GM_RX_AHEAD, GM_RX_NOT_AHEAD, GM_RX_BEHIND, GM_RX_NOT_BEHIND };

typedef struct gm_rx_node {
    gm_rx_kind kind;
    uint32_t cp;        /* CHAR, BYTE */
    uint32_t set;       /* SET */
    uint32_t first;     /* CONCAT, ALT, REPEAT: index into kids */
    uint32_t count;
    uint32_t min, max;  /* REPEAT */
    bool lazy;          /* REPEAT written *? +? ?? {m,n}? (kept only under GM_RE_LARK_MATCH) */
    uint8_t look;       /* LOOK: GM_RX_AHEAD ... */
    uint32_t at;        /* LOOK and lazy REPEAT: byte offset of the construct, for errors */
} gm_rx_node;

typedef struct gm_regex {
    gm_mem *mem;
    gm_rx_node *nodes;
    size_t nnodes, nodes_cap;
    uint32_t *kids;     /* child node ids of CONCAT/ALT/REPEAT, contiguous per node */
    size_t nkids, kids_cap;
    gm_cpset *sets;
    size_t nsets, sets_cap;
    uint32_t root;
} gm_regex;

/*
 * Appending nodes (regex_ast.c): a childless node, a node with children
 * ids[0..n), a set node taking ownership of *set (reset to empty, or freed
 * on failure). UINT32_MAX when memory runs out; the caller reports it.
 */
uint32_t gm_regex_add_node(gm_regex *re, gm_rx_kind kind);
uint32_t gm_regex_add_parent(gm_regex *re, gm_rx_kind kind, const uint32_t *ids, size_t n);
uint32_t gm_regex_add_set(gm_regex *re, gm_cpset *set);

void gm_regex_init(gm_regex *re, gm_mem *m);
void gm_regex_free(gm_regex *re);

/*
 * Parses pattern[0..len) (UTF-8) with GM_RE_* flags into re (which must be
 * freshly initialized). On error returns GM_ERR_SYNTAX, GM_ERR_UNSUPPORTED,
 * GM_ERR_LIMIT or GM_ERR_NOMEM and fills err with a message that names the
 * problem (without location) and err->column = its 1-based byte column in
 * the pattern (0 when it concerns the whole pattern). limits may be NULL
 * (defaults).
 */
gm_status gm_regex_parse(gm_regex *re, gm_uclass *uc, const char *pattern, size_t len,
                         unsigned flags, const gm_limits *limits, gm_error *err);

/*
 * Builds the AST of a string literal matched byte for byte; with
 * GM_RE_IGNORECASE its UTF-8 characters match case-insensitively as in
 * Python (bytes that are not UTF-8 still match exactly).
 */
gm_status gm_regex_literal(gm_regex *re, gm_uclass *uc, const char *bytes, size_t len,
                           unsigned flags, gm_error *err);

/* "lookahead (?=...)", "negative lookbehind (?<!...)", ... for a GM_RX_LOOK kind. */
const char *gm_regex_look_name(int look);

/*
 * The fewest and most code points a match of node can have (*max UINT32_MAX:
 * unbounded). Not exact: Python's getwidth, which orders Lark's lexer and
 * counts a set that matches nothing as one character. exact: a node that
 * matches nothing gives *min UINT32_MAX and *max 0.
 */
void gm_regex_width(const gm_regex *re, uint32_t node, bool exact, uint32_t *min, uint32_t *max);

/* Whether the regex matches the empty string. */
bool gm_regex_nullable(const gm_regex *re, uint32_t node);

/*
 * A lower bound on the NFA states the regex needs (saturating), so that
 * hopeless sizes such as (a{1000}){1000} fail before anything is built.
 */
uint64_t gm_regex_min_states(const gm_regex *re, uint32_t node);

/*
 * Formats a parse error for display: "what at column N" followed by the
 * pattern and a caret line. Writes at most cap bytes (NUL-terminated).
 */
void gm_regex_format_error(char *buf, size_t cap, const gm_error *err, const char *pattern,
                           size_t len);

#endif
