/*
 * The grammar IR of the Earley engine (ir/ebnf.h): the node and rule
 * builder, the rule index, gm_ebnf_check and gm_ebnf_print.
 */
#include "ir/ebnf.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/utf8.h"
#include "base/vec.h"

/*
 * g->index: rule names interned in rule order (a name's intern id is its
 * rule index, because rules are only ever added through the index), and
 * for gm_ebnf_fresh_rule the next suffix to try for each hint.
 */
typedef struct ebnf_index {
    gm_intern names;
    gm_intern hints;
    uint32_t *hint_next;   /* [hints.count] */
    size_t hint_cap;
} ebnf_index;

void gm_ebnf_init(gm_ebnf *g, gm_mem *m)
{
    memset(g, 0, sizeof *g);
    g->mem = m;
    g->root = GM_EX_NONE;
}

void gm_ebnf_free(gm_ebnf *g)
{
    gm_mem *m = g->mem;
    for (uint32_t i = 0; i < g->nsets; i++)
        gm_cpset_free(m, &g->sets[i]);
    for (uint32_t i = 0; i < g->nrules; i++) {
        gm_mem_free(m, g->rules[i].name);
        gm_mem_free(m, g->rules[i].capture);
    }
    for (uint32_t i = 0; i < g->nfiles; i++)
        gm_mem_free(m, g->files[i]);
    ebnf_index *ix = g->index;
    if (ix) {
        gm_intern_free(&ix->names);
        gm_intern_free(&ix->hints);
        gm_mem_free(m, ix->hint_next);
        gm_mem_free(m, ix);
    }
    gm_mem_free(m, g->nodes);
    gm_mem_free(m, g->kids);
    gm_mem_free(m, g->bytes);
    gm_mem_free(m, g->sets);
    gm_mem_free(m, g->bytesets);
    gm_mem_free(m, g->rules);
    gm_mem_free(m, g->files);
    gm_ebnf_init(g, m);
}

/* Makes room for `extra` more elements in an array with a uint32_t capacity. */
static bool reserve(gm_mem *m, void **arr, uint32_t *cap, uint32_t n, size_t extra, size_t elem)
{
    if (n + (uint64_t)extra <= *cap)
        return true;
    if (n + (uint64_t)extra >= UINT32_MAX)
        return false;
    size_t c = *cap;
    if (gm_vec_grow_(m, arr, &c, n + extra, elem))
        return false;
    *cap = c > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)c;
    return true;
}

static uint32_t add_node(gm_ebnf *g, gm_ex_kind kind, uint32_t first, uint32_t count, uint32_t arg)
{
    if (!reserve(g->mem, (void **)&g->nodes, &g->nodes_cap, g->nnodes, 1, sizeof *g->nodes))
        return GM_EX_NONE;
    gm_ex *x = &g->nodes[g->nnodes];
    memset(x, 0, sizeof *x);
    x->kind = (uint8_t)kind;
    x->first = first;
    x->count = count;
    x->arg = arg;
    return g->nnodes++;
}

uint32_t gm_ebnf_add_empty(gm_ebnf *g) { return add_node(g, GM_EX_EMPTY, 0, 0, 0); }

uint32_t gm_ebnf_add_nothing(gm_ebnf *g) { return add_node(g, GM_EX_NOTHING, 0, 0, 0); }

/* Appends len bytes to g->bytes; their offset, or GM_EX_NONE. */
static uint32_t add_raw_bytes(gm_ebnf *g, const void *bytes, size_t len)
{
    if (len >= UINT32_MAX ||
        !reserve(g->mem, (void **)&g->bytes, &g->bytes_cap, g->nbytes, len, 1))
        return GM_EX_NONE;
    uint32_t off = g->nbytes;
    if (len)
        memcpy(g->bytes + off, bytes, len);
    g->nbytes += (uint32_t)len;
    return off;
}

static uint32_t add_text_node(gm_ebnf *g, gm_ex_kind kind, const void *bytes, size_t len)
{
    uint32_t nbytes = g->nbytes;
    uint32_t off = add_raw_bytes(g, bytes, len);
    if (off == GM_EX_NONE)
        return GM_EX_NONE;
    uint32_t id = add_node(g, kind, off, (uint32_t)len, 0);
    if (id == GM_EX_NONE)
        g->nbytes = nbytes;
    return id;
}

uint32_t gm_ebnf_add_bytes(gm_ebnf *g, const void *bytes, size_t len)
{
    return add_text_node(g, GM_EX_BYTES, bytes, len);
}

uint32_t gm_ebnf_add_token(gm_ebnf *g, const void *text, size_t len)
{
    return add_text_node(g, GM_EX_TOKEN, text, len);
}

uint32_t gm_ebnf_add_set(gm_ebnf *g, gm_cpset *set)
{
    if (!reserve(g->mem, (void **)&g->sets, &g->sets_cap, g->nsets, 1, sizeof *g->sets)) {
        gm_cpset_free(g->mem, set);
        return GM_EX_NONE;
    }
    uint32_t id = add_node(g, GM_EX_SET, 0, 0, g->nsets);
    if (id == GM_EX_NONE) {
        gm_cpset_free(g->mem, set);
        return GM_EX_NONE;
    }
    g->sets[g->nsets++] = *set;
    memset(set, 0, sizeof *set);
    return id;
}

uint32_t gm_ebnf_add_byteset(gm_ebnf *g, const uint32_t bits[8])
{
    if (!reserve(g->mem, (void **)&g->bytesets, &g->bytesets_cap, g->nbytesets, 1,
                 sizeof *g->bytesets))
        return GM_EX_NONE;
    uint32_t id = add_node(g, GM_EX_BYTESET, 0, 0, g->nbytesets);
    if (id == GM_EX_NONE)
        return GM_EX_NONE;
    memcpy(g->bytesets[g->nbytesets++], bits, sizeof g->bytesets[0]);
    return id;
}

uint32_t gm_ebnf_add_ref(gm_ebnf *g, uint32_t rule)
{
    assert(rule < g->nrules);
    return add_node(g, GM_EX_REF, 0, 0, rule);
}

