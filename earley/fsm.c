/*
 * What every rule-automata grammar derives from its automata, whether it
 * was just built (fsm_build.c) or read from a file (fsm_io.c): state
 * flags, nullable rules, the check that every rule derives a string, and
 * the follow sets the token-mask cache uses (note [follow sets]).
 */
#include <stdlib.h>
#include <string.h>

#include "earley/fsm.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/vec.h"

uint32_t gm_fsm_ref_next(const gm_egrammar *g, uint32_t s, uint32_t rule)
{
    uint32_t lo = g->ref_off[s], hi = g->ref_off[s + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->refs[mid].sym < rule)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->ref_off[s + 1] && g->refs[lo].sym == rule ? g->refs[lo].to : GM_FSM_NONE;
}

static bool or4(uint64_t *dst, const uint64_t *src)
{
    bool changed = false;
    for (int i = 0; i < 4; i++) {
        uint64_t x = dst[i] | src[i];
        changed |= x != dst[i];
        dst[i] = x;
    }
    return changed;
}

/* Whether the rule of state s may complete at s (over-approximated for
   repetition rules: their counters are not known here). */
static bool ends_here(const gm_egrammar *g, uint32_t s)
{
    return (g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END)) ||
           ((g->state_flags[s] & GM_FS_REP_START) && g->rules[g->state_rule[s]].rep_min == 0);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * note [prediction closures]
 * Predicting rule B in a set adds items (s, counter 0, origin: this set)
 * for every state s of the closure of B's start under prediction and under
 * moving past nullable rules. Those items never complete anything (a
 * completion with this set as origin is an empty derivation, already
 * taken care of: eset.c) and never end an iteration (no input read), so
 * the recognizer adds the precomputed closure at once and never looks at
 * them again.
 */
static gm_status prediction_closures(gm_egrammar *g, uint32_t *stack, uint8_t *mark,
                                     gm_error *err)
{
    gm_mem *m = g->mem;
    size_t cap = 0, n = 0;
    uint32_t *pred = NULL;
    gm_mem_free(m, g->pred_off);
    gm_mem_free(m, g->pred);
    g->pred = NULL;
    g->pred_off = gm_mem_alloc(m, ((size_t)g->nrules + 1) * sizeof *g->pred_off);
    if (!g->pred_off)
        return gm_mem_fail(m, err, "the grammar's prediction closures");
    memset(mark, 0, g->nstates);
    for (uint32_t r = 0; r < g->nrules; r++) {
        g->pred_off[r] = (uint32_t)n;
        size_t first = n, sp = 0;
        stack[sp++] = g->rules[r].start;
        mark[g->rules[r].start] = 1;
        while (sp) {
            uint32_t q = stack[--sp];
            if (n == cap) {
                size_t nc = cap ? cap * 2 : 256;
                uint32_t *p = gm_mem_reallocarray(m, pred, nc, sizeof *p);
                if (!p) {
                    gm_mem_free(m, pred);
                    return gm_mem_fail(m, err, "the grammar's prediction closures");
                }
                pred = p;
                cap = nc;
            }
            pred[n++] = q;
            for (uint32_t j = g->ref_off[q]; j < g->ref_off[q + 1]; j++) {
                const gm_frule *b = &g->rules[g->refs[j].sym];
                if (!mark[b->start]) {
                    mark[b->start] = 1;
                    stack[sp++] = b->start;
                }
                if (b->nullable && !mark[g->refs[j].to]) {
                    mark[g->refs[j].to] = 1;
                    stack[sp++] = g->refs[j].to;
                }
            }
        }
        for (size_t i = first; i < n; i++)
            mark[pred[i]] = 0;
        qsort(pred + first, n - first, sizeof *pred, cmp_u32);
        if (n > UINT32_MAX / 2) {
            gm_mem_free(m, pred);
            return gm_error_set(err, GM_ERR_LIMIT, "the grammar's prediction closures are too large");
        }
    }
    g->pred_off[g->nrules] = (uint32_t)n;
    g->pred = pred ? pred : gm_mem_alloc(m, sizeof *pred);
    if (!g->pred)
        return gm_mem_fail(m, err, "the grammar's prediction closures");
    return GM_OK;
}

/*
 * The byte transitions of every state, sparse: (run, target) for each run
 * of the byte-class map (maximal byte ranges of one class, in byte order)
 * on which the state has a transition. One scan of the dense table; the
 * passes below read these instead of scanning it again.
 */
