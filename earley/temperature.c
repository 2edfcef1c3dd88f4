/*
 * Rule temperatures: XGrammar's r[temperature=t] (note [rule attributes]
 * in ir/ebnf_parse.c).
 *
 * note [rule temperatures]
 * A temperature changes no mask: it is what the sampler should use for the
 * next token while the output is inside an occurrence of the rule. At a
 * boundary, the next input is read by the items that scan (bytes or special
 * tokens); each such item lies inside a stack of rule occurrences, and its
 * temperature is that of the innermost occurrence that has one (none if no
 * rule on the stack has one). A rule with a temperature is never inlined
 * (fsm_build.c), so its occurrences are items of their own. The stacks are
 * the item's ancestry: its origin set's items that wait on its rule, their
 * origins' items that wait on theirs, and so on; the walk stops at a rule
 * with a temperature and visits each (set, item) once (left recursion
 * makes cycles within a set). Where items disagree (an ambiguous prefix),
 * the answer is the largest temperature, as XGrammar's; the smallest is
 * returned too, so a caller can say that they disagree.
 */
#include <stdlib.h>
#include <string.h>

#include "earley/eengine.h"

typedef struct visit {
    const gm_estate *set;
    uint32_t item;
} visit;

typedef struct walk {
    gm_mem *mem;
    visit *seen;              /* open addressing, set == NULL: empty */
    size_t cap, n;
    visit *stack;
    size_t nstack, stack_cap;
    bool oom;
} walk;

static size_t slot_of(const walk *w, const gm_estate *s, uint32_t item)
{
    uint64_t h = (uint64_t)(uintptr_t)s * 0x9E3779B97F4A7C15ull ^ (uint64_t)item * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29)) & (w->cap - 1);
}

/* Marks (s, item) seen; false when it already was (or memory ran out). */
static bool mark(walk *w, const gm_estate *s, uint32_t item)
{
    if ((w->n + 1) * 2 > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        visit *t = gm_mem_calloc(w->mem, cap, sizeof *t);
        if (!t) {
            w->oom = true;
            return false;
        }
        visit *old = w->seen;
        size_t oldcap = w->cap;
        w->seen = t;
        w->cap = cap;
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].set) {
                size_t k = slot_of(w, old[i].set, old[i].item);
                while (w->seen[k].set)
                    k = (k + 1) & (cap - 1);
                w->seen[k] = old[i];
            }
        gm_mem_free(w->mem, old);
    }
    size_t k = slot_of(w, s, item);
    while (w->seen[k].set) {
        if (w->seen[k].set == s && w->seen[k].item == item)
            return false;
        k = (k + 1) & (w->cap - 1);
    }
    w->seen[k].set = s;
    w->seen[k].item = item;
    w->n++;
    return true;
}

static void push(walk *w, const gm_estate *s, uint32_t item)
{
    if (!mark(w, s, item))
        return;
    if (w->nstack == w->stack_cap) {
        size_t cap = w->stack_cap ? w->stack_cap * 2 : 32;
        visit *t = gm_mem_realloc(w->mem, w->stack, cap * sizeof *t);
        if (!t) {
            w->oom = true;
            return;
        }
        w->stack = t;
        w->stack_cap = cap;
    }
    w->stack[w->nstack].set = s;
    w->stack[w->nstack++].item = item;
}

gm_status gm_estate_temperature(gm_eengine *e, const gm_estate *s, float *hi, float *lo,
                                gm_error *err)
{
    const gm_egrammar *g = e->g;
    *hi = *lo = -1.0f;
    bool any = false;
    for (uint32_t r = 0; r < g->nrules && !any; r++)
        any = g->rules[r].temperature >= 0;
    if (!any || !s)
        return GM_OK;
    walk w = {.mem = e->mem};
    bool first = true;
    for (uint32_t i = 0; i < s->nitems && !w.oom; i++)
        if (g->state_flags[s->items[i].state] & (GM_FS_SCANS | GM_FS_TOKENS))
            push(&w, s, i);
    while (w.nstack && !w.oom) {
        visit v = w.stack[--w.nstack];
        const gm_eitem *it = &v.set->items[v.item];
        uint32_t r = g->state_rule[it->state];
        float t = g->rules[r].temperature;
        if (t < 0) {
            /* the occurrences that this one is inside of: its origin's items waiting on r */
            const gm_estate *o = it->origin ? it->origin : v.set;
            uint32_t a = 0, b = o->nwait;
            while (a < b) {
                uint32_t mid = a + (b - a) / 2;
                if (o->wait[mid].rule < r)
                    a = mid + 1;
                else
                    b = mid;
            }
            for (; a < o->nwait && o->wait[a].rule == r && !w.oom; a++)
                push(&w, o, o->wait[a].item);
            continue;
        }
        if (first || t > *hi)
            *hi = t;
        if (first || t < *lo)
            *lo = t;
        first = false;
    }
    gm_mem_free(e->mem, w.seen);
    gm_mem_free(e->mem, w.stack);
    if (w.oom)
        return gm_mem_fail(e->mem, err, "a temperature walk");
    return GM_OK;
}
