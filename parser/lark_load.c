/*
 * The definition table of a Lark grammar and its imports: what Lark's
 * GrammarBuilder does. Owns the rules for %import (bundled grammars and
 * files next to the importing one), name mangling of imported definitions,
 * %override, %extend, %declare, %ignore, and the validation of names
 * (undefined symbols, template uses, rules inside terminals).
 *
 * note [Lark imports]
 * `%import common.NUMBER` loads common.lark into a fresh table in which
 * every name is mangled: NUMBER (an imported name) becomes its alias
 * (NUMBER, or OTHER with `-> OTHER`), every other name X becomes
 * common__X (_X becomes _common__X), and a nested import mangles again.
 * Only the definitions that the imported names need are kept and copied
 * into the importing table; a name already defined there is an error.
 * All imports of a file are done before its own definitions, so defining
 * an imported name again needs %override. %ignore in imported grammars
 * has no effect (as in Lark), nor have gramask's %insert and %indent.
 */
#include "parser/bundled.h"
#include "parser/lark_load.h"
#include "parser/lark_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/file.h"

enum { MAX_IMPORT_DEPTH = 32 };

/* ------------------------------------------------------------------------
 * Diagnostics
 * ------------------------------------------------------------------------ */

static const gm_lsource *source_of(const gm_lload *L, const char *file)
{
    for (uint32_t i = 0; i < L->nsources; i++)
        if (L->sources[i].name == file)
            return &L->sources[i];
    return NULL;
}

gm_status gm_lload_error(gm_lload *L, gm_status code, gm_srcloc loc, const char *fmt, ...)
{
    if (!L->err)
        return code;
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const gm_lsource *src = source_of(L, loc.file);
    gm_error_set_at(L->err, code, loc, src ? src->text : NULL, src ? src->len : 0, "%s", msg);
    return code;
}

void gm_lload_warn(gm_lload *L, gm_status code, gm_srcloc loc, const char *fmt, ...)
{
    if (!L->opts || !L->opts->warn)
        return;
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_error w;
    const gm_lsource *src = source_of(L, loc.file);
    gm_error_set_at(&w, code, loc, src ? src->text : NULL, src ? src->len : 0, "warning: %s",
                    msg);
    L->opts->warn(L->opts->warn_ud, &w);
}

gm_status gm_lload_nomem(gm_lload *L)
{
    return gm_mem_fail(L->mem, L->err, "loading a grammar");
}

/* ------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------ */

static void builder_init(gm_lbuilder *b, gm_lload *L)
{
    memset(b, 0, sizeof *b);
    b->L = L;
    gm_intern_init(&b->names, L->mem);
}

void gm_lbuilder_free(gm_lbuilder *b)
{
    gm_intern_free(&b->names);
}

/* The id of name, making room for it in the per-id arrays. -1 on allocation failure. */
static int id_of(gm_lbuilder *b, const char *name, uint32_t *id)
{
    if (gm_intern_put(&b->names, name, strlen(name), id, NULL))
        return -1;
    if (*id >= b->cap) {
        gm_arena *a = &b->L->arena;
        size_t c1 = b->cap, c2 = b->cap, c3 = b->cap;
        if (gm_arena_grow(a, (void **)&b->defs, &c1, (size_t)*id + 1, sizeof *b->defs, b->cap) ||
            gm_arena_grow(a, (void **)&b->origin, &c2, (size_t)*id + 1, sizeof *b->origin,
                          b->cap) ||
            gm_arena_grow(a, (void **)&b->import_loc, &c3, (size_t)*id + 1,
                          sizeof *b->import_loc, b->cap))
            return -1;
        b->cap = c1;
    }
    return 0;
}

gm_ldef *gm_lbuilder_find(const gm_lbuilder *b, const char *name)
{
    uint32_t id = gm_intern_find(&b->names, name, strlen(name));
    return id == UINT32_MAX || id >= b->cap ? NULL : b->defs[id];
}

/* Whether a name as written is a terminal's (uppercase) rather than a rule's. */
static bool is_upper_name(const char *name)
{
    const char *p = name[0] == '_' ? name + 1 : name;
    return *p >= 'A' && *p <= 'Z';
}

