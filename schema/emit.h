/*
 * Grammar emission from shapes (compile.c drives; emit_scalar.c numbers
 * and strings; emit_struct.c arrays and objects; rules.c the layouts and
 * shared rules). Every emitter returns an
 * expression of c->g, or GM_EX_NONE after an error (in c).
 */
#ifndef GM_SCHEMA_EMIT_H
#define GM_SCHEMA_EMIT_H

#include "schema/internal.h"
#include "schema/shape.h"

/*
 * The expression for a conjunction at nesting depth `depth` (note
 * [conjunctions]).
 *
 * note [emitter recursion]
 * Schemas nest: an array's items and an object's property values are
 * schemas again, so the emitters of arrays and objects (emit_struct.c)
 * call back into the driver that called them (compile.c). That recursion
 * is this one call, through the context (c->conj_of, set by
 * gm_schema_compile), so the files stay one-way: compile.c above the
 * emitters, the emitters above the shared rules (rules.c).
 */
static inline uint32_t sc_conj(sctx *c, const uint32_t *conj, size_t n, uint32_t depth)
{
    return c->conj_of(c, conj, n, depth);
}
/* Any JSON value (the `true` schema). */
uint32_t sc_any_value(sctx *c, uint32_t depth);
/* The texts of one constant value. */
uint32_t sc_literal(sctx *c, const gm_jv *v, uint32_t depth);

/* ---- layout (whitespace mode) ---- */
uint32_t sc_ws(sctx *c);
uint32_t sc_open(sctx *c, char bracket, uint32_t depth);   /* "{" and what follows it */
uint32_t sc_close(sctx *c, char bracket, uint32_t depth);  /* what precedes "}" and "}" */
uint32_t sc_empty_pair(sctx *c, char bracket);             /* "{}" (with inner whitespace) */
uint32_t sc_item_sep(sctx *c, uint32_t depth);             /* between members / items */
uint32_t sc_key_sep(sctx *c);                              /* between a key and its value */

/* ---- shared rules ---- */
uint32_t sc_char(sctx *c);     /* one string character (note [string encoding]) */
uint32_t sc_string(sctx *c);   /* any string */
/* The characters of any string, without quotes: char*, or with c->raw_exclude the texts
   that avoid it (exclude.c, note [excluded text]). */
uint32_t sc_string_chars(sctx *c);
uint32_t sc_excluding_chars(sctx *c);
uint32_t sc_number(sctx *c);   /* any number */
uint32_t sc_integer(sctx *c);  /* any integer (with an optional zero fraction when frac) */
uint32_t sc_quoted(sctx *c, uint32_t body); /* "\"" body "\"" */

/*
 * The schemas (ids, at most cap) the objects of a shape give property
 * `name`; false when some schema forbids it (additionalProperties: false).
 * Errors (a bad pattern) go to c.
 */
bool sc_prop_schemas(sctx *c, sc_shape *sh, const char *name, uint32_t nlen, uint32_t *out,
                     size_t *n, size_t cap);

/* ---- per type ---- */
uint32_t sc_emit_number(sctx *c, sc_shape *sh);
uint32_t sc_emit_string(sctx *c, sc_shape *sh);
uint32_t sc_emit_array(sctx *c, sc_shape *sh, uint32_t depth);
uint32_t sc_emit_object(sctx *c, sc_shape *sh, uint32_t depth);

#endif
