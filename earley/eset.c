/*
 * The Earley recognizer over rule automata: one step (scan a symbol, then
 * complete and predict to closure), hash-consed sets and the transition
 * cache (note [hash-consed Earley sets] and note [earley pruning] in
 * eengine.h).
 *
 * Nullable rules are handled as Aycock and Horspool do: an item that
 * predicts a nullable rule also moves past it at once, so a completion
 * whose origin is the set being built (an empty derivation) has nothing
 * left to do and is skipped. Left recursion needs nothing special: a rule
 * is predicted once per set (items are deduplicated), and its completion
 * advances every item waiting on it, the predicting item included.
 *
 * note [transition arrays]
 * What a set does with a byte depends only on the byte's class (fsm.h), so
 * an interned set caches its successors in an array over byte classes: a
 * step that was taken before is one load. The arrays hold no references
 * (a set's successors may include itself: references would make cycles);
 * their targets are interned, so alive while the tables are, and emptying
 * the tables frees every array first. Special-token symbols go through the
 * transition cache, which holds references.
 */
#include <stdlib.h>
#include <string.h>

#include "earley/eengine.h"
#include "base/error.h"
#include "base/hash.h"

enum { TABLE_MIN_SLOTS = 1024 };

/* ---- sets ---------------------------------------------------------------- */

static size_t set_bytes(uint32_t nitems, uint32_t nwait)
{
    return sizeof(gm_estate) + (size_t)nitems * sizeof(gm_eitem) +
           (size_t)nwait * sizeof(gm_ewait);
}

void gm_estate_retain(gm_estate *s)
{
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

static bool drop_ref(gm_estate *s)
{
    return atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1;
}

/* Frees s and every set only it kept alive (iteratively: origin chains are
   as deep as the input is nested). */
/* A set's mask memo goes with the set (the mask cache made it, maskcache.c). */
static void free_memo(gm_eengine *e, gm_ememo *mo)
{
    size_t bytes = sizeof *mo + (size_t)mo->n * 4;
    atomic_fetch_sub(&e->memo_bytes, bytes);
    gm_mem_free(e->mem, mo);
}

void gm_eset_free(gm_eengine *e, gm_estate *s)
{
    gm_estate *todo = s;
    /* The list of sets to free is threaded through their `proj` fields
       once those are released. */
    while (todo) {
        gm_estate *x = todo;
        gm_estate *p = atomic_load(&x->proj);
        todo = NULL;
        /* Pop: the rest of the list was stored in x->hash's place. */
        todo = (gm_estate *)(uintptr_t)x->hash;
        if (p && p != x && drop_ref(p)) {
            p->hash = (uint64_t)(uintptr_t)todo;
            todo = p;
        }
        for (uint32_t i = 0; i < x->nitems; i++) {
            gm_estate *o = x->items[i].origin;
            if (o && drop_ref(o)) {
                o->hash = (uint64_t)(uintptr_t)todo;
                todo = o;
            }
        }
        void *memo = atomic_load(&x->memo);
        if (memo)
            free_memo(e, memo);
        gm_mem_free(e->mem, x->next);
        for (uint32_t i = 0; i < x->ncomp; i++)
            gm_mem_free(e->mem, x->comp[i].items);
        gm_mem_free(e->mem, x->comp);
        gm_mem_free(e->mem, x);
    }
}

void gm_estate_release(gm_eengine *e, gm_estate *s)
{
    if (s && drop_ref(s)) {
        s->hash = 0;
        gm_eset_free(e, s);
    }
}

static uint64_t items_hash(const gm_eitem *it, uint32_t n, uint8_t flags)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ flags ^ ((uint64_t)n << 8);
    for (uint32_t i = 0; i < n; i++) {
        h = gm_hash_mix64(h ^ it[i].state ^ ((uint64_t)it[i].count << 32));
        h = gm_hash_mix64(h ^ (uint64_t)(uintptr_t)it[i].origin);
    }
    return h;
}

static bool same_set(const gm_estate *s, const gm_eitem *it, uint32_t n, uint8_t flags,
                     uint64_t h)
{
    return s->hash == h && s->nitems == n &&
           s->flags == flags &&
           (n == 0 || memcmp(s->items, it, (size_t)n * sizeof *it) == 0);
}

/* The reference edges an item waits on: none for a full repetition (gm_eitem_rep_full). */
static uint32_t wait_edges(const gm_egrammar *g, const gm_eitem *it)
{
    return gm_eitem_rep_full(g, it) ? 0 : g->ref_off[it->state + 1] - g->ref_off[it->state];
}

static int cmp_item(const void *a, const void *b)
{
    const gm_eitem *x = a, *y = b;
    if (x->state != y->state)
        return x->state < y->state ? -1 : 1;
    if (x->count != y->count)
        return x->count < y->count ? -1 : 1;
    uintptr_t p = (uintptr_t)x->origin, q = (uintptr_t)y->origin;
    return p < q ? -1 : p > q;
}