static const char *kind_name(bool is_term)
{
    return is_term ? "terminal" : "rule";
}

static void describe_loc(char *buf, size_t cap, gm_srcloc l)
{
    snprintf(buf, cap, "%s:%u:%u", l.file ? l.file : "<input>", l.line, l.column);
}

/* Lark's _define: a new name, or %override of an existing one. */
static gm_status define(gm_lbuilder *b, gm_ldef *d, bool override, uint8_t origin,
                        gm_srcloc import_loc)
{
    gm_lload *L = b->L;
    uint32_t id;
    if (id_of(b, d->name, &id))
        return gm_lload_nomem(L);
    gm_ldef *old = b->defs[id];
    if (old && !override) {
        char at[300];
        describe_loc(at, sizeof at, b->origin[id] == GM_LORIGIN_LOCAL ? old->loc : b->import_loc[id]);
        return gm_lload_error(L, GM_ERR_GRAMMAR, d->loc, "%s '%s' is already %s at %s",
                              kind_name(d->is_term), d->name,
                              b->origin[id] == GM_LORIGIN_LOCAL ? "defined" : "imported", at);
    }
    if (!old && override)
        return gm_lload_error(L, GM_ERR_GRAMMAR, d->loc,
                              "cannot %%override %s '%s': it is not defined",
                              kind_name(d->is_term), d->name);
    if (!old) {
        size_t cap = b->order_cap;
        if (gm_arena_grow(&L->arena, (void **)&b->order, &cap, b->norder + 1, sizeof *b->order,
                          b->norder))
            return gm_lload_nomem(L);
        b->order_cap = cap;
        b->order[b->norder++] = id;
    }
    b->defs[id] = d;
    b->origin[id] = origin;
    b->import_loc[id] = import_loc;
    return GM_OK;
}

