/* Profile walks shared between contextual spanners (spanner/walkshare.h, note [shared walks]). */
#include "spanner/walkshare.h"

#include <string.h>

#include "base/error.h"

typedef GM_VEC(uint32_t) u32vec;

gm_status gm_walkshare_create(gm_mem *m, gm_walkshare **out, gm_error *err)
{
    *out = NULL;
    gm_walkshare *w = gm_mem_calloc(m, 1, sizeof *w);
    if (!w)
        return gm_mem_fail(m, err, "the shared profile walks");
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        gm_mem_free(m, w);
        return gm_mem_fail(m, err, "the shared profile walks");
    }
    w->mem = m;
    gm_intern_init(&w->descs, m);
    *out = w;
    return GM_OK;
}

static void template_free(gm_mem *m, gm_walk_template *t)
{
    if (!t)
        return;
    gm_mem_free(m, t->stays);
    gm_mem_free(m, t->breaks);
    gm_mem_free(m, t->prods);
    gm_mem_free(m, t);
}

void gm_walkshare_destroy(gm_walkshare *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->templates.n; i++)
        template_free(w->mem, w->templates.v[i]);
    gm_vec_free(w->mem, &w->templates);
    gm_intern_free(&w->descs);
    pthread_mutex_destroy(&w->lock);
    gm_mem_free(w->mem, w);
}

/* DFA states whose moves a description follows: a lexeme pending, not backing up. */
static bool followed_dfa(const gm_spanner *sp, uint32_t d)
{
    return d != 0 && d < sp->lexer->ndfa;
}

/*
 * The hub of each DFA state: where a strongly connected component of the
 * moves holds heavy states (a name's interior, with the UTF-8 states of its
 * Unicode letters around it), the others are described as states of the
 * description of its heaviest one, which is then made once (Tarjan's
 * algorithm, iterative; note [hubs of several heavy states]). Moves keep a
 * slot's flag, so the components of the slots are those of the DFA states,
 * one copy per flag (note [per-state attach]).
 */
static int find_hubs(gm_mem *m, const gm_spanner *sp, const uint32_t *weight, uint32_t *hub)
{
    const gm_lexer *lx = sp->lexer;
    uint32_t n = lx->nstates, nclasses = lx->nclasses;
    uint32_t *order = gm_mem_alloc(m, (size_t)n * sizeof *order);
    uint32_t *low = gm_mem_alloc(m, (size_t)n * sizeof *low);
    uint32_t *stack = gm_mem_alloc(m, (size_t)n * sizeof *stack);
    uint32_t *call = gm_mem_alloc(m, 2 * (size_t)n * sizeof *call); /* (state, next class) */
    uint8_t *on = gm_mem_calloc(m, n ? n : 1, 1);
    int rc = !order || !low || !stack || !call || !on ? -1 : 0;
    uint32_t counter = 0, nstack = 0;
    for (uint32_t i = 0; !rc && i < n; i++) {
        order[i] = UINT32_MAX;
        hub[i] = GM_WALK_NONE;
    }
    for (uint32_t root = 0; !rc && root < n; root++) {
        if (order[root] != UINT32_MAX || !followed_dfa(sp, root))
            continue;
        uint32_t depth = 0;
        call[0] = root;
        call[1] = 0;
        order[root] = low[root] = counter++;
        stack[nstack++] = root;
        on[root] = 1;
        while (depth != UINT32_MAX) {
            uint32_t s = call[2 * depth];
            if (call[2 * depth + 1] < nclasses) {
                uint32_t t = gm_lexer_move(lx, s, call[2 * depth + 1]++);
                if (t == GM_LEX_DEAD || !followed_dfa(sp, t))
                    continue;
                if (order[t] == UINT32_MAX) {
                    depth++;
                    call[2 * depth] = t;
                    call[2 * depth + 1] = 0;
                    order[t] = low[t] = counter++;
                    stack[nstack++] = t;
                    on[t] = 1;
                } else if (on[t] && order[t] < low[s]) {
                    low[s] = order[t];
                }
                continue;
            }
            if (low[s] == order[s]) {
                /* s roots a component: the stack down to s. */
                uint32_t from = nstack, top = GM_WALK_NONE;
                do
                    from--;
                while (stack[from] != s);
                for (uint32_t i = from; i < nstack; i++)
                    if (weight[stack[i]] >= GM_WALK_HEAVY &&
                        (top == GM_WALK_NONE || weight[stack[i]] > weight[top]))
                        top = stack[i];
                for (uint32_t i = from; i < nstack; i++) {
                    on[stack[i]] = 0;
                    hub[stack[i]] = top;
                }
                nstack = from;
            }
            depth = depth ? depth - 1 : UINT32_MAX;
            if (depth != UINT32_MAX && low[s] < low[call[2 * depth]])
                low[call[2 * depth]] = low[s];
        }
    }
    gm_mem_free(m, order);
    gm_mem_free(m, low);
    gm_mem_free(m, stack);
    gm_mem_free(m, call);
    gm_mem_free(m, on);
    return rc;
}

