/*
 * The schema compiler's shared state (schema.h describes the pipeline).
 * Only the .c files of schema/ include this header.
 *
 * note [conjunctions]
 * What the compiler turns into a rule is a conjunction: a set of schema
 * nodes (DOM values that are schemas) an instance must all satisfy, kept
 * sorted so that equal sets are one key (gm_intern). A property whose
 * schema comes from several allOf branches, a $ref with sibling keywords,
 * the branch of an anyOf distributed over the rest: all are conjunctions.
 * An element may carry SC_NOALT: "this node with its anyOf/oneOf already
 * distributed" (the chosen branches are other elements), so distributing
 * terminates. Each conjunction becomes one rule (or an inline expression
 * when small and not recursive), memoized: recursion through $ref gives
 * recursive rules.
 */
#ifndef GM_SCHEMA_INTERNAL_H
#define GM_SCHEMA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "gramask.h"
#include "base/hash.h"
#include "base/strbuf.h"
#include "base/vec.h"
#include "schema/decimal.h"
#include "schema/irb.h"
#include "schema/jindex.h"
#include "schema/json.h"
#include "lexer/dfa.h"

#define SC_NOALT 0x80000000u   /* conjunction element flag (note [conjunctions]) */
#define SC_MAX_DISTRIBUTE 256  /* branch combinations of one anyOf/oneOf distribution */
#define SC_MAX_INDENT_DEPTH 32 /* nesting levels of GM_SCHEMA_WS_INDENT grammars */

/* Drafts, in order. */
enum { SC_DRAFT4 = 4, SC_DRAFT6 = 6, SC_DRAFT7 = 7, SC_DRAFT2019 = 2019, SC_DRAFT2020 = 2020 };

/* JSON types as bits (INT is a subset of NUM: "number" is NUM|INT). */
enum {
    T_NULL = 1, T_BOOL = 2, T_OBJ = 4, T_ARR = 8, T_STR = 16, T_INT = 32, T_NUM = 64,
    T_ALL = 127,
};

typedef struct sctx sctx;

/* Shared rules, built on first use (flexible / compact whitespace; indent mode keys them by depth). */
typedef struct sc_shared {
    uint32_t ws;            /* whitespace run */
    uint32_t chr;           /* one JSON string character (note [string encoding]) */
    uint32_t string;
    uint32_t number;
    uint32_t integer;
    uint32_t value[SC_MAX_INDENT_DEPTH + 1]; /* any JSON value at depth d (index 0 in other modes) */
} sc_shared;

struct sctx {
    gm_mem *mem;
    gm_schema_options opts;
    gm_jdoc doc;
    gm_ebnf *g;
    gm_irb b;
    gm_error *err;
    gm_status st;
    uint32_t default_draft;
    const char *raw_exclude; /* text no free string may hold (note [excluded text]), or NULL */
    const char *const *raw_excludes; /* with more than one: all of them (raw_exclude the first) */
    size_t n_raw_excludes;

    /* per DOM value (index: gm_jv.id); synthesized schemas (synth.c) extend them */
    uint32_t nids, ids_cap;
    const gm_jv **value;    /* id -> value */
    uint32_t *parent;       /* id of the containing value, UINT32_MAX for the root */
    uint16_t *draft;        /* draft of a schema node (0: not visited as a schema) */
    const char **base;      /* base URI of a schema node (no fragment) */

    /* resources and anchors: interned absolute URIs -> node ids */
    gm_intern uris;
    GM_VEC(uint32_t) uri_node;
    gm_intern dyn;          /* $dynamicAnchor / $recursiveAnchor names */
    GM_VEC(uint32_t) dyn_node;
    GM_VEC(uint32_t) dyn_count;

    /* the expression of a conjunction of schemas: compile.c's, which the
       emitters reach through sc_conj (note [emitter recursion] in emit.h) */
    uint32_t (*conj_of)(sctx *c, const uint32_t *conj, size_t n, uint32_t depth);

    /* conjunction memo (note [conjunctions]) */
    gm_intern conj;
    GM_VEC(uint32_t) conj_expr;  /* expression, or GM_EX_NONE while being compiled */
    GM_VEC(uint32_t) conj_rule;  /* rule made for a recursive use, or GM_EX_NONE */

    /* derived schemas (synth.c), made once per (kind, node, member) so that conjunctions
       holding them stay equal from one shape to the next */
    gm_intern derived;
    GM_VEC(uint32_t) derived_id;

    /* keys that are none of a set of listed names (emit_struct.c): interned sorted names ->
       the rule of those keys */
    gm_intern key_sets;
    GM_VEC(uint32_t) key_set_rule;

    /* compiled patterns: interned (flags, text) -> index into pats */
    gm_intern pat_index;
    GM_VEC(struct sc_pattern *) pats;

    /* enum lists indexed for membership (jindex.h) */
    sc_jindex enums;

    sc_shared sh;
    uint32_t depth;         /* recursion guard of the compiler */
    uint32_t relaxations;   /* warnings issued (lenient) */
};

