/* Gathering the keywords of a conjunction into one shape (shape.h). */
#include "schema/shape.h"

#include <stdlib.h>
#include <string.h>

bool sc_has(const uint32_t *v, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

void sc_shape_free(sctx *c, sc_shape *sh)
{
    gm_vec_free(c->mem, &sh->nodes);
    gm_vec_free(c->mem, &sh->noalt);
    gm_vec_free(c->mem, &sh->enums);
    gm_vec_free(c->mem, &sh->mults);
    gm_vec_free(c->mem, &sh->strs);
    gm_vec_free(c->mem, &sh->arrs);
    gm_vec_free(c->mem, &sh->objs);
    gm_vec_free(c->mem, &sh->required);
    gm_vec_free(c->mem, &sh->pnames);
    gm_vec_free(c->mem, &sh->deps);
    gm_vec_free(c->mem, &sh->groups);
    gm_vec_free(c->mem, &sh->unsup);
    gm_vec_free(c->mem, &sh->notenums);
    gm_vec_free(c->mem, &sh->notpats);
}

typedef struct builder {
    sctx *c;
    sc_shape *sh;
} builder;

static gm_status nomem(builder *b)
{
    if (b->c->st == GM_OK)
        b->c->st = gm_mem_fail(b->c->mem, b->c->err, "a schema shape");
    return b->c->st;
}

#define PUSH(b, vec, x) (gm_vec_push((b)->c->mem, (vec), (x)) ? nomem(b) : GM_OK)

static gm_status bad(builder *b, uint32_t node, const char *kw, const char *what)
{
    sc_fail(b->c, GM_ERR_GRAMMAR, node, kw, "%s", what);
    return b->c->st;
}

static gm_status unsup(builder *b, uint32_t node, const char *kw, uint32_t types, const char *why)
{
    sc_unsup u = {node, kw, types, why};
    return PUSH(b, &b->sh->unsup, u);
}

static uint32_t type_bit(const gm_jv *t)
{
    if (t->kind != GM_JV_STRING)
        return 0;
    static const struct { const char *name; uint32_t bits; } names[] = {
        {"null", T_NULL}, {"boolean", T_BOOL}, {"object", T_OBJ}, {"array", T_ARR},
        {"string", T_STR}, {"integer", T_INT}, {"number", T_INT | T_NUM},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(t->u.s, names[i].name))
            return names[i].bits;
    return 0;
}

/* A count keyword (minLength, ...): a non-negative integer (5.0 allowed); false on error. */
static bool count_value(builder *b, uint32_t node, const char *kw, const gm_jv *v, uint32_t *out)
{
    gm_dec d;
    if (v->kind != GM_JV_NUMBER || gm_dec_parse(&d, v->u.s, v->n) || d.neg || !gm_dec_is_integer(&d)) {
        bad(b, node, kw, "must be a non-negative integer");
        return false;
    }
    char buf[32];
    if (gm_dec_int_digits(&d, buf, sizeof buf) || strlen(buf) > 9)
        *out = UINT32_MAX - 1; /* beyond any realistic size: saturate */
    else
        *out = (uint32_t)strtoul(buf, NULL, 10);
    return true;
}

static bool number_value(builder *b, uint32_t node, const char *kw, const gm_jv *v, gm_dec *out)
{
    if (v->kind != GM_JV_NUMBER) {
        bad(b, node, kw, "must be a number");
        return false;
    }
    if (gm_dec_parse(out, v->u.s, v->n)) {
        sc_fail(b->c, GM_ERR_LIMIT, node, kw, "the number has more than %d significant digits or "
                "an exponent beyond %d", GM_DEC_MAX_DIGITS, GM_DEC_MAX_EXP);
        return false;
    }
    return true;
}

static void tighten(sc_bound *bd, const gm_dec *v, bool excl, uint32_t node, bool lower)
{
    if (bd->set) {
        int cmp = gm_dec_cmp(v, &bd->v);
        if (lower ? cmp < 0 : cmp > 0)
            return;
        if (cmp == 0) {
            bd->excl = bd->excl || excl;
            return;
        }
    }
    bd->set = true;
    bd->v = *v;
    bd->excl = excl;
    bd->node = node;
}

static gm_status visit(builder *b, uint32_t id);

static gm_status visit_ref(builder *b, uint32_t id, const char *kw, const gm_jv *ref)
{
    uint32_t t = sc_resolve_ref(b->c, id, kw, ref);
    if (t == UINT32_MAX)
        return b->c->st != GM_OK ? b->c->st : (b->c->st = GM_ERR_GRAMMAR);
    if (t == UINT32_MAX - 1)
        return GM_OK; /* relaxed (lenient): no constraint */
    return visit(b, t);
}

static gm_status schema_list(builder *b, uint32_t id, const char *kw, const gm_jv *v)
{
    if (v->kind != GM_JV_ARRAY || v->n == 0)
        return bad(b, id, kw, "must be a non-empty array of schemas");
    for (uint32_t i = 0; i < v->n; i++) {
        uint8_t k = v->u.items[i]->kind;
        if (k != GM_JV_OBJECT && k != GM_JV_TRUE && k != GM_JV_FALSE)
            return bad(b, id, kw, "must be an array of schemas");
    }
    return GM_OK;
}

static bool is_schema(const gm_jv *v)
{
    return v->kind == GM_JV_OBJECT || v->kind == GM_JV_TRUE || v->kind == GM_JV_FALSE;
}

/* anyOf / oneOf: a group to distribute (one branch: the branch itself). */
static gm_status group(builder *b, uint32_t id, const char *k, const gm_jv *v, bool noalt, bool one)
{
    if (schema_list(b, id, k, v))
        return b->c->st;
    if (v->n == 1)
        return visit(b, v->u.items[0]->id);
    if (noalt)
        return GM_OK;
    sc_group g = {id, v, one};
    return PUSH(b, &b->sh->groups, g);
}

static gm_status keyword(builder *b, uint32_t id, const gm_jmember *m, bool noalt)
{
    sctx *c = b->c;
    sc_shape *sh = b->sh;
    const char *k = m->key;
    const gm_jv *v = m->value;
    const gm_jv *obj = c->value[id];
    uint32_t draft = c->draft[id] ? c->draft[id] : c->default_draft;
    switch (k[0]) {
    case '$':
        if (!strcmp(k, "$ref") || !strcmp(k, "$dynamicRef") || !strcmp(k, "$recursiveRef"))
            return visit_ref(b, id, k, v);
        if (!strcmp(k, "$gm_notenum"))
            return PUSH(b, &sh->notenums, v);
        if (!strcmp(k, "$gm_notint")) {
            sh->nonint = true;
            return GM_OK;
        }
        if (!strcmp(k, "$gm_notpattern")) {
            sc_strc s = {id, "pattern", v};
            return PUSH(b, &sh->notpats, s);
        }
        return GM_OK; /* $id, $schema, $defs, $anchor, $comment, $vocabulary, ... */
    case 'a':
        if (!strcmp(k, "allOf")) {
            if (schema_list(b, id, k, v))
                return c->st;
            for (uint32_t i = 0; i < v->n && c->st == GM_OK; i++)
                visit(b, v->u.items[i]->id);
            return c->st;
        }
        if (!strcmp(k, "anyOf"))
            return group(b, id, k, v, noalt, false);
        if (!strcmp(k, "additionalProperties") || !strcmp(k, "additionalItems"))
            return is_schema(v) ? GM_OK : bad(b, id, k, "must be a schema");
        return GM_OK;
    case 'o':
        if (!strcmp(k, "oneOf"))
            return group(b, id, k, v, noalt, true);
        return GM_OK;
    case 't':
        if (!strcmp(k, "type")) {
            uint32_t mask = 0;
            if (v->kind == GM_JV_ARRAY) {
                for (uint32_t i = 0; i < v->n; i++) {
                    uint32_t t = type_bit(v->u.items[i]);
                    if (!t)
                        return bad(b, id, k, "lists an unknown type");
                    mask |= t;
                }
            } else {
                mask = type_bit(v);
                if (!mask)
                    return bad(b, id, k, "must be a type name or an array of them");
            }
            const gm_jv *nl = gm_jv_get(obj, "nullable");
            if (nl && nl->kind == GM_JV_TRUE)
                mask |= T_NULL;
            sh->types &= mask;
        }
        return GM_OK;
    case 'e':
        if (!strcmp(k, "enum")) {
            if (v->kind != GM_JV_ARRAY)
                return bad(b, id, k, "must be an array");
            const gm_jv *nl = gm_jv_get(obj, "nullable");
            sc_enum e = {id, v, NULL, nl && nl->kind == GM_JV_TRUE};
            return PUSH(b, &sh->enums, e);
        }
        if (!strcmp(k, "exclusiveMinimum") || !strcmp(k, "exclusiveMaximum")) {
            if (v->kind == GM_JV_TRUE || v->kind == GM_JV_FALSE)
                return GM_OK; /* draft 4: read with minimum / maximum */
            gm_dec d;
            if (!number_value(b, id, k, v, &d))
                return c->st;
            tighten(k[10] == 'i' ? &sh->lo : &sh->hi, &d, true, id, k[10] == 'i');
            return GM_OK;
        }
        if (!strcmp(k, "else") && !gm_jv_get(obj, "if"))
            return GM_OK;
        return GM_OK;
    case 'c':
        if (draft < SC_DRAFT6)
            return GM_OK; /* const and contains came with draft 6 */
        if (!strcmp(k, "const")) {
            sc_enum e = {id, NULL, v, false};
            return PUSH(b, &sh->enums, e);
        }
        if (!strcmp(k, "contains")) {
            const gm_jv *mc = gm_jv_get(obj, "minContains");
            if (mc && mc->kind == GM_JV_NUMBER && mc->n == 1 && mc->u.s[0] == '0' &&
                !gm_jv_get(obj, "maxContains"))
                return GM_OK; /* minContains 0 without maxContains: contains asserts nothing */
            return unsup(b, id, k, T_ARR, "'contains' (an array must hold an item matching a schema)");
        }
        return GM_OK;
    case 'm':
        if (!strcmp(k, "minimum") || !strcmp(k, "maximum")) {
            gm_dec d;
            if (!number_value(b, id, k, v, &d))
                return c->st;
            bool lower = k[1] == 'i';
            const gm_jv *ex = gm_jv_get(obj, lower ? "exclusiveMinimum" : "exclusiveMaximum");
            tighten(lower ? &sh->lo : &sh->hi, &d, ex && ex->kind == GM_JV_TRUE, id, lower);
            return GM_OK;
        }
        if (!strcmp(k, "multipleOf")) {
            sc_mult mu = {id, {0}};
            if (!number_value(b, id, k, v, &mu.m))
                return c->st;
            if (mu.m.neg || gm_dec_is_zero(&mu.m))
                return bad(b, id, k, "must be a number greater than 0");
            return PUSH(b, &sh->mults, mu);
        }
        if (!strcmp(k, "minLength") || !strcmp(k, "maxLength") || !strcmp(k, "minItems") ||
            !strcmp(k, "maxItems") || !strcmp(k, "minProperties") || !strcmp(k, "maxProperties")) {
            uint32_t n;
            if (!count_value(b, id, k, v, &n))
                return c->st;
            bool mn = k[1] == 'i';
            uint32_t *lo, *hi, *where;
            if (k[3] == 'L') {
                lo = &sh->min_len, hi = &sh->max_len, where = &sh->len_node;
            } else if (k[3] == 'I') {
                lo = &sh->min_items, hi = &sh->max_items, where = &sh->items_node;
            } else {
                lo = &sh->min_props, hi = &sh->max_props, where = &sh->props_node;
            }
            if (mn && n > *lo)
                *lo = n, *where = id;
            if (!mn && n < *hi)
                *hi = n, *where = id;
            return GM_OK;
        }
        if (!strcmp(k, "minContains") || !strcmp(k, "maxContains"))
            return GM_OK; /* with contains */
        return GM_OK;
    case 'p':
        if (!strcmp(k, "pattern")) {
            if (v->kind != GM_JV_STRING)
                return bad(b, id, k, "must be a string");
            sc_strc s = {id, "pattern", v};
            return PUSH(b, &sh->strs, s);
        }
        if (!strcmp(k, "properties") || !strcmp(k, "patternProperties")) {
            if (v->kind != GM_JV_OBJECT)
                return bad(b, id, k, "must be an object of schemas");
            for (uint32_t i = 0; i < v->n; i++)
                if (!is_schema(v->u.members[i].value))
                    return bad(b, id, k, "must be an object of schemas");
            return GM_OK; /* gathered per schema in visit() */
        }
        if (!strcmp(k, "propertyNames") && draft >= SC_DRAFT6) {
            if (!is_schema(v))
                return bad(b, id, k, "must be a schema");
            if (v->kind == GM_JV_TRUE)
                return GM_OK;
            return PUSH(b, &sh->pnames, v->id);
        }
        if (!strcmp(k, "prefixItems") && draft >= SC_DRAFT2020)
            return schema_list(b, id, k, v);
        return GM_OK;
    case 'f':
        if (!strcmp(k, "format")) {
            if (v->kind != GM_JV_STRING)
                return bad(b, id, k, "must be a string");
            if (c->opts.format_annotation)
                return GM_OK; /* an annotation: no constraint */
            sc_strc s = {id, "format", v};
            return PUSH(b, &sh->strs, s);
        }
        return GM_OK;
    case 'i':
        if (!strcmp(k, "items")) {
            if (v->kind == GM_JV_ARRAY)
                return schema_list(b, id, k, v);
            return is_schema(v) ? GM_OK : bad(b, id, k, "must be a schema or an array of schemas");
        }
        if (!strcmp(k, "if") && draft >= SC_DRAFT7 && (gm_jv_get(obj, "then") || gm_jv_get(obj, "else"))) {
            const char *why;
            uint32_t x = sc_derived(c, 1, id, &why);
            if (x != UINT32_MAX)
                return visit(b, x);
            if (c->st != GM_OK)
                return c->st;
            return unsup(b, id, k, T_ALL, why);
        }
        return GM_OK;
    case 'n':
        if (!strcmp(k, "not")) {
            if (!is_schema(v))
                return bad(b, id, k, "must be a schema");
            if (v->kind == GM_JV_FALSE)
                return GM_OK;
            if (v->kind == GM_JV_TRUE) {
                sh->impossible = true;
                return GM_OK;
            }
            const char *why;
            uint32_t x = sc_derived(c, 0, v->id, &why);
            if (x != UINT32_MAX)
                return visit(b, x);
            if (c->st != GM_OK)
                return c->st;
            return unsup(b, id, k, T_ALL, why);
        }
        return GM_OK;
    case 'r':
        if (!strcmp(k, "required")) {
            if (v->kind == GM_JV_TRUE || v->kind == GM_JV_FALSE)
                return GM_OK; /* draft 3's boolean form: read by the parent's properties */
            if (v->kind != GM_JV_ARRAY)
                return bad(b, id, k, "must be an array of strings");
            for (uint32_t i = 0; i < v->n; i++) {
                if (v->u.items[i]->kind != GM_JV_STRING)
                    return bad(b, id, k, "must be an array of strings");
                if (PUSH(b, &sh->required, v->u.items[i]))
                    return c->st;
            }
        }
        return GM_OK;
    case 'u':
        if (!strcmp(k, "uniqueItems")) {
            if (v->kind == GM_JV_TRUE) {
                sh->unique_items = true;
                sh->unique_node = id;
            }
            return GM_OK;
        }
        if ((!strcmp(k, "unevaluatedProperties") || !strcmp(k, "unevaluatedItems")) &&
            draft >= SC_DRAFT2019) {
            if (v->kind == GM_JV_TRUE || (v->kind == GM_JV_OBJECT && v->n == 0))
                return GM_OK;
            return unsup(b, id, k, k[11] == 'P' ? T_OBJ : T_ARR,
                         "'unevaluated*' (depends on what other keywords evaluated)");
        }
        return GM_OK;
    case 'd':
        /* dependencies until draft 7, then split into dependentRequired and dependentSchemas */
        if (draft <= SC_DRAFT7 ? !strcmp(k, "dependencies")
                               : !strcmp(k, "dependentRequired") || !strcmp(k, "dependentSchemas")) {
            if (v->kind != GM_JV_OBJECT)
                return bad(b, id, k, "must be an object");
            for (uint32_t i = 0; i < v->n; i++) {
                const gm_jmember *d = &v->u.members[i];
                if (d->value->kind == GM_JV_ARRAY && k[9] != 'S') {
                    for (uint32_t j = 0; j < d->value->n; j++)
                        if (d->value->u.items[j]->kind != GM_JV_STRING)
                            return bad(b, id, k, "must list property names");
                    sc_dep dep = {id, d->key, d->klen, d->value};
                    if (PUSH(b, &sh->deps, dep))
                        return c->st;
                } else if (is_schema(d->value) && k[9] != 'R') {
                    if (d->value->kind == GM_JV_TRUE)
                        continue;
                    const char *why;
                    uint32_t x = sc_derived(c, 2 + i, v->id, &why);
                    if (x == UINT32_MAX)
                        return nomem(b);
                    if (visit(b, x))
                        return c->st;
                } else {
                    return bad(b, id, k, "has a member that is neither a list of names nor a schema");
                }
            }
        }
        return GM_OK;
    default:
        return GM_OK;
    }
}

static gm_status visit(builder *b, uint32_t id)
{
    sctx *c = b->c;
    sc_shape *sh = b->sh;
    if (c->st != GM_OK)
        return c->st;
    if (sc_has(sh->nodes.v, sh->nodes.n, id))
        return GM_OK;
    if (PUSH(b, &sh->nodes, id))
        return c->st;
    const gm_jv *v = c->value[id];
    if (v->kind == GM_JV_TRUE)
        return GM_OK;
    if (v->kind == GM_JV_FALSE) {
        sh->impossible = true;
        return GM_OK;
    }
    if (v->kind != GM_JV_OBJECT)
        return bad(b, id, NULL, "is not a schema (an object or a boolean)");
    if (++c->depth > 400) {
        c->depth--;
        sc_fail(c, GM_ERR_LIMIT, id, NULL, "schemas nest (through allOf and $ref) more than 400 deep");
        return c->st;
    }
    uint32_t draft = c->draft[id] ? c->draft[id] : c->default_draft;
    if (draft == SC_DRAFT4)
        sh->int_strict = true;
    const gm_jv *ref = gm_jv_get(v, "$ref");
    bool noalt = sc_has(sh->noalt.v, sh->noalt.n, id);
    if (ref && draft <= SC_DRAFT7) {
        visit_ref(b, id, "$ref", ref); /* draft 7 and before: the siblings of $ref are ignored */
    } else {
        /* the schema's own properties first, then those of what it applies (allOf, $ref) */
        const gm_jv *props = gm_jv_get(v, "properties"), *pp = gm_jv_get(v, "patternProperties"),
                    *ap = gm_jv_get(v, "additionalProperties");
        if (c->st == GM_OK && (props || pp || ap)) {
            sc_objsrc o = {id, props, pp && pp->n ? pp : NULL, ap && ap->kind != GM_JV_TRUE ? ap : NULL};
            if (o.props || o.pprops || o.addl)
                PUSH(b, &sh->objs, o);
            /* draft 3: "required": true inside a property schema */
            /* props is checked to be an object later: here it may still be anything */
            for (uint32_t i = 0; props && props->kind == GM_JV_OBJECT && i < props->n && c->st == GM_OK; i++) {
                const gm_jv *r = gm_jv_get(props->u.members[i].value, "required");
                if (r && r->kind == GM_JV_TRUE) {
                    gm_jv *name = gm_jdoc_alloc(&c->doc, sizeof *name);
                    if (!name) {
                        nomem(b);
                        break;
                    }
                    memset(name, 0, sizeof *name);
                    name->kind = GM_JV_STRING;
                    name->u.s = props->u.members[i].key;
                    name->n = props->u.members[i].klen;
                    PUSH(b, &sh->required, name);
                }
            }
        }
        for (uint32_t i = 0; i < v->n && c->st == GM_OK; i++)
            keyword(b, id, &v->u.members[i], noalt);
        const gm_jv *items = gm_jv_get(v, "items"), *pi = gm_jv_get(v, "prefixItems"),
                    *ai = gm_jv_get(v, "additionalItems");
        if (c->st == GM_OK && (items || (pi && draft >= SC_DRAFT2020))) {
            sc_arrsrc a = {id, NULL, NULL};
            if (pi && draft >= SC_DRAFT2020) {
                a.prefix = pi;
                a.rest = items && items->kind != GM_JV_ARRAY ? items : NULL;
            } else if (items->kind == GM_JV_ARRAY) {
                a.prefix = items;
                a.rest = ai;
            } else {
                a.rest = items;
            }
            if (a.rest && a.rest->kind == GM_JV_TRUE)
                a.rest = NULL;
            if (a.prefix || a.rest)
                PUSH(b, &sh->arrs, a);
        }
    }
    c->depth--;
    return c->st;
}

gm_status sc_shape_build(sctx *c, const uint32_t *conj, size_t n, sc_shape *sh)
{
    memset(sh, 0, sizeof *sh);
    sh->types = T_ALL;
    sh->max_len = sh->max_items = sh->max_props = UINT32_MAX;
    builder b = {c, sh};
    for (size_t i = 0; i < n; i++)
        if ((conj[i] & SC_NOALT) && PUSH(&b, &sh->noalt, conj[i] & ~SC_NOALT))
            return c->st;
    for (size_t i = 0; i < n && c->st == GM_OK; i++)
        visit(&b, conj[i] & ~SC_NOALT);
    return c->st;
}
