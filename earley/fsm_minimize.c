/*
 * Minimization of rule automata (earley/fsm_minimize.h).
 *
 * note [minimization]
 * Partition refinement by signatures: a state's signature is its list of
 * (symbol range, block of the target), adjacent ranges into one block
 * merged, edges into dead states (that cannot reach acceptance) left out.
 * Blocks start as the live states of each flag value; a block splits into
 * the groups of equal signatures. When a block splits, the largest part
 * keeps its number and the others move to new blocks: only the
 * predecessors of moved states can see their signature change, so only
 * they are looked at again (Hopcroft's "all but the largest part": a
 * state moves O(log n) times). Their signatures now name a block that no
 * untouched state names, so a touched state never joins the untouched
 * rest of its block, and the untouched rest stays together.
 *
 * Ranges are taken whole. The refinement of Valmari and Lehtinen used
 * before cut every range at every boundary of every range in the
 * automaton first, so that a state inside a JSON string (a few ranges of
 * string characters) had a transition per interval between the letters
 * of the property names around it: tens of transitions for a few edges,
 * most of the time of a grammar's build.
 *
 * At a fixpoint every block is stable (its states have equal signatures),
 * so the partition is a congruence finer than the flags; every split
 * separated states that differ, so it is the coarsest one: equivalence.
 */
#include "earley/fsm_minimize.h"

#include <stdbool.h>
#include <string.h>

#define NONE UINT32_MAX

void gm_fsm_dfa_free(gm_mem *m, gm_fsm_dfa *d)
{
    gm_mem_free(m, d->off);
    gm_mem_free(m, d->edges);
    gm_mem_free(m, d->flags);
    memset(d, 0, sizeof *d);
}

bool gm_fsm_is_bfs(const gm_fsm_dfa *d)
{
    uint32_t next = 1; /* the number the next new state must have */
    for (uint32_t s = 0; s < d->nstates; s++) {
        if (s >= next)
            return false; /* not reached from the states before it */
        for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
            const gm_fsm_edge *e = &d->edges[j];
            if (e->to > next)
                return false;
            if (e->to == next)
                next++;
            if (j > d->off[s] && e[-1].to == e->to && (uint64_t)e[-1].hi + 1 == e->lo)
                return false;
        }
    }
    return true;
}

void gm_fsm_min_init(gm_fsm_min *w, gm_mem *m)
{
    memset(w, 0, sizeof *w);
    w->mem = m;
}

void gm_fsm_min_free(gm_fsm_min *w)
{
    gm_mem *m = w->mem;
    gm_vec_free(m, &w->pred_off);
    gm_vec_free(m, &w->pred);
    gm_vec_free(m, &w->queue);
    gm_vec_free(m, &w->blk);
    gm_vec_free(m, &w->elems);
    gm_vec_free(m, &w->loc);
    gm_vec_free(m, &w->first);
    gm_vec_free(m, &w->past);
    gm_vec_free(m, &w->mk);
    gm_vec_free(m, &w->stamp);
    gm_vec_free(m, &w->touched);
    gm_vec_free(m, &w->moved);
    gm_vec_free(m, &w->sig);
    gm_vec_free(m, &w->sig_off);
    gm_vec_free(m, &w->grp);
    gm_vec_free(m, &w->gcount);
    gm_vec_free(m, &w->tmp);
    gm_vec_free(m, &w->blocks);
    gm_vec_free(m, &w->slots);
    gm_vec_free(m, &w->num);
    gm_vec_free(m, &w->hash);
    gm_vec_free(m, &w->live);
    gm_vec_free(m, &w->out_edges);
}

/* Sizes vector v to n elements (contents undefined). */
#define SIZE(w, v, n) gm_vec_reserve((w)->mem, (v), (n) ? (n) : 1)

/* Appends state s's signature to w->sig; its hash. */
static uint64_t signature(gm_fsm_min *w, const gm_fsm_dfa *d, uint32_t s)
{
    const uint32_t *blk = w->blk.v;
    const uint8_t *live = w->live.v;
    size_t first = w->sig.n, n = first;
    uint32_t *v = w->sig.v;
    uint64_t h = blk[s] * 0x9e3779b97f4a7c15ULL;
    for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
        const gm_fsm_edge *e = &d->edges[j];
        if (!live[e->to])
            continue;
        uint32_t b = blk[e->to];
        if (n > first && v[n - 1] == b && (uint64_t)v[n - 2] + 1 == e->lo) {
            v[n - 2] = e->hi;
            continue;
        }
        v[n] = e->lo;
        v[n + 1] = e->hi;
        v[n + 2] = b;
        n += 3;
    }
    w->sig.n = n;
    /* two words per multiply: the multiplies are the critical path */
    size_t i = first;
    for (; i + 1 < n; i += 2)
        h = (h ^ ((uint64_t)v[i] | (uint64_t)v[i + 1] << 32)) * 0xff51afd7ed558ccdULL;
    if (i < n)
        h = (h ^ v[i]) * 0xff51afd7ed558ccdULL;
    return h ^ h >> 29;
}

