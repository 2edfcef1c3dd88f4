/*
 * The structural-tag compiler's errors and JSON pointers: the leaves under
 * stag.c and the format modules (stag_shape.c, stag_xml.c), which all report
 * through them.
 */
#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"
#include "dispatch/stag_internal.h"

uint32_t gm_stag_fail(stag *c, const gm_jv *at, gm_status code, const char *fmt, ...)
{
    if (c->status != GM_OK)
        return GM_EX_NONE;
    c->status = code;
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_srcloc loc = at ? gm_jdoc_loc(&c->doc, at->off) : (gm_srcloc){c->name, 0, 0};
    loc.file = c->name;
    gm_error_set_at(c->err, code, loc, c->doc.text, c->doc.len, "structural tag %s: %s",
                    c->ptr_len ? c->ptr : "/", msg);
    return GM_EX_NONE;
}

uint32_t gm_stag_nomem(stag *c)
{
    if (c->status == GM_OK)
        c->status = gm_mem_fail(c->mem, c->err, "a structural tag's grammar");
    return GM_EX_NONE;
}

/* "/key" escaped as RFC 6901 says. */
size_t gm_stag_push_key(stag *c, const char *key)
{
    size_t mark = c->ptr_len;
    char buf[sizeof c->ptr];
    size_t k = 0;
    for (const char *p = key; *p && k + 3 < sizeof buf; p++) {
        if (*p == '~' || *p == '/') {
            buf[k++] = '~';
            buf[k++] = *p == '~' ? '0' : '1';
        } else {
            buf[k++] = *p;
        }
    }
    buf[k] = 0;
    int n = snprintf(c->ptr + c->ptr_len, sizeof c->ptr - c->ptr_len, "/%s", buf);
    if (n > 0)
        c->ptr_len = c->ptr_len + (size_t)n < sizeof c->ptr ? c->ptr_len + (size_t)n
                                                             : sizeof c->ptr - 1;
    return mark;
}

size_t gm_stag_push_index(stag *c, uint32_t i)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%u", i);
    return gm_stag_push_key(c, buf);
}

void gm_stag_pop(stag *c, size_t mark)
{
    c->ptr_len = mark;
    c->ptr[mark] = 0;
}