static uint32_t add_parent(gm_ebnf *g, gm_ex_kind kind, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert(ids[i] < g->nnodes);
    if (n >= UINT32_MAX ||
        !reserve(g->mem, (void **)&g->kids, &g->kids_cap, g->nkids, n, sizeof *g->kids))
        return GM_EX_NONE;
    uint32_t first = g->nkids;
    memcpy(g->kids + first, ids, n * sizeof *ids);
    uint32_t id = add_node(g, kind, first, (uint32_t)n, 0);
    if (id != GM_EX_NONE)
        g->nkids += (uint32_t)n;
    return id;
}

uint32_t gm_ebnf_add_seq(gm_ebnf *g, const uint32_t *ids, size_t n)
{
    if (n == 0)
        return gm_ebnf_add_empty(g);
    if (n == 1)
        return ids[0];
    return add_parent(g, GM_EX_SEQ, ids, n);
}

uint32_t gm_ebnf_add_alt(gm_ebnf *g, const uint32_t *ids, size_t n)
{
    if (n == 0)
        return gm_ebnf_add_nothing(g);
    if (n == 1)
        return ids[0];
    return add_parent(g, GM_EX_ALT, ids, n);
}

uint32_t gm_ebnf_add_repeat(gm_ebnf *g, uint32_t child, uint32_t min, uint32_t max)
{
    assert(min <= max);
    uint32_t id = add_parent(g, GM_EX_REPEAT, &child, 1);
    if (id != GM_EX_NONE) {
        g->nodes[id].min = min;
        g->nodes[id].max = max;
    }
    return id;
}

uint32_t gm_ebnf_add_until(gm_ebnf *g, const uint32_t *strings, size_t n, uint32_t which,
                           uint32_t flags, uint32_t max_chars)
{
    assert(n >= 1 && (which == GM_EX_NONE || which < n));
    assert(!(flags & GM_UNTIL_BEFORE) || which != GM_EX_NONE);
    assert(!(flags & GM_UNTIL_BYTES) || max_chars == GM_EX_INF);
    for (size_t i = 0; i < n; i++)
        assert(strings[i] < g->nnodes && g->nodes[strings[i]].kind == GM_EX_BYTES &&
               g->nodes[strings[i]].count > 0);
    uint32_t id = add_parent(g, GM_EX_UNTIL, strings, n);
    if (id != GM_EX_NONE) {
        g->nodes[id].arg = which;
        g->nodes[id].min = flags;
        g->nodes[id].max = max_chars;
    }
    return id;
}

/* ---- rules -------------------------------------------------------------- */

static ebnf_index *get_index(gm_ebnf *g)
{
    if (!g->index) {
        ebnf_index *ix = gm_mem_calloc(g->mem, 1, sizeof *ix);
        if (!ix)
            return NULL;
        gm_intern_init(&ix->names, g->mem);
        gm_intern_init(&ix->hints, g->mem);
        g->index = ix;
    }
    return g->index;
}

uint32_t gm_ebnf_rule_find(const gm_ebnf *g, const char *name, size_t len)
{
    const ebnf_index *ix = g->index;
    return ix ? gm_intern_find(&ix->names, name, len) : GM_EX_NONE;
}

uint32_t gm_ebnf_rule_get(gm_ebnf *g, const char *name, size_t len)
{
    ebnf_index *ix = get_index(g);
    if (!ix)
        return GM_EX_NONE;
    uint32_t id = gm_intern_find(&ix->names, name, len);
    if (id != UINT32_MAX)
        return id;
    /* Everything that can fail before the name is interned, so the two stay in step. */
    if (!reserve(g->mem, (void **)&g->rules, &g->rules_cap, g->nrules, 1, sizeof *g->rules))
        return GM_EX_NONE;
    char *copy = gm_mem_strndup(g->mem, name, len);
    if (!copy)
        return GM_EX_NONE;
    int added;
    if (gm_intern_put(&ix->names, name, len, &id, &added)) {
        gm_mem_free(g->mem, copy);
        return GM_EX_NONE;
    }
    assert(added && id == g->nrules);
    gm_ebnf_rule *r = &g->rules[g->nrules++];
    memset(r, 0, sizeof *r);
    r->name = copy;
    r->body = GM_EX_NONE;
    r->lookahead = GM_EX_NONE;
    r->max_tokens = GM_EX_INF;
    r->max_chars = GM_EX_INF;
    r->chars_src = GM_EX_NONE;
    return id;
}

uint32_t gm_ebnf_fresh_rule(gm_ebnf *g, const char *hint)
{
    ebnf_index *ix = get_index(g);
    if (!ix)
        return GM_EX_NONE;
    size_t hlen = strlen(hint);
    if (gm_intern_find(&ix->names, hint, hlen) == UINT32_MAX)
        return gm_ebnf_rule_get(g, hint, hlen);
    uint32_t h;
    int added;
    if (gm_intern_put(&ix->hints, hint, hlen, &h, &added))
        return GM_EX_NONE;
    if (added) {
        if (gm_vec_grow_(g->mem, (void **)&ix->hint_next, &ix->hint_cap, (size_t)h + 1,
                         sizeof *ix->hint_next))
            return GM_EX_NONE; /* the hint stays interned without a counter: see below */
        ix->hint_next[h] = 1;
    } else if (h >= ix->hint_cap) {
        if (gm_vec_grow_(g->mem, (void **)&ix->hint_next, &ix->hint_cap, (size_t)h + 1,
                         sizeof *ix->hint_next))
            return GM_EX_NONE;
        ix->hint_next[h] = 1;
    }
    char *buf = gm_mem_alloc(g->mem, hlen + 16);
    if (!buf)
        return GM_EX_NONE;
    uint32_t id = GM_EX_NONE;
    for (;;) {
        uint32_t k = ix->hint_next[h]++;
        int n = snprintf(buf, hlen + 16, "%s_%u", hint, k);
        if (gm_intern_find(&ix->names, buf, (size_t)n) == UINT32_MAX) {
            id = gm_ebnf_rule_get(g, buf, (size_t)n);
            break;
        }
    }
    gm_mem_free(g->mem, buf);
    return id;
}

const char *gm_ebnf_file(gm_ebnf *g, const char *name)
{
    if (!name)
        return NULL;
    for (uint32_t i = 0; i < g->nfiles; i++)
        if (strcmp(g->files[i], name) == 0)
            return g->files[i];
    char **files = gm_mem_reallocarray(g->mem, g->files, (size_t)g->nfiles + 1, sizeof *files);
    if (!files)
        return NULL;
    g->files = files;
    char *copy = gm_mem_strndup(g->mem, name, strlen(name));
    if (!copy)
        return NULL;
    g->files[g->nfiles++] = copy;
    return copy;
}

