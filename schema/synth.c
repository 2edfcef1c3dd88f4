/*
 * Synthesized schemas: new schema objects the compiler writes into the
 * document (its arena) to express derived constraints in plain keywords,
 * so that shapes, emitters and the validator read them like the author's.
 *
 * note [negation]
 * not(S) for a schema S = A and B and ... (one keyword or keyword unit
 * each) is not(A) or not(B) or ...; a keyword that constrains one instance
 * type negates to that type with the opposite constraint (not minimum m =
 * a number below m, not maxLength n = a string of n+1 or more, not
 * required [a, b] = an object lacking a or lacking b, not properties {p: T}
 * = an object with p whose value is not(T)); not(anyOf) is allOf of the
 * negations, not(allOf) anyOf of them, not(not T) is T, not(type) the other
 * types, not(enum) and not(pattern) the internal keywords $gm_notenum and
 * $gm_notpattern (strings and numbers outside a finite set, strings the
 * pattern does not match) and $gm_notint (numbers with a nonzero fraction,
 * not(type integer)), which shapes and the validator know. Keywords
 * with no such complement (oneOf, multipleOf, items, uniqueItems, formats,
 * additionalProperties, ...) make the negation fail, and the caller
 * reports `not` as unsupported. if/then/else is anyOf(allOf(if, then),
 * allOf(not(if), else)); a schema dependency on `a` is anyOf(a absent,
 * allOf(a present, S)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/internal.h"

#define MAX_NEG_DEPTH 16

static bool grow(sctx *c)
{
    if (c->nids < c->ids_cap)
        return true;
    uint32_t cap = c->ids_cap * 2 + 64;
    const gm_jv **v = gm_mem_reallocarray(c->mem, (void *)c->value, cap, sizeof *v);
    if (!v)
        return false;
    c->value = v;
    uint32_t *p = gm_mem_reallocarray(c->mem, c->parent, cap, sizeof *p);
    if (!p)
        return false;
    c->parent = p;
    uint16_t *d = gm_mem_reallocarray(c->mem, c->draft, cap, sizeof *d);
    if (!d)
        return false;
    c->draft = d;
    const char **b = gm_mem_reallocarray(c->mem, (void *)c->base, cap, sizeof *b);
    if (!b)
        return false;
    c->base = b;
    c->ids_cap = cap;
    return true;
}

static uint32_t attach(sctx *c, gm_jv *v, uint32_t owner)
{
    if (!grow(c))
        return UINT32_MAX;
    v->id = c->nids++;
    v->off = c->value[owner]->off;
    v->end = c->value[owner]->end;
    c->value[v->id] = v;
    c->parent[v->id] = owner;
    c->draft[v->id] = c->draft[owner];
    c->base[v->id] = c->base[owner];
    return v->id;
}

uint32_t sc_synth_object(sctx *c, uint32_t owner, const gm_jmember *members, uint32_t n)
{
    gm_jv *v = gm_jdoc_alloc(&c->doc, sizeof *v);
    gm_jmember *ms = n ? gm_jdoc_alloc(&c->doc, n * sizeof *ms) : NULL;
    if (!v || (n && !ms))
        return UINT32_MAX;
    memset(v, 0, sizeof *v);
    v->kind = GM_JV_OBJECT;
    v->n = n;
    if (n)
        memcpy(ms, members, n * sizeof *ms);
    v->u.members = ms;
    return attach(c, v, owner);
}

uint32_t sc_synth_bool(sctx *c, uint32_t owner, bool value)
{
    gm_jv *v = gm_jdoc_alloc(&c->doc, sizeof *v);
    if (!v)
        return UINT32_MAX;
    memset(v, 0, sizeof *v);
    v->kind = value ? GM_JV_TRUE : GM_JV_FALSE;
    return attach(c, v, owner);
}

static gm_jv *plain(sctx *c, gm_jv_kind kind)
{
    gm_jv *v = gm_jdoc_alloc(&c->doc, sizeof *v);
    if (v) {
        memset(v, 0, sizeof *v);
        v->kind = (uint8_t)kind;
        v->id = UINT32_MAX; /* not a schema */
    }
    return v;
}

