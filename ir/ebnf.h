/*
 * The grammar IR of the Earley engine: character-level rules built from
 * literals, code point sets, rule references, sequences, alternatives and
 * counted repetitions. Every front end produces it — GBNF and XGrammar's
 * EBNF (ebnf_parse.c), a regex as a whole grammar (ebnf_regex.c), JSON
 * Schema (schema/), TagDispatch (dispatch/) — and the engine compiles it to
 * byte-level rule automata (earley/fsm.h). gm_ebnf_print writes it back as
 * EBNF text that gm_ebnf_parse reads to the same grammar.
 *
 * note [ebnf ir]
 * Expressions are nodes in one array, referred to by index (GM_EX_NONE for
 * none); a node's children are a contiguous run of `kids`. Nodes are
 * immutable once added and may be shared (a DAG): builders reuse a node
 * wherever the same expression recurs. Literals are UTF-8 bytes (or any
 * bytes: a literal matches its bytes exactly); sets are Unicode code point
 * sets, matched as the UTF-8 encoding of one code point (surrogates match
 * nothing); byte sets match one raw byte (for regexes over bytes and free
 * text that may split a character). The language of a rule is the language
 * of its body with references replaced by the referenced rules' languages;
 * the grammar's language is its root rule's.
 *
 * note [until]
 * UNTIL(L, which) is the free text of TagDispatch (dispatch/): the byte
 * strings w in which no string of L occurs except at the very end —
 * no proper prefix of w contains a string of L — and
 *   which = i (arg < count): w ends with L[i];
 *   which = GM_EX_NONE:      w contains no string of L at all.
 * So `UNTIL(L, i) X_i` for each i, plus `UNTIL(L, NONE)`, reads free text up
 * to the first trigger (Aho–Corasick) and dispatches on it. Engines compile
 * it to the Aho–Corasick automaton of L; it is regular, like everything
 * else here that is not a rule reference.
 * Two more conditions, kept in the node (min: flags, max: a bound):
 *   UTF-8 (unless GM_UNTIL_BYTES): w is valid UTF-8 (the text and the end
 *     string L[i] both; so the text is complete where the end begins, and
 *     where UNTIL(L, NONE) ends). A prefix is readable while it is a prefix
 *     of valid UTF-8, so a token may stop inside a character that a later
 *     token completes, and nothing else. GM_UNTIL_BYTES: any bytes.
 *   max_chars (max, GM_EX_INF for none): the text — w less the end string
 *     L[i] — has at most max characters (code points; UTF-8 mode only).
 * GM_UNTIL_BEFORE (with which = i): the node matches the text alone, the
 * strings t such that t L[i] is in UNTIL(L, i); the end string is the
 * builder's to put after it. A region whose end must be known apart from
 * its text (a token budget, note [token budgets]) is written
 * REF(r) BYTES(L[i]) with r's body UNTIL(L, i, BEFORE).
 *
 * note [token budgets]
 * A rule with max_tokens = n (XGrammar's any_text max_tokens) is a region
 * whose every occurrence may hold at most n tokens: the matcher counts the
 * tokens accepted (gm_matcher_accept_token; raw bytes are not counted)
 * that overlap the occurrence's text, a token straddling into or out of it
 * included, and once an occurrence has n, it must end at that token
 * boundary if its text can end there (runtime/engine_budget.c); where it
 * cannot (inside a character, before a partial end string), it goes on
 * rather than leave no way out. The rule holds no references, so an
 * occurrence is its items with one origin.
 */
#ifndef GM_EARLEY_EBNF_H
#define GM_EARLEY_EBNF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "lexer/cpset.h"

#define GM_EX_NONE UINT32_MAX
#define GM_EX_INF UINT32_MAX   /* REPEAT max: unbounded */

/*
 * Limits of the IR, enforced by gm_ebnf_check (GM_ERR_LIMIT naming the
 * rule) and by the front ends (naming the place in the text): a finite
 * REPEAT bound is at most GM_EBNF_MAX_REPEAT (the engine compresses large
 * bounds, so they cost no states), and an expression is at most
 * GM_EBNF_MAX_DEPTH nodes deep (so that recursive walks over the IR have
 * bounded depth; text may nest parentheses that deep).
 */
#define GM_EBNF_MAX_REPEAT 1000000u
#define GM_EBNF_MAX_DEPTH 1000u

