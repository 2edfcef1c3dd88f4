/*
 * A JSON Schema validator for constant values: the compiler checks enum
 * members and const values against the rest of their conjunction, and
 * listed property names against propertyNames, so the grammar lists only
 * values that are valid. Constants are concrete, so even keywords that
 * have no grammar (not, if/then/else, uniqueItems, contains) are checked
 * here exactly.
 */
#include <string.h>

#include "schema/ecma_regex.h"
#include "schema/formats.h"
#include "schema/validate.h"

#define MAX_DEPTH 200

static int check(sctx *c, const gm_jv *x, uint32_t s, unsigned depth);

static size_t code_points(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            k++;
    return k;
}

static uint32_t draft_at(const sctx *c, uint32_t s)
{
    return c->draft[s] ? c->draft[s] : c->default_draft;
}

static bool is_integer(sctx *c, const gm_jv *x, uint32_t s)
{
    if (x->kind != GM_JV_NUMBER)
        return false;
    if (draft_at(c, s) == SC_DRAFT4) {
        for (uint32_t i = 0; i < x->n; i++)
            if (x->u.s[i] == '.' || x->u.s[i] == 'e' || x->u.s[i] == 'E')
                return false;
        return true;
    }
    gm_dec d;
    return !gm_dec_parse(&d, x->u.s, x->n) && gm_dec_is_integer(&d);
}

static bool type_ok(sctx *c, const gm_jv *x, uint32_t s, const gm_jv *t)
{
    if (t->kind != GM_JV_STRING)
        return false;
    const char *n = t->u.s;
    switch (x->kind) {
    case GM_JV_NULL: return !strcmp(n, "null");
    case GM_JV_TRUE:
    case GM_JV_FALSE: return !strcmp(n, "boolean");
    case GM_JV_STRING: return !strcmp(n, "string");
    case GM_JV_ARRAY: return !strcmp(n, "array");
    case GM_JV_OBJECT: return !strcmp(n, "object");
    case GM_JV_NUMBER: return !strcmp(n, "number") || (!strcmp(n, "integer") && is_integer(c, x, s));
    }
    return false;
}

static bool dec_of(const gm_jv *v, gm_dec *d)
{
    return v && v->kind == GM_JV_NUMBER && !gm_dec_parse(d, v->u.s, v->n);
}

static int match_pattern(sctx *c, uint32_t s, const char *kw, const char *pat, size_t plen,
                         const char *str, size_t n, unsigned flags)
{
    sc_pattern *p = sc_pattern_get(c, s, kw, pat, plen, flags);
    if (!p)
        return -1;
    return sc_pattern_match(c, s, kw, p, str, n);
}

static int check_object(sctx *c, const gm_jv *x, uint32_t s, const gm_jv *sv, unsigned depth)
{
    const gm_jv *props = gm_jv_get(sv, "properties"), *pp = gm_jv_get(sv, "patternProperties"),
                *ap = gm_jv_get(sv, "additionalProperties"), *v;
    uint32_t draft = draft_at(c, s);
    for (uint32_t i = 0; i < x->n; i++) {
        const gm_jmember *m = &x->u.members[i];
        bool matched = false;
        const gm_jv *ps = props && props->kind == GM_JV_OBJECT ? gm_jv_getn(props, m->key, m->klen) : NULL;
        if (ps) {
            matched = true;
            int r = check(c, m->value, ps->id, depth);
            if (r <= 0)
                return r;
        }
        for (uint32_t j = 0; pp && pp->kind == GM_JV_OBJECT && j < pp->n; j++) {
            int r = match_pattern(c, s, "patternProperties", pp->u.members[j].key,
                                  pp->u.members[j].klen, m->key, m->klen, 0);
            if (r < 0)
                return r;
            if (r) {
                matched = true;
                r = check(c, m->value, pp->u.members[j].value->id, depth);
                if (r <= 0)
                    return r;
            }
        }
        if (!matched && ap) {
            int r = check(c, m->value, ap->id, depth);
            if (r <= 0)
                return r;
        }
        if (draft >= SC_DRAFT6 && (v = gm_jv_get(sv, "propertyNames"))) {
            gm_jv name = {.kind = GM_JV_STRING, .u.s = m->key, .n = m->klen};
            int r = check(c, &name, v->id, depth);
            if (r <= 0)
                return r;
        }
    }
    if ((v = gm_jv_get(sv, "required")) && v->kind == GM_JV_ARRAY)
        for (uint32_t i = 0; i < v->n; i++)
            if (v->u.items[i]->kind == GM_JV_STRING &&
                !gm_jv_getn(x, v->u.items[i]->u.s, v->u.items[i]->n))
                return 0;
    gm_dec d;
    if (dec_of(gm_jv_get(sv, "minProperties"), &d) && gm_dec_to_double(&d) > x->n)
        return 0;
    if (dec_of(gm_jv_get(sv, "maxProperties"), &d) && gm_dec_to_double(&d) < x->n)
        return 0;
    static const char *depkw[] = {"dependencies", "dependentRequired", "dependentSchemas"};
    for (int k = 0; k < 3; k++) {
        if (k == 0 ? draft > SC_DRAFT7 : draft < SC_DRAFT2019)
            continue;
        const gm_jv *deps = gm_jv_get(sv, depkw[k]);
        for (uint32_t i = 0; deps && deps->kind == GM_JV_OBJECT && i < deps->n; i++) {
            const gm_jmember *dm = &deps->u.members[i];
            if (!gm_jv_getn(x, dm->key, dm->klen))
                continue;
            if (dm->value->kind == GM_JV_ARRAY) {
                for (uint32_t j = 0; j < dm->value->n; j++) {
                    const gm_jv *nm = dm->value->u.items[j];
                    if (nm->kind == GM_JV_STRING && !gm_jv_getn(x, nm->u.s, nm->n))
                        return 0;
                }
            } else {
                int r = check(c, x, dm->value->id, depth);
                if (r <= 0)
                    return r;
            }
        }
    }
    return 1;
}