gm_jv *sc_synth_number(sctx *c, const char *text)
{
    gm_jv *v = plain(c, GM_JV_NUMBER);
    size_t n = strlen(text);
    char *s = v ? gm_jdoc_alloc(&c->doc, n + 1) : NULL;
    if (!s)
        return NULL;
    memcpy(s, text, n + 1);
    v->u.s = s;
    v->n = (uint32_t)n;
    return v;
}

gm_jv *sc_synth_string(sctx *c, const char *str, uint32_t n)
{
    gm_jv *v = plain(c, GM_JV_STRING);
    char *s = v ? gm_jdoc_alloc(&c->doc, (size_t)n + 1) : NULL;
    if (!s)
        return NULL;
    memcpy(s, str, n);
    s[n] = 0;
    v->u.s = s;
    v->n = n;
    return v;
}

gm_jv *sc_synth_array(sctx *c, gm_jv *const *items, uint32_t n)
{
    gm_jv *v = plain(c, GM_JV_ARRAY);
    gm_jv **it = v && n ? gm_jdoc_alloc(&c->doc, n * sizeof *it) : NULL;
    if (!v || (n && !it))
        return NULL;
    if (n)
        memcpy(it, items, n * sizeof *it);
    v->u.items = it;
    v->n = n;
    return v;
}

gm_jv *sc_synth_schema_array(sctx *c, const uint32_t *ids, uint32_t n)
{
    gm_jv *buf[64] = {0};
    gm_jv **items = n <= 64 ? buf : gm_mem_alloc(c->mem, n * sizeof *items);
    if (!items)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        items[i] = (gm_jv *)c->value[ids[i]];
    gm_jv *r = sc_synth_array(c, items, n);
    if (items != buf)
        gm_mem_free(c->mem, items);
    return r;
}

/* ---- building blocks ---- */

static gm_jmember mem(const char *key, const gm_jv *v)
{
    gm_jmember m = {key, (uint32_t)strlen(key), 0, (gm_jv *)v};
    return m;
}

/* {"key": v} */
static uint32_t one(sctx *c, uint32_t owner, const char *key, const gm_jv *v)
{
    if (!v)
        return UINT32_MAX;
    gm_jmember m = mem(key, v);
    return sc_synth_object(c, owner, &m, 1);
}

/* {"type": t, "key": v} */
static uint32_t typed(sctx *c, uint32_t owner, const char *type, const char *key, const gm_jv *v)
{
    gm_jv *t = sc_synth_string(c, type, (uint32_t)strlen(type));
    if (!t || !v)
        return UINT32_MAX;
    gm_jmember ms[2] = {mem("type", t), mem(key, v)};
    return sc_synth_object(c, owner, ms, 2);
}

/* anyOf / allOf of ids (the one id itself when n == 1; false / true when n == 0). */
static uint32_t combine(sctx *c, uint32_t owner, const char *kw, const uint32_t *ids, uint32_t n)
{
    if (n == 0)
        return sc_synth_bool(c, owner, kw[1] == 'l'); /* allOf [] = true, anyOf [] = false */
    if (n == 1)
        return ids[0];
    return one(c, owner, kw, sc_synth_schema_array(c, ids, n));
}

/* {"properties": {name: schema}} */
static uint32_t property(sctx *c, uint32_t owner, const char *name, uint32_t nlen, uint32_t schema)
{
    gm_jv *props = plain(c, GM_JV_OBJECT);
    gm_jmember *m = props ? gm_jdoc_alloc(&c->doc, sizeof *m) : NULL;
    if (!m || schema == UINT32_MAX)
        return UINT32_MAX;
    m->key = name;
    m->klen = nlen;
    m->koff = 0;
    m->value = (gm_jv *)c->value[schema];
    props->u.members = m;
    props->n = 1;
    return one(c, owner, "properties", props);
}

