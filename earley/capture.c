/*
 * note [captures]
 * XGrammar's `rule[capture]` / `rule[capture="label"]` (its Lark dialect
 * and EBNF) changes no language: it asks the matcher to report the spans
 * of the output where the rule completed. As XGrammar defines them, the
 * raw events are the completions of the Earley chart along the accepted
 * output: each time a captured rule completes at output position j from
 * an origin at position i, (label, output[i..j)), in the order they
 * happen (at one position, inner spans first: later origins first).
 * Completions made while computing masks are not events. The deduplicated
 * list keeps, per occurrence (label, start), its longest completion, in the
 * order of that completion in the raw list (an ITEM of /[0-9]+/ completes
 * after every digit: "1", "12", "123" raw, "123" deduplicated).
 *
 * How gramask finds them: a captured rule is never inlined nor merged
 * (ir/ebnf_parse.c, ir/ir_merge.c), and an item completing it stays in its
 * Earley set even when it can do nothing more (item_alive in eset.c;
 * gm_eitem_captured), so the set after position j holds exactly the
 * completions at j. A gm_ecapture replays the accepted output byte by byte
 * (a special token as one symbol) on the plain engine, beside the
 * matcher's own state, keeps the set after each position, and reads the
 * events from each new set. An item's origin is the projection of the set
 * its rule started in (note [earley pruning] in eengine.h): the start is
 * the position whose set has that projection. The matcher's engine
 * hash-conses sets, so there two positions can share one set (in `a+`
 * with a ::= "x" | "xx", the sets after "x" and "xx"), and a span could
 * not be told from one that started later; the replay therefore runs on an
 * engine of its own over the same rule automata with the state cache off
 * (GM_EVARIANT_NO_STATE_CACHE: every set a new object), where each
 * position's set, and its projection, is its own. Its masks are never
 * asked for; clones of a matcher share it (reference counted).
 *
 * Cost: nothing for grammars without captures (no gm_ecapture is made);
 * otherwise a second engine per matcher, a reference to one set per
 * output byte and a full Earley step per byte (no transition cache).
 */
#include <stdlib.h>
#include <string.h>

#include "earley/capture.h"
#include "earley/eengine.h"
#include "base/vec.h"

typedef struct step {
    size_t out_len;     /* output bytes before the step */
    size_t nevents;     /* events before the step */
    gm_ebstate *b;      /* token budgets after the step (one reference; NULL: none) */
} step;

typedef struct replay {
    atomic_uint refs;
    gm_eengine *e;                  /* the replay engine (no state cache) */
} replay;

struct gm_ecapture {
    gm_eengine *e;                  /* the replay engine (r->e) */
    replay *r;
    gm_mem *mem;
    gm_escratch *w;
    GM_VEC(uint8_t) out;            /* the output so far */
    GM_VEC(gm_estate *) at;         /* [out.n + 1] the set after each position (references;
                                       NULL inside a special token) */
    GM_VEC(gm_ecap_event) ev;       /* raw events */
    GM_VEC(step) steps;
    size_t broken_at;               /* steps.n when the replay failed (SIZE_MAX: never) */
    gm_ebstate *b0;                 /* token budgets at the start (NULL: the grammar has none;
                                       note [budgets in the replay]) */
    GM_VEC(gm_ecap_event) tmp;
};

bool gm_egrammar_has_captures(const gm_egrammar *g)
{
    for (uint32_t r = 0; r < g->nrules; r++)
        if (g->rules[r].capture != GM_EX_INF)
            return true;
    return false;
}

bool gm_eengine_has_captures(const gm_eengine *e) { return gm_egrammar_has_captures(e->g); }

const char *gm_ecapture_label(const gm_ecapture *c, uint32_t label)
{
    return c->e->g->names + label;
}

static void replay_release(gm_mem *m, replay *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
        gm_eengine_destroy(r->e);
        gm_mem_free(m, r);
    }
}

