/*
 * The schema compiler's driver: gm_schema_compile, the conjunction memo
 * (note [conjunctions]), anyOf/oneOf distribution, enum and const values;
 * the whitespace layouts and the shared rules are rules.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/emit.h"
#include "schema/numrange.h"
#include "schema/schema.h"
#include "schema/uri.h"
#include "schema/validate.h"
#include "ir/ir_merge.h"

void gm_schema_options_init_defaults(gm_schema_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->indent = 2;
    opts->max_ws_run = GM_SCHEMA_MAX_WS_RUN_DEFAULT;
    opts->max_automaton_states = GM_SCHEMA_MAX_AUTOMATON_STATES_DEFAULT;
    gm_limits_init_defaults(&opts->limits);
}

void gm_schema_options_resolve(gm_schema_options *dst, const gm_schema_options *src)
{
    gm_schema_options_init_defaults(dst);
    if (!src)
        return;
    gm_limits lim = dst->limits;
    *dst = *src;
    if (!dst->indent)
        dst->indent = 2;
    if (!dst->max_ws_run)
        dst->max_ws_run = GM_SCHEMA_MAX_WS_RUN_DEFAULT;
    if (!dst->max_automaton_states)
        dst->max_automaton_states = GM_SCHEMA_MAX_AUTOMATON_STATES_DEFAULT;
    if (!dst->limits.max_memory)
        dst->limits.max_memory = lim.max_memory;
    if (!dst->limits.max_dfa_states)
        dst->limits.max_dfa_states = lim.max_dfa_states;
    if (!dst->limits.max_nfa_states)
        dst->limits.max_nfa_states = lim.max_nfa_states;
    if (!dst->limits.max_regex_repeat)
        dst->limits.max_regex_repeat = lim.max_regex_repeat;
    if (!dst->limits.max_lr_states)
        dst->limits.max_lr_states = lim.max_lr_states;
    if (!dst->limits.max_input_bytes)
        dst->limits.max_input_bytes = lim.max_input_bytes;
}

static bool indented(const sctx *c)
{
    return c->opts.whitespace == GM_SCHEMA_WS_INDENT;
}

/* Whether sep is the byte mark with JSON whitespace around it, and short: a separator
   that keeps the output JSON. */
static bool separator_ok(const char *sep, char mark)
{
    size_t n = strlen(sep), marks = 0;
    if (n > 64)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (sep[i] == mark)
            marks++;
        else if (!strchr(" \t\n\r", sep[i]))
            return false;
    }
    return marks == 1;
}

/* ---- constants ---- */