/* Lark's _extend: the new alternatives go before the old ones. */
static gm_status extend(gm_lbuilder *b, const gm_ldef *d)
{
    gm_lload *L = b->L;
    gm_ldef *old = gm_lbuilder_find(b, d->name);
    if (!old)
        return gm_lload_error(L, GM_ERR_GRAMMAR, d->loc,
                              "cannot %%extend %s '%s': it is not defined",
                              kind_name(d->is_term), d->name);
    if (!old->body)
        return gm_lload_error(L, GM_ERR_GRAMMAR, d->loc,
                              "cannot %%extend %s '%s': it is %%declare'd",
                              kind_name(d->is_term), d->name);
    bool same_params = old->nparams == d->nparams;
    for (uint32_t i = 0; same_params && i < d->nparams; i++)
        same_params = !strcmp(old->params[i], d->params[i]);
    if (!same_params)
        return gm_lload_error(L, GM_ERR_GRAMMAR, d->loc,
                              "cannot %%extend template '%s' with different parameters", d->name);
    gm_ldef *nd = gm_arena_alloc(&L->arena, sizeof *nd);
    gm_lx *body = nd ? gm_lx_new(&L->arena, LX_ALT, old->body->loc) : NULL;
    if (!body)
        return gm_lload_nomem(L);
    *nd = *old;
    for (uint32_t i = 0; i < d->body->n; i++)
        if (gm_lx_push(&L->arena, body, d->body->kids[i]))
            return gm_lload_nomem(L);
    for (uint32_t i = 0; i < old->body->n; i++)
        if (gm_lx_push(&L->arena, body, old->body->kids[i]))
            return gm_lload_nomem(L);
    nd->body = body;
    uint32_t id = gm_intern_find(&b->names, d->name, strlen(d->name));
    b->defs[id] = nd;
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * Mangling (note [Lark imports])
 * ------------------------------------------------------------------------ */

typedef struct lmangle {
    gm_lload *L;
    const char *prefix;          /* the dotted path joined with "__" */
    const char **from, **to;     /* imported names and their aliases */
    uint32_t n;
    const struct lmangle *base;  /* the importing grammar's own mangling, or NULL */
} lmangle;

static const char *mangle_name(void *ud, const char *name)
{
    const lmangle *m = ud;
    if (!m)
        return name;
    const char *s = NULL;
    for (uint32_t i = 0; i < m->n; i++)
        if (!strcmp(m->from[i], name))
            s = m->to[i];
    if (!s) {
        size_t np = strlen(m->prefix), nn = strlen(name);
        char *buf = gm_arena_alloc(&m->L->arena, np + nn + 4);
        if (!buf)
            return NULL;
        if (name[0] == '_')
            snprintf(buf, np + nn + 4, "_%s__%s", m->prefix, name + 1);
        else
            snprintf(buf, np + nn + 4, "%s__%s", m->prefix, name);
        s = buf;
    }
    return m->base ? mangle_name((void *)m->base, s) : s;
}

static gm_ldef *mangled_copy(gm_lload *L, const gm_ldef *d, const lmangle *m)
{
    gm_ldef *c = gm_arena_alloc(&L->arena, sizeof *c);
    if (!c)
        return NULL;
    *c = *d;
    if (!m)
        return c;
    c->name = mangle_name((void *)m, d->name);
    if (!c->name)
        return NULL;
    if (d->nparams) {
        c->params = gm_arena_array(&L->arena, d->nparams, sizeof *c->params);
        if (!c->params)
            return NULL;
        for (uint32_t i = 0; i < d->nparams; i++)
            if (!(c->params[i] = mangle_name((void *)m, d->params[i])))
                return NULL;
    }
    if (d->body && !(c->body = gm_lx_copy(&L->arena, d->body, mangle_name, (void *)m)))
        return NULL;
    return c;
}

/* ------------------------------------------------------------------------
 * Sources and imports
 * ------------------------------------------------------------------------ */

/* Records a source (the text is copied with a NUL after it). */
static gm_status add_source(gm_lload *L, const char *name, const char *text, size_t len,
                            const gm_lsource **out)
{
    if (len > L->limits.max_input_bytes)
        return gm_error_set(L->err, GM_ERR_LIMIT,
                            "%s: grammar text of %zu bytes is over the limit of %u bytes",
                            name ? name : "<input>", len, (unsigned)L->limits.max_input_bytes);
    gm_lsource s = {NULL, NULL, len};
    if (name && !(s.name = gm_arena_strndup(&L->arena, name, strlen(name))))
        return gm_lload_nomem(L);
    char *copy = gm_arena_alloc(&L->arena, len + 1);
    if (!copy)
        return gm_lload_nomem(L);
    if (len)
        memcpy(copy, text, len);
    copy[len] = '\0';
    s.text = copy;
    size_t cap = L->sources_cap;
    if (gm_arena_grow(&L->arena, (void **)&L->sources, &cap, (size_t)L->nsources + 1,
                      sizeof *L->sources, L->nsources))
        return gm_lload_nomem(L);
    L->sources_cap = (uint32_t)cap;
    L->sources[L->nsources] = s;
    *out = &L->sources[L->nsources++];
    return GM_OK;
}

/* An import statement's names, merged per imported file (Lark merges them). */
typedef struct import_group {
    bool relative;
    const char **path;
    uint32_t npath;
    const char **names, **aliases;
    gm_srcloc *locs;
    uint32_t n, cap;
    gm_srcloc loc;           /* the first %import of this file */
} import_group;

static bool same_path(const import_group *g, const gm_lstmt *st)
{
    if (g->relative != st->relative || g->npath != st->npath)
        return false;
    for (uint32_t i = 0; i < st->npath; i++)
        if (strcmp(g->path[i], st->path[i]))
            return false;
    return true;
}

static const char *join_path(gm_lload *L, const char *const *parts, uint32_t n, const char *sep)
{
    size_t len = 1;
    for (uint32_t i = 0; i < n; i++)
        len += strlen(parts[i]) + strlen(sep);
    char *s = gm_arena_alloc(&L->arena, len);
    if (!s)
        return NULL;
    size_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i)
            k += (size_t)snprintf(s + k, len - k, "%s", sep);
        k += (size_t)snprintf(s + k, len - k, "%s", parts[i]);
    }
    return s;
}

/* Where a source's relative imports are looked for. */
typedef struct import_base {
    bool bundled;            /* the importing grammar is bundled: relative = bundled */
    const char *dir;         /* directory of the importing file ("." when none) */
} import_base;

static gm_status load_module(gm_lbuilder *b, const gm_lsource *src, import_base base,
                             const lmangle *m, bool top);

