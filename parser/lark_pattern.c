/* Lark terminal patterns written back as grammar text. */
#include "parser/lark_pattern.h"

#include "lexer/lexer.h"

void gm_lpattern_flag_letters(char *buf, unsigned flags)
{
    size_t k = 0;
    if (flags & GM_RE_IGNORECASE)
        buf[k++] = 'i';
    if (flags & GM_RE_MULTILINE)
        buf[k++] = 'm';
    if (flags & GM_RE_DOTALL)
        buf[k++] = 's';
    if (flags & GM_RE_UNICODE)
        buf[k++] = 'u';
    if (flags & GM_RE_VERBOSE)
        buf[k++] = 'x';
    if (flags & GM_RE_ASCII)
        buf[k++] = 'a';
    buf[k] = '\0';
}

void gm_lpattern_write(gm_strbuf *out, const gm_lpattern *p)
{
    if (p->is_literal) {
        gm_strbuf_putc(out, '"');
        gm_strbuf_escaped(out, p->bytes, p->len);
        gm_strbuf_putc(out, '"');
        if (p->flags & GM_RE_IGNORECASE)
            gm_strbuf_putc(out, 'i');
        return;
    }
    gm_strbuf_putc(out, '/');
    for (size_t i = 0; i < p->len; i++) {
        unsigned char c = (unsigned char)p->bytes[i];
        if (c == '/')
            gm_strbuf_puts(out, "\\/");
        else if (c == '\n')
            gm_strbuf_puts(out, "\\n");
        else if (c == '\t')
            gm_strbuf_puts(out, "\\t");
        else if (c == '\r')
            gm_strbuf_puts(out, "\\r");
        else if (c < 0x20 || c == 0x7f)
            gm_strbuf_printf(out, "\\x%02x", c);
        else
            gm_strbuf_putc(out, (char)c);
    }
    gm_strbuf_putc(out, '/');
    char letters[8];
    gm_lpattern_flag_letters(letters, p->flags);
    gm_strbuf_puts(out, letters);
}
