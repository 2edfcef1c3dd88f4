/*
 * The LR(0) automaton: states are kernel item sets (interned, so equal
 * kernels are one state), closed on demand while the state is expanded.
 * Also records, per state, the productions completed in it (kernel items
 * with the dot at the end, and empty productions of the closure).
 */
#include <stdlib.h>
#include <string.h>

#include "parser/lalr_internal.h"

typedef GM_VEC(uint32_t) u32vec;

typedef struct lr0_work {
    uint32_t *mark;          /* [nn] stamp: nonterminal already in the closure of this state */
    uint32_t *closure;       /* [nn] nonterminals of the closure, in discovery order */
    uint64_t *pairs;         /* (symbol << 32 | advanced item) of the state */
    size_t npairs, cap_pairs;
    uint32_t *count;         /* [nsym + 1] bucket sizes, then bucket starts */
    uint32_t *syms;          /* [nsym] symbols with a transition, ascending */
    uint32_t *sorted;        /* advanced items grouped by symbol */
    size_t cap_sorted;
    u32vec reds;             /* completed productions of the state */
} lr0_work;

static void sort_u32(uint32_t *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = a[i];
        size_t j = i;
        while (j > 0 && a[j - 1] > x) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void sort_any(uint32_t *a, size_t n)
{
    if (n < 32)
        sort_u32(a, n);
    else
        qsort(a, n, sizeof *a, cmp_u32);
}

static int push_pair(gm_mem *m, lr0_work *w, uint32_t sym, uint32_t item)
{
    if (w->npairs == w->cap_pairs &&
        gm_vec_grow_(m, (void **)&w->pairs, &w->cap_pairs, w->npairs + 1, sizeof *w->pairs))
        return -1;
    w->pairs[w->npairs++] = (uint64_t)sym << 32 | item;
    return 0;
}

/* Closure of state s's kernel: the successor pairs and the completed productions. */
static int expand(const gm_lalr_grammar *G, gm_mem *m, lr0_work *w, uint32_t stamp,
                  const uint32_t *kernel, uint32_t nk, uint32_t *accept)
{
    uint32_t nclos = 0;
    w->npairs = 0;
    w->reds.n = 0;
    for (uint32_t k = 0; k < nk; k++) {
        uint32_t it = kernel[k];
        gm_sym x = G->item_next[it];
        if (x == GM_NOSYM) {
            uint32_t p = G->item_prod[it];
            if (p == G->nprods)
                *accept = 1;
            else if (gm_vec_push(m, &w->reds, p))
                return -1;
            continue;
        }
        if (push_pair(m, w, x, it + 1))
            return -1;
        if (x >= G->nt && w->mark[x - G->nt] != stamp) {
            w->mark[x - G->nt] = stamp;
            w->closure[nclos++] = x - G->nt;
        }
    }
    for (uint32_t c = 0; c < nclos; c++) {
        uint32_t a = w->closure[c];
        for (uint32_t k = G->by_lhs_off[a]; k < G->by_lhs_off[a + 1]; k++) {
            uint32_t p = G->by_lhs[k];
            if (G->plen[p] == 0) {
                if (gm_vec_push(m, &w->reds, p))
                    return -1;
                continue;
            }
            gm_sym x = G->prhs[p][0];
            if (push_pair(m, w, x, G->item_base[p] + 1))
                return -1;
            if (x >= G->nt && w->mark[x - G->nt] != stamp) {
                w->mark[x - G->nt] = stamp;
                w->closure[nclos++] = x - G->nt;
            }
        }
    }
    sort_any(w->reds.v, w->reds.n);
    return 0;
}

gm_status gm_lr0_build(const gm_lalr_grammar *G, uint32_t max_states, gm_lr0 *A, gm_error *err)
{
    gm_mem *m = G->mem;
    memset(A, 0, sizeof *A);
    A->mem = m;
    A->accept_state = UINT32_MAX;
    gm_intern_init(&A->kernels, m);
    lr0_work w;
    memset(&w, 0, sizeof w);
    u32vec toff = {0}, tsym = {0}, tto = {0}, roff = {0}, rprod = {0};
    gm_status st = GM_OK;
    w.mark = gm_mem_calloc(m, (size_t)G->nn + 1, sizeof *w.mark);
    w.closure = gm_mem_calloc(m, (size_t)G->nn + 1, sizeof *w.closure);
    w.count = gm_mem_calloc(m, (size_t)G->nsym + 1, sizeof *w.count);
    w.syms = gm_mem_calloc(m, (size_t)G->nsym + 1, sizeof *w.syms);
    if (!w.mark || !w.closure || !w.count || !w.syms)
        goto nomem;

    uint32_t start_item = G->item_base[G->nprods];
    uint32_t id;
    if (gm_intern_put(&A->kernels, &start_item, sizeof start_item, &id, NULL))
        goto nomem;
    A->nstates = 1;
    if (gm_vec_push(m, &toff, 0) || gm_vec_push(m, &roff, 0))
        goto nomem;

    for (uint32_t s = 0; s < A->nstates; s++) {
        uint32_t nk;
        const uint32_t *kernel = gm_lr0_kernel(A, s, &nk);
        uint32_t accept = 0;
        if (expand(G, m, &w, s + 1, kernel, nk, &accept))
            goto nomem;
        if (accept)
            A->accept_state = s;
        for (size_t r = 0; r < w.reds.n; r++)
            if (gm_vec_push(m, &rprod, w.reds.v[r]))
                goto nomem;
        if (gm_vec_push(m, &roff, (uint32_t)rprod.n))
            goto nomem;

        /* Group the advanced items by symbol (counting sort), symbols ascending. */
        uint32_t nsyms = 0;
        for (size_t i = 0; i < w.npairs; i++) {
            uint32_t x = (uint32_t)(w.pairs[i] >> 32);
            if (w.count[x]++ == 0)
                w.syms[nsyms++] = x;
        }
        sort_any(w.syms, nsyms);
        if (w.npairs > w.cap_sorted &&
            gm_vec_grow_(m, (void **)&w.sorted, &w.cap_sorted, w.npairs, sizeof *w.sorted))
            goto nomem;
        uint32_t at = 0;
        for (uint32_t k = 0; k < nsyms; k++) {
            uint32_t x = w.syms[k], c = w.count[x];
            w.count[x] = at;
            at += c;
        }
        for (size_t i = 0; i < w.npairs; i++) {
            uint32_t x = (uint32_t)(w.pairs[i] >> 32);
            w.sorted[w.count[x]++] = (uint32_t)w.pairs[i];
        }
        /* kernel is invalidated by interning below. */
        uint32_t begin = 0;
        for (uint32_t k = 0; k < nsyms; k++) {
            uint32_t x = w.syms[k], end = w.count[x];
            w.count[x] = 0;
            sort_any(w.sorted + begin, end - begin);
            int added;
            if (gm_intern_put(&A->kernels, w.sorted + begin, (size_t)(end - begin) * sizeof(uint32_t),
                              &id, &added))
                goto nomem;
            if (added) {
                if (A->nstates >= max_states) {
                    st = gm_error_set(err, GM_ERR_LIMIT,
                                      "LALR(1) construction: more than %u LR states (gm_limits.max_lr_states)",
                                      max_states);
                    goto fail;
                }
                A->nstates++;
            }
            if (gm_vec_push(m, &tsym, x) || gm_vec_push(m, &tto, id))
                goto nomem;
            begin = end;
        }
        if (gm_vec_push(m, &toff, (uint32_t)tsym.n))
            goto nomem;
    }
    A->trans_off = toff.v;
    A->trans_sym = tsym.v;
    A->trans_to = tto.v;
    A->red_off = roff.v;
    A->red_prod = rprod.v;
    /* Keep empty arrays non-NULL so that callers index them freely. */
    if (!A->trans_sym || !A->trans_to || !A->red_prod) {
        if (!A->trans_sym && !(A->trans_sym = gm_mem_alloc(m, sizeof(uint32_t))))
            goto nomem_kept;
        if (!A->trans_to && !(A->trans_to = gm_mem_alloc(m, sizeof(uint32_t))))
            goto nomem_kept;
        if (!A->red_prod && !(A->red_prod = gm_mem_alloc(m, sizeof(uint32_t))))
            goto nomem_kept;
    }
    goto done;
nomem_kept:
    st = gm_mem_fail(m, err, "the LR(0) automaton");
    gm_lr0_free(A);
    goto done;
nomem:
    st = gm_mem_fail(m, err, "the LR(0) automaton");
fail:
    gm_vec_free(m, &toff);
    gm_vec_free(m, &tsym);
    gm_vec_free(m, &tto);
    gm_vec_free(m, &roff);
    gm_vec_free(m, &rprod);
    gm_lr0_free(A);
done:
    gm_mem_free(m, w.mark);
    gm_mem_free(m, w.closure);
    gm_mem_free(m, w.count);
    gm_mem_free(m, w.syms);
    gm_mem_free(m, w.pairs);
    gm_mem_free(m, w.sorted);
    gm_vec_free(m, &w.reds);
    return st;
}

void gm_lr0_free(gm_lr0 *A)
{
    gm_mem *m = A->mem;
    if (!m)
        return;
    gm_intern_free(&A->kernels);
    gm_mem_free(m, A->trans_off);
    gm_mem_free(m, A->trans_sym);
    gm_mem_free(m, A->trans_to);
    gm_mem_free(m, A->red_off);
    gm_mem_free(m, A->red_prod);
    memset(A, 0, sizeof *A);
}