static int check_array(sctx *c, const gm_jv *x, uint32_t s, const gm_jv *sv, unsigned depth)
{
    uint32_t draft = draft_at(c, s);
    const gm_jv *items = gm_jv_get(sv, "items"), *pi = gm_jv_get(sv, "prefixItems"), *v;
    const gm_jv *prefix = NULL, *rest = NULL;
    if (pi && pi->kind == GM_JV_ARRAY && draft >= SC_DRAFT2020) {
        prefix = pi;
        rest = items && items->kind != GM_JV_ARRAY ? items : NULL;
    } else if (items && items->kind == GM_JV_ARRAY) {
        prefix = items;
        rest = gm_jv_get(sv, "additionalItems");
    } else {
        rest = items;
    }
    for (uint32_t i = 0; i < x->n; i++) {
        const gm_jv *sch = prefix && i < prefix->n ? prefix->u.items[i] : rest;
        if (sch) {
            int r = check(c, x->u.items[i], sch->id, depth);
            if (r <= 0)
                return r;
        }
    }
    gm_dec d;
    if (dec_of(gm_jv_get(sv, "minItems"), &d) && gm_dec_to_double(&d) > x->n)
        return 0;
    if (dec_of(gm_jv_get(sv, "maxItems"), &d) && gm_dec_to_double(&d) < x->n)
        return 0;
    if ((v = gm_jv_get(sv, "uniqueItems")) && v->kind == GM_JV_TRUE)
        for (uint32_t i = 0; i < x->n; i++)
            for (uint32_t j = i + 1; j < x->n; j++)
                if (gm_jv_equal(x->u.items[i], x->u.items[j]))
                    return 0;
    if (draft >= SC_DRAFT6 && (v = gm_jv_get(sv, "contains"))) {
        uint32_t hits = 0;
        for (uint32_t i = 0; i < x->n; i++) {
            int r = check(c, x->u.items[i], v->id, depth);
            if (r < 0)
                return r;
            hits += (uint32_t)r;
        }
        double lo = 1, hi = -1;
        if (dec_of(gm_jv_get(sv, "minContains"), &d))
            lo = gm_dec_to_double(&d);
        if (dec_of(gm_jv_get(sv, "maxContains"), &d))
            hi = gm_dec_to_double(&d);
        if (hits < lo || (hi >= 0 && hits > hi))
            return 0;
    }
    return 1;
}

