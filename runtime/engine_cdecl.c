/* The LALR engine's steps with C's typedef-name layer (runtime/cdecl.h, note [typedef-name masks]). */
#include "runtime/cdecl.h"

#include <string.h>

#include "runtime/layer.h"
#include "runtime/objects.h"
#include "runtime/vstack.h"
#include "base/error.h"

#define REGION 256

static gm_mem *cmem(const gm_compiled *c) { return (gm_mem *)&c->mem; }

static bool ident_byte(uint8_t b)
{
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_' ||
           b == '$';
}

/* The text of a pending lexeme while it is all identifier bytes. */
typedef struct ctext {
    uint8_t buf[GM_CSCOPE_MAX_NAME];
    size_t len;
    bool ident;              /* every byte so far is an identifier byte */
} ctext;

static void vs_init(gm_vstack *vs, const gm_lr_node *stack, uint32_t *buf)
{
    memset(vs, 0, sizeof *vs);
    vs->base = stack;
    vs->ov = buf;
    vs->cap = REGION;
}

/* Whether terminal term can come next on stack (1), not (0), unknown (-1: overlay full). */
static int term_viable(const gm_lr_table *lr, const gm_lr_node *stack, uint32_t term)
{
    uint32_t buf[REGION];
    gm_vstack vs;
    vs_init(&vs, stack, buf);
    gm_vfeed r = gm_vstack_feed(lr, &vs, term);
    return r == GM_VFEED_OVERFLOW ? -1 : r == GM_VFEED_SHIFTED;
}

/* Whether the pending lexeme of q (with text t, NULL when not identifier bytes) can still
   become something the stack takes (note [typedef-name masks]). */
static bool pending_viable(const gm_compiled *c, uint32_t q, const gm_lr_node *stack,
                           const gm_cscope *scope, const uint8_t *text, size_t len, bool ident)
{
    const gm_spanner *sp = c->spanner;
    const gm_ctypedef *td = c->ctd;
    uint32_t prod = gm_spanner_prod(sp, q);
    if (sp->prod_ignored[prod])
        return true;
    for (uint32_t k = sp->prod_off[prod]; k < sp->prod_off[prod + 1]; k++) {
        uint32_t e = sp->prod_terms[k];
        if (term_viable(sp->lr, stack, e) != 0) /* unknown counts as viable: the step decides */
            return true;
        if (e == td->identifier && ident && gm_cscope_type_prefix(scope, text, len) &&
            term_viable(sp->lr, stack, td->typedef_name) != 0)
            return true;
    }
    return false;
}

static bool can_end(const gm_compiled *c, uint32_t q, const gm_lr_node *stack, const gm_cstate *cs)
{
    const gm_spanner *sp = c->spanner;
    uint32_t emit[GM_SPANNER_MAX_EMIT], nemit, after, buf[REGION];
    if (!gm_spanner_finish(sp, q, emit, &nemit, &after))
        return false;
    gm_vstack vs;
    vs_init(&vs, stack, buf);
    const uint8_t *text = cs->text ? cs->text->text : NULL;
    size_t len = cs->text ? cs->text->len : 0;
    for (uint32_t k = 0; k < nemit; k++) {
        uint32_t term = emit[k];
        if (term == c->ctd->identifier && cs->text)
            term = gm_cscope_classify(c->ctd, cs->scope, term, text, len);
        if (gm_vstack_feed(sp->lr, &vs, term) != GM_VFEED_SHIFTED)
            return false;
    }
    return gm_vstack_feed(sp->lr, &vs, sp->lr->eof) == GM_VFEED_ACCEPTED;
}

bool gm_cdecl_can_end(const gm_compiled *c, const gm_mstate *s)
{
    return can_end(c, s->lalr.q, s->lalr.stack, &s->lalr.layer.c);
}

/* Feeds one element with the lexeme text t on the real stack and scopes. */
static gm_status feed(const gm_compiled *c, gm_lr_node **stack, gm_layer_state *ls, uint32_t term,
                      const ctext *t, gm_error *err)
{
    const gm_ctypedef *td = c->ctd;
    if (term == td->identifier) {
        if (!t->ident)
            return gm_error_set(err, GM_ERR_STATE, "typedef-name layer: an identifier whose text was not kept");
        term = gm_cscope_classify(td, ls->c.scope, term, t->buf, t->len);
    }
    gm_status st = gm_layer_feed(c->spanner, cmem(c), stack, ls, term, 0);
    if (st != GM_OK)
        return st;
    return gm_cscope_shifted(td, cmem(c), &ls->c, *stack, term, t->buf, t->ident ? t->len : 0, err);
}

