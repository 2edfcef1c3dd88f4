/* Always-accepted entries (accept.h, note [always-accepted entries]). */
#include "spanner/accept.h"

#include <string.h>

#include "base/hash.h"

enum {
    ANCHOR_MAX = 320,         /* states on an anchored stack before giving up (-> D): tokens
                                 of up to 128 bytes can push one state per byte */
    SEQ_DEPTH = 32            /* snapshots kept; longer sequences re-simulate their tail */
};

typedef enum verdict { V_ACCEPT, V_REJECT, V_DEPEND } verdict;

/* A stack whose bottom element st[0] is the anchor; nothing is known below it. */
typedef struct astack {
    uint32_t n;
    uint32_t st[ANCHOR_MAX];
} astack;

/* Feeds one element: V_ACCEPT when it shifts within the known part. */
static verdict afeed(const gm_lr_table *t, astack *a, uint32_t elem)
{
    if (elem & GM_SEQ_LINE)
        return V_DEPEND; /* the indentation layer reads state beside the stack */
    /* Tables with resolved conflicts may reduce in a loop (lr.h, loop_guard): past the
     * bound gm_lr_feed would use, leave the verdict to the real-stack walk. */
    uint64_t budget = t->loop_guard ? (uint64_t)t->loop_guard * (a->n + 2) : UINT64_MAX;
    for (;;) {
        gm_lr_action act = gm_lr_action_of(t, a->st[a->n - 1], elem);
        switch (GM_LR_KIND(act)) {
        case GM_LR_SHIFT:
            if (a->n == ANCHOR_MAX)
                return V_DEPEND;
            a->st[a->n++] = GM_LR_ARG(act);
            return V_ACCEPT;
        case GM_LR_REDUCE: {
            if (budget-- == 0)
                return V_DEPEND;
            uint32_t p = GM_LR_ARG(act), len = t->prod_len[p];
            if (len >= a->n)
                return V_DEPEND; /* the goto state depends on what lies below the anchor */
            a->n -= len;
            uint32_t g = gm_lr_goto_la(t, a->st[a->n - 1], t->prod_lhs[p], elem);
            if (g == UINT32_MAX)
                return V_REJECT; /* only in tables read from a file */
            a->st[a->n++] = g;
            break;
        }
        default:
            return V_REJECT;
        }
    }
}

/*
 * An element through the layers (afeed for terminals): a GM_POSTLEX_TRY one
 * feeds the inserted terminal first when its terminal is rejected (note
 * [offending-token insertion] in parser/postlex.h); a rejection on the
 * anchored stack is a rejection on every stack with that anchor, so the
 * choice is exact, and undecided (V_DEPEND) when the terminal is.
 */
static verdict lfeed(const gm_spanner *sp, astack *a, uint32_t elem)
{
    if ((elem & GM_SEQ_LINE) || !(elem & GM_POSTLEX_TRY))
        return afeed(sp->lr, a, elem);
    uint32_t term = elem & ~GM_POSTLEX_TRY;
    astack saved;
    saved.n = a->n;
    memcpy(saved.st, a->st, (size_t)a->n * sizeof *a->st);
    verdict v = afeed(sp->lr, a, term);
    if (v != V_REJECT)
        return v;
    a->n = saved.n;
    memcpy(a->st, saved.st, (size_t)saved.n * sizeof *a->st);
    v = afeed(sp->lr, a, sp->postlex->insert);
    return v == V_ACCEPT ? afeed(sp->lr, a, term) : v;
}

/*
 * The layer's open brackets along a sequence: exact, or at least `n` when
 * the entry's count was GM_ACCEPT_PARENS or more.
 */
typedef struct parens {
    int32_t n;
    bool at_least;
} parens;

/* Whether a line end is inside brackets for sure (the layer drops it). */
static bool joined(parens pc)
{
    return pc.n > 0;
}

/* After E shifted into a: does some T of the class's Prod set follow? */
static verdict prod_verdict(const gm_spanner *sp, const astack *a, uint32_t prod, parens pc)
{
    if (sp->prod_ignored[prod])
        return V_ACCEPT;
    verdict v = V_REJECT;
    for (uint32_t k = sp->prod_off[prod]; k < sp->prod_off[prod + 1]; k++) {
        uint32_t t = sp->prod_terms[k];
        if (GM_SEQ_IS_PAIR(t)) {
            v = V_DEPEND; /* decided on the real stack (runtime/mask.c) */
            continue;
        }
        if (t == GM_SEQ_PENDING_LINE) {
            /* A line end still growing fits inside brackets, or where _NEWLINE shifts
               (runtime/layer.c). */
            if (joined(pc))
                return V_ACCEPT;
            t = sp->postlex->newline;
            astack copy;
            copy.n = a->n;
            memcpy(copy.st, a->st, (size_t)a->n * sizeof *a->st);
            verdict r = afeed(sp->lr, &copy, t);
            if (r == V_ACCEPT)
                return V_ACCEPT;
            if (r == V_DEPEND || pc.at_least)
                v = V_DEPEND;
            continue;
        }
        astack copy;
        copy.n = a->n;
        memcpy(copy.st, a->st, (size_t)a->n * sizeof *a->st);
        verdict r = lfeed(sp, &copy, t);
        if (r == V_ACCEPT)
            return V_ACCEPT;
        if (r == V_DEPEND)
            v = V_DEPEND;
    }
    return v;
}

