/*
 * The LR runtime over the persistent stack: node lifetime (atomic
 * reference counts, iterative release), feeding a terminal, and the
 * allocation-free viability checks the mask computation runs in its inner
 * loop.
 *
 * note [overlay simulation]
 * A check never touches the shared nodes. It keeps `base`, a real node,
 * and above it an overlay: the states pushed since (a small array on the C
 * stack). A reduction by A -> w pops |w| entries, first from the overlay,
 * then by moving base down its parent chain; it then pushes goto(top, A).
 * Only a reduction of an empty production can push without popping, so the
 * overlay can fill up only then or on a shift. When the fixed overlay
 * (GM_LR_OVERLAY_MAX entries) is full, the check starts over on the
 * segmented path: segments of SEGMENT entries, each in its own stack frame,
 * linked so that pops cross them; a full newest segment recurses to get the
 * next. That path is exact and allocation-free; its C stack use grows by
 * about 1 KiB per SEGMENT entries pushed.
 *
 * note [reduction loops]
 * Reductions always terminate in a table without conflicts. A table whose
 * conflicts were resolved (Lark or Bison mode) can reduce forever on some
 * input of an ambiguous grammar, so there (t->loop_guard != 0) a run of
 * reductions longer than loop_guard * (stack height + 2) rejects the
 * terminal, which is what a parser that would loop can do best.
 */
#include <string.h>

#include "parser/lr.h"
#include "base/bitset.h"

#define SEGMENT 256

gm_lr_node *gm_lr_stack_new(gm_mem *m)
{
    if (!m)
        return NULL;
    gm_lr_node *n = gm_mem_alloc(m, sizeof *n);
    if (!n)
        return NULL;
    n->parent = NULL;
    n->state = 0;
    n->depth = 0;
    atomic_init(&n->refs, 1);
    return n;
}

void gm_lr_node_retain(gm_lr_node *n)
{
    if (n)
        atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
}

void gm_lr_node_release(gm_mem *m, gm_lr_node *n)
{
    while (n) {
        if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1)
            return;
        gm_lr_node *parent = n->parent;
        gm_mem_free(m, n);
        n = parent;
    }
}

static inline uint64_t loop_limit(const gm_lr_table *t, uint64_t height)
{
    return t->loop_guard ? (uint64_t)t->loop_guard * (height + 2) : UINT64_MAX;
}

/* ---- the segmented exact path ------------------------------------------- */

typedef struct segment {
    struct segment *prev, *next;
    uint32_t n;
    uint32_t st[SEGMENT];
} segment;

typedef struct seg_run {
    const gm_lr_table *t;
    const gm_lr_node *base;
    segment *top;            /* never empty unless it is the first segment */
    uint64_t height;         /* entries in all segments */
    const uint32_t *terms;
    size_t n, i;
    uint32_t pending;        /* a state to push first in the next frame */
    bool pending_shift;      /* that push is the shift of terms[i] */
    uint64_t nred, limit;
} seg_run;

static inline uint32_t seg_top(const seg_run *R)
{
    return R->top->n ? R->top->st[R->top->n - 1] : R->base->state;
}

static void seg_pop(seg_run *R, uint32_t len)
{
    R->height -= len < R->height ? len : R->height;
    while (len) {
        segment *g = R->top;
        if (g->n >= len) {
            g->n -= len;
            break;
        }
        len -= g->n;
        g->n = 0;
        if (g->prev) {
            R->top = g->prev;
            continue;
        }
        while (len--)
            R->base = R->base->parent;
        break;
    }
    while (!R->top->n && R->top->prev)
        R->top = R->top->prev;
}

/* False when every segment is full: the caller recurses for a new one. */
static inline bool seg_push(seg_run *R, uint32_t s)
{
    segment *g = R->top;
    if (g->n == SEGMENT) {
        if (!g->next)
            return false;
        g = R->top = g->next;
    }
    g->st[g->n++] = s;
    R->height++;
    return true;
}