typedef struct sparse {
    uint32_t nruns;
    uint8_t start[256];       /* first byte of each run */
    uint64_t bytes[256][4];   /* the bytes of each run */
    uint32_t *off;            /* [nstates + 1]: s's pairs are e.v[2 * off[s] .. 2 * off[s + 1]) */
    GM_VEC(uint32_t) e;
} sparse;

static void sparse_free(gm_mem *m, sparse *sp)
{
    gm_mem_free(m, sp->off);
    gm_vec_free(m, &sp->e);
}

/* pairs (may be NULL): the (class, target) pairs of gm_fsm_finish_sparse. */
static int sparse_build(gm_egrammar *g, const uint32_t *off, const uint32_t *pairs, sparse *sp)
{
    gm_mem *m = g->mem;
    uint32_t n = g->nstates;
    memset(sp, 0, sizeof *sp);
    for (uint32_t b = 0; b < 256; b++) {
        if (b == 0 || g->byte_class[b] != g->byte_class[b - 1])
            sp->start[sp->nruns++] = (uint8_t)b;
        sp->bytes[sp->nruns - 1][b >> 6] |= (uint64_t)1 << (b & 63);
    }
    if (pairs && sp->nruns == g->nclasses) {
        /* classes are runs (ascending): run i is class i */
        sp->off = gm_mem_alloc(m, ((size_t)n + 1) * sizeof *sp->off);
        sp->e.v = gm_mem_alloc(m, (off[n] ? 2 * (size_t)off[n] : 1) * sizeof *sp->e.v);
        if (!sp->off || !sp->e.v)
            return -1;
        memcpy(sp->off, off, ((size_t)n + 1) * sizeof *sp->off);
        memcpy(sp->e.v, pairs, 2 * (size_t)off[n] * sizeof *sp->e.v);
        sp->e.n = sp->e.cap = 2 * (size_t)off[n];
        return 0;
    }
    sp->off = gm_mem_alloc(m, ((size_t)n + 1) * sizeof *sp->off);
    if (!sp->off)
        return -1;
    for (uint32_t s = 0; s < n; s++) {
        sp->off[s] = (uint32_t)(sp->e.n / 2);
        for (uint32_t i = 0; i < sp->nruns; i++) {
            uint32_t t = gm_fsm_next(g, s, sp->start[i]);
            if (t != GM_FSM_NONE && (gm_vec_push(m, &sp->e, i) || gm_vec_push(m, &sp->e, t)))
                return -1;
        }
    }
    sp->off[n] = (uint32_t)(sp->e.n / 2);
    return 0;
}

/*
 * note [structural hashes]
 * g->hash[s] summarizes what items at state s can do, independently of
 * how states and rules are numbered: its flags and repetition bounds, and
 * for HASH_ROUNDS rounds the hashes of its byte transitions (by byte
 * range), of the rules it references (their start states) with their
 * targets, and of its special tokens (by text). The cross-grammar cache
 * (xkey.c) orders reference edges by these hashes to serialize the
 * structure reachable from a state canonically; the serialization, not the
 * hash, decides equality, so a collision costs sharing, never exactness.
 *
 * xkey.c reads the hashes of rule start states and of the targets of
 * reference edges only, so only those are computed (0 elsewhere): round r
 * needs round r - 1 at the states of round r and at what they read (their
 * byte and token targets, reference targets and referenced rules' starts),
 * a cone a tenth the size of every state times every round on MaskBench.
 */
enum { HASH_ROUNDS = 6 };

/* Appends to list the states state s's hash reads that are not marked yet. */
static void hash_reads(const gm_egrammar *g, const uint32_t *run_to, const uint32_t *run_off,
                       uint32_t s, uint8_t *in, uint32_t *list, uint32_t *n)
{
#define ADD(t)                                                                                     \
    do {                                                                                           \
        uint32_t t_ = (t);                                                                         \
        if (!in[t_]) {                                                                             \
            in[t_] = 1;                                                                            \
            list[(*n)++] = t_;                                                                     \
        }                                                                                          \
    } while (0)
    for (uint32_t i = run_off[s]; i < run_off[s + 1]; i++)
        ADD(run_to[i]);
    for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++) {
        ADD(g->rules[g->refs[j].sym].start);
        ADD(g->refs[j].to);
    }
    for (uint32_t j = g->tok_off[s]; j < g->tok_off[s + 1]; j++)
        ADD(g->toks[j].to);
