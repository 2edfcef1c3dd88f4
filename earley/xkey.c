/*
 * Keys of the cross-grammar cache (xcache.c): which token-mask cache
 * entries of two grammars are the same entry.
 *
 * note [unit keys]
 * An entry depends on what the items derived from its seed can read: the
 * automata reachable from the seed's state, through byte, reference and
 * special-token edges, with the repetition bounds of their rules and the
 * seed's counter class (the follow set is dealt with apart: note
 * [cross-grammar hashing] in xcache.c). Serializing that reachable
 * structure for every entry costs the size of the grammar per entry (a
 * schema's root reaches everything), so structures are named
 * hierarchically instead, as XGrammar 2 §3.3 hashes rule automata (leaf
 * automata, acyclic references, cycles):
 *   - the rules of one strongly connected component of the reference
 *     graph (one rule, or a recursion) form a *unit*, serialized once:
 *     its states numbered breadth-first from a canonical start rule (the
 *     one whose start state has the smallest structural hash, note
 *     [structural hashes] in fsm.c), each state with its flags, byte
 *     ranges, special tokens by text, references to rules of the unit by
 *     their number in it and references to rules outside by the name of
 *     the rule outside: (its unit, its start's number there);
 *   - units are interned in the cross-grammar cache, which gives each
 *     distinct serialization a number: the unit's name;
 *   - an entry's key is (variant, counter class, unit, the seed state's
 *     number in the unit).
 * Units come bottom-up (Tarjan's algorithm emits a component after every
 * component it reaches), so names of rules outside are known when a unit
 * is serialized; each is named when an entry first asks for it, and a
 * component that reaches more than UNIT_MAX_REACH states is not shared at
 * all, nor the root's past UNIT_MAX_ROOT_REACH (a schema's root is unique
 * to its grammar and reaches all of it, so naming it serializes the whole
 * grammar for the first mask: with a cap of 1024 states that was over half
 * of the first mask's instructions at MaskBench's median, for sharing that
 * made no measurable difference to later masks; a small grammar compiled
 * again still shares its root). Equal keys mean equal serializations of
 * everything reachable (by induction over units), so equal entries whatever grammar
 * they come from; a tie between structural hashes can only make two
 * isomorphic units serialize differently (less sharing, never a wrong
 * mask). Each unit is serialized once per grammar and engine, so a key
 * costs a lookup.
 */
#include <stdlib.h>
#include <string.h>

#include "earley/eengine.h"
#include "base/error.h"

