/*
 * Merging equal rules of a grammar IR (earley/ir_merge.h).
 *
 * note [merging equal rules]
 * A tool-call preset imports one JSON Schema grammar per tool (ir_import.c),
 * and each brings its own copy of the same helper rules — string, char, ws,
 * number, value — whose automata the engine would build once per tool: with
 * 32 tools, most of the compile time. Two rules are equal when their bodies
 * are equal node for node, where two references are equal when they name
 * equal rules. The coarsest such partition (a bisimulation on rules) is
 * found by Moore-style refinement: start from one class; split each class by
 * the bodies' structure with references read as the classes of their rules;
 * stop when no class splits. Equal rules derive the same strings, so every
 * reference can be redirected to the first rule of its class without
 * changing any rule's language; the other rules of the class become
 * unreachable, and the engine builds only the rules the root reaches.
 * Rules with a lookahead assertion or no body are never merged.
 * REF nodes are the only nodes changed (their rule, in place): a REF node
 * shared by several parents names an equal rule for all of them.
 */
#include "earley/ir_merge.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"

typedef struct merger {
    const gm_ebnf *g;
    uint32_t *cls;            /* [nrules] class of each rule */
    uint64_t *hash;           /* [nnodes] structural hash, references by class */
} merger;

static bool fixed(const gm_ebnf *g, uint32_t r)
{
    return g->rules[r].body == GM_EX_NONE || g->rules[r].lookahead != GM_EX_NONE;
}

/* Hashes every node; children come before their parents (note [ebnf ir]). */
static void hash_nodes(merger *mg)
{
    const gm_ebnf *g = mg->g;
    for (uint32_t n = 0; n < g->nnodes; n++) {
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
            h = gm_hash_mix64(h ^ x->min);
            h = gm_hash_mix64(h ^ x->max);
            /* fall through */
        case GM_EX_SEQ:
        case GM_EX_ALT:
        case GM_EX_UNTIL:
            h = gm_hash_mix64(h ^ x->arg);
            for (uint32_t k = 0; k < (x->kind == GM_EX_REPEAT ? 1 : x->count); k++)
                h = gm_hash_mix64(h * 31 + mg->hash[g->kids[x->first + k]]);
            break;
        }
        mg->hash[n] = h;
    }
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
        return x->count == y->count && !memcmp(g->bytes + x->first, g->bytes + y->first, x->count);
    case GM_EX_SET: return gm_cpset_equal(&g->sets[x->arg], &g->sets[y->arg]);
    case GM_EX_BYTESET:
        return !memcmp(g->bytesets[x->arg], g->bytesets[y->arg], sizeof *g->bytesets);
    case GM_EX_REF: return mg->cls[x->arg] == mg->cls[y->arg];
    case GM_EX_REPEAT:
        return x->min == y->min && x->max == y->max &&
               node_eq(mg, g->kids[x->first], g->kids[y->first]);
    case GM_EX_SEQ:
    case GM_EX_ALT:
    case GM_EX_UNTIL:
        if (x->count != y->count || x->arg != y->arg)
            return false;
        for (uint32_t k = 0; k < x->count; k++)
            if (!node_eq(mg, g->kids[x->first + k], g->kids[y->first + k]))
                return false;
        return true;
    }
    return false;
}

typedef struct keyed {
    uint64_t hash;
    uint32_t rule;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return (x->rule > y->rule) - (x->rule < y->rule);
}

/* One refinement round into next[]; returns the number of classes. */
static uint32_t refine(merger *mg, keyed *order, uint32_t *next)
{
    const gm_ebnf *g = mg->g;
    uint32_t nr = g->nrules, nclasses = 0;
    hash_nodes(mg);
    for (uint32_t r = 0; r < nr; r++)
        order[r] = (keyed){fixed(g, r) ? gm_hash_mix64(~(uint64_t)r) : mg->hash[g->rules[r].body],
                           r};
    qsort(order, nr, sizeof *order, cmp_keyed);
    for (uint32_t i = 0; i < nr;) {
        uint32_t end = i;
        while (end < nr && order[end].hash == order[i].hash)
            end++;
        /* rules of one hash: each joins the first earlier one it equals (same old class) */
        for (uint32_t k = i; k < end; k++) {
            uint32_t r = order[k].rule;
            next[r] = UINT32_MAX;
            for (uint32_t j = i; j < k && !fixed(g, r); j++) {
                uint32_t q = order[j].rule;
                if (!fixed(g, q) && mg->cls[q] == mg->cls[r] &&
                    node_eq(mg, g->rules[q].body, g->rules[r].body)) {
                    next[r] = next[q];
                    break;
                }
            }
            if (next[r] == UINT32_MAX)
                next[r] = nclasses++;
        }
        i = end;
    }
    return nclasses;
}

gm_status gm_ebnf_merge_rules(gm_ebnf *g, uint32_t *merged, gm_error *err)
{
    gm_mem *m = g->mem;
    uint32_t nr = g->nrules;
    if (merged)
        *merged = 0;
    if (nr < 2)
        return GM_OK;
    merger mg = {g, NULL, NULL};
    mg.cls = gm_mem_calloc(m, nr, sizeof *mg.cls);
    mg.hash = gm_mem_reallocarray(m, NULL, g->nnodes ? g->nnodes : 1, sizeof *mg.hash);
    uint32_t *next = gm_mem_reallocarray(m, NULL, nr, sizeof *next);
    keyed *order = gm_mem_reallocarray(m, NULL, nr, sizeof *order);
    gm_status st = GM_OK;
    if (!mg.cls || !mg.hash || !next || !order) {
        st = gm_mem_fail(m, err, "merging a grammar's rules");
        goto out;
    }
    /* Every round splits classes or changes nothing: at most nr rounds. */
    for (uint32_t nclasses = 1;;) {
        uint32_t n = refine(&mg, order, next);
        memcpy(mg.cls, next, (size_t)nr * sizeof *next);
        if (n == nclasses)
            break;
        nclasses = n;
    }
    /* The first rule of each class stands for it (next[] reused). */
    memset(next, 0xff, (size_t)nr * sizeof *next);
    for (uint32_t r = 0; r < nr; r++) {
        if (next[mg.cls[r]] == UINT32_MAX)
            next[mg.cls[r]] = r;
        else if (merged)
            (*merged)++;
    }
    for (uint32_t n = 0; n < g->nnodes; n++)
        if (g->nodes[n].kind == GM_EX_REF)
            g->nodes[n].arg = next[mg.cls[g->nodes[n].arg]];
out:
    gm_mem_free(m, mg.cls);
    gm_mem_free(m, mg.hash);
    gm_mem_free(m, next);
    gm_mem_free(m, order);
    return st;
}