/* ---- check -------------------------------------------------------------- */

/* Whether a code point set has a code point that UTF-8 can encode (not a surrogate). */
static bool set_matches_something(const gm_cpset *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].lo < 0xD800 || s->r[i].hi > 0xDFFF)
            return true;
    return false;
}

static bool byteset_matches_something(const uint32_t bits[8])
{
    for (int i = 0; i < 8; i++)
        if (bits[i])
            return true;
    return false;
}

/* The number of children of a node (kids[first ..]): SEQ, ALT, REPEAT and UNTIL have some. */
static uint32_t nkids(const gm_ex *x)
{
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_SEQ:
    case GM_EX_ALT:
    case GM_EX_UNTIL: return x->count;
    case GM_EX_REPEAT: return 1;
    default: return 0;
    }
}

/*
 * Whether UNTIL(L, which) matches some string (note [until]). With which =
 * i the shortest candidate is L[i] itself (a longer one has L[i]'s proper
 * prefixes inside its own), so it is empty iff a string of L occurs in
 * L[i] before its end; with which = NONE, "" matches.
 */
static bool until_matches_something(const gm_ebnf *g, const gm_ex *x)
{
    if (x->arg == GM_EX_NONE)
        return true;
    const gm_ex *t = &g->nodes[g->kids[x->first + x->arg]];
    const uint8_t *s = g->bytes + t->first;
    if (!(x->min & GM_UNTIL_BYTES)) {
        /* text and end both valid UTF-8 (note [until]) */
        unsigned st = GM_UTF8_START;
        for (uint32_t k = 0; k < t->count && st != GM_UTF8_DEAD; k++)
            st = gm_utf8_step(st, s[k]);
        if (st != GM_UTF8_START)
            return false;
    }
    for (uint32_t j = 0; j < x->count; j++) {
        const gm_ex *l = &g->nodes[g->kids[x->first + j]];
        /* an occurrence of L[j] ending before the last byte of L[i] */
        for (uint32_t end = l->count; end < t->count; end++)
            if (memcmp(s + end - l->count, g->bytes + l->first, l->count) == 0)
                return false;
    }
    return true;
}

/* Working arrays of a check. */
typedef struct checker {
    const gm_ebnf *g;
    gm_error *err;
    const gm_grammar_options *opts;
    uint32_t *owner;      /* [nnodes] first rule whose body or lookahead holds the node */
    uint32_t *stack;      /* DFS over nodes, [nnodes] */
    uint32_t *mark;       /* [nnodes] generation marks for DFS */
    uint32_t gen;
    /* reverse edges for the productivity worklist (CSR) */
    uint32_t *par_start, *par;      /* node -> parent nodes (one per kid occurrence) */
    uint32_t *ref_start, *refs;     /* rule -> REF nodes naming it */
    uint32_t *body_start, *bodies;  /* node -> rules whose body it is */
    uint32_t *need;       /* [nnodes] */
    uint8_t *prod;        /* [nnodes] */
    uint8_t *rule_prod;   /* [nrules] */
    uint8_t *reach;       /* [nrules] */
    uint32_t *queue;      /* [max(nnodes, nrules)] */
} checker;

static void checker_free(checker *c, gm_mem *m)
{
    gm_mem_free(m, c->owner);
    gm_mem_free(m, c->stack);
    gm_mem_free(m, c->mark);
    gm_mem_free(m, c->par_start);
    gm_mem_free(m, c->par);
    gm_mem_free(m, c->ref_start);
    gm_mem_free(m, c->refs);
    gm_mem_free(m, c->body_start);
    gm_mem_free(m, c->bodies);
    gm_mem_free(m, c->need);
    gm_mem_free(m, c->prod);
    gm_mem_free(m, c->rule_prod);
    gm_mem_free(m, c->reach);
    gm_mem_free(m, c->queue);
}

/* Reports an error about rule r at its definition (or without a place when it has none). */
static gm_status rule_error(const checker *c, gm_status code, uint32_t r, const char *fmt, ...)
    GM_PRINTF(4, 5);
static gm_status rule_error(const checker *c, gm_status code, uint32_t r, const char *fmt, ...)
{
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_srcloc loc = r < c->g->nrules ? c->g->rules[r].loc : (gm_srcloc){0};
    if (loc.line)
        return gm_error_set_at(c->err, code, loc, NULL, 0, "%s", msg);
    return gm_error_set(c->err, code, "%s", msg);
}

static void rule_warning(const checker *c, uint32_t r, const char *fmt, ...) GM_PRINTF(3, 4);
static void rule_warning(const checker *c, uint32_t r, const char *fmt, ...)
{
    if (!c->opts || !c->opts->warn)
        return;
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_error w;
    gm_srcloc loc = c->g->rules[r].loc;
    if (loc.line)
        gm_error_set_at(&w, GM_OK, loc, NULL, 0, "warning: %s", msg);
    else
        gm_error_set(&w, GM_OK, "warning: %s", msg);
    c->opts->warn(c->opts->warn_ud, &w);
}

/*
 * Calls visit(c, node, ud) for each node of the expression at `start` not
 * seen yet in this generation (c->gen); nodes shared with an expression
 * walked earlier in the same generation are skipped.
 */
static void walk(checker *c, uint32_t start, void (*visit)(checker *, uint32_t, void *), void *ud)
{
    if (start == GM_EX_NONE || c->mark[start] == c->gen)
        return;
    uint32_t sp = 0;
    c->stack[sp++] = start;
    c->mark[start] = c->gen;
    while (sp) {
        uint32_t n = c->stack[--sp];
        visit(c, n, ud);
        const gm_ex *x = &c->g->nodes[n];
        for (uint32_t i = 0, cnt = nkids(x); i < cnt; i++) {
            uint32_t k = c->g->kids[x->first + i];
            if (c->mark[k] != c->gen) {
                c->mark[k] = c->gen;
                c->stack[sp++] = k;
            }
        }
    }
}

static void set_owner(checker *c, uint32_t n, void *ud)
{
    if (c->owner[n] == GM_EX_NONE)
        c->owner[n] = *(uint32_t *)ud;
}

