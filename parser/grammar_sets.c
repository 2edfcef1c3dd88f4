/*
 * The grammar as the LALR(1) construction sees it: the cfg checked for API
 * misuse, augmented with $accept -> start, productions indexed by
 * left-hand side, LR(0) items numbered, and the nullable nonterminals.
 */
#include <string.h>

#include "parser/lalr_internal.h"

/* Arguments of actions are 30 bits wide (gm_lr_action). */
#define MAX_ARG ((1u << 30) - 2)

static gm_status check_cfg(const gm_cfg *g, gm_error *err)
{
    if (!g->nnonterminals)
        return gm_error_set(err, GM_ERR_ARGUMENT, "LALR(1) construction: the grammar has no nonterminal");
    if (g->nterminals > MAX_ARG || g->nnonterminals > MAX_ARG ||
        g->nterminals + g->nnonterminals > MAX_ARG || g->nprods > MAX_ARG)
        return gm_error_set(err, GM_ERR_LIMIT,
                            "LALR(1) construction: the grammar is too large (%u terminals, %u "
                            "nonterminals, %u productions)",
                            g->nterminals, g->nnonterminals, g->nprods);
    uint32_t nsym = g->nterminals + g->nnonterminals;
    if (g->start < g->nterminals || g->start >= nsym)
        return gm_error_set(err, GM_ERR_ARGUMENT, "LALR(1) construction: start symbol %u is not a nonterminal",
                            g->start);
    if (g->nprods && (!g->prods || (g->nrhs && !g->rhs)))
        return gm_error_set(err, GM_ERR_ARGUMENT, "LALR(1) construction: the grammar has no production array");
    for (uint32_t p = 0; p < g->nprods; p++) {
        const gm_production *pr = &g->prods[p];
        if (pr->lhs < g->nterminals || pr->lhs >= nsym)
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "LALR(1) construction: production %u has left-hand side %u, not a nonterminal",
                                p, pr->lhs);
        if (pr->rhs > g->nrhs || pr->len > g->nrhs - pr->rhs)
            return gm_error_set(err, GM_ERR_ARGUMENT,
                                "LALR(1) construction: production %u has its right-hand side out of range", p);
        for (uint32_t i = 0; i < pr->len; i++)
            if (g->rhs[pr->rhs + i] >= nsym)
                return gm_error_set(err, GM_ERR_ARGUMENT,
                                    "LALR(1) construction: production %u uses symbol %u, out of range", p,
                                    g->rhs[pr->rhs + i]);
    }
    return GM_OK;
}

/* note [nullable]
 * The usual linear worklist: each production counts the right-hand-side
 * occurrences not yet known nullable (productions with a terminal never
 * count down to zero); when a nonterminal becomes nullable, every
 * occurrence of it decrements its production's count. */
static int compute_nullable(gm_lalr_grammar *G)
{
    gm_mem *m = G->mem;
    uint32_t nn = G->nn, np = G->nprods;
    uint32_t *count = gm_mem_calloc(m, (size_t)np + 1, sizeof *count);
    uint32_t *occ_off = gm_mem_calloc(m, (size_t)nn + 1, sizeof *occ_off);
    uint32_t *queue = gm_mem_calloc(m, (size_t)nn + 1, sizeof *queue);
    uint32_t *occ = NULL;
    int rc = -1;
    if (!count || !occ_off || !queue)
        goto done;
    size_t nocc = 0;
    for (uint32_t p = 0; p < np; p++) {
        for (uint32_t i = 0; i < G->plen[p] && count[p] != UINT32_MAX; i++)
            count[p] = G->prhs[p][i] < G->nt ? UINT32_MAX : count[p] + 1;
        if (count[p] == UINT32_MAX)
            continue;
        for (uint32_t i = 0; i < G->plen[p]; i++)
            occ_off[G->prhs[p][i] - G->nt + 1]++;
        nocc += G->plen[p];
    }
    for (uint32_t a = 0; a < nn; a++)
        occ_off[a + 1] += occ_off[a];
    occ = gm_mem_calloc(m, nocc + 1, sizeof *occ);
    if (!occ)
        goto done;
    for (uint32_t p = 0; p < np; p++) {
        if (count[p] == UINT32_MAX)
            continue;
        for (uint32_t i = 0; i < G->plen[p]; i++) {
            uint32_t a = G->prhs[p][i] - G->nt;
            occ[occ_off[a]++] = p;
        }
    }
    for (uint32_t a = nn; a > 0; a--)
        occ_off[a] = occ_off[a - 1];
    occ_off[0] = 0;
    uint32_t qn = 0;
    for (uint32_t p = 0; p < np; p++) {
        uint32_t a = G->cfg->prods[p].lhs - G->nt;
        if (count[p] == 0 && !G->nullable[a]) {
            G->nullable[a] = true;
            queue[qn++] = a;
        }
    }
    for (uint32_t qi = 0; qi < qn; qi++) {
        uint32_t b = queue[qi];
        for (uint32_t k = occ_off[b]; k < occ_off[b + 1]; k++) {
            uint32_t p = occ[k];
            if (--count[p] == 0) {
                uint32_t a = G->cfg->prods[p].lhs - G->nt;
                if (!G->nullable[a]) {
                    G->nullable[a] = true;
                    queue[qn++] = a;
                }
            }
        }
    }
    for (uint32_t p = 0; p <= np; p++) {
        uint32_t k = G->plen[p];
        while (k > 0 && G->prhs[p][k - 1] >= G->nt && G->nullable[G->prhs[p][k - 1] - G->nt])
            k--;
        G->nullable_from[p] = k;
    }
    rc = 0;
done:
    gm_mem_free(m, count);
    gm_mem_free(m, occ_off);
    gm_mem_free(m, queue);
    gm_mem_free(m, occ);
    return rc;
}

