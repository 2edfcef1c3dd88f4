/*
 * Token budgets (note [token budgets] in ir/ebnf.h): an Earley state at a
 * token boundary together with the number of tokens each open budgeted
 * region has held, and the step that counts a token and ends the regions
 * whose budget is spent.
 *
 * note [counting regions]
 * A budgeted rule holds no references and its automaton is deterministic,
 * so an occurrence of it is one Earley item: (rule, origin). Its count is
 * the number of accepted tokens that overlap its text. After a step, an
 * item whose origin is NULL began here (no text yet: 0); one whose (rule,
 * origin) was open at the previous boundary, in a state from which the
 * rule's automaton reads the step's bytes into the item's state, goes on
 * from there: that count plus this token; any other began inside this
 * token, which therefore overlaps it: 1. Raw bytes (gm_ebstate_accept_bytes)
 * step without counting. The automaton check matters because origins are
 * hash-consed objects: the second of two tagged texts in a loop may name the
 * same origin object as the first (a token "</t><t>a" ends one and begins
 * the other; the first's text cannot read its end, so the item is new).
 * Where both readings lead to the very same item, the recognizer cannot
 * tell the occurrences apart either; the item goes on as the older one.
 * An occurrence whose count has reached the budget ends at this boundary
 * when its item is accepting: the item is dropped from the set (its
 * completion is already in it, so what follows the region goes on). When
 * the item is not accepting (inside a character, after part of the end
 * string), the region goes on: a dead end would break the promise that
 * every allowed token can be continued.
 */
#include <stdlib.h>
#include <string.h>

#include "earley/eengine.h"
#include "base/error.h"

typedef struct gm_eopen {
    uint32_t rule;
    uint32_t state;          /* its item's automaton state */
    uint32_t count;          /* tokens that overlapped its text (saturating) */
    const gm_estate *origin; /* compared only, never dereferenced */
} gm_eopen;

struct gm_ebstate {
    atomic_uint refs;
    gm_estate *set;          /* one reference */
    uint32_t n;
    gm_eopen open[];
};

bool gm_egrammar_has_budgets(const gm_egrammar *g)
{
    for (uint32_t r = 0; r < g->nrules; r++)
        if (g->rules[r].max_tokens != GM_EX_INF)
            return true;
    return false;
}

gm_estate *gm_ebstate_set(const gm_ebstate *s)
{
    return s->set;
}