enum {
    UNIT_NONE = 0,            /* e->unit[r]: not computed yet */
    UNIT_UNSHARED = UINT32_MAX, /* no unit (past the cache's budget): not shared */
    KRULE_MEMBER = UINT32_MAX - 1, /* w->krule: a rule of the unit being serialized, unseen */
    NUM_UNSHARED = UINT32_MAX,  /* e->unit_num[s]: not numbered */
    UNIT_MAX_REACH = 8192,      /* states a shared unit may reach (unit_name) */
    UNIT_MAX_ROOT_REACH = 64,   /* the same for the root's unit */
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static gm_status fail(gm_eengine *e, gm_error *err)
{
    return gm_mem_fail(e->mem, err, "the cross-grammar cache");
}

/*
 * State s's byte transitions as maximal ranges of one target, in byte
 * order: keys serialize them, and a state's row of the class table is as
 * wide as the grammar has byte classes (a hundred in a schema's grammar)
 * where a state has a few ranges. Made on first use (a grammar's first
 * mask asks for a few states): the index of its first pair in e->kranges,
 * or UINT32_MAX when out of memory.
 */
static uint32_t ranges_of(gm_eengine *e, uint32_t s)
{
    if (e->krange_at[s] != UINT32_MAX)
        return e->krange_at[s];
    const gm_egrammar *g = e->g;
    const uint16_t *run = e->krun;
    uint32_t nruns = e->nkruns, at = (uint32_t)(e->kranges.n / 2), n = 0;
    for (uint32_t i = 0; i < nruns;) {
        uint32_t t = gm_fsm_next(g, s, (uint8_t)run[i]), lo = run[i];
        while (i < nruns && gm_fsm_next(g, s, (uint8_t)run[i]) == t)
            i++;
        if (t == GM_FSM_NONE)
            continue;
        if (gm_vec_push(e->mem, &e->kranges, lo << 8 | (run[i] - 1u)) ||
            gm_vec_push(e->mem, &e->kranges, t)) {
            e->kranges.n = 2 * (size_t)at;
            return UINT32_MAX;
        }
        n++;
    }
    e->krange_n[s] = n;
    return e->krange_at[s] = at;
}

static gm_status scratch(gm_eengine *e, gm_escratch *w, gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_mem *m = e->mem;
    if (!e->unit) {
        e->unit = gm_mem_calloc(m, g->nrules ? g->nrules : 1, sizeof *e->unit);
        e->unit_num = gm_mem_calloc(m, g->nstates ? g->nstates : 1, sizeof *e->unit_num);
        if (!e->unit || !e->unit_num)
            return fail(e, err);
    }
    if (!e->krange_at) {
        e->krange_at = gm_mem_alloc(m, (size_t)(g->nstates ? g->nstates : 1) * sizeof *e->krange_at);
        e->krange_n = gm_mem_alloc(m, (size_t)(g->nstates ? g->nstates : 1) * sizeof *e->krange_n);
        if (!e->krange_at || !e->krange_n)
            return fail(e, err);
        memset(e->krange_at, 0xff, (size_t)g->nstates * sizeof *e->krange_at);
        e->nkruns = gm_fsm_class_runs(g, e->krun);
    }
    if (!w->knum) {
        w->knum = gm_mem_alloc(m, (size_t)(g->nstates ? g->nstates : 1) * sizeof *w->knum);
        w->kqueue = gm_mem_alloc(m, (size_t)(g->nstates ? g->nstates : 1) * sizeof *w->kqueue);
        w->krule = gm_mem_alloc(m, (size_t)(g->nrules ? g->nrules : 1) * sizeof *w->krule);
        if (!w->knum || !w->kqueue || !w->krule)
            return fail(e, err);
        memset(w->knum, 0xff, (size_t)g->nstates * sizeof *w->knum);
        memset(w->krule, 0xff, (size_t)g->nrules * sizeof *w->krule);
    }
    return GM_OK;
}

/* The order of a state's reference edges in a serialization. */
typedef struct refkey {
    uint64_t a, b;            /* outside rules: (0, unit << 32 | number); inside: (1, hashes) */
    uint32_t j;               /* the edge */
} refkey;

static bool ref_before(const refkey *x, const refkey *y)
{
    return x->a != y->a ? x->a < y->a : x->b < y->b;
}


/* A serialization under way: w->key, w->knum / w->kqueue numbering states. */
typedef struct ser {
    gm_eengine *e;
    gm_escratch *w;
    uint32_t nq, nr;          /* states numbered, rules of the unit numbered */
    bool shared;              /* every rule outside is in a shared unit */
    int bad;                  /* out of memory */
    GM_VEC(refkey) order;
} ser;

static void kpush(ser *z, uint32_t x)
{
    z->bad |= gm_vec_push(z->e->mem, &z->w->key, x);
}

/* The number of state s in the serialization, numbering it when new. */
static uint32_t enq(ser *z, uint32_t s)
{
    gm_escratch *w = z->w;
    if (w->knum[s] == GM_FSM_NONE) {
        w->knum[s] = z->nq;
        w->kqueue[z->nq++] = s;
    }
    return w->knum[s];
}

static void new_rule(ser *z, uint32_t r)
{
    const gm_frule *fr = &z->e->g->rules[r];
    z->w->krule[r] = z->nr++;
    kpush(z, 0xfffffff0u);
    kpush(z, fr->repeat);
    kpush(z, fr->rep_min);
    kpush(z, fr->rep_max);
    kpush(z, enq(z, fr->start));
}

/*
 * Serializes state s: its rule (a member of the unit, by number), flags,
 * byte ranges, references (rules outside by their unit's name, rules of
 * the unit by hash order) and special tokens by text.
 */
static void put_state(ser *z, uint32_t s)
{
    gm_eengine *e = z->e;
    gm_escratch *w = z->w;
    const gm_egrammar *g = e->g;
    uint32_t r = g->state_rule[s];
    if (w->krule[r] == KRULE_MEMBER)
        new_rule(z, r);
    kpush(z, w->krule[r]);
    kpush(z, g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END | GM_FS_REP_START));
    /* Byte ranges of one target (maximal), in byte order. */
    uint32_t at = ranges_of(e, s);
    if (at == UINT32_MAX) {
        z->bad = 1;
        return;
    }
    for (uint32_t j = at; j < at + e->krange_n[s]; j++) {
        kpush(z, e->kranges.v[2 * j]);
        kpush(z, enq(z, e->kranges.v[2 * j + 1]));
    }
    /* References: outside rules by name, then rules of the unit by hash. */
    uint32_t j0 = g->ref_off[s], j1 = g->ref_off[s + 1];
    kpush(z, 0xfffffff1u);
    kpush(z, j1 - j0);
    z->order.n = 0;
    for (uint32_t j = j0; j < j1 && !z->bad; j++) {
        uint32_t br = g->refs[j].sym;
        refkey k = {0, 0, j};
        if (w->krule[br] == GM_FSM_NONE) {
            if (e->unit[br] == UNIT_UNSHARED || e->unit[br] == UNIT_NONE ||
                e->unit_num[g->rules[br].start] == NUM_UNSHARED)
                z->shared = false;
            k.b = (uint64_t)e->unit[br] << 32 | e->unit_num[g->rules[br].start];
        } else {
            k.a = 1;
            k.b = g->hash[g->rules[br].start] * 31 + g->hash[g->refs[j].to];
        }
        if (gm_vec_push(e->mem, &z->order, k)) {
            z->bad = 1;
            break;
        }
        for (size_t p = z->order.n - 1; p > 0 && ref_before(&z->order.v[p], &z->order.v[p - 1]);
             p--) {
            refkey tmp = z->order.v[p];
            z->order.v[p] = z->order.v[p - 1];
            z->order.v[p - 1] = tmp;
        }
    }
    for (size_t k = 0; k < z->order.n && !z->bad; k++) {
        const gm_fedge *ed = &g->refs[z->order.v[k].j];
        uint32_t br = ed->sym;
        if (z->order.v[k].a == 0) {
            kpush(z, 0xfffffff3u);
            kpush(z, (uint32_t)(z->order.v[k].b >> 32));
            kpush(z, (uint32_t)(z->order.v[k].b & 0xffffffffu));
        } else {
            if (w->krule[br] == KRULE_MEMBER)
                new_rule(z, br);
            kpush(z, w->krule[br]);
        }
        kpush(z, enq(z, ed->to));
    }
    kpush(z, 0xfffffff2u);
    for (uint32_t j = g->tok_off[s]; j < g->tok_off[s + 1]; j++) {
        uint32_t y = g->toks[j].sym;
        uint32_t len = g->tok_text_off[y + 1] - g->tok_text_off[y];
        kpush(z, len);
        for (uint32_t i = 0; i < len; i += 4) {
            uint32_t word = 0;
            for (uint32_t k = 0; k < 4 && i + k < len; k++)
                word |= (uint32_t)g->tok_text[g->tok_text_off[y] + i + k] << (8 * k);
            kpush(z, word);
        }
        kpush(z, enq(z, g->toks[j].to));
    }
}