typedef enum gm_ex_kind {
    GM_EX_EMPTY,    /* matches "" */
    GM_EX_NOTHING,  /* matches nothing (an empty set, a rule with no alternatives left) */
    GM_EX_BYTES,    /* the literal bytes[off .. off+len) */
    GM_EX_SET,      /* one code point of sets[set], as UTF-8 */
    GM_EX_BYTESET,  /* one byte b with bit b of bytesets[set] set */
    GM_EX_REF,      /* rule `rule` */
    GM_EX_SEQ,      /* kids[first .. first+count) in order (count >= 2) */
    GM_EX_ALT,      /* one of kids[first .. first+count) (count >= 2) */
    GM_EX_REPEAT,   /* kids[first] repeated min..max times (max may be GM_EX_INF) */
    GM_EX_TOKEN,    /* one special token of the vocabulary, named by its text
                       bytes[first .. first+count): produced only by that token id
                       (`<|channel|>`), resolved when the grammar meets a vocabulary */
    GM_EX_UNTIL,    /* free text up to the first occurrence of one of the strings
                       L = kids[first .. first+count) (BYTES nodes, non-empty):
                       note [until]; min holds GM_UNTIL_* flags, max the most
                       characters (GM_EX_INF: any number) */
} gm_ex_kind;

typedef struct gm_ex {
    uint8_t kind;       /* gm_ex_kind */
    uint32_t first;     /* SEQ, ALT, REPEAT: index into kids; BYTES, TOKEN: offset into bytes */
    uint32_t count;     /* SEQ, ALT: number of kids; BYTES, TOKEN: length */
    uint32_t arg;       /* SET, BYTESET: set index; REF: rule index; UNTIL: which */
    uint32_t min, max;  /* REPEAT; UNTIL: flags and max_chars */
} gm_ex;

#define GM_UNTIL_BYTES 1u  /* UNTIL flag: any bytes, not only valid UTF-8 (note [until]) */
#define GM_UNTIL_BEFORE 2u /* UNTIL flag: w less its end string L[which] (note [until]) */

typedef struct gm_ebnf_rule {
    char *name;         /* NUL-terminated, owned */
    uint32_t body;      /* node, or GM_EX_NONE while declared but not defined */
    uint32_t lookahead; /* XGrammar's `(= ...)` after the body, or GM_EX_NONE (note
                           [lookahead assertions] in ebnf_parse.c says what is done with it) */
    gm_srcloc loc;      /* where it is defined (loc.file points into the grammar's files) */
    uint8_t noinline;   /* never inlined into its users (note [rule inlining] in fsm_build.c) */
    uint32_t max_tokens; /* token budget of each occurrence (note [token budgets]), or
                            GM_EX_INF; only on noinline rules whose automaton reads bytes
                            alone (gm_fsm_check_budgets): any_text's region, or XGrammar's
                            r[max_tokens=N] (note [rule attributes] in ebnf_parse.c) */
    uint8_t has_temperature; /* XGrammar's r[temperature=t]: sampling temperature while
                                the output is inside an occurrence (note [rule
                                temperatures] in earley/temperature.c); only on noinline
                                rules; changes no mask */
    float temperature;       /* finite, >= 0, when has_temperature */
    uint32_t max_chars;      /* XGrammar's r[max_chars=n], or GM_EX_INF: already applied
                                to the body (note [rule max_chars] in ebnf_max_chars.c),
                                kept for printing */
    uint32_t chars_src;      /* max_chars built on a regular body (note [max_chars on regular
                                bodies]): the body as written, printed in place of the
                                built one; else GM_EX_NONE */
    uint8_t chars_helper;    /* a state rule of such a build: not printed */
    char *capture;      /* XGrammar's capture name (note [captures] in earley/capture.c),
                           owned, or NULL; only on noinline rules */
    uint8_t lazy;       /* XGrammar's `rule[lazy]` (note [lazy rules] in earley/fsm_build.c):
                           only its shortest matches; only on noinline rules */
} gm_ebnf_rule;

typedef struct gm_ebnf {
    gm_mem *mem;
    gm_ex *nodes;
    uint32_t nnodes, nodes_cap;
    uint32_t *kids;
    uint32_t nkids, kids_cap;
    uint8_t *bytes;     /* literal bytes of all BYTES nodes */
    uint32_t nbytes, bytes_cap;
    gm_cpset *sets;
    uint32_t nsets, sets_cap;
    uint32_t (*bytesets)[8];  /* 256-bit byte sets */
    uint32_t nbytesets, bytesets_cap;
    gm_ebnf_rule *rules;
    uint32_t nrules, rules_cap;
    uint32_t root;      /* root rule, GM_EX_NONE until set */
    char **files;       /* names that locations point to (owned) */
    uint32_t nfiles;
    void *index;        /* rule name -> index (owned by ebnf.c) */
} gm_ebnf;

void gm_ebnf_init(gm_ebnf *g, gm_mem *m);
void gm_ebnf_free(gm_ebnf *g);

/*
 * Adding nodes. Each returns the new node's index, or GM_EX_NONE when memory
 * ran out (the grammar stays valid; report with gm_mem_fail). Children must
 * already exist. add_seq / add_alt with n == 0 give EMPTY / NOTHING and
 * with n == 1 return ids[0] itself; add_set takes ownership of *set
 * (reset to empty; freed on failure).
 */
