/* Test helpers of the LALR(1) tests: BNF reader, Earley reference, random inputs. */
#include "tests/lalr_testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parser/grammar.h"
#include "base/bitset.h"
#include "tests/testutil.h"

/* ---- loading ------------------------------------------------------------------ */

static void quiet(void *ud, const gm_error *w)
{
    (void)ud;
    (void)w;
}

gm_cfg *lt_cfg_parse(gm_mem *m, const char *file, const char *text)
{
    gm_cfg *g = NULL;
    gm_error err;
    gm_grammar_options o;
    memset(&o, 0, sizeof o);
    o.warn = quiet;
    if (gm_grammar_load(m, file, text, strlen(text), &o, &g, &err) != GM_OK)
        fail_msg("%s: %s\n%s", file, err.message, text);
    return g;
}

gm_cfg *lt_cfg_try_parse(gm_mem *m, const char *file, const char *text)
{
    gm_cfg *g = NULL;
    gm_grammar_options o;
    memset(&o, 0, sizeof o);
    o.warn = quiet;
    if (gm_grammar_load(m, file, text, strlen(text), &o, &g, NULL) != GM_OK)
        return NULL;
    return g;
}

gm_cfg *lt_cfg_load_file(gm_mem *m, const char *path)
{
    gm_cfg *g = NULL;
    gm_error err;
    gm_grammar_options o;
    memset(&o, 0, sizeof o);
    o.warn = quiet;
    if (gm_grammar_load_file(m, path, &o, &g, &err) != GM_OK)
        fail_msg("%s", err.message);
    return g;
}

void lt_cfg_free(gm_cfg *g)
{
    gm_cfg_destroy(g);
}

uint32_t lt_term(const gm_cfg *g, const char *name)
{
    for (uint32_t i = 0; i < g->nterminals; i++)
        if (!strcmp(g->names[i], name))
            return i;
    fail_msg("no terminal %s", name);
    return UINT32_MAX;
}

/* ---- Earley --------------------------------------------------------------- */

typedef struct eitem {
    uint32_t prod, dot, origin;
} eitem;

typedef struct eset {
    eitem *v;
    size_t n, cap;
} eset;

static void eset_add(eset *s, uint32_t prod, uint32_t dot, uint32_t origin)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].prod == prod && s->v[i].dot == dot && s->v[i].origin == origin)
            return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        assert_non_null(s->v);
    }
    s->v[s->n++] = (eitem){prod, dot, origin};
}

static bool *cfg_nullable(const gm_cfg *g)
{
    bool *nul = calloc(g->nnonterminals + 1, sizeof *nul);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t p = 0; p < g->nprods; p++) {
            uint32_t a = g->prods[p].lhs - g->nterminals;
            if (nul[a])
                continue;
            bool all = true;
            for (uint32_t i = 0; i < g->prods[p].len && all; i++) {
                gm_sym s = g->rhs[g->prods[p].rhs + i];
                all = s >= g->nterminals && nul[s - g->nterminals];
            }
            if (all)
                nul[a] = changed = true;
        }
    }
    return nul;
}

