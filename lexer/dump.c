/* Text and Graphviz dumps of byte DFAs (format in dump.h). */
#include "lexer/dump.h"

#include <stdio.h>

static void put_byte(gm_strbuf *b, int c, bool dot)
{
    if (c > 0x20 && c < 0x7f && c != '\'' && c != '\\' && !(dot && c == '"'))
        gm_strbuf_printf(b, "'%c'", c);
    else
        gm_strbuf_printf(b, dot ? "\\\\x%02x" : "\\x%02x", c);
}

/* The edges of state s as "ranges -> target" lines (or Graphviz edges). */
static void put_edges(gm_strbuf *b, const gm_dfa_view *v, uint32_t s, bool dot)
{
    uint32_t target[256];
    for (int c = 0; c < 256; c++)
        target[c] = v->lexer ? gm_lexer_move(v->lexer, s, v->byte_class[c])
                             : v->next[(size_t)s * v->nclasses + v->byte_class[c]];
    bool done[256] = {false};
    for (int c = 0; c < 256; c++) {
        uint32_t t = target[c];
        if (done[c] || t == GM_LEX_DEAD)
            continue;
        if (dot)
            gm_strbuf_printf(b, "  s%u -> s%u [label=\"", s, t);
        else
            gm_strbuf_puts(b, "  ");
        bool first = true;
        for (int lo = c; lo < 256; lo++) {
            if (target[lo] != t || done[lo])
                continue;
            int hi = lo;
            while (hi + 1 < 256 && target[hi + 1] == t)
                hi++;
            for (int x = lo; x <= hi; x++)
                done[x] = true;
            if (!first)
                gm_strbuf_putc(b, ' ');
            first = false;
            put_byte(b, lo, dot);
            if (hi > lo) {
                gm_strbuf_putc(b, '-');
                put_byte(b, hi, dot);
            }
            lo = hi;
        }
        if (dot)
            gm_strbuf_puts(b, "\"];\n");
        else
            gm_strbuf_printf(b, " -> s%u\n", t);
    }
}

void gm_dfa_view_dump(gm_strbuf *b, const gm_dfa_view *v)
{
    gm_strbuf_printf(b, "dfa states=%u classes=%u\n", v->nstates, v->nclasses);
    for (uint32_t s = 0; s < v->nstates; s++) {
        gm_strbuf_printf(b, "s%u", s);
        if (v->label[s] != GM_LEX_NONE)
            gm_strbuf_printf(b, " accept %s", v->name(v->ud, v->label[s]));
        gm_strbuf_putc(b, '\n');
        put_edges(b, v, s, false);
    }
}

void gm_dfa_view_dot(gm_strbuf *b, const gm_dfa_view *v)
{
    gm_strbuf_puts(b, "digraph dfa {\n  rankdir=LR;\n  node [shape=circle];\n");
    gm_strbuf_puts(b, "  start [shape=point];\n  start -> s0;\n");
    for (uint32_t s = 0; s < v->nstates; s++) {
        if (v->label[s] != GM_LEX_NONE)
            gm_strbuf_printf(b, "  s%u [shape=doublecircle, xlabel=\"%s\"];\n", s,
                             v->name(v->ud, v->label[s]));
    }
    for (uint32_t s = 0; s < v->nstates; s++)
        put_edges(b, v, s, true);
    gm_strbuf_puts(b, "}\n");
}

static const char *number_name(void *ud, uint32_t label)
{
    char *buf = ud;
    snprintf(buf, 16, "%u", label);
    return buf;
}

static const char *terminal_name(void *ud, uint32_t label)
{
    const gm_lexer *lx = ud;
    return label < lx->nterminals ? lx->terminals[label].name : "?";
}

gm_dfa_view gm_dfa_view_of(const gm_dfa *d)
{
    /* The label buffer lives in the view's user data; one per thread is enough for a dump. */
    static _Thread_local char buf[16];
    gm_dfa_view v = {d->nstates, d->nclasses, d->byte_class, d->next, d->label, number_name, buf,
                     NULL};
    return v;
}

gm_dfa_view gm_lexer_view(const gm_lexer *lx)
{
    gm_dfa_view v = {lx->nstates, lx->nclasses, lx->byte_class, lx->next, lx->accept,
                     terminal_name, (void *)lx, lx};
    return v;
}