/* Moves element at position i to position j of w->elems (swapping). */
static void swap_to(gm_fsm_min *w, uint32_t i, uint32_t j)
{
    uint32_t *el = w->elems.v, *loc = w->loc.v;
    uint32_t a = el[i], b = el[j];
    el[i] = b;
    loc[b] = i;
    el[j] = a;
    loc[a] = j;
}

/* A new block of positions [a, e) of w->elems: its states move there. */
static int new_block(gm_fsm_min *w, uint32_t *nblocks, uint32_t a, uint32_t e)
{
    uint32_t z = (*nblocks)++;
    w->first.v[z] = a;
    w->past.v[z] = e;
    w->mk.v[z] = 0;
    if (gm_vec_reserve(w->mem, &w->moved, w->moved.n + (e - a)))
        return -1;
    for (uint32_t i = a; i < e; i++) {
        uint32_t s = w->elems.v[i];
        w->blk.v[s] = z;
        w->moved.v[w->moved.n++] = s;
    }
    return 0;
}

/*
 * Splits block x, whose touched states are its tail [tail, past): the
 * untouched prefix is one part (its signatures did not change), the tail
 * splits by signature. The largest part keeps x. 0, or -1 when out of memory.
 */
static int split_block(gm_fsm_min *w, const gm_fsm_dfa *d, uint32_t x, uint32_t *nblocks)
{
    gm_mem *m = w->mem;
    uint32_t first = w->first.v[x], past = w->past.v[x], nt = w->mk.v[x], tail = past - nt;
    w->mk.v[x] = 0;
    if (nt == 1) {
        /* one touched state: it differs from the untouched ones (note [minimization]) */
        if (tail == first)
            return 0;
        w->past.v[x] = tail;
        return new_block(w, nblocks, tail, past);
    }
    /* signatures of the tail; (hash, index) sorted, so equal ones are runs */
    w->sig.n = 0;
    if (SIZE(w, &w->sig_off, nt + 1) || SIZE(w, &w->hash, nt) || SIZE(w, &w->grp, nt))
        return -1;
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t s = w->elems.v[tail + k];
        if (gm_vec_reserve(m, &w->sig, w->sig.n + 3 * (size_t)(d->off[s + 1] - d->off[s])))
            return -1;
        w->sig_off.v[k] = (uint32_t)w->sig.n;
        w->hash.v[k] = signature(w, d, s);
    }
    w->sig_off.v[nt] = (uint32_t)w->sig.n;
    /* group ids in order of first appearance: an open-addressing table of
       (hash, first index), signatures compared word by word on equal hashes */
    uint32_t *grp = w->grp.v, ng = 0;
    {
        const uint64_t *key = w->hash.v;
        const uint32_t *so = w->sig_off.v;
        size_t nslots = 16;
        while (nslots < 2 * (size_t)nt)
            nslots *= 2;
        if (SIZE(w, &w->slots, nslots))
            return -1;
        uint32_t *slot = w->slots.v; /* first index of a group, UINT32_MAX: empty */
        memset(slot, 0xff, nslots * sizeof *slot);
        for (uint32_t k = 0; k < nt; k++) {
            size_t i = (size_t)(key[k] >> 32) & (nslots - 1);
            for (;; i = (i + 1) & (nslots - 1)) {
                uint32_t k0 = slot[i];
                if (k0 == UINT32_MAX) {
                    slot[i] = k;
                    grp[k] = ng++;
                    break;
                }
                if (key[k0] == key[k] && so[k0 + 1] - so[k0] == so[k + 1] - so[k] &&
                    (so[k] == so[k + 1] || !memcmp(w->sig.v + so[k0], w->sig.v + so[k],
                                                   (so[k + 1] - so[k]) * sizeof *w->sig.v))) {
                    grp[k] = grp[k0];
                    break;
                }
            }
        }
    }
    if (ng == 1 && tail == first)
        return 0;
    /* the tail by group: counting sort of the states */
    if (SIZE(w, &w->gcount, (size_t)ng + 1) || SIZE(w, &w->tmp, nt))
        return -1;
    uint32_t *gc = w->gcount.v, *tmp = w->tmp.v;
    memset(gc, 0, ((size_t)ng + 1) * sizeof *gc);
    for (uint32_t k = 0; k < nt; k++)
        gc[grp[k] + 1]++;
    for (uint32_t g = 0; g < ng; g++)
        gc[g + 1] += gc[g];
    for (uint32_t k = 0; k < nt; k++)
        tmp[gc[grp[k]]++] = w->elems.v[tail + k];
    for (uint32_t k = 0; k < nt; k++) {
        w->elems.v[tail + k] = tmp[k];
        w->loc.v[tmp[k]] = tail + k;
    }
    /* parts: the prefix [first, tail), group g at [tail + gc[g - 1], tail + gc[g]) */
    uint32_t best_at = first, best_len = tail - first;
    for (uint32_t g = 0; g < ng; g++) {
        uint32_t a = tail + (g ? gc[g - 1] : 0), e = tail + gc[g];
        if (e - a > best_len) {
            best_len = e - a;
            best_at = a;
        }
    }
    if (tail > first && best_at != first && new_block(w, nblocks, first, tail))
        return -1;
    for (uint32_t g = 0; g < ng; g++) {
        uint32_t a = tail + (g ? gc[g - 1] : 0), e = tail + gc[g];
        if (a != best_at && new_block(w, nblocks, a, e))
            return -1;
    }
    w->first.v[x] = best_at;
    w->past.v[x] = best_at + best_len;
    return 0;
}

