/*
 * The LALR engine's matcher ops (note [engine ops]): a state is (spanner
 * state, persistent LR stack, layer state). Accepting bytes runs the lexing
 * transducer over them and feeds the emitted terminals to the stack; they
 * are allowed exactly when that succeeds and the pending lexeme can still
 * become a terminal the stack accepts — the same condition the mask encodes
 * (spanner/tables.h, note [token classes]), checked directly.
 */
#include "runtime/engine.h"

#include <string.h>

#include "runtime/cdecl.h"
#include "runtime/ctx_spanners.h"
#include "runtime/mask.h"
#include "runtime/objects.h"
#include "base/bitset.h"
#include "base/error.h"
#include "base/strbuf.h"

static gm_mem *cmem(const gm_compiled *c) { return (gm_mem *)&c->mem; }

static gm_status lalr_new_scratch(const gm_compiled *c, gm_mscratch *w, gm_error *err)
{
    (void)c;
    (void)err;
    w->none = NULL;
    return GM_OK;
}

/*
 * The spanner whose state a matcher state with this stack is in: under the
 * contextual lexer the one of the lexer of the top (note [contextual
 * masks]), already built by the step that reached the state.
 */
static gm_spanner *spanner_at(const gm_compiled *c, const gm_lr_node *stack, gm_error *err)
{
    if (!c->ctx)
        return c->spanner;
    return gm_ctx_spanner(c->ctx, gm_ctx_lexer_of(c->ctx, stack->state), err);
}

static gm_status lalr_start(const gm_compiled *c, gm_mstate *s, gm_error *err)
{
    s->lalr.layer.indents = NULL;
    s->lalr.layer.parens = 0;
    memset(&s->lalr.layer.c, 0, sizeof s->lalr.layer.c);
    s->lalr.win.n = 0;
    s->lalr.stack = gm_lr_stack_new(cmem(c));
    if (!s->lalr.stack)
        return gm_mem_fail(cmem(c), err, "a matcher");
    const gm_spanner *sp = spanner_at(c, s->lalr.stack, err);
    if (!sp) {
        gm_lr_node_release(cmem(c), s->lalr.stack);
        s->lalr.stack = NULL;
        return err->code;
    }
    s->lalr.q = sp->start;
    return GM_OK;
}

static void lalr_free_scratch(const gm_compiled *c, gm_mscratch *w)
{
    (void)c;
    (void)w;
}

static void lalr_retain(const gm_mstate *s)
{
    gm_lr_node_retain(s->lalr.stack);
    gm_indent_retain(s->lalr.layer.indents);
    gm_cstate_retain(&s->lalr.layer.c);
}

static void lalr_release(const gm_compiled *c, gm_mstate *s)
{
    gm_lr_node_release(cmem(c), s->lalr.stack);
    gm_indent_release(cmem(c), s->lalr.layer.indents);
    s->lalr.stack = NULL;
    s->lalr.layer.indents = NULL;
    gm_cstate_release(cmem(c), &s->lalr.layer.c);
}

static gm_mask_state mask_state(const gm_mstate *s)
{
    gm_mask_state ms = {s->lalr.q, s->lalr.stack, &s->lalr.layer, &s->lalr.win};
    return ms;
}

/* gm_ctx_step's feed on the real stacks (struct real_feed). */
typedef struct real_feed {
    gm_mem *mem;
    gm_lr_node **stack;
    gm_layer_state *ls;
    gm_status st;
} real_feed;

static int ctx_feed(void *ud, const gm_spanner *sp, uint32_t elem, uint32_t *top)
{
    real_feed *f = ud;
    f->st = gm_layer_feed(sp, f->mem, f->stack, f->ls, elem, 0);
    *top = (*f->stack)->state;
    return f->st == GM_OK ? 1 : f->st == GM_ERR_REJECTED ? 0 : -2;
}

/*
 * Runs bytes through the transducer from `from`. On success *to (new
 * references) holds the state after them; GM_ERR_REJECTED when they are not
 * allowed; GM_ERR_NOMEM when a node could not be allocated.
 */