/* ---- errors and messages (resolve.c) ---- */

/* The JSON pointer of a value ("" for the root), appended to out. */
void sc_pointer(sctx *c, uint32_t id, gm_strbuf *out);
/*
 * An error about keyword `kw` of schema node `node` (kw may be NULL: the
 * node itself): "file:line:col: <message> (keyword 'kw' at /pointer)".
 * Returns GM_EX_NONE so that emitters can `return sc_fail(...)`.
 */
uint32_t sc_fail(sctx *c, gm_status code, uint32_t node, const char *kw, const char *fmt, ...)
    GM_PRINTF(5, 6);
/*
 * What a grammar cannot enforce: an error naming keyword and pointer, or
 * with opts.lenient a warning ("relaxed: ...") and true (go on with a
 * superset).
 */
bool sc_relax(sctx *c, uint32_t node, const char *kw, const char *why);
/*
 * What an exact grammar exists for but passes a limit of gramask (why
 * names the limit): GM_ERR_LIMIT, or with opts.lenient the warning and
 * superset of sc_relax.
 */
bool sc_relax_limit(sctx *c, uint32_t node, const char *kw, const char *why);
/* A warning that is not a relaxation (an unknown format). */
void sc_warn(sctx *c, uint32_t node, const char *kw, const char *fmt, ...) GM_PRINTF(4, 5);

/* ---- resources (resolve.c) ---- */

gm_status sc_index(sctx *c);
/* The schema a $ref (or $dynamicRef, $recursiveRef) names; UINT32_MAX after an error. */
uint32_t sc_resolve_ref(sctx *c, uint32_t node, const char *kw, const gm_jv *ref);
static inline const gm_jv *sc_val(const sctx *c, uint32_t id) { return c->value[id]; }
/* The member `kw` of schema node id (NULL when absent). */
const gm_jv *sc_kw(const sctx *c, uint32_t id, const char *kw);

/* ---- synthesized schemas (synth.c) ---- */

/*
 * A new schema object with the given members (values borrowed or made with
 * sc_synth_*), placed in the tree under owner for messages and read with
 * owner's draft and base URI: its id, or UINT32_MAX when memory ran out.
 */
uint32_t sc_synth_object(sctx *c, uint32_t owner, const gm_jmember *members, uint32_t n);
uint32_t sc_synth_bool(sctx *c, uint32_t owner, bool value);
/* Plain values for synthesized members (no id of their own); NULL when memory ran out. */
gm_jv *sc_synth_number(sctx *c, const char *text);
gm_jv *sc_synth_string(sctx *c, const char *s, uint32_t n);
gm_jv *sc_synth_array(sctx *c, gm_jv *const *items, uint32_t n);
/* A schema array of the given schema ids ("anyOf": [...]), as a value. */
gm_jv *sc_synth_schema_array(sctx *c, const uint32_t *ids, uint32_t n);

/*
 * not(schema id), as a synthesized schema (note [negation] in synth.c):
 * its id, or UINT32_MAX when some keyword of it has no expressible
 * complement (*why names it; nothing is reported).
 */
uint32_t sc_negate(sctx *c, uint32_t id, const char **why);
/*
 * The schema derived from node id by kind (0: not, 1: if/then/else, 2+k:
 * the dependency schema of member k of a dependencies object), made once:
 * later calls return the same id. UINT32_MAX when it cannot be (see *why).
 */
uint32_t sc_derived(sctx *c, uint32_t kind, uint32_t id, const char **why);
/* if/then/else of node id, and dependentSchemas-like "a present => S", as schemas. */
uint32_t sc_conditional(sctx *c, uint32_t id, const char **why);
uint32_t sc_dependent_schema(sctx *c, uint32_t owner, const char *name, uint32_t nlen, uint32_t schema);

/* ---- patterns (pattern.c) ---- */

typedef struct sc_pattern sc_pattern;
/*
 * The pattern `text` compiled (ECMA-262, unanchored; GM_ECMA_WHOLE for a
 * full match), cached by text; NULL after an error (reported against node
 * and kw, or relaxed).
 */
sc_pattern *sc_pattern_get(sctx *c, uint32_t node, const char *kw, const char *text, size_t len,
                           unsigned flags);
/* The regex AST of a compiled pattern (callers may append nodes; its root stays). */
gm_regex *sc_pattern_regex(sc_pattern *p);
/* Whether the UTF-8 string s[0..n) is in the pattern's language: 1, 0, or -1 after an error
   (reported against node and kw). */
int sc_pattern_match(sctx *c, uint32_t node, const char *kw, sc_pattern *p, const char *s,
                     size_t n);
/* The minimal DFA (label 0 = accepting) of node root of re. */
gm_status sc_regex_dfa(gm_mem *m, const gm_regex *re, uint32_t root, const gm_limits *limits,
                       gm_dfa *min, gm_error *err);
void sc_patterns_free(sctx *c);

#endif