/* Pushes the rules referenced by the walked expression that are not reached yet. */
static void reach_refs(checker *c, uint32_t n, void *ud)
{
    uint32_t *qn = ud;
    const gm_ex *x = &c->g->nodes[n];
    if (x->kind == GM_EX_REF && !c->reach[x->arg]) {
        c->reach[x->arg] = 1;
        c->queue[(*qn)++] = x->arg;
    }
}

/* Finds a referenced rule that is reachable and not productive (the first in walk order). */
static void find_dead_ref(checker *c, uint32_t n, void *ud)
{
    uint32_t *found = ud;
    const gm_ex *x = &c->g->nodes[n];
    if (*found == GM_EX_NONE && x->kind == GM_EX_REF && !c->rule_prod[x->arg])
        *found = x->arg;
}

/* Builds the reverse edges the productivity worklist follows. */
static bool build_reverse(checker *c, gm_mem *m)
{
    const gm_ebnf *g = c->g;
    uint32_t N = g->nnodes, R = g->nrules;
    c->par_start = gm_mem_calloc(m, (size_t)N + 1, sizeof *c->par_start);
    c->ref_start = gm_mem_calloc(m, (size_t)R + 1, sizeof *c->ref_start);
    c->body_start = gm_mem_calloc(m, (size_t)N + 1, sizeof *c->body_start);
    if (!c->par_start || !c->ref_start || !c->body_start)
        return false;
    size_t npar = 0, nref = 0, nbody = 0;
    for (uint32_t i = 0; i < N; i++) {
        const gm_ex *x = &g->nodes[i];
        if (x->kind == GM_EX_SEQ || x->kind == GM_EX_ALT || x->kind == GM_EX_REPEAT) {
            uint32_t cnt = nkids(x); /* UNTIL is a leaf for productivity */
            for (uint32_t j = 0; j < cnt; j++)
                c->par_start[g->kids[x->first + j] + 1]++;
            npar += cnt;
        } else if (x->kind == GM_EX_REF) {
            c->ref_start[x->arg + 1]++;
            nref++;
        }
    }
    for (uint32_t r = 0; r < R; r++)
        if (g->rules[r].body != GM_EX_NONE) {
            c->body_start[g->rules[r].body + 1]++;
            nbody++;
        }
    for (uint32_t i = 0; i < N; i++) {
        c->par_start[i + 1] += c->par_start[i];
        c->body_start[i + 1] += c->body_start[i];
    }
    for (uint32_t r = 0; r < R; r++)
        c->ref_start[r + 1] += c->ref_start[r];
    c->par = gm_mem_alloc(m, (npar ? npar : 1) * sizeof *c->par);
    c->refs = gm_mem_alloc(m, (nref ? nref : 1) * sizeof *c->refs);
    c->bodies = gm_mem_alloc(m, (nbody ? nbody : 1) * sizeof *c->bodies);
    /* fill cursors: reuse need[] for nodes and queue[] for rules */
    if (!c->par || !c->refs || !c->bodies)
        return false;
    uint32_t *pfill = c->need, *bfill = c->stack, *rfill = c->queue;
    memcpy(pfill, c->par_start, (size_t)N * sizeof *pfill);
    memcpy(bfill, c->body_start, (size_t)N * sizeof *bfill);
    memcpy(rfill, c->ref_start, (size_t)R * sizeof *rfill);
    for (uint32_t i = 0; i < N; i++) {
        const gm_ex *x = &g->nodes[i];
        if (x->kind == GM_EX_SEQ || x->kind == GM_EX_ALT || x->kind == GM_EX_REPEAT) {
            uint32_t cnt = nkids(x);
            for (uint32_t j = 0; j < cnt; j++)
                c->par[pfill[g->kids[x->first + j]]++] = i;
        } else if (x->kind == GM_EX_REF) {
            c->refs[rfill[x->arg]++] = i;
        }
    }
    for (uint32_t r = 0; r < R; r++)
        if (g->rules[r].body != GM_EX_NONE)
            c->bodies[bfill[g->rules[r].body]++] = r;
    return true;
}

/*
 * Marks productive nodes and rules (c->prod, c->rule_prod): a node is
 * productive when it derives some string. With `nothing_ok`, NOTHING and
 * empty sets count as productive too: what remains unproductive then is
 * recursion that never reaches a terminal (note in gm_ebnf_check).
 */
static void productive(checker *c, bool nothing_ok)
{
    const gm_ebnf *g = c->g;
    uint32_t N = g->nnodes;
    memset(c->prod, 0, N);
    memset(c->rule_prod, 0, g->nrules);
    uint32_t qh = 0, qt = 0;
    for (uint32_t i = 0; i < N; i++) {
        const gm_ex *x = &g->nodes[i];
        bool now = false;
        c->need[i] = 1;
        switch ((gm_ex_kind)x->kind) {
        case GM_EX_EMPTY:
        case GM_EX_BYTES:
        case GM_EX_TOKEN: now = true; break;
        case GM_EX_NOTHING: now = nothing_ok; break;
        case GM_EX_SET: now = nothing_ok || set_matches_something(&g->sets[x->arg]); break;
        case GM_EX_BYTESET:
            now = nothing_ok || byteset_matches_something(g->bytesets[x->arg]);
            break;
        case GM_EX_REF:
        case GM_EX_ALT: break;
        case GM_EX_SEQ: c->need[i] = x->count; break;
        case GM_EX_REPEAT: now = x->min == 0; break;
        case GM_EX_UNTIL: now = nothing_ok || until_matches_something(g, x); break;
        }
        if (now) {
            c->prod[i] = 1;
            c->queue[qt++] = i;
        }
    }
    while (qh < qt) {
        uint32_t n = c->queue[qh++];
        for (uint32_t j = c->par_start[n]; j < c->par_start[n + 1]; j++) {
            uint32_t p = c->par[j];
            if (!c->prod[p] && --c->need[p] == 0) {
                c->prod[p] = 1;
                c->queue[qt++] = p;
            }
        }
        for (uint32_t j = c->body_start[n]; j < c->body_start[n + 1]; j++) {
            uint32_t r = c->bodies[j];
            if (c->rule_prod[r])
                continue;
            c->rule_prod[r] = 1;
            for (uint32_t k = c->ref_start[r]; k < c->ref_start[r + 1]; k++) {
                uint32_t q = c->refs[k];
                if (!c->prod[q]) {
                    c->prod[q] = 1;
                    c->queue[qt++] = q;
                }
            }
        }
    }
}