#undef ADD
}

static gm_status structural_hashes(gm_egrammar *g, const sparse *sp, gm_error *err)
{
    gm_mem *m = g->mem;
    uint32_t n = g->nstates;
    size_t nr = 0;
    for (uint32_t s = 0; s < n; s++) {
        const uint32_t *e = sp->e.v;
        for (uint32_t j = sp->off[s]; j < sp->off[s + 1]; j++)
            nr += !(j > sp->off[s] && e[2 * j - 2] + 1 == e[2 * j] && e[2 * j - 1] == e[2 * j + 1]);
    }
    size_t nrefs = g->ref_off[n], ntoks = g->tok_off[n];
    uint64_t *h = gm_mem_calloc(m, n ? n : 1, sizeof *h);
    uint64_t *nh = gm_mem_calloc(m, n ? n : 1, sizeof *nh);
    uint32_t *run_off = gm_mem_alloc(m, ((size_t)n + 1) * sizeof *run_off);
    uint64_t *run_key = gm_mem_alloc(m, (nr ? nr : 1) * sizeof *run_key);
    uint32_t *run_to = gm_mem_alloc(m, (nr ? nr : 1) * sizeof *run_to);
    uint64_t *tok_hash = gm_mem_alloc(m, (ntoks ? ntoks : 1) * sizeof *tok_hash);
    uint32_t *list = gm_mem_alloc(m, (n ? n : 1) * sizeof *list);
    uint32_t *level_end = gm_mem_alloc(m, (HASH_ROUNDS + 1) * sizeof *level_end);
    uint8_t *in = gm_mem_calloc(m, n ? n : 1, 1);
    gm_status st = GM_OK;
    if (!h || !nh || !run_off || !run_key || !run_to || !tok_hash || !list || !level_end || !in) {
        st = gm_mem_fail(m, err, "the grammar's hashes");
        goto out;
    }
    /* The byte transitions as (first byte of a range of one target, target):
       a run whose previous run goes to the same target continues its range. */
    nr = 0;
    for (uint32_t s = 0; s < n; s++) {
        run_off[s] = (uint32_t)nr;
        const uint32_t *e = sp->e.v;
        for (uint32_t j = sp->off[s]; j < sp->off[s + 1]; j++) {
            uint32_t i = e[2 * j], t = e[2 * j + 1];
            if (j > sp->off[s] && e[2 * j - 2] + 1 == i && e[2 * j - 1] == t)
                continue;
            run_key[nr] = (uint64_t)sp->start[i] << 56;
            run_to[nr++] = t;
        }
    }
    run_off[n] = (uint32_t)nr;
    for (size_t j = 0; j < ntoks; j++) {
        uint32_t y = g->toks[j].sym;
        tok_hash[j] = gm_hash_bytes(g->tok_text + g->tok_text_off[y],
                                    g->tok_text_off[y + 1] - g->tok_text_off[y], 7);
    }
    /* The cone: list[0 .. level_end[r]) are the states round HASH_ROUNDS - r
       computes (level 0: what xkey.c reads; each level adds what the one
       before reads). */
    uint32_t nl = 0;
    for (uint32_t r = 0; r < g->nrules; r++)
        if (!in[g->rules[r].start]) {
            in[g->rules[r].start] = 1;
            list[nl++] = g->rules[r].start;
        }
    for (size_t j = 0; j < nrefs; j++)
        if (!in[g->refs[j].to]) {
            in[g->refs[j].to] = 1;
            list[nl++] = g->refs[j].to;
        }
    level_end[0] = nl;
    for (int lv = 1; lv <= HASH_ROUNDS; lv++) {
        /* what the states new at the level before read (the older ones' reads are in) */
        for (uint32_t i = lv > 1 ? level_end[lv - 2] : 0; i < level_end[lv - 1]; i++)
            hash_reads(g, run_to, run_off, list[i], in, list, &nl);
        level_end[lv] = nl;
    }
    /* round 0 at every state of the cone, then rounds 1.. on shrinking levels */
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t s = list[i];
        const gm_frule *fr = &g->rules[g->state_rule[s]];
        uint64_t x = (uint64_t)(g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END | GM_FS_REP_START));
        x = gm_hash_mix64(x ^ ((uint64_t)fr->repeat << 8) ^ ((uint64_t)fr->rep_min << 16));
        h[s] = gm_hash_mix64(x ^ fr->rep_max);
    }
    const uint64_t no_refs = gm_hash_mix64(1), no_toks = gm_hash_mix64(2);
    for (int round = 0; round < HASH_ROUNDS; round++) {
        uint32_t end = level_end[HASH_ROUNDS - 1 - round];
        for (uint32_t i = 0; i < end; i++) {
            uint32_t s = list[i];
            uint64_t x = h[s];
            for (uint32_t k = run_off[s], e = run_off[s + 1]; k < e; k++)
                x = gm_hash_mix64(x ^ run_key[k] ^ h[run_to[k]]);
            /* References: a commutative combination (their order is numbering). */
            uint64_t rh = no_refs, th = no_toks;
            uint32_t j0 = g->ref_off[s], j1 = g->ref_off[s + 1];
            if (j0 < j1) {
                uint64_t refs = 0;
                for (uint32_t j = j0; j < j1; j++)
                    refs += gm_hash_mix64(h[g->rules[g->refs[j].sym].start] * 31 + h[g->refs[j].to]);
                rh = gm_hash_mix64(refs + 1);
            }
            j0 = g->tok_off[s];
            j1 = g->tok_off[s + 1];
            if (j0 < j1) {
                uint64_t toks = 0;
                for (uint32_t j = j0; j < j1; j++)
                    toks += gm_hash_mix64(tok_hash[j] ^ h[g->toks[j].to]);
                th = gm_hash_mix64(toks + 2);
            }
            nh[s] = gm_hash_mix64(x ^ rh ^ th);
        }
        uint64_t *tmp = h;
        h = nh;
        nh = tmp;
    }
    /* h: the last round at level 0; nothing else */
    memset(nh, 0, (size_t)n * sizeof *nh);
    for (uint32_t i = 0; i < level_end[0]; i++)
        nh[list[i]] = h[list[i]];
    gm_mem_free(m, g->hash);
    g->hash = nh;
    nh = NULL;