/* Keeps the definitions that the roots need (rules and terminals both). */
static gm_status mark_needed(gm_lbuilder *sub, uint8_t *keep, const char *name)
{
    uint32_t id = gm_intern_find(&sub->names, name, strlen(name));
    if (id == UINT32_MAX || id >= sub->cap || !sub->defs[id] || keep[id])
        return GM_OK;
    /* An explicit stack: dependency chains can be long. */
    gm_lload *L = sub->L;
    uint32_t *stack = gm_arena_array(&L->arena, sub->cap, sizeof *stack);
    gm_lx **xs = NULL;
    size_t nxs = 0, xcap = 0;
    if (!stack)
        return gm_lload_nomem(L);
    size_t n = 0;
    keep[id] = 1;
    stack[n++] = id;
    while (n) {
        const gm_ldef *d = sub->defs[stack[--n]];
        if (!d->body)
            continue;
        nxs = 0;
        if (gm_arena_grow(&L->arena, (void **)&xs, &xcap, 1, sizeof *xs, 0))
            return gm_lload_nomem(L);
        xs[nxs++] = d->body;
        while (nxs) {
            gm_lx *x = xs[--nxs];
            if (x->kind == LX_NAME || x->kind == LX_TEMPLATE) {
                uint32_t r = gm_intern_find(&sub->names, x->name, strlen(x->name));
                if (r != UINT32_MAX && r < sub->cap && sub->defs[r] && !keep[r]) {
                    keep[r] = 1;
                    stack[n++] = r;
                }
            }
            if (gm_arena_grow(&L->arena, (void **)&xs, &xcap, nxs + x->n, sizeof *xs, nxs))
                return gm_lload_nomem(L);
            for (uint32_t i = 0; i < x->n; i++)
                xs[nxs++] = x->kids[i];
        }
    }
    return GM_OK;
}