/* {"required": [name]} */
static uint32_t required(sctx *c, uint32_t owner, const char *name, uint32_t nlen)
{
    gm_jv *s = sc_synth_string(c, name, nlen);
    return s ? one(c, owner, "required", sc_synth_array(c, &s, 1)) : UINT32_MAX;
}

/* A count keyword with n +- 1: "maxLength": n - 1 etc.; NULL past the bounds. */
static gm_jv *count_shift(sctx *c, const gm_jv *v, int delta)
{
    gm_dec d;
    char buf[64];
    if (v->kind != GM_JV_NUMBER || gm_dec_parse(&d, v->u.s, v->n) || d.neg || !gm_dec_is_integer(&d) ||
        gm_dec_int_digits(&d, buf, sizeof buf) || strlen(buf) > 15)
        return NULL;
    long long x = strtoll(buf, NULL, 10) + delta;
    if (x < 0)
        return NULL;
    snprintf(buf, sizeof buf, "%lld", x);
    return sc_synth_number(c, buf);
}

/* ---- negation ---- */

typedef struct neg {
    sctx *c;
    const char *why;
    uint32_t stack[MAX_NEG_DEPTH];
    unsigned depth;
} neg;

static uint32_t negate(neg *g, uint32_t id);

static uint32_t fail(neg *g, const char *why)
{
    if (!g->why)
        g->why = why;
    return UINT32_MAX;
}

/* not(type list) as the other types; fails when "integer" is kept without "number". */
static uint32_t neg_type(neg *g, uint32_t s, const gm_jv *t, bool nullable)
{
    static const char *names[] = {"null", "boolean", "object", "array", "string", "number", "integer"};
    bool has[7] = {0};
    for (uint32_t i = 0; i < (t->kind == GM_JV_ARRAY ? t->n : 1); i++) {
        const gm_jv *x = t->kind == GM_JV_ARRAY ? t->u.items[i] : t;
        for (int k = 0; k < 7; k++)
            if (x->kind == GM_JV_STRING && !strcmp(x->u.s, names[k]))
                has[k] = true;
    }
    if (nullable)
        has[0] = true;
    if (has[5])
        has[6] = true;
    gm_jv *items[7];
    uint32_t n = 0;
    for (int k = 0; k < 6; k++)
        if (!has[k] && !(k == 5 && has[6]))
            if (!(items[n++] = sc_synth_string(g->c, names[k], (uint32_t)strlen(names[k]))))
                return UINT32_MAX;
    uint32_t others = n ? one(g->c, s, "type", sc_synth_array(g->c, items, n)) : sc_synth_bool(g->c, s, false);
    if (!(has[6] && !has[5]))
        return others;
    /* not integer keeps the numbers with a fraction */
    gm_jv *num = sc_synth_string(g->c, "number", 6), *yes = plain(g->c, GM_JV_TRUE);
    if (!num || !yes || others == UINT32_MAX)
        return UINT32_MAX;
    gm_jmember ms[2] = {mem("type", num), mem("$gm_notint", yes)};
    uint32_t alts[2] = {others, sc_synth_object(g->c, s, ms, 2)};
    return combine(g->c, s, "anyOf", alts, 2);
}

/* The negation of one keyword (or keyword unit) k of schema s; UINT32_MAX_1 = no constraint. */
#define NO_CONSTRAINT (UINT32_MAX - 1)