static void slots_free(gm_mem *m, gm_walk_slots *ws)
{
    if (!ws)
        return;
    gm_mem_free(m, (void *)ws->desc);
    gm_mem_free(m, (void *)ws->index);
    gm_mem_free(m, ws->heavy);
    gm_mem_free(m, ws->hub);
    gm_mem_free(m, ws);
}

/*
 * note [per-state attach]
 * Whether a slot is heavy and which hub it has depend only on its DFA
 * state: a slot's moves keep its flag, and the weight of its walk is that of
 * the classes its DFA state continues on. So both are computed once per DFA
 * state and copied to the nflags slots of each (JavaScript's contextual
 * lexers have four flags and about a thousand states each). And they are
 * computed on the spanner's first description, not when it is attached: the
 * first mask builds the spanners of 17 of JavaScript's 142 lexers (the
 * suffixes of the start state's always-accepted entries) but describes no
 * state of theirs (only profiles of states with a lexeme pending are
 * described), and computing them at attach was half of its time.
 */
static gm_walk_slots *slots_build(const gm_spanner *sp)
{
    gm_mem *m = sp->mem;
    const gm_lexer *lx = sp->lexer;
    const gm_trie *tr = sp->trie;
    size_t n = sp->nplain ? sp->nplain : 1, nd = lx->nstates ? lx->nstates : 1;
    gm_walk_slots *ws = gm_mem_calloc(m, 1, sizeof *ws);
    uint32_t *class_weight = gm_mem_calloc(m, lx->nclasses ? lx->nclasses : 1, sizeof *class_weight);
    uint32_t *weight_dfa = gm_mem_calloc(m, nd, sizeof *weight_dfa);
    uint32_t *hub_dfa = gm_mem_alloc(m, nd * sizeof *hub_dfa);
    if (ws) {
        ws->desc = gm_mem_alloc(m, n * sizeof *ws->desc);
        ws->index = gm_mem_alloc(m, n * sizeof *ws->index);
        ws->heavy = gm_mem_alloc(m, n * sizeof *ws->heavy);
        ws->hub = gm_mem_alloc(m, n * sizeof *ws->hub);
    }
    if (!ws || !class_weight || !weight_dfa || !hub_dfa || !ws->desc || !ws->index || !ws->heavy ||
        !ws->hub)
        goto nomem;
    /* A walk visits at most the trie below the first bytes that continue its lexeme. */
    for (uint32_t j = 1; j < tr->nnodes; j = tr->nodes[j].skip)
        class_weight[lx->byte_class[tr->nodes[j].byte]] += tr->nodes[j].skip - j;
    for (uint32_t d = 0; d < lx->nstates; d++) {
        uint32_t weight = 0;
        for (uint32_t c = 0; followed_dfa(sp, d) && c < lx->nclasses; c++)
            if (gm_lexer_move(lx, d, c) != GM_LEX_DEAD)
                weight += class_weight[c];
        weight_dfa[d] = weight;
    }
    if (find_hubs(m, sp, weight_dfa, hub_dfa))
        goto nomem;
    for (uint32_t s = 0; s < sp->nplain; s++) {
        uint32_t d = s >> sp->flag_bits, h = hub_dfa[d];
        atomic_init(&ws->desc[s], 0);
        atomic_init(&ws->index[s], 0);
        ws->heavy[s] = weight_dfa[d] >= GM_WALK_HEAVY;
        ws->hub[s] = h == GM_WALK_NONE ? GM_WALK_NONE : h << sp->flag_bits | (s & (sp->nflags - 1));
    }
    gm_mem_free(m, class_weight);
    gm_mem_free(m, weight_dfa);
    gm_mem_free(m, hub_dfa);
    return ws;
nomem:
    gm_mem_free(m, class_weight);
    gm_mem_free(m, weight_dfa);
    gm_mem_free(m, hub_dfa);
    slots_free(m, ws);
    return NULL;
}