static gm_status advance(const gm_compiled *c, const gm_mstate *from, const uint8_t *bytes,
                         size_t len, gm_mstate *to, gm_error *err)
{
    if (c->ctd)
        return gm_cdecl_advance(c, from, bytes, len, to, err);
    gm_mem *mem = cmem(c);
    uint32_t q = from->lalr.q;
    gm_lr_node *stack = from->lalr.stack;
    gm_layer_state ls = from->lalr.layer;
    gm_indent_retain(ls.indents);
    gm_lr_node_retain(stack);
    gm_status st = GM_OK;
    gm_spanner *sp = c->spanner;
    gm_ctx_window win;
    gm_ctx_window_load(&from->lalr.win, &win);
    if (c->ctx) {
        /* Under the contextual lexer (note [contextual masks]). */
        uint32_t k = gm_ctx_lexer_of(c->ctx, stack->state);
        real_feed f = {mem, &stack, &ls, GM_OK};
        if (!(sp = gm_ctx_spanner(c->ctx, k, err)))
            st = err->code;
        for (size_t i = 0; i < len && st == GM_OK; i++) {
            int r = gm_ctx_step(c->ctx, &sp, &k, &q, &win, bytes[i], ctx_feed, &f, err);
            st = r > 0 ? GM_OK : r == 0 ? GM_ERR_REJECTED : f.st != GM_OK ? f.st : err->code;
        }
    } else {
        for (size_t i = 0; i < len && st == GM_OK; i++) {
            uint32_t next = q, emitted[GM_SPANNER_MAX_EMIT], nemitted = 0;
            if (!gm_spanner_step(c->spanner, q, bytes[i], &next, emitted, &nemitted))
                st = GM_ERR_REJECTED;
            for (uint32_t k = 0; st == GM_OK && k < nemitted; k++)
                st = gm_layer_feed(c->spanner, mem, &stack, &ls, emitted[k], 0);
            q = next;
        }
    }
    gm_ctx_saved_window saved = {0};
    if (st == GM_OK && c->ctx && !gm_ctx_window_save(&win, &saved, err))
        st = err->code;
    if (st == GM_OK) {
        /* Viable: the pending lexeme can still become something the stack accepts, or the
           output can end here (a language holding "" accepts no bytes at the start, where
           nothing is pending and, in `start:`, no terminal exists at all). */
        gm_mask_state ms = {q, stack, &ls, &saved};
        if (c->ctx ? !gm_mask_pending_viable_ctx(c->ctx, &ms) && !gm_mask_can_end_ctx(c->ctx, &ms)
                   : !gm_mask_pending_viable(sp, &ms) && !gm_mask_can_end(c->spanner, &ms))
            st = GM_ERR_REJECTED;
    }
    if (st != GM_OK) {
        gm_lr_node_release(mem, stack);
        gm_indent_release(mem, ls.indents);
        if (st == GM_ERR_NOMEM)
            gm_error_set(err, st, "out of memory for the parser stack");
        return st;
    }
    to->lalr.q = q;
    to->lalr.stack = stack;
    to->lalr.layer = ls;
    to->lalr.win = saved;
    return GM_OK;
}