static uint32_t neg_keyword(neg *g, uint32_t s, const gm_jmember *m)
{
    sctx *c = g->c;
    const gm_jv *sv = c->value[s], *v = m->value;
    const char *k = m->key;
    uint32_t draft = c->draft[s] ? c->draft[s] : c->default_draft;
    if (!strcmp(k, "type")) {
        const gm_jv *nl = gm_jv_get(sv, "nullable");
        return neg_type(g, s, v, nl && nl->kind == GM_JV_TRUE);
    }
    if (!strcmp(k, "nullable"))
        return NO_CONSTRAINT; /* read with type */
    if (!strcmp(k, "enum") || (!strcmp(k, "const") && draft >= SC_DRAFT6)) {
        gm_jv *list = (gm_jv *)v;
        if (k[0] == 'c')
            list = sc_synth_array(c, (gm_jv *const *)&v, 1);
        return one(c, s, "$gm_notenum", list);
    }
    if (!strcmp(k, "minimum") || !strcmp(k, "maximum")) {
        bool lower = k[1] == 'i';
        const gm_jv *ex = gm_jv_get(sv, lower ? "exclusiveMinimum" : "exclusiveMaximum");
        bool excl = ex && ex->kind == GM_JV_TRUE;
        /* not (x >= m) is x < m; not (x > m) is x <= m */
        const char *opp = lower ? (excl ? "maximum" : "exclusiveMaximum") : (excl ? "minimum" : "exclusiveMinimum");
        return typed(c, s, "number", opp, v);
    }
    if (!strcmp(k, "exclusiveMinimum") || !strcmp(k, "exclusiveMaximum")) {
        if (v->kind != GM_JV_NUMBER)
            return NO_CONSTRAINT; /* draft 4's boolean: read with minimum / maximum */
        return typed(c, s, "number", k[10] == 'i' ? "maximum" : "minimum", v);
    }
    static const struct { const char *kw, *type, *opp; int delta; } counts[] = {
        {"minLength", "string", "maxLength", -1}, {"maxLength", "string", "minLength", 1},
        {"minItems", "array", "maxItems", -1},    {"maxItems", "array", "minItems", 1},
        {"minProperties", "object", "maxProperties", -1},
        {"maxProperties", "object", "minProperties", 1},
    };
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if (!strcmp(k, counts[i].kw)) {
            gm_jv *n = count_shift(c, v, counts[i].delta);
            if (!n) /* minLength 0 and the like hold for every instance: their negation for none */
                return sc_synth_bool(c, s, false);
            return typed(c, s, counts[i].type, counts[i].opp, n);
        }
    if (!strcmp(k, "pattern"))
        return typed(c, s, "string", "$gm_notpattern", v);
    if (!strcmp(k, "required")) {
        if (v->kind != GM_JV_ARRAY)
            return NO_CONSTRAINT;
        uint32_t alts[64];
        uint32_t n = 0;
        for (uint32_t i = 0; i < v->n && n < 64; i++) {
            const gm_jv *name = v->u.items[i];
            if (name->kind != GM_JV_STRING)
                continue;
            uint32_t f = sc_synth_bool(c, s, false);
            alts[n++] = property(c, s, name->u.s, name->n, f);
            if (alts[n - 1] == UINT32_MAX)
                return UINT32_MAX;
        }
        if (v->n > 64)
            return fail(g, "'not' of more than 64 required names");
        if (!n)
            return sc_synth_bool(c, s, false);
        uint32_t any = combine(c, s, "anyOf", alts, n);
        return typed(c, s, "object", "allOf", sc_synth_schema_array(c, &any, 1));
    }
    if (!strcmp(k, "properties")) {
        if (gm_jv_get(sv, "additionalProperties") || gm_jv_get(sv, "patternProperties"))
            return fail(g, "'not' of properties with additionalProperties or patternProperties");
        uint32_t alts[64];
        uint32_t n = 0;
        for (uint32_t i = 0; i < v->n; i++) {
            const gm_jmember *p = &v->u.members[i];
            uint32_t nt = negate(g, p->value->id);
            if (nt == UINT32_MAX)
                return UINT32_MAX;
            if (c->value[nt]->kind == GM_JV_FALSE)
                continue; /* not(true): this property cannot make the schema fail */
            if (n == 64)
                return fail(g, "'not' of more than 64 properties");
            uint32_t both[2] = {required(c, s, p->key, p->klen), property(c, s, p->key, p->klen, nt)};
            if (both[0] == UINT32_MAX || both[1] == UINT32_MAX)
                return UINT32_MAX;
            alts[n++] = combine(c, s, "allOf", both, 2);
        }
        if (!n)
            return sc_synth_bool(c, s, false);
        uint32_t any = combine(c, s, "anyOf", alts, n);
        return typed(c, s, "object", "allOf", sc_synth_schema_array(c, &any, 1));
    }
    if (!strcmp(k, "anyOf") || !strcmp(k, "allOf")) {
        if (v->kind != GM_JV_ARRAY)
            return fail(g, "a malformed applicator under 'not'");
        uint32_t ids[64];
        if (v->n > 64)
            return fail(g, "'not' of more than 64 branches");
        for (uint32_t i = 0; i < v->n; i++)
            if ((ids[i] = negate(g, v->u.items[i]->id)) == UINT32_MAX)
                return UINT32_MAX;
        return combine(c, s, k[1] == 'n' ? "allOf" : "anyOf", ids, v->n);
    }
    if (!strcmp(k, "not"))
        return v->id;
    if (!strcmp(k, "$ref")) {
        uint32_t t = sc_resolve_ref(c, s, "$ref", v);
        if (t >= UINT32_MAX - 1)
            return t == UINT32_MAX - 1 ? fail(g, "'not' of a relaxed reference") : UINT32_MAX;
        return negate(g, t);
    }
    if (!strcmp(k, "$gm_notenum"))
        return one(c, s, "enum", v);
    if (!strcmp(k, "$gm_notpattern"))
        return typed(c, s, "string", "pattern", v);
    if (!strcmp(k, "$gm_notint"))
        return one(c, s, "type", sc_synth_string(c, "integer", 7)); /* with the other keywords' */
    /* keywords with no constraint, or read with another */
    static const char *inert[] = {
        "$schema", "$id", "id", "$defs", "definitions", "$comment", "$anchor", "$dynamicAnchor",
        "title", "description", "default", "examples", "readOnly", "writeOnly", "deprecated",
        "contentMediaType", "contentEncoding", "contentSchema", "then", "else", "minContains",
        "maxContains", "additionalItems", "$vocabulary", "$recursiveAnchor", "format_", "markdownDescription",
    };
    for (size_t i = 0; i < sizeof inert / sizeof *inert; i++)
        if (!strcmp(k, inert[i]))
            return NO_CONSTRAINT;
    static const char *hard[] = {
        "oneOf", "multipleOf", "items", "prefixItems", "contains", "uniqueItems", "format",
        "additionalProperties", "patternProperties", "propertyNames", "dependencies",
        "dependentRequired", "dependentSchemas", "if", "unevaluatedProperties", "unevaluatedItems",
        "$dynamicRef", "$recursiveRef",
    };
    for (size_t i = 0; i < sizeof hard / sizeof *hard; i++)
        if (!strcmp(k, hard[i])) {
            return fail(g, k[0] == 'o' ? "'not' of oneOf" : k[0] == 'm' ? "'not' of multipleOf"
                         : k[0] == 'f' ? "'not' of a format" : "'not' of a keyword with no "
                         "expressible complement (items, contains, uniqueItems, additionalProperties, "
                         "patternProperties, propertyNames, dependencies, if)");
        }
    return NO_CONSTRAINT; /* an unknown keyword: an annotation */
}