static bool seg_continue(seg_run *R)
{
    const gm_lr_table *t = R->t;
    segment mine;
    mine.prev = R->top;
    mine.next = NULL;
    mine.n = 0;
    if (R->top)
        R->top->next = &mine;
    R->top = &mine;
    if (R->pending != UINT32_MAX) {
        mine.st[mine.n++] = R->pending;
        R->height++;
        R->pending = UINT32_MAX;
        if (R->pending_shift) {
            R->i++;
            R->nred = 0;
            R->limit = loop_limit(t, R->base->depth + R->height);
        }
    }
    while (R->i < R->n) {
        uint32_t term = R->terms[R->i];
        gm_lr_action a = gm_lr_action_of(t, seg_top(R), term);
        switch (GM_LR_KIND(a)) {
        case GM_LR_SHIFT:
            if (!seg_push(R, GM_LR_ARG(a))) {
                R->pending = GM_LR_ARG(a);
                R->pending_shift = true;
                return seg_continue(R);
            }
            R->i++;
            R->nred = 0;
            R->limit = loop_limit(t, R->base->depth + R->height);
            break;
        case GM_LR_REDUCE: {
            uint32_t p = GM_LR_ARG(a);
            if (++R->nred > R->limit)
                return false;
            seg_pop(R, t->prod_len[p]);
            uint32_t g = gm_lr_goto_la(t, seg_top(R), t->prod_lhs[p], term);
            if (g == UINT32_MAX)
                return false; /* only in tables read from a file */
            if (!seg_push(R, g)) {
                R->pending = g;
                R->pending_shift = false;
                return seg_continue(R);
            }
            break;
        }
        case GM_LR_ACCEPT:
            return R->i + 1 == R->n;
        default:
            return false;
        }
    }
    return true;
}

bool gm_lr_can_feed_segmented(const gm_lr_table *t, const gm_lr_node *top, const uint32_t *terms, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (terms[i] >= t->nterms)
            return false;
    seg_run R;
    memset(&R, 0, sizeof R);
    R.t = t;
    R.base = top;
    R.terms = terms;
    R.n = n;
    R.pending = UINT32_MAX;
    R.limit = loop_limit(t, top->depth);
    return seg_continue(&R);
}

/* ---- the fast path --------------------------------------------------------- */

bool gm_lr_can_feed(const gm_lr_table *t, const gm_lr_node *top, const uint32_t *terms, size_t n)
{
    uint32_t ov[GM_LR_OVERLAY_MAX];
    uint32_t k = 0;
    const gm_lr_node *base = top;
    const gm_lr_action *act = t->action;
    const uint32_t *go = t->go;
    const uint32_t *plen = t->prod_len, *plhs = t->prod_lhs;
    const size_t nterms = t->nterms, nnt = t->nnonterms;
    uint32_t s = top->state;
    for (size_t i = 0; i < n; i++) {
        uint32_t term = terms[i];
        if (term >= nterms)
            return false;
        uint64_t nred = 0, limit = loop_limit(t, (uint64_t)base->depth + k);
        for (;;) {
            gm_lr_action a = act[s * nterms + term];
            if (GM_LR_KIND(a) == GM_LR_SHIFT) {
                if (k == GM_LR_OVERLAY_MAX)
                    return gm_lr_can_feed_segmented(t, top, terms, n);
                ov[k++] = s = GM_LR_ARG(a);
                break;
            }
            if (GM_LR_KIND(a) != GM_LR_REDUCE)
                return GM_LR_KIND(a) == GM_LR_ACCEPT && i + 1 == n;
            if (++nred > limit)
                return false;
            uint32_t p = GM_LR_ARG(a), len = plen[p];
            if (len <= k) {
                k -= len;
            } else {
                len -= k;
                k = 0;
                do
                    base = base->parent;
                while (--len);
            }
            s = k ? ov[k - 1] : base->state;
            s = go[s * nnt + plhs[p]];
            if (k == GM_LR_OVERLAY_MAX)
                return gm_lr_can_feed_segmented(t, top, terms, n);
            ov[k++] = s;
        }
    }
    return true;
}