void gm_ebstate_retain(gm_ebstate *s)
{
    if (s)
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void gm_ebstate_release(gm_eengine *e, gm_ebstate *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    gm_estate_release(e, s->set);
    gm_mem_free(e->mem, s);
}

static uint32_t budget_of(const gm_egrammar *g, const gm_eitem *it)
{
    return g->rules[g->state_rule[it->state]].max_tokens;
}

/*
 * The state at a boundary after prev (NULL: the start) stepped to set (one
 * reference, taken over): counts (note [counting regions]), spent regions
 * ended, into *out.
 */
/* Whether rule automaton state s reads bytes[0..len) into state to. */
static bool reads_into(const gm_egrammar *g, uint32_t s, const uint8_t *bytes, size_t len,
                       uint32_t to)
{
    for (size_t i = 0; i < len && s != GM_FSM_NONE; i++)
        s = gm_fsm_next(g, s, bytes[i]);
    return s == to;
}

gm_status gm_ebstate_settle(gm_eengine *e, const gm_ebstate *prev, bool counted,
                           const uint8_t *bytes, size_t len, gm_estate *set, gm_ebstate **out,
                           gm_error *err)
{
    const gm_egrammar *g = e->g;
    uint32_t n = 0;
    for (uint32_t i = 0; i < set->nitems; i++)
        n += budget_of(g, &set->items[i]) != GM_EX_INF;
    gm_ebstate *b = gm_mem_alloc(e->mem, sizeof *b + (size_t)n * sizeof b->open[0]);
    uint8_t *drop = n ? gm_mem_calloc(e->mem, set->nitems, 1) : NULL;
    if (!b || (n && !drop)) {
        gm_mem_free(e->mem, b);
        gm_estate_release(e, set);
        return gm_mem_fail(e->mem, err, "a matcher state");
    }
    uint32_t k = 0, kept = set->nitems;
    for (uint32_t i = 0; i < set->nitems; i++) {
        const gm_eitem *it = &set->items[i];
        uint32_t max = budget_of(g, it);
        if (max == GM_EX_INF)
            continue;
        uint32_t r = g->state_rule[it->state];
        uint32_t count = 0;
        if (it->origin) {
            count = counted;
            for (uint32_t j = 0; prev && j < prev->n; j++)
                if (prev->open[j].rule == r && prev->open[j].origin == it->origin &&
                    bytes && reads_into(g, prev->open[j].state, bytes, len, it->state)) {
                    count = prev->open[j].count + (counted && prev->open[j].count < UINT32_MAX);
                    break;
                }
        }
        b->open[k].rule = r;
        b->open[k].state = it->state;
        b->open[k].count = count;
        b->open[k++].origin = it->origin;
        if (count >= max && (g->state_flags[it->state] & GM_FS_ACCEPT)) {
            drop[i] = 1;
            kept--;
        }
    }
    gm_status st = GM_OK;
    /* never a set that can neither go on nor end: the regions go on instead */
    if (kept < set->nitems && (kept > 0 || (set->flags & GM_ES_ACCEPTING))) {
        gm_estate *less = NULL;
        pthread_mutex_lock(&e->lock);
        st = gm_eset_without(e, set, drop, &less, err);
        pthread_mutex_unlock(&e->lock);
        if (st == GM_OK) {
            /* the ended occurrences are no longer open */
            uint32_t m = 0, j = 0;
            for (uint32_t i = 0; i < set->nitems; i++) {
                if (budget_of(g, &set->items[i]) == GM_EX_INF)
                    continue;
                if (!drop[i])
                    b->open[m++] = b->open[j];
                j++;
            }
            k = m;
            gm_estate_release(e, set);
            set = less;
        }
    }
    gm_mem_free(e->mem, drop);
    if (st != GM_OK) {
        gm_mem_free(e->mem, b);
        gm_estate_release(e, set);
        return st;
    }
    atomic_init(&b->refs, 1);
    b->set = set;
    b->n = k;
    *out = b;
    return GM_OK;
}

gm_status gm_ebstate_start(gm_eengine *e, gm_ebstate **out, gm_error *err)
{
    *out = NULL;
    gm_estate *set = gm_estate_start(e, err);
    if (!set)
        return err && err->code != GM_OK ? err->code : GM_ERR_NOMEM;
    return gm_ebstate_settle(e, NULL, false, NULL, 0, set, out, err);
}

gm_status gm_ebstate_accept_token(gm_eengine *e, gm_escratch *w, const gm_ebstate *s,
                                  uint32_t token, gm_ebstate **out, gm_error *err)
{
    *out = NULL;
    gm_estate *set = NULL;
    gm_status st = gm_estate_accept_token(e, w, s->set, token, &set, err);
    if (st != GM_OK)
        return st;
    /* a special token is a symbol no budgeted (bytes-only) rule reads */
    size_t len = 0;
    const uint8_t *bytes = e->v->flags[token] & GM_TOK_SPECIAL ? NULL
                                                                : gm_vocab_data_token(e->v, token, &len);
    return gm_ebstate_settle(e, s, true, bytes, len, set, out, err);
}

gm_status gm_ebstate_accept_bytes(gm_eengine *e, gm_escratch *w, const gm_ebstate *s,
                                  const uint8_t *bytes, size_t len, gm_ebstate **out,
                                  gm_error *err)
{
    *out = NULL;
    gm_estate *set = NULL;
    gm_status st = gm_estate_accept_bytes(e, w, s->set, bytes, len, &set, err);
    return st != GM_OK ? st : gm_ebstate_settle(e, s, false, bytes, len, set, out, err);
}

void gm_ebstate_describe(const gm_eengine *e, const gm_ebstate *s, gm_strbuf *out)
{
    const gm_egrammar *g = e->g;
    for (uint32_t j = 0; j < s->n; j++)
        gm_strbuf_printf(out, "%sregion %s: %u of %u tokens", j ? ", " : " (open ",
                         g->names + g->rules[s->open[j].rule].name, s->open[j].count,
                         g->rules[s->open[j].rule].max_tokens);
    if (s->n)
        gm_strbuf_putc(out, ')');
}
