/*
 * gm_lalr_build: cfg -> LR(0) automaton -> LALR(1) lookaheads -> the dense
 * action and goto tables of parser/lr.h, with conflicts handled by
 * parser/lr_conflicts.c. Owns gm_lr_table's memory.
 *
 * note [dense tables]
 * The action table is one uint32_t per (state, terminal) and the goto
 * table one per (state, nonterminal). Row displacement would shrink them
 * several times, but every lookup would then compare a check entry, and
 * gm_lr_can_feed runs once per candidate terminal sequence per mask: the
 * dense rows stay until a serialized form needs the space (it can compress
 * independently of the in-memory layout).
 */
#include <string.h>

#include "parser/lalr_internal.h"
#include "base/bitset.h"

#define MAX_STATES_CAP ((1u << 30) - 2)

void gm_lr_table_destroy(gm_lr_table *t)
{
    if (!t)
        return;
    gm_mem *m = t->mem;
    gm_mem_free(m, t->prod_lhs);
    gm_mem_free(m, t->prod_len);
    gm_mem_free(m, t->action);
    gm_mem_free(m, t->go);
    gm_mem_free(m, t->accessing);
    gm_mem_free(m, t->kernel_off);
    gm_mem_free(m, t->kernel);
    gm_mem_free(m, t->conflicts);
    gm_mem_free(m, t->unit_row);
    gm_mem_free(m, t->unit_go);
    gm_mem_free(m, t);
}

/* The unit production a state reduces by on term, or UINT32_MAX. */
static uint32_t unit_reduction(const gm_lr_table *t, uint32_t s, uint32_t term)
{
    gm_lr_action a = gm_lr_action_of(t, s, term);
    if (GM_LR_KIND(a) != GM_LR_REDUCE || t->prod_len[GM_LR_ARG(a)] != 1)
        return UINT32_MAX;
    return GM_LR_ARG(a);
}

/* Whether goto cell c enters a state with a unit reduction (a row of unit_go). */
static bool has_chain(const gm_lr_table *t, size_t c)
{
    uint32_t g = t->go[c];
    if (g == UINT32_MAX || g >= t->nstates)
        return false;
    for (uint32_t x = 0; x < t->nterms; x++)
        if (unit_reduction(t, g, x) != UINT32_MAX)
            return true;
    return false;
}

/* The state goto cell c reaches on lookahead x once its unit reductions are done
   (seen: nnonterms bytes of scratch). */
static uint32_t chain_end(const gm_lr_table *t, size_t c, uint32_t x, uint8_t *seen)
{
    uint32_t p = (uint32_t)(c / t->nnonterms), a = (uint32_t)(c % t->nnonterms);
    uint32_t s = t->go[c], u;
    memset(seen, 0, t->nnonterms);
    seen[a] = 1;
    while ((u = unit_reduction(t, s, x)) != UINT32_MAX) {
        uint32_t b = t->prod_lhs[u], g = gm_lr_goto_of(t, p, b);
        if (b >= t->nnonterms || seen[b] || g == UINT32_MAX || g >= t->nstates)
            return t->go[c]; /* a cycle (or a broken table): reduce one by one */
        seen[b] = 1;
        s = g;
    }
    return s;
}

gm_status gm_lr_unit_chains_check(const gm_lr_table *t, const char **why, gm_error *err)
{
    *why = NULL;
    size_t ncells = (size_t)t->nstates * t->nnonterms;
    uint8_t *seen = gm_mem_calloc(t->mem, t->nnonterms ? t->nnonterms : 1, 1);
    if (!seen)
        return gm_mem_fail(t->mem, err, "checking loaded LR unit chains");
    uint32_t rows = 0;
    for (size_t c = 0; c < ncells && !*why; c++) {
        if (!has_chain(t, c)) {
            if (t->unit_row[c] != UINT32_MAX)
                *why = "LR unit-chain row where the goto has no unit reduction";
            continue;
        }
        if (t->unit_row[c] != rows || rows >= t->nunit_rows) {
            *why = "LR unit-chain rows out of order or missing";
            continue;
        }
        const uint32_t *row = t->unit_go + (size_t)rows++ * t->nterms;
        for (uint32_t x = 0; x < t->nterms && !*why; x++)
            if (row[x] != chain_end(t, c, x, seen))
                *why = "LR unit chain does not end where the tables say";
    }
    if (!*why && rows != t->nunit_rows)
        *why = "more LR unit-chain rows than goto cells with unit reductions";
    gm_mem_free(t->mem, seen);
    return *why ? GM_ERR_FORMAT : GM_OK;
}

