/*
 * Feeding class-sequence elements through the post-lexing layers
 * (parser/postlex.h, note [indentation]) on virtual and real stacks. The
 * two versions implement the same rules: a completed line end is dropped
 * inside brackets; otherwise _NEWLINE is fed, then _INDENT (push the width)
 * or one _DEDENT per level above the width, which must then match a level.
 */
#include "runtime/layer.h"

#include <string.h>

#include "runtime/vstack.h"
#include "spanner/spanner.h"

/* The width a line-end element stands for. */
static uint32_t line_width(uint32_t elem, uint32_t rel_width)
{
    uint32_t w = GM_SEQ_WIDTH(elem);
    if ((elem & GM_SEQ_LINE_REL) == GM_SEQ_LINE_REL) {
        w += rel_width;
        if (w > GM_INDENT_MAX_WIDTH)
            w = GM_INDENT_MAX_WIDTH;
    }
    return w;
}

static uint32_t vtop_width(const gm_vstack *vs)
{
    if (vs->in)
        return vs->iov[vs->in - 1];
    return vs->ibase ? vs->ibase->width : 0;
}

/*
 * A saved virtual stack, to try a terminal and take the attempt back
 * (note [offending-token insertion]): the overlay entries a failed feed's
 * reductions may have overwritten, and the fields.
 */
typedef struct vsaved {
    gm_vstack vs;
    uint32_t ov[GM_LR_OVERLAY_MAX];
} vsaved;

static bool vsave(vsaved *s, const gm_vstack *vs)
{
    if (vs->n > GM_LR_OVERLAY_MAX)
        return false;
    s->vs = *vs;
    memcpy(s->ov, vs->ov, (size_t)vs->n * sizeof *s->ov);
    return true;
}

/* Back to the saved stack; what the attempt read below it still counts (low). */
static void vrestore(gm_vstack *vs, const vsaved *s)
{
    uint32_t low = vs->low < s->vs.low ? vs->low : s->vs.low;
    *vs = s->vs;
    memcpy(vs->ov, s->ov, (size_t)s->vs.n * sizeof *s->ov);
    vs->low = low < vs->n ? low : vs->n;
}

/*
 * Element term | GM_POSTLEX_TRY: term, or the inserted terminal then term
 * when the parser cannot take term (note [offending-token insertion]).
 */
static gm_vfeed vfeed_try(const gm_spanner *sp, gm_vstack *vs, uint32_t term)
{
    vsaved s;
    if (!vsave(&s, vs))
        return GM_VFEED_OVERFLOW;
    gm_vfeed r = gm_vstack_feed(sp->lr, vs, term);
    if (r != GM_VFEED_REJECTED)
        return r;
    vrestore(vs, &s);
    r = gm_vstack_feed(sp->lr, vs, sp->postlex->insert);
    return r == GM_VFEED_SHIFTED ? gm_vstack_feed(sp->lr, vs, term) : r;
}

int gm_layer_vfeed(const gm_spanner *sp, gm_vstack *vs, uint32_t elem, uint32_t rel_width)
{
    const gm_lr_table *lr = sp->lr;
    if (!(elem & GM_SEQ_LINE) && (elem & GM_POSTLEX_TRY))
        return vfeed_try(sp, vs, elem & ~GM_POSTLEX_TRY);
    if (!(elem & GM_SEQ_LINE)) {
        gm_vfeed r = gm_vstack_feed(lr, vs, elem);
        if (r == GM_VFEED_SHIFTED && sp->postlex && sp->postlex->indentation)
            vs->parens += sp->postlex->bracket[elem];
        return r;
    }
    const gm_postlex *pl = sp->postlex;
    if (vs->parens > 0)
        return GM_VFEED_SHIFTED; /* implicit line joining: the line end is dropped */
    uint32_t w = line_width(elem, rel_width);
    gm_vfeed r = gm_vstack_feed(lr, vs, pl->newline);
    if (r != GM_VFEED_SHIFTED)
        return r;
    uint32_t top = vtop_width(vs);
    if (w > top) {
        r = gm_vstack_feed(lr, vs, pl->indent);
        if (r != GM_VFEED_SHIFTED)
            return r;
        if (vs->in == vs->icap)
            return GM_VFEED_OVERFLOW;
        vs->iov[vs->in++] = w;
        return GM_VFEED_SHIFTED;
    }
    while (w < top) {
        r = gm_vstack_feed(lr, vs, pl->dedent);
        if (r != GM_VFEED_SHIFTED)
            return r;
        if (vs->in)
            vs->in--;
        else
            vs->ibase = vs->ibase->parent;
        top = vtop_width(vs);
    }
    return w == top ? GM_VFEED_SHIFTED : GM_VFEED_REJECTED;
}