static void next_gen(checker *c)
{
    if (++c->gen == 0) {
        memset(c->mark, 0, (size_t)c->g->nnodes * sizeof *c->mark);
        c->gen = 1;
    }
}

/*
 * The recursion without a way out, starting from an unproductive rule r:
 * every unproductive rule references another one (its leaves are all
 * productive under nothing_ok), so following such references from r
 * enters a cycle; the first rule seen twice lies on it and is the one to
 * blame (the rules before it only fail because they use it).
 */
static uint32_t blame(checker *c, uint32_t r, uint8_t *seen)
{
    memset(seen, 0, c->g->nrules);
    while (!seen[r]) {
        seen[r] = 1;
        uint32_t next = GM_EX_NONE;
        next_gen(c);
        walk(c, c->g->rules[r].body, find_dead_ref, &next);
        if (next == GM_EX_NONE)
            break; /* cannot happen for a well-formed IR; blame r itself */
        r = next;
    }
    return r;
}

static gm_status check_nodes(checker *c, const gm_limits *lim)
{
    const gm_ebnf *g = c->g;
    if (g->nnodes > lim->max_nfa_states)
        return gm_error_set(c->err, GM_ERR_LIMIT,
                            "the grammar has %u expression nodes, more than the limit of %u",
                            g->nnodes, lim->max_nfa_states);
    /* depth of every node, in index order: children come before their parents */
    uint32_t *depth = c->need;
    for (uint32_t i = 0; i < g->nnodes; i++) {
        const gm_ex *x = &g->nodes[i];
        uint32_t d = 0;
        for (uint32_t j = 0, cnt = nkids(x); j < cnt; j++) {
            uint32_t k = g->kids[x->first + j];
            assert(k < i);
            if (depth[k] > d)
                d = depth[k];
        }
        depth[i] = d + 1;
        uint32_t owner = c->owner[i];
        if (depth[i] > GM_EBNF_MAX_DEPTH && owner != GM_EX_NONE)
            return rule_error(c, GM_ERR_LIMIT, owner,
                              "rule '%s' nests expressions more than %u deep",
                              g->rules[owner].name, GM_EBNF_MAX_DEPTH);
        if (x->kind == GM_EX_REPEAT && owner != GM_EX_NONE &&
            (x->min > GM_EBNF_MAX_REPEAT || (x->max != GM_EX_INF && x->max > GM_EBNF_MAX_REPEAT)))
            return rule_error(c, GM_ERR_LIMIT, owner,
                              "rule '%s' repeats an expression more than %u times",
                              g->rules[owner].name, GM_EBNF_MAX_REPEAT);
        if (x->kind == GM_EX_REF && owner != GM_EX_NONE && g->rules[x->arg].body == GM_EX_NONE)
            return rule_error(c, GM_ERR_GRAMMAR, owner, "rule '%s' uses rule '%s', which is not defined",
                              g->rules[owner].name, g->rules[x->arg].name);
    }
    return GM_OK;
}

/*
 * note [ebnf check]
 * Two productivity passes. The first counts NOTHING and empty sets as
 * productive, so what it finds unproductive is recursion without a way
 * out (`a ::= a`, `a ::= "x" a`, mutual recursion with no exit): an
 * error, blamed on a rule of the cycle. The second is the true one: a
 * rule whose language is empty because of an empty set is allowed (the
 * emptiness propagates: a sequence holding it matches nothing, an
 * alternative drops it), only the root's language may not be empty.
 */
gm_status gm_ebnf_check(const gm_ebnf *g, const gm_grammar_options *opts, gm_error *err)
{
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    if (opts && opts->limits.max_nfa_states)
        lim.max_nfa_states = opts->limits.max_nfa_states;
    if (g->root == GM_EX_NONE || g->root >= g->nrules)
        return gm_error_set(err, GM_ERR_GRAMMAR, "the grammar has no root rule");
    if (g->rules[g->root].body == GM_EX_NONE)
        return gm_error_set(err, GM_ERR_GRAMMAR, "the root rule '%s' is not defined",
                            g->rules[g->root].name);
    if (g->nnodes > lim.max_nfa_states)
        return gm_error_set(err, GM_ERR_LIMIT,
                            "the grammar has %u expression nodes, more than the limit of %u",
                            g->nnodes, lim.max_nfa_states);

    gm_mem *m = g->mem;
    checker c = {.g = g, .err = err, .opts = opts};
    size_t N = g->nnodes ? g->nnodes : 1, R = g->nrules;
    c.owner = gm_mem_alloc(m, N * sizeof *c.owner);
    c.stack = gm_mem_alloc(m, N * sizeof *c.stack);
    c.mark = gm_mem_calloc(m, N, sizeof *c.mark);
    c.need = gm_mem_alloc(m, N * sizeof *c.need);
    c.prod = gm_mem_alloc(m, N);
    c.rule_prod = gm_mem_alloc(m, R);
    c.reach = gm_mem_calloc(m, R, 1);
    c.queue = gm_mem_alloc(m, (N > R ? N : R) * sizeof *c.queue);
    gm_status st = GM_OK;
    if (!c.owner || !c.stack || !c.mark || !c.need || !c.prod || !c.rule_prod || !c.reach ||
        !c.queue) {
        st = gm_mem_fail(m, err, "checking a grammar");
        goto out;
    }
    memset(c.owner, 0xff, N * sizeof *c.owner);
    c.gen = 1;
    for (uint32_t r = 0; r < g->nrules; r++) {
        walk(&c, g->rules[r].body, set_owner, &r);
        walk(&c, g->rules[r].lookahead, set_owner, &r);
    }
    if ((st = check_nodes(&c, &lim)) != GM_OK)
        goto out;

    /* rules reachable from the root, through bodies and lookaheads */
    uint32_t qn = 0;
    c.reach[g->root] = 1;
    c.queue[qn++] = g->root;
    next_gen(&c);
    for (uint32_t qh = 0; qh < qn; qh++) {
        uint32_t r = c.queue[qh];
        walk(&c, g->rules[r].body, reach_refs, &qn);
        walk(&c, g->rules[r].lookahead, reach_refs, &qn);
    }

    if (!build_reverse(&c, m)) {
        st = gm_mem_fail(m, err, "checking a grammar");
        goto out;
    }
    productive(&c, true);
    for (uint32_t r = 0; r < g->nrules; r++) {
        if (!c.reach[r])
            continue;
        uint32_t la = g->rules[r].lookahead;
        if (!c.rule_prod[r] || (la != GM_EX_NONE && !c.prod[la])) {
            uint8_t *seen = gm_mem_alloc(m, R);
            if (!seen) {
                st = gm_mem_fail(m, err, "checking a grammar");
                goto out;
            }
            uint32_t b = c.rule_prod[r] ? r : blame(&c, r, seen);
            gm_mem_free(m, seen);
            if (c.rule_prod[r])
                st = rule_error(&c, GM_ERR_GRAMMAR, r,
                                "the lookahead of rule '%s' derives no finite string",
                                g->rules[r].name);
            else
                st = rule_error(&c, GM_ERR_GRAMMAR, b,
                                "rule '%s' derives no finite string (its recursion never ends)",
                                g->rules[b].name);
            goto out;
        }
    }
    productive(&c, false);
    if (!c.rule_prod[g->root]) {
        st = rule_error(&c, GM_ERR_GRAMMAR, g->root,
                        "the language of the root rule '%s' is empty (it matches no string)",
                        g->rules[g->root].name);
        goto out;
    }
    for (uint32_t r = 0; r < g->nrules; r++) {
        if (g->rules[r].body == GM_EX_NONE)
            continue;
        if (!c.reach[r])
            rule_warning(&c, r, "rule '%s' is not used (not reachable from '%s')",
                         g->rules[r].name, g->rules[g->root].name);
        else if (!c.rule_prod[r])
            rule_warning(&c, r, "rule '%s' matches no string", g->rules[r].name);
    }
out:
    checker_free(&c, m);
    return st;
}