static gm_status do_import(gm_lbuilder *b, const import_group *g, import_base base,
                           const lmangle *parent, bool top)
{
    gm_lload *L = b->L;
    const char *text = NULL;
    size_t len = 0;
    char *file_text = NULL;
    const char *name;
    import_base sub_base = base;
    bool bundled = !g->relative || base.bundled;
    const char *dotted = join_path(L, g->path, g->npath, ".");
    const char *rel = join_path(L, g->path, g->npath, "/");
    if (!dotted || !rel)
        return gm_lload_nomem(L);
    if (bundled) {
        text = gm_bundled_grammar(rel, &len);
        if (!text)
            return gm_lload_error(L, GM_ERR_GRAMMAR, g->loc,
                                  "cannot import '%s': no bundled grammar of that name%s", dotted,
                                  g->relative ? ""
                                              : " (a grammar file next to this one is "
                                                "imported with a leading dot: %import .name.X)");
        size_t cap = strlen(rel) + 32;
        char *full = gm_arena_alloc(&L->arena, cap);
        if (!full)
            return gm_lload_nomem(L);
        snprintf(full, cap, "<gramask>/%s.lark", rel);
        name = full;
        sub_base.bundled = true;
    } else {
        if (L->opts && L->opts->no_file_imports)
            return gm_lload_error(L, GM_ERR_GRAMMAR, g->loc,
                                  "importing grammar files is disabled here: only bundled "
                                  "grammars can be imported");
        size_t cap = strlen(base.dir) + strlen(rel) + 8;
        char *path = gm_arena_alloc(&L->arena, cap);
        if (!path)
            return gm_lload_nomem(L);
        snprintf(path, cap, "%s/%s.lark", base.dir, rel);
        name = path;
        gm_error ferr;
        gm_status st = gm_file_read(L->mem, path, L->limits.max_input_bytes, &file_text, &len,
                                    &ferr);
        if (st == GM_ERR_NOMEM)
            return gm_lload_nomem(L);
        if (st != GM_OK)
            return gm_lload_error(L, st, g->loc, "cannot import '.%s': %s", dotted,
                                  ferr.message);
        text = file_text;
        char *dir = gm_arena_strndup(&L->arena, path, strlen(path));
        if (!dir) {
            gm_mem_free(L->mem, file_text);
            return gm_lload_nomem(L);
        }
        *strrchr(dir, '/') = '\0';
        sub_base.bundled = false;
        sub_base.dir = dir;
    }
    for (uint32_t i = 0; i < L->import_depth; i++)
        if (!strcmp(L->import_stack[i], name)) {
            gm_mem_free(L->mem, file_text);
            return gm_lload_error(L, GM_ERR_GRAMMAR, g->loc, "import cycle: %s imports itself",
                                  name);
        }
    if (L->import_depth >= MAX_IMPORT_DEPTH) {
        gm_mem_free(L->mem, file_text);
        return gm_lload_error(L, GM_ERR_LIMIT, g->loc, "imports nested deeper than %d levels",
                              MAX_IMPORT_DEPTH);
    }
    const gm_lsource *src;
    gm_status st = add_source(L, name, text, len, &src);
    gm_mem_free(L->mem, file_text);
    if (st != GM_OK)
        return st;

    lmangle m = {L, join_path(L, g->path, g->npath, "__"), g->names, g->aliases, g->n, parent};
    if (!m.prefix)
        return gm_lload_nomem(L);
    gm_lbuilder sub;
    builder_init(&sub, L);
    L->import_stack[L->import_depth++] = name;
    st = load_module(&sub, src, sub_base, &m, false);
    L->import_depth--;
    uint8_t *keep = NULL;
    if (st == GM_OK) {
        keep = gm_arena_alloc(&L->arena, sub.cap ? sub.cap : 1);
        if (!keep)
            st = gm_lload_nomem(L);
    }
    for (uint32_t i = 0; st == GM_OK && i < g->n; i++) {
        const char *local = mangle_name(&m, g->names[i]);
        if (!local) {
            st = gm_lload_nomem(L);
            break;
        }
        const gm_ldef *found = gm_lbuilder_find(&sub, local);
        if (!found) {
            st = gm_lload_error(L, GM_ERR_GRAMMAR, g->locs[i],
                                "cannot import '%s': %s does not define it", g->names[i], name);
            break;
        }
        if (is_upper_name(g->aliases[i]) != found->is_term) {
            st = gm_lload_error(L, GM_ERR_GRAMMAR, g->locs[i],
                                "cannot import %s '%s' as '%s': a %s name is %s",
                                kind_name(found->is_term), g->names[i], g->aliases[i],
                                kind_name(found->is_term),
                                found->is_term ? "uppercase" : "lowercase");
            break;
        }
        st = mark_needed(&sub, keep, local);
    }
    for (size_t k = 0; st == GM_OK && k < sub.norder; k++) {
        uint32_t id = sub.order[k];
        gm_ldef *d = sub.defs[id];
        if (!keep[id] || !d)
            continue;
        if (gm_lbuilder_find(b, d->name)) {
            st = gm_lload_error(L, GM_ERR_GRAMMAR, g->loc,
                                "cannot import %s '%s' from %s: the name is already defined",
                                kind_name(d->is_term), d->name, name);
            break;
        }
        /* Names listed in a top-level %import are warned about when unused. */
        uint8_t origin = GM_LORIGIN_DEPENDENCY;
        gm_srcloc at = g->loc;
        for (uint32_t i = 0; top && i < g->n; i++)
            if (!strcmp(g->aliases[i], d->name)) {
                origin = GM_LORIGIN_IMPORTED;
                at = g->locs[i];
            }
        st = define(b, d, false, origin, at);
    }
    gm_lbuilder_free(&sub);
    return st;
}