static int check_number(sctx *c, const gm_jv *x, uint32_t s, const gm_jv *sv)
{
    gm_dec v, b;
    if (gm_dec_parse(&v, x->u.s, x->n)) {
        sc_fail(c, GM_ERR_LIMIT, s, NULL, "a constant number has more digits than gramask "
                "compares exactly");
        return -1;
    }
    const gm_jv *k;
    if (dec_of(gm_jv_get(sv, "minimum"), &b)) {
        k = gm_jv_get(sv, "exclusiveMinimum");
        int cmp = gm_dec_cmp(&v, &b);
        if (cmp < 0 || (cmp == 0 && k && k->kind == GM_JV_TRUE))
            return 0;
    }
    if (dec_of(gm_jv_get(sv, "maximum"), &b)) {
        k = gm_jv_get(sv, "exclusiveMaximum");
        int cmp = gm_dec_cmp(&v, &b);
        if (cmp > 0 || (cmp == 0 && k && k->kind == GM_JV_TRUE))
            return 0;
    }
    if (dec_of(gm_jv_get(sv, "exclusiveMinimum"), &b) && gm_dec_cmp(&v, &b) <= 0)
        return 0;
    if (dec_of(gm_jv_get(sv, "exclusiveMaximum"), &b) && gm_dec_cmp(&v, &b) >= 0)
        return 0;
    if (dec_of(gm_jv_get(sv, "multipleOf"), &b) && !b.neg && !gm_dec_is_zero(&b)) {
        int r = gm_dec_is_multiple(&v, &b);
        if (r < 0) {
            sc_fail(c, GM_ERR_UNSUPPORTED, s, "multipleOf", "checking a constant against "
                    "multipleOf needs more precision than gramask keeps");
            return -1;
        }
        if (!r)
            return 0;
    }
    return 1;
}

static int check_string(sctx *c, const gm_jv *x, uint32_t s, const gm_jv *sv)
{
    gm_dec d;
    size_t len = code_points(x->u.s, x->n);
    if (dec_of(gm_jv_get(sv, "minLength"), &d) && gm_dec_to_double(&d) > (double)len)
        return 0;
    if (dec_of(gm_jv_get(sv, "maxLength"), &d) && gm_dec_to_double(&d) < (double)len)
        return 0;
    const gm_jv *p = gm_jv_get(sv, "pattern");
    if (p && p->kind == GM_JV_STRING) {
        int r = match_pattern(c, s, "pattern", p->u.s, p->n, x->u.s, x->n, 0);
        if (r <= 0)
            return r;
    }
    const gm_jv *f = c->opts.format_annotation ? NULL : gm_jv_get(sv, "format");
    if (f && f->kind == GM_JV_STRING) {
        const sc_format *fm = sc_format_find(f->u.s);
        if (fm) {
            int r = match_pattern(c, s, "format", fm->regex, strlen(fm->regex), x->u.s, x->n,
                                  GM_ECMA_WHOLE);
            if (r <= 0)
                return r;
        }
    }
    return 1;
}

/* The referenced schema of keyword kw, if sv has it: 1 go on, 0 invalid, -1 error, 2 stop valid. */
static int check_ref(sctx *c, const gm_jv *x, uint32_t s, const char *kw, unsigned depth)
{
    const gm_jv *v = gm_jv_get(c->value[s], kw);
    if (!v)
        return 1;
    uint32_t t = sc_resolve_ref(c, s, kw, v);
    if (t == UINT32_MAX)
        return -1;
    int r = t == UINT32_MAX - 1 ? 1 : check(c, x, t, depth);
    if (r <= 0)
        return r;
    return draft_at(c, s) <= SC_DRAFT7 && kw[1] == 'r' ? 2 : 1;
}

static int check_applicators(sctx *c, const gm_jv *x, uint32_t s, const gm_jv *sv, unsigned depth)
{
    const gm_jv *v;
    int r;
    if ((v = gm_jv_get(sv, "allOf")) && v->kind == GM_JV_ARRAY)
        for (uint32_t i = 0; i < v->n; i++)
            if ((r = check(c, x, v->u.items[i]->id, depth)) <= 0)
                return r;
    if ((v = gm_jv_get(sv, "anyOf")) && v->kind == GM_JV_ARRAY) {
        int any = 0;
        for (uint32_t i = 0; i < v->n && !any; i++)
            if ((any = check(c, x, v->u.items[i]->id, depth)) < 0)
                return any;
        if (!any)
            return 0;
    }
    if ((v = gm_jv_get(sv, "oneOf")) && v->kind == GM_JV_ARRAY) {
        int hits = 0;
        for (uint32_t i = 0; i < v->n; i++) {
            if ((r = check(c, x, v->u.items[i]->id, depth)) < 0)
                return r;
            hits += r;
        }
        if (hits != 1)
            return 0;
    }
    if ((v = gm_jv_get(sv, "not"))) {
        if ((r = check(c, x, v->id, depth)) != 0)
            return r < 0 ? r : 0;
    }
    if (draft_at(c, s) >= SC_DRAFT7 && (v = gm_jv_get(sv, "if"))) {
        if ((r = check(c, x, v->id, depth)) < 0)
            return r;
        const gm_jv *branch = gm_jv_get(sv, r ? "then" : "else");
        if (branch && (r = check(c, x, branch->id, depth)) <= 0)
            return r;
    }
    return 1;
}