int gm_layer_vviable(const gm_spanner *sp, const gm_vstack *vs, uint32_t elem, uint32_t *scratch,
                     uint32_t cap)
{
    if (elem == GM_SEQ_PENDING_LINE) {
        /* A line end still growing: any width can come, so it fits when _NEWLINE does. */
        if (vs->parens > 0)
            return 1;
        elem = sp->postlex->newline;
    }
    if (vs->n > cap)
        return -1;
    gm_vstack tmp = *vs;
    tmp.ov = scratch;
    tmp.cap = cap;
    memcpy(scratch, vs->ov, (size_t)vs->n * sizeof *scratch);
    gm_vfeed r = (elem & GM_POSTLEX_TRY) && !(elem & GM_SEQ_LINE)
                     ? vfeed_try(sp, &tmp, elem & ~GM_POSTLEX_TRY)
                     : gm_vstack_feed(sp->lr, &tmp, elem);
    return r == GM_VFEED_OVERFLOW ? -1 : r == GM_VFEED_SHIFTED;
}

int gm_layer_vend(const gm_spanner *sp, gm_vstack *vs)
{
    if (sp->postlex && sp->postlex->offending) {
        /* note [offending-token insertion] before $end (the caller feeds $end) */
        vsaved s;
        if (!vsave(&s, vs))
            return GM_VFEED_OVERFLOW;
        gm_vfeed r = gm_vstack_feed(sp->lr, vs, sp->lr->eof);
        vrestore(vs, &s);
        if (r == GM_VFEED_ACCEPTED || r == GM_VFEED_OVERFLOW)
            return r == GM_VFEED_OVERFLOW ? r : GM_VFEED_SHIFTED;
        if (gm_vstack_feed(sp->lr, vs, sp->postlex->insert) != GM_VFEED_SHIFTED)
            vrestore(vs, &s); /* $end fails on its own */
        return GM_VFEED_SHIFTED;
    }
    if (!sp->postlex || !sp->postlex->indentation)
        return GM_VFEED_SHIFTED;
    while (vtop_width(vs) > 0) {
        gm_vfeed r = gm_vstack_feed(sp->lr, vs, sp->postlex->dedent);
        if (r != GM_VFEED_SHIFTED)
            return r;
        if (vs->in)
            vs->in--;
        else
            vs->ibase = vs->ibase->parent;
    }
    return GM_VFEED_SHIFTED;
}

/* One terminal on the real stack (replacing *stack on success). */
static gm_status feed_real(const gm_lr_table *lr, gm_mem *m, gm_lr_node **stack, uint32_t term)
{
    gm_lr_node *fed;
    gm_status st = gm_lr_feed(lr, m, *stack, term, &fed);
    if (st != GM_OK)
        return st;
    gm_lr_node_release(m, *stack);
    *stack = fed;
    return GM_OK;
}

gm_status gm_layer_feed(const gm_spanner *sp, gm_mem *m, gm_lr_node **stack, gm_layer_state *ls,
                        uint32_t elem, uint32_t rel_width)
{
    const gm_lr_table *lr = sp->lr;
    if (!(elem & GM_SEQ_LINE) && (elem & GM_POSTLEX_TRY)) {
        /* note [offending-token insertion] */
        uint32_t term = elem & ~GM_POSTLEX_TRY;
        gm_status st = feed_real(lr, m, stack, term);
        if (st != GM_ERR_REJECTED)
            return st;
        gm_lr_node *s = *stack;
        gm_lr_node_retain(s);
        st = feed_real(lr, m, &s, sp->postlex->insert);
        if (st == GM_OK)
            st = feed_real(lr, m, &s, term);
        if (st != GM_OK) {
            gm_lr_node_release(m, s);
            return st;
        }
        gm_lr_node_release(m, *stack);
        *stack = s;
        return GM_OK;
    }
    if (!(elem & GM_SEQ_LINE)) {
        gm_status st = feed_real(lr, m, stack, elem);
        if (st == GM_OK && sp->postlex && sp->postlex->indentation)
            ls->parens += sp->postlex->bracket[elem];
        return st;
    }
    const gm_postlex *pl = sp->postlex;
    if (ls->parens > 0)
        return GM_OK;
    uint32_t w = line_width(elem, rel_width);
    /* Work on copies so a rejection leaves the caller's state untouched. */
    gm_lr_node *s = *stack;
    gm_lr_node_retain(s);
    gm_indent *ind = ls->indents;
    gm_indent_retain(ind);
    gm_status st = feed_real(lr, m, &s, pl->newline);
    uint32_t top = ind ? ind->width : 0;
    if (st == GM_OK && w > top) {
        st = feed_real(lr, m, &s, pl->indent);
        if (st == GM_OK) {
            gm_indent *pushed = gm_indent_push(m, ind, w);
            if (!pushed)
                st = GM_ERR_NOMEM;
            gm_indent_release(m, ind);
            ind = pushed;
            top = w;
        }
    }
    while (st == GM_OK && w < top) {
        st = feed_real(lr, m, &s, pl->dedent);
        if (st != GM_OK)
            break;
        gm_indent *parent = ind->parent;
        gm_indent_retain(parent);
        gm_indent_release(m, ind);
        ind = parent;
        top = ind ? ind->width : 0;
    }
    if (st == GM_OK && w != top)
        st = GM_ERR_REJECTED;
    if (st != GM_OK) {
        gm_lr_node_release(m, s);
        gm_indent_release(m, ind);
        return st;
    }
    gm_lr_node_release(m, *stack);
    *stack = s;
    gm_indent_release(m, ls->indents);
    ls->indents = ind;
    return GM_OK;
}