gm_status gm_cdecl_advance(const gm_compiled *c, const gm_mstate *from, const uint8_t *bytes,
                           size_t len, gm_mstate *to, gm_error *err)
{
    gm_mem *mem = cmem(c);
    const gm_spanner *sp = c->spanner;
    uint32_t q = from->lalr.q;
    gm_lr_node *stack = from->lalr.stack;
    gm_layer_state ls = from->lalr.layer;
    gm_lr_node_retain(stack);
    gm_indent_retain(ls.indents);
    gm_cstate_retain(&ls.c);
    ctext t;
    t.len = 0;
    t.ident = ls.c.text != NULL || !gm_spanner_pending(sp, q);
    if (ls.c.text) {
        memcpy(t.buf, ls.c.text->text, ls.c.text->len);
        t.len = ls.c.text->len;
    }
    gm_status st = GM_OK;
    for (size_t i = 0; i < len && st == GM_OK; i++) {
        uint8_t b = bytes[i];
        uint32_t next = q, emitted[GM_SPANNER_MAX_EMIT], nemitted = 0;
        /* A lexeme starts at b when none is pending or b ends the pending one (an ignored
           lexeme ends without an element: the lexer's move says it). */
        bool fresh = !gm_spanner_pending(sp, q) ||
                     gm_lexer_move(sp->lexer, gm_spanner_dfa(sp, q), sp->lexer->byte_class[b]) ==
                         GM_LEX_DEAD;
        if (!gm_spanner_step(sp, q, b, &next, emitted, &nemitted)) {
            st = GM_ERR_REJECTED;
            break;
        }
        for (uint32_t k = 0; st == GM_OK && k < nemitted; k++)
            st = feed(c, &stack, &ls, emitted[k], &t, err);
        if (nemitted || fresh) {
            t.len = 0;
            t.ident = true;
        }
        if (t.ident && ident_byte(b) && gm_spanner_pending(sp, next)) {
            if (t.len == sizeof t.buf)
                st = gm_error_set(err, GM_ERR_LIMIT, "an identifier longer than %d bytes",
                                  GM_CSCOPE_MAX_NAME);
            else
                t.buf[t.len++] = b;
        } else {
            t.ident = false;
        }
        q = next;
    }
    if (st == GM_OK) {
        gm_cscope *text = NULL;
        if (t.ident && gm_spanner_pending(sp, q) && !(text = gm_cscope_text(mem, t.buf, t.len)))
            st = gm_mem_fail(mem, err, "the typedef-name layer of a matcher");
        gm_cscope_release(mem, ls.c.text);
        ls.c.text = text;
    }
    if (st == GM_OK) {
        bool ident = ls.c.text != NULL || !gm_spanner_pending(sp, q);
        if (!pending_viable(c, q, stack, ls.c.scope, t.buf, ident ? t.len : 0, ident) &&
            !can_end(c, q, stack, &ls.c))
            st = GM_ERR_REJECTED;
    }
    if (st != GM_OK) {
        gm_lr_node_release(mem, stack);
        gm_indent_release(mem, ls.indents);
        gm_cstate_release(mem, &ls.c);
        if (st == GM_ERR_NOMEM)
            gm_error_set(err, st, "out of memory for the parser stack");
        return st;
    }
    to->lalr.q = q;
    to->lalr.stack = stack;
    to->lalr.layer = ls;
    memset(&to->lalr.win, 0, sizeof to->lalr.win);
    return GM_OK;
}

gm_status gm_cdecl_fill(const gm_compiled *c, const gm_mstate *s, uint32_t *mask, gm_error *err)
{
    const gm_vocab_data *v = c->vocab->data;
    uint32_t n = c->spanner->nbits;
    memset(mask, 0, ((size_t)n + 31) / 32 * sizeof *mask);
    for (uint32_t id = 0; id < n; id++) {
        if (v->flags[id] & (GM_TOK_SPECIAL | GM_TOK_PADDING))
            continue;
        size_t len;
        const uint8_t *bytes = gm_vocab_data_token(v, id, &len);
        if (!len)
            continue;
        gm_mstate next;
        gm_status st = gm_cdecl_advance(c, s, bytes, len, &next, err);
        if (st == GM_ERR_REJECTED)
            continue;
        if (st != GM_OK)
            return st;
        mask[id / 32] |= 1u << (id % 32);
        c->ops->release(c, &next);
    }
    return GM_OK;
}