/*
 * One round: the touched states go to the tails of their blocks, which
 * split. Fills w->moved with the states that changed blocks. 0, or -1
 * when out of memory.
 */
static int refine(gm_fsm_min *w, const gm_fsm_dfa *d, uint32_t *nblocks)
{
    w->moved.n = 0;
    w->blocks.n = 0;
    for (size_t k = 0; k < w->touched.n; k++) {
        uint32_t s = w->touched.v[k], x = w->blk.v[s];
        if (!w->mk.v[x] && gm_vec_push(w->mem, &w->blocks, x))
            return -1;
        swap_to(w, w->loc.v[s], w->past.v[x] - 1 - w->mk.v[x]++);
    }
    for (size_t i = 0; i < w->blocks.n; i++)
        if (split_block(w, d, w->blocks.v[i], nblocks))
            return -1;
    return 0;
}

int gm_fsm_minimize(gm_fsm_min *w, const gm_fsm_dfa *d, uint8_t accepting, gm_fsm_dfa *out)
{
    gm_mem *m = w->mem;
    uint32_t n = d->nstates;
    size_t ne = n ? d->off[n] : 0;
    memset(out, 0, sizeof *out);
    if (SIZE(w, &w->pred_off, (size_t)n + 1) || SIZE(w, &w->pred, ne) || SIZE(w, &w->queue, n) ||
        SIZE(w, &w->blk, n) || SIZE(w, &w->elems, n) || SIZE(w, &w->loc, n) ||
        SIZE(w, &w->first, n) || SIZE(w, &w->past, n) || SIZE(w, &w->mk, n) ||
        SIZE(w, &w->stamp, n) || SIZE(w, &w->num, n) || SIZE(w, &w->live, n) ||
        SIZE(w, &w->touched, n))
        return -1;
    uint32_t *pred_off = w->pred_off.v, *pred = w->pred.v, *queue = w->queue.v;
    uint8_t *live = w->live.v;
    /* predecessors */
    memset(pred_off, 0, ((size_t)n + 1) * sizeof *pred_off);
    for (size_t j = 0; j < ne; j++)
        pred_off[d->edges[j].to]++;
    for (uint32_t s = 0; s < n; s++)
        pred_off[s + 1] += pred_off[s]; /* the end of s's run... */
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++)
            pred[--pred_off[d->edges[j].to]] = s; /* ...then its start */
    /* live: can reach acceptance */
    memset(live, 0, n);
    uint32_t nl = 0;
    for (uint32_t s = 0; s < n; s++)
        if (d->flags[s] & accepting) {
            live[s] = 1;
            queue[nl++] = s;
        }
    for (uint32_t qi = 0; qi < nl; qi++)
        for (uint32_t j = pred_off[queue[qi]]; j < pred_off[queue[qi] + 1]; j++)
            if (!live[pred[j]]) {
                live[pred[j]] = 1;
                queue[nl++] = pred[j];
            }
    uint32_t nblocks = 0;
    if (n == 0 || !live[0])
        goto quotient;
    /* blocks of the live states by flag value, in elems */
    {
        uint32_t cnt[256], fb[256], at = 0;
        memset(cnt, 0, sizeof cnt);
        for (uint32_t s = 0; s < n; s++)
            if (live[s])
                cnt[d->flags[s]]++;
        for (uint32_t v = 0; v < 256; v++) {
            if (!cnt[v])
                continue;
            fb[v] = nblocks;
            w->first.v[nblocks] = w->past.v[nblocks] = at;
            w->mk.v[nblocks] = 0;
            at += cnt[v];
            nblocks++;
        }
        w->touched.n = 0;
        for (uint32_t s = 0; s < n; s++) {
            if (!live[s])
                continue;
            uint32_t b = fb[d->flags[s]], i = w->past.v[b]++;
            w->elems.v[i] = s;
            w->loc.v[s] = i;
            w->blk.v[s] = b;
            w->touched.v[w->touched.n++] = s;
        }
    }
    /* refine until no state moves; then only the moved states' predecessors */
    memset(w->stamp.v, 0, (size_t)n * sizeof *w->stamp.v);
    for (uint32_t round = 1; w->touched.n; round++) {
        if (refine(w, d, &nblocks))
            return -1;
        w->touched.n = 0;
        for (size_t i = 0; i < w->moved.n; i++) {
            uint32_t t = w->moved.v[i];
            for (uint32_t j = pred_off[t]; j < pred_off[t + 1]; j++) {
                uint32_t p = pred[j];
                if (live[p] && w->stamp.v[p] != round) {
                    w->stamp.v[p] = round;
                    w->touched.v[w->touched.n++] = p;
                }
            }
        }
    }
    /* Every state live and alone in its block: d is minimal; it is the
       answer as it stands when numbered breadth-first already, as a subset
       construction numbers states (as first reached, edges in symbol order). */
    if (nblocks == n && nl == n && gm_fsm_is_bfs(d))
        return 1;
