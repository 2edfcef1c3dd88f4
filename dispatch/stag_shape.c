/* The shape of a format's fields, checked before it is compiled (note [format shapes]). */
#include <stdio.h>
#include <string.h>

#include "dispatch/stag_internal.h"

/*
 * note [format shapes]
 * A format whose required field is missing or of the wrong JSON type is
 * refused before it is compiled, with XGrammar's wording of the same error
 * (its structural_tag.cc parser: "Tag format must have a content field",
 * "Repeat min must be >= 0", ...) after the JSON pointer of the field, so
 * that an engine written against XGrammar sees the message it expects and
 * a person sees where. Only shapes are checked here; meanings (a trigger
 * that starts no tag, a budget above a limit) stay with the compiler.
 */

/* Fails with msg at the field key of v (at: its value), or, when at is NULL (the field is
   missing), at v with what is missing. */
static bool bad(stag *c, const gm_jv *v, const gm_jv *at, const char *key, const char *msg)
{
    if (!at) {
        gm_stag_fail(c, v, GM_ERR_FORMAT, "%s (missing \"%s\")", msg, key);
        return false;
    }
    size_t mark = gm_stag_push_key(c, key);
    gm_stag_fail(c, at, GM_ERR_FORMAT, "%s", msg);
    gm_stag_pop(c, mark);
    return false;
}

static bool is_str(const gm_jv *v) { return v && v->kind == GM_JV_STRING; }
static bool is_arr(const gm_jv *v) { return v && v->kind == GM_JV_ARRAY; }

/* A string, or {"type": "token", ...} (the token format checks itself). */
static bool is_text_or_token(const gm_jv *v)
{
    return is_str(v) || (v && v->kind == GM_JV_OBJECT);
}

static bool booleans(stag *c, const gm_jv *v)
{
    static const char *const keys[] = {"at_least_one", "stop_after_first"};
    for (int i = 0; i < 2; i++) {
        const gm_jv *b = gm_jv_get(v, keys[i]);
        if (b && b->kind != GM_JV_TRUE && b->kind != GM_JV_FALSE) {
            char msg[64];
            snprintf(msg, sizeof msg, "%s must be a boolean", keys[i]);
            return bad(c, v, b, keys[i], msg);
        }
    }
    return true;
}

/* tags: a non-empty array; what names the format in the messages. */
static bool tag_array(stag *c, const gm_jv *v, const char *what)
{
    const gm_jv *tags = gm_jv_get(v, "tags");
    char msg[128];
    if (!is_arr(tags)) {
        snprintf(msg, sizeof msg, "%s format must have a tags field with an array", what);
        return bad(c, v, tags, "tags", msg);
    }
    if (tags->n == 0) {
        snprintf(msg, sizeof msg, "%s format's tags must be non-empty", what);
        return bad(c, v, tags, "tags", msg);
    }
    return true;
}

/* Whether the format v of type t has the fields XGrammar requires; fails if not. */
bool gm_stag_shape(stag *c, const gm_jv *v, const char *t)
{
    const gm_jv *f;
    if (!strcmp(t, "const_string")) {
        f = gm_jv_get(v, "value");
        if (!f)
            f = gm_jv_get(v, "text");
        if (!is_str(f))
            return bad(c, v, f, gm_jv_get(v, "text") && !gm_jv_get(v, "value") ? "text" : "value",
                       "ConstString format must have a value field with a string");
    } else if (!strcmp(t, "sequence") || !strcmp(t, "or")) {
        const char *what = t[0] == 's' ? "Sequence" : "Or";
        char msg[96];
        f = gm_jv_get(v, "elements");
        if (!is_arr(f)) {
            snprintf(msg, sizeof msg, "%s format must have an elements field with an array",
                     what);
            return bad(c, v, f, "elements", msg);
        }
        if (f->n == 0) {
            snprintf(msg, sizeof msg, "%s format must have at least one element", what);
            return bad(c, v, f, "elements", msg);
        }
    } else if (!strcmp(t, "tag")) {
        f = gm_jv_get(v, "begin");
        if (!is_text_or_token(f))
            return bad(c, v, f, "begin", "Tag format's begin field must be a string");
        if (!gm_jv_get(v, "content"))
            return bad(c, v, NULL, "content", "Tag format must have a content field");
        f = gm_jv_get(v, "end");
        if (f && !is_text_or_token(f) && !is_arr(f))
            return bad(c, v, f, "end",
                       "Tag format's end field must be a string or array of strings");
    } else if (!strcmp(t, "triggered_tags")) {
        f = gm_jv_get(v, "triggers");
        if (!is_arr(f))
            return bad(c, v, f, "triggers",
                       "Triggered tags format must have a triggers field with an array");
        if (f->n == 0)
            return bad(c, v, f, "triggers", "Triggered tags format's triggers must be non-empty");
        for (uint32_t i = 0; i < f->n; i++)
            if (!is_str(f->u.items[i]) || f->u.items[i]->n == 0) {
                size_t mark = gm_stag_push_key(c, "triggers");
                gm_stag_push_index(c, i);
                gm_stag_fail(c, f->u.items[i], GM_ERR_FORMAT,
                             "Triggered tags format's triggers must be non-empty strings");
                gm_stag_pop(c, mark);
                return false;
            }
        return tag_array(c, v, "Triggered tags") && booleans(c, v);
    } else if (!strcmp(t, "tags_with_separator")) {
        if (!tag_array(c, v, "Tags with separator"))
            return false;
        f = gm_jv_get(v, "separator");
        if (!is_str(f))
            return bad(c, v, f, "separator",
                       "Tags with separator format's separator field must be a string");
        return booleans(c, v);
    } else if (!strcmp(t, "repeat")) {
        const gm_jv *mn = gm_jv_get(v, "min"), *mx = gm_jv_get(v, "max");
        if (mn && mn->kind == GM_JV_NUMBER && mn->u.s[0] == '-')
            return bad(c, v, mn, "min", "Repeat min must be >= 0");
        if (mx && mx->kind == GM_JV_NUMBER && mx->u.s[0] == '-' && strcmp(mx->u.s, "-1"))
            return bad(c, v, mx, "max", "Repeat max must be -1 (unbounded) or >= 0");
    }
    return true;
}