static bool classify(const gm_spanner *sp, const gm_profile *p, const uint32_t *anchor,
                     uint32_t nanchor, parens pc0, uint32_t level, uint32_t *bits,
                     uint8_t *verdicts);

/*
 * Class ci of p changed the contextual lexer after its element d, on the
 * known stack a: the walk would follow the rests of its group's tokens in a
 * suffix profile (runtime/mask.c, walk_suffixes); classified here on a
 * instead. The accepted suffix classes' tokens go into bits; V_REJECT when
 * every suffix class is decided (the group is then done with), V_DEPEND
 * when one is not (the walk does the whole group on the real stack).
 */
static verdict diverge(const gm_spanner *sp, const gm_profile *p, uint32_t ci, uint32_t d,
                       const astack *a, parens pc, uint32_t level, uint32_t *bits)
{
    const gm_profile *sub;
    const gm_spanner *to;
    if (!sp->suffixes || level >= GM_SUFFIX_DEPTH ||
        !sp->suffixes(sp->suffixes_ud, sp, p, ci, d, sp->lexer_of[a->st[a->n - 1]], &sub, &to))
        return V_DEPEND;
    uint8_t *v = gm_mem_alloc(sp->mem, sub->nclasses ? sub->nclasses : 1);
    if (!v || !classify(to, sub, a->st, a->n, pc, level + 1, bits, v)) {
        gm_mem_free(sp->mem, v);
        return V_DEPEND;
    }
    verdict out = V_REJECT;
    for (uint32_t i = 0; i < sub->nclasses; i++) {
        if (v[i] == V_ACCEPT)
            gm_tokset_or_into(sub->classes[i].tokens, bits, sp->nbits);
        else if (v[i] == V_DEPEND)
            out = V_DEPEND;
    }
    gm_mem_free(sp->mem, v);
    return out;
}

/*
 * Classifies every class of p at state s into verdicts[], simulating
 * shared prefixes once: snap[d] is the stack after the first d elements of
 * the current sequence; a prefix that was rejected or popped the anchor
 * decides every following class that shares it. Under the contextual
 * lexer a prefix after which the lexer changes is followed into its suffix
 * profile (diverge; level: suffix profiles inside one another), whose
 * accepted tokens go into bits. False when memory ran out.
 */