gm_status gm_lalr_grammar_init(gm_mem *m, const gm_cfg *g, gm_lalr_grammar *G, gm_error *err)
{
    memset(G, 0, sizeof *G);
    gm_status st = check_cfg(g, err);
    if (st)
        return st;
    G->cfg = g;
    G->mem = m;
    G->nt = g->nterminals;
    G->nn = g->nnonterminals;
    G->nsym = G->nt + G->nn;
    G->nprods = g->nprods;
    G->aug_rhs = g->start;
    uint32_t np = G->nprods;
    uint64_t nitems = 0;
    for (uint32_t p = 0; p < np; p++)
        nitems += (uint64_t)g->prods[p].len + 1;
    nitems += 2;
    if (nitems > MAX_ARG)
        return gm_error_set(err, GM_ERR_LIMIT, "LALR(1) construction: too many LR(0) items (%llu)",
                            (unsigned long long)nitems);
    G->nitems = (uint32_t)nitems;
    G->plen = gm_mem_calloc(m, (size_t)np + 1, sizeof *G->plen);
    G->prhs = gm_mem_calloc(m, (size_t)np + 1, sizeof *G->prhs);
    G->by_lhs_off = gm_mem_calloc(m, (size_t)G->nn + 1, sizeof *G->by_lhs_off);
    G->by_lhs = gm_mem_calloc(m, (size_t)np + 1, sizeof *G->by_lhs);
    G->item_base = gm_mem_calloc(m, (size_t)np + 2, sizeof *G->item_base);
    G->item_prod = gm_mem_calloc(m, G->nitems, sizeof *G->item_prod);
    G->item_next = gm_mem_calloc(m, G->nitems, sizeof *G->item_next);
    G->nullable = gm_mem_calloc(m, (size_t)G->nn + 1, sizeof *G->nullable);
    G->nullable_from = gm_mem_calloc(m, (size_t)np + 1, sizeof *G->nullable_from);
    if (!G->plen || !G->prhs || !G->by_lhs_off || !G->by_lhs || !G->item_base || !G->item_prod ||
        !G->item_next || !G->nullable || !G->nullable_from)
        goto nomem;
    for (uint32_t p = 0; p < np; p++) {
        G->plen[p] = g->prods[p].len;
        G->prhs[p] = g->rhs + g->prods[p].rhs;
        G->by_lhs_off[g->prods[p].lhs - G->nt + 1]++;
    }
    G->plen[np] = 1;
    G->prhs[np] = &G->aug_rhs;
    for (uint32_t a = 0; a < G->nn; a++)
        G->by_lhs_off[a + 1] += G->by_lhs_off[a];
    {
        uint32_t *cursor = gm_mem_calloc(m, (size_t)G->nn + 1, sizeof *cursor);
        if (!cursor)
            goto nomem;
        memcpy(cursor, G->by_lhs_off, (size_t)G->nn * sizeof *cursor);
        for (uint32_t p = 0; p < np; p++)
            G->by_lhs[cursor[g->prods[p].lhs - G->nt]++] = p;
        gm_mem_free(m, cursor);
    }
    uint32_t item = 0;
    for (uint32_t p = 0; p <= np; p++) {
        G->item_base[p] = item;
        for (uint32_t d = 0; d <= G->plen[p]; d++) {
            G->item_prod[item] = p;
            G->item_next[item] = d < G->plen[p] ? G->prhs[p][d] : GM_NOSYM;
            item++;
        }
    }
    G->item_base[np + 1] = item;
    if (compute_nullable(G))
        goto nomem;
    return GM_OK;
nomem:
    st = gm_mem_fail(m, err, "LALR(1) construction: grammar tables");
    gm_lalr_grammar_free(G);
    return st;
}

void gm_lalr_grammar_free(gm_lalr_grammar *G)
{
    gm_mem *m = G->mem;
    if (!m)
        return;
    gm_mem_free(m, G->plen);
    gm_mem_free(m, G->prhs);
    gm_mem_free(m, G->by_lhs_off);
    gm_mem_free(m, G->by_lhs);
    gm_mem_free(m, G->item_base);
    gm_mem_free(m, G->item_prod);
    gm_mem_free(m, G->item_next);
    gm_mem_free(m, G->nullable);
    gm_mem_free(m, G->nullable_from);
    memset(G, 0, sizeof *G);
}