size_t lt_earley_run(const gm_cfg *g, const uint32_t *terms, size_t n)
{
    bool *nul = cfg_nullable(g);
    eset *sets = calloc(n + 1, sizeof *sets);
    for (uint32_t p = 0; p < g->nprods; p++)
        if (g->prods[p].lhs == g->start)
            eset_add(&sets[0], p, 0, 0);
    for (size_t i = 0; i <= n; i++) {
        for (size_t j = 0; j < sets[i].n; j++) {
            eitem it = sets[i].v[j];
            const gm_production *pr = &g->prods[it.prod];
            if (it.dot < pr->len) {
                gm_sym x = g->rhs[pr->rhs + it.dot];
                if (x < g->nterminals) {
                    if (i < n && terms[i] == x)
                        eset_add(&sets[i + 1], it.prod, it.dot + 1, it.origin);
                } else {
                    for (uint32_t q = 0; q < g->nprods; q++)
                        if (g->prods[q].lhs == x)
                            eset_add(&sets[i], q, 0, (uint32_t)i);
                    if (nul[x - g->nterminals])
                        eset_add(&sets[i], it.prod, it.dot + 1, it.origin);
                }
            } else {
                eset *o = &sets[it.origin];
                for (size_t k = 0; k < o->n; k++) {
                    eitem b = o->v[k];
                    const gm_production *pb = &g->prods[b.prod];
                    if (b.dot < pb->len && g->rhs[pb->rhs + b.dot] == pr->lhs)
                        eset_add(&sets[i], b.prod, b.dot + 1, b.origin);
                }
            }
        }
    }
    size_t dead = n;
    for (size_t i = 1; i <= n; i++)
        if (!sets[i].n) {
            dead = i - 1;
            break;
        }
    bool ok = false;
    for (size_t j = 0; j < sets[n].n; j++) {
        eitem it = sets[n].v[j];
        if (it.origin == 0 && it.dot == g->prods[it.prod].len && g->prods[it.prod].lhs == g->start)
            ok = true;
    }
    for (size_t i = 0; i <= n; i++)
        free(sets[i].v);
    free(sets);
    free(nul);
    return dead < n ? dead : ok ? n : n + 1;
}

bool lt_earley_accepts(const gm_cfg *g, const uint32_t *terms, size_t n)
{
    return lt_earley_run(g, terms, n) == n;
}

/* ---- random inputs ---------------------------------------------------------- */

uint64_t lt_rand(lt_rng *r)
{
    uint64_t x = r->s ? r->s : 0x9e3779b97f4a7c15ULL;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

size_t lt_random_sentence(const gm_cfg *g, lt_rng *r, size_t budget, uint32_t *out, size_t cap)
{
    uint32_t nn = g->nnonterminals, nt = g->nterminals;
    uint64_t *minlen = malloc((nn + 1) * sizeof *minlen);
    uint32_t *minprod = malloc((nn + 1) * sizeof *minprod);
    for (uint32_t a = 0; a < nn; a++) {
        minlen[a] = UINT64_MAX;
        minprod[a] = UINT32_MAX;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t p = 0; p < g->nprods; p++) {
            uint64_t sum = 0;
            for (uint32_t i = 0; i < g->prods[p].len && sum != UINT64_MAX; i++) {
                gm_sym s = g->rhs[g->prods[p].rhs + i];
                sum = s < nt ? sum + 1 : (minlen[s - nt] == UINT64_MAX ? UINT64_MAX : sum + minlen[s - nt]);
            }
            uint32_t a = g->prods[p].lhs - nt;
            if (sum < minlen[a]) {
                minlen[a] = sum;
                minprod[a] = p;
                changed = true;
            }
        }
    }
    size_t result = SIZE_MAX;
    if (minlen[g->start - nt] == UINT64_MAX)
        goto done;
    size_t scap = 1024, sn = 0, n = 0, steps = 0;
    uint32_t *stack = malloc(scap * sizeof *stack);
    stack[sn++] = g->start;
    while (sn) {
        gm_sym x = stack[--sn];
        if (x < nt) {
            if (n == cap) {
                free(stack);
                goto done;
            }
            out[n++] = x;
            continue;
        }
        uint32_t a = x - nt, p;
        steps++;
        if (n + sn < budget && steps < 20 * budget) {
            /* A random productive alternative. */
            uint32_t cand[512], nc = 0;
            for (uint32_t q = 0; q < g->nprods && nc < 512; q++) {
                if (g->prods[q].lhs != x)
                    continue;
                bool ok = true;
                for (uint32_t i = 0; i < g->prods[q].len && ok; i++) {
                    gm_sym s = g->rhs[g->prods[q].rhs + i];
                    ok = s < nt || minlen[s - nt] != UINT64_MAX;
                }
                if (ok)
                    cand[nc++] = q;
            }
            p = cand[lt_below(r, nc)];
        } else {
            p = minprod[a];
        }
        const gm_production *pr = &g->prods[p];
        if (sn + pr->len > scap) {
            scap = 2 * (sn + pr->len);
            stack = realloc(stack, scap * sizeof *stack);
        }
        for (uint32_t i = pr->len; i-- > 0;)
            stack[sn++] = g->rhs[pr->rhs + i];
    }
    free(stack);
    result = n;
done:
    free(minlen);
    free(minprod);
    return result;
}

