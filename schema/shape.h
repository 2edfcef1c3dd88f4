/*
 * The shape of a conjunction (note [conjunctions] in internal.h): the
 * keywords of all its schemas, gathered per instance type. Merging is
 * exact where the keyword is a set of constraints (types intersect, bounds
 * tighten, required sets unite, patterns and formats accumulate); where a
 * keyword's meaning depends on its own schema (properties with
 * additionalProperties, items with prefixItems) the shape keeps one
 * source per schema and the emitter combines them per property name or
 * array position. anyOf/oneOf become groups that the emitter distributes.
 * Keywords no grammar can enforce are recorded with the types they
 * constrain, so that they are reported only when such an instance type
 * remains possible.
 */
#ifndef GM_SCHEMA_SHAPE_H
#define GM_SCHEMA_SHAPE_H

#include "schema/internal.h"

typedef struct sc_bound {
    bool set, excl;
    gm_dec v;
    uint32_t node;          /* where it came from (messages) */
} sc_bound;

typedef struct sc_enum {
    uint32_t node;
    const gm_jv *list;      /* "enum": an array */
    const gm_jv *single;    /* "const": the value */
    bool plus_null;         /* OpenAPI nullable: null is also allowed */
} sc_enum;

typedef struct sc_strc {    /* a string constraint: pattern or format */
    uint32_t node;
    const char *kw;         /* "pattern" or "format" */
    const gm_jv *value;     /* its string */
} sc_strc;

typedef struct sc_mult {
    uint32_t node;
    gm_dec m;
} sc_mult;

typedef struct sc_objsrc {  /* the object keywords of one schema */
    uint32_t node;
    const gm_jv *props;     /* "properties" (object) or NULL */
    const gm_jv *pprops;    /* "patternProperties" (object) or NULL */
    const gm_jv *addl;      /* "additionalProperties" schema, or NULL (true) */
} sc_objsrc;

typedef struct sc_arrsrc {  /* the array keywords of one schema */
    uint32_t node;
    const gm_jv *prefix;    /* array of schemas (prefixItems, or items as an array) or NULL */
    const gm_jv *rest;      /* the schema of the items after the prefix, or NULL (true) */
} sc_arrsrc;

typedef struct sc_dep {     /* dependentRequired: name present => list present */
    uint32_t node;
    const char *name;
    uint32_t nlen;
    const gm_jv *list;      /* array of strings */
} sc_dep;

typedef struct sc_group {   /* anyOf / oneOf to distribute */
    uint32_t owner;
    const gm_jv *list;
    bool one;
} sc_group;

typedef struct sc_unsup {   /* a keyword with no exact grammar */
    uint32_t node;
    const char *kw;
    uint32_t types;         /* instance types it constrains */
    const char *why;
} sc_unsup;

typedef struct sc_shape {
    bool impossible;        /* a `false` schema is in the conjunction */
    uint32_t types;         /* T_* */
    bool int_strict;        /* a draft-4 schema: 1.0 is not an integer */
    GM_VEC(uint32_t) nodes; /* every schema merged, for validating constants */
    GM_VEC(uint32_t) noalt; /* nodes whose anyOf/oneOf are distributed already */
    GM_VEC(sc_enum) enums;
    sc_bound lo, hi;
    GM_VEC(sc_mult) mults;
    uint32_t min_len, max_len;   /* max_len UINT32_MAX: none */
    uint32_t len_node;
    GM_VEC(sc_strc) strs;
    uint32_t min_items, max_items;
    uint32_t items_node;
    GM_VEC(sc_arrsrc) arrs;
    bool unique_items;
    uint32_t unique_node;
    uint32_t min_props, max_props;
    uint32_t props_node;
    GM_VEC(sc_objsrc) objs;
    GM_VEC(const gm_jv *) required; /* strings */
    GM_VEC(uint32_t) pnames;        /* propertyNames schemas */
    GM_VEC(sc_dep) deps;
    GM_VEC(sc_group) groups;
    GM_VEC(sc_unsup) unsup;
    GM_VEC(const gm_jv *) notenums; /* $gm_notenum lists: values excluded (synth.c) */
    GM_VEC(sc_strc) notpats;        /* $gm_notpattern: patterns strings must not match */
    bool nonint;                    /* $gm_notint: numbers with a nonzero fraction only */
} sc_shape;

/* Gathers the shape of conj[0..n) (elements may carry SC_NOALT). Errors go to c. */
gm_status sc_shape_build(sctx *c, const uint32_t *conj, size_t n, sc_shape *sh);
void sc_shape_free(sctx *c, sc_shape *sh);

/* Whether a shape element list holds node id. */
bool sc_has(const uint32_t *v, size_t n, uint32_t id);

#endif
