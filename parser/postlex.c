/*
 * The post-lexing layers over a stream of lexemes (gm_postlex_stream in
 * parser/postlex.h): semicolon insertion, then indentation, exactly as
 * note [semicolon insertion] and note [indentation] describe them.
 */
#include "parser/postlex.h"

void gm_postlex_stream_init(gm_postlex_stream *s, const gm_postlex *pl)
{
    s->pl = pl;
    s->flag = 0;
    s->depth = 0;
    s->levels = 1;
    s->width[0] = 0;
}

/* note [indentation] for one terminal that reaches the layer; appends to s->out. */
static gm_status indentation(gm_postlex_stream *s, uint32_t term, const uint8_t *lexeme,
                             size_t len, size_t *n, gm_error *err)
{
    const gm_postlex *pl = s->pl;
    if (term != pl->newline) {
        /* as the matcher counts them (runtime/layer.c): an unmatched closing bracket is the
           parser's error, so whether the count goes below 0 never matters */
        s->depth += pl->bracket[term];
        s->out[(*n)++] = term;
        return GM_OK;
    }
    if (s->depth > 0)
        return GM_OK; /* implicit line joining */
    uint32_t w = gm_postlex_width(pl, lexeme, len); /* saturates at GM_INDENT_MAX_WIDTH */
    s->out[(*n)++] = term;
    uint32_t top = s->width[s->levels - 1];
    if (w > top) {
        s->width[s->levels++] = (uint8_t)w;
        s->out[(*n)++] = pl->indent;
        return GM_OK;
    }
    while (w < s->width[s->levels - 1]) {
        s->levels--;
        s->out[(*n)++] = pl->dedent;
    }
    if (w != s->width[s->levels - 1])
        return gm_error_set(err, GM_ERR_REJECTED,
                            "unindent to column %u does not match any outer indentation level "
                            "(the enclosing block is at column %u)", w, s->width[s->levels - 1]);
    return GM_OK;
}

gm_status gm_postlex_stream_feed(gm_postlex_stream *s, uint32_t term, const uint8_t *lexeme,
                                 size_t len, const uint32_t **out, size_t *n, gm_error *err)
{
    const gm_postlex *pl = s->pl;
    uint32_t mapped[1];
    uint32_t k = gm_postlex_map(pl, term, &s->flag, mapped);
    *out = s->out;
    *n = 0;
    for (uint32_t i = 0; i < k; i++) {
        if (!pl || !pl->indentation) {
            s->out[(*n)++] = mapped[i];
            continue;
        }
        gm_status st = indentation(s, mapped[i], lexeme, len, n, err);
        if (st != GM_OK)
            return st;
    }
    return GM_OK;
}

void gm_postlex_stream_end(gm_postlex_stream *s, const uint32_t **out, size_t *n)
{
    *out = s->out;
    *n = gm_postlex_end(s->pl, s->flag, s->out);
    s->flag = 0;
    if (!s->pl || !s->pl->indentation)
        return;
    for (; s->levels > 1; s->levels--)
        s->out[(*n)++] = s->pl->dedent;
}