gm_status gm_ecapture_create(gm_eengine *main, gm_ecapture **out, gm_error *err)
{
    *out = NULL;
    gm_ecapture *c = gm_mem_calloc(main->mem, 1, sizeof *c);
    if (!c)
        return gm_mem_fail(main->mem, err, "a capture log");
    c->mem = main->mem;
    c->broken_at = SIZE_MAX;
    c->r = gm_mem_calloc(c->mem, 1, sizeof *c->r);
    if (!c->r) {
        gm_mem_free(c->mem, c);
        return gm_mem_fail(main->mem, err, "a capture log");
    }
    atomic_init(&c->r->refs, 1);
    gm_eengine_options opts = {.variant = main->variant | GM_EVARIANT_NO_STATE_CACHE |
                                          GM_EVARIANT_NO_CROSS_CACHE,
                               .limits = main->lim};
    gm_status st = gm_eengine_create(c->mem, main->g, main->v, main->t, NULL, &opts, &c->r->e,
                                     err);
    if (st != GM_OK) {
        gm_mem_free(c->mem, c->r);
        gm_mem_free(c->mem, c);
        return st;
    }
    gm_eengine *e = c->e = c->r->e;
    st = gm_escratch_create(e, &c->w, err);
    if (st == GM_OK && gm_egrammar_has_budgets(e->g))
        st = gm_ebstate_start(e, &c->b0, err);
    if (st == GM_OK) {
        gm_estate *s0 = c->b0 ? gm_ebstate_set(c->b0) : gm_estate_start(e, err);
        if (s0 && c->b0)
            gm_estate_retain(s0);
        if (!s0)
            st = err && err->code != GM_OK ? err->code : GM_ERR_NOMEM;
        else if (gm_vec_push(c->mem, &c->at, s0)) {
            gm_estate_release(e, s0);
            st = gm_mem_fail(c->mem, err, "a capture log");
        }
    }
    if (st != GM_OK) {
        gm_ecapture_destroy(c);
        return st;
    }
    *out = c;
    return GM_OK;
}

/* Forgets the steps from step `from` on (their budget states). */
static void release_steps(gm_ecapture *c, size_t from)
{
    for (size_t i = from; i < c->steps.n; i++)
        if (c->steps.v[i].b)
            gm_ebstate_release(c->e, c->steps.v[i].b);
    if (from < c->steps.n)
        c->steps.n = from;
}

static void release_sets(gm_ecapture *c, size_t from)
{
    for (size_t i = from; i < c->at.n; i++)
        if (c->at.v[i])
            gm_estate_release(c->e, c->at.v[i]);
    c->at.n = from;
}

void gm_ecapture_destroy(gm_ecapture *c)
{
    if (!c)
        return;
    release_sets(c, 0);
    release_steps(c, 0);
    if (c->b0)
        gm_ebstate_release(c->e, c->b0);
    if (c->w)
        gm_escratch_destroy(c->e, c->w);
    replay_release(c->mem, c->r);
    gm_vec_free(c->mem, &c->out);
    gm_vec_free(c->mem, &c->at);
    gm_vec_free(c->mem, &c->ev);
    gm_vec_free(c->mem, &c->steps);
    gm_vec_free(c->mem, &c->tmp);
    gm_mem_free(c->mem, c);
}

gm_status gm_ecapture_clone(const gm_ecapture *c, gm_ecapture **out, gm_error *err)
{
    *out = NULL;
    gm_ecapture *d = gm_mem_calloc(c->mem, 1, sizeof *d);
    if (!d)
        return gm_mem_fail(c->mem, err, "a capture log");
    d->e = c->e;
    d->r = c->r;
    atomic_fetch_add(&c->r->refs, 1);
    d->mem = c->mem;
    d->broken_at = c->broken_at;
    gm_status st = gm_escratch_create(c->e, &d->w, err);
    if (st == GM_OK && (gm_vec_reserve(d->mem, &d->out, c->out.n + 1) ||
                        gm_vec_reserve(d->mem, &d->at, c->at.n + 1) ||
                        gm_vec_reserve(d->mem, &d->ev, c->ev.n + 1) ||
                        gm_vec_reserve(d->mem, &d->steps, c->steps.n + 1)))
        st = gm_mem_fail(d->mem, err, "a capture log");
    if (st != GM_OK) {
        gm_ecapture_destroy(d);
        return st;
    }
    memcpy(d->out.v, c->out.v, c->out.n);
    d->out.n = c->out.n;
    for (size_t i = 0; i < c->at.n; i++) {
        d->at.v[i] = c->at.v[i];
        if (d->at.v[i])
            gm_estate_retain(d->at.v[i]);
    }
    d->at.n = c->at.n;
    memcpy(d->ev.v, c->ev.v, c->ev.n * sizeof *c->ev.v);
    d->ev.n = c->ev.n;
    memcpy(d->steps.v, c->steps.v, c->steps.n * sizeof *c->steps.v);
    d->steps.n = c->steps.n;
    for (size_t i = 0; i < d->steps.n; i++)
        if (d->steps.v[i].b)
            gm_ebstate_retain(d->steps.v[i].b);
    d->b0 = c->b0;
    if (d->b0)
        gm_ebstate_retain(d->b0);
    *out = d;
    return GM_OK;
}