/* Sorts it[0..n) as cmp_item orders them: sets are small (a handful of
   items after pruning), where an insertion sort beats qsort's calls
   through a comparison pointer. */
static void sort_items(gm_eitem *it, size_t n)
{
    if (n > 16) {
        qsort(it, n, sizeof *it, cmp_item);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        gm_eitem x = it[i];
        size_t j = i;
        for (; j > 0 && cmp_item(&x, &it[j - 1]) < 0; j--)
            it[j] = it[j - 1];
        it[j] = x;
    }
}

static int cmp_wait(const void *a, const void *b)
{
    const gm_ewait *x = a, *y = b;
    if (x->rule != y->rule)
        return x->rule < y->rule ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

/* gm_estate.slack of a set of items it[0..n) (note [counted loops] in closed.c). */
static uint32_t set_slack(const gm_egrammar *g, const gm_eitem *it, uint32_t n)
{
    uint32_t slack = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const gm_frule *fr = &g->rules[g->state_rule[it[i].state]];
        if (!fr->repeat || !it[i].origin)
            continue;
        uint32_t c = it[i].count >> 1;
        if (fr->rep_max != GM_EX_INF && fr->rep_max - c < slack)
            slack = fr->rep_max - c;
    }
    return slack;
}

/* A new set object holding copies of it[0..n) (origins retained). */
static gm_estate *new_set(gm_eengine *e, const gm_eitem *it, uint32_t n, uint8_t flags,
                          uint64_t h)
{
    const gm_egrammar *g = e->g;
    uint32_t nwait = 0;
    for (uint32_t i = 0; i < n; i++)
        nwait += wait_edges(g, &it[i]);
    gm_estate *s = gm_mem_alloc(e->mem, set_bytes(n, nwait));
    if (!s)
        return NULL;
    atomic_init(&s->refs, 1);
    s->nitems = n;
    s->nwait = nwait;
    s->flags = flags;
    s->interned = 0;
    s->hash = h;
    atomic_init(&s->proj, NULL);
    atomic_init(&s->memo, NULL);
    s->next = NULL;
    s->comp = NULL;
    s->ncomp = s->comp_cap = 0;
    memset(s->loops, 0, sizeof s->loops);
    memset(s->shifts, 0, sizeof s->shifts);
    memset(s->noloop, 0, sizeof s->noloop);
    s->u8loop = 0;
    s->slack = set_slack(g, it, n);
    s->items = (gm_eitem *)(s + 1);
    s->wait = (gm_ewait *)(s->items + n);
    if (n)
        memcpy(s->items, it, (size_t)n * sizeof *it);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        gm_estate_retain(it[i].origin);
        uint32_t j0 = g->ref_off[it[i].state];
        for (uint32_t j = j0; j < j0 + wait_edges(g, &it[i]); j++) {
            s->wait[k].rule = g->refs[j].sym;
            s->wait[k++].item = i;
        }
    }
    if (nwait > 1)
        qsort(s->wait, nwait, sizeof *s->wait, cmp_wait);
    return s;
}

/* ---- the tables ------------------------------------------------------------ */

static void tables_clear(gm_eengine *e)
{
    gm_estate **sets = e->sets;
    gm_etrans *tc = e->tc;
    size_t ns = e->sets_slots, nt = e->tc_slots;
    for (size_t i = 0; i < nt; i++)
        if (tc[i].from) {
            gm_estate *from = tc[i].from, *to = tc[i].to;
            tc[i].from = tc[i].to = NULL;
            gm_estate_release(e, from);
            gm_estate_release(e, to);
        }
    e->tc_n = 0;
    for (size_t i = 0; i < ns; i++)
        if (sets[i]) {
            /* A set leaving the table never comes back (equal sets built
               later are new objects): it caches no transition again, as
               its successors may not outlive the table. */
            gm_mem_free(e->mem, sets[i]->next);
            sets[i]->next = NULL;
            memset(sets[i]->loops, 0, sizeof sets[i]->loops);
            memset(sets[i]->shifts, 0, sizeof sets[i]->shifts);
            memset(sets[i]->noloop, 0, sizeof sets[i]->noloop);
            sets[i]->u8loop = 0;
            sets[i]->interned = 0;
        }
    for (size_t i = 0; i < ns; i++)
        if (sets[i]) {
            gm_estate *s = sets[i];
            sets[i] = NULL;
            gm_estate_release(e, s);
        }
    e->sets_n = 0;
    e->table_bytes = 0;
}

static int sets_grow(gm_eengine *e)
{
    size_t nslots = e->sets_slots ? e->sets_slots * 2 : TABLE_MIN_SLOTS;
    gm_estate **t = gm_mem_calloc(e->mem, nslots, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < e->sets_slots; i++) {
        gm_estate *s = e->sets[i];
        if (!s)
            continue;
        size_t j = s->hash & (nslots - 1);
        while (t[j])
            j = (j + 1) & (nslots - 1);
        t[j] = s;
    }
    gm_mem_free(e->mem, e->sets);
    e->sets = t;
    e->sets_slots = nslots;
    return 0;
}

