/*
 * The Earley engine's matcher ops (note [engine ops]): a state is one
 * persistent gm_estate (earley/engine.h); every question goes to the engine.
 */
#include "runtime/engine.h"

#include "runtime/objects.h"
#include "base/error.h"

static gm_status earley_new_scratch(const gm_compiled *c, gm_mscratch *w, gm_error *err)
{
    return gm_escratch_create(c->eengine, &w->earley, err);
}

static void earley_free_scratch(const gm_compiled *c, gm_mscratch *w)
{
    gm_escratch_destroy(c->eengine, w->earley);
    w->earley = NULL;
}

static gm_status earley_start(const gm_compiled *c, gm_mstate *s, gm_error *err)
{
    s->earley = gm_estate_start(c->eengine, err);
    if (!s->earley)
        return err && err->code != GM_OK ? err->code : GM_ERR_NOMEM;
    return GM_OK;
}

static void earley_retain(const gm_mstate *s) { gm_estate_retain(s->earley); }

static void earley_release(const gm_compiled *c, gm_mstate *s)
{
    gm_estate_release(c->eengine, s->earley);
    s->earley = NULL;
}

static gm_status earley_step_token(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                   uint32_t token, gm_mstate *to, gm_error *err)
{
    return gm_estate_accept_token(c->eengine, w->earley, from->earley, token, &to->earley, err);
}

static gm_status earley_step_bytes(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                   const uint8_t *bytes, size_t len, gm_mstate *to,
                                   gm_error *err)
{
    return gm_estate_accept_bytes(c->eengine, w->earley, from->earley, bytes, len, &to->earley,
                                  err);
}

static bool earley_can_end(const gm_compiled *c, const gm_mstate *s)
{
    return gm_estate_accepting(c->eengine, s->earley);
}

/* The engine sets EOS ids itself; matcher.c sets them again when can_end. */
static gm_status earley_fill_mask(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                                  uint32_t *mask, size_t words, gm_error *err)
{
    return gm_estate_fill_mask(c->eengine, w->earley, s->earley, mask, words, err);
}

static gm_status earley_forced_bytes(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                                     uint8_t *buf, size_t cap, size_t *len, gm_error *err)
{
    return gm_estate_forced_bytes(c->eengine, w->earley, s->earley, buf, cap, len, err);
}

const gm_engine_ops gm_engine_earley = {
    .kind = GM_ENGINE_EARLEY,
    .new_scratch = earley_new_scratch,
    .free_scratch = earley_free_scratch,
    .start = earley_start,
    .retain = earley_retain,
    .release = earley_release,
    .step_token = earley_step_token,
    .step_bytes = earley_step_bytes,
    .can_end = earley_can_end,
    .fill_mask = earley_fill_mask,
    .forced_bytes = earley_forced_bytes,
};