size_t lt_random_walk(const gm_lr_table *t, gm_mem *m, lt_rng *r, size_t target, uint32_t *out, size_t cap)
{
    gm_lr_node *top = gm_lr_stack_new(m);
    assert_non_null(top);
    uint64_t *bits = calloc(GM_BITSET_WORDS(t->nterms) + 1, sizeof *bits);
    uint32_t *cand = malloc(t->nterms * sizeof *cand);
    size_t n = 0;
    while (n < cap) {
        gm_lr_expected(t, top, bits);
        bool acc = gm_bitset_get(bits, t->eof);
        uint32_t nc = 0;
        for (uint32_t term = 0; term < t->eof; term++)
            if (gm_bitset_get(bits, term))
                cand[nc++] = term;
        if (!nc || (acc && (n >= target ? lt_below(r, 4) != 0 : lt_below(r, (uint32_t)target + 1) == 0)))
            break;
        uint32_t term = cand[lt_below(r, nc)];
        gm_lr_node *next;
        assert_int_equal(gm_lr_feed(t, m, top, term, &next), GM_OK);
        gm_lr_node_release(m, top);
        top = next;
        out[n++] = term;
    }
    gm_lr_node_release(m, top);
    free(bits);
    free(cand);
    return n;
}

size_t lt_lr_run(const gm_lr_table *t, gm_mem *m, const uint32_t *seq, size_t n)
{
    gm_lr_node *top = gm_lr_stack_new(m);
    assert_non_null(top);
    size_t i = 0;
    for (; i < n; i++) {
        gm_lr_node *next;
        gm_status st = gm_lr_feed(t, m, top, seq[i], &next);
        if (st == GM_ERR_REJECTED)
            break;
        assert_int_equal(st, GM_OK);
        gm_lr_node_release(m, top);
        top = next;
    }
    size_t res = i < n ? i : gm_lr_accepts(t, top) ? n : n + 1;
    gm_lr_node_release(m, top);
    return res;
}

/* ---- random grammars ---------------------------------------------------------- */

char *lt_random_grammar_text(lt_rng *r, uint32_t max_terms, uint32_t max_nonterms, uint32_t max_alts,
                             uint32_t max_len)
{
    uint32_t nt = 1 + lt_below(r, max_terms), nn = 1 + lt_below(r, max_nonterms);
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    for (uint32_t a = 0; a < nn; a++) {
        if (a == 0)
            n += (size_t)snprintf(text + n, cap - n, "start:");
        else
            n += (size_t)snprintf(text + n, cap - n, "n%u:", a);
        uint32_t nalts = 1 + lt_below(r, max_alts);
        for (uint32_t k = 0; k < nalts; k++) {
            if (k)
                n += (size_t)snprintf(text + n, cap - n, " |");
            uint32_t len = lt_below(r, 6) == 0 ? 0 : 1 + lt_below(r, max_len);
            for (uint32_t i = 0; i < len; i++) {
                if (lt_below(r, 2) == 0) {
                    n += (size_t)snprintf(text + n, cap - n, " \"%c\"", 'a' + (int)lt_below(r, nt));
                } else {
                    uint32_t b = lt_below(r, nn);
                    n += (size_t)(b ? snprintf(text + n, cap - n, " n%u", b) : snprintf(text + n, cap - n, " start"));
                }
                if (n + 64 > cap) {
                    cap *= 2;
                    text = realloc(text, cap);
                }
            }
        }
        n += (size_t)snprintf(text + n, cap - n, "\n");
        if (n + 256 > cap) {
            cap *= 2;
            text = realloc(text, cap);
        }
    }
    return text;
}