static void ser_begin(ser *z, gm_eengine *e, gm_escratch *w)
{
    memset(z, 0, sizeof *z);
    z->e = e;
    z->w = w;
    z->shared = e->x != NULL;
    w->key.n = 0;
}

/* Forgets the numbering of the states serialized. */
static void ser_end(ser *z)
{
    for (uint32_t i = 0; i < z->nq; i++)
        z->w->knum[z->w->kqueue[i]] = GM_FSM_NONE;
    gm_vec_free(z->e->mem, &z->order);
}

/*
 * Serializes the unit of the rules comp[0..n) into w->key and interns it:
 * e->unit of its rules and e->unit_num of their states set. The unit of
 * every rule they reference outside is set already.
 */
static gm_status unit_serialize(gm_eengine *e, gm_escratch *w, const uint32_t *comp, uint32_t n,
                                gm_error *err)
{
    const gm_egrammar *g = e->g;
    uint32_t canon = comp[0];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = comp[i];
        w->krule[r] = KRULE_MEMBER;
        uint64_t hr = g->hash[g->rules[r].start], hc = g->hash[g->rules[canon].start];
        if (hr < hc || (hr == hc && r < canon))
            canon = r;
    }
    ser z;
    ser_begin(&z, e, w);
    new_rule(&z, canon);
    for (uint32_t qi = 0; qi < z.nq && !z.bad; qi++)
        put_state(&z, w->kqueue[qi]);
    uint32_t id = UNIT_UNSHARED;
    if (!z.bad && z.shared) {
        id = gm_excache_unit(e->x, w->key.v, (uint32_t)w->key.n);
        if (!id)
            id = UNIT_UNSHARED;
    }
    /* Every state of the unit is reached (its rules are trimmed, each is
       reachable from the canonical one); one that were not stays unshared. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < g->rules[comp[i]].nstates; k++)
            e->unit_num[g->rules[comp[i]].first + k] = NUM_UNSHARED;
    for (uint32_t i = 0; i < z.nq; i++)
        e->unit_num[w->kqueue[i]] = w->knum[w->kqueue[i]];
    ser_end(&z);
    for (uint32_t i = 0; i < n; i++) {
        e->unit[comp[i]] = id;
        w->krule[comp[i]] = GM_FSM_NONE;
    }
    w->key.n = 0;
    return z.bad ? fail(e, err) : GM_OK;
}

/* The components of the rule graph (note [unit keys]). */
struct gm_exunits {
    uint32_t ncomp;
    uint32_t *comp;           /* [rules] component; numbered in Tarjan's order, so a
                                 component reaches only components numbered lower */
    uint32_t *off;            /* [ncomp + 1] its rules: rules[off[c] .. off[c + 1]) */
    uint32_t *rules;
    uint32_t *reach;          /* [ncomp] states reachable (an upper bound, saturated) */
    uint32_t *mark;           /* [ncomp] scratch of unit_name */
    uint32_t *list;           /* [ncomp] scratch of unit_name */
    uint32_t stamp;
};