/* sp's slots, built on first use and published with a compare-and-swap (NULL: no memory). */
static gm_walk_slots *slots_of(const gm_spanner *sp)
{
    gm_spanner *msp = (gm_spanner *)sp; /* a lazy cache (STYLE.md 4) */
    gm_walk_slots *ws = atomic_load_explicit(&msp->walk_slots, memory_order_acquire);
    if (ws)
        return ws;
    if (!(ws = slots_build(sp)))
        return NULL;
    gm_walk_slots *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&msp->walk_slots, &none, ws,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        slots_free(sp->mem, ws);
        ws = none;
    }
    return ws;
}

gm_status gm_walkshare_attach(gm_walkshare *w, gm_spanner *sp, gm_error *err)
{
    (void)err; /* the slots are built on first use (note [per-state attach]) */
    atomic_store_explicit(&sp->walk_slots, NULL, memory_order_relaxed);
    sp->walks = w;
    return GM_OK;
}

void gm_walkshare_detach(gm_spanner *sp)
{
    slots_free(sp->mem, atomic_exchange(&sp->walk_slots, NULL));
}

/* ---- descriptions ---- */

/* sp's slots, built (slots_of) before any description starts. */
static gm_walk_slots *slots(const gm_spanner *sp)
{
    return atomic_load_explicit(&((gm_spanner *)sp)->walk_slots, memory_order_acquire);
}

/* Slot -> number, an open table that grows. */
typedef struct numbering {
    uint32_t *slot;              /* UINT32_MAX: empty */
    uint32_t *index;
    uint32_t size, used;
} numbering;

static void numbering_free(gm_mem *m, numbering *nb)
{
    gm_mem_free(m, nb->slot);
    nb->slot = NULL;
}

static int numbering_init(gm_mem *m, numbering *nb, uint32_t size)
{
    nb->size = size;
    nb->used = 0;
    nb->slot = gm_mem_alloc(m, 2 * (size_t)size * sizeof *nb->slot);
    if (!nb->slot)
        return -1;
    nb->index = nb->slot + size;
    memset(nb->slot, 0xff, (size_t)size * sizeof *nb->slot);
    return 0;
}

static uint32_t *numbering_at(const numbering *nb, uint32_t s)
{
    uint32_t h = (s * 2654435761u) & (nb->size - 1);
    while (nb->slot[h] != UINT32_MAX && nb->slot[h] != s)
        h = (h + 1) & (nb->size - 1);
    return &nb->slot[h];
}

/* The number of s, or UINT32_MAX. */
static uint32_t numbering_find(const numbering *nb, uint32_t s)
{
    uint32_t *at = numbering_at(nb, s);
    return *at == s ? nb->index[at - nb->slot] : UINT32_MAX;
}

/* Numbers s with v unless it has a number (-1 on no memory). */
static int numbering_put(gm_mem *m, numbering *nb, uint32_t s, uint32_t v)
{
    uint32_t *at = numbering_at(nb, s);
    if (*at == s)
        return 0;
    if (4 * (nb->used + 1) > 3 * nb->size) {
        numbering old = *nb;
        if (numbering_init(m, nb, 2 * old.size)) {
            *nb = old;
            return -1;
        }
        for (uint32_t i = 0; i < old.size; i++)
            if (old.slot[i] != UINT32_MAX) {
                uint32_t *to = numbering_at(nb, old.slot[i]);
                *to = old.slot[i];
                nb->index[to - nb->slot] = old.index[i];
                nb->used++;
            }
        numbering_free(m, &old);
        at = numbering_at(nb, s);
    }
    *at = s;
    nb->index[at - nb->slot] = v;
    nb->used++;
    return 0;
}

