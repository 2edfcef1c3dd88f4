/* gm_error filling, status names, and the few public basics of the library. */
#include "base/error.h"

#include <stdio.h>
#include <string.h>

#include "config.h"

const char *gm_status_name(gm_status status)
{
    switch (status) {
    case GM_OK: return "ok";
    case GM_ERR_NOMEM: return "out of memory";
    case GM_ERR_LIMIT: return "limit exceeded";
    case GM_ERR_SYNTAX: return "syntax error";
    case GM_ERR_GRAMMAR: return "grammar error";
    case GM_ERR_UNSUPPORTED: return "unsupported";
    case GM_ERR_IO: return "i/o error";
    case GM_ERR_FORMAT: return "format error";
    case GM_ERR_ARGUMENT: return "invalid argument";
    case GM_ERR_REJECTED: return "rejected";
    case GM_ERR_STATE: return "invalid state";
    }
    return "unknown status";
}

const char *gm_version(void)
{
    return PACKAGE_VERSION;
}

void gm_limits_init_defaults(gm_limits *limits)
{
    if (!limits)
        return;
    limits->max_memory = (size_t)8 << 30;
    limits->max_dfa_states = 100000;
    limits->max_nfa_states = 1000000;
    limits->max_regex_repeat = 1000;
    limits->max_lr_states = 100000;
    limits->max_input_bytes = 64u << 20;
    limits->max_earley_work = GM_EARLEY_WORK_DEFAULT;
}

void gm_limits_resolve(gm_limits *out, const gm_limits *in)
{
    gm_limits d;
    gm_limits_init_defaults(&d);
    *out = d;
    if (!in)
        return;
    if (in->max_memory)
        out->max_memory = in->max_memory;
    if (in->max_dfa_states)
        out->max_dfa_states = in->max_dfa_states;
    if (in->max_nfa_states)
        out->max_nfa_states = in->max_nfa_states;
    if (in->max_regex_repeat)
        out->max_regex_repeat = in->max_regex_repeat;
    if (in->max_lr_states)
        out->max_lr_states = in->max_lr_states;
    if (in->max_input_bytes)
        out->max_input_bytes = in->max_input_bytes;
    if (in->max_earley_work)
        out->max_earley_work = in->max_earley_work;
}

void gm_error_clear(gm_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

gm_status gm_error_vset(gm_error *err, gm_status code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    gm_error_clear(err);
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    return code;
}

gm_status gm_error_set(gm_error *err, gm_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gm_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

gm_status gm_error_set_file(gm_error *err, gm_status code, const char *name, const char *fmt, ...)
{
    if (!err)
        return code;
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_error_set(err, code, "%s: %s", name, msg);
    snprintf(err->file, sizeof err->file, "%s", name);
    return code;
}

gm_srcloc gm_srcloc_of_offset(const char *file, const char *text, size_t len, size_t off)
{
    gm_srcloc loc = {file, 1, 1};
    if (off > len)
        off = len;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            loc.line++;
            loc.column = 1;
        } else {
            loc.column++;
        }
    }
    return loc;
}

/* Appends the source line `loc.line` of text and a caret under loc.column. */
static void append_caret(char *buf, size_t cap, gm_srcloc loc, const char *text, size_t len)
{
    size_t start = 0;
    uint32_t line = 1;
    while (start < len && line < loc.line) {
        if (text[start++] == '\n')
            line++;
    }
    if (line != loc.line)
        return;
    size_t end = start;
    while (end < len && text[end] != '\n' && text[end] != '\r')
        end++;
    size_t used = strlen(buf);
    if (used + 2 >= cap)
        return;
    int shown = (int)(end - start > 200 ? 200 : end - start);
    used += (size_t)snprintf(buf + used, cap - used, "\n  %.*s\n  ", shown, text + start);
    for (uint32_t c = 1; c < loc.column && used + 2 < cap && c <= (uint32_t)shown; c++)
        buf[used++] = text[start + c - 1] == '\t' ? '\t' : ' ';
    if (used + 2 < cap) {
        buf[used++] = '^';
        buf[used] = '\0';
    }
}

gm_status gm_error_set_at(gm_error *err, gm_status code, gm_srcloc loc, const char *text,
                          size_t len, const char *fmt, ...)
{
    if (!err)
        return code;
    gm_error_clear(err);
    err->code = code;
    err->line = loc.line;
    err->column = loc.column;
    if (loc.file)
        snprintf(err->file, sizeof err->file, "%s", loc.file);
    int n;
    if (loc.line)
        n = snprintf(err->message, sizeof err->message, "%s:%u:%u: ",
                     loc.file ? loc.file : "<input>", loc.line, loc.column);
    else
        n = snprintf(err->message, sizeof err->message, "%s: ", loc.file ? loc.file : "<input>");
    if (n < 0 || (size_t)n >= sizeof err->message)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
    va_end(ap);
    if (text && loc.line)
        append_caret(err->message, sizeof err->message, loc, text, len);
    return code;
}

void gm_error_prefix(gm_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    size_t plen = strlen(prefix);
    if (plen + 2 >= sizeof err->message)
        return;
    size_t mlen = strnlen(err->message, sizeof err->message - 1);
    if (plen + 2 + mlen >= sizeof err->message)
        mlen = sizeof err->message - plen - 3;
    memmove(err->message + plen + 2, err->message, mlen);
    memcpy(err->message, prefix, plen);
    memcpy(err->message + plen, ": ", 2);
    err->message[plen + 2 + mlen] = '\0';
}
