/* Locating a member's value in JSON text without parsing it (note [skipping merges]). */
#ifndef GM_SPANNER_JSON_SKIP_H
#define GM_SPANNER_JSON_SKIP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Follows path[0..depth) (member names, spelled without escapes) from the
 * top-level object of text and sets [*begin, *end) to the extent of the
 * value found. False when a member is absent or the text is not understood
 * (the caller then parses everything). Reads only text[0..len).
 */
bool gm_json_member_span(const char *text, size_t len, const char *const *path, size_t depth,
                         size_t *begin, size_t *end);

#endif