void gm_ecapture_reset(gm_ecapture *c)
{
    release_sets(c, 1);
    release_steps(c, 0);
    c->out.n = 0;
    c->ev.n = 0;
    c->broken_at = SIZE_MAX;
}

void gm_ecapture_rollback(gm_ecapture *c, size_t n)
{
    if (n > c->steps.n)
        n = c->steps.n;
    if (n == 0)
        return;
    const step *s = &c->steps.v[c->steps.n - n];
    release_sets(c, s->out_len + 1);
    c->out.n = s->out_len;
    c->ev.n = s->nevents;
    release_steps(c, c->steps.n - n);
    if (c->broken_at != SIZE_MAX && c->broken_at >= c->steps.n)
        c->broken_at = SIZE_MAX;
}

/* Where the rule of an item with origin o started, before position j (SIZE_MAX: unknown). */
static size_t origin_pos(const gm_ecapture *c, const gm_estate *o, size_t j)
{
    if (!o)
        return j;
    for (size_t p = j; p-- > 0;) {
        gm_estate *s = c->at.v[p];
        if (s && (s == o || atomic_load_explicit(&s->proj, memory_order_acquire) == o))
            return p;
    }
    return SIZE_MAX;
}

static int by_start_desc(const void *a, const void *b)
{
    const gm_ecap_event *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? 1 : -1;
    return x->label < y->label ? -1 : x->label > y->label;
}

/* The events of the set at position j (c->at.v[j]). */
static gm_status read_events(gm_ecapture *c, size_t j, gm_error *err)
{
    const gm_estate *s = c->at.v[j];
    const gm_egrammar *g = c->e->g;
    c->tmp.n = 0;
    for (uint32_t i = 0; i < s->nitems; i++) {
        const gm_eitem *it = &s->items[i];
        if (!gm_eitem_captured(g, it))
            continue;
        size_t p = origin_pos(c, it->origin, j);
        if (p == SIZE_MAX)
            continue;
        gm_ecap_event ev = {g->rules[g->state_rule[it->state]].capture, p, j};
        if (gm_vec_push(c->mem, &c->tmp, ev))
            return gm_mem_fail(c->mem, err, "a capture log");
    }
    if (c->tmp.n > 1)
        qsort(c->tmp.v, c->tmp.n, sizeof *c->tmp.v, by_start_desc);
    for (size_t i = 0; i < c->tmp.n; i++) {
        if (i > 0 && !by_start_desc(&c->tmp.v[i - 1], &c->tmp.v[i]))
            continue; /* one completion, reached two ways */
        if (gm_vec_push(c->mem, &c->ev, c->tmp.v[i]))
            return gm_mem_fail(c->mem, err, "a capture log");
    }
    return GM_OK;
}

/* Appends the set after one more byte (or symbol) and its events. */
static gm_status push_set(gm_ecapture *c, gm_estate *s, gm_error *err)
{
    if (gm_vec_push(c->mem, &c->at, s)) {
        gm_estate_release(c->e, s);
        return gm_mem_fail(c->mem, err, "a capture log");
    }
    return read_events(c, c->at.n - 1, err);
}

/*
 * note [budgets in the replay]
 * Token budgets (note [counting regions] in budget.c) end a region at a token
 * boundary; replayed byte by byte without them, a budgeted rule of free text
 * would go on past its end and report completions its occurrence never had
 * (`r[max_tokens=2, capture]: TEXT` then "<": r's span reaching over the "<").
 * So at the end of each step the replay settles its set as the matcher does
 * (gm_ebstate_settle: the same counts, from the same bytes), goes on from
 * the settled set, and keeps the budget state of each step for rollback. The
 * events of the step's last position are read before: a region that ends
 * there has completed there.
 */
static gm_status settle_last(gm_ecapture *c, const gm_ebstate *prev, bool counted,
                             const uint8_t *bytes, size_t len, gm_error *err)
{
    if (!c->b0)
        return GM_OK;
    gm_estate *last = c->at.v[c->at.n - 1];
    gm_estate_retain(last);
    gm_ebstate *nb = NULL;
    gm_status st = gm_ebstate_settle(c->e, prev, counted, bytes, len, last, &nb, err);
    if (st != GM_OK)
        return st;
    gm_estate *settled = gm_ebstate_set(nb);
    gm_estate_retain(settled);
    gm_estate_release(c->e, last);
    c->at.v[c->at.n - 1] = settled;
    c->steps.v[c->steps.n - 1].b = nb;
    return GM_OK;
}