/*
 * The interned set equal to it[0..n) with flags: a new reference in *out
 * (an existing object, or a new one added to the table).
 */
static gm_status intern(gm_eengine *e, const gm_eitem *it, uint32_t n, uint8_t flags,
                        gm_estate **out, gm_error *err)
{
    uint64_t h = items_hash(it, n, flags);
    bool share = !(e->variant & GM_EVARIANT_NO_STATE_CACHE);
    if (share && e->sets_slots) {
        for (size_t j = h & (e->sets_slots - 1); e->sets[j]; j = (j + 1) & (e->sets_slots - 1))
            if (same_set(e->sets[j], it, n, flags, h)) {
                gm_estate_retain(e->sets[j]);
                *out = e->sets[j];
                return GM_OK;
            }
    }
    gm_estate *s = new_set(e, it, n, flags, h);
    if (!s)
        return gm_mem_fail(e->mem, err, "an Earley set");
    if (share) {
        if ((e->sets_n + 1) * 2 > e->sets_slots && sets_grow(e)) {
            gm_estate_release(e, s);
            return gm_mem_fail(e->mem, err, "the Earley set table");
        }
        size_t j = h & (e->sets_slots - 1);
        while (e->sets[j])
            j = (j + 1) & (e->sets_slots - 1);
        gm_estate_retain(s);
        s->interned = 1;
        e->sets[j] = s;
        e->sets_n++;
        e->table_bytes += set_bytes(s->nitems, s->nwait);
    }
    *out = s;
    return GM_OK;
}

static size_t tc_slot(const gm_eengine *e, const gm_estate *from, uint32_t sym)
{
    uint64_t h = gm_hash_mix64((uint64_t)(uintptr_t)from * 31 + sym);
    return h & (e->tc_slots - 1);
}

static int tc_put(gm_eengine *e, gm_estate *from, uint32_t sym, gm_estate *to)
{
    if ((e->tc_n + 1) * 2 > e->tc_slots) {
        size_t nslots = e->tc_slots ? e->tc_slots * 2 : TABLE_MIN_SLOTS;
        gm_etrans *t = gm_mem_calloc(e->mem, nslots, sizeof *t);
        if (!t)
            return -1;
        gm_etrans *old = e->tc;
        size_t nold = e->tc_slots;
        e->tc = t;
        e->tc_slots = nslots;
        for (size_t i = 0; i < nold; i++)
            if (old[i].from) {
                size_t j = tc_slot(e, old[i].from, old[i].sym);
                while (t[j].from)
                    j = (j + 1) & (nslots - 1);
                t[j] = old[i];
            }
        gm_mem_free(e->mem, old);
    }
    size_t j = tc_slot(e, from, sym);
    while (e->tc[j].from)
        j = (j + 1) & (e->tc_slots - 1);
    gm_estate_retain(from);
    gm_estate_retain(to);
    e->tc[j].from = from;
    e->tc[j].sym = sym;
    e->tc[j].to = to;
    e->tc_n++;
    e->table_bytes += sizeof(gm_etrans) * 2;
    return 0;
}

/* ---- building one set ------------------------------------------------------- */

gm_status gm_escratch_init_items(gm_eengine *e, gm_escratch *w, gm_error *err)
{
    (void)e;
    (void)err;
    w->items.n = 0;
    w->flags = 0;
    return GM_OK;
}

static uint64_t item_key_hash(uint32_t state, uint32_t count, const gm_estate *origin)
{
    return gm_hash_mix64(((uint64_t)state << 32 | count) ^
                         gm_hash_mix64((uint64_t)(uintptr_t)origin));
}

/*
 * The dedup table of the items being built: slots hold generation << 32 |
 * (index + 1), so starting a new set is one increment, not a clear.
 */
static int dedup_rebuild(gm_eengine *e, gm_escratch *w, size_t want)
{
    size_t nslots = 64;
    while (nslots < want * 2)
        nslots *= 2;
    if (!w->slots || nslots - 1 > w->slot_mask) {
        gm_mem_free(e->mem, w->slots);
        w->slots = gm_mem_calloc(e->mem, nslots, sizeof *w->slots);
        if (!w->slots) {
            w->slot_mask = 0;
            return -1;
        }
        w->slot_mask = (uint32_t)(nslots - 1);
    }
    if (++w->gen == 0) {
        memset(w->slots, 0, ((size_t)w->slot_mask + 1) * sizeof *w->slots);
        w->gen = 1;
    }
    uint64_t tag = (uint64_t)w->gen << 32;
    for (size_t i = 0; i < w->items.n; i++) {
        const gm_eitem *it = &w->items.v[i];
        size_t j = item_key_hash(it->state, it->count, it->origin) & w->slot_mask;
        while ((w->slots[j] >> 32) == w->gen)
            j = (j + 1) & w->slot_mask;
        w->slots[j] = tag | (uint32_t)(i + 1);
    }
    return 0;
}

