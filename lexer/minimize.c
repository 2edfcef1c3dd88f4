/*
 * Hopcroft's DFA minimization, O(m log n) for m transitions.
 *
 * The DFA is first trimmed: states from which no accepting state can be
 * reached are dead and join the implicit sink (note [start state] keeps
 * the start apart anyway). On a trimmed partial DFA it is enough to refine
 * by the preimages of the existing transitions, as Valmari and Lehtinen
 * show: "p has a c-transition into B and q has none" separates p and q
 * just like "p goes into B and q into the sink" would, so the sink and its
 * many incoming transitions never have to be materialized.
 *
 * The initial partition groups live states by label (and puts the start
 * alone under start_apart). A splitter block A refines every block by "has
 * a transition on class c into A", for all classes at once from the
 * inverse transitions of A's states; when a block splits, both halves
 * become splitters if it was one, otherwise only the smaller half
 * (Hopcroft's "process the smaller half" rule, which holds for partial
 * transition functions too).
 *
 * The partition is kept as one array of states grouped by block, with each
 * block's marked states moved to its front while a splitter is applied.
 */
#include <stdlib.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/lexer.h"
#include "base/error.h"
#include "base/vec.h"

typedef struct part {
    uint32_t *elems;  /* states grouped by block */
    uint32_t *pos;    /* state -> index in elems */
    uint32_t *blk;    /* state -> block */
    uint32_t *first;  /* block -> start in elems */
    uint32_t *end;    /* block -> end in elems */
    uint32_t *marked; /* block -> number of marked states at its front */
    uint8_t *in_work; /* block -> queued as a splitter */
    uint32_t nblocks;
} part;

/* Sort key of the initial partition: label, with the start apart when asked. */
typedef struct init_key {
    uint32_t label;
    uint32_t state;
} init_key;

static int cmp_init(const void *a, const void *b)
{
    const init_key *x = a, *y = b;
    if (x->label != y->label)
        return x->label < y->label ? -1 : 1;
    return x->state < y->state ? -1 : x->state > y->state;
}

