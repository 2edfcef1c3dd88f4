/* The typedef-name layer over one stream (parser/ctypedef.h, note [typedef names]). */
#include "parser/ctypedef.h"

#include <string.h>

#define NONE UINT32_MAX
#define BLOCK GM_CTYPEDEF_BLOCK
#define BODY GM_CTYPEDEF_BODY
#define NOT_A_BLOCK UINT32_MAX /* blocks[]: a `{` that opened no block (struct, enum, initializer) */

static uint32_t find_symbol(const gm_cfg *g, const char *name)
{
    for (uint32_t s = 0; s < gm_cfg_nsymbols(g); s++)
        if (!strcmp(g->names[s], name))
            return s;
    return NONE;
}

/*
 * What a name shifted into state `to` declares (note [typedef names]): 1 a
 * decl_name, 2 a parameter (param_name, param_type_name), 3 an enumeration
 * constant (enumeration_constant), 0 nothing; -1
 * when the state's kernel mixes such an item with others (the parser may
 * still read the name as something else there, so binding it would guess).
 */
static int kind_of_state(const gm_cfg *g, const gm_lr_table *t, uint32_t to, uint32_t decl,
                         uint32_t param, uint32_t ptype, uint32_t enumc)
{
    int kind = 0, others = 0;
    for (uint32_t k = t->kernel_off[to]; k < t->kernel_off[to + 1]; k++) {
        uint32_t prod = t->kernel[k].prod;
        uint32_t lhs = prod < t->nprods ? g->nterminals + t->prod_lhs[prod] : UINT32_MAX;
        int kk = lhs == decl ? 1 : lhs == param || lhs == ptype ? 2 : lhs == enumc ? 3 : 0;
        if (kk && (t->prod_len[prod] != 1 || (kind && kind != kk)))
            return -1;
        if (kk)
            kind = kk;
        else
            others = 1;
    }
    return kind && others ? -1 : kind;
}

/* Whether state s has an item `function_definition: ... . compound_statement`. */
static bool before_body(const gm_lr_table *t, const gm_cfg *g, uint32_t s, uint32_t fdef,
                        uint32_t compound)
{
    for (uint32_t k = t->kernel_off[s]; k < t->kernel_off[s + 1]; k++) {
        uint32_t prod = t->kernel[k].prod, dot = t->kernel[k].dot;
        if (prod < t->nprods && g->prods[prod].lhs == fdef && dot < g->prods[prod].len &&
            g->rhs[g->prods[prod].rhs + dot] == compound)
            return true;
    }
    return false;
}

/* Whether state `to` is entered by the `{` of a compound_statement (a block). */
static bool opens_block(const gm_lr_table *t, const gm_cfg *g, uint32_t to, uint32_t compound)
{
    for (uint32_t k = t->kernel_off[to]; k < t->kernel_off[to + 1]; k++) {
        uint32_t prod = t->kernel[k].prod;
        if (prod < t->nprods && g->nterminals + t->prod_lhs[prod] == compound && t->kernel[k].dot == 1)
            return true;
    }
    return false;
}

/* The layer's symbols in g; false when g lacks one of them. */
typedef struct symbols {
    uint32_t ident, tname, lb, rb, semi, decl, param, td, ds;
} symbols;

static bool find_symbols(const gm_cfg *g, symbols *y)
{
    uint32_t ident = find_symbol(g, "IDENTIFIER"), tname = find_symbol(g, "TYPEDEF_NAME");
    uint32_t lb = find_symbol(g, "\"{\""), rb = find_symbol(g, "\"}\""), semi = find_symbol(g, "\";\"");
    uint32_t decl = find_symbol(g, "decl_name"), param = find_symbol(g, "param_name");
    uint32_t td = find_symbol(g, "td_specifiers"), ds = find_symbol(g, "declaration_specifiers");
    uint32_t need[] = {ident, tname, lb, rb, semi, decl, param, td, ds};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (need[i] == NONE)
            return false;
    if (ident >= g->nterminals || tname >= g->nterminals || lb >= g->nterminals || rb >= g->nterminals ||
        semi >= g->nterminals || decl < g->nterminals || param < g->nterminals || td < g->nterminals ||
        ds < g->nterminals)
        return false;
    *y = (symbols){ident, tname, lb, rb, semi, decl, param, td, ds};
    return true;
}

bool gm_ctypedef_wanted(const gm_cfg *g)
{
    symbols y;
    return find_symbols(g, &y);
}

gm_status gm_ctypedef_create(gm_mem *m, const gm_cfg *g, const gm_lr_table *t, gm_ctypedef **out,
                             gm_error *err)
{
    *out = NULL;
    symbols y;
    if (!find_symbols(g, &y))
        return GM_OK;
    uint32_t ident = y.ident, tname = y.tname, lb = y.lb, rb = y.rb, semi = y.semi;
    uint32_t decl = y.decl, param = y.param, td = y.td, ds = y.ds;
    gm_ctypedef *c = gm_mem_calloc(m, 1, sizeof *c);
    if (!c)
        return gm_mem_fail(m, err, "the typedef-name layer");
    c->mem = m;
    c->t = t;
    c->identifier = ident;
    c->typedef_name = tname;
    c->lbrace = lb;
    c->rbrace = rb;
    c->semi = semi;
    c->td_specifiers = td;
    c->declaration_specifiers = ds;
    gm_intern_init(&c->names, m);
    c->shift_kind = gm_mem_calloc(m, t->nstates ? t->nstates : 1, 1);
    if (!c->shift_kind) {
        gm_ctypedef_destroy(c);
        return gm_mem_fail(m, err, "the typedef-name layer");
    }
    uint32_t ptype = find_symbol(g, "param_type_name");
    uint32_t enumc = find_symbol(g, "enumeration_constant");
    uint32_t compound = find_symbol(g, "compound_statement");
    uint32_t fdef = find_symbol(g, "function_definition");
    for (uint32_t s = 0; s < t->nstates; s++) {
        int kind = kind_of_state(g, t, s, decl, param, ptype, enumc);
        if (kind < 0) {
            gm_ctypedef_destroy(c);
            return gm_error_set(err, GM_ERR_GRAMMAR,
                                "typedef-name layer: in LR state %u a name may be a declarator's "
                                "name or something else, so it cannot be bound there", s);
        }
        c->shift_kind[s] = (uint8_t)kind;
        if (compound == NONE || opens_block(t, g, s, compound))
            c->shift_kind[s] |= BLOCK;
        if (fdef == NONE || before_body(t, g, s, fdef, compound))
            c->shift_kind[s] |= BODY;
    }
    gm_ctypedef_reset(c);
    *out = c;
    return GM_OK;
}

