/*
 * A growable text buffer for reports and dumps. Allocation failure is
 * sticky: appends after a failure do nothing and `failed` stays set, so a
 * long report is checked once at the end.
 */
#ifndef GM_BASE_STRBUF_H
#define GM_BASE_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/mem.h"

typedef struct gm_strbuf {
    gm_mem *mem;
    char *s;      /* NUL-terminated when n > 0 */
    size_t n;     /* bytes, without the NUL */
    size_t cap;
    bool failed;  /* an allocation failed */
} gm_strbuf;

void gm_strbuf_init(gm_strbuf *b, gm_mem *m);
void gm_strbuf_free(gm_strbuf *b);
void gm_strbuf_append(gm_strbuf *b, const char *s, size_t n);
void gm_strbuf_puts(gm_strbuf *b, const char *s);
void gm_strbuf_putc(gm_strbuf *b, char c);
void gm_strbuf_printf(gm_strbuf *b, const char *fmt, ...) GM_PRINTF(2, 3);
/* Appends bytes as a C/Python-style escaped string body (no quotes). */
void gm_strbuf_escaped(gm_strbuf *b, const void *bytes, size_t n);
/* The text so far ("" when empty); valid until the next append. */
const char *gm_strbuf_str(const gm_strbuf *b);

#endif
