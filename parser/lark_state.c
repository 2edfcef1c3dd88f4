/* Error reporting of the Lark grammar scanner and parser (first error wins). */
#include "parser/lark_state.h"

#include <stdarg.h>
#include <stdio.h>

gm_status gm_lscan_error(gm_lscan *s, gm_status code, gm_srcloc loc, const char *fmt, ...)
{
    if (s->status != GM_OK)
        return s->status;
    s->status = code;
    if (!s->err)
        return code;
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_error_set_at(s->err, code, loc, s->text, s->len, "%s", msg);
    return code;
}

gm_status gm_lscan_nomem(gm_lscan *s)
{
    if (s->status != GM_OK)
        return s->status;
    s->status = gm_mem_fail(s->arena->mem, s->err, "parsing a grammar");
    return s->status;
}
