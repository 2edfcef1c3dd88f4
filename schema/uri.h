/*
 * URI references for `$id` and `$ref` (RFC 3986 §5: resolution against a
 * base, dot-segment removal) and JSON Pointer fragments (RFC 6901, with the
 * percent-decoding a URI fragment needs).
 */
#ifndef GM_SCHEMA_URI_H
#define GM_SCHEMA_URI_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "schema/json.h"

/* Resolves ref against the absolute URI base into out (appended). */
void gm_uri_resolve(const char *base, const char *ref, size_t reflen, gm_strbuf *out);

/* The length of uri without its fragment ("#..."). */
size_t gm_uri_strip_fragment(const char *uri, size_t len);

/*
 * Follows a URI fragment that is a JSON pointer ("", "/a/b~1c/%25") from
 * root. Returns the value, or NULL when a step is missing; *bad_escape
 * is set for a malformed ~ or % escape.
 */
const gm_jv *gm_json_pointer(const gm_jv *root, const char *frag, size_t len, bool *bad_escape);

/* Appends key to a JSON pointer being built, escaping ~ and / (RFC 6901). */
void gm_json_pointer_append(gm_strbuf *ptr, const char *key, size_t len);

#endif