bool gm_lr_accepts(const gm_lr_table *t, const gm_lr_node *top)
{
    return gm_lr_can_feed(t, top, &t->eof, 1);
}

void gm_lr_expected(const gm_lr_table *t, const gm_lr_node *top, uint64_t *bits)
{
    memset(bits, 0, GM_BITSET_WORDS(t->nterms) * sizeof *bits);
    const gm_lr_action *row = t->action + (size_t)top->state * t->nterms;
    for (uint32_t term = 0; term < t->nterms; term++)
        if (row[term] != GM_LR_ERROR && gm_lr_can_feed(t, top, &term, 1))
            gm_bitset_set(bits, term);
}

/* ---- feeding ---------------------------------------------------------------- */

/* The overlay of gm_lr_feed, on the C stack and grown from m past its size. */
typedef struct feed_overlay {
    uint32_t *st;
    uint32_t n, cap;
    bool heap;
} feed_overlay;

static int overlay_grow(gm_mem *m, feed_overlay *o)
{
    if (o->cap > UINT32_MAX / 2)
        return -1;
    uint32_t cap = o->cap * 2;
    uint32_t *st = gm_mem_reallocarray(m, o->heap ? o->st : NULL, cap, sizeof *st);
    if (!st)
        return -1;
    if (!o->heap)
        memcpy(st, o->st, (size_t)o->n * sizeof *st);
    o->st = st;
    o->cap = cap;
    o->heap = true;
    return 0;
}

gm_status gm_lr_feed(const gm_lr_table *t, gm_mem *m, gm_lr_node *top, uint32_t term, gm_lr_node **out)
{
    if (out)
        *out = NULL;
    if (!t || !m || !top || !out || term > t->eof)
        return GM_ERR_ARGUMENT;
    uint32_t local[GM_LR_OVERLAY_MAX];
    feed_overlay o = {local, 0, GM_LR_OVERLAY_MAX, false};
    gm_lr_node *base = top;
    gm_status st = GM_OK;
    uint64_t nred = 0, limit = loop_limit(t, top->depth);
    for (;;) {
        uint32_t s = o.n ? o.st[o.n - 1] : base->state;
        gm_lr_action a = gm_lr_action_of(t, s, term);
        uint32_t push;
        if (GM_LR_KIND(a) == GM_LR_SHIFT) {
            push = GM_LR_ARG(a);
        } else if (GM_LR_KIND(a) == GM_LR_REDUCE) {
            if (++nred > limit) {
                st = GM_ERR_REJECTED;
                goto done;
            }
            uint32_t p = GM_LR_ARG(a), len = t->prod_len[p];
            if (len <= o.n) {
                o.n -= len;
            } else {
                len -= o.n;
                o.n = 0;
                while (len--)
                    base = base->parent;
            }
            s = o.n ? o.st[o.n - 1] : base->state;
            push = gm_lr_goto_la(t, s, t->prod_lhs[p], term);
            if (push == UINT32_MAX) {
                st = GM_ERR_REJECTED; /* only in tables read from a file */
                goto done;
            }
        } else {
            st = GM_ERR_REJECTED; /* error, or $end (accepting is gm_lr_accepts) */
            goto done;
        }
        if (o.n == o.cap && overlay_grow(m, &o)) {
            st = GM_ERR_NOMEM;
            goto done;
        }
        o.st[o.n++] = push;
        if (GM_LR_KIND(a) == GM_LR_SHIFT)
            break;
    }
    /* Materialize the overlay above base; the first new node holds a new reference on base. */
    gm_lr_node *prev = base;
    gm_lr_node_retain(base);
    for (uint32_t i = 0; i < o.n; i++) {
        gm_lr_node *n = gm_mem_alloc(m, sizeof *n);
        if (!n) {
            gm_lr_node_release(m, prev);
            st = GM_ERR_NOMEM;
            goto done;
        }
        n->parent = prev;
        n->state = o.st[i];
        n->depth = prev->depth + 1;
        atomic_init(&n->refs, 1);
        prev = n;
    }
    *out = prev;
done:
    if (o.heap)
        gm_mem_free(m, o.st);
    return st;
}
