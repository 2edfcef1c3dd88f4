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

int gm_layer_vfeed(const gm_spanner *sp, gm_vstack *vs, uint32_t elem, uint32_t rel_width)
{
    const gm_lr_table *lr = sp->lr;
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
    gm_vfeed r = gm_vstack_feed(sp->lr, &tmp, elem);
    return r == GM_VFEED_OVERFLOW ? -1 : r == GM_VFEED_SHIFTED;
}

int gm_layer_vend(const gm_spanner *sp, gm_vstack *vs)
{
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