/*
 * Spends n units of w's work budget (gm_limits.max_earley_work) on an item of
 * automaton state `state`: 0, or -1 with *st = GM_ERR_LIMIT naming its rule
 * past the budget. An ambiguous grammar (s ::= s s | "a" | "") adds items
 * from every earlier position to every set and completes them again and
 * again: the work of one step grows with the output, and without a bound
 * a mask would take ever longer instead of failing.
 */
static int spend(gm_eengine *e, gm_escratch *w, uint64_t n, uint32_t state, gm_status *st,
                 gm_error *err)
{
    w->work += n;
    if (!w->work_max || w->work <= w->work_max)
        return 0;
    /* Name the rule most of the set being built belongs to (the ambiguous one), else
       the rule of the item at hand. Counted only now: failing is rare. */
    const gm_egrammar *g = e->g;
    uint32_t rule = g->state_rule[state];
    uint32_t *count = gm_mem_calloc(e->mem, g->nrules ? g->nrules : 1, sizeof *count);
    for (size_t i = 0; count && i < w->items.n; i++) {
        uint32_t r = g->state_rule[w->items.v[i].state];
        if (++count[r] > count[rule])
            rule = r;
    }
    gm_mem_free(e->mem, count);
    *st = gm_error_set(err, GM_ERR_LIMIT,
                       "an Earley mask or step took more than %llu units of work (items added, "
                       "found again or completed; gm_limits.max_earley_work) in rule '%s': the "
                       "grammar is too ambiguous here",
                       (unsigned long long)w->work_max,
                       g->names + g->rules[rule].name);
    return -1;
}

/* Adds an item unless present; *idx (may be NULL) gets its index. 0, or -1 on failure (*st set). */
static int add_item_at(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                       gm_estate *origin, uint32_t *idx, gm_status *st, gm_error *err)
{
    if (spend(e, w, 1, state, st, err))
        return -1;
    size_t j = item_key_hash(state, count, origin) & w->slot_mask;
    for (uint64_t v; ((v = w->slots[j]) >> 32) == w->gen; j = (j + 1) & w->slot_mask) {
        const gm_eitem *it = &w->items.v[(uint32_t)v - 1];
        if (it->state == state && it->count == count && it->origin == origin) {
            if (idx)
                *idx = (uint32_t)v - 1;
            return 0;
        }
    }
    if (w->items.n >= e->max_items) {
        *st = gm_error_set(err, GM_ERR_LIMIT,
                           "an Earley set would hold more than %u items (max_nfa_states)",
                           e->max_items);
        return -1;
    }
    gm_eitem it = {state, count, origin};
    if (gm_vec_push(e->mem, &w->items, it) || gm_vec_push(e->mem, &w->done, 0)) {
        w->items.n = w->done.n < w->items.n ? w->done.n : w->items.n;
        *st = gm_mem_fail(e->mem, err, "an Earley set");
        return -1;
    }
    if (idx)
        *idx = (uint32_t)w->items.n - 1;
    if (w->items.n * 2 > (size_t)w->slot_mask + 1) {
        if (dedup_rebuild(e, w, w->items.n)) {
            *st = gm_mem_fail(e->mem, err, "an Earley set");
            return -1;
        }
    } else {
        w->slots[j] = (uint64_t)w->gen << 32 | (uint32_t)w->items.n;
    }
    return 0;
}

static int add_item(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                    gm_estate *origin, gm_status *st, gm_error *err)
{
    return add_item_at(e, w, state, count, origin, NULL, st, err);
}

static gm_status begin(gm_eengine *e, gm_escratch *w, gm_error *err)
{
    w->items.n = 0;
    w->done.n = 0;
    w->flags = 0;
    if (!w->predicted) {
        w->predicted = gm_mem_calloc(e->mem, e->g->nrules ? e->g->nrules : 1,
                                     sizeof *w->predicted);
        if (!w->predicted)
            return gm_mem_fail(e->mem, err, "an Earley set");
    }
    uint32_t gen0 = w->gen;
    if (dedup_rebuild(e, w, 32))
        return gm_mem_fail(e->mem, err, "an Earley set");
    if (w->gen < gen0) /* wrapped: old stamps could match */
        memset(w->predicted, 0, (size_t)e->g->nrules * sizeof *w->predicted);
    return GM_OK;
}

/* The origin an item advanced from origin `o` of set `s` records. */
static gm_estate *origin_of(gm_estate *o, gm_estate *s)
{
    return o ? o : s;
}

/*
 * Closes w->items: completion, repetition iteration ends, prediction.
 * `self` is what a NULL origin means for items taken from elsewhere (not
 * used: items in w always have explicit origins or NULL = the new set).
 */
static bool item_alive(const gm_egrammar *g, const gm_eitem *it);

enum { COMP_MAX_DEPTH = 2000 };

/*
 * note [completion memos]
 * Completing rule r with origin o adds to the set being built the items of
 * o that wait on r, moved past it, and for those that complete their own
 * (normal) rule at once, the completion of that rule at their origin, and
 * so on up: a function of (o, r) alone. It is memoized on o, keeping the
 * moved items that can still do something (and repetition items, whose
 * iteration ends the closure handles) and the flags raised. A chain of
 * completions — right recursion such as `u ::= "-" f  f ::= u | x` read
 * on "-------x" — then costs one memo per level once, instead of a climb
 * up the whole chain at every step: Leo's optimization in the form that
 * persistent sets allow. The closure marks the items a memo brought as
 * done, so that it does not complete them again.
 */
