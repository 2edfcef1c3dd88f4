/*
 * Resources and references: which values are schemas, their draft and
 * base URI ($schema, $id / id), the URIs and anchors they define, $ref
 * resolution (local, JSON-pointer and anchor fragments, $id-relative),
 * and the messages that name a keyword by its JSON pointer.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "schema/internal.h"
#include "schema/uri.h"

#define ROOT_BASE "gramask:///schema.json"

/* ---- messages ---- */

void sc_pointer(sctx *c, uint32_t id, gm_strbuf *out)
{
    uint32_t chain[600];
    size_t n = 0;
    for (uint32_t x = id; x != UINT32_MAX && n < 600; x = c->parent[x])
        chain[n++] = x;
    for (size_t i = n; i-- > 1;) {
        const gm_jv *p = c->value[chain[i]], *v = c->value[chain[i - 1]];
        if (p->kind == GM_JV_OBJECT) {
            for (uint32_t k = 0; k < p->n; k++)
                if (p->u.members[k].value == v) {
                    gm_json_pointer_append(out, p->u.members[k].key, p->u.members[k].klen);
                    break;
                }
        } else {
            for (uint32_t k = 0; k < p->n; k++)
                if (p->u.items[k] == v) {
                    gm_strbuf_printf(out, "/%u", k);
                    break;
                }
        }
    }
}

/* "keyword 'kw' at /ptr/kw" or "the schema at /ptr", into buf. */
static void describe(sctx *c, uint32_t node, const char *kw, char *buf, size_t cap)
{
    gm_strbuf p;
    gm_strbuf_init(&p, c->mem);
    sc_pointer(c, node, &p);
    if (kw) {
        gm_json_pointer_append(&p, kw, strlen(kw));
        snprintf(buf, cap, "keyword '%s' at %s", kw, p.failed ? "?" : gm_strbuf_str(&p));
    } else {
        snprintf(buf, cap, "the schema at %s", p.n ? gm_strbuf_str(&p) : "/ (the root)");
    }
    gm_strbuf_free(&p);
}

static uint32_t offset_of(sctx *c, uint32_t node, const char *kw)
{
    const gm_jv *v = c->value[node];
    const gm_jv *k = kw ? gm_jv_get(v, kw) : NULL;
    return k ? k->off : v->off;
}