void gm_ctypedef_destroy(gm_ctypedef *c)
{
    if (!c)
        return;
    gm_mem *m = c->mem;
    gm_intern_free(&c->names);
    gm_mem_free(m, c->shift_kind);
    gm_mem_free(m, c->innermost);
    gm_vec_free(m, &c->bindings);
    gm_vec_free(m, &c->blocks);
    gm_vec_free(m, &c->pending);
    gm_mem_free(m, c);
}

void gm_ctypedef_reset(gm_ctypedef *c)
{
    for (size_t i = 0; i < c->ninnermost; i++)
        c->innermost[i] = NONE;
    c->bindings.n = 0;
    c->blocks.n = 0;
    c->pending.n = 0;
}

uint32_t gm_ctypedef_classify(const gm_ctypedef *c, uint32_t term, const uint8_t *text, size_t len)
{
    if (term != c->identifier)
        return term;
    uint32_t id = gm_intern_find(&c->names, text, len);
    if (id == NONE || id >= c->ninnermost || c->innermost[id] == NONE)
        return term;
    return c->bindings.v[c->innermost[id]].is_type ? c->typedef_name : term;
}

static gm_status bind(gm_ctypedef *c, uint32_t id, bool is_type, gm_error *err)
{
    if (id >= c->ninnermost) {
        size_t n = c->ninnermost ? c->ninnermost : 64;
        while (n <= id)
            n *= 2;
        uint32_t *grown = gm_mem_reallocarray(c->mem, c->innermost, n, sizeof *grown);
        if (!grown)
            return gm_mem_fail(c->mem, err, "the typedef-name layer");
        for (size_t i = c->ninnermost; i < n; i++)
            grown[i] = NONE;
        c->innermost = grown;
        c->ninnermost = n;
    }
    gm_ctypedef_binding b = {id, is_type, c->innermost[id]};
    if (gm_vec_push(c->mem, &c->bindings, b))
        return gm_mem_fail(c->mem, err, "the typedef-name layer");
    c->innermost[id] = (uint32_t)(c->bindings.n - 1);
    return GM_OK;
}

bool gm_ctypedef_in_typedef(const gm_ctypedef *c, const gm_lr_node *from)
{
    for (const gm_lr_node *n = from; n; n = n->parent) {
        uint32_t sym = c->t->accessing[n->state];
        if (sym == c->td_specifiers)
            return true;
        if (sym == c->declaration_specifiers)
            return false;
    }
    return false;
}

gm_status gm_ctypedef_shifted(gm_ctypedef *c, const gm_lr_node *top, uint32_t term,
                              const uint8_t *text, size_t len, gm_error *err)
{
    if (term == c->lbrace) {
        bool block = c->shift_kind[top->state] & BLOCK;
        bool body = block && top->parent && (c->shift_kind[top->parent->state] & BODY);
        if (gm_vec_push(c->mem, &c->blocks, block ? (uint32_t)c->bindings.n : NOT_A_BLOCK))
            return gm_mem_fail(c->mem, err, "the typedef-name layer");
        size_t np = body ? c->pending.n : 0;
        c->pending.n = 0;
        for (size_t i = 0; i < np; i++) {
            gm_status st = bind(c, c->pending.v[i], false, err);
            if (st != GM_OK)
                return st;
        }
        return GM_OK;
    }
    if (term == c->rbrace) {
        if (!c->blocks.n)
            return GM_OK; /* the parser rejects an unmatched `}` anyway */
        uint32_t keep = c->blocks.v[--c->blocks.n];
        while (keep != NOT_A_BLOCK && c->bindings.n > keep) {
            const gm_ctypedef_binding *b = &c->bindings.v[--c->bindings.n];
            c->innermost[b->name] = b->prev;
        }
        return GM_OK;
    }
    if (term == c->semi) {
        c->pending.n = 0;
        return GM_OK;
    }
    if (term != c->identifier && term != c->typedef_name)
        return GM_OK;
    uint8_t kind = c->shift_kind[top->state] & ~(BLOCK | BODY);
    if (!kind)
        return GM_OK;
    uint32_t id;
    if (gm_intern_put(&c->names, text, len, &id, NULL))
        return gm_mem_fail(c->mem, err, "the typedef-name layer");
    if (kind == 2)
        return gm_vec_push(c->mem, &c->pending, id) ? gm_mem_fail(c->mem, err, "the typedef-name layer")
                                                     : GM_OK;
    if (kind == 3)
        return bind(c, id, false, err);
    c->pending.n = 0;
    return bind(c, id, gm_ctypedef_in_typedef(c, top->parent), err);
}