/* ---- print -------------------------------------------------------------- */

/*
 * note [ebnf print]
 * The text is in the dialect gm_ebnf_parse reads (GM_EBNF_XGRAMMAR) and
 * is ASCII. Code points print as themselves when printable ASCII, else
 * as \n \r \t or \uXXXX / \UXXXXXXXX (never \x, whose length differs
 * between GBNF and XGrammar); literals that are not UTF-8 print as byte
 * strings %"..." and byte sets as %[...] (note [ebnf dialect]); NOTHING
 * prints as [] and EMPTY as "". Rule names that the parser would not read
 * back (characters outside [A-Za-z0-9_-], empty, or the name of an
 * XGrammar function such as Regex) print under a new name made of their
 * valid characters and a number.
 */

static bool name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '-';
}

static bool valid_name(const char *s)
{
    /* names of XGrammar's functions read as calls, not as rule references */
    static const char *const macros[] = {"Regex", "Until", "TagDispatch", "TokenTagDispatch",
                                         "Token", "ExcludeToken"};
    for (size_t i = 0; i < sizeof macros / sizeof *macros; i++)
        if (strcmp(s, macros[i]) == 0)
            return false;
    if (!*s)
        return false;
    for (; *s; s++)
        if (!name_char(*s))
            return false;
    return true;
}

typedef struct printer {
    const gm_ebnf *g;
    gm_strbuf *out;
    char **names;   /* [nrules] the printed name when it differs from the rule's, else NULL */
} printer;

static const char *printed_name(const printer *p, uint32_t r)
{
    return p->names && p->names[r] ? p->names[r] : p->g->rules[r].name;
}

/* Gives every rule with an unprintable name a new unique valid name. */
static bool rename_rules(printer *p)
{
    const gm_ebnf *g = p->g;
    gm_mem *m = g->mem;
    bool any = false;
    for (uint32_t r = 0; r < g->nrules && !any; r++)
        any = !valid_name(g->rules[r].name);
    if (!any)
        return true;
    p->names = gm_mem_calloc(m, g->nrules, sizeof *p->names);
    if (!p->names)
        return false;
    gm_intern used;
    gm_intern_init(&used, m);
    bool ok = true;
    uint32_t id;
    for (uint32_t r = 0; r < g->nrules && ok; r++)
        if (valid_name(g->rules[r].name))
            ok = gm_intern_put(&used, g->rules[r].name, strlen(g->rules[r].name), &id, NULL) == 0;
    for (uint32_t r = 0; r < g->nrules && ok; r++) {
        const char *s = g->rules[r].name;
        if (valid_name(s))
            continue;
        size_t len = strlen(s), n = 0;
        char *buf = gm_mem_alloc(m, len + 24);
        if (!buf) {
            ok = false;
            break;
        }
        for (size_t i = 0; i < len && n < len; i++)
            buf[n++] = name_char(s[i]) ? s[i] : '_';
        if (n == 0)
            buf[n++] = 'r';
        for (uint32_t k = 0;; k++) {
            int w = snprintf(buf + n, 24, "_%u", k);
            int added;
            if (gm_intern_put(&used, buf, n + (size_t)w, &id, &added)) {
                ok = false;
                break;
            }
            if (added)
                break;
        }
        p->names[r] = buf;
    }
    gm_intern_free(&used);
    return ok;
}

/* A code point inside "..." or [...] (in_class), as ASCII. */
static void put_cp(gm_strbuf *b, uint32_t cp, bool in_class, bool first_in_class)
{
    switch (cp) {
    case '\n': gm_strbuf_puts(b, "\\n"); return;
    case '\r': gm_strbuf_puts(b, "\\r"); return;
    case '\t': gm_strbuf_puts(b, "\\t"); return;
    case '\\': gm_strbuf_puts(b, "\\\\"); return;
    case '"': gm_strbuf_puts(b, "\\\""); return;
    default: break;
    }
    if (in_class && (cp == ']' || cp == '[' || cp == '-')) {
        gm_strbuf_putc(b, '\\');
        gm_strbuf_putc(b, (char)cp);
    } else if (cp >= 0x20 && cp < 0x7f && !(first_in_class && cp == '^')) {
        gm_strbuf_putc(b, (char)cp);
    } else if (cp <= 0xFFFF) {
        gm_strbuf_printf(b, "\\u%04X", cp);
    } else {
        gm_strbuf_printf(b, "\\U%08X", cp);
    }
}