quotient:
    /* the quotient, breadth-first from the start's block: block b is numbered num[b] */
    {
        uint32_t *num = w->num.v, nq = 0;
        for (uint32_t b = 0; b < nblocks; b++)
            num[b] = NONE;
        if (nblocks) {
            num[w->blk.v[0]] = nq;
            queue[nq++] = w->blk.v[0];
        }
        w->out_edges.n = 0;
        out->off = gm_mem_alloc(m, ((size_t)nblocks + 1) * sizeof *out->off);
        out->flags = gm_mem_alloc(m, nblocks ? nblocks : 1);
        if (!out->off || !out->flags)
            goto nomem;
        for (uint32_t qi = 0; qi < nq; qi++) {
            uint32_t s = w->elems.v[w->first.v[queue[qi]]];
            size_t first = w->out_edges.n;
            out->off[qi] = (uint32_t)first;
            out->flags[qi] = d->flags[s];
            if (gm_vec_reserve(m, &w->out_edges, first + (d->off[s + 1] - d->off[s])))
                goto nomem;
            gm_fsm_edge *oe = w->out_edges.v;
            for (uint32_t j = d->off[s]; j < d->off[s + 1]; j++) {
                const gm_fsm_edge *e = &d->edges[j];
                if (!live[e->to])
                    continue;
                uint32_t b = w->blk.v[e->to];
                if (num[b] == NONE) {
                    num[b] = nq;
                    queue[nq++] = b;
                }
                size_t k = w->out_edges.n;
                if (k > first && oe[k - 1].to == num[b] && (uint64_t)oe[k - 1].hi + 1 == e->lo) {
                    oe[k - 1].hi = e->hi;
                } else {
                    oe[k] = (gm_fsm_edge){e->lo, e->hi, num[b]};
                    w->out_edges.n = k + 1;
                }
            }
        }
        out->nstates = nq;
        out->off[nq] = (uint32_t)w->out_edges.n;
        out->edges = gm_mem_alloc(m, (w->out_edges.n ? w->out_edges.n : 1) * sizeof *out->edges);
        if (!out->edges)
            goto nomem;
        if (w->out_edges.n)
            memcpy(out->edges, w->out_edges.v, w->out_edges.n * sizeof *out->edges);
    }
    return 0;
nomem:
    gm_fsm_dfa_free(m, out);
    return -1;
}