/* Members order[i..n) after order[0..i): every permutation (note [any order] in emit_struct.c). */
static uint32_t literal_perms(sctx *c, const uint32_t *members, uint32_t *order, uint32_t i,
                              uint32_t n, uint32_t sep)
{
    if (i == n)
        return gm_irb_empty(&c->b);
    uint32_t alts[8];
    uint32_t k = 0;
    for (uint32_t j = i; j < n; j++) {
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
        uint32_t head = i ? gm_irb_seq2(&c->b, sep, members[order[i]]) : members[order[i]];
        alts[k++] = gm_irb_seq2(&c->b, head, literal_perms(c, members, order, i + 1, n, sep));
        t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    return gm_irb_alt(&c->b, alts, k);
}

/* An object constant in the any-order layout: its members in every order (at most 5 of them). */
static uint32_t literal_any_order(sctx *c, const gm_jv *v, uint32_t depth)
{
    gm_irb *b = &c->b;
    uint32_t members[8], order[8];
    uint32_t n = v->n;
    if (n > 5) {
        if (!sc_relax(c, v->id, NULL, "an object constant of more than 5 members in any order "
                      "(members may repeat in the grammar)"))
            return GM_EX_NONE;
    }
    GM_VEC(uint32_t) ms = {0};
    for (uint32_t i = 0; i < n && b->st == GM_OK; i++) {
        const gm_jmember *m = &v->u.members[i];
        uint32_t e = gm_irb_seq3(b, sc_quoted(c, gm_irb_json_text(b, m->key, m->klen)), sc_key_sep(c),
                                 sc_literal(c, m->value, depth + 1));
        if (gm_vec_push(c->mem, &ms, e))
            gm_irb_fail(b, GM_ERR_NOMEM, "out of memory");
    }
    uint32_t sep = sc_item_sep(c, depth), body;
    if (n > 5) {
        uint32_t any = gm_irb_alt(b, ms.v, ms.n);
        body = gm_irb_seq2(b, any, gm_irb_repeat(b, gm_irb_seq2(b, sep, any), n - 1, n - 1));
    } else {
        for (uint32_t i = 0; i < n && i < ms.n; i++) {
            members[i] = ms.v[i];
            order[i] = i;
        }
        body = b->st == GM_OK ? literal_perms(c, members, order, 0, n, sep) : GM_EX_NONE;
    }
    gm_vec_free(c->mem, &ms);
    return gm_irb_seq3(b, sc_open(c, '{', depth), body, sc_close(c, '{', depth));
}

uint32_t sc_literal(sctx *c, const gm_jv *v, uint32_t depth)
{
    gm_irb *b = &c->b;
    switch (v->kind) {
    case GM_JV_NULL:
        return gm_irb_lit(b, "null");
    case GM_JV_TRUE:
        return gm_irb_lit(b, "true");
    case GM_JV_FALSE:
        return gm_irb_lit(b, "false");
    case GM_JV_STRING:
        return sc_quoted(c, gm_irb_json_text(b, v->u.s, v->n));
    case GM_JV_NUMBER: {
        sc_numspec sp = {0};
        sp.max_frac = -1;
        if (gm_dec_parse(&sp.lo, v->u.s, v->n))
            return gm_irb_bytes(b, v->u.s, v->n); /* beyond exact arithmetic: as written */
        sp.hi = sp.lo;
        sp.has_lo = sp.has_hi = true;
        return sc_numrange(b, &sp);
    }
    case GM_JV_ARRAY: {
        if (v->n == 0)
            return sc_empty_pair(c, '[');
        uint32_t acc = sc_open(c, '[', depth);
        for (uint32_t i = 0; i < v->n && b->st == GM_OK; i++) {
            if (i)
                acc = gm_irb_seq2(b, acc, sc_item_sep(c, depth));
            acc = gm_irb_seq2(b, acc, sc_literal(c, v->u.items[i], depth + 1));
        }
        return gm_irb_seq2(b, acc, sc_close(c, '[', depth));
    }
    case GM_JV_OBJECT: {
        if (v->n == 0)
            return sc_empty_pair(c, '{');
        if (c->opts.any_order && v->n > 1)
            return literal_any_order(c, v, depth);
        uint32_t acc = sc_open(c, '{', depth);
        for (uint32_t i = 0; i < v->n && b->st == GM_OK; i++) {
            const gm_jmember *m = &v->u.members[i];
            if (i)
                acc = gm_irb_seq2(b, acc, sc_item_sep(c, depth));
            acc = gm_irb_seq2(b, acc, sc_quoted(c, gm_irb_json_text(b, m->key, m->klen)));
            acc = gm_irb_seq3(b, acc, sc_key_sep(c), sc_literal(c, m->value, depth + 1));
        }
        return gm_irb_seq2(b, acc, sc_close(c, '{', depth));
    }
    }
    return GM_EX_NONE;
}

/* Whether enum/const entry e admits x. */
static bool enum_has(sctx *c, const sc_enum *e, const gm_jv *x)
{
    if (e->plus_null && x->kind == GM_JV_NULL)
        return true;
    if (e->single)
        return gm_jv_equal(e->single, x);
    return sc_jindex_find(&c->enums, e->list, x) != UINT32_MAX;
}

/* The constants of the first enum/const that every keyword of the shape accepts. */
static uint32_t emit_enum(sctx *c, sc_shape *sh, uint32_t depth)
{
    const sc_enum *e0 = &sh->enums.v[0];
    static const gm_jv null_value = {.kind = GM_JV_NULL};
    uint32_t n = e0->single ? 1 : e0->list->n;
    GM_VEC(uint32_t) alts = {0};
    GM_VEC(uint32_t) strs = {0}; /* string bodies: one pair of quotes around their alternatives */
    for (uint32_t i = 0; i <= n && c->st == GM_OK; i++) {
        const gm_jv *x = i < n ? (e0->single ? e0->single : e0->list->u.items[i])
                               : (e0->plus_null ? &null_value : NULL);
        if (!x)
            break;
        /* a value listed before (the first occurrence counts) */
        bool dup = i > 0 && (e0->single ? gm_jv_equal(e0->single, x)
                                        : sc_jindex_find(&c->enums, e0->list, x) < i);
        if (dup)
            continue;
        bool ok = true;
        for (size_t k = 1; k < sh->enums.n && ok; k++)
            ok = enum_has(c, &sh->enums.v[k], x);
        if (!ok)
            continue;
        int r = sc_validate_all(c, x, sh->nodes.v, sh->nodes.n);
        if (r < 0)
            break;
        if (r == 1 && (x->kind == GM_JV_STRING
                           ? gm_vec_push(c->mem, &strs, gm_irb_json_text(&c->b, x->u.s, x->n))
                           : gm_vec_push(c->mem, &alts, sc_literal(c, x, depth)))) {
            gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
            break;
        }
    }
    if (strs.n && c->st == GM_OK && gm_vec_push(c->mem, &alts, sc_quoted(c, gm_irb_alt(&c->b, strs.v, strs.n))))
        gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
    uint32_t r = c->st == GM_OK ? gm_irb_alt(&c->b, alts.v, alts.n) : GM_EX_NONE;
    gm_vec_free(c->mem, &alts);
    gm_vec_free(c->mem, &strs);
    return r;
}

/* ---- conjunctions ---- */

static uint32_t emit_shape(sctx *c, sc_shape *sh, uint32_t depth)
{
    gm_irb *b = &c->b;
    if (sh->impossible || !sh->types)
        return gm_irb_nothing(b);
    for (size_t i = 0; i < sh->unsup.n; i++)
        if ((sh->unsup.v[i].types & sh->types) &&
            !sc_relax(c, sh->unsup.v[i].node, sh->unsup.v[i].kw, sh->unsup.v[i].why))
            return GM_EX_NONE;
    if (sh->enums.n)
        return emit_enum(c, sh, depth);
    /* values excluded by a negated enum (synth.c): null, booleans here, numbers and strings
       by their emitters */
    bool no_null = false, no_true = false, no_false = false, structured = false;
    for (size_t i = 0; i < sh->notenums.n; i++)
        for (uint32_t j = 0; j < sh->notenums.v[i]->n; j++) {
            uint8_t k = sh->notenums.v[i]->u.items[j]->kind;
            no_null |= k == GM_JV_NULL;
            no_true |= k == GM_JV_TRUE;
            no_false |= k == GM_JV_FALSE;
            structured |= k == GM_JV_ARRAY || k == GM_JV_OBJECT;
        }
    if (structured && (sh->types & (T_ARR | T_OBJ)) &&
        !sc_relax(c, sh->nodes.v[0], "not", "'not' of an enum or const holding arrays or objects"))
        return GM_EX_NONE;
    uint32_t alts[7];
    size_t n = 0;
    if ((sh->types & T_NULL) && !no_null)
        alts[n++] = gm_irb_lit(b, "null");
    if ((sh->types & T_BOOL) && !no_true)
        alts[n++] = gm_irb_lit(b, "true");
    if ((sh->types & T_BOOL) && !no_false)
        alts[n++] = gm_irb_lit(b, "false");
    if (sh->types & (T_INT | T_NUM))
        alts[n++] = sc_emit_number(c, sh);
    if (sh->types & T_STR)
        alts[n++] = sc_emit_string(c, sh);
    if (sh->types & T_ARR)
        alts[n++] = sc_emit_array(c, sh, depth);
    if (sh->types & T_OBJ)
        alts[n++] = sc_emit_object(c, sh, depth);
    return gm_irb_alt(b, alts, n);
}

/* Whether two shapes have no instance in common, as far as cheap checks can tell. */
static bool provably_disjoint(sctx *c, sc_shape *x, sc_shape *y, unsigned depth);

static bool conj_disjoint(sctx *c, const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                          unsigned depth)
{
    if (depth > 3)
        return false;
    sc_shape x, y;
    bool r = false;
    memset(&y, 0, sizeof y); /* freed below even when x fails and y is never built */
    if (sc_shape_build(c, a, na, &x) == GM_OK && sc_shape_build(c, b, nb, &y) == GM_OK)
        r = provably_disjoint(c, &x, &y, depth);
    else if (c->st == GM_OK)
        r = false;
    sc_shape_free(c, &x);
    sc_shape_free(c, &y);
    return r;
}

static bool provably_disjoint(sctx *c, sc_shape *x, sc_shape *y, unsigned depth)
{
    if (x->impossible || y->impossible)
        return true;
    uint32_t tx = x->types, ty = y->types;
    if (!(tx & ty))
        return true;
    /* enum sets with nothing in common */
    if (x->enums.n && y->enums.n) {
        const sc_enum *e = &x->enums.v[0];
        uint32_t n = e->single ? 1 : e->list->n;
        bool common = false;
        for (uint32_t i = 0; i < n && !common; i++) {
            const gm_jv *v = e->single ? e->single : e->list->u.items[i];
            bool in_all = true;
            for (size_t k = 1; k < x->enums.n && in_all; k++)
                in_all = enum_has(c, &x->enums.v[k], v);
            for (size_t k = 0; k < y->enums.n && in_all; k++)
                in_all = enum_has(c, &y->enums.v[k], v);
            common = in_all;
        }
        if (!common && !(e->plus_null && y->enums.n))
            return true;
    }
    /* the only types in common are objects: a required property that cannot match */
    if ((tx & ty) == T_OBJ) {
        for (int side = 0; side < 2; side++) {
            sc_shape *p = side ? y : x, *q = side ? x : y;
            for (size_t i = 0; i < p->required.n; i++) {
                const gm_jv *name = p->required.v[i];
                uint32_t a[16], bq[16];
                size_t na, nb;
                bool qa = sc_prop_schemas(c, q, name->u.s, name->n, bq, &nb, 16);
                if (!qa)
                    return true; /* q forbids a property p requires */
                bool pa = sc_prop_schemas(c, p, name->u.s, name->n, a, &na, 16);
                if (!pa)
                    return true;
                bool q_requires = false;
                for (size_t k = 0; k < q->required.n && !q_requires; k++)
                    q_requires = q->required.v[k]->n == name->n &&
                                 !memcmp(q->required.v[k]->u.s, name->u.s, name->n);
                if (q_requires && na && nb && na <= 16 && nb <= 16 &&
                    conj_disjoint(c, a, na, bq, nb, depth + 1))
                    return true;
            }
        }
    }
    return false;
}

/*
 * Distributes the anyOf/oneOf groups of sh over the rest of conj: one
 * alternative per choice of a branch in each group. A oneOf branch i is
 * exact as it is when it cannot overlap the other branches given the rest
 * (provably_disjoint); for each branch j it may overlap, the alternative
 * also takes not(branch j) (synth.c), so that exactly one branch matches.
 */
static uint32_t distribute(sctx *c, const uint32_t *conj, size_t n, sc_shape *sh, uint32_t depth)
{
    size_t ng = sh->groups.n;
    uint64_t combos = 1;
    size_t extra = 0;
    for (size_t g = 0; g < ng; g++) {
        combos *= sh->groups.v[g].list->n;
        extra += sh->groups.v[g].list->n;
        if (combos > SC_MAX_DISTRIBUTE)
            return sc_fail(c, GM_ERR_LIMIT, sh->groups.v[g].owner, sh->groups.v[g].one ? "oneOf" : "anyOf",
                           "distributing anyOf/oneOf over the rest of the schema needs more than %d "
                           "branch combinations", SC_MAX_DISTRIBUTE);
    }
    uint32_t *buf = gm_mem_alloc(c->mem, (n + 2 * ng + extra + 1) * sizeof *buf);
    uint32_t *yb = gm_mem_alloc(c->mem, (n + ng + 2) * sizeof *yb);
    /* overlap[g][i * m + j]: branches i and j of oneOf group g may both match */
    bool **overlap = gm_mem_calloc(c->mem, ng + 1, sizeof *overlap);
    uint32_t r = GM_EX_NONE;
    GM_VEC(uint32_t) alts = {0};
    if (!buf || !yb || !overlap) {
        gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
        goto out;
    }
    memcpy(buf, conj, n * sizeof *buf);
    for (size_t g = 0; g < ng; g++)
        buf[n + g] = sh->groups.v[g].owner | SC_NOALT;
    size_t base = n + ng;
    for (size_t g = 0; g < ng && c->st == GM_OK; g++) {
        const sc_group *gr = &sh->groups.v[g];
        if (!gr->one)
            continue;
        uint32_t m = gr->list->n;
        overlap[g] = gm_mem_calloc(c->mem, (size_t)m * m, sizeof **overlap);
        if (!overlap[g]) {
            gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
            goto out;
        }
        for (uint32_t i = 0; i < m && c->st == GM_OK; i++)
            for (uint32_t j = i + 1; j < m && c->st == GM_OK; j++) {
                buf[base] = gr->list->u.items[i]->id;
                memcpy(yb, buf, base * sizeof *yb);
                yb[base] = gr->list->u.items[j]->id;
                bool dis = conj_disjoint(c, buf, base + 1, yb, base + 1, 0);
                overlap[g][i * m + j] = overlap[g][j * m + i] = !dis;
            }
    }
    for (uint64_t k = 0; k < combos && c->st == GM_OK && c->b.st == GM_OK; k++) {
        uint64_t rest = k;
        size_t len = base;
        for (size_t g = 0; g < ng; g++) {
            const sc_group *gr = &sh->groups.v[g];
            uint32_t m = gr->list->n, i = (uint32_t)(rest % m);
            rest /= m;
            buf[len++] = gr->list->u.items[i]->id;
            for (uint32_t j = 0; overlap[g] && j < m; j++) {
                if (j == i || !overlap[g][i * m + j])
                    continue;
                const char *why;
                uint32_t nj = sc_derived(c, 0, gr->list->u.items[j]->id, &why);
                if (nj == UINT32_MAX) {
                    if (c->st != GM_OK)
                        goto out;
                    char msg[300];
                    snprintf(msg, sizeof msg, "branches %u and %u may both match an instance, and "
                             "%s (oneOf needs exactly one)", i, j, why);
                    if (!sc_relax(c, gr->owner, "oneOf", msg))
                        goto out;
                    gm_mem_free(c->mem, overlap[g]);
                    overlap[g] = NULL; /* relaxed: anyOf from here on */
                    break;
                }
                buf[len++] = nj;
            }
        }
        uint32_t e = sc_conj(c, buf, len, depth);
        if (e == GM_EX_NONE)
            goto out;
        if (gm_vec_push(c->mem, &alts, e)) {
            gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
            goto out;
        }
    }
    if (c->st == GM_OK && c->b.st == GM_OK)
        r = gm_irb_alt(&c->b, alts.v, alts.n);
out:
    for (size_t g = 0; overlap && g < ng; g++)
        gm_mem_free(c->mem, overlap[g]);
    gm_mem_free(c->mem, overlap);
    gm_vec_free(c->mem, &alts);
    gm_mem_free(c->mem, buf);
    gm_mem_free(c->mem, yb);
    return r;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* A rule name from a node's JSON pointer: its last meaningful segment. */
static void rule_hint(sctx *c, uint32_t node, char *out, size_t cap)
{
    gm_strbuf p;
    gm_strbuf_init(&p, c->mem);
    sc_pointer(c, node, &p);
    const char *s = gm_strbuf_str(&p);
    const char *last = strrchr(s, '/');
    const char *seg = last ? last + 1 : s;
    if (last && seg[0] >= '0' && seg[0] <= '9' && last > s) {
        /* an array index: use the segment before it too */
        const char *prev = last - 1;
        while (prev > s && *prev != '/')
            prev--;
        seg = *prev == '/' ? prev + 1 : prev;
    }
    size_t n = 0;
    for (; *seg && n + 1 < cap; seg++) {
        char ch = *seg;
        out[n++] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ? ch : '_';
    }
    if (n == 0 || (out[0] >= '0' && out[0] <= '9')) {
        memmove(out + 2, out, n < cap - 3 ? n : cap - 3);
        out[0] = 's';
        out[1] = '_';
        n = n + 2 < cap - 1 ? n + 2 : cap - 1;
    }
    out[n] = 0;
    gm_strbuf_free(&p);
}

/* Drops `true` schemas and duplicates; 1 when the result holds `false`. */
static int normalize(sctx *c, uint32_t *v, size_t *n)
{
    size_t k = 0;
    qsort(v, *n, sizeof *v, cmp_u32);
    for (size_t i = 0; i < *n; i++) {
        const gm_jv *s = c->value[v[i] & ~SC_NOALT];
        if (s->kind == GM_JV_TRUE || (s->kind == GM_JV_OBJECT && s->n == 0))
            continue;
        if (s->kind == GM_JV_FALSE)
            return 1;
        if (k && v[k - 1] == v[i])
            continue;
        /* x and x|NOALT: x|NOALT alone (x's groups are distributed: their chosen branches are
           elements too) */
        if (!(v[i] & SC_NOALT) &&
            bsearch(&(uint32_t){v[i] | SC_NOALT}, v + i + 1, *n - i - 1, sizeof *v, cmp_u32))
            continue;
        v[k++] = v[i];
    }
    *n = k;
    return 0;
}

static uint32_t conj_of(sctx *c, const uint32_t *conj, size_t n, uint32_t depth)
{
    if (c->st != GM_OK || c->b.st != GM_OK)
        return GM_EX_NONE;
    if (!indented(c))
        depth = 0;
    uint32_t stackbuf[32];
    uint32_t *key = n + 1 <= 32 ? stackbuf : gm_mem_alloc(c->mem, (n + 1) * sizeof *key);
    if (!key)
        return gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
    memcpy(key, conj, n * sizeof *key);
    size_t k = n;
    uint32_t r = GM_EX_NONE;
    if (normalize(c, key, &k)) {
        r = gm_irb_nothing(&c->b);
        goto done;
    }
    if (k == 0) {
        r = sc_any_value(c, depth);
        goto done;
    }
    if (depth > SC_MAX_INDENT_DEPTH) {
        r = gm_irb_nothing(&c->b); /* note: GM_SCHEMA_WS_INDENT nests at most this deep */
        goto done;
    }
    key[k] = depth;
    uint32_t id;
    int added;
    if (gm_intern_put(&c->conj, key, (k + 1) * sizeof *key, &id, &added)) {
        gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (!added) {
        if (c->conj_expr.v[id] != GM_EX_NONE) {
            r = c->conj_expr.v[id];
            goto done;
        }
        /* recursion: the conjunction is being compiled; refer to its rule */
        if (c->conj_rule.v[id] == GM_EX_NONE) {
            char hint[40];
            rule_hint(c, key[0] & ~SC_NOALT, hint, sizeof hint);
            uint32_t rule = gm_ebnf_fresh_rule(c->g, hint);
            if (rule == GM_EX_NONE) {
                gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
                goto done;
            }
            c->conj_rule.v[id] = rule;
        }
        r = gm_irb_ref(&c->b, c->conj_rule.v[id]);
        goto done;
    }
    if (gm_vec_push(c->mem, &c->conj_expr, GM_EX_NONE) || gm_vec_push(c->mem, &c->conj_rule, GM_EX_NONE)) {
        gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (++c->depth > 400) {
        sc_fail(c, GM_ERR_LIMIT, key[0] & ~SC_NOALT, NULL, "schemas nest more than 400 deep");
        goto done;
    }
    uint32_t before = c->g->nnodes;
    sc_shape sh;
    uint32_t body = GM_EX_NONE;
    if (sc_shape_build(c, key, k, &sh) == GM_OK)
        body = sh.groups.n ? distribute(c, key, k, &sh, depth) : emit_shape(c, &sh, depth);
    sc_shape_free(c, &sh);
    c->depth--;
    if (body == GM_EX_NONE)
        goto done;
    uint32_t rule = c->conj_rule.v[id];
    if (rule == GM_EX_NONE && c->g->nnodes - before > 24 && !gm_irb_is_nothing(&c->b, body) &&
        c->g->nodes[body].kind != GM_EX_REF) {
        char hint[40];
        rule_hint(c, key[0] & ~SC_NOALT, hint, sizeof hint);
        rule = gm_ebnf_fresh_rule(c->g, hint);
        if (rule == GM_EX_NONE) {
            gm_irb_fail(&c->b, GM_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    if (rule != GM_EX_NONE) {
        c->g->rules[rule].body = body;
        r = gm_irb_ref(&c->b, rule);
    } else {
        r = body;
    }
    c->conj_expr.v[id] = r;
done:
    if (key != stackbuf)
        gm_mem_free(c->mem, key);
    return r;
}

/* ---- entry point ---- */

static void sctx_free(sctx *c)
{
    gm_mem_free(c->mem, c->value);
    gm_mem_free(c->mem, c->parent);
    gm_mem_free(c->mem, c->draft);
    gm_mem_free(c->mem, c->base);
    gm_intern_free(&c->uris);
    gm_vec_free(c->mem, &c->uri_node);
    gm_intern_free(&c->dyn);
    gm_vec_free(c->mem, &c->dyn_node);
    gm_vec_free(c->mem, &c->dyn_count);
    gm_intern_free(&c->conj);
    gm_vec_free(c->mem, &c->conj_expr);
    gm_vec_free(c->mem, &c->conj_rule);
    sc_patterns_free(c);
    gm_intern_free(&c->derived);
    gm_intern_free(&c->key_sets);
    gm_vec_free(c->mem, &c->key_set_rule);
    gm_vec_free(c->mem, &c->derived_id);
    sc_jindex_free(&c->enums);
    gm_jdoc_free(&c->doc);
    gm_irb_free(&c->b);
}

gm_status gm_schema_compile(gm_mem *m, const char *name, const char *json, size_t len,
                            const gm_schema_options *opts, gm_ebnf *g, gm_error *err)
{
    return gm_schema_compile_excluding(m, name, json, len, opts, NULL, g, err);
}

gm_status gm_schema_compile_excluding(gm_mem *m, const char *name, const char *json, size_t len,
                                      const gm_schema_options *opts, const char *exclude,
                                      gm_ebnf *g, gm_error *err)
{
    return gm_schema_compile_excluding_all(m, name, json, len, opts, exclude ? &exclude : NULL,
                                           exclude ? 1 : 0, g, err);
}

gm_status gm_schema_compile_excluding_all(gm_mem *m, const char *name, const char *json,
                                          size_t len, const gm_schema_options *opts,
                                          const char *const *excludes, size_t n, gm_ebnf *g,
                                          gm_error *err)
{
    sctx *c = gm_mem_calloc(m, 1, sizeof *c);
    if (!c)
        return gm_mem_fail(m, err, "a schema compiler");
    c->mem = m;
    c->raw_exclude = n ? excludes[0] : NULL;
    c->raw_excludes = excludes;
    c->n_raw_excludes = n;
    c->g = g;
    c->err = err;
    gm_schema_options_resolve(&c->opts, opts);
    int ws = (int)c->opts.whitespace, draft = (int)c->opts.draft;
    if (ws > GM_SCHEMA_WS_INDENT) {
        gm_mem_free(m, c);
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_schema_options.whitespace: unknown mode %d", ws);
    }
    if (draft && draft != 4 && draft != 6 && draft != 7 && draft != 2019 && draft != 2020) {
        gm_mem_free(m, c);
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_schema_options.draft: unknown draft %d", draft);
    }
    bool bad_item = c->opts.item_separator && !separator_ok(c->opts.item_separator, ',');
    bool bad_key = c->opts.key_separator && !separator_ok(c->opts.key_separator, ':');
    if (bad_item || bad_key) {
        gm_mem_free(m, c);
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_schema_options: the %s separator must be "
                            "'%c' with JSON whitespace around it", bad_item ? "item" : "key",
                            bad_item ? ',' : ':');
    }
    if (c->opts.indent > 16)
        c->opts.indent = 16;
    gm_intern_init(&c->uris, m);
    gm_intern_init(&c->dyn, m);
    gm_intern_init(&c->conj, m);
    gm_intern_init(&c->pat_index, m);
    gm_intern_init(&c->derived, m);
    gm_intern_init(&c->key_sets, m);
    sc_jindex_init(&c->enums, m);
    memset(&c->sh, 0xFF, sizeof c->sh); /* every slot GM_EX_NONE */
    c->conj_of = conj_of; /* note [emitter recursion] in emit.h */
    gm_irb_init(&c->b, g, c->opts.limits.max_nfa_states, err);
    c->st = gm_jdoc_parse(&c->doc, m, name ? name : "schema", json, len, 512, &c->opts.limits, err);
    uint32_t root = GM_EX_NONE;
    if (c->st == GM_OK)
        root = gm_ebnf_rule_get(g, "root", 4);
    if (c->st == GM_OK && root == GM_EX_NONE)
        c->st = gm_mem_fail(m, err, "a grammar");
    if (c->st == GM_OK)
        sc_index(c);
    if (c->st == GM_OK) {
        uint32_t top = c->doc.root->id;
        uint32_t body = sc_conj(c, &top, 1, 0);
        if (body != GM_EX_NONE) {
            g->rules[root].body = body;
            g->root = root;
        }
    }
    gm_status st = c->st != GM_OK ? c->st : c->b.st;
    if (st == GM_OK && g->root == GM_EX_NONE) /* a path that failed without saying why */
        st = gm_error_set(err, GM_ERR_NOMEM, "out of memory compiling the schema");
    /* a $ref target used in many places was emitted once per use: one copy of each
       (note [merging equal rules]) */
    if (st == GM_OK)
        st = gm_ebnf_merge_rules(g, NULL, err);
    if (st == GM_OK) {
        gm_grammar_options go;
        memset(&go, 0, sizeof go);
        go.limits = c->opts.limits;
        st = gm_ebnf_check(g, &go, err);
        if (st != GM_OK && st == GM_ERR_GRAMMAR)
            gm_error_prefix(err, "the schema admits no instance");
    }
    sctx_free(c);
    gm_mem_free(m, c);
    return st;
}