gm_status gm_dfa_minimize(const gm_dfa *in, bool start_apart, gm_dfa *out, gm_error *err)
{
    gm_mem *m = in->mem;
    uint32_t n = in->nstates, k = in->nclasses;
    part p;
    memset(&p, 0, sizeof p);
    init_key *keys = NULL;
    uint32_t *inv_off = NULL, *inv = NULL, *work = NULL, *xs = NULL, *xcount = NULL, *xoff = NULL,
             *touched = NULL, *block = NULL;
    uint8_t *live = NULL;
    size_t nwork = 0;
    gm_status st = GM_OK;

    p.elems = gm_mem_reallocarray(m, NULL, n + 1, sizeof *p.elems);
    p.pos = gm_mem_reallocarray(m, NULL, n + 1, sizeof *p.pos);
    p.blk = gm_mem_reallocarray(m, NULL, n + 1, sizeof *p.blk);
    p.first = gm_mem_reallocarray(m, NULL, n + 1, sizeof *p.first);
    p.end = gm_mem_reallocarray(m, NULL, n + 1, sizeof *p.end);
    p.marked = gm_mem_calloc(m, n + 1, sizeof *p.marked);
    p.in_work = gm_mem_calloc(m, n + 1, sizeof *p.in_work);
    keys = gm_mem_reallocarray(m, NULL, n + 1, sizeof *keys);
    inv_off = gm_mem_calloc(m, (size_t)n + 2, sizeof *inv_off);
    work = gm_mem_reallocarray(m, NULL, n + 1, sizeof *work);
    xcount = gm_mem_calloc(m, (size_t)k + 1, sizeof *xcount);
    xoff = gm_mem_calloc(m, (size_t)k + 1, sizeof *xoff);
    touched = gm_mem_reallocarray(m, NULL, n + 1, sizeof *touched);
    live = gm_mem_calloc(m, n + 1, 1);
    if (!p.elems || !p.pos || !p.blk || !p.first || !p.end || !p.marked || !p.in_work || !keys ||
        !inv_off || !work || !xcount || !xoff || !touched || !live)
        goto nomem;

    /* Inverse transitions: for target t, pairs (class, source) in inv[2*inv_off[t] ...]. */
    size_t nedges = 0;
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t c = 0; c < k; c++) {
            uint32_t t = in->next[(size_t)s * k + c];
            if (t != GM_LEX_DEAD) {
                inv_off[t + 1]++;
                nedges++;
            }
        }
    for (uint32_t t = 0; t < n; t++)
        inv_off[t + 1] += inv_off[t];
    inv = gm_mem_reallocarray(m, NULL, nedges ? 2 * nedges : 1, sizeof *inv);
    xs = gm_mem_reallocarray(m, NULL, nedges ? nedges : 1, sizeof *xs);
    if (!inv || !xs)
        goto nomem;
    {
        uint32_t *fill = touched; /* reused as a cursor array */
        memcpy(fill, inv_off, n * sizeof *fill);
        for (uint32_t s = 0; s < n; s++)
            for (uint32_t c = 0; c < k; c++) {
                uint32_t t = in->next[(size_t)s * k + c];
                if (t == GM_LEX_DEAD)
                    continue;
                size_t at = fill[t]++;
                inv[2 * at] = c;
                inv[2 * at + 1] = s;
            }
    }

    /* Trim: live states reach an accepting one (a backward search; work[] is the stack). */
    for (uint32_t s = 0; s < n; s++)
        if (in->label[s] != GM_LEX_NONE) {
            live[s] = 1;
            work[nwork++] = s;
        }
    while (nwork) {
        uint32_t t = work[--nwork];
        for (uint32_t j = inv_off[t]; j < inv_off[t + 1]; j++) {
            uint32_t s = inv[2 * j + 1];
            if (!live[s]) {
                live[s] = 1;
                work[nwork++] = s;
            }
        }
    }

    /* Initial partition of the live states. */
    uint32_t nlive = 0;
    for (uint32_t s = 0; s < n; s++) {
        if (!live[s])
            continue;
        keys[nlive].state = s;
        keys[nlive].label = in->label[s];
        if (start_apart && s == 0)
            keys[nlive].label = GM_LEX_NONE - 1; /* a value no terminal id reaches */
        nlive++;
    }
    qsort(keys, nlive, sizeof *keys, cmp_init);
    p.nblocks = 0;
    for (uint32_t i = 0; i < nlive; i++) {
        if (i == 0 || keys[i].label != keys[i - 1].label) {
            if (p.nblocks)
                p.end[p.nblocks - 1] = i;
            p.first[p.nblocks++] = i;
        }
        uint32_t s = keys[i].state;
        p.elems[i] = s;
        p.pos[s] = i;
        p.blk[s] = p.nblocks - 1;
    }
    if (p.nblocks)
        p.end[p.nblocks - 1] = nlive;
    for (uint32_t b = 0; b < p.nblocks; b++) {
        work[nwork++] = b;
        p.in_work[b] = 1;
    }

    while (nwork) {
        uint32_t a = work[--nwork];
        p.in_work[a] = 0;
        /* Live predecessors of A, bucketed by class. */
        memset(xcount, 0, ((size_t)k + 1) * sizeof *xcount);
        for (uint32_t i = p.first[a]; i < p.end[a]; i++) {
            uint32_t t = p.elems[i];
            for (uint32_t j = inv_off[t]; j < inv_off[t + 1]; j++)
                if (live[inv[2 * j + 1]])
                    xcount[inv[2 * j]]++;
        }
        xoff[0] = 0;
        for (uint32_t c = 0; c < k; c++)
            xoff[c + 1] = xoff[c] + xcount[c];
        memset(xcount, 0, ((size_t)k + 1) * sizeof *xcount);
        for (uint32_t i = p.first[a]; i < p.end[a]; i++) {
            uint32_t t = p.elems[i];
            for (uint32_t j = inv_off[t]; j < inv_off[t + 1]; j++) {
                uint32_t c = inv[2 * j], s = inv[2 * j + 1];
                if (live[s])
                    xs[xoff[c] + xcount[c]++] = s;
            }
        }
        for (uint32_t c = 0; c < k; c++) {
            if (xoff[c] == xoff[c + 1])
                continue;
            uint32_t ntouched = 0;
            /* Mark: move each predecessor to the front part of its block. */
            for (uint32_t i = xoff[c]; i < xoff[c + 1]; i++) {
                uint32_t s = xs[i], b = p.blk[s];
                uint32_t front = p.first[b] + p.marked[b];
                if (p.pos[s] < front)
                    continue; /* already marked */
                uint32_t other = p.elems[front];
                p.elems[front] = s;
                p.elems[p.pos[s]] = other;
                p.pos[other] = p.pos[s];
                p.pos[s] = front;
                if (p.marked[b]++ == 0)
                    touched[ntouched++] = b;
            }
            /* Split every touched block that was only partly marked. */
            for (uint32_t i = 0; i < ntouched; i++) {
                uint32_t b = touched[i];
                uint32_t mk = p.marked[b];
                p.marked[b] = 0;
                if (mk == p.end[b] - p.first[b])
                    continue;
                uint32_t nb = p.nblocks++;
                p.first[nb] = p.first[b];
                p.end[nb] = p.first[b] + mk;
                p.first[b] = p.end[nb];
                for (uint32_t j = p.first[nb]; j < p.end[nb]; j++)
                    p.blk[p.elems[j]] = nb;
                if (p.in_work[b] || mk <= p.end[b] - p.first[b]) {
                    work[nwork++] = nb;
                    p.in_work[nb] = 1;
                } else {
                    work[nwork++] = b;
                    p.in_work[b] = 1;
                }
            }
        }
    }

    /* Dead states and the sink share one more block, which the quotient drops. */
    block = gm_mem_reallocarray(m, NULL, (size_t)n + 1, sizeof *block);
    if (!block)
        goto nomem;
    for (uint32_t s = 0; s < n; s++)
        block[s] = live[s] ? p.blk[s] : p.nblocks;
    block[n] = p.nblocks;
    st = gm_dfa_quotient(in, block, p.nblocks + 1, out, err);
    goto done;
nomem:
    st = gm_mem_fail(m, err, "a minimal DFA");
done:
    gm_mem_free(m, p.elems);
    gm_mem_free(m, p.pos);
    gm_mem_free(m, p.blk);
    gm_mem_free(m, p.first);
    gm_mem_free(m, p.end);
    gm_mem_free(m, p.marked);
    gm_mem_free(m, p.in_work);
    gm_mem_free(m, keys);
    gm_mem_free(m, inv_off);
    gm_mem_free(m, inv);
    gm_mem_free(m, work);
    gm_mem_free(m, xs);
    gm_mem_free(m, xcount);
    gm_mem_free(m, xoff);
    gm_mem_free(m, touched);
    gm_mem_free(m, live);
    gm_mem_free(m, block);
    return st;
}