gm_status gm_lr_unit_chains(gm_lr_table *t, gm_error *err)
{
    gm_mem *m = t->mem;
    size_t ncells = (size_t)t->nstates * t->nnonterms;
    gm_mem_free(m, t->unit_row);
    gm_mem_free(m, t->unit_go);
    t->unit_go = NULL;
    t->nunit_rows = 0;
    t->unit_row = gm_mem_reallocarray(m, NULL, ncells ? ncells : 1, sizeof *t->unit_row);
    uint8_t *seen = gm_mem_calloc(m, t->nnonterms ? t->nnonterms : 1, 1);
    if (!t->unit_row || !seen)
        goto nomem;
    /* Which goto targets have a unit reduction at all. */
    size_t rows = 0;
    for (size_t c = 0; c < ncells; c++)
        t->unit_row[c] = has_chain(t, c) ? (uint32_t)rows++ : UINT32_MAX;
    if (rows) {
        t->unit_go = gm_mem_reallocarray(m, NULL, rows * t->nterms, sizeof *t->unit_go);
        if (!t->unit_go)
            goto nomem;
    }
    t->nunit_rows = (uint32_t)rows;
    for (size_t c = 0; c < ncells; c++) {
        if (t->unit_row[c] == UINT32_MAX)
            continue;
        uint32_t *row = t->unit_go + (size_t)t->unit_row[c] * t->nterms;
        for (uint32_t x = 0; x < t->nterms; x++)
            row[x] = chain_end(t, c, x, seen);
    }
    gm_mem_free(m, seen);
    return GM_OK;
nomem:
    gm_mem_free(m, seen);
    gm_mem_free(m, t->unit_row);
    t->unit_row = NULL;
    return gm_mem_fail(m, err, "the LR unit-chain table");
}

static gm_lr_table *table_alloc(gm_mem *m, const gm_lalr_grammar *G, const gm_lr0 *A)
{
    gm_lr_table *t = gm_mem_calloc(m, 1, sizeof *t);
    if (!t)
        return NULL;
    t->mem = m;
    t->nstates = A->nstates;
    t->nterms = G->nt + 1;
    t->eof = G->nt;
    t->nnonterms = G->nn;
    t->nprods = G->nprods;
    t->start = G->aug_rhs - G->nt;
    t->accept_state = A->accept_state;
    size_t nk = A->kernels.count ? A->kernels.offsets[A->kernels.count] / sizeof(uint32_t) : 0;
    t->prod_lhs = gm_mem_calloc(m, (size_t)G->nprods + 1, sizeof *t->prod_lhs);
    t->prod_len = gm_mem_calloc(m, (size_t)G->nprods + 1, sizeof *t->prod_len);
    t->action = gm_mem_calloc(m, (size_t)t->nstates * t->nterms, sizeof *t->action);
    t->go = gm_mem_reallocarray(m, NULL, (size_t)t->nstates * t->nnonterms + 1, sizeof *t->go);
    t->accessing = gm_mem_calloc(m, t->nstates, sizeof *t->accessing);
    t->kernel_off = gm_mem_calloc(m, (size_t)t->nstates + 1, sizeof *t->kernel_off);
    t->kernel = gm_mem_calloc(m, nk + 1, sizeof *t->kernel);
    if (!t->prod_lhs || !t->prod_len || !t->action || !t->go || !t->accessing || !t->kernel_off ||
        !t->kernel) {
        gm_lr_table_destroy(t);
        return NULL;
    }
    memset(t->go, 0xff, ((size_t)t->nstates * t->nnonterms + 1) * sizeof *t->go);
    for (uint32_t p = 0; p < G->nprods; p++) {
        t->prod_lhs[p] = G->cfg->prods[p].lhs - G->nt;
        t->prod_len[p] = G->plen[p];
    }
    uint32_t at = 0;
    for (uint32_t s = 0; s < A->nstates; s++) {
        uint32_t n;
        const uint32_t *k = gm_lr0_kernel(A, s, &n);
        t->kernel_off[s] = at;
        for (uint32_t i = 0; i < n; i++) {
            t->kernel[at].prod = G->item_prod[k[i]];
            t->kernel[at].dot = gm_lalr_item_dot(G, k[i]);
            at++;
        }
    }
    t->kernel_off[A->nstates] = at;
    return t;
}