static gm_status add_ignore(gm_lbuilder *b, const gm_lstmt *st)
{
    gm_lload *L = b->L;
    gm_lx *x = st->expr;
    /* A single terminal name keeps its name; anything else becomes __IGNORE_n. */
    gm_lx *name = NULL;
    if (x->n == 1 && !x->kids[0]->alias && x->kids[0]->n == 1 &&
        x->kids[0]->kids[0]->kind == LX_NAME)
        name = x->kids[0]->kids[0];
    if (!name) {
        char buf[32];
        snprintf(buf, sizeof buf, "__IGNORE_%u", L->ignore_count++);
        gm_ldef *d = gm_arena_alloc(&L->arena, sizeof *d);
        name = gm_lx_new(&L->arena, LX_NAME, st->loc);
        if (!d || !name || !(d->name = gm_arena_strndup(&L->arena, buf, strlen(buf))))
            return gm_lload_nomem(L);
        d->is_term = true;
        d->body = x;
        d->loc = x->loc;
        name->name = d->name;
        name->is_term = true;
        gm_status s = define(b, d, false, GM_LORIGIN_DEPENDENCY, st->loc);
        if (s != GM_OK)
            return s;
    }
    size_t cap = b->ignores_cap;
    if (gm_arena_grow(&L->arena, (void **)&b->ignores, &cap, b->nignores + 1, sizeof *b->ignores,
                      b->nignores))
        return gm_lload_nomem(L);
    b->ignores_cap = cap;
    b->ignores[b->nignores++] = name;
    return GM_OK;
}

static gm_status load_module(gm_lbuilder *b, const gm_lsource *src, import_base base,
                             const lmangle *m, bool top)
{
    gm_lload *L = b->L;
    gm_lmodule *mod;
    gm_status st = gm_lark_parse(&L->arena, src->name, src->text, src->len, &mod, L->err);
    if (st != GM_OK)
        return st;

    /* Imports first, merged per file (Lark does the same). */
    import_group *groups = NULL;
    size_t ngroups = 0, gcap = 0;
    for (uint32_t i = 0; i < mod->n; i++) {
        const gm_lstmt *s = mod->stmts[i];
        if (s->kind != LS_IMPORT)
            continue;
        import_group *g = NULL;
        for (size_t k = 0; k < ngroups; k++)
            if (same_path(&groups[k], s))
                g = &groups[k];
        if (!g) {
            if (gm_arena_grow(&L->arena, (void **)&groups, &gcap, ngroups + 1, sizeof *groups,
                              ngroups))
                return gm_lload_nomem(L);
            g = &groups[ngroups++];
            memset(g, 0, sizeof *g);
            g->relative = s->relative;
            g->path = s->path;
            g->npath = s->npath;
            g->loc = s->loc;
        }
        for (uint32_t k = 0; k < s->nnames; k++) {
            uint32_t j = 0;
            while (j < g->n && strcmp(g->names[j], s->names[k]))
                j++;
            if (j == g->n) {
                size_t c1 = g->cap, c2 = g->cap, c3 = g->cap;
                if (gm_arena_grow(&L->arena, (void **)&g->names, &c1, (size_t)g->n + 1,
                                  sizeof *g->names, g->n) ||
                    gm_arena_grow(&L->arena, (void **)&g->aliases, &c2, (size_t)g->n + 1,
                                  sizeof *g->aliases, g->n) ||
                    gm_arena_grow(&L->arena, (void **)&g->locs, &c3, (size_t)g->n + 1,
                                  sizeof *g->locs, g->n))
                    return gm_lload_nomem(L);
                g->cap = (uint32_t)c1;
                g->n++;
            }
            g->names[j] = s->names[k];
            g->aliases[j] = s->aliases[k];
            g->locs[j] = s->name_locs[k];
        }
    }
    for (size_t k = 0; k < ngroups; k++) {
        st = do_import(b, &groups[k], base, m, top);
        if (st != GM_OK)
            return st;
    }

    for (uint32_t i = 0; i < mod->n; i++) {
        const gm_lstmt *s = mod->stmts[i];
        switch (s->kind) {
        case LS_DEF: {
            gm_ldef *d = mangled_copy(L, s->def, m);
            if (!d)
                return gm_lload_nomem(L);
            if (d->how == LDEF_EXTEND)
                st = extend(b, d);
            else
                st = define(b, d, d->how == LDEF_OVERRIDE, GM_LORIGIN_LOCAL, d->loc);
            break;
        }
        case LS_IGNORE:
            if (top)
                st = add_ignore(b, s);
            break;
        case LS_DECLARE:
            for (uint32_t k = 0; st == GM_OK && k < s->nnames; k++) {
                gm_ldef *d = gm_arena_alloc(&L->arena, sizeof *d);
                if (!d)
                    return gm_lload_nomem(L);
                d->name = m ? mangle_name((void *)m, s->names[k]) : s->names[k];
                if (!d->name)
                    return gm_lload_nomem(L);
                d->is_term = is_upper_name(s->names[k]);
                d->loc = s->name_locs[k];
                if (!d->is_term)
                    return gm_lload_error(L, GM_ERR_UNSUPPORTED, d->loc,
                                          "cannot %%declare rule '%s': only terminals can be "
                                          "declared (a declared rule would have no alternatives)",
                                          s->names[k]);
                st = define(b, d, false, m ? GM_LORIGIN_DEPENDENCY : GM_LORIGIN_LOCAL, d->loc);
            }
            break;
        case LS_INSERT:
            if (!top)
                break;
            if (b->insert) {
                char at[300];
                describe_loc(at, sizeof at, b->insert->loc);
                return gm_lload_error(L, GM_ERR_GRAMMAR, s->loc,
                                      "%%insert given twice (first at %s): a grammar has one "
                                      "semicolon insertion rule", at);
            }
            b->insert = s;
            break;
        case LS_INDENT:
            if (!top)
                break;
            if (b->indent) {
                char at[300];
                describe_loc(at, sizeof at, b->indent->loc);
                return gm_lload_error(L, GM_ERR_GRAMMAR, s->loc,
                                      "%%indent given twice (first at %s): a grammar has one "
                                      "indentation layer", at);
            }
            b->indent = s;
            break;
        case LS_IMPORT:
            break;
        }
        if (st != GM_OK)
            return st;
    }
    return GM_OK;
}