bool lt_cfg_is_reduced(const gm_cfg *g)
{
    uint32_t nt = g->nterminals, nn = g->nnonterminals;
    bool *prod = calloc(nn + 1, sizeof *prod), *reach = calloc(nn + 1, sizeof *reach);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t p = 0; p < g->nprods; p++) {
            uint32_t a = g->prods[p].lhs - nt;
            if (prod[a])
                continue;
            bool all = true;
            for (uint32_t i = 0; i < g->prods[p].len && all; i++) {
                gm_sym s = g->rhs[g->prods[p].rhs + i];
                all = s < nt || prod[s - nt];
            }
            if (all)
                prod[a] = changed = true;
        }
    }
    reach[g->start - nt] = true;
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t p = 0; p < g->nprods; p++) {
            if (!reach[g->prods[p].lhs - nt])
                continue;
            for (uint32_t i = 0; i < g->prods[p].len; i++) {
                gm_sym s = g->rhs[g->prods[p].rhs + i];
                if (s >= nt && !reach[s - nt])
                    reach[s - nt] = changed = true;
            }
        }
    }
    bool ok = true;
    for (uint32_t a = 0; a < nn; a++)
        ok = ok && prod[a] && reach[a];
    /* Every terminal is used (the reader only knows used ones anyway). */
    free(prod);
    free(reach);
    return ok;
}

/* ---- a slow reference for LALR(1) tables ---------------------------------------- */

/* note [reference LALR]
 * Lookaheads by propagation to a fixpoint over the LR(0) states, item by
 * item (no relations, no digraph): closure items get FIRST(beta) and, when
 * beta is nullable, the lookaheads of the item they come from; advanced
 * items get the lookaheads of their origin in the predecessor state. The
 * LR(0) states are re-derived from the table's kernels and checked
 * against its transitions. */
typedef struct ref_ctx {
    const gm_cfg *g;
    uint32_t nt, nn, np, nterms, W;
    uint32_t *ibase;  /* [np + 2] first item of production p (np = augmented) */
    uint32_t nitems;
    uint32_t *iprod;  /* [nitems] */
    bool *nul;
    uint64_t *first;  /* [nn * W] */
} ref_ctx;

static uint32_t ref_len(const ref_ctx *c, uint32_t p) { return p == c->np ? 1 : c->g->prods[p].len; }
static gm_sym ref_sym(const ref_ctx *c, uint32_t p, uint32_t i)
{
    return p == c->np ? c->g->start : c->g->rhs[c->g->prods[p].rhs + i];
}

/* FIRST of rhs[i..) of p into out; returns whether that suffix is nullable. */
static bool ref_first_suffix(const ref_ctx *c, uint32_t p, uint32_t i, uint64_t *out)
{
    for (; i < ref_len(c, p); i++) {
        gm_sym s = ref_sym(c, p, i);
        if (s < c->nt) {
            gm_bitset_set(out, s);
            return false;
        }
        gm_bitset_or(out, c->first + (size_t)(s - c->nt) * c->W, c->W);
        if (!c->nul[s - c->nt])
            return false;
    }
    return true;
}

