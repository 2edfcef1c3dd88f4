/*
 * Merging equal rules of a grammar IR (ir/ir_merge.h).
 *
 * note [merging equal rules]
 * A tool-call preset imports one JSON Schema grammar per tool (ir_import.c),
 * and each brings its own copy of the same helper rules — string, char, ws,
 * number, value — whose automata the engine would build once per tool: with
 * 32 tools, most of the compile time. Two rules are equal when their bodies
 * are equal node for node, where two references are equal when they name
 * equal rules. The coarsest such partition (a bisimulation on rules) is
 * found by partition refinement: start from one class (rules with a
 * lookahead assertion or no body each alone: never merged); split each
 * class by the bodies' structure with references read as the classes of
 * their rules; stop when no class splits. Equal rules derive the same
 * strings, so every reference can be redirected to the first rule of its
 * class without changing any rule's language; the other rules of the class
 * become unreachable, and the engine builds only the rules the root
 * reaches. REF nodes are the only nodes changed (their rule, in place): a
 * REF node shared by several parents names an equal rule for all of them.
 *
 * The refinement is Hopcroft's, as in note [minimization]
 * (fsm_minimize.c): when a class splits, the largest part keeps its number
 * and the others move; only the nodes above a reference to a moved rule
 * change their hash, so only they are hashed again (in index order, which
 * puts children first), and only the rules whose bodies they are are
 * grouped again. Moore's rounds over every node before took one round per
 * step of a chain of references: 140 rounds over 18,000 nodes on a schema
 * of MaskBench (Github_hard---o82618).
 */
#include "ir/ir_merge.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

typedef struct merger {
    const gm_ebnf *g;
    uint32_t *cls;            /* [nrules] class of each rule */
    uint64_t *hash;           /* [nnodes] structural hash, references by class */
    uint32_t *par_off, *par;  /* node -> parents (CSR) */
    uint32_t *ref_off, *refs; /* rule -> the REF nodes naming it */
    uint32_t *body_off, *bodies; /* node -> the rules whose body it is */
    uint32_t *stamp;          /* [nnodes] round a node was last marked */
    uint32_t *dirty;          /* nodes to hash again */
    uint32_t ndirty;
    /* the classes: rules of class c are elems[first[c] .. past[c]) */
    uint32_t *elems, *loc, *first, *past, *mk;
    uint32_t nclasses;
    uint32_t *touched, ntouched, *moved, nmoved, *blocks, nblocks;
    uint32_t *tmp, *grp, *gsize, *order;
    const uint32_t *sort_base;
    uint64_t *pairs;          /* [2 * nrules] */
} merger;

static bool fixed(const gm_ebnf *g, uint32_t r)
{
    /* a budget belongs to its rule's occurrences (note [token budgets]): never merged */
    return g->rules[r].body == GM_EX_NONE || g->rules[r].lookahead != GM_EX_NONE ||
           g->rules[r].max_tokens != GM_EX_INF || g->rules[r].capture ||
           g->rules[r].lazy || g->rules[r].has_temperature ||
           g->rules[r].max_chars != GM_EX_INF;
}

static uint32_t nkids(const gm_ex *x)
{
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_REPEAT: return 1;
    case GM_EX_SEQ:
    case GM_EX_ALT:
    case GM_EX_UNTIL: return x->count;
    default: return 0;
    }
}

/* The hash of node n from its children's (children come before their parents). */
static void hash_node(merger *mg, uint32_t n)
{
    const gm_ebnf *g = mg->g;
    const gm_ex *x = &g->nodes[n];
    uint64_t h = gm_hash_mix64(x->kind + 1);
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_EMPTY:
    case GM_EX_NOTHING: break;
    case GM_EX_BYTES:
    case GM_EX_TOKEN: h = gm_hash_bytes(g->bytes + x->first, x->count, h); break;
    case GM_EX_SET: {
        const gm_cpset *s = &g->sets[x->arg];
        h = gm_hash_bytes(s->r, s->n * sizeof *s->r, h);
        break;
    }
    case GM_EX_BYTESET: h = gm_hash_bytes(g->bytesets[x->arg], sizeof *g->bytesets, h); break;
    case GM_EX_REF: h = gm_hash_mix64(h ^ mg->cls[x->arg]); break;
    case GM_EX_REPEAT:
    case GM_EX_UNTIL:
        h = gm_hash_mix64(h ^ x->min);
        h = gm_hash_mix64(h ^ x->max);
        /* fall through */
    case GM_EX_SEQ:
    case GM_EX_ALT:
        h = gm_hash_mix64(h ^ x->arg);
        for (uint32_t k = 0; k < nkids(x); k++)
            h = gm_hash_mix64(h * 31 + mg->hash[g->kids[x->first + k]]);
        break;
    }
    mg->hash[n] = h;
}