static int check(sctx *c, const gm_jv *x, uint32_t s, unsigned depth)
{
    if (c->st != GM_OK)
        return -1;
    const gm_jv *sv = c->value[s];
    if (sv->kind == GM_JV_TRUE)
        return 1;
    if (sv->kind == GM_JV_FALSE)
        return 0;
    if (sv->kind != GM_JV_OBJECT)
        return 1;
    if (depth > MAX_DEPTH) {
        sc_fail(c, GM_ERR_LIMIT, s, NULL, "checking a constant recursed more than %d deep (a $ref "
                "cycle without progress?)", MAX_DEPTH);
        return -1;
    }
    depth++;
    int r = check_ref(c, x, s, "$ref", depth);
    if (r <= 0 || r == 2)
        return r < 0 ? r : r == 2 ? 1 : 0;
    if ((r = check_ref(c, x, s, "$dynamicRef", depth)) <= 0 ||
        (r = check_ref(c, x, s, "$recursiveRef", depth)) <= 0)
        return r;
    const gm_jv *v;
    const gm_jv *nl = gm_jv_get(sv, "nullable");
    bool null_ok = nl && nl->kind == GM_JV_TRUE && x->kind == GM_JV_NULL;
    if ((v = gm_jv_get(sv, "type"))) {
        bool ok = null_ok;
        if (v->kind == GM_JV_ARRAY) {
            for (uint32_t i = 0; i < v->n && !ok; i++)
                ok = type_ok(c, x, s, v->u.items[i]);
        } else {
            ok = ok || type_ok(c, x, s, v);
        }
        if (!ok)
            return 0;
    }
    if ((v = gm_jv_get(sv, "enum")) && v->kind == GM_JV_ARRAY) {
        bool ok = null_ok || sc_jindex_find(&c->enums, v, x) != UINT32_MAX;
        if (!ok)
            return 0;
    }
    if (draft_at(c, s) >= SC_DRAFT6 && (v = gm_jv_get(sv, "const")) && !gm_jv_equal(x, v))
        return 0;
    if ((v = gm_jv_get(sv, "$gm_notenum")) && v->kind == GM_JV_ARRAY && /* synth.c */
        sc_jindex_find(&c->enums, v, x) != UINT32_MAX)
        return 0;
    if (gm_jv_get(sv, "$gm_notint") && x->kind == GM_JV_NUMBER) {
        gm_dec d;
        if (!gm_dec_parse(&d, x->u.s, x->n) && gm_dec_is_integer(&d))
            return 0;
    }
    if ((v = gm_jv_get(sv, "$gm_notpattern")) && v->kind == GM_JV_STRING && x->kind == GM_JV_STRING) {
        int m = match_pattern(c, s, "not", v->u.s, v->n, x->u.s, x->n, 0);
        if (m != 0)
            return m < 0 ? m : 0;
    }
    r = 1;
    if (x->kind == GM_JV_NUMBER)
        r = check_number(c, x, s, sv);
    else if (x->kind == GM_JV_STRING)
        r = check_string(c, x, s, sv);
    else if (x->kind == GM_JV_ARRAY)
        r = check_array(c, x, s, sv, depth);
    else if (x->kind == GM_JV_OBJECT)
        r = check_object(c, x, s, sv, depth);
    if (r <= 0)
        return r;
    return check_applicators(c, x, s, sv, depth);
}

int sc_validate(sctx *c, const gm_jv *x, uint32_t schema)
{
    return check(c, x, schema, 0);
}

int sc_validate_all(sctx *c, const gm_jv *x, const uint32_t *nodes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int r = check(c, x, nodes[i] & ~SC_NOALT, 0);
        if (r <= 0)
            return r;
    }
    return 1;
}