bool lt_check_lalr_reference(const gm_cfg *g, const gm_lr_table *t, char *why, size_t cap)
{
    ref_ctx c = {0};
    c.g = g;
    c.nt = g->nterminals;
    c.nn = g->nnonterminals;
    c.np = g->nprods;
    c.nterms = c.nt + 1;
    c.W = (uint32_t)GM_BITSET_WORDS(c.nterms);
    c.ibase = calloc(c.np + 2, sizeof *c.ibase);
    for (uint32_t p = 0; p <= c.np; p++)
        c.ibase[p + 1] = c.ibase[p] + ref_len(&c, p) + 1;
    c.nitems = c.ibase[c.np + 1];
    c.iprod = calloc(c.nitems, sizeof *c.iprod);
    for (uint32_t p = 0; p <= c.np; p++)
        for (uint32_t d = 0; d <= ref_len(&c, p); d++)
            c.iprod[c.ibase[p] + d] = p;
    c.nul = cfg_nullable(g);
    c.first = calloc((size_t)(c.nn + 1) * c.W, sizeof *c.first);
    for (bool changed = true; changed;) {
        changed = false;
        for (uint32_t p = 0; p < c.np; p++) {
            uint64_t tmp[64] = {0};
            ref_first_suffix(&c, p, 0, tmp);
            uint64_t *f = c.first + (size_t)(g->prods[p].lhs - c.nt) * c.W;
            for (uint32_t w = 0; w < c.W; w++)
                if (tmp[w] & ~f[w]) {
                    f[w] |= tmp[w];
                    changed = true;
                }
        }
    }
    uint32_t ns = t->nstates;
    /* in[s * nitems + i]: item i is in state s (closure included); la: its lookaheads. */
    bool *in = calloc((size_t)ns * c.nitems, sizeof *in);
    uint64_t *la = calloc((size_t)ns * c.nitems * c.W, sizeof *la);
    bool ok = true;
    why[0] = '\0';
    for (uint32_t s = 0; s < ns && ok; s++) {
        bool *row = in + (size_t)s * c.nitems;
        for (uint32_t k = t->kernel_off[s]; k < t->kernel_off[s + 1]; k++)
            row[c.ibase[t->kernel[k].prod] + t->kernel[k].dot] = true;
        for (bool changed = true; changed;) {
            changed = false;
            for (uint32_t i = 0; i < c.nitems; i++) {
                if (!row[i])
                    continue;
                uint32_t p = c.iprod[i], d = i - c.ibase[p];
                if (d == ref_len(&c, p) || ref_sym(&c, p, d) < c.nt)
                    continue;
                for (uint32_t q = 0; q < c.np; q++)
                    if (g->prods[q].lhs == ref_sym(&c, p, d) && !row[c.ibase[q]])
                        row[c.ibase[q]] = changed = true;
            }
        }
        /* Transitions: the table's successor on X has exactly the advanced items as kernel. */
        for (gm_sym x = 0; x < c.nt + c.nn && ok; x++) {
            uint32_t to = UINT32_MAX;
            if (x < c.nt) {
                gm_lr_action a = gm_lr_action_of(t, s, x);
                bool has = false;
                for (uint32_t i = 0; i < c.nitems; i++) {
                    uint32_t p = c.iprod[i], d = i - c.ibase[p];
                    if (row[i] && d < ref_len(&c, p) && ref_sym(&c, p, d) == x)
                        has = true;
                }
                if (has != (GM_LR_KIND(a) == GM_LR_SHIFT)) {
                    /* A dropped shift is impossible: shifts win in Bison mode. */
                    snprintf(why, cap, "state %u: shift on terminal %u is %d, reference %d", s, x,
                             GM_LR_KIND(a) == GM_LR_SHIFT, has);
                    ok = false;
                }
                if (has)
                    to = GM_LR_ARG(a);
            } else {
                to = gm_lr_goto_of(t, s, x - c.nt);
            }
            if (to == UINT32_MAX || !ok)
                continue;
            size_t nk = 0;
            for (uint32_t i = 0; i < c.nitems; i++) {
                uint32_t p = c.iprod[i], d = i - c.ibase[p];
                if (row[i] && d < ref_len(&c, p) && ref_sym(&c, p, d) == x) {
                    bool found = false;
                    for (uint32_t k = t->kernel_off[to]; k < t->kernel_off[to + 1]; k++)
                        found |= t->kernel[k].prod == p && t->kernel[k].dot == d + 1;
                    if (!found) {
                        snprintf(why, cap, "state %u --%u--> %u: item %u.%u missing from the kernel", s, x, to, p,
                                 d + 1);
                        ok = false;
                    }
                    nk++;
                }
            }
            if (ok && nk != t->kernel_off[to + 1] - t->kernel_off[to]) {
                snprintf(why, cap, "state %u --%u--> %u: kernel size %u, reference %zu", s, x, to,
                         t->kernel_off[to + 1] - t->kernel_off[to], nk);
                ok = false;
            }
        }
    }
    /* Lookaheads by propagation. */
    gm_bitset_set(la + ((size_t)0 * c.nitems + c.ibase[c.np]) * c.W, c.nt);
    for (bool changed = ok; changed;) {
        changed = false;
        for (uint32_t s = 0; s < ns; s++) {
            const bool *row = in + (size_t)s * c.nitems;
            for (uint32_t i = 0; i < c.nitems; i++) {
                if (!row[i])
                    continue;
                uint32_t p = c.iprod[i], d = i - c.ibase[p];
                if (d == ref_len(&c, p))
                    continue;
                const uint64_t *from = la + ((size_t)s * c.nitems + i) * c.W;
                gm_sym x = ref_sym(&c, p, d);
                uint32_t to = x < c.nt ? GM_LR_ARG(gm_lr_action_of(t, s, x)) : gm_lr_goto_of(t, s, x - c.nt);
                uint64_t *dst = la + ((size_t)to * c.nitems + i + 1) * c.W;
                for (uint32_t w = 0; w < c.W; w++)
                    if (from[w] & ~dst[w]) {
                        dst[w] |= from[w];
                        changed = true;
                    }
                if (x < c.nt)
                    continue;
                uint64_t add[64] = {0};
                if (ref_first_suffix(&c, p, d + 1, add))
                    gm_bitset_or(add, from, c.W);
                for (uint32_t q = 0; q < c.np; q++) {
                    if (g->prods[q].lhs != x)
                        continue;
                    uint64_t *dq = la + ((size_t)s * c.nitems + c.ibase[q]) * c.W;
                    for (uint32_t w = 0; w < c.W; w++)
                        if (add[w] & ~dq[w]) {
                            dq[w] |= add[w];
                            changed = true;
                        }
                }
            }
        }
    }
    /* The table's reduce actions and dropped reductions against the reference sets. */
    for (uint32_t s = 0; s < ns && ok; s++) {
        const bool *row = in + (size_t)s * c.nitems;
        for (uint32_t term = 0; term < c.nterms && ok; term++) {
            uint32_t nred = 0, first_red = UINT32_MAX;
            bool accept = false;
            for (uint32_t i = 0; i < c.nitems; i++) {
                uint32_t p = c.iprod[i];
                if (!row[i] || i - c.ibase[p] != ref_len(&c, p) ||
                    !gm_bitset_get(la + ((size_t)s * c.nitems + i) * c.W, term))
                    continue;
                if (p == c.np) {
                    accept = true;
                    continue;
                }
                nred++;
                if (p < first_red)
                    first_red = p;
                bool dropped = false;
                for (uint32_t k = 0; k < t->nconflicts; k++)
                    dropped |= t->conflicts[k].state == s && t->conflicts[k].term == term &&
                               t->conflicts[k].dropped == (GM_LR_REDUCE | p << 2);
                gm_lr_action a = gm_lr_action_of(t, s, term);
                if (a != (GM_LR_REDUCE | p << 2) && !dropped) {
                    snprintf(why, cap, "state %u on %u: reduction %u missing", s, term, p);
                    ok = false;
                }
            }
            gm_lr_action a = gm_lr_action_of(t, s, term);
            if (ok && accept != (a == GM_LR_ACCEPT)) {
                snprintf(why, cap, "state %u on %u: accept %d, reference %d", s, term, a == GM_LR_ACCEPT, accept);
                ok = false;
            }
            if (ok && GM_LR_KIND(a) == GM_LR_REDUCE && GM_LR_ARG(a) != first_red) {
                snprintf(why, cap, "state %u on %u: reduces %u, reference has %s", s, term, GM_LR_ARG(a),
                         nred ? "an earlier one" : "none");
                ok = false;
            }
            if (ok && a == GM_LR_ERROR && nred) {
                snprintf(why, cap, "state %u on %u: no action, reference reduces", s, term);
                ok = false;
            }
            uint32_t ndropped = 0;
            for (uint32_t k = 0; k < t->nconflicts; k++)
                ndropped += t->conflicts[k].state == s && t->conflicts[k].term == term &&
                            GM_LR_KIND(t->conflicts[k].dropped) == GM_LR_REDUCE;
            if (ok && ndropped != nred - (GM_LR_KIND(a) == GM_LR_REDUCE)) {
                snprintf(why, cap, "state %u on %u: %u reductions dropped, reference has %u reductions", s, term,
                         ndropped, nred);
                ok = false;
            }
        }
    }
    free(c.ibase);
    free(c.iprod);
    free(c.nul);
    free(c.first);
    free(in);
    free(la);
    return ok;
}