/* What a byte does in a described state. */
enum { MOVE = 1, BREAK = 2, FAIL = 3, NESTED = 4 };

/* A description under way: the slots being described (outer ones first). */
typedef struct describing {
    uint32_t slots[GM_WALK_MAX_NESTING];
    uint32_t depth;
} describing;

static int describe(const gm_spanner *sp, uint32_t q, describing *d, uint32_t *id);

static bool being_described(const describing *d, uint32_t s)
{
    for (uint32_t i = 0; i < d->depth; i++)
        if (d->slots[i] == s)
            return true;
    return false;
}

/*
 * The states of q's description, in the order of bytes: states[0] = q.
 * Heavy states other than q (the walks worth describing by themselves) are
 * not entered but described apart (nested; those under way are entered).
 * 1 when done, 0 when q cannot be described, -1 on no memory.
 */
static int number_states(const gm_spanner *sp, uint32_t q, const describing *d, u32vec *states,
                         numbering *nb, numbering *nested)
{
    const gm_lexer *lx = sp->lexer;
    gm_mem *m = sp->mem;
    const gm_walk_slots *ws = slots(sp);
    uint32_t cap = ws->heavy[q] ? GM_WALK_MAX_STATES_HEAVY : GM_WALK_MAX_STATES;
    if (numbering_put(m, nb, q, 0) || gm_vec_push(m, states, q))
        return -1;
    for (size_t i = 0; i < states->n; i++) {
        uint32_t s = states->v[i], dfa = s >> sp->flag_bits, flag = s & (sp->nflags - 1);
        if (dfa >= lx->ndfa || (!sp->plain && sp->width_block[s] != GM_SPANNER_NONE))
            return 0;
        uint32_t target[256];
        for (uint32_t c = 0; c < lx->nclasses; c++) {
            uint32_t t = gm_lexer_move(lx, dfa, c);
            target[c] = t == GM_LEX_DEAD ? UINT32_MAX : t << sp->flag_bits | flag;
        }
        for (unsigned byte = 0; byte < 256; byte++) {
            uint32_t t = target[lx->byte_class[byte]];
            if (t == UINT32_MAX || numbering_find(nb, t) != UINT32_MAX ||
                numbering_find(nested, t) != UINT32_MAX)
                continue;
            /* Heavy states and those of another hub's component are described apart. */
            if (t != q && !being_described(d, t) && ws->hub[t] != q &&
                (ws->heavy[t] || ws->hub[t] != GM_WALK_NONE)) {
                if (numbering_put(m, nested, t, 0))
                    return -1;
                continue;
            }
            if (states->n == cap)
                return 0;
            if (numbering_put(m, nb, t, (uint32_t)states->n) || gm_vec_push(m, states, t))
                return -1;
        }
    }
    return 1;
}

/*
 * The description of q's states into key: each state's Prod set, then for
 * each byte in runs of equal outcomes: the number of the state it moves
 * to, the id of a nested description, or the element and flag of a break.
 */