static bool classify(const gm_spanner *sp, const gm_profile *p, const uint32_t *anchor,
                     uint32_t nanchor, parens pc0, uint32_t level, uint32_t *bits,
                     uint8_t *verdicts)
{
    /* On the heap: 42 KB a level, and divergences nest. */
    astack *snap = gm_mem_alloc(sp->mem, (SEQ_DEPTH + 1) * sizeof *snap);
    if (!snap)
        return false;
    parens pc[SEQ_DEPTH + 1];
    const int8_t *bracket = sp->postlex && sp->postlex->indentation ? sp->postlex->bracket : NULL;
    pc[0] = pc0;
    snap[0].n = nanchor;
    memcpy(snap[0].st, anchor, (size_t)nanchor * sizeof *anchor);
    uint32_t valid = 0;                 /* snapshots 0..valid hold the current prefix */
    uint32_t stop = UINT32_MAX;         /* position whose element decided the prefix */
    verdict stop_verdict = V_REJECT;
    for (uint32_t ci = 0; ci < p->nclasses; ci++) {
        const gm_class *c = &p->classes[ci];
        if (stop != UINT32_MAX && c->shared > stop) {
            verdicts[ci] = (uint8_t)stop_verdict; /* the same deciding prefix */
            continue;
        }
        stop = UINT32_MAX;
        uint32_t d = c->shared < valid ? c->shared : valid;
        verdict v = V_ACCEPT;
        for (; d < c->len; d++) {
            uint32_t from = d < SEQ_DEPTH ? d : SEQ_DEPTH;
            uint32_t to = d + 1 < SEQ_DEPTH ? d + 1 : SEQ_DEPTH;
            if (from != to) {
                snap[to].n = snap[from].n;
                memcpy(snap[to].st, snap[from].st, (size_t)snap[from].n * sizeof *snap[to].st);
                pc[to] = pc[from];
            }
            uint32_t e = p->seqs[c->seq + d];
            if ((e & GM_SEQ_LINE) && joined(pc[to]))
                continue; /* inside brackets the layer drops the line end */
            v = lfeed(sp, &snap[to], e);
            if (v == V_ACCEPT && bracket && !(e & GM_SEQ_LINE))
                pc[to].n += bracket[e & ~GM_POSTLEX_TRY];
            /* The contextual lexer changes here (note [contextual masks] in
             * runtime/ctx_spanners.h): the group of classes sharing this prefix is decided
             * by its suffix profile. */
            if (v == V_ACCEPT && sp->lexer_of &&
                sp->lexer_of[snap[to].st[snap[to].n - 1]] != sp->lexer_id)
                v = diverge(sp, p, ci, d, &snap[to], pc[to], level, bits);
            if (v != V_ACCEPT) {
                stop = d;
                stop_verdict = v;
                break;
            }
        }
        if (stop != UINT32_MAX) {
            valid = stop < SEQ_DEPTH ? stop : SEQ_DEPTH - 1;
            verdicts[ci] = (uint8_t)v;
            continue;
        }
        valid = c->len < SEQ_DEPTH ? c->len : SEQ_DEPTH - 1;
        uint32_t end = c->len < SEQ_DEPTH ? c->len : SEQ_DEPTH;
        /* A switch class whose lexer stayed: its lexer fails on the rest. */
        verdicts[ci] = c->prod == GM_PROD_SWITCH
                           ? V_REJECT
                           : (uint8_t)prod_verdict(sp, &snap[end], c->prod, pc[end]);
    }
    gm_mem_free(sp->mem, snap);
    return true;
}

static void entry_free(gm_mem *m, gm_accept_entry *e)
{
    if (!e)
        return;
    gm_mem_free(m, e->dep);
    gm_mem_free(m, e->dep_shared);
    gm_mem_free(m, e);
}

/* Common prefix length of two classes' sequences. */
static uint32_t common_prefix(const gm_profile *p, const gm_class *a, const gm_class *b)
{
    uint32_t n = a->len < b->len ? a->len : b->len, k = 0;
    while (k < n && p->seqs[a->seq + k] == p->seqs[b->seq + k])
        k++;
    return k;
}

static gm_accept_entry *entry_build(gm_spanner *sp, const gm_profile *p, const uint32_t *anchor,
                                    uint32_t nanchor, uint32_t nparens)
{
    gm_mem *m = sp->mem;
    gm_accept_entry *e = gm_mem_calloc(m, 1, sizeof *e);
    uint8_t *verdicts = gm_mem_alloc(m, p->nclasses ? p->nclasses : 1);
    uint32_t *bits = NULL;
    if (!e || !verdicts)
        goto fail;
    e->profile = p;
    memcpy(e->anchor, anchor, (size_t)nanchor * sizeof *anchor);
    e->nanchor = nanchor;
    e->parens = nparens;
    /* The accepted tokens: those of divergences decided in classify, then the classes'. */
    bits = gm_mem_calloc(m, GM_MASK_WORDS(sp->nbits), sizeof *bits);
    parens pc0 = {(int32_t)nparens, nparens == GM_ACCEPT_PARENS};
    if (!bits || !classify(sp, p, anchor, nanchor, pc0, 0, bits, verdicts))
        goto fail;
    for (uint32_t ci = 0; ci < p->nclasses; ci++) {
        e->ndep += verdicts[ci] == V_DEPEND;
        e->nacc += verdicts[ci] == V_ACCEPT;
        e->nrej += verdicts[ci] == V_REJECT;
    }
    e->dep = gm_mem_alloc(m, (size_t)(e->ndep ? e->ndep : 1) * sizeof *e->dep);
    e->dep_shared = gm_mem_alloc(m, (size_t)(e->ndep ? e->ndep : 1) * sizeof *e->dep_shared);
    if (!e->dep || !e->dep_shared)
        goto fail;
    uint32_t k = 0;
    for (uint32_t ci = 0; ci < p->nclasses; ci++) {
        if (verdicts[ci] != V_DEPEND)
            continue;
        e->dep[k] = ci;
        e->dep_shared[k] = k ? common_prefix(p, &p->classes[e->dep[k - 1]], &p->classes[ci]) : 0;
        k++;
    }
    for (uint32_t ci = 0; ci < p->nclasses; ci++)
        if (verdicts[ci] == V_ACCEPT)
            gm_tokset_or_into(p->classes[ci].tokens, bits, sp->nbits);
    /* Entries of other stack tops mostly accept the same set: pooled (note [shared token
     * sets]). */
    if (!(e->accepted = gm_tokpool_set(sp->pool, bits, sp->variant & GM_VARIANT_LISTS_ONLY)))
        goto fail;
    gm_mem_free(m, bits);
    gm_mem_free(m, verdicts);
    return e;
fail:
    gm_mem_free(m, bits);
    gm_mem_free(m, verdicts);
    entry_free(m, e);
    return NULL;
}