static gm_status completion(gm_eengine *e, gm_escratch *w, gm_estate *o, uint32_t r,
                            const gm_ecomp **out, gm_error *err, int depth)
{
    const gm_egrammar *g = e->g;
    *out = NULL;
    for (uint32_t i = 0; i < o->ncomp; i++)
        if (o->comp[i].rule == r) {
            *out = &o->comp[i];
            return GM_OK;
        }
    if (depth > COMP_MAX_DEPTH)
        return GM_OK; /* the closure climbs by itself */
    GM_VEC(gm_eitem) list = {0};
    uint8_t flags = 0;
    gm_status st = GM_OK;
    if (o->flags & GM_ES_OUTER)
        flags |= GM_ES_ESCAPED;
    if (r == g->root && (o->flags & GM_ES_START))
        flags |= GM_ES_ACCEPTING;
    uint32_t lo = 0, hi = o->nwait;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (o->wait[mid].rule < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < o->nwait && o->wait[lo].rule == r; lo++) {
        const gm_eitem *wi = &o->items[o->wait[lo].item];
        if (spend(e, w, 1, wi->state, &st, err))
            goto out;
        const gm_frule *ar = &g->rules[g->state_rule[wi->state]];
        gm_eitem a = {gm_fsm_ref_next(g, wi->state, r), wi->count | (ar->repeat ? 1u : 0u),
                      origin_of(wi->origin, o)};
        if (!ar->repeat && (g->state_flags[a.state] & GM_FS_ACCEPT)) {
            const gm_ecomp *sub;
            if ((st = completion(e, w, a.origin, g->state_rule[a.state], &sub, err,
                                 depth + 1)) != GM_OK)
                goto out;
            if (!sub)
                goto out; /* too deep: not memoized */
            flags |= sub->flags;
            if (spend(e, w, sub->n, a.state, &st, err))
                goto out;
            if (sub->n && gm_vec_reserve(e->mem, &list, list.n + sub->n))
                goto nomem;
            for (uint32_t k = 0; k < sub->n; k++)
                list.v[list.n++] = sub->items[k];
        }
        if ((ar->repeat || item_alive(g, &a)) && gm_vec_push(e->mem, &list, a))
            goto nomem;
    }
    if (list.n > 1) {
        /* Paths up may meet (ambiguity): keep each item once. */
        sort_items(list.v, list.n);
        size_t k = 1;
        for (size_t i = 1; i < list.n; i++)
            if (cmp_item(&list.v[k - 1], &list.v[i]))
                list.v[k++] = list.v[i];
        list.n = k;
    }
    if (o->ncomp == o->comp_cap) {
        uint32_t nc = o->comp_cap ? o->comp_cap * 2 : 2;
        gm_ecomp *c = gm_mem_reallocarray(e->mem, o->comp, nc, sizeof *c);
        if (!c)
            goto nomem;
        o->comp = c;
        o->comp_cap = nc;
    }
    gm_ecomp *c = &o->comp[o->ncomp];
    c->rule = r;
    c->n = (uint32_t)list.n;
    c->flags = flags;
    c->items = list.v;
    list.v = NULL;
    o->ncomp++;
    *out = c;
    goto out;
nomem:
    st = gm_mem_fail(e->mem, err, "an Earley set");
out:
    gm_vec_free(e->mem, &list);
    return st;
}

/* Adds the prediction closure of rule b (note [prediction closures]), once per set. */
static int predict(gm_eengine *e, gm_escratch *w, uint32_t b, gm_status *st, gm_error *err)
{
    const gm_egrammar *g = e->g;
    if (w->predicted[b] == w->gen)
        return 0;
    w->predicted[b] = w->gen;
    for (uint32_t k = g->pred_off[b]; k < g->pred_off[b + 1]; k++)
        if (add_item(e, w, g->pred[k], 0, NULL, st, err))
            return -1;
    return 0;
}

/*
 * Closes w->items: completion, repetition iteration ends, prediction.
 * Items with this set as origin (NULL) come from prediction closures and
 * need nothing more.
 */