/* Shifts, gotos and reductions of every state; cells with several actions go to c. */
static void fill(const gm_lalr_grammar *G, const gm_lr0 *A, const uint64_t *la, uint32_t W,
                 gm_lr_table *t, gm_lalr_conflicts *c, uint64_t *multi, uint32_t *reds)
{
    uint32_t nterms = t->nterms;
    t->accessing[0] = UINT32_MAX;
    for (uint32_t s = 0; s < A->nstates; s++) {
        gm_lr_action *row = t->action + (size_t)s * nterms;
        for (uint32_t k = A->trans_off[s]; k < A->trans_off[s + 1]; k++) {
            gm_sym x = A->trans_sym[k];
            uint32_t to = A->trans_to[k];
            t->accessing[to] = x;
            if (x < G->nt)
                row[x] = GM_LR_SHIFT | to << 2;
            else
                t->go[(size_t)s * t->nnonterms + (x - G->nt)] = to;
        }
        if (s == A->accept_state)
            row[t->eof] = GM_LR_ACCEPT;
        memset(multi, 0, (size_t)W * sizeof *multi);
        bool any = false;
        for (uint32_t r = A->red_off[s]; r < A->red_off[s + 1]; r++) {
            const uint64_t *set = la + (size_t)r * W;
            gm_lr_action red = GM_LR_REDUCE | A->red_prod[r] << 2;
            for (size_t term = gm_bitset_next(set, nterms, 0); term < nterms;
                 term = gm_bitset_next(set, nterms, term + 1)) {
                if (row[term] == GM_LR_ERROR) {
                    row[term] = red;
                } else {
                    gm_bitset_set(multi, term);
                    any = true;
                }
            }
        }
        if (!any)
            continue;
        for (size_t term = gm_bitset_next(multi, nterms, 0); term < nterms;
             term = gm_bitset_next(multi, nterms, term + 1)) {
            gm_lalr_cell cell = {s, (uint32_t)term, GM_LR_ERROR, 0, reds};
            if (GM_LR_KIND(row[term]) == GM_LR_SHIFT || GM_LR_KIND(row[term]) == GM_LR_ACCEPT)
                cell.shift = row[term];
            for (uint32_t r = A->red_off[s]; r < A->red_off[s + 1]; r++)
                if (gm_bitset_get(la + (size_t)r * W, term))
                    reds[cell.nred++] = A->red_prod[r];
            row[term] = gm_lalr_conflict_cell(c, &cell);
        }
    }
}

gm_status gm_lalr_build(gm_mem *m, const gm_cfg *g, const gm_lalr_options *opts, gm_lr_table **out,
                        gm_error *err)
{
    if (out)
        *out = NULL;
    if (!m || !g || !out)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lalr_build: NULL argument");
    gm_lalr_options none;
    if (!opts) {
        memset(&none, 0, sizeof none);
        opts = &none;
    }
    if (opts->conflicts != GM_CONFLICTS_ERROR && opts->conflicts != GM_CONFLICTS_LARK &&
        opts->conflicts != GM_CONFLICTS_BISON)
        return gm_error_set(err, GM_ERR_ARGUMENT, "gm_lalr_build: unknown conflict mode %d",
                            (int)opts->conflicts);
    gm_limits defaults;
    gm_limits_init_defaults(&defaults);
    uint32_t max_states = opts->limits.max_lr_states ? opts->limits.max_lr_states : defaults.max_lr_states;
    if (max_states > MAX_STATES_CAP)
        max_states = MAX_STATES_CAP;

    gm_lalr_grammar G;
    gm_lr0 A;
    memset(&A, 0, sizeof A);
    gm_lalr_conflicts c;
    bool have_c = false;
    uint64_t *la = NULL, *multi = NULL;
    uint32_t *reds = NULL;
    gm_lr_table *t = NULL;
    uint32_t W = 0;
    gm_status st = gm_lalr_grammar_init(m, g, &G, err);
    if (st)
        return st;
    if ((st = gm_lr0_build(&G, max_states, &A, err)))
        goto done;
    if ((st = gm_lalr_lookaheads(&G, &A, &la, &W, err)))
        goto done;
    t = table_alloc(m, &G, &A);
    multi = gm_mem_calloc(m, W, sizeof *multi);
    uint32_t maxred = 1;
    for (uint32_t s = 0; s < A.nstates; s++)
        if (A.red_off[s + 1] - A.red_off[s] > maxred)
            maxred = A.red_off[s + 1] - A.red_off[s];
    reds = gm_mem_calloc(m, maxred, sizeof *reds);
    if (!t || !multi || !reds) {
        st = gm_mem_fail(m, err, "the LALR(1) tables");
        goto done;
    }
    gm_lalr_conflicts_init(&c, &G, &A, opts);
    have_c = true;
    fill(&G, &A, la, W, t, &c, multi, reds);
    if (c.failed) {
        st = gm_mem_fail(m, err, "the LALR(1) conflict report");
        goto done;
    }
    if (c.nerrors_sr + c.nerrors_rr) {
        st = gm_lalr_conflicts_error(&c, err);
        goto done;
    }
    if (c.resolved.n) {
        t->conflicts = c.resolved.v;
        t->nconflicts = (uint32_t)c.resolved.n;
        c.resolved.v = NULL;
        c.resolved.n = c.resolved.cap = 0;
        /* note [reduction loops] A table with resolved conflicts may reduce
           forever on some input (an ambiguous grammar such as A: B | "x",
           B: A); the runtime bounds reduction runs only for such tables. */
        t->loop_guard = t->nstates + 1;
    }
    st = gm_lr_unit_chains(t, err);
    if (st != GM_OK)
        goto done;
    *out = t;
    t = NULL;
done:
    if (have_c)
        gm_lalr_conflicts_free(&c);
    gm_lr_table_destroy(t);
    gm_mem_free(m, la);
    gm_mem_free(m, multi);
    gm_mem_free(m, reds);
    gm_lr0_free(&A);
    gm_lalr_grammar_free(&G);
    return st;
}