out:
    gm_mem_free(m, h);
    gm_mem_free(m, nh);
    gm_mem_free(m, run_off);
    gm_mem_free(m, run_key);
    gm_mem_free(m, run_to);
    gm_mem_free(m, tok_hash);
    gm_mem_free(m, list);
    gm_mem_free(m, level_end);
    gm_mem_free(m, in);
    return st;
}

/*
 * note [follow sets]
 * follow(B) is a superset of the bytes that can come right after a
 * completion of B in any sentence: FIRST of what follows each reference
 * to B, and follow(A) when that rest of A can be empty. The token-mask
 * cache classifies a token whose walk completes the item's rule before
 * its last byte as uncertain only when the next byte is in the rule's
 * follow set, rejected otherwise; a superset keeps that exact (the
 * runtime check decides the uncertain ones).
 */
static gm_status finish(gm_egrammar *g, const sparse *bt, gm_error *err);

gm_status gm_fsm_finish(gm_egrammar *g, gm_error *err)
{
    return gm_fsm_finish_sparse(g, NULL, NULL, err);
}

gm_status gm_fsm_finish_sparse(gm_egrammar *g, const uint32_t *off, const uint32_t *pairs,
                               gm_error *err)
{
    gm_mem *m = g->mem;
    sparse *sp = gm_mem_alloc(m, sizeof *sp);
    if (!sp)
        return gm_mem_fail(m, err, "the grammar's transitions");
    if (sparse_build(g, off, pairs, sp)) {
        sparse_free(m, sp);
        gm_mem_free(m, sp);
        return gm_mem_fail(m, err, "the grammar's transitions");
    }
    gm_status st = finish(g, sp, err);
    sparse_free(m, sp);
    gm_mem_free(m, sp);
    return st;
}