gm_status gm_ecapture_step(gm_ecapture *c, uint32_t token, const uint8_t *bytes, size_t len,
                           gm_error *err)
{
    gm_ebstate *prev = c->steps.n ? c->steps.v[c->steps.n - 1].b : c->b0;
    step sp = {c->out.n, c->ev.n, NULL};
    if (gm_vec_push(c->mem, &c->steps, sp))
        return gm_mem_fail(c->mem, err, "a capture log");
    if (c->broken_at != SIZE_MAX || len == 0) {
        if (prev) {
            gm_ebstate_retain(prev);
            c->steps.v[c->steps.n - 1].b = prev;
        }
        return GM_OK;
    }
    gm_eengine *e = c->e;
    if (gm_vec_reserve(c->mem, &c->out, c->out.n + len) ||
        gm_vec_reserve(c->mem, &c->at, c->at.n + len))
        return gm_mem_fail(c->mem, err, "a capture log");
    gm_estate *from = c->at.v[c->at.n - 1];
    gm_status st = GM_OK;
    /* byte by byte: every position's set */
    size_t i = 0;
    for (; i < len; i++) {
        gm_estate *next = NULL;
        st = gm_estate_accept_bytes(e, c->w, c->at.v[c->at.n - 1], bytes + i, 1, &next, err);
        if (st != GM_OK)
            break;
        c->out.v[c->out.n++] = bytes[i];
        if ((st = push_set(c, next, err)) != GM_OK)
            return st;
    }
    if (i == len)
        return settle_last(c, prev, token != UINT32_MAX, bytes, len, err);
    if (st != GM_ERR_REJECTED)
        return st;
    /* not as text: the token as one symbol (a special token) */
    release_sets(c, sp.out_len + 1);
    c->out.n = sp.out_len;
    c->ev.n = sp.nevents;
    gm_estate *next = NULL;
    if (token == UINT32_MAX ||
        gm_estate_accept_token(e, c->w, from, token, &next, NULL) != GM_OK || !next) {
        /* the matcher took it another way (an engine over this one): no more events */
        c->broken_at = c->steps.n - 1;
        if (err)
            gm_error_clear(err);
        if (prev) {
            gm_ebstate_retain(prev);
            c->steps.v[c->steps.n - 1].b = prev;
        }
        return GM_OK;
    }
    if (err)
        gm_error_clear(err);
    memcpy(c->out.v + c->out.n, bytes, len);
    c->out.n += len;
    for (size_t k = 1; k < len; k++)
        c->at.v[c->at.n++] = NULL;
    gm_status pst = push_set(c, next, err);
    /* a special token is a symbol no budgeted (bytes-only) rule reads */
    return pst != GM_OK ? pst : settle_last(c, prev, true, NULL, 0, err);
}

const uint8_t *gm_ecapture_output(const gm_ecapture *c, size_t *len)
{
    *len = c->out.n;
    return c->out.v;
}

gm_status gm_ecapture_events(gm_ecapture *c, bool deduplicate, const gm_ecap_event **out,
                             size_t *n, gm_error *err)
{
    if (!deduplicate) {
        *out = c->ev.v;
        *n = c->ev.n;
        return GM_OK;
    }
    /* keep event i when no later event has its (label, start): the last completion
       of an occurrence is its longest */
    c->tmp.n = 0;
    if (gm_vec_reserve(c->mem, &c->tmp, c->ev.n + 1))
        return gm_mem_fail(c->mem, err, "a capture log");
    const char *names = c->e->g->names;
    for (size_t i = 0; i < c->ev.n; i++) {
        const gm_ecap_event *a = &c->ev.v[i];
        bool later = false;
        /* a later event of the occurrence ends at or after a's end, and starts at a->start */
        for (size_t k = i + 1; k < c->ev.n && !later; k++)
            later = c->ev.v[k].start == a->start &&
                    (c->ev.v[k].label == a->label ||
                     strcmp(names + c->ev.v[k].label, names + a->label) == 0);
        if (!later)
            c->tmp.v[c->tmp.n++] = *a;
    }
    *out = c->tmp.v;
    *n = c->tmp.n;
    return GM_OK;
}