/* A raw byte inside %"..." or %[...]. */
static void put_byte(gm_strbuf *b, uint8_t c, bool in_class, bool first_in_class)
{
    if (c == '\\' || c == '"' || (in_class && (c == ']' || c == '[' || c == '-'))) {
        gm_strbuf_putc(b, '\\');
        gm_strbuf_putc(b, (char)c);
    } else if (c >= 0x20 && c < 0x7f && !(first_in_class && c == '^')) {
        gm_strbuf_putc(b, (char)c);
    } else {
        gm_strbuf_printf(b, "\\x%02X", c);
    }
}

static bool is_utf8(const uint8_t *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = gm_utf8_decode(s + i, n - i, &cp);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

static void print_bytes(gm_strbuf *b, const uint8_t *s, size_t n)
{
    if (is_utf8(s, n)) {
        gm_strbuf_putc(b, '"');
        for (size_t i = 0; i < n;) {
            uint32_t cp;
            i += gm_utf8_decode(s + i, n - i, &cp);
            put_cp(b, cp, false, false);
        }
        gm_strbuf_putc(b, '"');
    } else {
        gm_strbuf_puts(b, "%\"");
        for (size_t i = 0; i < n; i++)
            put_byte(b, s[i], false, false);
        gm_strbuf_putc(b, '"');
    }
}

static void print_ranges(gm_strbuf *b, const gm_cprange *r, size_t n)
{
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        put_cp(b, r[i].lo, true, first);
        first = false;
        if (r[i].hi > r[i].lo) {
            if (r[i].hi > r[i].lo + 1)
                gm_strbuf_putc(b, '-');
            put_cp(b, r[i].hi, true, false);
        }
    }
}

static void print_set(gm_strbuf *b, const gm_cpset *s)
{
    /* A set reaching the top of the code space (a [^...] class) prints as its complement. */
    bool negate = s->n && s->r[s->n - 1].hi == GM_CP_MAX;
    gm_strbuf_putc(b, '[');
    if (!negate) {
        print_ranges(b, s->r, s->n);
    } else {
        gm_strbuf_putc(b, '^');
        uint32_t next = 0; /* first code point not yet known to be in the set */
        for (size_t i = 0; i < s->n; i++) {
            if (s->r[i].lo > next) {
                gm_cprange gap = {next, s->r[i].lo - 1};
                print_ranges(b, &gap, 1);
            }
            next = s->r[i].hi + 1;
        }
    }
    gm_strbuf_putc(b, ']');
}

static bool bit(const uint32_t bits[8], unsigned c) { return bits[c >> 5] >> (c & 31) & 1; }

static void print_byteset(gm_strbuf *b, const uint32_t bits[8])
{
    bool negate = bit(bits, 255);
    gm_strbuf_puts(b, negate ? "%[^" : "%[");
    bool first = !negate;
    for (unsigned c = 0; c < 256;) {
        if (bit(bits, c) == negate) {
            c++;
            continue;
        }
        unsigned hi = c;
        while (hi < 255 && bit(bits, hi + 1) != negate)
            hi++;
        put_byte(b, (uint8_t)c, true, first);
        first = false;
        if (hi > c) {
            if (hi > c + 1)
                gm_strbuf_putc(b, '-');
            put_byte(b, (uint8_t)hi, true, false);
        }
        c = hi + 1;
    }
    gm_strbuf_putc(b, ']');
}

/* A special token: <text> when llama.cpp's form reads it back, else <"..."> (bytes). */
static void print_token(gm_strbuf *b, const uint8_t *s, size_t n)
{
    if (n >= 2 && s[0] == 0xff && (s[1] == 0xfd || s[1] == 0xfc)) {
        /* a token id set (note [token id sets]): its ids are decimal, ',' between */
        gm_strbuf_puts(b, s[1] == 0xfc ? "ExcludeToken(" : "Token(");
        for (size_t i = 2; i < n; i++) {
            if (s[i] == ',')
                gm_strbuf_putc(b, ',');
            gm_strbuf_putc(b, s[i] == ',' ? ' ' : (char)s[i]);
        }
        gm_strbuf_putc(b, ')');
        return;
    }
    bool plain = n >= 3 && s[0] == '<' && s[n - 1] == '>' && s[1] != '"' && s[1] != '[';
    for (size_t i = 1; plain && i + 1 < n; i++)
        plain = s[i] >= 0x20 && s[i] < 0x7f && s[i] != '>';
    if (plain) {
        gm_strbuf_append(b, (const char *)s, n);
        return;
    }
    gm_strbuf_puts(b, "<\"");
    for (size_t i = 0; i < n; i++)
        put_byte(b, s[i], false, false);
    gm_strbuf_puts(b, "\">");
}