/* ------------------------------------------------------------------------
 * Validation
 * ------------------------------------------------------------------------ */

static bool is_param(const gm_ldef *d, const char *name)
{
    for (uint32_t i = 0; i < d->nparams; i++)
        if (!strcmp(d->params[i], name))
            return true;
    return false;
}

static gm_status check_expr(gm_lbuilder *b, const gm_ldef *d, const gm_lx *x, int level)
{
    gm_lload *L = b->L;
    if (x->alias) {
        if (d->is_term)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "aliases (-> name) are not allowed in terminals");
        if (level != 1)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "an alias (-> %s) names a whole alternative of a rule, not a "
                                  "part in brackets", x->alias);
        if (d->name[0] == '_')
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "rule '%s' is inlined (it starts with '_') and cannot have "
                                  "aliases (-> %s)", d->name, x->alias);
    }
    if (x->kind == LX_NAME) {
        if (!x->is_term && is_param(d, x->name))
            return GM_OK;
        const gm_ldef *r = gm_lbuilder_find(b, x->name);
        if (!r)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc, "undefined %s '%s' (used in %s '%s')",
                                  kind_name(x->is_term), x->name, kind_name(d->is_term), d->name);
        if (d->is_term && !r->is_term && !strncmp(d->name, "__IGNORE_", 9))
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "rule '%s' used in %%ignore: only terminals can be ignored",
                                  x->name);
        if (d->is_term && !r->is_term)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "rule '%s' used inside terminal '%s': terminals can only use "
                                  "terminals", x->name, d->name);
        if (r->nparams)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "template '%s' used without arguments (it takes %u)", x->name,
                                  r->nparams);
        return GM_OK;
    }
    if (x->kind == LX_TEMPLATE) {
        if (d->is_term)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "template '%s' used inside terminal '%s'", x->name, d->name);
        if (is_param(d, x->name))
            return gm_lload_error(L, GM_ERR_UNSUPPORTED, x->loc,
                                  "template parameter '%s' used as a template: higher-order "
                                  "templates are not supported", x->name);
        const gm_ldef *r = gm_lbuilder_find(b, x->name);
        if (!r)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc, "undefined template '%s'", x->name);
        if (r->nparams != x->n)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "template '%s' takes %u argument%s, not %u", x->name,
                                  r->nparams, r->nparams == 1 ? "" : "s", x->n);
    }
    for (uint32_t i = 0; i < x->n; i++) {
        gm_status st = check_expr(b, d, x->kids[i], level + 1);
        if (st != GM_OK)
            return st;
    }
    return GM_OK;
}