uint32_t sc_fail(sctx *c, gm_status code, uint32_t node, const char *kw, const char *fmt, ...)
{
    if (c->st != GM_OK || c->b.st != GM_OK)
        return GM_EX_NONE;
    char msg[640], where[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    describe(c, node, kw, where, sizeof where);
    gm_srcloc loc = gm_jdoc_loc(&c->doc, offset_of(c, node, kw));
    gm_error_set_at(c->err, code, loc, NULL, 0, "%s: %s", where, msg);
    c->st = code;
    c->b.st = code; /* stop the builder too */
    return GM_EX_NONE;
}

bool sc_relax(sctx *c, uint32_t node, const char *kw, const char *why)
{
    if (!c->opts.lenient) {
        sc_fail(c, GM_ERR_UNSUPPORTED, node, kw, "%s (no exact grammar exists; the lenient option "
                "relaxes it)", why);
        return false;
    }
    c->relaxations++;
    if (c->opts.warn) {
        char where[320];
        describe(c, node, kw, where, sizeof where);
        gm_error w;
        gm_srcloc loc = gm_jdoc_loc(&c->doc, offset_of(c, node, kw));
        gm_error_set_at(&w, GM_ERR_UNSUPPORTED, loc, NULL, 0, "%s: relaxed: %s (the grammar accepts "
                        "a superset here)", where, why);
        c->opts.warn(c->opts.warn_ud, &w);
    }
    return true;
}

bool sc_relax_limit(sctx *c, uint32_t node, const char *kw, const char *why)
{
    if (!c->opts.lenient) {
        sc_fail(c, GM_ERR_LIMIT, node, kw, "%s (the lenient option relaxes it to a superset)", why);
        return false;
    }
    return sc_relax(c, node, kw, why);
}

void sc_warn(sctx *c, uint32_t node, const char *kw, const char *fmt, ...)
{
    if (!c->opts.warn)
        return;
    char msg[640], where[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    describe(c, node, kw, where, sizeof where);
    gm_error w;
    gm_srcloc loc = gm_jdoc_loc(&c->doc, offset_of(c, node, kw));
    gm_error_set_at(&w, GM_OK, loc, NULL, 0, "%s: %s", where, msg);
    c->opts.warn(c->opts.warn_ud, &w);
}

const gm_jv *sc_kw(const sctx *c, uint32_t id, const char *kw)
{
    return gm_jv_get(c->value[id], kw);
}

/* ---- indexing ---- */

static void link_values(sctx *c, const gm_jv *v, uint32_t parent)
{
    c->value[v->id] = v;
    c->parent[v->id] = parent;
    if (v->kind == GM_JV_ARRAY)
        for (uint32_t i = 0; i < v->n; i++)
            link_values(c, v->u.items[i], v->id);
    else if (v->kind == GM_JV_OBJECT)
        for (uint32_t i = 0; i < v->n; i++)
            link_values(c, v->u.members[i].value, v->id);
}

static uint32_t draft_of(const gm_jv *s)
{
    if (!s || s->kind != GM_JV_STRING)
        return 0;
    static const struct { const char *frag; uint32_t draft; } known[] = {
        {"json-schema.org/draft-03/", SC_DRAFT4}, {"json-schema.org/draft-04/", SC_DRAFT4},
        {"json-schema.org/draft-06/", SC_DRAFT6}, {"json-schema.org/draft-07/", SC_DRAFT7},
        {"json-schema.org/draft/2019-09/", SC_DRAFT2019},
        {"json-schema.org/draft/2020-12/", SC_DRAFT2020},
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strstr(s->u.s, known[i].frag))
            return known[i].draft;
    return 0;
}

/* Interns an absolute URI naming node; a second, different node under one URI is ignored. */
static gm_status add_uri(sctx *c, const char *uri, size_t n, uint32_t node)
{
    uint32_t id;
    int added;
    if (gm_intern_put(&c->uris, uri, n, &id, &added))
        return c->st = gm_mem_fail(c->mem, c->err, "a schema index");
    if (added && gm_vec_push(c->mem, &c->uri_node, node))
        return c->st = gm_mem_fail(c->mem, c->err, "a schema index");
    return GM_OK;
}

static const char *arena_str(sctx *c, const char *s, size_t n)
{
    char *p = gm_jdoc_alloc(&c->doc, n + 1);
    if (!p) {
        c->st = gm_mem_fail(c->mem, c->err, "a schema index");
        return NULL;
    }
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static gm_status add_anchor(sctx *c, const char *base, const char *name, size_t n, uint32_t node)
{
    gm_strbuf k;
    gm_strbuf_init(&k, c->mem);
    gm_strbuf_puts(&k, base);
    gm_strbuf_putc(&k, '#');
    gm_strbuf_append(&k, name, n);
    gm_status st = k.failed ? (c->st = gm_mem_fail(c->mem, c->err, "a schema index"))
                            : add_uri(c, gm_strbuf_str(&k), k.n, node);
    gm_strbuf_free(&k);
    return st;
}

static gm_status add_dynamic(sctx *c, const char *name, size_t n, uint32_t node)
{
    uint32_t id;
    int added;
    if (gm_intern_put(&c->dyn, name, n, &id, &added) ||
        (added && (gm_vec_push(c->mem, &c->dyn_node, node) || gm_vec_push(c->mem, &c->dyn_count, 0))))
        return c->st = gm_mem_fail(c->mem, c->err, "a schema index");
    c->dyn_count.v[id]++;
    return GM_OK;
}

static gm_status visit(sctx *c, const gm_jv *v, const char *base, uint32_t draft);

static gm_status visit_members(sctx *c, const gm_jv *obj, const char *base, uint32_t draft)
{
    if (!obj || obj->kind != GM_JV_OBJECT)
        return GM_OK;
    for (uint32_t i = 0; i < obj->n && c->st == GM_OK; i++)
        visit(c, obj->u.members[i].value, base, draft);
    return c->st;
}

static gm_status visit_items(sctx *c, const gm_jv *arr, const char *base, uint32_t draft)
{
    if (!arr)
        return GM_OK;
    if (arr->kind != GM_JV_ARRAY)
        return visit(c, arr, base, draft);
    for (uint32_t i = 0; i < arr->n && c->st == GM_OK; i++)
        visit(c, arr->u.items[i], base, draft);
    return c->st;
}

static gm_status visit(sctx *c, const gm_jv *v, const char *base, uint32_t draft)
{
    if (c->st != GM_OK)
        return c->st;
    if (v->kind == GM_JV_TRUE || v->kind == GM_JV_FALSE) {
        c->draft[v->id] = (uint16_t)draft;
        c->base[v->id] = base;
        return GM_OK;
    }
    if (v->kind != GM_JV_OBJECT || c->draft[v->id])
        return GM_OK;
    const gm_jv *sv = gm_jv_get(v, "$schema");
    uint32_t d = draft_of(sv);
    if (d)
        draft = d;
    else if (sv && sv->kind == GM_JV_STRING && !strstr(sv->u.s, "json-schema.org/schema") &&
             !sc_relax(c, v->id, "$schema", "an unknown metaschema (its vocabularies are unknown; "
                       "the schema is read with the standard ones)"))
        return c->st;
    bool has_ref = gm_jv_get(v, "$ref") != NULL;
    const gm_jv *id = gm_jv_get(v, draft == SC_DRAFT4 ? "id" : "$id");
    if (id && id->kind == GM_JV_STRING && !(has_ref && draft <= SC_DRAFT7)) {
        if (id->u.s[0] == '#' && draft <= SC_DRAFT7) {
            if (add_anchor(c, base, id->u.s + 1, id->n - 1, v->id))
                return c->st;
        } else {
            gm_strbuf u;
            gm_strbuf_init(&u, c->mem);
            gm_uri_resolve(base, id->u.s, id->n, &u);
            if (u.failed) {
                gm_strbuf_free(&u);
                return c->st = gm_mem_fail(c->mem, c->err, "a schema index");
            }
            size_t n = gm_uri_strip_fragment(gm_strbuf_str(&u), u.n);
            const char *nb = arena_str(c, gm_strbuf_str(&u), n);
            if (nb && n + 1 < u.n && draft <= SC_DRAFT7)
                add_anchor(c, nb, gm_strbuf_str(&u) + n + 1, u.n - n - 1, v->id);
            gm_strbuf_free(&u);
            if (!nb || add_uri(c, nb, n, v->id))
                return c->st;
            base = nb;
        }
    }
    c->draft[v->id] = (uint16_t)draft;
    c->base[v->id] = base;
    const gm_jv *a = gm_jv_get(v, "$anchor");
    if (a && a->kind == GM_JV_STRING && add_anchor(c, base, a->u.s, a->n, v->id))
        return c->st;
    a = gm_jv_get(v, "$dynamicAnchor");
    if (a && a->kind == GM_JV_STRING &&
        (add_anchor(c, base, a->u.s, a->n, v->id) || add_dynamic(c, a->u.s, a->n, v->id)))
        return c->st;
    a = gm_jv_get(v, "$recursiveAnchor");
    if (a && a->kind == GM_JV_TRUE && add_dynamic(c, "", 0, v->id))
        return c->st;
    static const char *maps[] = {"properties", "patternProperties", "$defs", "definitions",
                                 "dependentSchemas", "dependencies"};
    static const char *singles[] = {"additionalProperties", "additionalItems", "contains", "not",
                                    "if", "then", "else", "propertyNames", "unevaluatedProperties",
                                    "unevaluatedItems", "contentSchema", "items"};
    static const char *lists[] = {"allOf", "anyOf", "oneOf", "prefixItems"};
    for (size_t i = 0; i < sizeof maps / sizeof *maps; i++)
        visit_members(c, gm_jv_get(v, maps[i]), base, draft);
    for (size_t i = 0; i < sizeof singles / sizeof *singles; i++) {
        const gm_jv *s = gm_jv_get(v, singles[i]);
        if (s)
            visit_items(c, s, base, draft);
    }
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++)
        visit_items(c, gm_jv_get(v, lists[i]), base, draft);
    return c->st;
}

gm_status sc_index(sctx *c)
{
    uint32_t n = c->doc.nvalues;
    c->nids = n;
    c->ids_cap = n + 64;
    c->value = gm_mem_calloc(c->mem, c->ids_cap, sizeof *c->value);
    c->parent = gm_mem_calloc(c->mem, c->ids_cap, sizeof *c->parent);
    c->draft = gm_mem_calloc(c->mem, c->ids_cap, sizeof *c->draft);
    c->base = gm_mem_calloc(c->mem, c->ids_cap, sizeof *c->base);
    if (!c->value || !c->parent || !c->draft || !c->base)
        return c->st = gm_mem_fail(c->mem, c->err, "a schema index");
    link_values(c, c->doc.root, UINT32_MAX);
    uint32_t d = draft_of(gm_jv_get(c->doc.root, "$schema"));
    c->default_draft = d ? d : c->opts.draft ? (uint32_t)c->opts.draft : SC_DRAFT2020;
    if (add_uri(c, ROOT_BASE, strlen(ROOT_BASE), c->doc.root->id))
        return c->st;
    return visit(c, c->doc.root, ROOT_BASE, c->default_draft);
}

/* ---- references ---- */

static uint32_t lookup(sctx *c, const char *uri, size_t n)
{
    uint32_t id = gm_intern_find(&c->uris, uri, n);
    return id == UINT32_MAX ? UINT32_MAX : c->uri_node.v[id];
}

/* The schema node at target (visiting it if no walk reached it: a pointer into a non-schema place). */
static uint32_t as_schema(sctx *c, const gm_jv *target, uint32_t from, const char *kw,
                          const char *base, uint32_t draft)
{
    if (target->kind != GM_JV_OBJECT && target->kind != GM_JV_TRUE && target->kind != GM_JV_FALSE) {
        sc_fail(c, GM_ERR_GRAMMAR, from, kw, "the reference names a value that is not a schema");
        return UINT32_MAX;
    }
    if (!c->draft[target->id] && visit(c, target, base, draft) != GM_OK)
        return UINT32_MAX;
    return target->id;
}

uint32_t sc_resolve_ref(sctx *c, uint32_t node, const char *kw, const gm_jv *ref)
{
    if (ref->kind != GM_JV_STRING) {
        sc_fail(c, GM_ERR_GRAMMAR, node, kw, "a reference must be a string");
        return UINT32_MAX;
    }
    const char *text = ref->u.s;
    size_t tlen = ref->n;
    gm_strbuf u;
    gm_strbuf_init(&u, c->mem);
    gm_uri_resolve(c->base[node] ? c->base[node] : ROOT_BASE, text, tlen, &u);
    if (u.failed) {
        gm_strbuf_free(&u);
        c->st = gm_mem_fail(c->mem, c->err, "a reference");
        return UINT32_MAX;
    }
    const char *full = gm_strbuf_str(&u);
    size_t docn = gm_uri_strip_fragment(full, u.n);
    uint32_t res = lookup(c, full, docn);
    uint32_t result = UINT32_MAX;
    if (res == UINT32_MAX) {
        char why[400];
        snprintf(why, sizeof why, "the reference '%.*s' names a schema outside this document "
                 "(remote references are not fetched)", (int)(tlen > 200 ? 200 : tlen), text);
        gm_strbuf_free(&u);
        if (!c->opts.lenient) {
            sc_fail(c, GM_ERR_UNSUPPORTED, node, kw, "%s", why);
            return UINT32_MAX;
        }
        sc_relax(c, node, kw, why);
        return UINT32_MAX - 1;
    }
    const char *frag = docn < u.n ? full + docn + 1 : "";
    size_t fn = docn < u.n ? u.n - docn - 1 : 0;
    const gm_jv *rv = c->value[res];
    if (fn == 0) {
        result = as_schema(c, rv, node, kw, c->base[res], c->draft[res]);
    } else if (frag[0] == '/') {
        bool bad = false;
        const gm_jv *t = gm_json_pointer(rv, frag, fn, &bad);
        if (!t)
            sc_fail(c, GM_ERR_GRAMMAR, node, kw, "the reference '%.*s' %s",
                    (int)(tlen > 200 ? 200 : tlen), text,
                    bad ? "has a malformed JSON pointer" : "names nothing in the document");
        else
            result = as_schema(c, t, node, kw, c->base[res], c->draft[res]);
    } else {
        uint32_t a = lookup(c, full, u.n);
        if (a == UINT32_MAX)
            sc_fail(c, GM_ERR_GRAMMAR, node, kw, "the reference '%.*s' names an unknown anchor",
                    (int)(tlen > 200 ? 200 : tlen), text);
        else
            result = a;
    }
    gm_strbuf_free(&u);
    if (result < UINT32_MAX - 1 && (!strcmp(kw, "$dynamicRef") || !strcmp(kw, "$recursiveRef"))) {
        /* dynamic only when the static target carries the matching dynamic anchor; then exact
           when that anchor is the only one of its name (the dynamic scope can find no other) */
        const gm_jv *t = c->value[result];
        bool recursive = kw[1] == 'r';
        const char *hash = memchr(text, '#', tlen);
        const char *name = recursive ? "" : hash && hash[1] != '/' ? hash + 1 : NULL;
        const gm_jv *a = gm_jv_get(t, recursive ? "$recursiveAnchor" : "$dynamicAnchor");
        bool dynamic = name && a &&
                       (recursive ? a->kind == GM_JV_TRUE : a->kind == GM_JV_STRING && !strcmp(a->u.s, name));
        uint32_t id = dynamic ? gm_intern_find(&c->dyn, name, strlen(name)) : UINT32_MAX;
        if (id != UINT32_MAX && c->dyn_count.v[id] > 1) {
            if (!sc_relax(c, node, kw, "a dynamic reference with several candidate anchors"))
                return UINT32_MAX;
            return UINT32_MAX - 1;
        }
    }
    return result;
}
