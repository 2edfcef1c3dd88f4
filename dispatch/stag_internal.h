/*
 * The structural-tag compiler's state and the helpers its format modules
 * share (stag.c owns them; stag_xml.c writes the XML argument styles of a
 * json_schema format with them). Not a public interface.
 */
#ifndef GM_DISPATCH_STAG_INTERNAL_H
#define GM_DISPATCH_STAG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gramask.h"
#include "base/error.h"
#include "base/hash.h"
#include "base/vec.h"
#include "ir/ebnf.h"
#include "schema/json.h"

enum { MAX_DEPTH = 64, MAX_SPECIAL = 256 };

typedef struct stag {
    gm_mem *mem;
    gm_ebnf *g;
    gm_jdoc doc;
    const char *name;
    const struct gm_stag_options *opts; /* dispatch/stag.h (not included: stag.c includes
                                           this file, so the header stays below it) */
    gm_limits limits;
    gm_error *err;
    gm_status status;         /* the first error */
    const char *special[MAX_SPECIAL];
    size_t special_len[MAX_SPECIAL];
    size_t nspecial;
    uint32_t imports;         /* grammars imported so far (their rule prefixes) */
    uint32_t depth;
    uint32_t any_byte;        /* one byte, any: GM_EX_NONE until first needed */
    uint32_t any_char;        /* one character (code point), any: GM_EX_NONE until needed */
    uint32_t until_flags;     /* of every free text: 0 (valid UTF-8) or GM_UNTIL_BYTES */
    char ptr[512];            /* JSON pointer of the value being compiled */
    size_t ptr_len;
    /* note [format recursion]: the formats of stag.c that the format modules build
       on (stag_xml.c's values are JSON, its strings free text), set by stag.c; a
       module calls them through here, so stag.c -> stag_xml.c -> stag_base.c one way */
    uint32_t (*text)(struct stag *c, const char *s, size_t n);
    uint32_t (*free_text)(struct stag *c, const uint32_t *ids, size_t n, uint32_t max_chars);
    uint32_t (*json_schema_text)(struct stag *c, const char *json, size_t len,
                                 const gm_schema_options *so);
    const char *json_exclude; /* text the free strings of that JSON avoid (an XML value's
                                 closing tag, note [xml styles]), or NULL */
    const char *json_exclude2; /* and another (Kimi K3's block markers), or NULL */
    bool unshared;            /* gm_stag_options.unshared */
    gm_intern schemas;        /* json_schema_text's keys (options, exclusion, text) ... */
    GM_VEC(uint32_t) schema_nodes; /* ... and the node each compiled to (stag.c) */
    /* and those stag_token.c builds on: a format; a tag's content and end after begin */
    uint32_t (*format)(struct stag *c, const gm_jv *v);
    uint32_t (*tag_after)(struct stag *c, const gm_jv *v, uint32_t begin);
    const gm_jv *end_token;   /* the end of the innermost enclosing tag when it is a token
                                 format, else NULL (note [token formats] in stag_token.c) */
} stag;

/* stag_base.c: the first error, with the current JSON pointer; returns GM_EX_NONE. */
uint32_t gm_stag_fail(stag *c, const gm_jv *at, gm_status code, const char *fmt, ...)
    GM_PRINTF(4, 5);
uint32_t gm_stag_nomem(stag *c);
/* Appends "/key" (or "/i") to the pointer; gm_stag_pop goes back to the mark. */
size_t gm_stag_push_key(stag *c, const char *key);
size_t gm_stag_push_index(stag *c, uint32_t i);
void gm_stag_pop(stag *c, size_t mark);
/* Text with the document's special tokens as tokens (EMPTY for n = 0). */
static inline uint32_t gm_stag_text(stag *c, const char *s, size_t n)
{
    return c->text(c, s, n);
}
/* Free text containing none of the BYTES nodes ids[0..n) (note [until]). */
static inline uint32_t gm_stag_free_text(stag *c, const uint32_t *ids, size_t n)
{
    return c->free_text(c, ids, n, GM_EX_INF);
}
/* The same, at most max_chars characters (free text in UTF-8 mode only: c->until_flags). */
static inline uint32_t gm_stag_free_text_max(stag *c, const uint32_t *ids, size_t n,
                                             uint32_t max_chars)
{
    return c->free_text(c, ids, n, max_chars);
}
/* The JSON Schema json[0..len) as JSON text under the format's options. */
static inline uint32_t gm_stag_json_schema_text(stag *c, const char *json, size_t len,
                                                const gm_schema_options *so)
{
    return c->json_schema_text(c, json, len, so);
}

/* stag_shape.c: whether the format v of type t has its required fields (note [format
   shapes]); fails with XGrammar's wording if not. */
bool gm_stag_shape(stag *c, const gm_jv *v, const char *t);

/* stag_xml.c: the json_schema format v with an XML argument style (note [xml styles]). */
uint32_t gm_stag_xml_schema(stag *c, const gm_jv *v, const gm_jv *schema, const char *style,
                            const gm_schema_options *so);
/* Whether style names one of those styles. */
bool gm_stag_xml_style_known(const char *style);

/* stag_token.c: the token-level formats (note [token formats]). */
/* An integer token id at t; fails with XGrammar's wording if t is not one. */
bool gm_stag_token_id(stag *c, const gm_jv *t, uint32_t *id);
/* Whether type is exclude_token, any_tokens, token_triggered_tags or token_dispatch. */
bool gm_stag_token_level(const char *type);
/* The format v of such a type. */
uint32_t gm_stag_token_format(stag *c, const gm_jv *v, const char *type);

#endif