static uint32_t bucket_of(const gm_profile *p, const uint32_t *anchor, uint32_t n,
                          uint32_t nparens, uint32_t nbuckets)
{
    uint64_t h = gm_hash_mix64((uintptr_t)p) + n + ((uint64_t)nparens << 32);
    for (uint32_t i = 0; i < n; i++)
        h = gm_hash_mix64(h * 0x9e3779b97f4a7c15ULL + anchor[i]);
    return (uint32_t)(h % nbuckets);
}

static const gm_accept_entry *find(const gm_accept_entry *e, const gm_profile *p,
                                   const uint32_t *anchor, uint32_t n, uint32_t nparens)
{
    for (; e; e = e->next)
        if (e->profile == p && e->nanchor == n && e->parens == nparens &&
            !memcmp(e->anchor, anchor, (size_t)n * sizeof *anchor))
            return e;
    return NULL;
}

const gm_accept_entry *gm_accept_entry_get(gm_spanner *sp, const gm_profile *p,
                                           const uint32_t *anchor, uint32_t n, int32_t open)
{
    if (open < 0)
        return NULL; /* not reached through the layer; no entry for it */
    uint32_t np = open < GM_ACCEPT_PARENS ? (uint32_t)open : GM_ACCEPT_PARENS;
    _Atomic(_Atomic(gm_accept_entry *) *) *slot =
        p->item_tok ? &sp->suffix_accept : &sp->accept_rows[gm_spanner_slot(sp, p->state)];
    uint32_t nbuckets = p->item_tok ? GM_ACCEPT_SUFFIX_BUCKETS : GM_ACCEPT_BUCKETS;
    _Atomic(gm_accept_entry *) *row = atomic_load_explicit(slot, memory_order_acquire);
    if (!row) {
        row = gm_mem_calloc(sp->mem, nbuckets, sizeof *row);
        if (!row)
            return NULL;
        for (uint32_t i = 0; i < nbuckets; i++)
            atomic_init(&row[i], NULL);
        _Atomic(gm_accept_entry *) *expected = NULL;
        if (!atomic_compare_exchange_strong_explicit(slot, &expected, row, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            gm_mem_free(sp->mem, row);
            row = expected;
        }
    }
    _Atomic(gm_accept_entry *) *bucket = &row[bucket_of(p, anchor, n, np, nbuckets)];
    gm_accept_entry *head = atomic_load_explicit(bucket, memory_order_acquire);
    const gm_accept_entry *found = find(head, p, anchor, n, np);
    if (found)
        return found;
    gm_accept_entry *e = entry_build(sp, p, anchor, n, np);
    if (!e)
        return NULL;
    /* Publish at the head of the chain; a racing thread may have added the same key. */
    for (;;) {
        e->next = head;
        if (atomic_compare_exchange_weak_explicit(bucket, &head, e, memory_order_acq_rel,
                                                  memory_order_acquire))
            return e;
        found = find(head, p, anchor, n, np);
        if (found) {
            entry_free(sp->mem, e);
            return found;
        }
    }
}

static void free_row(gm_mem *m, _Atomic(gm_accept_entry *) *row, uint32_t nbuckets)
{
    if (!row)
        return;
    for (uint32_t b = 0; b < nbuckets; b++) {
        gm_accept_entry *e = atomic_load(&row[b]);
        while (e) {
            gm_accept_entry *next = e->next;
            entry_free(m, e);
            e = next;
        }
    }
    gm_mem_free(m, row);
}

void gm_accept_free_all(gm_spanner *sp)
{
    free_row(sp->mem, atomic_load(&sp->suffix_accept), GM_ACCEPT_SUFFIX_BUCKETS);
    atomic_store(&sp->suffix_accept, NULL);
    if (!sp->accept_rows)
        return;
    for (uint32_t i = 0; i < sp->nslots; i++)
        free_row(sp->mem, atomic_load(&sp->accept_rows[i]), GM_ACCEPT_BUCKETS);
    gm_mem_free(sp->mem, sp->accept_rows);
    sp->accept_rows = NULL;
}
