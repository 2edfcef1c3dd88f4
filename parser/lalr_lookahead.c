/*
 * LALR(1) lookaheads by DeRemer and Pennello ("Efficient Computation of
 * LALR(1) Look-Ahead Sets", TOPLAS 1982).
 *
 * note [LALR lookaheads]
 * The nodes are the nonterminal transitions (p, A) of the LR(0) automaton.
 *   DR(p, A)      terminals shifted right after the transition: the terminal
 *                 transitions of goto(p, A); plus $end for (0, start), since
 *                 $accept -> start is followed by $end.
 *   (p, A) reads (r, C)      r = goto(p, A), C nullable, r has a C transition.
 *   Read = DR closed under reads.
 *   (p, A) includes (p', B)  B -> beta A gamma, gamma nullable, p' --beta--> p.
 *   Follow = Read closed under includes.
 *   (q, B -> w) lookback (p', B)  p' --w--> q.
 *   LA(q, B -> w) = union of Follow(p', B) over its lookbacks.
 * Both closures are the digraph algorithm (Tarjan's strongly connected
 * components, every node of a component gets the component's union); it is
 * run iteratively so that deep relation chains cannot overflow the C stack.
 * The result is exactly Bison's (default lr.type=lalr) lookahead sets,
 * which tests/test_lalr_bison.c checks state by state.
 */
#include <string.h>

#include "parser/lalr_internal.h"
#include "base/bitset.h"

#define INF UINT32_MAX

typedef GM_VEC(uint64_t) u64vec;

/* F[x] := F[x] ∪ F[y] for all y reachable from x (F[x] holds G(x) on entry). */
static int digraph(gm_mem *m, uint32_t n, const uint32_t *off, const uint32_t *adj, uint64_t *F,
                   uint32_t W)
{
    uint32_t *N = gm_mem_calloc(m, (size_t)n + 1, sizeof *N);
    uint32_t *S = gm_mem_calloc(m, (size_t)n + 1, sizeof *S);
    uint32_t *cs_node = gm_mem_calloc(m, (size_t)n + 1, sizeof *cs_node);
    uint32_t *cs_edge = gm_mem_calloc(m, (size_t)n + 1, sizeof *cs_edge);
    uint32_t *cs_depth = gm_mem_calloc(m, (size_t)n + 1, sizeof *cs_depth);
    int rc = -1;
    if (!N || !S || !cs_node || !cs_edge || !cs_depth)
        goto done;
    uint32_t sp = 0, csp = 0;
    for (uint32_t x0 = 0; x0 < n; x0++) {
        if (N[x0])
            continue;
        S[sp++] = x0;
        N[x0] = sp;
        cs_node[csp] = x0;
        cs_edge[csp] = off[x0];
        cs_depth[csp] = sp;
        csp++;
        while (csp) {
            uint32_t x = cs_node[csp - 1];
            if (cs_edge[csp - 1] < off[x + 1]) {
                uint32_t y = adj[cs_edge[csp - 1]++];
                if (N[y] == 0) {
                    S[sp++] = y;
                    N[y] = sp;
                    cs_node[csp] = y;
                    cs_edge[csp] = off[y];
                    cs_depth[csp] = sp;
                    csp++;
                    continue;
                }
                if (N[y] < N[x])
                    N[x] = N[y];
                gm_bitset_or(F + (size_t)x * W, F + (size_t)y * W, W);
                continue;
            }
            uint32_t d = cs_depth[csp - 1];
            if (N[x] == d) {
                uint32_t z;
                do {
                    z = S[--sp];
                    N[z] = INF;
                    if (z != x)
                        memcpy(F + (size_t)z * W, F + (size_t)x * W, (size_t)W * sizeof *F);
                } while (z != x);
            }
            csp--;
            if (csp) {
                uint32_t parent = cs_node[csp - 1];
                if (N[x] < N[parent])
                    N[parent] = N[x];
                gm_bitset_or(F + (size_t)parent * W, F + (size_t)x * W, W);
            }
        }
    }
    rc = 0;
done:
    gm_mem_free(m, N);
    gm_mem_free(m, S);
    gm_mem_free(m, cs_node);
    gm_mem_free(m, cs_edge);
    gm_mem_free(m, cs_depth);
    return rc;
}