static void units_free(gm_mem *m, gm_exunits *u)
{
    if (!u)
        return;
    gm_mem_free(m, u->comp);
    gm_mem_free(m, u->off);
    gm_mem_free(m, u->rules);
    gm_mem_free(m, u->reach);
    gm_mem_free(m, u->mark);
    gm_mem_free(m, u->list);
    gm_mem_free(m, u);
}

/*
 * The strongly connected components of the reference graph (Tarjan's
 * algorithm, iterative) and what each reaches: walks rules and reference
 * edges once, serializes nothing.
 */
static gm_status units_plan(gm_eengine *e, gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_mem *m = e->mem;
    size_t nr = g->nrules ? g->nrules : 1;
    gm_exunits *u = gm_mem_calloc(m, 1, sizeof *u);
    uint32_t *idx = gm_mem_calloc(m, nr, sizeof *idx);    /* 0 = not visited */
    uint32_t *low = gm_mem_alloc(m, nr * sizeof *low);
    uint32_t *cur = gm_mem_alloc(m, nr * sizeof *cur);    /* next reference edge */
    uint32_t *stk = gm_mem_alloc(m, nr * sizeof *stk);    /* Tarjan's stack */
    uint32_t *call = gm_mem_alloc(m, nr * sizeof *call);  /* the DFS path */
    uint8_t *on = gm_mem_calloc(m, nr, 1);
    gm_status st = GM_OK;
    if (!u || !idx || !low || !cur || !stk || !call || !on ||
        !(u->comp = gm_mem_alloc(m, nr * sizeof *u->comp)) ||
        !(u->off = gm_mem_alloc(m, (nr + 1) * sizeof *u->off)) ||
        !(u->rules = gm_mem_alloc(m, nr * sizeof *u->rules))) {
        st = fail(e, err);
        goto out;
    }
    uint32_t counter = 0, nstk = 0, ncall = 0, nrules_out = 0;
#define VISIT(r_)                                                                        \
    do {                                                                                 \
        idx[r_] = low[r_] = ++counter;                                                   \
        cur[r_] = g->ref_off[g->rules[r_].first];                                        \
        stk[nstk++] = (r_);                                                              \
        on[r_] = 1;                                                                      \
        call[ncall++] = (r_);                                                            \
    } while (0)
    for (uint32_t r0 = 0; r0 < g->nrules; r0++) {
        if (idx[r0])
            continue;
        VISIT(r0);
        while (ncall) {
            uint32_t r = call[ncall - 1];
            uint32_t end = g->ref_off[g->rules[r].first + g->rules[r].nstates];
            if (cur[r] < end) {
                uint32_t t = g->refs[cur[r]++].sym;
                if (!idx[t])
                    VISIT(t);
                else if (on[t] && idx[t] < low[r])
                    low[r] = idx[t];
                continue;
            }
            ncall--;
            if (ncall && low[r] < low[call[ncall - 1]])
                low[call[ncall - 1]] = low[r];
            if (low[r] != idx[r])
                continue;
            u->off[u->ncomp] = nrules_out;
            do {
                uint32_t x = stk[--nstk];
                on[x] = 0;
                u->comp[x] = u->ncomp;
                u->rules[nrules_out++] = x;
            } while (u->rules[nrules_out - 1] != r);
            u->ncomp++;
        }
    }
#undef VISIT
    u->off[u->ncomp] = nrules_out;
    size_t nc = u->ncomp ? u->ncomp : 1;
    u->reach = gm_mem_alloc(m, nc * sizeof *u->reach);
    u->mark = gm_mem_calloc(m, nc, sizeof *u->mark);
    u->list = gm_mem_alloc(m, nc * sizeof *u->list);
    if (!u->reach || !u->mark || !u->list) {
        st = fail(e, err);
        goto out;
    }
    /* Components reach only lower ones: one pass upwards. */
    for (uint32_t c = 0; c < u->ncomp; c++) {
        uint64_t sum = 0;
        u->stamp++;
        u->mark[c] = u->stamp;
        for (uint32_t i = u->off[c]; i < u->off[c + 1]; i++) {
            const gm_frule *fr = &g->rules[u->rules[i]];
            sum += fr->nstates;
            for (uint32_t j = g->ref_off[fr->first]; j < g->ref_off[fr->first + fr->nstates]; j++) {
                uint32_t d = u->comp[g->refs[j].sym];
                if (u->mark[d] != u->stamp) {
                    u->mark[d] = u->stamp;
                    sum += u->reach[d];
                }
            }
        }
        u->reach[c] = sum > UNIT_MAX_REACH ? UNIT_MAX_REACH + 1 : (uint32_t)sum;
    }
    e->units = u;
    u = NULL;
out:
    units_free(m, u);
    gm_mem_free(m, idx);
    gm_mem_free(m, low);
    gm_mem_free(m, cur);
    gm_mem_free(m, stk);
    gm_mem_free(m, call);
    gm_mem_free(m, on);
    return st;
}