/* Whether nodes a and b are equal, references compared by class. */
static bool node_eq(const merger *mg, uint32_t a, uint32_t b)
{
    const gm_ebnf *g = mg->g;
    if (a == b)
        return true;
    const gm_ex *x = &g->nodes[a], *y = &g->nodes[b];
    if (x->kind != y->kind || mg->hash[a] != mg->hash[b])
        return false;
    switch ((gm_ex_kind)x->kind) {
    case GM_EX_EMPTY:
    case GM_EX_NOTHING: return true;
    case GM_EX_BYTES:
    case GM_EX_TOKEN:
        return x->count == y->count &&
               (!x->count || !memcmp(g->bytes + x->first, g->bytes + y->first, x->count));
    case GM_EX_SET: return gm_cpset_equal(&g->sets[x->arg], &g->sets[y->arg]);
    case GM_EX_BYTESET:
        return !memcmp(g->bytesets[x->arg], g->bytesets[y->arg], sizeof *g->bytesets);
    case GM_EX_REF: return mg->cls[x->arg] == mg->cls[y->arg];
    case GM_EX_REPEAT:
        return x->min == y->min && x->max == y->max &&
               node_eq(mg, g->kids[x->first], g->kids[y->first]);
    case GM_EX_UNTIL:
        if (x->min != y->min || x->max != y->max)
            return false;
        /* fall through */
    case GM_EX_SEQ:
    case GM_EX_ALT:
        if (x->count != y->count || x->arg != y->arg)
            return false;
        for (uint32_t k = 0; k < x->count; k++)
            if (!node_eq(mg, g->kids[x->first + k], g->kids[y->first + k]))
                return false;
        return true;
    }
    return false;
}

/* A CSR of n lists: counts in off[1..n] become offsets (off[0] = 0). */
static void csr_offsets(uint32_t *off, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        off[i + 1] += off[i];
}

/* Parents of nodes, REF nodes of rules, rules of body nodes. 0, or -1 when out of memory. */
static int index_ir(merger *mg, gm_mem *m)
{
    const gm_ebnf *g = mg->g;
    uint32_t N = g->nnodes, R = g->nrules;
    mg->par_off = gm_mem_calloc(m, (size_t)N + 1, sizeof *mg->par_off);
    mg->ref_off = gm_mem_calloc(m, (size_t)R + 1, sizeof *mg->ref_off);
    mg->body_off = gm_mem_calloc(m, (size_t)N + 1, sizeof *mg->body_off);
    if (!mg->par_off || !mg->ref_off || !mg->body_off)
        return -1;
    size_t npar = 0, nref = 0, nbody = 0;
    for (uint32_t n = 0; n < N; n++) {
        const gm_ex *x = &g->nodes[n];
        for (uint32_t k = 0; k < nkids(x); k++, npar++)
            mg->par_off[g->kids[x->first + k] + 1]++;
        if (x->kind == GM_EX_REF) {
            mg->ref_off[x->arg + 1]++;
            nref++;
        }
    }
    for (uint32_t r = 0; r < R; r++)
        if (!fixed(g, r)) {
            mg->body_off[g->rules[r].body + 1]++;
            nbody++;
        }
    mg->par = gm_mem_alloc(m, (npar ? npar : 1) * sizeof *mg->par);
    mg->refs = gm_mem_alloc(m, (nref ? nref : 1) * sizeof *mg->refs);
    mg->bodies = gm_mem_alloc(m, (nbody ? nbody : 1) * sizeof *mg->bodies);
    if (!mg->par || !mg->refs || !mg->bodies)
        return -1;
    csr_offsets(mg->par_off, N);
    csr_offsets(mg->ref_off, R);
    csr_offsets(mg->body_off, N);
    /* fill, counting the offsets up; then shift them back */
    for (uint32_t n = 0; n < N; n++) {
        const gm_ex *x = &g->nodes[n];
        for (uint32_t k = 0; k < nkids(x); k++)
            mg->par[mg->par_off[g->kids[x->first + k]]++] = n;
        if (x->kind == GM_EX_REF)
            mg->refs[mg->ref_off[x->arg]++] = n;
    }
    for (uint32_t r = 0; r < R; r++)
        if (!fixed(g, r))
            mg->bodies[mg->body_off[g->rules[r].body]++] = r;
    memmove(mg->par_off + 1, mg->par_off, (size_t)N * sizeof *mg->par_off);
    memmove(mg->ref_off + 1, mg->ref_off, (size_t)R * sizeof *mg->ref_off);
    memmove(mg->body_off + 1, mg->body_off, (size_t)N * sizeof *mg->body_off);
    mg->par_off[0] = mg->ref_off[0] = mg->body_off[0] = 0;
    return 0;
}

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint64_t body_hash(const merger *mg, uint32_t r)
{
    return mg->hash[mg->g->rules[r].body];
}