static int write_key(const gm_spanner *sp, const u32vec *states, const numbering *nb,
                     describing *d, u32vec *key)
{
    const gm_lexer *lx = sp->lexer;
    gm_mem *m = sp->mem;
    if (gm_vec_push(m, key, sp->variant))
        return -1;
    for (size_t i = 0; i < states->n; i++) {
        uint32_t s = states->v[i], dfa = s >> sp->flag_bits, flag = s & (sp->nflags - 1);
        uint32_t p = sp->slot_prod[s], off = sp->prod_off[p], n = sp->prod_off[p + 1] - off;
        if (gm_vec_reserve(m, key, key->n + 2 + n))
            return -1;
        key->v[key->n++] = sp->prod_ignored[p];
        key->v[key->n++] = n;
        for (uint32_t j = 0; j < n; j++) {
            /* Fallback pairs are numbered per spanner. */
            if (GM_SEQ_IS_PAIR(sp->prod_terms[off + j]))
                return 0;
            key->v[key->n++] = sp->prod_terms[off + j];
        }
        uint32_t out_of[256][3];
        for (uint32_t c = 0; c < lx->nclasses; c++) {
            uint32_t t = gm_lexer_move(lx, dfa, c), e, r, *out = out_of[c];
            if (t != GM_LEX_DEAD) {
                t = t << sp->flag_bits | flag;
                uint32_t k = numbering_find(nb, t);
                out[0] = k != UINT32_MAX ? MOVE : NESTED;
                out[1] = k;
                out[2] = 0;
                if (k == UINT32_MAX) {
                    /* A part that cannot be described leaves the whole undescribed. */
                    int rc = describe(sp, t, d, &out[1]);
                    if (rc <= 0 || out[1] == GM_WALK_NONE)
                        return rc < 0 ? -1 : 0;
                }
            } else if (gm_spanner_break(sp, s, c, &e, &r)) {
                /* A break that resumes inside a re-lexed window is the lexer's own. */
                if (r >= sp->nlex || gm_spanner_dfa(sp, r) != 0)
                    return 0;
                out[0] = BREAK;
                out[1] = e;
                out[2] = gm_spanner_flag(sp, r);
            } else {
                out[0] = FAIL;
                out[1] = out[2] = 0;
            }
        }
        uint32_t run[4] = {0, 0, 0, 0};
        for (unsigned byte = 0; byte <= 256; byte++) {
            const uint32_t *out = byte < 256 ? out_of[lx->byte_class[byte]] : NULL;
            if (out && run[0] && !memcmp(run + 1, out, 3 * sizeof *out)) {
                run[0]++;
                continue;
            }
            if (run[0]) {
                if (gm_vec_reserve(m, key, key->n + 4))
                    return -1;
                memcpy(key->v + key->n, run, sizeof run);
                key->n += 4;
            }
            if (out) {
                run[0] = 1;
                memcpy(run + 1, out, 3 * sizeof *out);
            }
        }
    }
    return 1;
}

/* A key that names state k of description id (never a Prod set's first word, 0 or 1). */
#define KEY_ALIAS 2

/* describe for a slot not described yet. */
static int describe_new(const gm_spanner *sp, uint32_t q, describing *d, uint32_t *id)
{
    gm_mem *m = sp->mem;
    gm_walkshare *w = sp->walks;
    gm_walk_slots *ws = slots(sp);
    u32vec states = {0}, key = {0};
    numbering nb = {0}, nested = {0};
    int rc = -1;
    *id = GM_WALK_NONE;
    uint32_t hub = ws->hub[q];
    if (hub != GM_WALK_NONE && hub != q && !being_described(d, hub)) {
        /* A state of a hub's component is that state of the hub's description. */
        uint32_t hub_id;
        rc = describe(sp, hub, d, &hub_id);
        uint32_t k = atomic_load_explicit(&ws->index[q], memory_order_relaxed);
        if (rc <= 0)
            return rc;
        if (hub_id != GM_WALK_NONE && k) {
            uint32_t alias[4] = {sp->variant, KEY_ALIAS, hub_id, k - 1};
            rc = gm_vec_reserve(m, &key, 4) ? -1 : 1;
            if (rc > 0) {
                memcpy(key.v, alias, sizeof alias);
                key.n = 4;
            }
            goto intern;
        }
    }
    if (numbering_init(m, &nb, 64) == 0 && numbering_init(m, &nested, 16) == 0) {
        d->slots[d->depth++] = q;
        rc = number_states(sp, q, d, &states, &nb, &nested);
        if (rc > 0)
            rc = write_key(sp, &states, &nb, d, &key);
        d->depth--;
    }
    if (rc > 0 && ws->hub[q] == q)
        for (size_t i = 1; i < states.n; i++)
            if (ws->hub[states.v[i]] == q)
                atomic_store_explicit(&ws->index[states.v[i]], (uint32_t)i + 1,
                                      memory_order_relaxed);
intern:
    if (rc > 0) {
        pthread_mutex_lock(&w->lock);
        size_t before = w->descs.count;
        rc = gm_intern_put(&w->descs, key.v, key.n * sizeof *key.v, id, NULL) ? -1 : 1;
        if (rc > 0 && w->descs.count > before)
            w->bytes += key.n * sizeof *key.v + 3 * sizeof(uint32_t);
        pthread_mutex_unlock(&w->lock);
    }
    numbering_free(m, &nb);
    numbering_free(m, &nested);
    gm_vec_free(m, &states);
    gm_vec_free(m, &key);
    return rc < 0 ? -1 : 1;
}

