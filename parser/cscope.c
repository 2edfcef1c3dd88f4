/* Persistent typedef scopes for matchers (parser/cscope.h, note [typedef scopes in matchers]). */
#include "parser/cscope.h"

#include <string.h>

void gm_cscope_retain(gm_cscope *n)
{
    if (n)
        atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
}

void gm_cscope_release(gm_mem *m, gm_cscope *n)
{
    while (n && atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1) {
        gm_cscope *parent = n->parent;
        /* saved points into a scope list, whose nodes have no saved: one level deep */
        gm_cscope_release(m, n->saved);
        gm_mem_free(m, atomic_load_explicit(&n->memo, memory_order_relaxed));
        gm_mem_free(m, n);
        n = parent;
    }
}

void gm_cstate_retain(const gm_cstate *s)
{
    gm_cscope_retain(s->scope);
    gm_cscope_retain(s->blocks);
    gm_cscope_retain(s->pending);
    gm_cscope_retain(s->text);
}

void gm_cstate_release(gm_mem *m, gm_cstate *s)
{
    gm_cscope_release(m, s->scope);
    gm_cscope_release(m, s->blocks);
    gm_cscope_release(m, s->pending);
    gm_cscope_release(m, s->text);
    memset(s, 0, sizeof *s);
}

/* A node on parent (retained here) with text; one reference; NULL on no memory. */
static gm_cscope *push(gm_mem *m, gm_cscope *parent, const uint8_t *text, size_t len)
{
    gm_cscope *n = gm_mem_alloc(m, sizeof *n + len);
    if (!n)
        return NULL;
    n->parent = parent;
    gm_cscope_retain(parent);
    n->saved = NULL;
    atomic_init(&n->memo, NULL);
    atomic_init(&n->refs, 1);
    n->is_type = 0;
    n->block = 0;
    n->len = (uint32_t)len;
    if (len)
        memcpy(n->text, text, len);
    return n;
}

gm_cscope *gm_cscope_text(gm_mem *m, const uint8_t *text, size_t len)
{
    return push(m, NULL, text, len);
}

static bool same(const gm_cscope *n, const uint8_t *text, size_t len)
{
    return n->len == len && !memcmp(n->text, text, len);
}

uint32_t gm_cscope_classify(const gm_ctypedef *td, const gm_cscope *scope, uint32_t term,
                            const uint8_t *text, size_t len)
{
    if (term != td->identifier)
        return term;
    for (const gm_cscope *n = scope; n; n = n->parent)
        if (same(n, text, len))
            return n->is_type ? td->typedef_name : term;
    return term;
}

bool gm_cscope_type_prefix(const gm_cscope *scope, const uint8_t *text, size_t len)
{
    /* A typedef node decides its name unless an ordinary node above it has the same text
       (a typedef node above it with that text would have been found first). The list
       keeps few ordinary nodes: remember those met so far, the first ORD_SEEN of them. */
    enum { ORD_SEEN = 32 };
    const gm_cscope *ord[ORD_SEEN];
    size_t nord = 0;
    bool all_seen = true;
    for (const gm_cscope *n = scope; n; n = n->parent) {
        if (!n->is_type) {
            if (nord < ORD_SEEN)
                ord[nord++] = n;
            else
                all_seen = false;
            continue;
        }
        if (n->len < len || memcmp(n->text, text, len))
            continue;
        bool shadowed = false;
        if (all_seen) {
            for (size_t i = 0; i < nord && !shadowed; i++)
                shadowed = same(ord[i], n->text, n->len);
        } else {
            const gm_cscope *k = scope;
            while (k != n && !same(k, n->text, n->len))
                k = k->parent;
            shadowed = k != n;
        }
        if (!shadowed)
            return true;
    }
    return false;
}

/*
 * Whether an ordinary binding of text needs a node: only when a typedef
 * binding of the same name is on the list (it may shadow it). Otherwise the
 * name is an ordinary identifier whether it is bound or not, and stays so
 * whatever is pushed later (a later binding comes first), so the lists hold
 * the typedef names and the few ordinary names that shadow one: lookups
 * walk those, not every declared name.
 */
static bool shadows(const gm_cscope *scope, const uint8_t *text, size_t len)
{
    for (const gm_cscope *n = scope; n; n = n->parent)
        if (n->is_type && same(n, text, len))
            return true;
    return false;
}

/* Replaces *slot (one reference) by n (one reference). */
static void put(gm_mem *m, gm_cscope **slot, gm_cscope *n)
{
    gm_cscope_release(m, *slot);
    *slot = n;
}

static gm_status nomem(gm_mem *m, gm_error *err)
{
    return gm_mem_fail(m, err, "the typedef-name layer of a matcher");
}

gm_status gm_cscope_shifted(const gm_ctypedef *td, gm_mem *m, gm_cstate *s, const gm_lr_node *top,
                            uint32_t term, const uint8_t *text, size_t len, gm_error *err)
{
    if (term == td->lbrace) {
        bool block = td->shift_kind[top->state] & GM_CTYPEDEF_BLOCK;
        bool body = block && top->parent && (td->shift_kind[top->parent->state] & GM_CTYPEDEF_BODY);
        gm_cscope *b = push(m, s->blocks, NULL, 0);
        if (!b)
            return nomem(m, err);
        b->block = block;
        if (block) {
            b->saved = s->scope;
            gm_cscope_retain(s->scope);
        }
        /* The parameters, in the order they came (the list is newest first: any order binds
           the same names, and a repeated name is a compile error C reports elsewhere). */
        gm_cscope *scope = s->scope;
        gm_cscope_retain(scope);
        for (const gm_cscope *p = body ? s->pending : NULL; p; p = p->parent) {
            if (!shadows(scope, p->text, p->len))
                continue;
            gm_cscope *n = push(m, scope, p->text, p->len);
            gm_cscope_release(m, scope);
            if (!n) {
                gm_cscope_release(m, b);
                return nomem(m, err);
            }
            scope = n;
        }
        put(m, &s->blocks, b);
        put(m, &s->scope, scope);
        put(m, &s->pending, NULL);
        return GM_OK;
    }
    if (term == td->rbrace) {
        gm_cscope *b = s->blocks;
        if (!b)
            return GM_OK; /* the parser rejects an unmatched `}` anyway */
        if (b->block) {
            gm_cscope_retain(b->saved);
            put(m, &s->scope, b->saved);
        }
        gm_cscope_retain(b->parent);
        put(m, &s->blocks, b->parent);
        return GM_OK;
    }
    if (term == td->semi) {
        put(m, &s->pending, NULL);
        return GM_OK;
    }
    if (term != td->identifier && term != td->typedef_name)
        return GM_OK;
    uint8_t kind = td->shift_kind[top->state] & ~(GM_CTYPEDEF_BLOCK | GM_CTYPEDEF_BODY);
    if (!kind)
        return GM_OK;
    if (kind == 2) {
        gm_cscope *n = push(m, s->pending, text, len);
        if (!n)
            return nomem(m, err);
        put(m, &s->pending, n);
        return GM_OK;
    }
    bool is_type = kind == 1 && gm_ctypedef_in_typedef(td, top->parent);
    if (kind == 1)
        put(m, &s->pending, NULL);
    if (!is_type && !shadows(s->scope, text, len))
        return GM_OK;
    gm_cscope *n = push(m, s->scope, text, len);
    if (!n)
        return nomem(m, err);
    n->is_type = is_type;
    put(m, &s->scope, n);
    return GM_OK;
}
