/*
 * Moore's DFA minimization: the slow, obviously correct reference that the
 * tests compare Hopcroft's algorithm (minimize.c) with. Each round gives
 * every state the signature (its block, the blocks of its successors on
 * every class) and renumbers blocks by signature; it stops when a round
 * splits nothing. O(n^2 k) in the worst case.
 */
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "base/error.h"
#include "base/hash.h"

gm_status gm_dfa_minimize_ref(const gm_dfa *in, bool start_apart, gm_dfa *out, gm_error *err)
{
    gm_mem *m = in->mem;
    uint32_t n = in->nstates + 1, k = in->nclasses, sink = in->nstates;
    uint32_t *blk = gm_mem_reallocarray(m, NULL, n, sizeof *blk);
    uint32_t *nblk = gm_mem_reallocarray(m, NULL, n, sizeof *nblk);
    uint32_t *sig = gm_mem_reallocarray(m, NULL, (size_t)k + 1, sizeof *sig);
    gm_status st = GM_OK;
    gm_intern tab;
    gm_intern_init(&tab, m);
    if (!blk || !nblk || !sig)
        goto nomem;

    /* Round 0: blocks by label (the start alone under start_apart). */
    uint32_t count = 0;
    for (uint32_t s = 0; s < n; s++) {
        uint32_t key[2] = {s == sink ? GM_LEX_NONE : in->label[s], start_apart && s == 0};
        int added;
        if (gm_intern_put(&tab, key, sizeof key, &blk[s], &added))
            goto nomem;
    }
    count = tab.count;
    for (;;) {
        gm_intern_free(&tab);
        gm_intern_init(&tab, m);
        for (uint32_t s = 0; s < n; s++) {
            sig[0] = blk[s];
            for (uint32_t c = 0; c < k; c++) {
                uint32_t t = s == sink ? sink : in->next[(size_t)s * k + c];
                sig[c + 1] = blk[t == GM_LEX_DEAD ? sink : t];
            }
            if (gm_intern_put(&tab, sig, ((size_t)k + 1) * sizeof *sig, &nblk[s], NULL))
                goto nomem;
        }
        memcpy(blk, nblk, n * sizeof *blk);
        if (tab.count == count)
            break;
        count = tab.count;
    }
    st = gm_dfa_quotient(in, blk, count, out, err);
    goto done;
nomem:
    st = gm_mem_fail(m, err, "a minimal DFA");
done:
    gm_intern_free(&tab);
    gm_mem_free(m, blk);
    gm_mem_free(m, nblk);
    gm_mem_free(m, sig);
    return st;
}