/* Precedence: 0 alternatives, 1 sequence, 2 postfix operand (an atom). */
static void print_node(const printer *p, uint32_t id, int ctx)
{
    const gm_ebnf *g = p->g;
    gm_strbuf *b = p->out;
    const gm_ex *x = &g->nodes[id];
    int level = x->kind == GM_EX_ALT ? 0 : x->kind == GM_EX_SEQ ? 1 : x->kind == GM_EX_REPEAT ? 1 : 2;
    bool paren = level < ctx;
    if (paren)
        gm_strbuf_putc(b, '(');
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_EMPTY: gm_strbuf_puts(b, "\"\""); break;
    case GM_EX_NOTHING: gm_strbuf_puts(b, "[]"); break;
    case GM_EX_BYTES:
        if (x->count == 0)
            gm_strbuf_puts(b, "\"\""); /* g->bytes may be NULL */
        else
            print_bytes(b, g->bytes + x->first, x->count);
        break;
    case GM_EX_TOKEN: print_token(b, g->bytes + x->first, x->count); break;
    case GM_EX_SET: print_set(b, &g->sets[x->arg]); break;
    case GM_EX_BYTESET: print_byteset(b, g->bytesets[x->arg]); break;
    case GM_EX_REF: gm_strbuf_puts(b, printed_name(p, x->arg)); break;
    case GM_EX_SEQ:
        for (uint32_t i = 0; i < x->count; i++) {
            if (i)
                gm_strbuf_putc(b, ' ');
            print_node(p, g->kids[x->first + i], 1);
        }
        break;
    case GM_EX_ALT:
        for (uint32_t i = 0; i < x->count; i++) {
            if (i)
                gm_strbuf_puts(b, " | ");
            print_node(p, g->kids[x->first + i], 1);
        }
        break;
    case GM_EX_UNTIL:
        gm_strbuf_puts(b, "Until(");
        for (uint32_t i = 0; i < x->count; i++) {
            const gm_ex *l = &g->nodes[g->kids[x->first + i]];
            if (i)
                gm_strbuf_puts(b, ", ");
            print_bytes(b, g->bytes + l->first, l->count);
        }
        if (x->arg != GM_EX_NONE)
            gm_strbuf_printf(b, ", end=%u", x->arg);
        if (x->min & GM_UNTIL_BYTES)
            gm_strbuf_puts(b, ", bytes=1");
        if (x->max != GM_EX_INF)
            gm_strbuf_printf(b, ", max_chars=%u", x->max);
        if (x->min & GM_UNTIL_BEFORE)
            gm_strbuf_puts(b, ", before=1");
        gm_strbuf_putc(b, ')');
        break;
    case GM_EX_REPEAT:
        print_node(p, g->kids[x->first], 2);
        if (x->min == 0 && x->max == GM_EX_INF)
            gm_strbuf_putc(b, '*');
        else if (x->min == 1 && x->max == GM_EX_INF)
            gm_strbuf_putc(b, '+');
        else if (x->min == 0 && x->max == 1)
            gm_strbuf_putc(b, '?');
        else if (x->max == GM_EX_INF)
            gm_strbuf_printf(b, "{%u,}", x->min);
        else if (x->min == x->max)
            gm_strbuf_printf(b, "{%u}", x->min);
        else
            gm_strbuf_printf(b, "{%u,%u}", x->min, x->max);
        break;
    }
    if (paren)
        gm_strbuf_putc(b, ')');
}

/* The shortest text of t that reads back as the same float. */
static void print_float(gm_strbuf *b, float t)
{
    char buf[48];
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, (double)t);
        if (strtof(buf, NULL) == t)
            break;
    }
    gm_strbuf_puts(b, buf);
}

/* XGrammar's attribute block name[a, b] (note [rule attributes] in ebnf_parse.c). */
static void print_rule_attrs(const gm_ebnf_rule *rule, gm_strbuf *b)
{
    const char *sep = "[";
    if (rule->max_tokens != GM_EX_INF) { /* note [token budgets] */
        gm_strbuf_printf(b, "%smax_tokens=%u", sep, rule->max_tokens);
        sep = ", ";
    }
    if (rule->max_chars != GM_EX_INF) { /* note [rule max_chars] in ebnf_max_chars.c */
        gm_strbuf_printf(b, "%smax_chars=%u", sep, rule->max_chars);
        sep = ", ";
    }
    if (rule->has_temperature) {
        gm_strbuf_printf(b, "%stemperature=", sep);
        print_float(b, rule->temperature);
        sep = ", ";
    }
    if (rule->capture) { /* a name of letters, digits and '_' (note [captures]) */
        gm_strbuf_printf(b, "%scapture=\"%s\"", sep, rule->capture);
        sep = ", ";
    }
    if (rule->lazy) { /* note [lazy rules] in earley/fsm_build.c */
        gm_strbuf_printf(b, "%slazy", sep);
        sep = ", ";
    }
    if (sep[0] == ',')
        gm_strbuf_putc(b, ']');
}

static void print_rule(const printer *p, uint32_t r)
{
    const gm_ebnf_rule *rule = &p->g->rules[r];
    gm_strbuf *b = p->out;
    if (rule->chars_helper) /* printed as its rule's body (note [max_chars on regular bodies]) */
        return;
    if (rule->body == GM_EX_NONE) {
        gm_strbuf_printf(b, "# %s is not defined\n", printed_name(p, r));
        return;
    }
    gm_strbuf_puts(b, printed_name(p, r));
    print_rule_attrs(rule, b);
    gm_strbuf_puts(b, " ::= ");
    print_node(p, rule->chars_src != GM_EX_NONE ? rule->chars_src : rule->body, 0);
    if (rule->lookahead != GM_EX_NONE) {
        gm_strbuf_puts(b, " (= ");
        print_node(p, rule->lookahead, 0);
        gm_strbuf_putc(b, ')');
    }
    gm_strbuf_putc(b, '\n');
}

typedef struct rule_pos {
    uint32_t file, line, column, rule;
} rule_pos;

static int cmp_rule_pos(const void *a, const void *b)
{
    const rule_pos *x = a, *y = b;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    if (x->column != y->column)
        return x->column < y->column ? -1 : 1;
    return x->rule < y->rule ? -1 : x->rule > y->rule;
}

/*
 * The root first, then the rules in the order of their definitions in
 * the text (rule indices follow first mentions, which printing changes),
 * then those without a location in index order: so parse -> print is a
 * fixed point.
 */
void gm_ebnf_print(const gm_ebnf *g, gm_strbuf *out)
{
    printer p = {.g = g, .out = out};
    if (!rename_rules(&p))
        out->failed = true;
    if (g->root != GM_EX_NONE && g->root < g->nrules)
        print_rule(&p, g->root);
    rule_pos *order = gm_mem_alloc(g->mem, (g->nrules ? g->nrules : 1) * sizeof *order);
    if (!order)
        out->failed = true;
    for (uint32_t r = 0; order && r < g->nrules; r++) {
        const gm_srcloc *l = &g->rules[r].loc;
        uint32_t f = UINT32_MAX;
        for (uint32_t i = 0; l->line && i < g->nfiles; i++)
            if (g->files[i] == l->file)
                f = i;
        order[r] = (rule_pos){f, l->line, l->column, r};
        if (f == UINT32_MAX)
            order[r].line = order[r].column = 0;
    }
    if (order)
        qsort(order, g->nrules, sizeof *order, cmp_rule_pos);
    for (uint32_t i = 0; order && i < g->nrules; i++)
        if (order[i].rule != g->root)
            print_rule(&p, order[i].rule);
    gm_mem_free(g->mem, order);
    if (p.names) {
        for (uint32_t r = 0; r < g->nrules; r++)
            gm_mem_free(g->mem, p.names[r]);
        gm_mem_free(g->mem, p.names);
    }
}