/* Sorts ord[0..n) (indices into mg->sort_base) by the rules' body hashes. */
static void sort_by_body(merger *mg, uint32_t *ord, uint32_t n)
{
    if (n <= 32) {
        for (uint32_t i = 1; i < n; i++) {
            uint32_t x = ord[i];
            uint64_t hx = body_hash(mg, mg->sort_base[x]);
            uint32_t j = i;
            for (; j > 0 && body_hash(mg, mg->sort_base[ord[j - 1]]) > hx; j--)
                ord[j] = ord[j - 1];
            ord[j] = x;
        }
        return;
    }
    /* (hash, index) pairs sorted by qsort */
    uint64_t *pairs = mg->pairs;
    for (uint32_t i = 0; i < n; i++) {
        pairs[2 * i] = body_hash(mg, mg->sort_base[ord[i]]);
        pairs[2 * i + 1] = ord[i];
    }
    qsort(pairs, n, 2 * sizeof *pairs, cmp_pair);
    for (uint32_t i = 0; i < n; i++)
        ord[i] = (uint32_t)pairs[2 * i + 1];
}

static void swap_to(merger *mg, uint32_t i, uint32_t j)
{
    uint32_t a = mg->elems[i], b = mg->elems[j];
    mg->elems[i] = b;
    mg->loc[b] = i;
    mg->elems[j] = a;
    mg->loc[a] = j;
}

/* A new class of positions [a, e) of elems: its rules move there. */
static void new_class(merger *mg, uint32_t a, uint32_t e)
{
    uint32_t z = mg->nclasses++;
    mg->first[z] = a;
    mg->past[z] = e;
    mg->mk[z] = 0;
    for (uint32_t i = a; i < e; i++) {
        mg->cls[mg->elems[i]] = z;
        mg->moved[mg->nmoved++] = mg->elems[i];
    }
}

/*
 * Splits class c, whose touched rules are its tail: the untouched prefix
 * stays together (their bodies' hashes did not change), the tail splits by
 * equal bodies; the largest part keeps c.
 */
static void split_class(merger *mg, uint32_t c)
{
    const gm_ebnf *g = mg->g;
    uint32_t first = mg->first[c], past = mg->past[c], nt = mg->mk[c], tail = past - nt;
    mg->mk[c] = 0;
    /* groups of the tail: by body hash, then each rule of a run of equal
       hashes joins the first one before it with an equal body */
    for (uint32_t k = 0; k < nt; k++)
        mg->order[k] = k;
    mg->sort_base = mg->elems + tail;
    sort_by_body(mg, mg->order, nt);
    uint32_t ng = 0;
    for (uint32_t i = 0; i < nt;) {
        uint32_t e = i + 1;
        uint64_t h = body_hash(mg, mg->elems[tail + mg->order[i]]);
        while (e < nt && body_hash(mg, mg->elems[tail + mg->order[e]]) == h)
            e++;
        for (uint32_t a = i; a < e; a++)
            mg->grp[mg->order[a]] = UINT32_MAX;
        for (uint32_t a = i; a < e; a++) {
            uint32_t ka = mg->order[a];
            if (mg->grp[ka] != UINT32_MAX)
                continue;
            mg->grp[ka] = ng;
            uint32_t ba = g->rules[mg->elems[tail + ka]].body;
            for (uint32_t b = a + 1; b < e; b++) {
                uint32_t kb = mg->order[b];
                if (mg->grp[kb] == UINT32_MAX &&
                    node_eq(mg, ba, g->rules[mg->elems[tail + kb]].body))
                    mg->grp[kb] = ng;
            }
            ng++;
        }
        i = e;
    }
    if (ng == 1 && tail == first)
        return;
    /* the tail by group (counting sort); gsize[g] becomes the end of group g */
    memset(mg->gsize, 0, ((size_t)ng + 1) * sizeof *mg->gsize);
    for (uint32_t k = 0; k < nt; k++)
        mg->gsize[mg->grp[k] + 1]++;
    for (uint32_t i = 0; i < ng; i++)
        mg->gsize[i + 1] += mg->gsize[i];
    for (uint32_t k = 0; k < nt; k++)
        mg->tmp[mg->gsize[mg->grp[k]]++] = mg->elems[tail + k];
    for (uint32_t k = 0; k < nt; k++) {
        mg->elems[tail + k] = mg->tmp[k];
        mg->loc[mg->tmp[k]] = tail + k;
    }
    uint32_t best_at = first, best_len = tail - first;
    for (uint32_t i = 0; i < ng; i++) {
        uint32_t a = tail + (i ? mg->gsize[i - 1] : 0), e = tail + mg->gsize[i];
        if (e - a > best_len) {
            best_len = e - a;
            best_at = a;
        }
    }
    if (tail > first && best_at != first)
        new_class(mg, first, tail);
    for (uint32_t i = 0; i < ng; i++) {
        uint32_t a = tail + (i ? mg->gsize[i - 1] : 0), e = tail + mg->gsize[i];
        if (a != best_at)
            new_class(mg, a, e);
    }
    mg->first[c] = best_at;
    mg->past[c] = best_at + best_len;
}