static gm_status closure(gm_eengine *e, gm_escratch *w, gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_status st = GM_OK;
    for (size_t i = 0; i < w->items.n; i++) {
        gm_eitem it = w->items.v[i];
        if (!it.origin)
            continue;
        uint32_t q = it.state;
        uint8_t f = g->state_flags[q];
        uint32_t r = g->state_rule[q];
        const gm_frule *fr = &g->rules[r];
        bool complete;
        if (fr->repeat) {
            uint32_t c = it.count >> 1;
            if ((f & GM_FS_ITER_END) && (it.count & 1)) {
                uint32_t c1 = c + 1;
                if (fr->rep_max == GM_EX_INF && c1 > fr->rep_min)
                    c1 = fr->rep_min;
                if ((fr->rep_max == GM_EX_INF || c1 <= fr->rep_max) &&
                    add_item(e, w, fr->start, c1 << 1, it.origin, &st, err))
                    return st;
            }
            complete = (f & GM_FS_REP_START) && c >= fr->rep_min;
        } else {
            complete = (f & GM_FS_ACCEPT) != 0;
        }
        if (complete && !w->done.v[i] && !(e->variant & GM_EVARIANT_NO_STATE_CACHE)) {
            const gm_ecomp *c;
            if ((st = completion(e, w, it.origin, r, &c, err, 0)) != GM_OK)
                return st;
            if (c) {
                w->flags |= c->flags;
                for (uint32_t k = 0; k < c->n; k++) {
                    uint32_t idx;
                    if (add_item_at(e, w, c->items[k].state, c->items[k].count, c->items[k].origin,
                                    &idx, &st, err))
                        return st;
                    w->done.v[idx] = 1;
                }
                complete = false;
            }
        }
        if (complete && !w->done.v[i]) {
            gm_estate *o = it.origin;
            if (o->flags & GM_ES_OUTER) {
                w->flags |= GM_ES_ESCAPED;
            } else {
                if (r == g->root && (o->flags & GM_ES_START))
                    w->flags |= GM_ES_ACCEPTING;
                /* Items of o waiting on r: a binary search in its index. */
                uint32_t lo = 0, hi = o->nwait;
                while (lo < hi) {
                    uint32_t mid = lo + (hi - lo) / 2;
                    if (o->wait[mid].rule < r)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                for (; lo < o->nwait && o->wait[lo].rule == r; lo++) {
                    const gm_eitem *wi = &o->items[o->wait[lo].item];
                    uint32_t to = gm_fsm_ref_next(g, wi->state, r);
                    uint32_t cnt = wi->count;
                    if (g->rules[g->state_rule[wi->state]].repeat)
                        cnt |= 1;
                    if (add_item(e, w, to, cnt, origin_of(wi->origin, o), &st, err))
                        return st;
                }
            }
        }
        if ((f & GM_FS_WAITS) && !gm_eitem_rep_full(g, &it)) {
            for (uint32_t j = g->ref_off[q]; j < g->ref_off[q + 1]; j++) {
                const gm_frule *b = &g->rules[g->refs[j].sym];
                if (predict(e, w, g->refs[j].sym, &st, err))
                    return st;
                if (b->nullable && add_item(e, w, g->refs[j].to, it.count, it.origin, &st, err))
                    return st;
            }
        }
    }
    return GM_OK;
}

/* Whether an item can still do something in a later set (note [earley pruning]). */
static bool item_live(const gm_egrammar *g, const gm_eitem *it)
{
    uint8_t f = g->state_flags[it->state];
    if (gm_eitem_rep_full(g, it))
        return false;
    return (f & (GM_FS_WAITS | GM_FS_TOKENS | GM_FS_SCANS)) != 0;
}

/* Live, or a completed captured rule, which stays to be read by earley/capture.c. */
static bool item_alive(const gm_egrammar *g, const gm_eitem *it)
{
    return item_live(g, it) || gm_eitem_captured(g, it);
}

/* Prunes, sorts and interns w's items as a set with w->flags | extra. */
static gm_status finish(gm_eengine *e, gm_escratch *w, uint8_t extra, gm_estate **out,
                        gm_error *err)
{
    const gm_egrammar *g = e->g;
    size_t n = w->items.n;
    size_t live = n;
    if (!(e->variant & GM_EVARIANT_NO_PRUNING)) {
        size_t k = 0;
        live = 0;
        for (size_t i = 0; i < n; i++) {
            /* a kept captured completion alone keeps no output going */
            if (item_live(g, &w->items.v[i])) {
                w->items.v[k++] = w->items.v[i];
                live++;
            } else if (gm_eitem_captured(g, &w->items.v[i])) {
                w->items.v[k++] = w->items.v[i];
            }
        }
        n = w->items.n = k;
    }
    uint8_t flags = w->flags | extra;
    if (live == 0 && !(flags & (GM_ES_ACCEPTING | GM_ES_ESCAPED))) {
        *out = NULL;
        return GM_OK;
    }
    sort_items(w->items.v, n);
    return intern(e, w->items.v, (uint32_t)n, flags, out, err);
}

/* The projection of s onto its waiting items: what items name as origin. */
static gm_status projection(gm_eengine *e, gm_escratch *w, gm_estate *s, gm_estate **out,
                            gm_error *err)
{
    (void)w;
    if (e->variant & GM_EVARIANT_NO_PRUNING) {
        *out = s;
        return GM_OK;
    }
    gm_estate *p = atomic_load_explicit(&s->proj, memory_order_acquire);
    if (p) {
        *out = p;
        return GM_OK;
    }
    const gm_egrammar *g = e->g;
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nitems; i++)
        if (g->state_flags[s->items[i].state] & GM_FS_WAITS)
            k++;
    if (k == s->nitems && !(s->flags & GM_ES_ACCEPTING)) {
        /* Already its own projection (no reference to itself is kept). */
        atomic_store_explicit(&s->proj, s, memory_order_release);
        *out = s;
        return GM_OK;
    }
    gm_eitem *it = gm_mem_alloc(e->mem, (k ? k : 1) * sizeof *it);
    if (!it)
        return gm_mem_fail(e->mem, err, "an Earley set");
    k = 0;
    for (uint32_t i = 0; i < s->nitems; i++)
        if (g->state_flags[s->items[i].state] & GM_FS_WAITS)
            it[k++] = s->items[i];
    gm_status st = intern(e, it, k, s->flags & GM_ES_START, &p, err);
    gm_mem_free(e->mem, it);
    if (st != GM_OK)
        return st;
    if (p == s) {
        gm_estate_release(e, p);
    }
    atomic_store_explicit(&s->proj, p, memory_order_release);
    *out = p;
    return GM_OK;
}