/* Position of the transition on sym from state s, or INF. */
static uint32_t find_trans(const gm_lr0 *A, uint32_t s, gm_sym sym)
{
    uint32_t lo = A->trans_off[s], hi = A->trans_off[s + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (A->trans_sym[mid] < sym)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < A->trans_off[s + 1] && A->trans_sym[lo] == sym ? lo : INF;
}

/* Position of the first nonterminal transition of s. */
static uint32_t first_nt_trans(const gm_lalr_grammar *G, const gm_lr0 *A, uint32_t s)
{
    uint32_t lo = A->trans_off[s], hi = A->trans_off[s + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (A->trans_sym[mid] < G->nt)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct edge {
    uint32_t from, to;
} edge;

typedef GM_VEC(edge) edgevec;

/* Sorts edges into CSR adjacency (off has n + 1 entries). */
static int to_csr(gm_mem *m, uint32_t n, const edgevec *e, uint32_t **off_out, uint32_t **adj_out)
{
    uint32_t *off = gm_mem_calloc(m, (size_t)n + 2, sizeof *off);
    uint32_t *adj = gm_mem_calloc(m, e->n + 1, sizeof *adj);
    if (!off || !adj) {
        gm_mem_free(m, off);
        gm_mem_free(m, adj);
        return -1;
    }
    for (size_t i = 0; i < e->n; i++)
        off[e->v[i].from + 2]++;
    for (uint32_t x = 0; x < n; x++)
        off[x + 2] += off[x + 1];
    for (size_t i = 0; i < e->n; i++)
        adj[off[e->v[i].from + 1]++] = e->v[i].to;
    *off_out = off;
    *adj_out = adj;
    return 0;
}

gm_status gm_lalr_lookaheads(const gm_lalr_grammar *G, const gm_lr0 *A, uint64_t **la_out,
                             uint32_t *words_out, gm_error *err)
{
    gm_mem *m = G->mem;
    uint32_t W = (uint32_t)GM_BITSET_WORDS(G->nt + 1);
    uint32_t ns = A->nstates;
    uint32_t *xbase = gm_mem_calloc(m, (size_t)ns + 1, sizeof *xbase);
    uint32_t *xfirst = gm_mem_calloc(m, (size_t)ns + 1, sizeof *xfirst);
    uint32_t *xstate = NULL, *xsym = NULL, *off = NULL, *adj = NULL;
    uint64_t *F = NULL, *la = NULL;
    edgevec edges = {0}, lookback = {0};
    gm_status st = GM_OK;
    if (!xbase || !xfirst)
        goto nomem;

    /* Number the nonterminal transitions: x = xbase[p] + (position - xfirst[p]). */
    uint32_t nx = 0;
    for (uint32_t p = 0; p < ns; p++) {
        xfirst[p] = first_nt_trans(G, A, p);
        xbase[p] = nx;
        nx += A->trans_off[p + 1] - xfirst[p];
    }
    xbase[ns] = nx;
    xstate = gm_mem_calloc(m, (size_t)nx + 1, sizeof *xstate);
    xsym = gm_mem_calloc(m, (size_t)nx + 1, sizeof *xsym);
    F = gm_mem_calloc(m, ((size_t)nx + 1) * W, sizeof *F);
    la = gm_mem_calloc(m, ((size_t)A->red_off[ns] + 1) * W, sizeof *la);
    if (!xstate || !xsym || !F || !la)
        goto nomem;

    /* DR and reads. */
    for (uint32_t p = 0; p < ns; p++) {
        for (uint32_t k = xfirst[p]; k < A->trans_off[p + 1]; k++) {
            uint32_t x = xbase[p] + (k - xfirst[p]);
            uint32_t r = A->trans_to[k];
            xstate[x] = p;
            xsym[x] = A->trans_sym[k];
            uint64_t *f = F + (size_t)x * W;
            for (uint32_t j = A->trans_off[r]; j < xfirst[r]; j++)
                gm_bitset_set(f, A->trans_sym[j]);
            if (p == 0 && A->trans_sym[k] == G->aug_rhs)
                gm_bitset_set(f, G->nt);
            for (uint32_t j = xfirst[r]; j < A->trans_off[r + 1]; j++) {
                if (G->nullable[A->trans_sym[j] - G->nt]) {
                    edge e = {x, xbase[r] + (j - xfirst[r])};
                    if (gm_vec_push(m, &edges, e))
                        goto nomem;
                }
            }
        }
    }
    if (to_csr(m, nx, &edges, &off, &adj) || digraph(m, nx, off, adj, F, W))
        goto nomem;
    gm_mem_free(m, off);
    gm_mem_free(m, adj);
    off = adj = NULL;

    /* includes and lookback, walking every production of B from p'. */
    edges.n = 0;
    for (uint32_t x = 0; x < nx; x++) {
        uint32_t a = xsym[x] - G->nt;
        for (uint32_t k = G->by_lhs_off[a]; k < G->by_lhs_off[a + 1]; k++) {
            uint32_t q = G->by_lhs[k];
            uint32_t s = xstate[x];
            uint32_t len = G->plen[q], nf = G->nullable_from[q];
            for (uint32_t i = 0; i < len; i++) {
                gm_sym X = G->prhs[q][i];
                uint32_t t = find_trans(A, s, X);
                if (t == INF) {
                    st = gm_error_set(err, GM_ERR_ARGUMENT, "LALR(1) construction: internal error "
                                                            "(missing LR(0) transition)");
                    goto fail;
                }
                if (X >= G->nt && i + 1 >= nf) {
                    edge e = {xbase[s] + (t - xfirst[s]), x};
                    if (gm_vec_push(m, &edges, e))
                        goto nomem;
                }
                s = A->trans_to[t];
            }
            /* (s, q) lookback x: find q among s's reductions. */
            uint32_t lo = A->red_off[s], hi = A->red_off[s + 1];
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (A->red_prod[mid] < q)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == A->red_off[s + 1] || A->red_prod[lo] != q) {
                st = gm_error_set(err, GM_ERR_ARGUMENT,
                                  "LALR(1) construction: internal error (missing reduction)");
                goto fail;
            }
            edge e = {lo, x};
            if (gm_vec_push(m, &lookback, e))
                goto nomem;
        }
    }
    if (to_csr(m, nx, &edges, &off, &adj) || digraph(m, nx, off, adj, F, W))
        goto nomem;

    for (size_t i = 0; i < lookback.n; i++)
        gm_bitset_or(la + (size_t)lookback.v[i].from * W, F + (size_t)lookback.v[i].to * W, W);
    *la_out = la;
    *words_out = W;
    la = NULL;
    goto done;
nomem:
    st = gm_mem_fail(m, err, "LALR(1) lookaheads");
fail:
done:
    gm_mem_free(m, xbase);
    gm_mem_free(m, xfirst);
    gm_mem_free(m, xstate);
    gm_mem_free(m, xsym);
    gm_mem_free(m, off);
    gm_mem_free(m, adj);
    gm_mem_free(m, F);
    gm_mem_free(m, la);
    gm_vec_free(m, &edges);
    gm_vec_free(m, &lookback);
    return st;
}
