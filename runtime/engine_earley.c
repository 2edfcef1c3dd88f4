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

/* 'c' for a printable byte, 0xNN otherwise. */
static void put_byte(gm_strbuf *out, unsigned b)
{
    if (b >= 0x20 && b < 0x7f && b != '\'')
        gm_strbuf_printf(out, "'%c'", (char)b);
    else
        gm_strbuf_printf(out, "0x%02x", b);
}

/*
 * What may come next, by probing: the bytes (as ranges: "'0'-'9', '\"'"), the
 * special tokens the grammar takes here, and the end of input. A diagnostic
 * path: it allocates a scratch and steps every byte once.
 */
static void earley_expected(const gm_compiled *c, const gm_mstate *s, gm_strbuf *out)
{
    gm_escratch *w = NULL;
    if (gm_escratch_create(c->eengine, &w, NULL) != GM_OK) {
        gm_strbuf_puts(out, "(out of memory)");
        return;
    }
    bool ok[256];
    for (unsigned b = 0; b < 256; b++) {
        uint8_t byte = (uint8_t)b;
        gm_estate *next = NULL;
        ok[b] = gm_estate_accept_bytes(c->eengine, w, s->earley, &byte, 1, &next, NULL) == GM_OK;
        gm_estate_release(c->eengine, next);
    }
    size_t shown = 0;
    for (unsigned b = 0; b < 256; b++) {
        if (!ok[b])
            continue;
        unsigned hi = b;
        while (hi + 1 < 256 && ok[hi + 1])
            hi++;
        if (shown++ == 16) {
            gm_strbuf_puts(out, ", ...");
            break;
        }
        if (shown > 1)
            gm_strbuf_puts(out, ", ");
        put_byte(out, b);
        if (hi > b) {
            gm_strbuf_putc(out, '-');
            put_byte(out, hi);
        }
        b = hi;
    }
    const gm_vocab_data *v = c->vocab->data;
    for (uint32_t t = 0; t < v->size; t++) {
        if (!(v->flags[t] & GM_TOK_SPECIAL) || (v->flags[t] & GM_TOK_EOS))
            continue;
        gm_estate *next = NULL;
        if (gm_estate_accept_token(c->eengine, w, s->earley, t, &next, NULL) == GM_OK) {
            size_t len;
            const uint8_t *text = gm_vocab_data_token(v, t, &len);
            gm_strbuf_puts(out, shown++ ? ", " : "");
            gm_strbuf_printf(out, "the special token %.*s", (int)len, (const char *)text);
        }
        gm_estate_release(c->eengine, next);
    }
    if (gm_estate_accepting(c->eengine, s->earley))
        gm_strbuf_puts(out, shown ? " or end of input" : "end of input");
    else if (!shown)
        gm_strbuf_puts(out, "nothing");
    gm_escratch_destroy(c->eengine, w);
}

static gm_status earley_temperature(const gm_compiled *c, const gm_mstate *s, float *hi,
                                    float *lo, gm_error *err)
{
    return gm_estate_temperature(c->eengine, s->earley, hi, lo, err);
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
    .expected = earley_expected,
    .temperature = earley_temperature,
};
