/* State equivalence by Valmari and Lehtinen's refinement (earley/fsm_minimize.h). */
#include "earley/fsm_minimize.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Boundaries below this (bytes and the first symbols after them) are found by table. */
enum { BYTE_BOUNDS = 258 };

/*
 * A refinable partition of 0..n-1: the elements of set s are
 * elems[first[s] .. past[s]), the first marked[s] of them marked.
 */
typedef struct part {
    uint32_t z;               /* number of sets */
    uint32_t *elems, *loc, *set, *first, *past;
} part;

/* What both partitions share: the sets touched by marks, and the mark counts. */
typedef struct refine {
    uint32_t *touched;
    uint32_t ntouched;
    uint32_t *marked;
} refine;

static int part_init(gm_mem *m, part *p, uint32_t n)
{
    size_t k = n ? n : 1;
    p->elems = gm_mem_alloc(m, k * sizeof *p->elems);
    p->loc = gm_mem_alloc(m, k * sizeof *p->loc);
    p->set = gm_mem_calloc(m, k, sizeof *p->set);
    p->first = gm_mem_alloc(m, k * sizeof *p->first);
    p->past = gm_mem_alloc(m, k * sizeof *p->past);
    if (!p->elems || !p->loc || !p->set || !p->first || !p->past)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        p->elems[i] = p->loc[i] = i;
    p->z = n ? 1 : 0;
    p->first[0] = 0;
    p->past[0] = n;
    return 0;
}

static void part_free(gm_mem *m, part *p)
{
    gm_mem_free(m, p->elems);
    gm_mem_free(m, p->loc);
    gm_mem_free(m, p->set);
    gm_mem_free(m, p->first);
    gm_mem_free(m, p->past);
}

static void mark(part *p, refine *r, uint32_t e)
{
    uint32_t s = p->set[e], i = p->loc[e], j = p->first[s] + r->marked[s];
    p->elems[i] = p->elems[j];
    p->loc[p->elems[i]] = i;
    p->elems[j] = e;
    p->loc[e] = j;
    if (!r->marked[s]++)
        r->touched[r->ntouched++] = s;
}