static uint32_t negate(neg *g, uint32_t id)
{
    sctx *c = g->c;
    const gm_jv *sv = c->value[id];
    if (sv->kind == GM_JV_TRUE || (sv->kind == GM_JV_OBJECT && sv->n == 0))
        return sc_synth_bool(c, id, false);
    if (sv->kind == GM_JV_FALSE)
        return sc_synth_bool(c, id, true);
    if (sv->kind != GM_JV_OBJECT)
        return fail(g, "'not' of something that is not a schema");
    for (unsigned i = 0; i < g->depth; i++)
        if (g->stack[i] == id)
            return fail(g, "'not' of a recursive schema");
    if (g->depth == MAX_NEG_DEPTH)
        return fail(g, "'not' nested too deeply");
    g->stack[g->depth++] = id;
    uint32_t draft = c->draft[id] ? c->draft[id] : c->default_draft;
    uint32_t alts[128];
    uint32_t n = 0, r = UINT32_MAX;
    const gm_jv *ref = gm_jv_get(sv, "$ref");
    if (ref && draft <= SC_DRAFT7) {
        gm_jmember m = mem("$ref", ref);
        r = neg_keyword(g, id, &m);
        g->depth--;
        return r == NO_CONSTRAINT ? sc_synth_bool(c, id, false) : r;
    }
    for (uint32_t i = 0; i < sv->n; i++) {
        uint32_t x = neg_keyword(g, id, &sv->u.members[i]);
        if (x == UINT32_MAX)
            goto out;
        if (x == NO_CONSTRAINT)
            continue;
        if (n == 128) {
            fail(g, "'not' of a schema with more than 128 keywords");
            goto out;
        }
        alts[n++] = x;
    }
    r = combine(c, id, "anyOf", alts, n);
out:
    g->depth--;
    return r;
}