/* The description id of slot q (GM_WALK_NONE: none), memoized per spanner. 1, 0 when nested
 * too deep (not memoized: another nesting may describe it), -1 on no memory. */
static int describe(const gm_spanner *sp, uint32_t q, describing *d, uint32_t *id)
{
    uint32_t v = atomic_load_explicit(&slots(sp)->desc[q], memory_order_acquire);
    if (v) {
        *id = v == 1 ? GM_WALK_NONE : v - 2;
        return 1;
    }
    if (d->depth == GM_WALK_MAX_NESTING)
        return 0;
    int rc = describe_new(sp, q, d, id);
    if (rc > 0)
        atomic_store_explicit(&slots(sp)->desc[q], *id == GM_WALK_NONE ? 1 : *id + 2,
                              memory_order_release);
    return rc;
}

int gm_walkshare_describe(const gm_spanner *sp, uint32_t q, uint32_t *id)
{
    *id = GM_WALK_NONE;
    /* Only lexer states with a lexeme pending and no width: q is then its own slot. */
    if (q >= sp->nplain || (q >> sp->flag_bits) == 0)
        return 0;
    if (!slots_of(sp))
        return -1;
    describing d = {.depth = 0};
    return describe(sp, q, &d, id) < 0 ? -1 : 0;
}

/* ---- templates ---- */

const gm_walk_template *gm_walkshare_find(gm_walkshare *w, uint32_t id)
{
    pthread_mutex_lock(&w->lock);
    const gm_walk_template *t = id < w->templates.n ? w->templates.v[id] : NULL;
    pthread_mutex_unlock(&w->lock);
    return t;
}

const gm_walk_template *gm_walkshare_add(gm_walkshare *w, uint32_t id, gm_walk_template *t)
{
    const gm_walk_template *kept = NULL;
    pthread_mutex_lock(&w->lock);
    if (gm_vec_reserve(w->mem, &w->templates, (size_t)id + 1) == 0) {
        while (w->templates.n <= id)
            w->templates.v[w->templates.n++] = NULL;
        if (!w->templates.v[id]) {
            w->templates.v[id] = t;
            w->bytes += sizeof *t + t->nstays * sizeof *t->stays +
                        t->nbreaks * sizeof *t->breaks + t->nprods * sizeof *t->prods;
        }
        kept = w->templates.v[id];
    }
    pthread_mutex_unlock(&w->lock);
    if (kept != t)
        template_free(w->mem, t);
    return kept;
}

uint32_t gm_walkshare_prod(const gm_spanner *sp, const gm_walk_template *t, uint32_t off)
{
    const uint32_t *want = t->prods + off;
    for (uint32_t p = 0; p < sp->nprods; p++) {
        uint32_t o = sp->prod_off[p], n = sp->prod_off[p + 1] - o;
        if (sp->prod_ignored[p] == want[0] && n == want[1] &&
            !memcmp(sp->prod_terms + o, want + 2, n * sizeof *want))
            return p;
    }
    return GM_WALK_NONE;
}

size_t gm_walkshare_bytes(gm_walkshare *w)
{
    pthread_mutex_lock(&w->lock);
    size_t n = w->bytes;
    pthread_mutex_unlock(&w->lock);
    return n;
}
