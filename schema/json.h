/*
 * A JSON document reader for schemas (RFC 8259): values in one arena, with
 * what jansson does not keep and a schema compiler needs:
 *   - numbers as their source text, so that bounds, `const` and `enum`
 *     values are exact whatever their size (2^64, 0.1, 1e400);
 *   - object members in source order (the order of `properties` is the
 *     order of the generated grammar);
 *   - the byte offset of every value, so that errors carry line:column and
 *     a caller can slice a value's text out of a larger document (the
 *     MaskBench harness takes the schema of each JSONL line that way).
 * Duplicate keys in one object are an error (a schema meaning would depend
 * on the reader), lone surrogate escapes too (no UTF-8 for them).
 * Nesting deeper than max_depth is GM_ERR_LIMIT (no recursion runs away).
 */
#ifndef GM_SCHEMA_JSON_H
#define GM_SCHEMA_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/mem.h"

typedef enum gm_jv_kind {
    GM_JV_NULL,
    GM_JV_FALSE,
    GM_JV_TRUE,
    GM_JV_NUMBER,
    GM_JV_STRING,
    GM_JV_ARRAY,
    GM_JV_OBJECT,
} gm_jv_kind;

typedef struct gm_jv gm_jv;
typedef struct gm_jmember gm_jmember;

struct gm_jv {
    uint8_t kind;         /* gm_jv_kind */
    uint32_t id;          /* 0, 1, 2, ... in document order: a dense index for tables */
    uint32_t off, end;    /* the value's bytes in the source text: [off, end) */
    uint32_t n;           /* STRING: bytes of s; NUMBER: bytes of the lexeme; ARRAY: items;
                             OBJECT: members */
    union {
        const char *s;          /* STRING: decoded UTF-8 (may hold NUL), NUL-terminated;
                                   NUMBER: the lexeme, NUL-terminated */
        gm_jv **items;          /* ARRAY */
        gm_jmember *members;    /* OBJECT, in source order */
    } u;
};

struct gm_jmember {
    const char *key;      /* decoded UTF-8, NUL-terminated */
    uint32_t klen;
    uint32_t koff;        /* offset of the key's opening quote */
    gm_jv *value;
};

typedef struct gm_jdoc_block gm_jdoc_block;

typedef struct gm_jdoc {
    gm_mem *mem;
    gm_jdoc_block *blocks;  /* the arena */
    gm_jv *root;
    uint32_t nvalues;       /* ids run 0 .. nvalues-1 */
    const char *name;       /* for errors (borrowed) */
    const char *text;       /* the source (borrowed; needed only for error locations) */
    size_t len;
} gm_jdoc;

/*
 * Parses text[0..len) as one JSON value (surrounding whitespace allowed).
 * name labels errors ("schema.json:3:14: ..."). Limits: nesting depth
 * max_depth (0 = 512), len below 4 GiB and limits->max_input_bytes.
 * On failure d holds nothing (gm_jdoc_free is still fine).
 */
gm_status gm_jdoc_parse(gm_jdoc *d, gm_mem *m, const char *name, const char *text, size_t len,
                        uint32_t max_depth, const gm_limits *limits, gm_error *err);
void gm_jdoc_free(gm_jdoc *d);

/* The member value of an object called key (NULL when absent or v is not an object). */
const gm_jv *gm_jv_get(const gm_jv *v, const char *key);

/*
 * The first member of object v whose key is none of allowed[] (NULL-ended),
 * or NULL. Readers of formats with fixed keys call it so that a misspelled
 * or unsupported key is an error naming it, never silently ignored.
 */
const gm_jmember *gm_jv_unknown_key(const gm_jv *v, const char *const *allowed);
const gm_jv *gm_jv_getn(const gm_jv *v, const char *key, size_t klen);

/* Whether a and b are the same JSON value as JSON Schema compares them: numbers
   by mathematical value, objects ignoring member order. */
bool gm_jv_equal(const gm_jv *a, const gm_jv *b);

/* Line:column of a byte offset, for messages. */
gm_srcloc gm_jdoc_loc(const gm_jdoc *d, uint32_t off);

/* Allocates from d's arena (freed with d); NULL when memory ran out. */
void *gm_jdoc_alloc(gm_jdoc *d, size_t n);

#endif
