/*
 * gramask — grammar-constrained decoding masks for LLM inference.
 *
 * The public C API. One header, cut into sections by object:
 *   1. Basics: status codes, errors, allocation hook, limits, version.
 *
 * Conventions
 * - Every function that can fail returns a gm_status and, when given a
 *   non-NULL gm_error *, fills it with a message (and a source location when
 *   the failure is in an input file). The library never aborts or exits on
 *   bad input.
 * - Objects are opaque handles created by gm_<object>_create() and released
 *   by gm_<object>_destroy(), which accepts NULL.
 * - Options and limits structs are valid when zeroed (zero means "default");
 *   gm_<struct>_init_defaults() fills in the documented defaults.
 */
#ifndef GRAMASK_H
#define GRAMASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GM_API __attribute__((visibility("default")))
#else
#define GM_API
#endif

/* ------------------------------------------------------------------------
 * 1. Basics
 * ------------------------------------------------------------------------ */

typedef enum gm_status {
    GM_OK = 0,
    GM_ERR_NOMEM,       /* an allocation failed */
    GM_ERR_LIMIT,       /* a gm_limits bound (states, memory, length) was hit */
    GM_ERR_SYNTAX,      /* malformed regex or grammar text */
    GM_ERR_GRAMMAR,     /* well-formed grammar that cannot be used (conflicts, undefined symbols) */
    GM_ERR_UNSUPPORTED, /* a construct gramask does not implement (named in the message) */
    GM_ERR_IO,          /* a file could not be read or written */
    GM_ERR_FORMAT,      /* malformed tokenizer, ids or compiled file */
    GM_ERR_ARGUMENT,    /* API misuse: NULL, size mismatch, id out of range */
    GM_ERR_REJECTED,    /* input not allowed by the grammar (token, bytes) */
    GM_ERR_STATE        /* operation not valid in the object's current state */
} gm_status;

/* A short English name for a status code ("ok", "out of memory", ...). Static storage. */
GM_API const char *gm_status_name(gm_status status);

enum { GM_ERROR_MESSAGE_MAX = 1024, GM_ERROR_FILE_MAX = 256 };

/*
 * What went wrong. `message` is a complete sentence and may span several
 * lines (for example a source line and a caret under the offending column).
 * `file`, `line` and `column` locate the error in an input file when known
 * (line and column count from 1; 0 means unknown; columns count bytes).
 */
typedef struct gm_error {
    gm_status code;
    char message[GM_ERROR_MESSAGE_MAX];
    char file[GM_ERROR_FILE_MAX];
    uint32_t line;
    uint32_t column;
} gm_error;

/*
 * Receives a warning (same shape as an error, code GM_OK or the code the
 * problem would have as an error). Called synchronously; `warning` is valid
 * only during the call.
 */
typedef void (*gm_warning_fn)(void *ud, const gm_error *warning);

/* Resets an error to GM_OK with empty fields. */
GM_API void gm_error_clear(gm_error *err);

/*
 * Allocation hook, in the shape of realloc: called with (ud, NULL, n) to
 * allocate, (ud, p, n) to resize, (ud, p, 0) to free (returns NULL).
 * Returning NULL for n > 0 is an allocation failure, which gramask reports
 * as GM_ERR_NOMEM. Must be thread-safe when objects are shared by threads.
 */
typedef void *(*gm_realloc_fn)(void *ud, void *ptr, size_t size);

typedef struct gm_allocator {
    gm_realloc_fn realloc; /* NULL means the C library's realloc/free */
    void *ud;              /* passed to realloc unchanged */
} gm_allocator;

/*
 * Resource limits, enforced with GM_ERR_LIMIT rather than exhausting the
 * machine. Zero fields take the defaults of gm_limits_init_defaults().
 */
typedef struct gm_limits {
    size_t max_memory;        /* bytes one object tree may hold [8 GiB] */
    uint32_t max_dfa_states;  /* states of one DFA (regex or lexer) [100000] */
    uint32_t max_nfa_states;  /* states of one NFA [1000000] */
    uint32_t max_regex_repeat;/* largest m or n in {m,n} [1000] */
    uint32_t max_lr_states;   /* LALR(1) states [100000] */
    uint32_t max_input_bytes; /* size of a grammar or regex text [64 MiB] */
} gm_limits;

GM_API void gm_limits_init_defaults(gm_limits *limits);

/* The library version as "MAJOR.MINOR.PATCH". Static storage. */
GM_API const char *gm_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GRAMASK_H */