/*
 * Names the unit of component c0: serializes it after every unnamed
 * component it reaches, lowest first (so names of rules outside are known).
 * A component reaching more than its cap of states is not shared (note
 * [unit keys]).
 */
static gm_status unit_name(gm_eengine *e, gm_escratch *w, uint32_t c0, gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_exunits *u = e->units;
    uint32_t cap = u->comp[g->root] == c0 ? UNIT_MAX_ROOT_REACH : UNIT_MAX_REACH;
    if (u->reach[c0] > cap) {
        for (uint32_t i = u->off[c0]; i < u->off[c0 + 1]; i++)
            e->unit[u->rules[i]] = UNIT_UNSHARED;
        return GM_OK;
    }
    /* The unnamed components reachable from c0 (a depth-first search with
       u->list as its stack, then as the list). */
    uint32_t n = 0, top = 0;
    u->stamp++;
    u->mark[c0] = u->stamp;
    u->list[n++] = c0;
    while (top < n) {
        uint32_t c = u->list[top++];
        for (uint32_t i = u->off[c]; i < u->off[c + 1]; i++) {
            const gm_frule *fr = &g->rules[u->rules[i]];
            for (uint32_t j = g->ref_off[fr->first]; j < g->ref_off[fr->first + fr->nstates]; j++) {
                uint32_t r = g->refs[j].sym, d = u->comp[r];
                if (u->mark[d] != u->stamp && e->unit[r] == UNIT_NONE) {
                    u->mark[d] = u->stamp;
                    u->list[n++] = d;
                }
            }
        }
    }
    qsort(u->list, n, sizeof *u->list, cmp_u32);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t c = u->list[k];
        gm_status st = unit_serialize(e, w, u->rules + u->off[c], u->off[c + 1] - u->off[c], err);
        if (st != GM_OK)
            return st;
    }
    return GM_OK;
}

