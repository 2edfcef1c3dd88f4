/*
 * Filling gm_error values. Every function here accepts err == NULL (the
 * caller did not ask for details) and returns the code it recorded, so a
 * failing path reads `return gm_error_set(err, GM_ERR_SYNTAX, ...);`.
 */
#ifndef GM_BASE_ERROR_H
#define GM_BASE_ERROR_H

#include <stdarg.h>
#include <stdint.h>

#include "gramask.h"

/* A location in an input text (file may be NULL; line/column from 1, 0 = unknown). */
typedef struct gm_srcloc {
    const char *file;
    uint32_t line;
    uint32_t column;
} gm_srcloc;

#if defined(__GNUC__)
#define GM_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GM_PRINTF(a, b)
#endif

gm_status gm_error_set(gm_error *err, gm_status code, const char *fmt, ...) GM_PRINTF(3, 4);
gm_status gm_error_vset(gm_error *err, gm_status code, const char *fmt, va_list ap);

/*
 * Records an error at a location in `text` (the whole input, `len` bytes),
 * as "file:line:column: message", followed by the offending source line and
 * a caret under the column. text may be NULL (no caret line).
 */
gm_status gm_error_set_at(gm_error *err, gm_status code, gm_srcloc loc, const char *text,
                          size_t len, const char *fmt, ...) GM_PRINTF(6, 7);

/* Records an error about a named input (a file): "name: message", err->file = name. */
gm_status gm_error_set_file(gm_error *err, gm_status code, const char *name, const char *fmt, ...)
    GM_PRINTF(4, 5);

/* Prefixes the message already in err with "what: " (context while unwinding). */
void gm_error_prefix(gm_error *err, const char *fmt, ...) GM_PRINTF(2, 3);

/* Line and column (from 1, bytes) of byte offset `off` in text. */
/* *out = *in with every zero field replaced by its default (in may be NULL). */
void gm_limits_resolve(gm_limits *out, const gm_limits *in);

gm_srcloc gm_srcloc_of_offset(const char *file, const char *text, size_t len, size_t off);

#endif
