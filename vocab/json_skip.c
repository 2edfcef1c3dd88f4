/*
 * Finding where a member's value lies in JSON text without parsing it.
 *
 * note [skipping merges]
 * model.merges is most of a BPE file (60-80%) and means nothing to a
 * vocabulary. Before handing the text to jansson we look for the member
 * "merges" inside "model" with a small structural scanner and give jansson
 * a copy of the text with that value replaced by []. The scanner only
 * decides where the value starts and ends (strings with escapes, nesting);
 * anything it does not understand makes it give up, and the whole text is
 * parsed as it is. So the merges value is not validated beyond that.
 */
#include "vocab/json_skip.h"

#include <string.h>

typedef struct scan {
    const char *s;
    size_t n, i;
} scan;

static void skip_ws(scan *S)
{
    while (S->i < S->n && (S->s[S->i] == ' ' || S->s[S->i] == '\n' || S->s[S->i] == '\r' ||
                           S->s[S->i] == '\t'))
        S->i++;
}

/*
 * Skips a string starting at its quote; false when it does not end. (Locals,
 * not S->i: char reads may alias the struct and would defeat registers.)
 */
static bool skip_string(scan *S)
{
    const char *s = S->s;
    size_t i = S->i, n = S->n;
    if (i >= n || s[i] != '"')
        return false;
    for (i++; i < n;) {
        const char *q = memchr(s + i, '"', n - i);
        if (!q)
            return false;
        size_t j = (size_t)(q - s), bs = 0;
        while (j - bs > i && s[j - bs - 1] == '\\')
            bs++;
        i = j + 1;
        if (bs % 2 == 0) { /* not escaped */
            S->i = i;
            return true;
        }
    }
    return false;
}

/* Characters that matter inside arrays and objects: 1 quote, 2 open, 3 close. */
static const unsigned char structural[256] = {
    ['"'] = 1, ['['] = 2, ['{'] = 2, [']'] = 3, ['}'] = 3,
};

/* Skips any value (no validation of scalars beyond their extent). */
static bool skip_value(scan *S)
{
    skip_ws(S);
    const char *s = S->s;
    size_t i = S->i, n = S->n;
    if (i >= n)
        return false;
    if (s[i] == '"')
        return skip_string(S);
    if (s[i] == '{' || s[i] == '[') {
        size_t depth = 0;
        while (i < n) {
            unsigned char k = structural[(unsigned char)s[i]];
            if (k == 0) {
                i++;
            } else if (k == 1) {
                S->i = i;
                if (!skip_string(S))
                    return false;
                i = S->i;
            } else if (k == 2) {
                depth++;
                i++;
            } else {
                i++;
                if (--depth == 0) {
                    S->i = i;
                    return true;
                }
            }
        }
        return false;
    }
    size_t start = i;
    while (i < n && !strchr(",}] \n\r\t", s[i]))
        i++;
    S->i = i;
    return i > start;
}

/*
 * In object at S->i, finds member `key` (exact spelling, no escapes) and
 * leaves S->i at the start of its value; false if absent or not understood.
 */
static bool find_member(scan *S, const char *key)
{
    size_t klen = strlen(key);
    skip_ws(S);
    if (S->i >= S->n || S->s[S->i] != '{')
        return false;
    S->i++;
    for (;;) {
        skip_ws(S);
        size_t k0 = S->i;
        if (!skip_string(S))
            return false;
        bool match = S->i - k0 == klen + 2 && !memcmp(S->s + k0 + 1, key, klen);
        skip_ws(S);
        if (S->i >= S->n || S->s[S->i] != ':')
            return false;
        S->i++;
        skip_ws(S);
        if (match)
            return true;
        if (!skip_value(S))
            return false;
        skip_ws(S);
        if (S->i >= S->n || S->s[S->i] != ',')
            return false;
        S->i++;
    }
}

bool gm_json_member_span(const char *text, size_t len, const char *const *path, size_t depth,
                         size_t *begin, size_t *end)
{
    scan S = {text, len, 0};
    for (size_t i = 0; i < depth; i++)
        if (!find_member(&S, path[i]))
            return false;
    *begin = S.i;
    if (!skip_value(&S))
        return false;
    *end = S.i;
    return true;
}