/*
 * Item it of s moved over one symbol to automaton state `to`, added to the
 * set being built: a repetition counts the move (and goes nowhere once
 * full), a NULL origin (this set) becomes s's projection. 1 when an error
 * was set (*st), 0 otherwise.
 */
static int advance(gm_eengine *e, gm_escratch *w, gm_estate *s, const gm_eitem *it,
                   uint32_t to, gm_estate **self, gm_status *st, gm_error *err)
{
    const gm_egrammar *g = e->g;
    uint32_t cnt = it->count;
    if (g->rules[g->state_rule[it->state]].repeat) {
        if (gm_eitem_rep_full(g, it))
            return 0;
        cnt |= 1;
    }
    gm_estate *o = it->origin;
    if (!o) {
        if (!*self && (*st = projection(e, w, s, self, err)) != GM_OK)
            return 1;
        o = *self;
    }
    return add_item(e, w, to, cnt, o, st, err) ? 1 : 0;
}

gm_status gm_eset_step(gm_eengine *e, gm_escratch *w, gm_estate *s, uint32_t sym,
                       gm_estate **out, gm_error *err)
{
    const gm_egrammar *g = e->g;
    bool cache = !(e->variant & GM_EVARIANT_NO_STATE_CACHE);
    *out = NULL;
    uint32_t cls = sym < 256 ? g->byte_class[sym] : 0;
    if (cache && sym < 256 && s->next && s->next[cls]) {
        gm_estate *t = s->next[cls];
        if (t == e->outer)
            return GM_OK;
        gm_estate_retain(t);
        *out = t;
        return GM_OK;
    }
    if (cache && sym >= 256 && e->tc_slots) {
        for (size_t j = tc_slot(e, s, sym); e->tc[j].from; j = (j + 1) & (e->tc_slots - 1))
            if (e->tc[j].from == s && e->tc[j].sym == sym) {
                gm_estate_retain(e->tc[j].to);
                *out = e->tc[j].to;
                return GM_OK;
            }
    }
    gm_status st = begin(e, w, err);
    if (st != GM_OK)
        return st;
    gm_estate *self = NULL;
    for (uint32_t i = 0; i < s->nitems; i++) {
        const gm_eitem *it = &s->items[i];
        uint32_t q = it->state, to = GM_FSM_NONE;
        uint8_t f = g->state_flags[q];
        if (sym < 256) {
            if (f & GM_FS_SCANS)
                to = gm_fsm_next(g, q, (uint8_t)sym);
        } else if (f & GM_FS_TOKENS) {
            for (uint32_t j = g->tok_off[q]; j < g->tok_off[q + 1]; j++)
                if (g->toks[j].sym == sym - 256)
                    to = g->toks[j].to;
        }
        if (to != GM_FSM_NONE && advance(e, w, s, it, to, &self, &st, err))
            return st;
    }
    if (w->items.n != 0 &&
        ((st = closure(e, w, err)) != GM_OK || (st = finish(e, w, 0, out, err)) != GM_OK))
        return st;
    if (!cache)
        return GM_OK;
    if (sym >= 256) {
        if (tc_put(e, s, sym, *out)) {
            gm_estate_release(e, *out);
            *out = NULL;
            return gm_mem_fail(e->mem, err, "the Earley transition cache");
        }
        return GM_OK;
    }
    if (!s->interned)
        return GM_OK;
    if (!s->next) {
        s->next = gm_mem_calloc(e->mem, g->nclasses, sizeof *s->next);
        if (!s->next)
            return GM_OK; /* only a cache */
        e->table_bytes += g->nclasses * sizeof *s->next;
    }
    s->next[cls] = *out ? *out : e->outer;
    return GM_OK;
}

static bool has_sym(const uint32_t *syms, size_t n, uint32_t sym)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (syms[mid] < sym)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && syms[lo] == sym;
}