static gm_status finish(gm_egrammar *g, const sparse *bt, gm_error *err)
{
    gm_mem *m = g->mem;
    uint32_t n = g->nstates;
    for (uint32_t s = 0; s < n; s++) {
        uint8_t f = g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END | GM_FS_REP_START);
        if (bt->off[s + 1] > bt->off[s])
            f |= GM_FS_SCANS;
        if (g->ref_off[s + 1] > g->ref_off[s])
            f |= GM_FS_WAITS;
        if (g->tok_off[s + 1] > g->tok_off[s])
            f |= GM_FS_TOKENS;
        g->state_flags[s] = f;
    }
    /* Nullable rules (fixpoint). A repetition rule whose x can be empty
       (through references) needs no iterations: min becomes 0. */
    uint8_t *reach = gm_mem_alloc(m, n ? n : 1);
    uint32_t *stack = gm_mem_alloc(m, (size_t)(n ? n : 1) * sizeof *stack);
    uint64_t (*first)[4] = gm_mem_calloc(m, n ? n : 1, sizeof *first);
    if (!reach || !stack || !first) {
        gm_mem_free(m, reach);
        gm_mem_free(m, stack);
        gm_mem_free(m, first);
        return gm_mem_fail(m, err, "the grammar's follow sets");
    }
    for (uint32_t r = 0; r < g->nrules; r++)
        g->rules[r].nullable = g->rules[r].repeat && g->rules[r].rep_min == 0;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t r = 0; r < g->nrules; r++) {
            gm_frule *fr = &g->rules[r];
            if (fr->nullable)
                continue;
            memset(reach + fr->first, 0, fr->nstates);
            size_t sp = 0;
            stack[sp++] = fr->start;
            reach[fr->start] = 1;
            bool found = false;
            while (sp && !found) {
                uint32_t s = stack[--sp];
                if (g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END)) {
                    found = true;
                    break;
                }
                for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++) {
                    uint32_t t = g->refs[j].to;
                    if (g->rules[g->refs[j].sym].nullable && !reach[t]) {
                        reach[t] = 1;
                        stack[sp++] = t;
                    }
                }
            }
            if (found) {
                fr->nullable = 1;
                if (fr->repeat)
                    fr->rep_min = 0;
                changed = true;
            }
        }
    }
    /* Every rule derives some string: productive rules (fixpoint). */
    {
        uint8_t *prod = gm_mem_calloc(m, g->nrules ? g->nrules : 1, 1);
        if (!prod) {
            gm_mem_free(m, reach);
            gm_mem_free(m, stack);
            gm_mem_free(m, first);
            return gm_mem_fail(m, err, "the grammar");
        }
        for (bool changed = true; changed;) {
            changed = false;
            for (uint32_t r = 0; r < g->nrules; r++) {
                gm_frule *fr = &g->rules[r];
                if (prod[r])
                    continue;
                if (fr->nullable) {
                    prod[r] = changed = 1;
                    continue;
                }
                memset(reach + fr->first, 0, fr->nstates);
                size_t sp = 0;
                stack[sp++] = fr->start;
                reach[fr->start] = 1;
                while (sp && !prod[r]) {
                    uint32_t s = stack[--sp];
                    if (g->state_flags[s] & (GM_FS_ACCEPT | GM_FS_ITER_END)) {
                        prod[r] = changed = 1;
                        break;
                    }
                    for (uint32_t j = bt->off[s]; j < bt->off[s + 1]; j++) {
                        uint32_t t = bt->e.v[2 * j + 1];
                        if (!reach[t]) {
                            reach[t] = 1;
                            stack[sp++] = t;
                        }
                    }
                    for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++) {
                        uint32_t t = g->refs[j].to;
                        if (prod[g->refs[j].sym] && !reach[t]) {
                            reach[t] = 1;
                            stack[sp++] = t;
                        }
                    }
                    for (uint32_t j = g->tok_off[s]; j < g->tok_off[s + 1]; j++) {
                        uint32_t t = g->toks[j].to;
                        if (!reach[t]) {
                            reach[t] = 1;
                            stack[sp++] = t;
                        }
                    }
                }
            }
        }
        uint32_t bad = GM_FSM_NONE;
        for (uint32_t r = 0; r < g->nrules && bad == GM_FSM_NONE; r++)
            if (!prod[r])
                bad = r;
        gm_mem_free(m, prod);
        if (bad != GM_FSM_NONE) {
            gm_mem_free(m, reach);
            gm_mem_free(m, stack);
            gm_mem_free(m, first);
            return gm_error_set(err, GM_ERR_GRAMMAR, "rule %s derives no finite string",
                                g->names + g->rules[bad].name);
        }
    }
    /*
     * FIRST and "may end without input" are read at rule starts and
     * reference targets only, and those read each other only (through
     * references, nullable ones and iteration ends): the fixpoints run on
     * that list, in stack.
     */
    uint32_t nl = 0;
    memset(reach, 0, n);
    for (uint32_t r = 0; r < g->nrules; r++)
        if (!reach[g->rules[r].start]) {
            reach[g->rules[r].start] = 1;
            stack[nl++] = g->rules[r].start;
        }
    for (uint32_t j = 0; j < g->ref_off[n]; j++)
        if (!reach[g->refs[j].to]) {
            reach[g->refs[j].to] = 1;
            stack[nl++] = g->refs[j].to;
        }
    for (uint32_t i = 0; i < nl; i++) {
        uint32_t s = stack[i];
        for (uint32_t j = bt->off[s]; j < bt->off[s + 1]; j++)
            or4(first[s], bt->bytes[bt->e.v[2 * j]]);
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < nl; i++) {
            uint32_t s = stack[i];
            for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++) {
                const gm_frule *b = &g->rules[g->refs[j].sym];
                changed |= or4(first[s], first[b->start]);
                if (b->nullable)
                    changed |= or4(first[s], first[g->refs[j].to]);
            }
            if (g->state_flags[s] & GM_FS_ITER_END)
                changed |= or4(first[s], first[g->rules[g->state_rule[s]].start]);
        }
    }
    /* Which of them may end their rule without input (fixpoint), in reach. */
    memset(reach, 0, n);
    for (uint32_t i = 0; i < nl; i++)
        reach[stack[i]] = ends_here(g, stack[i]);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t i = 0; i < nl; i++) {
            uint32_t s = stack[i];
            if (reach[s])
                continue;
            for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++)
                if (g->rules[g->refs[j].sym].nullable && reach[g->refs[j].to]) {
                    reach[s] = 1;
                    changed = true;
                    break;
                }
        }
    }
    /* Follow sets: FIRST of each reference's target once; then the rules'
       follow sets along the references whose rest can be empty (fixpoint
       over those rule pairs, kept in stack as (a, b)). */
    for (uint32_t r = 0; r < g->nrules; r++) {
        memset(g->rules[r].follow, 0, sizeof g->rules[r].follow);
        g->rules[r].follow_eof = 0;
    }
    g->rules[g->root].follow_eof = 1;
    size_t np = 0;
    uint32_t *pairs = NULL;
    for (uint32_t s = 0; s < n; s++) {
        for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++) {
            uint32_t t = g->refs[j].to;
            or4(g->rules[g->refs[j].sym].follow, first[t]);
            if (reach[t])
                np++;
        }
    }
    pairs = gm_mem_alloc(m, (np ? 2 * np : 1) * sizeof *pairs);
    if (!pairs) {
        gm_mem_free(m, reach);
        gm_mem_free(m, stack);
        gm_mem_free(m, first);
        return gm_mem_fail(m, err, "the grammar's follow sets");
    }
    np = 0;
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t j = g->ref_off[s]; j < g->ref_off[s + 1]; j++)
            if (reach[g->refs[j].to]) {
                pairs[np++] = g->state_rule[s];
                pairs[np++] = g->refs[j].sym;
            }
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < np; i += 2) {
            gm_frule *a = &g->rules[pairs[i]], *b = &g->rules[pairs[i + 1]];
            changed |= or4(b->follow, a->follow);
            if (a->follow_eof && !b->follow_eof)
                b->follow_eof = changed = 1;
        }
    }
    gm_mem_free(m, pairs);
    gm_status st = prediction_closures(g, stack, reach, err);
    if (st == GM_OK)
        st = structural_hashes(g, bt, err);
    gm_mem_free(m, reach);
    gm_mem_free(m, stack);
    gm_mem_free(m, first);
    return st;
}

gm_status gm_fsm_check_budgets(const gm_egrammar *g, gm_error *err)
{
    for (uint32_t r = 0; r < g->nrules; r++) {
        const gm_frule *fr = &g->rules[r];
        if (fr->max_tokens == GM_EX_INF)
            continue;
        bool bytes_only = !fr->repeat;
        for (uint32_t s = fr->first; s < fr->first + fr->nstates && bytes_only; s++)
            bytes_only = !(g->state_flags[s] & (GM_FS_WAITS | GM_FS_TOKENS));
        if (!bytes_only)
            return gm_error_set(err, GM_ERR_UNSUPPORTED, "rule %s: a token budget (max_tokens) "
                                "on a rule that refers to other rules or special tokens is not "
                                "supported (only on free text)", g->names + fr->name);
    }
    return GM_OK;
}