/* Marks node n and its ancestors dirty for this round. */
static void mark_up(merger *mg, uint32_t n, uint32_t round, uint32_t *stack)
{
    if (mg->stamp[n] == round)
        return;
    uint32_t sp = 0;
    mg->stamp[n] = round;
    stack[sp++] = n;
    while (sp) {
        uint32_t x = stack[--sp];
        mg->dirty[mg->ndirty++] = x;
        for (uint32_t j = mg->par_off[x]; j < mg->par_off[x + 1]; j++) {
            uint32_t p = mg->par[j];
            if (mg->stamp[p] != round) {
                mg->stamp[p] = round;
                stack[sp++] = p;
            }
        }
    }
}

gm_status gm_ebnf_merge_rules(gm_ebnf *g, uint32_t *merged, gm_error *err)
{
    gm_mem *m = g->mem;
    uint32_t nr = g->nrules, N = g->nnodes;
    if (merged)
        *merged = 0;
    if (nr < 2)
        return GM_OK;
    merger mg;
    memset(&mg, 0, sizeof mg);
    mg.g = g;
    size_t n1 = N ? N : 1;
    mg.cls = gm_mem_calloc(m, nr, sizeof *mg.cls);
    mg.hash = gm_mem_alloc(m, n1 * sizeof *mg.hash);
    mg.stamp = gm_mem_calloc(m, n1, sizeof *mg.stamp);
    mg.dirty = gm_mem_alloc(m, n1 * sizeof *mg.dirty);
    uint32_t *stack = gm_mem_alloc(m, n1 * sizeof *stack);
    mg.elems = gm_mem_alloc(m, nr * sizeof *mg.elems);
    mg.loc = gm_mem_alloc(m, nr * sizeof *mg.loc);
    mg.first = gm_mem_alloc(m, nr * sizeof *mg.first);
    mg.past = gm_mem_alloc(m, nr * sizeof *mg.past);
    mg.mk = gm_mem_calloc(m, nr, sizeof *mg.mk);
    mg.touched = gm_mem_alloc(m, nr * sizeof *mg.touched);
    mg.moved = gm_mem_alloc(m, nr * sizeof *mg.moved);
    mg.blocks = gm_mem_alloc(m, nr * sizeof *mg.blocks);
    mg.tmp = gm_mem_alloc(m, nr * sizeof *mg.tmp);
    mg.grp = gm_mem_alloc(m, nr * sizeof *mg.grp);
    mg.gsize = gm_mem_alloc(m, ((size_t)nr + 1) * sizeof *mg.gsize);
    mg.order = gm_mem_alloc(m, nr * sizeof *mg.order);
    mg.pairs = gm_mem_alloc(m, 2 * (size_t)nr * sizeof *mg.pairs);
    gm_status st = GM_OK;
    if (!mg.cls || !mg.hash || !mg.stamp || !mg.dirty || !stack || !mg.elems || !mg.loc ||
        !mg.first || !mg.past || !mg.mk || !mg.touched || !mg.moved || !mg.blocks || !mg.tmp ||
        !mg.grp || !mg.gsize || !mg.order || !mg.pairs || index_ir(&mg, m)) {
        st = gm_mem_fail(m, err, "merging a grammar's rules");
        goto out;
    }
    /* Classes: the rules that may merge in class 0, each other rule alone. */
    uint32_t k = 0;
    for (uint32_t r = 0; r < nr; r++)
        if (!fixed(g, r)) {
            mg.elems[k] = r;
            mg.loc[r] = k++;
            mg.cls[r] = 0;
        }
    mg.first[0] = 0;
    mg.past[0] = k;
    mg.nclasses = 1;
    for (uint32_t r = 0; r < nr; r++)
        if (fixed(g, r)) {
            uint32_t c = mg.nclasses++;
            mg.elems[k] = r;
            mg.loc[r] = k;
            mg.first[c] = k;
            mg.past[c] = ++k;
            mg.cls[r] = c;
        }
    for (uint32_t n = 0; n < N; n++)
        hash_node(&mg, n);
    /* round 1 touches every rule that may merge, then the rules above moved ones */
    mg.ntouched = 0;
    for (uint32_t r = 0; r < nr; r++)
        if (!fixed(g, r))
            mg.touched[mg.ntouched++] = r;
    for (uint32_t round = 1; mg.ntouched; round++) {
        mg.nblocks = 0;
        mg.nmoved = 0;
        for (uint32_t i = 0; i < mg.ntouched; i++) {
            uint32_t r = mg.touched[i], c = mg.cls[r];
            if (!mg.mk[c])
                mg.blocks[mg.nblocks++] = c;
            swap_to(&mg, mg.loc[r], mg.past[c] - 1 - mg.mk[c]++);
        }
        for (uint32_t i = 0; i < mg.nblocks; i++)
            split_class(&mg, mg.blocks[i]);
        /* the nodes above references to moved rules, hashed again in index order */
        mg.ndirty = 0;
        for (uint32_t i = 0; i < mg.nmoved; i++) {
            uint32_t x = mg.moved[i];
            for (uint32_t j = mg.ref_off[x]; j < mg.ref_off[x + 1]; j++)
                mark_up(&mg, mg.refs[j], round, stack);
        }
        qsort(mg.dirty, mg.ndirty, sizeof *mg.dirty, cmp_u32);
        mg.ntouched = 0;
        for (uint32_t i = 0; i < mg.ndirty; i++) {
            uint32_t n = mg.dirty[i];
            hash_node(&mg, n);
            for (uint32_t j = mg.body_off[n]; j < mg.body_off[n + 1]; j++)
                mg.touched[mg.ntouched++] = mg.bodies[j];
        }
    }
    /* The first rule of each class stands for it (tmp reused: class -> rule). */
    uint32_t *rep = mg.tmp;
    memset(rep, 0xff, (size_t)nr * sizeof *rep);
    for (uint32_t r = 0; r < nr; r++) {
        if (rep[mg.cls[r]] == UINT32_MAX)
            rep[mg.cls[r]] = r;
        else if (merged)
            (*merged)++;
    }
    for (uint32_t n = 0; n < N; n++)
        if (g->nodes[n].kind == GM_EX_REF)
            g->nodes[n].arg = rep[mg.cls[g->nodes[n].arg]];
out:
    gm_mem_free(m, mg.cls);
    gm_mem_free(m, mg.hash);
    gm_mem_free(m, mg.stamp);
    gm_mem_free(m, mg.dirty);
    gm_mem_free(m, stack);
    gm_mem_free(m, mg.elems);
    gm_mem_free(m, mg.loc);
    gm_mem_free(m, mg.first);
    gm_mem_free(m, mg.past);
    gm_mem_free(m, mg.mk);
    gm_mem_free(m, mg.touched);
    gm_mem_free(m, mg.moved);
    gm_mem_free(m, mg.blocks);
    gm_mem_free(m, mg.tmp);
    gm_mem_free(m, mg.grp);
    gm_mem_free(m, mg.gsize);
    gm_mem_free(m, mg.order);
    gm_mem_free(m, mg.pairs);
    gm_mem_free(m, mg.par_off);
    gm_mem_free(m, mg.par);
    gm_mem_free(m, mg.ref_off);
    gm_mem_free(m, mg.refs);
    gm_mem_free(m, mg.body_off);
    gm_mem_free(m, mg.bodies);
    return st;
}