static gm_status lalr_step_token(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                 uint32_t token, gm_mstate *to, gm_error *err)
{
    (void)w;
    const gm_vocab_data *v = c->vocab->data;
    if (v->flags[token] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
        return GM_ERR_REJECTED;
    size_t len;
    const uint8_t *bytes = gm_vocab_data_token(v, token, &len);
    if (len == 0)
        return GM_ERR_REJECTED;
    return advance(c, from, bytes, len, to, err);
}

static gm_status lalr_step_bytes(const gm_compiled *c, gm_mscratch *w, const gm_mstate *from,
                                 const uint8_t *bytes, size_t len, gm_mstate *to, gm_error *err)
{
    (void)w;
    return advance(c, from, bytes, len, to, err);
}

static bool lalr_can_end(const gm_compiled *c, const gm_mstate *s)
{
    if (c->ctd)
        return gm_cdecl_can_end(c, s);
    gm_mask_state ms = mask_state(s);
    if (c->ctx)
        return gm_mask_can_end_ctx(c->ctx, &ms);
    return gm_mask_can_end(c->spanner, &ms);
}

static gm_status lalr_fill_mask(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                                uint32_t *mask, size_t words, gm_error *err)
{
    (void)w;
    (void)words;
    if (c->ctd)
        return gm_cdecl_fill(c, s, mask, err);
    gm_mask_state ms = mask_state(s);
    if (c->ctx)
        return gm_mask_fill_ctx(c->ctx, &ms, mask, err);
    return gm_mask_fill(c->spanner, &ms, mask, err);
}

/*
 * note [forced bytes]
 * A byte is possible when running it through the transducer from the
 * current state succeeds and leaves a viable pending lexeme (advance()).
 * While exactly one byte is possible and the output cannot end here, every
 * continuation starts with it: append it and move on.
 */
static gm_status lalr_forced_bytes(const gm_compiled *c, gm_mscratch *w, const gm_mstate *s,
                                   uint8_t *buf, size_t cap, size_t *len, gm_error *err)
{
    (void)w;
    gm_mstate cur = *s;
    lalr_retain(&cur);
    gm_status st = GM_OK;
    while (*len < cap && !lalr_can_end(c, &cur)) {
        int found = 0;
        gm_mstate only = {0};
        for (unsigned b = 0; b < 256 && found < 2; b++) {
            uint8_t byte = (uint8_t)b;
            gm_mstate next;
            st = advance(c, &cur, &byte, 1, &next, err);
            if (st == GM_ERR_REJECTED)
                continue;
            if (st != GM_OK)
                break;
            if (++found == 1) {
                only = next;
                buf[*len] = byte;
            } else {
                lalr_release(c, &next);
            }
        }
        if (st != GM_OK && st != GM_ERR_REJECTED) {
            lalr_release(c, &only);
            break;
        }
        st = GM_OK;
        if (found != 1) {
            lalr_release(c, &only);
            break;
        }
        ++*len;
        lalr_release(c, &cur);
        cur = only;
    }
    lalr_release(c, &cur);
    return st;
}

static void put_term(gm_strbuf *out, const gm_grammar *g, uint32_t term)
{
    if (term == g->lr->eof)
        gm_strbuf_puts(out, "end of input");
    else if (g->cfg)
        gm_strbuf_puts(out, g->cfg->names[term]);
    else if (term < g->lexer->nterminals)
        gm_strbuf_puts(out, g->lexer->terminals[term].name);
    else
        gm_strbuf_printf(out, "terminal %u", term);
}

/* "A, B or C": the terminals the LR stack `top` can take next (cmd_parse's wording). */
static void put_viable(const gm_compiled *c, const gm_lr_node *top, gm_strbuf *out)
{
    const gm_grammar *g = c->grammar;
    const gm_lr_table *t = g->lr;
    uint64_t bits_small[8];
    size_t words = GM_BITSET_WORDS(t->nterms) + 1;
    uint64_t *bits = words <= 8 ? bits_small : gm_mem_calloc(cmem(c), words, sizeof *bits);
    if (!bits) {
        gm_strbuf_puts(out, "(out of memory)");
        return;
    }
    memset(bits, 0, words * sizeof *bits);
    gm_lr_expected(t, top, bits);
    size_t n = gm_bitset_count(bits, GM_BITSET_WORDS(t->nterms)), k = 0;
    if (!n)
        gm_strbuf_puts(out, "nothing");
    for (uint32_t term = 0; term < t->nterms; term++) {
        if (!gm_bitset_get(bits, term))
            continue;
        if (++k > 1)
            gm_strbuf_puts(out, k == n ? " or " : ", ");
        if (k > 40) {
            gm_strbuf_printf(out, "... (%zu more)", n - 40);
            break;
        }
        put_term(out, g, term);
    }
    if (bits != bits_small)
        gm_mem_free(cmem(c), bits);
}

/*
 * What may come next: the terminals the stack takes; when a lexeme is
 * pending (the text so far ends inside a token, e.g. "2" of a NUMBER), the
 * terminals that may follow once it ends, the way the text would end it.
 */
static void lalr_expected(const gm_compiled *c, const gm_mstate *s, gm_strbuf *out)
{
    gm_error e;
    const gm_spanner *sp = spanner_at(c, s->lalr.stack, &e);
    uint32_t emit[GM_SPANNER_MAX_EMIT], nemit = 0, after;
    if (!sp || s->lalr.q == sp->start || !gm_spanner_finish(sp, s->lalr.q, emit, &nemit, &after) ||
        nemit == 0) {
        put_viable(c, s->lalr.stack, out);
        return;
    }
    gm_lr_node *top = s->lalr.stack;
    gm_lr_node_retain(top);
    for (uint32_t k = 0; k < nemit && top; k++) {
        gm_lr_node *next = NULL;
        if (gm_lr_feed(c->grammar->lr, cmem(c), top, emit[k] & ~GM_POSTLEX_TRY, &next) != GM_OK)
            next = NULL;
        gm_lr_node_release(cmem(c), top);
        top = next;
    }
    if (!top) { /* the pending lexeme cannot end here: what the stack takes */
        put_viable(c, s->lalr.stack, out);
        return;
    }
    put_viable(c, top, out);
    gm_strbuf_puts(out, " after the ");
    put_term(out, c->grammar, emit[nemit - 1] & ~GM_POSTLEX_TRY);
    gm_strbuf_puts(out, " being lexed (or more of it)");
    gm_lr_node_release(cmem(c), top);
}

const gm_engine_ops gm_engine_lalr = {
    .kind = GM_ENGINE_LALR,
    .new_scratch = lalr_new_scratch,
    .free_scratch = lalr_free_scratch,
    .start = lalr_start,
    .retain = lalr_retain,
    .release = lalr_release,
    .step_token = lalr_step_token,
    .step_bytes = lalr_step_bytes,
    .can_end = lalr_can_end,
    .fill_mask = lalr_fill_mask,
    .forced_bytes = lalr_forced_bytes,
    .expected = lalr_expected,
};