uint32_t sc_negate(sctx *c, uint32_t id, const char **why)
{
    neg g = {c, NULL, {0}, 0};
    uint32_t r = negate(&g, id);
    *why = g.why;
    if (r == UINT32_MAX && !g.why && c->st == GM_OK)
        c->st = gm_mem_fail(c->mem, c->err, "a negated schema"); /* a failure without a reason: memory */
    return r;
}

uint32_t sc_conditional(sctx *c, uint32_t id, const char **why)
{
    const gm_jv *sv = c->value[id];
    const gm_jv *cond = gm_jv_get(sv, "if"), *then = gm_jv_get(sv, "then"), *els = gm_jv_get(sv, "else");
    uint32_t nc = sc_negate(c, cond->id, why);
    if (nc == UINT32_MAX)
        return UINT32_MAX;
    uint32_t a[2] = {cond->id, then ? then->id : sc_synth_bool(c, id, true)};
    uint32_t b[2] = {nc, els ? els->id : sc_synth_bool(c, id, true)};
    uint32_t branches[2] = {combine(c, id, "allOf", a, 2), combine(c, id, "allOf", b, 2)};
    if (branches[0] == UINT32_MAX || branches[1] == UINT32_MAX)
        return UINT32_MAX;
    return combine(c, id, "anyOf", branches, 2);
}

uint32_t sc_dependent_schema(sctx *c, uint32_t owner, const char *name, uint32_t nlen, uint32_t schema)
{
    uint32_t absent = property(c, owner, name, nlen, sc_synth_bool(c, owner, false));
    uint32_t both[2] = {required(c, owner, name, nlen), schema};
    uint32_t present = both[0] == UINT32_MAX ? UINT32_MAX : combine(c, owner, "allOf", both, 2);
    if (absent == UINT32_MAX || present == UINT32_MAX)
        return UINT32_MAX;
    uint32_t alts[2] = {absent, present};
    return combine(c, owner, "anyOf", alts, 2);
}

uint32_t sc_derived(sctx *c, uint32_t kind, uint32_t id, const char **why)
{
    uint32_t key[2] = {kind, id}, slot;
    int added;
    *why = NULL;
    if (gm_intern_put(&c->derived, key, sizeof key, &slot, &added)) {
        c->st = gm_mem_fail(c->mem, c->err, "a derived schema");
        return UINT32_MAX;
    }
    if (!added)
        return c->derived_id.v[slot];
    uint32_t r;
    if (kind == 0) {
        r = sc_negate(c, id, why);
    } else if (kind == 1) {
        r = sc_conditional(c, id, why);
    } else {
        const gm_jv *deps = c->value[id];
        const gm_jmember *m = &deps->u.members[kind - 2];
        r = sc_dependent_schema(c, c->parent[id], m->key, m->klen, m->value->id);
    }
    if (r == UINT32_MAX && !*why && c->st == GM_OK)
        c->st = gm_mem_fail(c->mem, c->err, "a derived schema");
    if (gm_vec_push(c->mem, &c->derived_id, r)) {
        if (c->st == GM_OK)
            c->st = gm_mem_fail(c->mem, c->err, "a derived schema");
        return UINT32_MAX;
    }
    return r;
}