/* Splits every touched set into its marked and unmarked elements; the smaller part is new. */
static void split(part *p, refine *r)
{
    while (r->ntouched) {
        uint32_t s = r->touched[--r->ntouched], j = p->first[s] + r->marked[s];
        if (j == p->past[s]) {
            r->marked[s] = 0;
            continue;
        }
        uint32_t z = p->z++;
        if (r->marked[s] <= p->past[s] - j) {
            p->first[z] = p->first[s];
            p->past[z] = p->first[s] = j;
        } else {
            p->past[z] = p->past[s];
            p->first[z] = p->past[s] = j;
        }
        for (uint32_t i = p->first[z]; i < p->past[z]; i++)
            p->set[p->elems[i]] = z;
        r->marked[s] = r->marked[z] = 0;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The boundaries of the symbol ranges, ascending: the elementary intervals lie between. */
typedef struct bounds {
    uint64_t *pts;
    uint32_t k;
    uint32_t small[BYTE_BOUNDS]; /* index of boundary x for x < BYTE_BOUNDS */
} bounds;

/* The index of the elementary interval starting at x (x is a boundary). */
static uint32_t interval_of(const bounds *bd, uint64_t x)
{
    if (x < BYTE_BOUNDS)
        return bd->small[x];
    const uint64_t *pts = bd->pts;
    uint32_t lo = 0, hi = bd->k;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pts[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int gm_fsm_partition(gm_mem *m, uint32_t n, const uint32_t *off, const gm_fsm_edge *edges,
                     const uint8_t *flags, uint32_t *block, uint32_t *nblocks)
{
    *nblocks = 0;
    if (n == 0)
        return 0;
    int rc = -1;
    uint32_t ne = off[n];
    /* Transitions over elementary intervals of the symbols (between consecutive
       boundaries of the ranges): tail, label, head. */
    uint64_t *pts = gm_mem_alloc(m, ((size_t)ne * 4 + 1) * sizeof *pts);
    uint32_t *tail = NULL, *label = NULL, *head = NULL, *adj = NULL, *adj_off = NULL;
    uint32_t *count = NULL;
    part bl, co;
    memset(&bl, 0, sizeof bl);
    memset(&co, 0, sizeof co);
    refine r = {NULL, 0, NULL};
    if (!pts)
        goto out;
    /* Boundaries: small ones marked in a table, the others (references and
       special tokens, few) sorted after them. */
    bool mark_small[BYTE_BOUNDS] = {false};
    uint32_t nbig = 0;
    for (uint32_t j = 0; j < ne; j++) {
        uint64_t ends[2] = {edges[j].lo, (uint64_t)edges[j].hi + 1};
        for (int i = 0; i < 2; i++) {
            if (ends[i] < BYTE_BOUNDS)
                mark_small[ends[i]] = true;
            else
                pts[2 * (size_t)ne + nbig++] = ends[i]; /* past the room of the small ones */
        }
    }
    bounds bd;
    bd.pts = pts;
    uint32_t k = 0;
    for (uint32_t x = 0; x < BYTE_BOUNDS; x++)
        if (mark_small[x]) {
            bd.small[x] = k;
            pts[k++] = x;
        }
    if (nbig > 1)
        qsort(pts + 2 * (size_t)ne, nbig, sizeof *pts, cmp_u64);
    for (uint32_t i = 0; i < nbig; i++)
        if (!k || pts[k - 1] != pts[2 * (size_t)ne + i])
            pts[k++] = pts[2 * (size_t)ne + i];
    bd.k = k;
    size_t mt = 0;
    for (uint32_t j = 0; j < ne; j++)
        mt += interval_of(&bd, (uint64_t)edges[j].hi + 1) - interval_of(&bd, edges[j].lo);
    if (mt >= UINT32_MAX / 2)
        goto out;
    uint32_t nt = (uint32_t)mt;
    size_t cap = (nt > n ? nt : n) + 1;
    tail = gm_mem_alloc(m, cap * sizeof *tail);
    label = gm_mem_alloc(m, cap * sizeof *label);
    head = gm_mem_alloc(m, cap * sizeof *head);
    adj = gm_mem_alloc(m, cap * sizeof *adj);
    adj_off = gm_mem_calloc(m, (size_t)n + 1, sizeof *adj_off);
    count = gm_mem_calloc(m, (size_t)k + 1, sizeof *count);
    r.touched = gm_mem_alloc(m, cap * sizeof *r.touched);
    r.marked = gm_mem_calloc(m, cap, sizeof *r.marked);
    if (!tail || !label || !head || !adj || !adj_off || !count || !r.touched || !r.marked ||
        part_init(m, &bl, n) || part_init(m, &co, nt))
        goto out;
    uint32_t t = 0;
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t j = off[s]; j < off[s + 1]; j++) {
            uint32_t a = interval_of(&bd, edges[j].lo);
            uint32_t b = interval_of(&bd, (uint64_t)edges[j].hi + 1);
            for (; a < b; a++, t++) {
                tail[t] = s;
                label[t] = a;
                head[t] = edges[j].to;
            }
        }
    /* Blocks: one per flag value. */
    bool present[256] = {false};
    for (uint32_t s = 0; s < n; s++)
        present[flags[s]] = true;
    for (uint32_t v = 0; v < 256; v++) {
        for (uint32_t s = 0; present[v] && s < n; s++)
            if (flags[s] == v)
                mark(&bl, &r, s);
        split(&bl, &r);
    }
    /* Cords: one per label, transitions ordered by label (counting sort). */
    for (uint32_t i = 0; i < nt; i++)
        count[label[i] + 1]++;
    for (uint32_t a = 0; a < k; a++)
        count[a + 1] += count[a];
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t at = count[label[i]]++;
        co.elems[at] = i;
        co.loc[i] = at;
    }
    co.z = 0;
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t e = co.elems[i];
        if (i == 0 || label[e] != label[co.elems[i - 1]]) {
            if (co.z)
                co.past[co.z - 1] = i;
            co.first[co.z++] = i;
        }
        co.set[e] = co.z - 1;
    }
    if (co.z)
        co.past[co.z - 1] = nt;
    /* Incoming transitions of each state. */
    for (uint32_t i = 0; i < nt; i++)
        adj_off[head[i]]++;
    for (uint32_t s = 0; s < n; s++)
        adj_off[s + 1] += adj_off[s];
    for (uint32_t i = nt; i-- > 0;)
        adj[--adj_off[head[i]]] = i;
    /* Refine: each cord splits blocks by its tails; each block but the first
       splits cords by their heads. */
    uint32_t b = 1;
    for (uint32_t c = 0; c < co.z; c++) {
        for (uint32_t i = co.first[c]; i < co.past[c]; i++)
            mark(&bl, &r, tail[co.elems[i]]);
        split(&bl, &r);
        for (; b < bl.z; b++) {
            for (uint32_t i = bl.first[b]; i < bl.past[b]; i++) {
                uint32_t s = bl.elems[i];
                for (uint32_t j = adj_off[s]; j < adj_off[s + 1]; j++)
                    mark(&co, &r, adj[j]);
            }
            split(&co, &r);
        }
    }
    for (uint32_t s = 0; s < n; s++)
        block[s] = bl.set[s];
    *nblocks = bl.z;
    rc = 0;
out:
    part_free(m, &bl);
    part_free(m, &co);
    gm_mem_free(m, r.touched);
    gm_mem_free(m, r.marked);
    gm_mem_free(m, pts);
    gm_mem_free(m, tail);
    gm_mem_free(m, label);
    gm_mem_free(m, head);
    gm_mem_free(m, adj);
    gm_mem_free(m, adj_off);
    gm_mem_free(m, count);
    return rc;
}
