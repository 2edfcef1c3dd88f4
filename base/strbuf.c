/* gm_strbuf: sticky-failure text building. */
#include "base/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/vec.h"

void gm_strbuf_init(gm_strbuf *b, gm_mem *m)
{
    memset(b, 0, sizeof *b);
    b->mem = m;
}

void gm_strbuf_free(gm_strbuf *b)
{
    gm_mem_free(b->mem, b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}

static bool reserve(gm_strbuf *b, size_t extra)
{
    if (b->failed)
        return false;
    if (b->n + extra + 1 > b->cap &&
        gm_vec_grow_(b->mem, (void **)&b->s, &b->cap, b->n + extra + 1, 1)) {
        b->failed = true;
        return false;
    }
    return true;
}

void gm_strbuf_append(gm_strbuf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

void gm_strbuf_puts(gm_strbuf *b, const char *s) { gm_strbuf_append(b, s, strlen(s)); }

void gm_strbuf_putc(gm_strbuf *b, char c) { gm_strbuf_append(b, &c, 1); }

void gm_strbuf_printf(gm_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

void gm_strbuf_escaped(gm_strbuf *b, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        switch (c) {
        case '\n': gm_strbuf_puts(b, "\\n"); break;
        case '\t': gm_strbuf_puts(b, "\\t"); break;
        case '\r': gm_strbuf_puts(b, "\\r"); break;
        case '\\': gm_strbuf_puts(b, "\\\\"); break;
        case '"': gm_strbuf_puts(b, "\\\""); break;
        default:
            if (c < 0x20 || c >= 0x7f)
                gm_strbuf_printf(b, "\\x%02x", c);
            else
                gm_strbuf_putc(b, (char)c);
        }
    }
}

const char *gm_strbuf_str(const gm_strbuf *b) { return b->s ? b->s : ""; }