/*
 * note [tail keys]
 * The entry of a state q of a rule without a counter depends on less than
 * q's unit: only on the states reachable from q in its rule (what the seed
 * item can still do; completing the rule escapes to the outer set) and on
 * the rules they reference. A property's value after its ':' is `ws
 * string` then the end of the property's rule in most schemas, though the
 * rule (its name, its other states) is every schema's own. So such an
 * entry is keyed by that tail: its states serialized from q (as a unit's,
 * note [unit keys]) with every reference named by its rule's unit. Tails
 * longer than TAIL_MAX_STATES, or naming a unit that is not shared, fall
 * back to the unit key; referenced units are named only within the cap
 * their naming from q's own unit would have had.
 */
enum { TAIL_MAX_STATES = 128 };

static gm_status tail_key(gm_eengine *e, gm_escratch *w, uint32_t state, uint64_t ekey, bool *ok,
                          gm_error *err)
{
    const gm_egrammar *g = e->g;
    gm_exunits *u = e->units;
    uint32_t r = g->state_rule[state];
    uint32_t cap = u->comp[g->root] == u->comp[r] ? UNIT_MAX_ROOT_REACH : UNIT_MAX_REACH;
    *ok = false;
    /* The tail's states (at most TAIL_MAX_STATES); the unnamed components
       it references, in u->list. */
    uint32_t nq = 0, nlist = 0;
    bool fits = true, oom = false;
    u->stamp++;
#define TAIL_ENQ(s_)                                                                     \
    do {                                                                                 \
        if (w->knum[s_] == GM_FSM_NONE) {                                                \
            if (nq == TAIL_MAX_STATES)                                                   \
                fits = false;                                                            \
            else {                                                                       \
                w->knum[s_] = nq;                                                        \
                w->kqueue[nq++] = (s_);                                                  \
            }                                                                            \
        }                                                                                \
    } while (0)
    TAIL_ENQ(state);
    for (uint32_t qi = 0; qi < nq && fits; qi++) {
        uint32_t s = w->kqueue[qi];
        uint32_t at = ranges_of(e, s);
        if (at == UINT32_MAX) {
            oom = true;
            break;
        }
        for (uint32_t j = at; j < at + e->krange_n[s] && fits; j++)
            TAIL_ENQ(e->kranges.v[2 * j + 1]);
        for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1] && fits; j++) {
            uint32_t br = g->refs[j].sym, d = u->comp[br];
            if (u->reach[d] > cap || e->unit[br] == UNIT_UNSHARED)
                fits = false;
            else if (e->unit[br] == UNIT_NONE && u->mark[d] != u->stamp) {
                u->mark[d] = u->stamp;
                u->list[nlist++] = d;
            }
            TAIL_ENQ(g->refs[j].to);
        }
        for (uint32_t j = g->tok_off[s]; j < g->tok_off[s + 1] && fits; j++)
            TAIL_ENQ(g->toks[j].to);
    }