/* The names of %insert: defined terminals; the `at` ones named, with a pattern. */
static gm_status validate_insert(gm_lbuilder *b, const gm_lstmt *st)
{
    gm_lload *L = b->L;
    const gm_lx *lists[3] = {st->insert, st->at, st->after};
    for (int k = 0; k < 3; k++) {
        const gm_lx *list = lists[k];
        uint32_t n = list->kind == LX_SEQ ? list->n : 1;
        for (uint32_t i = 0; i < n; i++) {
            const gm_lx *x = list->kind == LX_SEQ ? list->kids[i] : list;
            if (x->kind != LX_NAME) {
                if (k == 1)
                    return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                          "%%insert ... at: a line end is a named terminal "
                                          "(as NEWLINE: /\\n/), not a literal");
                continue;
            }
            const gm_ldef *d = gm_lbuilder_find(b, x->name);
            if (!d)
                return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                      "undefined terminal '%s' in %%insert", x->name);
            if (k == 1 && !d->body)
                return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                      "%%insert ... at %s: it is %%declare'd, so the lexer never "
                                      "produces it as a line end", x->name);
        }
    }
    return GM_OK;
}

static gm_status validate(gm_lbuilder *b)
{
    gm_lload *L = b->L;
    for (size_t k = 0; k < b->norder; k++) {
        const gm_ldef *d = b->defs[b->order[k]];
        for (uint32_t i = 0; i < d->nparams; i++) {
            if (gm_lbuilder_find(b, d->params[i]))
                return gm_lload_error(L, GM_ERR_GRAMMAR, d->param_locs[i],
                                      "template parameter '%s' of '%s' is also the name of a "
                                      "rule", d->params[i], d->name);
            for (uint32_t j = 0; j < i; j++)
                if (!strcmp(d->params[i], d->params[j]))
                    return gm_lload_error(L, GM_ERR_GRAMMAR, d->param_locs[i],
                                          "duplicate template parameter '%s' of '%s'",
                                          d->params[i], d->name);
        }
        if ((d->mods & GM_LMOD_EXPAND1) && d->name[0] == '_')
            return gm_lload_error(L, GM_ERR_GRAMMAR, d->loc,
                                  "inlined rule '%s' (starting with '_') cannot use the ?rule "
                                  "modifier", d->name);
        if (!d->body)
            continue;
        if (d->is_term && d->body->n == 1 && d->body->kids[0]->kind == LX_SEQ &&
            d->body->kids[0]->n == 0)
            return gm_lload_error(L, GM_ERR_GRAMMAR, d->loc, "terminal '%s' is empty", d->name);
        gm_status st = check_expr(b, d, d->body, 0);
        if (st != GM_OK)
            return st;
    }
    for (size_t i = 0; i < b->nignores; i++) {
        const gm_lx *x = b->ignores[i];
        const gm_ldef *d = gm_lbuilder_find(b, x->name);
        if (!d)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc, "%%ignore of undefined %s '%s'",
                                  kind_name(x->is_term), x->name);
        if (!d->is_term)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "cannot %%ignore rule '%s': only terminals are ignored", x->name);
        if (!d->body)
            return gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                  "cannot %%ignore '%s': it is %%declare'd (the lexer never "
                                  "produces it)", x->name);
    }
    return b->insert ? validate_insert(b, b->insert) : GM_OK;
}

gm_status gm_lload_main(gm_lload *L, gm_lbuilder *b, const char *file, const char *text,
                        size_t len)
{
    builder_init(b, L);
    L->import_stack = gm_arena_array(&L->arena, MAX_IMPORT_DEPTH, sizeof *L->import_stack);
    if (!L->import_stack)
        return gm_lload_nomem(L);
    const gm_lsource *src;
    gm_status st = add_source(L, file, text, len, &src);
    if (st != GM_OK)
        return st;
    import_base base = {false, "."};
    if (file && strchr(file, '/')) {
        char *dir = gm_arena_strndup(&L->arena, file, strlen(file));
        if (!dir)
            return gm_lload_nomem(L);
        char *slash = strrchr(dir, '/');
        if (slash == dir)
            slash[1] = '\0';
        else
            *slash = '\0';
        base.dir = dir;
    }
    if (file)
        L->import_stack[L->import_depth++] = src->name;
    st = load_module(b, src, base, NULL, true);
    if (st != GM_OK)
        return st;
    return validate(b);
}
