/*
 * The matcher ops of an Earley grammar with token budgets (note [engine
 * ops]; note [token budgets] in ir/ebnf.h): a state is a gm_ebstate, the
 * recognizer's set with the tokens each open region has held
 * (earley/budget.c). Masks, forced bytes and the end of input are the
 * set's; stepping counts. Rollback, fork and reset keep the counts because
 * they live in the states the matcher's history holds.
 */
#include "runtime/engine.h"

#include "runtime/objects.h"
#include "base/error.h"
#include "base/strbuf.h"

static gm_status budget_new_scratch(const gm_compiled *c, gm_mscratch *w, gm_error *err)
{
    return gm_escratch_create(c->eengine, &w->earley, err);
}

static void budget_free_scratch(const gm_compiled *c, gm_mscratch *w)
{
    gm_escratch_destroy(c->eengine, w->earley);
    w->earley = NULL;
}

static gm_status budget_start(const gm_compiled *c, gm_mstate *s, gm_error *err)
{
    return gm_ebstate_start(c->eengine, &s->budget, err);
}

static void budget_retain(const gm_mstate *s) { gm_ebstate_retain(s->budget); }

static void budget_release(const gm_compiled *c, gm_mstate *s)
{
    gm_ebstate_release(c->eengine, s->budget);
    s->budget = NULL;
}

static gm_status budget_step_token(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                   uint32_t token, gm_mstate *to, gm_error *err)
{
    return gm_ebstate_accept_token(c->eengine, w->earley, from->budget, token, &to->budget, err);
}

static gm_status budget_step_bytes(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                   const uint8_t *bytes, size_t len, gm_mstate *to,
                                   gm_error *err)
{
    return gm_ebstate_accept_bytes(c->eengine, w->earley, from->budget, bytes, len, &to->budget,
                                   err);
}

/* The Earley ops' view of s: its set. */
static gm_mstate as_earley(const gm_mstate *s)
{
    gm_mstate e;
    e.earley = gm_ebstate_set(s->budget);
    return e;
}

static bool budget_can_end(const gm_compiled *c, const gm_mstate *s)
{
    gm_mstate e = as_earley(s);
    return gm_engine_earley.can_end(c, &e);
}

static gm_status budget_fill_mask(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                                  uint32_t *mask, size_t words, gm_error *err)
{
    gm_mstate e = as_earley(s);
    return gm_engine_earley.fill_mask(c, w, &e, mask, words, err);
}

static gm_status budget_forced_bytes(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                                     uint8_t *buf, size_t cap, size_t *len, gm_error *err)
{
    gm_mstate e = as_earley(s);
    return gm_engine_earley.forced_bytes(c, w, &e, buf, cap, len, err);
}

static void budget_expected(const gm_compiled *c, const gm_mstate *s, gm_strbuf *out)
{
    gm_mstate e = as_earley(s);
    gm_engine_earley.expected(c, &e, out);
    gm_ebstate_describe(c->eengine, s->budget, out);
}

static gm_status budget_temperature(const gm_compiled *c, const gm_mstate *s, float *hi,
                                    float *lo, gm_error *err)
{
    return gm_estate_temperature(c->eengine, gm_ebstate_set(s->budget), hi, lo, err);
}

const gm_engine_ops gm_engine_budget = {
    .kind = GM_ENGINE_EARLEY,
    .new_scratch = budget_new_scratch,
    .free_scratch = budget_free_scratch,
    .start = budget_start,
    .retain = budget_retain,
    .release = budget_release,
    .step_token = budget_step_token,
    .step_bytes = budget_step_bytes,
    .can_end = budget_can_end,
    .fill_mask = budget_fill_mask,
    .forced_bytes = budget_forced_bytes,
    .expected = budget_expected,
    .temperature = budget_temperature,
};