#undef TAIL_ENQ
    for (uint32_t i = 0; i < nq; i++)
        w->knum[w->kqueue[i]] = GM_FSM_NONE;
    if (oom)
        return fail(e, err);
    if (!fits)
        return GM_OK;
    /* (unit_name reuses u->list: take the components off it first) */
    uint32_t need[16];
    if (nlist > 16)
        return GM_OK;
    memcpy(need, u->list, nlist * sizeof *need);
    for (uint32_t i = 0; i < nlist; i++)
        if (e->unit[u->rules[u->off[need[i]]]] == UNIT_NONE) {
            gm_status st = unit_name(e, w, need[i], err);
            if (st != GM_OK)
                return st;
        }
    ser z;
    ser_begin(&z, e, w);
    kpush(&z, 2 | (e->variant & GM_EVARIANT_NO_REPEAT_COMPRESS ? 1 : 0));
    kpush(&z, (uint32_t)(ekey & 0xffffffffu));
    enq(&z, state);
    for (uint32_t qi = 0; qi < z.nq && !z.bad && z.shared; qi++)
        put_state(&z, w->kqueue[qi]);
    ser_end(&z);
    if (z.bad)
        return fail(e, err);
    if (!z.shared)
        w->key.n = 0;
    *ok = z.shared;
    return GM_OK;
}

gm_status gm_exkey(gm_eengine *e, gm_escratch *w, uint32_t state, uint64_t ekey, gm_error *err)
{
    gm_status st = scratch(e, w, err);
    if (st != GM_OK)
        return st;
    uint32_t r = e->g->state_rule[state];
    if (!e->units && (st = units_plan(e, err)) != GM_OK)
        return st;
    if (!e->g->rules[r].repeat) {
        bool ok;
        if ((st = tail_key(e, w, state, ekey, &ok, err)) != GM_OK || ok)
            return st;
    }
    if (e->unit[r] == UNIT_NONE && (st = unit_name(e, w, e->units->comp[r], err)) != GM_OK)
        return st;
    w->key.n = 0;
    if (e->unit[r] == UNIT_UNSHARED || e->unit_num[state] == NUM_UNSHARED)
        return GM_OK;
    if (gm_vec_reserve(e->mem, &w->key, 4))
        return fail(e, err);
    w->key.v[0] = e->variant & GM_EVARIANT_NO_REPEAT_COMPRESS ? 1 : 0;
    w->key.v[1] = (uint32_t)(ekey & 0xffffffffu);
    w->key.v[2] = e->unit[r];
    w->key.v[3] = e->unit_num[state];
    w->key.n = 4;
    return GM_OK;
}

void gm_exkey_fini(gm_eengine *e)
{
    units_free(e->mem, e->units);
    e->units = NULL;
    gm_mem_free(e->mem, e->unit);
    gm_mem_free(e->mem, e->unit_num);
    gm_mem_free(e->mem, e->krange_at);
    gm_mem_free(e->mem, e->krange_n);
    gm_vec_free(e->mem, &e->kranges);
    e->unit = NULL;
    e->unit_num = NULL;
    e->krange_at = NULL;
    e->krange_n = NULL;
}