gm_status gm_eset_step_syms(gm_eengine *e, gm_escratch *w, gm_estate *s, const uint32_t *syms,
                            size_t nsyms, gm_estate *also, gm_estate **out, gm_error *err)
{
    const gm_egrammar *g = e->g;
    *out = NULL;
    gm_status st = begin(e, w, err);
    if (st != GM_OK)
        return st;
    gm_estate *self = NULL;
    for (uint32_t i = 0; i < s->nitems; i++) {
        const gm_eitem *it = &s->items[i];
        uint32_t q = it->state;
        if (!(g->state_flags[q] & GM_FS_TOKENS))
            continue;
        for (uint32_t j = g->tok_off[q]; j < g->tok_off[q + 1]; j++) {
            if (has_sym(syms, nsyms, g->toks[j].sym) &&
                advance(e, w, s, it, g->toks[j].to, &self, &st, err))
                return st;
        }
    }
    if (also) {
        /* its items as they are: a NULL origin (this place) means the union too */
        for (uint32_t i = 0; i < also->nitems; i++)
            if (add_item(e, w, also->items[i].state, also->items[i].count, also->items[i].origin,
                         &st, err))
                return st;
        w->flags |= also->flags & (GM_ES_ACCEPTING | GM_ES_ESCAPED);
    }
    if (w->items.n == 0 && !w->flags)
        return GM_OK;
    if ((st = closure(e, w, err)) != GM_OK)
        return st;
    return finish(e, w, 0, out, err);
}

void gm_eset_maintain(gm_eengine *e, gm_escratch *w)
{
    if (e->table_bytes > e->table_budget)
        tables_clear(e);
    w->work = 0;
    w->work_max = e->lim.max_earley_work;
}

gm_status gm_eset_step_borrowed(gm_eengine *e, gm_escratch *w, gm_estate *s, uint8_t b,
                                gm_estate **out, gm_error *err)
{
    if (s->next) {
        gm_estate *t = s->next[e->g->byte_class[b]];
        if (t) {
            *out = t == e->outer ? NULL : t;
            return GM_OK;
        }
    }
    gm_status st = gm_eset_step(e, w, s, b, out, err);
    /* The tables keep what they hold alive until gm_eset_maintain. */
    if (st == GM_OK && *out)
        atomic_fetch_sub_explicit(&(*out)->refs, 1, memory_order_relaxed);
    return st;
}

gm_status gm_eset_seed(gm_eengine *e, gm_escratch *w, uint32_t state, uint32_t count,
                       gm_estate *origin, gm_estate **out, gm_error *err)
{
    gm_status st = begin(e, w, err);
    if (st != GM_OK || add_item(e, w, state, count, origin, &st, err) ||
        (st = closure(e, w, err)) != GM_OK)
        return st;
    /* The seed's completion at the start of a walk is not an escape the
       mask cache acts on (note [token-mask cache]); the flag is dropped. */
    w->flags &= (uint8_t)~GM_ES_ESCAPED;
    return finish(e, w, 0, out, err);
}

/* ---- engine setup ------------------------------------------------------------- */

gm_status gm_eset_init(gm_eengine *e, gm_error *err)
{
    const gm_egrammar *g = e->g;
    e->outer = new_set(e, NULL, 0, GM_ES_OUTER, 0);
    if (!e->outer)
        return gm_mem_fail(e->mem, err, "the Earley engine");
    gm_escratch w;
    memset(&w, 0, sizeof w);
    gm_status st = begin(e, &w, err);
    if (st == GM_OK && !predict(e, &w, g->root, &st, err) && (st = closure(e, &w, err)) == GM_OK) {
        uint8_t extra = GM_ES_START | (g->rules[g->root].nullable ? GM_ES_ACCEPTING : 0);
        st = finish(e, &w, extra, &e->start, err);
        if (st == GM_OK && !e->start)
            st = gm_error_set(err, GM_ERR_GRAMMAR, "the grammar accepts nothing");
    }
    gm_vec_free(e->mem, &w.items);
    gm_vec_free(e->mem, &w.done);
    gm_mem_free(e->mem, w.slots);
    gm_mem_free(e->mem, w.predicted);
    return st;
}

void gm_eset_fini(gm_eengine *e)
{
    if (e->sets || e->tc)
        tables_clear(e);
    gm_mem_free(e->mem, e->sets);
    gm_mem_free(e->mem, e->tc);
    e->sets = NULL;
    e->tc = NULL;
    e->sets_slots = e->tc_slots = 0;
    gm_estate_release(e, e->start);
    gm_estate_release(e, e->outer);
    e->start = e->outer = NULL;
}

gm_status gm_eset_without(gm_eengine *e, const gm_estate *s, const uint8_t *drop, gm_estate **out,
                          gm_error *err)
{
    gm_eitem *it = gm_mem_alloc(e->mem, (s->nitems ? s->nitems : 1) * sizeof *it);
    if (!it)
        return gm_mem_fail(e->mem, err, "an Earley set");
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nitems; i++)
        if (!drop[i])
            it[k++] = s->items[i];
    /* a subsequence of sorted items is sorted */
    gm_status st = intern(e, it, k, s->flags, out, err);
    gm_mem_free(e->mem, it);
    return st;
}
