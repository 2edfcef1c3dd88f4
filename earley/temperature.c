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
#include <string.h>

#include "base/hash.h"
#include "base/vec.h"
#include "earley/eengine.h"

typedef struct visit {
    const gm_estate *set;
    uint32_t item;
} visit;

/* The (set, item) pairs seen, interned by their bytes (no padding in the key),
   and the stack of those still to visit. */
typedef struct walk {
    gm_mem *mem;
    gm_intern seen;
    GM_VEC(visit) stack;
    bool oom;
} walk;

static void push(walk *w, const gm_estate *s, uint32_t item)
{
    unsigned char key[sizeof s + sizeof item];
    memcpy(key, &s, sizeof s);
    memcpy(key + sizeof s, &item, sizeof item);
    uint32_t id;
    int added = 0;
    if (gm_intern_put(&w->seen, key, sizeof key, &id, &added) ||
        (added && gm_vec_push(w->mem, &w->stack, ((visit){s, item})))) {
        w->oom = true;
    }
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
    gm_intern_init(&w.seen, e->mem);
    bool first = true;
    for (uint32_t i = 0; i < s->nitems && !w.oom; i++)
        if (g->state_flags[s->items[i].state] & (GM_FS_SCANS | GM_FS_TOKENS))
            push(&w, s, i);
    while (w.stack.n && !w.oom) {
        visit v = w.stack.v[--w.stack.n];
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
    gm_intern_free(&w.seen);
    gm_vec_free(e->mem, &w.stack);
    if (w.oom)
        return gm_mem_fail(e->mem, err, "a temperature walk");
    return GM_OK;
}