uint32_t gm_ebnf_add_empty(gm_ebnf *g);
uint32_t gm_ebnf_add_nothing(gm_ebnf *g);
uint32_t gm_ebnf_add_bytes(gm_ebnf *g, const void *bytes, size_t len);
uint32_t gm_ebnf_add_set(gm_ebnf *g, gm_cpset *set);
uint32_t gm_ebnf_add_byteset(gm_ebnf *g, const uint32_t bits[8]);
uint32_t gm_ebnf_add_ref(gm_ebnf *g, uint32_t rule);
uint32_t gm_ebnf_add_seq(gm_ebnf *g, const uint32_t *ids, size_t n);
uint32_t gm_ebnf_add_alt(gm_ebnf *g, const uint32_t *ids, size_t n);
uint32_t gm_ebnf_add_repeat(gm_ebnf *g, uint32_t child, uint32_t min, uint32_t max);
uint32_t gm_ebnf_add_token(gm_ebnf *g, const void *text, size_t len);
/* UNTIL(L, which) of note [until]: strings = ids of n >= 1 non-empty BYTES nodes;
   flags GM_UNTIL_*; max_chars GM_EX_INF for no bound (a bound needs UTF-8 mode). */
uint32_t gm_ebnf_add_until(gm_ebnf *g, const uint32_t *strings, size_t n, uint32_t which,
                           uint32_t flags, uint32_t max_chars);

/*
 * note [token id sets]
 * XGrammar's Token(ids) and ExcludeToken(ids) name tokens by id, not by
 * text. Such a set is a GM_EX_TOKEN whose text is GM_ETOK_IDS or
 * GM_ETOK_EXCLUDE (two bytes that no UTF-8 text holds, so no tokenizer's
 * special token) followed by the ids in decimal, ascending, without
 * duplicates, separated by ','. GM_ETOK_IDS: exactly the tokens with these
 * ids; GM_ETOK_EXCLUDE: every token of the vocabulary but these, its stop
 * (EOS) ids and its padding ids. The engine resolves the ids when the
 * grammar meets a vocabulary (an id past it is GM_ERR_GRAMMAR). Unlike a
 * special token, a token in such a set may be ordinary text too, which
 * other parts of the grammar can read byte by byte: a matcher follows both
 * readings (earley/engine_api.c), as XGrammar does. gm_ebnf_print writes
 * them as Token(1, 2) / ExcludeToken(1, 2).
 */
#define GM_ETOK_IDS "\xff\xfd"
#define GM_ETOK_EXCLUDE "\xff\xfc"
/* The set node of n ids (any order, duplicates allowed; sorted and deduplicated here). */
uint32_t gm_ebnf_add_token_ids(gm_ebnf *g, bool exclude, const uint32_t *ids, size_t n);
/*
 * Whether text[0..len) is a token id set; then *exclude, and *next is the
 * offset of its first id (read them with gm_ebnf_token_ids_next).
 */
bool gm_ebnf_token_ids(const uint8_t *text, size_t len, bool *exclude, size_t *next);
/* The id at *next (advanced past it); false at the end. */
bool gm_ebnf_token_ids_next(const uint8_t *text, size_t len, size_t *next, uint32_t *id);

/*
 * Rules. gm_ebnf_rule_get returns the index of the rule called name,
 * declaring it (body GM_EX_NONE) when new, or GM_EX_NONE when memory ran
 * out; gm_ebnf_rule_find only looks it up. A front end defines a rule by
 * setting its body (and loc). gm_ebnf_fresh_rule declares a rule under a
 * new name made from `hint` (hint, hint_1, hint_2, ...), for builders that
 * need helper rules.
 */
uint32_t gm_ebnf_rule_get(gm_ebnf *g, const char *name, size_t len);
uint32_t gm_ebnf_rule_find(const gm_ebnf *g, const char *name, size_t len);
uint32_t gm_ebnf_fresh_rule(gm_ebnf *g, const char *hint);
/* A file name for locations, owned by g (NULL when memory ran out). */
const char *gm_ebnf_file(gm_ebnf *g, const char *name);

/*
 * Checks a finished grammar: a root is set; every referenced rule is
 * defined (GM_ERR_GRAMMAR naming the rule and where it is used, when the
 * front end did not already report it); every rule reachable from the root
 * derives some string (GM_ERR_GRAMMAR "rule X derives no finite string"
 * with its location: this catches `a ::= a` and recursion without a way
 * out); the root's language is not empty. Rules not reachable from the
 * root are allowed (a warning through opts->warn when given). limits: at
 * most limits->max_nfa_states nodes (GM_ERR_LIMIT).
 */
gm_status gm_ebnf_check(const gm_ebnf *g, const gm_grammar_options *opts, gm_error *err);

/*
 * Writes g as EBNF text (XGrammar's dialect, which gm_ebnf_parse reads
 * back to a grammar with the same language): one `name ::= body` line per
 * rule, the root first, literals and sets escaped so that the text is
 * ASCII.
 */
void gm_ebnf_print(const gm_ebnf *g, gm_strbuf *out);

#endif
