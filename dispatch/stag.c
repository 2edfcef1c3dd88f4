/* Structural tags -> grammar IR (dispatch/stag.h, note [structural tags]). */
#include "dispatch/stag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/utf8.h"
#include "dispatch/ir_import.h"
#include "dispatch/stag_internal.h"
#include "ir/ir_merge.h"
#include "ir/ebnf_parse.h"
#include "earley/engine.h"
#include "parser/bundled.h"
#include "schema/json.h"
#include "schema/schema.h"


/* ---- members ------------------------------------------------------------- */

static const gm_jv *member(const gm_jv *obj, const char *key) { return gm_jv_get(obj, key); }

static bool get_bool(stag *c, const gm_jv *obj, const char *key, bool dflt)
{
    const gm_jv *v = member(obj, key);
    if (!v)
        return dflt;
    if (v->kind != GM_JV_TRUE && v->kind != GM_JV_FALSE) {
        size_t mark = gm_stag_push_key(c, key);
        gm_stag_fail(c, v, GM_ERR_FORMAT, "expected true or false");
        gm_stag_pop(c, mark);
        return dflt;
    }
    return v->kind == GM_JV_TRUE;
}

/* The string member key of obj, or NULL (an error when required or not a string). */
static const gm_jv *get_string(stag *c, const gm_jv *obj, const char *key, bool required)
{
    const gm_jv *v = member(obj, key);
    if (!v) {
        if (required)
            gm_stag_fail(c, obj, GM_ERR_FORMAT, "missing \"%s\"", key);
        return NULL;
    }
    if (v->kind != GM_JV_STRING) {
        size_t mark = gm_stag_push_key(c, key);
        gm_stag_fail(c, v, GM_ERR_FORMAT, "expected a string");
        gm_stag_pop(c, mark);
        return NULL;
    }
    return v;
}

static const gm_jv *get_array(stag *c, const gm_jv *obj, const char *key, bool required)
{
    const gm_jv *v = member(obj, key);
    if (!v) {
        if (required)
            gm_stag_fail(c, obj, GM_ERR_FORMAT, "missing \"%s\"", key);
        return NULL;
    }
    if (v->kind != GM_JV_ARRAY) {
        size_t mark = gm_stag_push_key(c, key);
        gm_stag_fail(c, v, GM_ERR_FORMAT, "expected an array");
        gm_stag_pop(c, mark);
        return NULL;
    }
    return v;
}

/*
 * Fails on the first key of obj outside allowed[] (NULL-ended), naming its
 * pointer: a misspelled or unsupported key is never ignored. what names
 * the object for the message.
 */
static bool known_keys(stag *c, const gm_jv *obj, const char *what, const char *const *allowed)
{
    /* the document's root also holds the options of the whole structural tag */
    const char *with_root[24];
    size_t k = 0;
    for (const char *const *a = allowed; *a && k + 4 < sizeof with_root / sizeof *with_root; a++)
        with_root[k++] = *a;
    if (obj == c->doc.root) {
        with_root[k++] = "special_tokens";
        with_root[k++] = "special_token_candidates";
        with_root[k++] = "free_text";
    }
    with_root[k] = NULL;
    const gm_jmember *m = gm_jv_unknown_key(obj, with_root);
    if (!m || c->status != GM_OK)
        return c->status == GM_OK;
    char list[256];
    size_t n = 0;
    list[0] = 0;
    for (const char *const *a = with_root; *a && n < sizeof list; a++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s\"%s\"", n ? ", " : "", *a);
    size_t mark = gm_stag_push_key(c, m->key);
    gm_stag_fail(c, m->value, GM_ERR_FORMAT, "unknown key \"%s\" in %s (it takes %s)", m->key, what,
         list);
    gm_stag_pop(c, mark);
    return false;
}

/*
 * The member key of obj as a count: absent or null gives dflt; otherwise a
 * non-negative integer, at most max (GM_ERR_LIMIT beyond). *ok false on error.
 */
static uint32_t get_count(stag *c, const gm_jv *obj, const char *key, uint32_t dflt,
                          uint32_t max, bool *ok)
{
    const gm_jv *v = member(obj, key);
    if (!v || v->kind == GM_JV_NULL)
        return dflt;
    size_t mark = gm_stag_push_key(c, key);
    uint64_t x = 0;
    bool digits = v->kind == GM_JV_NUMBER && v->n > 0 && v->n <= 19;
    for (uint32_t i = 0; digits && i < v->n; i++) {
        digits = v->u.s[i] >= '0' && v->u.s[i] <= '9';
        x = x * 10 + (uint64_t)(v->u.s[i] - '0');
    }
    if (!digits)
        gm_stag_fail(c, v, GM_ERR_FORMAT, "expected a non-negative integer");
    else if (x > max)
        gm_stag_fail(c, v, GM_ERR_LIMIT, "%llu is above gramask's limit of %u", (unsigned long long)x,
             max);
    gm_stag_pop(c, mark);
    if (c->status != GM_OK)
        *ok = false;
    return c->status == GM_OK ? (uint32_t)x : dflt;
}

/* Whether s[0..n) is valid UTF-8. */
static bool valid_utf8(const char *s, size_t n)
{
    unsigned st = GM_UTF8_START;
    for (size_t i = 0; i < n && st != GM_UTF8_DEAD; i++)
        st = gm_utf8_step(st, (uint8_t)s[i]);
    return st == GM_UTF8_START;
}

/* ---- text with special tokens --------------------------------------------- */

/* The longest special token at s[0..n), or SIZE_MAX. */
static size_t special_at(const stag *c, const char *s, size_t n)
{
    size_t best = SIZE_MAX, best_len = 0;
    for (size_t k = 0; k < c->nspecial; k++)
        if (c->special_len[k] <= n && c->special_len[k] > best_len &&
            !memcmp(s, c->special[k], c->special_len[k])) {
            best = k;
            best_len = c->special_len[k];
        }
    return best;
}

/* Whether s[0..n) holds a special token. */
static bool has_special(const stag *c, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (special_at(c, s + i, n - i) != SIZE_MAX)
            return true;
    return false;
}

/* Whether s[0..n) is one special token's text. */
static bool is_special(const stag *c, const char *s, size_t n)
{
    size_t k = special_at(c, s, n);
    return k != SIZE_MAX && c->special_len[k] == n;
}

/* s[0..n) as a sequence of literal bytes and special tokens (EMPTY when n is 0). */
static uint32_t text_node(stag *c, const char *s, size_t n)
{
    uint32_t parts[64];
    size_t np = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        size_t k = i < n ? special_at(c, s + i, n - i) : SIZE_MAX;
        if (i < n && k == SIZE_MAX)
            continue;
        if (np + 2 > sizeof parts / sizeof *parts)
            return gm_stag_fail(c, NULL, GM_ERR_LIMIT, "a string with more than 30 special tokens");
        if (i > start && (parts[np++] = gm_ebnf_add_bytes(c->g, s + start, i - start)) ==
                             GM_EX_NONE)
            return gm_stag_nomem(c);
        if (i == n)
            break;
        if ((parts[np++] = gm_ebnf_add_token(c->g, c->special[k], c->special_len[k])) ==
            GM_EX_NONE)
            return gm_stag_nomem(c);
        i += c->special_len[k] - 1;
        start = i + 1;
    }
    uint32_t node = gm_ebnf_add_seq(c->g, parts, np);
    return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
}

static uint32_t string_member(stag *c, const gm_jv *obj, const char *key, bool required)
{
    const gm_jv *v = get_string(c, obj, key, required);
    if (!v)
        return required || c->status != GM_OK ? GM_EX_NONE : text_node(c, "", 0);
    return text_node(c, v->u.s, v->n);
}

/*
 * Free text with no stop strings, at most max characters (GM_EX_INF: any
 * number): valid UTF-8 (note [until]), or any bytes where the structural
 * tag opts out (then max is GM_EX_INF). One shared character node.
 */
static uint32_t any_text(stag *c, uint32_t max)
{
    uint32_t *one = c->until_flags & GM_UNTIL_BYTES ? &c->any_byte : &c->any_char;
    if (*one == GM_EX_NONE) {
        if (c->until_flags & GM_UNTIL_BYTES) {
            uint32_t all[8];
            memset(all, 0xff, sizeof all);
            *one = gm_ebnf_add_byteset(c->g, all);
        } else {
            gm_cpset set = {0};
            if (gm_cpset_add_range(c->mem, &set, 0, 0x10ffff))
                return gm_stag_nomem(c);
            *one = gm_ebnf_add_set(c->g, &set);
        }
        if (*one == GM_EX_NONE)
            return gm_stag_nomem(c);
    }
    uint32_t n = gm_ebnf_add_repeat(c->g, *one, 0, max);
    return n == GM_EX_NONE ? gm_stag_nomem(c) : n;
}

/*
 * Free text as note [until] defines it over the strings ids[0..n) (BYTES
 * nodes): up to the first occurrence of ids[which], or containing none of
 * them (which = GM_EX_NONE; any text when n is 0); its text at most
 * max_chars characters (GM_EX_INF: any number).
 */
static uint32_t until_max(stag *c, const uint32_t *ids, size_t n, uint32_t which,
                          uint32_t max_chars)
{
    if (n == 0)
        return any_text(c, max_chars);
    uint32_t u = gm_ebnf_add_until(c->g, ids, n, which, c->until_flags, max_chars);
    return u == GM_EX_NONE ? gm_stag_nomem(c) : u;
}

/*
 * Free text up to and including the end ids[i] (text ends[i]), where ids[nends..n)
 * are excluded strings. An excluded string that is a proper prefix of the end
 * (Kimi K3's "<|close|>" before "<|close|>think<|sep|>") is excluded from the
 * text, not from the end: the text stops at it, and the rest of the end follows.
 */
static uint32_t until_end(stag *c, const uint32_t *ids, size_t n, size_t nends, size_t i,
                          const gm_jv *end, uint32_t max_chars)
{
    size_t best = SIZE_MAX;
    for (size_t k = nends; k < n; k++) {
        const gm_ex *x = &c->g->nodes[ids[k]];
        if (x->count < end->n && !memcmp(c->g->bytes + x->first, end->u.s, x->count) &&
            (best == SIZE_MAX || x->count < c->g->nodes[ids[best]].count))
            best = k;
    }
    if (best == SIZE_MAX)
        return until_max(c, ids, n, (uint32_t)i, max_chars);
    uint32_t len = c->g->nodes[ids[best]].count;
    uint32_t parts[2] = {until_max(c, ids, n, (uint32_t)best, max_chars),
                         gm_ebnf_add_bytes(c->g, end->u.s + len, end->n - len)};
    if (parts[0] == GM_EX_NONE)
        return GM_EX_NONE;
    uint32_t node = parts[1] == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_seq(c->g, parts, 2);
    return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
}

static uint32_t until(stag *c, const uint32_t *ids, size_t n, uint32_t which)
{
    return until_max(c, ids, n, which, GM_EX_INF);
}

/*
 * note [special texts in free text]
 * A special token's text is never free text: where a document names special
 * tokens (its "special_tokens", the options' list, the special_token_candidates
 * a vocabulary resolved), every free text (any_text, the text of triggered_tags
 * and dispatch, an XML parameter's raw value) also excludes their texts. The
 * token itself is never free text anyway (the engine reads free text from the
 * vocabulary trie, which holds no special token); excluding the text refuses it
 * spelled by ordinary tokens, and a non-special added token of that text
 * (Qwen3's <tool_call>, DeepSeek's <｜tool▁calls▁begin｜>), which the trie holds as
 * ordinary bytes. So a delimiter that is a token of the vocabulary is produced
 * only as that token, where the format puts it.
 */
/* Appends the texts of the special tokens that ids[0..*n) lack (BYTES nodes). */
static bool add_special_texts(stag *c, uint32_t *ids, size_t *n, size_t cap)
{
    for (size_t k = 0; k < c->nspecial; k++) {
        bool have = false;
        for (size_t i = 0; i < *n && !have; i++) {
            const gm_ex *x = &c->g->nodes[ids[i]];
            have = x->kind == GM_EX_BYTES && x->count == c->special_len[k] &&
                   !memcmp(c->g->bytes + x->first, c->special[k], x->count);
        }
        if (have)
            continue;
        if (*n == cap) {
            gm_stag_fail(c, NULL, GM_ERR_LIMIT, "more than %zu excluded strings, triggers and "
                         "special tokens", cap);
            return false;
        }
        if ((ids[(*n)++] = gm_ebnf_add_bytes(c->g, c->special[k], c->special_len[k])) ==
            GM_EX_NONE) {
            gm_stag_nomem(c);
            return false;
        }
    }
    return true;
}

/* until() for the format modules (stag_internal.h, note [format recursion]), with the
   special texts excluded too (note [special texts in free text]). */
static uint32_t free_text_of(stag *c, const uint32_t *ids, size_t n, uint32_t max_chars)
{
    if (!c->nspecial)
        return until_max(c, ids, n, GM_EX_NONE, max_chars);
    uint32_t *all = gm_mem_reallocarray(c->mem, NULL, n + c->nspecial, sizeof *all);
    if (!all)
        return gm_stag_nomem(c);
    if (n)
        memcpy(all, ids, n * sizeof *all);
    size_t na = n;
    uint32_t node = add_special_texts(c, all, &na, n + c->nspecial)
                        ? until_max(c, all, na, GM_EX_NONE, max_chars) : GM_EX_NONE;
    gm_mem_free(c->mem, all);
    return node;
}

/*
 * Appends the excluded strings of obj (text only) to ids; returns false on
 * error. XGrammar names them "excludes"; "excluded_str" is gramask's older
 * name for the same list.
 */
static bool excluded(stag *c, const gm_jv *obj, uint32_t *ids, size_t *n, size_t cap)
{
    const char *key = member(obj, "excludes") ? "excludes" : "excluded_str";
    if (member(obj, "excludes") && member(obj, "excluded_str")) {
        size_t mark = gm_stag_push_key(c, "excluded_str");
        gm_stag_fail(c, member(obj, "excluded_str"), GM_ERR_FORMAT,
             "\"excludes\" and \"excluded_str\" are the same list: give one");
        gm_stag_pop(c, mark);
        return false;
    }
    const gm_jv *arr = get_array(c, obj, key, false);
    if (!arr)
        return c->status == GM_OK && add_special_texts(c, ids, n, cap);
    size_t mark = gm_stag_push_key(c, key);
    for (uint32_t i = 0; i < arr->n; i++) {
        const gm_jv *s = arr->u.items[i];
        size_t m2 = gm_stag_push_index(c, i);
        if (s->kind != GM_JV_STRING || s->n == 0)
            gm_stag_fail(c, s, GM_ERR_FORMAT, "expected a non-empty string");
        else if (has_special(c, s->u.s, s->n) && !is_special(c, s->u.s, s->n))
            gm_stag_fail(c, s, GM_ERR_UNSUPPORTED, "an excluded string cannot hold a special token "
                                           "with other text (free text never holds one: note "
                                           "[special texts in free text])");
        else if (*n == cap)
            gm_stag_fail(c, s, GM_ERR_LIMIT, "more than %zu excluded strings and triggers", cap);
        else if ((ids[(*n)++] = gm_ebnf_add_bytes(c->g, s->u.s, s->n)) == GM_EX_NONE)
            gm_stag_nomem(c);
        gm_stag_pop(c, m2);
        if (c->status != GM_OK)
            break;
    }
    gm_stag_pop(c, mark);
    return c->status == GM_OK && add_special_texts(c, ids, n, cap);
}

static const char *const any_text_keys[] = {"type", "excludes", "excluded_str", "max_chars",
                                            "max_tokens", NULL};

/*
 * The budgets of the any_text v: *max_chars its most characters (GM_EX_INF:
 * any number); *max_tokens its most tokens (GM_EX_INF: any number; 0 makes
 * it empty, more makes it a region the matcher counts, note [token budgets]
 * in ir/ebnf.h).
 */
static bool text_budget(stag *c, const gm_jv *v, uint32_t *max_chars, uint32_t *max_tokens)
{
    static const char *const budgets[] = {"max_chars", "max_tokens"};
    for (int i = 0; i < 2; i++) { /* XGrammar's range and wording */
        const gm_jv *b = member(v, budgets[i]);
        bool int32 = !b || b->kind == GM_JV_NULL ||
                     (b->kind == GM_JV_NUMBER && b->n <= 10 && b->u.s[0] != '-' &&
                      strspn(b->u.s, "0123456789") == b->n && strtoull(b->u.s, NULL, 10) <= INT32_MAX);
        if (!int32) {
            size_t mark = gm_stag_push_key(c, budgets[i]);
            gm_stag_fail(c, b, GM_ERR_FORMAT, "%s must be a non-negative 32-bit integer", budgets[i]);
            gm_stag_pop(c, mark);
            return false;
        }
    }
    bool ok = true;
    *max_chars = get_count(c, v, "max_chars", GM_EX_INF, GM_EBNF_MAX_REPEAT, &ok);
    *max_tokens = get_count(c, v, "max_tokens", GM_EX_INF, INT32_MAX, &ok);
    if (!ok)
        return false;
    if (*max_chars != GM_EX_INF && (c->until_flags & GM_UNTIL_BYTES)) {
        size_t mark = gm_stag_push_key(c, "max_chars");
        gm_stag_fail(c, member(v, "max_chars"), GM_ERR_FORMAT, "max_chars counts characters, and the "
             "free text here is bytes (\"free_text\": \"bytes\")");
        gm_stag_pop(c, mark);
        return false;
    }
    return true;
}

/*
 * A region of at most max_tokens tokens (note [token budgets]) around the
 * free text node `body` (an UNTIL or a repetition of one character): a
 * fresh rule of its own, never inlined, so that its Earley items name
 * where it began. Returns REF(rule), or body itself when there is no budget.
 */
static uint32_t budget_region(stag *c, uint32_t body, uint32_t max_tokens)
{
    if (body == GM_EX_NONE || max_tokens == GM_EX_INF)
        return body;
    uint32_t r = gm_ebnf_fresh_rule(c->g, "any_text");
    uint32_t ref = r == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_ref(c->g, r);
    if (ref == GM_EX_NONE)
        return gm_stag_nomem(c);
    c->g->rules[r].body = body;
    c->g->rules[r].noinline = 1;
    c->g->rules[r].max_tokens = max_tokens;
    return ref;
}

/* ---- formats ------------------------------------------------------------- */

static uint32_t format(stag *c, const gm_jv *v);

static uint32_t seq3(stag *c, uint32_t a, uint32_t b, uint32_t d)
{
    if (a == GM_EX_NONE || b == GM_EX_NONE || d == GM_EX_NONE)
        return GM_EX_NONE;
    uint32_t ids[3] = {a, b, d};
    uint32_t n = gm_ebnf_add_seq(c->g, ids, 3);
    return n == GM_EX_NONE ? gm_stag_nomem(c) : n;
}

/* The elements of an array member, each a format, into a SEQ or an ALT. */
static uint32_t elements(stag *c, const gm_jv *v, bool alternatives)
{
    const gm_jv *arr = get_array(c, v, "elements", true);
    if (!arr)
        return GM_EX_NONE;
    size_t mark = gm_stag_push_key(c, "elements");
    if (arr->n == 0) {
        gm_stag_fail(c, arr, GM_ERR_FORMAT, "expected at least one element");
        gm_stag_pop(c, mark);
        return GM_EX_NONE;
    }
    uint32_t *ids = gm_mem_reallocarray(c->mem, NULL, arr->n, sizeof *ids);
    if (!ids)
        return gm_stag_nomem(c);
    uint32_t node = GM_EX_NONE;
    for (uint32_t i = 0; i < arr->n; i++) {
        size_t m2 = gm_stag_push_index(c, i);
        ids[i] = format(c, arr->u.items[i]);
        gm_stag_pop(c, m2);
        if (ids[i] == GM_EX_NONE)
            goto out;
    }
    node = alternatives ? gm_ebnf_add_alt(c->g, ids, arr->n) : gm_ebnf_add_seq(c->g, ids, arr->n);
    if (node == GM_EX_NONE)
        gm_stag_nomem(c);
out:
    gm_mem_free(c->mem, ids);
    gm_stag_pop(c, mark);
    return node;
}

/* A grammar built on its own (sub), added to ours under a fresh prefix. */
static uint32_t import(stag *c, const gm_ebnf *sub, char kind)
{
    char prefix[24];
    snprintf(prefix, sizeof prefix, "%c%u_", kind, c->imports++);
    uint32_t node;
    gm_status st = gm_ebnf_import(c->g, sub, prefix, &node, c->err);
    if (st != GM_OK) {
        c->status = st;
        return GM_EX_NONE;
    }
    return node;
}

/*
 * Whether the text s[0..n) begins with the ASCII character w, holds it nowhere
 * else, nor a quote, a backslash or a control character: what the free strings
 * of a JSON value can avoid together (schema/exclude.c note [excluded texts]).
 */
static bool json_avoidable(const char *s, size_t n, char w)
{
    if (n < 2 || s[0] != w || (unsigned char)w >= 0x80)
        return false;
    for (size_t i = 1; i < n; i++)
        if (s[i] == w || s[i] == '"' || s[i] == '\\' || (unsigned char)s[i] < 0x20)
            return false;
    return true;
}

static uint32_t schema_compile(stag *c, const char *json, size_t len,
                               const gm_schema_options *so);

/*
 * note [schema memo]
 * Tools share argument shapes: XML argument styles compile a JSON Schema
 * per typed parameter ({"type": "integer"}, an array of strings, ...), and
 * a family's tools repeat them. One compile per distinct (options, excluded
 * text, schema text) in a structural tag: a repeat reuses the rule the
 * first imported. The language is the same, the grammar has fewer rules
 * (gm_ebnf_merge_rules would have merged the copies after paying for
 * them). Options are compared as bytes: a difference that does not matter
 * only costs a compile. Not with a warning callback: each use reports its
 * relaxations.
 */
static uint32_t schema_text(stag *c, const char *json, size_t len, const gm_schema_options *so)
{
    if (so->warn || c->unshared)
        return schema_compile(c, json, len, so);
    /* the excluded texts, each with its NUL (the special texts are the document's:
       the same for every schema of it) */
    size_t xl = c->json_exclude ? strlen(c->json_exclude) + 1 : 0;
    size_t xl2 = c->json_exclude2 ? strlen(c->json_exclude2) + 1 : 0;
    size_t kl = sizeof *so + 2 + xl + xl2 + len;
    char *key = gm_mem_alloc(c->mem, kl);
    if (!key)
        return gm_stag_nomem(c);
    char *k = key;
    memcpy(k, so, sizeof *so);
    k += sizeof *so;
    *k++ = xl ? 1 : 0;
    if (xl)
        memcpy(k, c->json_exclude, xl), k += xl;
    *k++ = xl2 ? 1 : 0;
    if (xl2)
        memcpy(k, c->json_exclude2, xl2), k += xl2;
    memcpy(k, json, len);
    uint32_t id = gm_intern_find(&c->schemas, key, kl), node = GM_EX_NONE;
    if (id != UINT32_MAX) {
        node = c->schema_nodes.v[id];
    } else if ((node = schema_compile(c, json, len, so)) != GM_EX_NONE) {
        int added;
        if (gm_intern_put(&c->schemas, key, kl, &id, &added) ||
            gm_vec_push(c->mem, &c->schema_nodes, node))
            node = gm_stag_nomem(c);
    }
    gm_mem_free(c->mem, key);
    return node;
}

/*
 * The JSON Schema json[0..len) as JSON under so, imported as one rule. Its free
 * strings avoid the closing tag of the XML value around it (c->json_exclude) and
 * the special tokens' texts (note [special texts in free text]) where they can
 * all be avoided together: texts that begin with that tag's first character
 * ('<': every preset's tags and tokens) and hold it nowhere else. A special
 * token's text that cannot is left out of the strings' exclusion (not of free
 * text's): the token itself is still refused there when the vocabulary marks it
 * special (the engine never reads one as text).
 */
static uint32_t schema_compile(stag *c, const char *json, size_t len,
                               const gm_schema_options *so)
{
    gm_ebnf sub;
    gm_ebnf_init(&sub, c->mem);
    const char *list[MAX_SPECIAL + 2];
    size_t n = 0;
    const char *x = c->json_exclude;
    char w = x ? x[0] : c->nspecial ? c->special[0][0] : 0;
    if (x)
        list[n++] = x;
    if (c->json_exclude2)
        list[n++] = c->json_exclude2;
    if (!x || json_avoidable(x, strlen(x), w))
        for (size_t k = 0; k < c->nspecial; k++)
            if (json_avoidable(c->special[k], c->special_len[k], w) &&
                !memchr(c->special[k], 0, c->special_len[k]))
                list[n++] = c->special[k];
    gm_status st = n > 1 ? gm_schema_compile_excluding_all(c->mem, c->name, json, len, so, list,
                                                           n, &sub, c->err)
                         : gm_schema_compile_excluding(c->mem, c->name, json, len, so,
                                                       n ? list[0] : NULL, &sub, c->err);
    uint32_t node = GM_EX_NONE;
    if (st == GM_OK) {
        node = import(c, &sub, 's');
        /* A schema's root is never inlined into the structure around it: each tool's
           arguments stay an automaton of their own, so a grammar cache rebuilds only the
           tools that changed, and the dispatch automaton does not grow with every tool
           (small schemas would otherwise be inlined, all of them into one automaton). */
        if (node != GM_EX_NONE)
            c->g->rules[c->g->nodes[node].arg].noinline = 1;
    } else {
        c->status = st;
        gm_error_prefix(c->err, "structural tag %s/json_schema", c->ptr_len ? c->ptr : "");
    }
    gm_ebnf_free(&sub);
    return node;
}

/* json_schema {json_schema, style?, any_order?, max_whitespace_cnt?}; qwen_xml_parameter
   {json_schema} is the same with style "qwen_xml" (XGrammar's older name). */
static uint32_t json_schema(stag *c, const gm_jv *v, const char *fixed_style)
{
    const gm_jv *s = member(v, "json_schema");
    if (!s && !fixed_style)
        s = member(v, "schema"); /* the first version's structures */
    if (!s || (s->kind != GM_JV_OBJECT && s->kind != GM_JV_TRUE && s->kind != GM_JV_FALSE))
        return gm_stag_fail(c, s ? s : v, GM_ERR_FORMAT, "expected a JSON Schema (an object or a boolean)"
                    " in \"json_schema\" (JSON schema format must have a json_schema field "
                    "with a object or boolean value)");
    /* XGrammar's options of the content (the first version's structures have none) */
    gm_schema_options so = c->opts->schema;
    const char *style = fixed_style;
    const gm_jv *stv = member(v, "style");
    if (!fixed_style && stv && member(v, "json_schema")) {
        if (stv->kind != GM_JV_STRING || (strcmp(stv->u.s, "json") &&
                                          !gm_stag_xml_style_known(stv->u.s))) {
            size_t mark = gm_stag_push_key(c, "style");
            gm_stag_fail(c, stv, GM_ERR_FORMAT, "style must be \"json\", \"qwen_xml\", "
                 "\"minimax_xml\", \"deepseek_xml\", \"glm_xml\", \"cohere_xml\", or "
                 "\"kimi_k3_xml\"");
            gm_stag_pop(c, mark);
        } else if (strcmp(stv->u.s, "json")) {
            style = stv->u.s;
        }
    }
    if (member(v, "json_schema") && !fixed_style) {
        so.any_order = get_bool(c, v, "any_order", so.any_order);
        bool ok = true;
        uint32_t ws = get_count(c, v, "max_whitespace_cnt", GM_EX_INF, 1u << 20, &ok);
        if (ok && ws != GM_EX_INF) {
            so.whitespace = GM_SCHEMA_WS_FLEXIBLE;
            so.max_ws_run = ws;
        }
    }
    if (c->status != GM_OK)
        return GM_EX_NONE;
    if (style) {
        size_t mark = gm_stag_push_key(c, "json_schema");
        uint32_t node = gm_stag_xml_schema(c, v, s, style, &so);
        gm_stag_pop(c, mark);
        return node;
    }
    return schema_text(c, c->doc.text + s->off, s->end - s->off, &so);
}

static uint32_t grammar(stag *c, const gm_jv *v)
{
    const gm_jv *text = get_string(c, v, "grammar", true);
    if (!text)
        return GM_EX_NONE;
    gm_ebnf sub;
    gm_ebnf_init(&sub, c->mem);
    gm_grammar_options go = {0}; /* the defaults but for the limits (not the public API's */
    go.limits = c->limits;       /* gm_grammar_options_init_defaults: runtime/ is above) */
    gm_status st = gm_ebnf_parse(&sub, "grammar", text->u.s, text->n, GM_EBNF_XGRAMMAR, &go,
                                 c->err);
    uint32_t node = GM_EX_NONE;
    if (st == GM_OK) {
        node = import(c, &sub, 'g');
    } else {
        c->status = st;
        gm_error_prefix(c->err, "structural tag %s/grammar", c->ptr_len ? c->ptr : "");
    }
    gm_ebnf_free(&sub);
    return node;
}

static uint32_t regex(stag *c, const gm_jv *v)
{
    const gm_jv *p = get_string(c, v, "pattern", true);
    if (!p)
        return GM_EX_NONE;
    uint32_t node;
    gm_status st = gm_ebnf_add_regex(c->g, p->u.s, p->n, 0, &c->limits, &node, c->err);
    if (st != GM_OK) {
        c->status = st;
        gm_error_prefix(c->err, "structural tag %s/pattern", c->ptr_len ? c->ptr : "");
        return GM_EX_NONE;
    }
    return node;
}

/*
 * An lalr content (note [code blocks] in runtime/engine_blocks.c): one
 * external symbol (note [external symbols]) whose text says the bundled
 * grammar, the tag's begin and its end — "\xff\xfe", then each of the
 * three as a length byte and its bytes — for the composite engine to read.
 */
static uint32_t lalr_block(stag *c, const gm_jv *tagv, const gm_jv *content, const gm_jv *end)
{
    static const char *const lalr_keys[] = {"type", "grammar", NULL};
    if (!known_keys(c, content, "an lalr content", lalr_keys))
        return GM_EX_NONE;
    const gm_jv *name = get_string(c, content, "grammar", true);
    const gm_jv *begin = get_string(c, tagv, "begin", true);
    if (c->status != GM_OK)
        return GM_EX_NONE;
    if (!gm_bundled_grammar(name->u.s, &(size_t){0}) || !strcmp(name->u.s, "common"))
        return gm_stag_fail(c, name, GM_ERR_FORMAT, "\"%s\" is not a bundled grammar (json, python, "
                    "go, java, ...)", name->u.s);
    if (!begin->n || begin->n > GM_STAG_MAX_FENCE || has_special(c, begin->u.s, begin->n))
        return gm_stag_fail(c, begin, GM_ERR_FORMAT, "the begin of a tag with lalr content must be "
                    "text of 1 to %d bytes without special tokens", GM_STAG_MAX_FENCE);
    if (!end || !end->n || end->n > GM_STAG_MAX_FENCE || has_special(c, end->u.s, end->n))
        return gm_stag_fail(c, end ? end : tagv, GM_ERR_FORMAT, "the end of a tag with lalr content "
                    "must be text of 1 to %d bytes without special tokens", GM_STAG_MAX_FENCE);
    if (name->n > GM_STAG_MAX_FENCE)
        return gm_stag_fail(c, name, GM_ERR_FORMAT, "grammar name too long");
    uint8_t text[2 + 3 * (1 + GM_STAG_MAX_FENCE)];
    size_t n = 0;
    memcpy(text, GM_ESYM_EXTERNAL, 2);
    n = 2;
    const gm_jv *parts[3] = {name, begin, end};
    for (int k = 0; k < 3; k++) {
        text[n++] = (uint8_t)parts[k]->n;
        memcpy(text + n, parts[k]->u.s, parts[k]->n);
        n += parts[k]->n;
    }
    uint32_t node = gm_ebnf_add_token(c->g, text, n);
    return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
}

static const char *const tag_keys[] = {"type", "begin", "content", "end", NULL};
static const char *const structure_keys[] = {"begin", "schema", "end", NULL};

/* begin content end; any_text content stops at a text end (note [structural tags]). */
/*
 * A token format {"type": "token", "token": TEXT or ID}: the special token
 * TEXT (GM_EX_TOKEN, checked against the vocabulary when compiled), or the
 * token of that id (a token id set, ir/ebnf.h note [token id sets]).
 */
static uint32_t token_node(stag *c, const gm_jv *v)
{
    static const char *const token_keys[] = {"type", "token", NULL};
    const gm_jv *type = get_string(c, v, "type", true);
    if (type && strcmp(type->u.s, "token")) {
        size_t mark = gm_stag_push_key(c, "type");
        gm_stag_fail(c, type, GM_ERR_FORMAT, "expected a string or {\"type\": \"token\", ...}");
        gm_stag_pop(c, mark);
    }
    if (c->status != GM_OK || !known_keys(c, v, "a token", token_keys))
        return GM_EX_NONE;
    const gm_jv *t = member(v, "token");
    if (!t)
        return gm_stag_fail(c, v, GM_ERR_FORMAT, "missing \"token\"");
    size_t mark = gm_stag_push_key(c, "token");
    uint32_t node = GM_EX_NONE;
    uint32_t id;
    if (t->kind == GM_JV_NUMBER) {
        /* by id: a token id set of one (note [token formats] in stag_token.c) */
        if (gm_stag_token_id(c, t, &id) &&
            (node = gm_ebnf_add_token_ids(c->g, false, &id, 1)) == GM_EX_NONE)
            gm_stag_nomem(c);
    } else if (t->kind != GM_JV_STRING || t->n == 0)
        gm_stag_fail(c, t, GM_ERR_FORMAT, "expected the token's text");
    else if ((node = gm_ebnf_add_token(c->g, t->u.s, t->n)) == GM_EX_NONE)
        gm_stag_nomem(c);
    gm_stag_pop(c, mark);
    return node;
}

enum { MAX_ENDS = 64 };

/*
 * begin content end; any_text content stops at the first of its text ends
 * (note [structural tags]). end: a string, a list of strings (any one of
 * them ends the tag) or a token format.
 */
static uint32_t tag_after(stag *c, const gm_jv *v, uint32_t begin)
{
    const gm_jv *content = member(v, "content");
    if (!content && !member(v, "schema"))
        return gm_stag_fail(c, v, GM_ERR_FORMAT, "missing \"content\"");
    if (!known_keys(c, v, content ? "a tag" : "a structure", content ? tag_keys : structure_keys))
        return GM_EX_NONE;
    const gm_jv *endv = member(v, "end");
    const gm_jv *ends[MAX_ENDS];
    size_t nends = 0;
    bool all_text = true; /* every end non-empty text without special tokens */
    size_t emark = gm_stag_push_key(c, "end");
    if (!endv) {
        all_text = false;
    } else if (endv->kind == GM_JV_STRING) {
        ends[nends++] = endv;
    } else if (endv->kind == GM_JV_ARRAY && content) {
        if (endv->n == 0 || endv->n > MAX_ENDS)
            gm_stag_fail(c, endv, GM_ERR_FORMAT, "expected 1 to %d end strings", MAX_ENDS);
        for (uint32_t i = 0; i < endv->n && c->status == GM_OK; i++) {
            if (endv->u.items[i]->kind != GM_JV_STRING) {
                size_t m2 = gm_stag_push_index(c, i);
                gm_stag_fail(c, endv->u.items[i], GM_ERR_FORMAT, "expected a string");
                gm_stag_pop(c, m2);
            }
            ends[nends++] = endv->u.items[i];
        }
    } else if (endv->kind == GM_JV_OBJECT && content) {
        all_text = false;
    } else {
        gm_stag_fail(c, endv, GM_ERR_FORMAT, "expected a string%s", content ? ", a list of strings or "
                                                               "a token format" : "");
    }
    for (size_t i = 0; i < nends; i++)
        all_text = all_text && ends[i]->n && !has_special(c, ends[i]->u.s, ends[i]->n);
    gm_stag_pop(c, emark);
    if (c->status != GM_OK)
        return GM_EX_NONE;
    /* the end as a node: the one string, the alternatives, or the token */
    uint32_t endn = GM_EX_NONE;
    if (endv && endv->kind == GM_JV_OBJECT) {
        emark = gm_stag_push_key(c, "end");
        endn = token_node(c, endv);
        gm_stag_pop(c, emark);
    } else if (nends == 0) {
        endn = text_node(c, "", 0);
    } else {
        uint32_t alts[MAX_ENDS];
        for (size_t i = 0; i < nends && c->status == GM_OK; i++)
            alts[i] = text_node(c, ends[i]->u.s, ends[i]->n);
        if (c->status == GM_OK && (endn = gm_ebnf_add_alt(c->g, alts, nends)) == GM_EX_NONE)
            gm_stag_nomem(c);
    }
    if (endn == GM_EX_NONE)
        return GM_EX_NONE;
    if (!content) {
        /* the first version's {begin, schema, end} */
        uint32_t body = json_schema(c, v, NULL);
        return seq3(c, begin, body, endn);
    }
    const gm_jv *ctype = get_string(c, content, "type", false);
    size_t mark = gm_stag_push_key(c, "content");
    uint32_t body;
    if (ctype && !strcmp(ctype->u.s, "any_text") && all_text) {
        uint32_t ids[MAX_SPECIAL];
        size_t n = 0;
        uint32_t max_chars, max_tokens;
        if (!known_keys(c, content, "an any_text", any_text_keys) ||
            !text_budget(c, content, &max_chars, &max_tokens)) {
            gm_stag_pop(c, mark);
            return GM_EX_NONE;
        }
        gm_stag_pop(c, mark);
        for (size_t i = 0; i < nends; i++) {
            if (!(c->until_flags & GM_UNTIL_BYTES) && !valid_utf8(ends[i]->u.s, ends[i]->n)) {
                size_t m2 = gm_stag_push_key(c, "end");
                if (endv->kind == GM_JV_ARRAY)
                    gm_stag_push_index(c, (uint32_t)i);
                gm_stag_fail(c, ends[i], GM_ERR_FORMAT, "the end of free text must be valid UTF-8 "
                     "(free text is; \"free_text\": \"bytes\" lifts that)");
                gm_stag_pop(c, m2);
                return GM_EX_NONE;
            }
            if ((ids[n++] = gm_ebnf_add_bytes(c->g, ends[i]->u.s, ends[i]->n)) == GM_EX_NONE)
                return gm_stag_nomem(c);
        }
        mark = gm_stag_push_key(c, "content");
        bool ok = excluded(c, content, ids, &n, MAX_SPECIAL);
        gm_stag_pop(c, mark);
        if (!ok)
            return GM_EX_NONE;
        /* the text and the first end itself: one UNTIL per end it may stop at */
        if (max_tokens == 0) {
            body = endn;
        } else if (max_tokens != GM_EX_INF) {
            /* the text a region of its own, the end after it (note [until]: BEFORE) */
            uint32_t alts[MAX_ENDS];
            for (size_t i = 0; i < nends; i++) {
                uint32_t u = gm_ebnf_add_until(c->g, ids, n, (uint32_t)i,
                                               c->until_flags | GM_UNTIL_BEFORE, max_chars);
                if (u == GM_EX_NONE)
                    return gm_stag_nomem(c);
                if ((u = budget_region(c, u, max_tokens)) == GM_EX_NONE)
                    return GM_EX_NONE;
                uint32_t pair[2] = {u, ids[i]};
                if ((alts[i] = gm_ebnf_add_seq(c->g, pair, 2)) == GM_EX_NONE)
                    return gm_stag_nomem(c);
            }
            if ((body = gm_ebnf_add_alt(c->g, alts, nends)) == GM_EX_NONE)
                return gm_stag_nomem(c);
        } else {
            uint32_t alts[MAX_ENDS];
            for (size_t i = 0; i < nends; i++)
                if ((alts[i] = until_end(c, ids, n, nends, i, ends[i], max_chars)) ==
                    GM_EX_NONE)
                    return GM_EX_NONE;
            if ((body = gm_ebnf_add_alt(c->g, alts, nends)) == GM_EX_NONE)
                return gm_stag_nomem(c);
        }
        uint32_t ids2[2] = {begin, body};
        uint32_t node = gm_ebnf_add_seq(c->g, ids2, 2);
        return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
    }
    if (ctype && !strcmp(ctype->u.s, "lalr")) {
        if (endv && endv->kind != GM_JV_STRING) {
            gm_stag_pop(c, mark);
            size_t m2 = gm_stag_push_key(c, "end");
            gm_stag_fail(c, endv, GM_ERR_FORMAT, "a tag with lalr content ends with one string");
            gm_stag_pop(c, m2);
            return GM_EX_NONE;
        }
        body = lalr_block(c, v, content, endv);
        gm_stag_pop(c, mark);
        return seq3(c, begin, body, endn);
    }
    /* the token-level formats inside exclude a token end (note [token formats]) */
    const gm_jv *outer_end = c->end_token;
    c->end_token = endv && endv->kind == GM_JV_OBJECT ? endv : NULL;
    body = format(c, content);
    c->end_token = outer_end;
    gm_stag_pop(c, mark);
    return seq3(c, begin, body, endn);
}

static uint32_t tag(stag *c, const gm_jv *v)
{
    const gm_jv *b = member(v, "begin");
    uint32_t begin;
    if (b && b->kind == GM_JV_OBJECT) {
        size_t mark = gm_stag_push_key(c, "begin");
        begin = token_node(c, b);
        gm_stag_pop(c, mark);
    } else {
        begin = string_member(c, v, "begin", true);
    }
    return begin == GM_EX_NONE ? GM_EX_NONE : tag_after(c, v, begin);
}

/* The tag objects of a "tags" array, checked to be objects. */
static const gm_jv *tag_list(stag *c, const gm_jv *v, const char *key)
{
    const gm_jv *tags = get_array(c, v, key, true);
    if (!tags)
        return NULL;
    for (uint32_t i = 0; i < tags->n; i++) {
        const gm_jv *t = tags->u.items[i];
        const gm_jv *type = t->kind == GM_JV_OBJECT ? member(t, "type") : NULL;
        if (t->kind != GM_JV_OBJECT || (type && (type->kind != GM_JV_STRING ||
                                                 strcmp(type->u.s, "tag")))) {
            size_t mark = gm_stag_push_key(c, key);
            gm_stag_push_index(c, i);
            gm_stag_fail(c, t, GM_ERR_FORMAT, "expected a tag object {\"begin\", \"content\", \"end\"}");
            gm_stag_pop(c, mark);
            return NULL;
        }
    }
    if (tags->n == 0) {
        size_t mark = gm_stag_push_key(c, key);
        gm_stag_fail(c, tags, GM_ERR_FORMAT, "expected at least one tag");
        gm_stag_pop(c, mark);
        return NULL;
    }
    return tags;
}

/*
 * note [shared alternatives]
 * The calls of a format are read where the first call is and again in the
 * loop of the next ones (`one (sep one)*`, a dispatch loop after a first
 * dispatch). Written as one node in two places, the rule automaton builder
 * expanded it in both (and a loop past its expansion limit became a
 * repetition rule holding a third copy): with 32 tools, two automata of
 * 1,100-4,500 states built from the same tags, most of a family's compile
 * time. Here such a node is a rule of its own, referenced from both places:
 * built once, and still inlined by the builder when small (note [rule
 * inlining] in earley/fsm_build.c). The language is the same.
 */
static uint32_t shared_rule(stag *c, uint32_t node, const char *hint)
{
    if (node == GM_EX_NONE || c->unshared)
        return node;
    uint32_t r = gm_ebnf_fresh_rule(c->g, hint);
    uint32_t ref = r == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_ref(c->g, r);
    if (ref == GM_EX_NONE)
        return gm_stag_nomem(c);
    c->g->rules[r].body = node;
    c->g->rules[r].loc = (gm_srcloc){gm_ebnf_file(c->g, c->name), 1, 1};
    return ref;
}

/* Each tag in full, as alternatives. */
static uint32_t all_tags(stag *c, const gm_jv *tags, const char *key)
{
    uint32_t *ids = gm_mem_reallocarray(c->mem, NULL, tags->n, sizeof *ids);
    if (!ids)
        return gm_stag_nomem(c);
    size_t mark = gm_stag_push_key(c, key);
    uint32_t node = GM_EX_NONE;
    for (uint32_t i = 0; i < tags->n; i++) {
        size_t m2 = gm_stag_push_index(c, i);
        ids[i] = tag(c, tags->u.items[i]);
        gm_stag_pop(c, m2);
        if (ids[i] == GM_EX_NONE)
            goto out;
    }
    if ((node = gm_ebnf_add_alt(c->g, ids, tags->n)) == GM_EX_NONE)
        gm_stag_nomem(c);
out:
    gm_stag_pop(c, mark);
    gm_mem_free(c->mem, ids);
    return node;
}

typedef struct trigger {
    const gm_jv *v;
    bool special;             /* starts with a special token */
    uint32_t until_index;     /* text triggers: index in the UNTIL list */
    uint32_t *tags;           /* alternatives after the trigger */
    uint32_t ntags;
} trigger;

static uint32_t triggered(stag *c, const gm_jv *v, const gm_jv *trig_arr, const gm_jv *tags,
                          const char *tags_key, bool at_least_one, bool stop_after_first,
                          bool text_before_first)
{
    uint32_t nt = trig_arr->n;
    size_t tmark = gm_stag_push_key(c, "triggers");
    if (nt == 0) {
        gm_stag_fail(c, trig_arr, GM_ERR_FORMAT, "expected at least one trigger");
        gm_stag_pop(c, tmark);
        return GM_EX_NONE;
    }
    if (nt > MAX_SPECIAL) {
        gm_stag_fail(c, trig_arr, GM_ERR_LIMIT, "more than %d triggers", MAX_SPECIAL);
        gm_stag_pop(c, tmark);
        return GM_EX_NONE;
    }
    gm_stag_pop(c, tmark);
    trigger *tr = gm_mem_calloc(c->mem, nt, sizeof *tr);
    uint32_t *scratch = gm_mem_reallocarray(c->mem, NULL, (size_t)tags->n + 1, sizeof *scratch);
    uint32_t list[MAX_SPECIAL * 2];
    size_t nlist = 0;
    uint32_t node = GM_EX_NONE;
    if (!tr || !scratch) {
        gm_stag_nomem(c);
        goto out;
    }
    for (uint32_t j = 0; j < nt; j++) {
        const gm_jv *t = trig_arr->u.items[j];
        size_t mark = gm_stag_push_key(c, "triggers");
        gm_stag_push_index(c, j);
        tr[j].v = t;
        if (t->kind != GM_JV_STRING || t->n == 0) {
            gm_stag_fail(c, t, GM_ERR_FORMAT, "expected a non-empty string");
        } else if (special_at(c, t->u.s, t->n) != SIZE_MAX) {
            tr[j].special = true;
        } else if (has_special(c, t->u.s, t->n)) {
            gm_stag_fail(c, t, GM_ERR_UNSUPPORTED,
                 "a trigger that starts with text may not hold a special token");
        } else if (!(c->until_flags & GM_UNTIL_BYTES) && !valid_utf8(t->u.s, t->n)) {
            gm_stag_fail(c, t, GM_ERR_FORMAT, "a trigger must be valid UTF-8 (free text is; "
                 "\"free_text\": \"bytes\" lifts that)");
        } else {
            tr[j].until_index = (uint32_t)nlist;
            if ((list[nlist++] = gm_ebnf_add_bytes(c->g, t->u.s, t->n)) == GM_EX_NONE)
                gm_stag_nomem(c);
        }
        gm_stag_pop(c, mark);
        tr[j].tags = gm_mem_reallocarray(c->mem, NULL, tags->n, sizeof *tr[j].tags);
        if (!tr[j].tags)
            gm_stag_nomem(c);
        if (c->status != GM_OK)
            goto out;
    }
    if (!excluded(c, v, list, &nlist, sizeof list / sizeof *list))
        goto out;
    /* Each tag after the trigger its begin starts with. */
    size_t kmark = gm_stag_push_key(c, tags_key);
    for (uint32_t i = 0; i < tags->n; i++) {
        const gm_jv *t = tags->u.items[i];
        size_t m2 = gm_stag_push_index(c, i);
        const gm_jv *begin = NULL;
        if (member(t, "begin") && member(t, "begin")->kind == GM_JV_OBJECT) {
            size_t m3 = gm_stag_push_key(c, "begin");
            gm_stag_fail(c, member(t, "begin"), GM_ERR_FORMAT, "Tags in triggered_tags must "
                 "have a string begin (a token begin belongs in token_triggered_tags)");
            gm_stag_pop(c, m3);
        } else {
            begin = get_string(c, t, "begin", true);
        }
        uint32_t which = UINT32_MAX;
        for (uint32_t j = 0; begin && j < nt && c->status == GM_OK; j++) {
            const gm_jv *tv = tr[j].v;
            if (tv->n <= begin->n && !memcmp(begin->u.s, tv->u.s, tv->n)) {
                if (which != UINT32_MAX)
                    gm_stag_fail(c, begin, GM_ERR_FORMAT, "the begin starts with two triggers, \"%s\" "
                         "and \"%s\"", tr[which].v->u.s, tv->u.s);
                which = j;
            }
        }
        if (begin && which == UINT32_MAX)
            gm_stag_fail(c, begin, GM_ERR_FORMAT, "the begin \"%s\" starts with none of the triggers",
                 begin->u.s);
        if (c->status == GM_OK) {
            size_t tl = tr[which].v->n;
            uint32_t rest = text_node(c, begin->u.s + tl, begin->n - tl);
            uint32_t after = rest == GM_EX_NONE ? GM_EX_NONE : tag_after(c, t, rest);
            if (after != GM_EX_NONE)
                tr[which].tags[tr[which].ntags++] = after;
        }
        gm_stag_pop(c, m2);
        if (c->status != GM_OK) {
            gm_stag_pop(c, kmark);
            goto out;
        }
    }
    gm_stag_pop(c, kmark);
    /* One dispatch per trigger: free text up to it, then one of its tags. */
    uint32_t nd = 0;
    for (uint32_t j = 0; j < nt; j++) {
        if (tr[j].ntags == 0)
            continue; /* a trigger without tags only keeps the free text from holding it */
        uint32_t text = until(c, list, nlist, tr[j].special ? GM_EX_NONE : tr[j].until_index);
        uint32_t trig = tr[j].special ? text_node(c, tr[j].v->u.s, tr[j].v->n)
                                      : gm_ebnf_add_empty(c->g);
        uint32_t alts = gm_ebnf_add_alt(c->g, tr[j].tags, tr[j].ntags);
        if (text == GM_EX_NONE || trig == GM_EX_NONE || alts == GM_EX_NONE) {
            gm_stag_nomem(c);
            goto out;
        }
        if ((scratch[nd++] = seq3(c, text, trig, alts)) == GM_EX_NONE)
            goto out;
    }
    uint32_t dispatch = gm_ebnf_add_alt(c->g, scratch, nd);
    if (at_least_one && text_before_first && !stop_after_first)
        dispatch = shared_rule(c, dispatch, "dispatch"); /* note [shared alternatives] */
    uint32_t rest_text = until(c, list, nlist, GM_EX_NONE);
    if (dispatch == GM_EX_NONE || rest_text == GM_EX_NONE) {
        gm_stag_nomem(c);
        goto out;
    }
    uint32_t loop = gm_ebnf_add_repeat(c->g, dispatch, 0, GM_EX_INF);
    if (loop == GM_EX_NONE) {
        gm_stag_nomem(c);
        goto out;
    }
    if (!at_least_one) {
        if (stop_after_first) {
            uint32_t ids[2] = {rest_text, dispatch};
            node = gm_ebnf_add_alt(c->g, ids, 2);
        } else {
            uint32_t ids[2] = {loop, rest_text};
            node = gm_ebnf_add_seq(c->g, ids, 2);
        }
    } else {
        uint32_t first = text_before_first ? dispatch : all_tags(c, tags, tags_key);
        if (first == GM_EX_NONE)
            goto out;
        node = stop_after_first ? first : seq3(c, first, loop, rest_text);
    }
    if (node == GM_EX_NONE && c->status == GM_OK)
        gm_stag_nomem(c);
out:
    if (tr)
        for (uint32_t j = 0; j < nt; j++)
            gm_mem_free(c->mem, tr[j].tags);
    gm_mem_free(c->mem, tr);
    gm_mem_free(c->mem, scratch);
    return c->status == GM_OK ? node : GM_EX_NONE;
}

static uint32_t triggered_tags(stag *c, const gm_jv *v)
{
    const gm_jv *trig = get_array(c, v, "triggers", true);
    const gm_jv *tags = trig ? tag_list(c, v, "tags") : NULL;
    if (!tags)
        return GM_EX_NONE;
    bool alo = get_bool(c, v, "at_least_one", false);
    bool saf = get_bool(c, v, "stop_after_first", false);
    bool tbf = get_bool(c, v, "text_before_first", false);
    if (c->status != GM_OK)
        return GM_EX_NONE;
    return triggered(c, v, trig, tags, "tags", alo, saf, tbf);
}

static uint32_t tags_with_separator(stag *c, const gm_jv *v)
{
    const gm_jv *tags = tag_list(c, v, "tags");
    if (!tags)
        return GM_EX_NONE;
    uint32_t sep = string_member(c, v, "separator", false);
    bool alo = get_bool(c, v, "at_least_one", false);
    bool saf = get_bool(c, v, "stop_after_first", false);
    uint32_t one = sep == GM_EX_NONE || c->status != GM_OK ? GM_EX_NONE : all_tags(c, tags, "tags");
    if (one == GM_EX_NONE)
        return GM_EX_NONE;
    uint32_t node = one;
    if (!saf) {
        one = node = shared_rule(c, one, "tags"); /* note [shared alternatives] */
        if (one == GM_EX_NONE)
            return GM_EX_NONE;
        uint32_t pair[2] = {sep, one};
        uint32_t next = gm_ebnf_add_seq(c->g, pair, 2);
        uint32_t more = next == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_repeat(c->g, next, 0, GM_EX_INF);
        uint32_t ids[2] = {one, more};
        node = more == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_seq(c->g, ids, 2);
    }
    if (node != GM_EX_NONE && !alo) {
        uint32_t ids[2] = {gm_ebnf_add_empty(c->g), node};
        node = ids[0] == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_alt(c->g, ids, 2);
    }
    return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
}

/*
 * dispatch {rules: [[pattern, format], ...], loop?, excludes?}: free text
 * up to the first pattern (which it ends with), then that rule's format;
 * loop: again and again, the structure ending in free text; else once at
 * most. The free text holds no excluded string.
 */
static uint32_t dispatch_format(stag *c, const gm_jv *v)
{
    const gm_jv *rules = get_array(c, v, "rules", true);
    bool loop = get_bool(c, v, "loop", true);
    if (!rules || c->status != GM_OK)
        return GM_EX_NONE;
    size_t rmark = gm_stag_push_key(c, "rules");
    if (rules->n == 0 || rules->n > MAX_SPECIAL) {
        gm_stag_fail(c, rules, GM_ERR_FORMAT, "expected 1 to %d rules", MAX_SPECIAL);
        gm_stag_pop(c, rmark);
        return GM_EX_NONE;
    }
    uint32_t ids[MAX_SPECIAL * 2], alts[MAX_SPECIAL];
    size_t n = 0;
    for (uint32_t i = 0; i < rules->n && c->status == GM_OK; i++) {
        const gm_jv *r = rules->u.items[i];
        size_t m2 = gm_stag_push_index(c, i);
        const gm_jv *pat = r->kind == GM_JV_ARRAY && r->n == 2 ? r->u.items[0] : NULL;
        if (!pat || pat->kind != GM_JV_STRING || pat->n == 0)
            gm_stag_fail(c, r, GM_ERR_FORMAT, "expected [pattern, format] with a non-empty pattern");
        else if (has_special(c, pat->u.s, pat->n))
            gm_stag_fail(c, pat, GM_ERR_UNSUPPORTED, "a dispatch pattern holding a special token (use "
                 "triggered_tags, whose triggers may)");
        else if (!(c->until_flags & GM_UNTIL_BYTES) && !valid_utf8(pat->u.s, pat->n))
            gm_stag_fail(c, pat, GM_ERR_FORMAT, "a pattern must be valid UTF-8");
        else if ((ids[n++] = gm_ebnf_add_bytes(c->g, pat->u.s, pat->n)) == GM_EX_NONE)
            gm_stag_nomem(c);
        gm_stag_pop(c, m2);
    }
    gm_stag_pop(c, rmark);
    if (c->status != GM_OK || !excluded(c, v, ids, &n, sizeof ids / sizeof *ids))
        return GM_EX_NONE;
    for (uint32_t i = 0; i < rules->n; i++) {
        size_t m2 = gm_stag_push_key(c, "rules");
        gm_stag_push_index(c, i);
        gm_stag_push_index(c, 1);
        uint32_t f = format(c, rules->u.items[i]->u.items[1]);
        gm_stag_pop(c, m2);
        uint32_t text = f == GM_EX_NONE ? GM_EX_NONE : until(c, ids, n, i);
        uint32_t pair[2] = {text, f};
        if (text == GM_EX_NONE)
            return GM_EX_NONE;
        if ((alts[i] = gm_ebnf_add_seq(c->g, pair, 2)) == GM_EX_NONE)
            return gm_stag_nomem(c);
    }
    uint32_t one = gm_ebnf_add_alt(c->g, alts, rules->n);
    uint32_t rest = one == GM_EX_NONE ? GM_EX_NONE : until(c, ids, n, GM_EX_NONE);
    if (rest == GM_EX_NONE)
        return c->status == GM_OK ? gm_stag_nomem(c) : GM_EX_NONE;
    uint32_t node;
    if (loop) {
        uint32_t more = gm_ebnf_add_repeat(c->g, one, 0, GM_EX_INF);
        uint32_t pair[2] = {more, rest};
        node = more == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_seq(c->g, pair, 2);
    } else {
        uint32_t pair[2] = {rest, one};
        node = gm_ebnf_add_alt(c->g, pair, 2);
    }
    return node == GM_EX_NONE ? gm_stag_nomem(c) : node;
}

/* The content of v, min..max times (optional, plus, star). */
static uint32_t repeated(stag *c, const gm_jv *v, uint32_t min, uint32_t max)
{
    const gm_jv *content = member(v, "content");
    if (!content)
        return gm_stag_fail(c, v, GM_ERR_FORMAT, "missing \"content\"");
    size_t mark = gm_stag_push_key(c, "content");
    uint32_t body = format(c, content);
    gm_stag_pop(c, mark);
    if (body == GM_EX_NONE)
        return GM_EX_NONE;
    uint32_t n = gm_ebnf_add_repeat(c->g, body, min, max);
    return n == GM_EX_NONE ? gm_stag_nomem(c) : n;
}

/* repeat {min, max, content}: max -1 for no upper bound. */
static uint32_t repeat_format(stag *c, const gm_jv *v)
{
    const gm_jv *mx = member(v, "max");
    if (!member(v, "min") || !mx)
        return gm_stag_fail(c, v, GM_ERR_FORMAT, "a repeat needs \"min\" and \"max\"");
    bool ok = true;
    uint32_t min = get_count(c, v, "min", 0, GM_EBNF_MAX_REPEAT, &ok);
    uint32_t max = mx->kind == GM_JV_NUMBER && !strcmp(mx->u.s, "-1")
                       ? GM_EX_INF
                       : get_count(c, v, "max", 0, GM_EBNF_MAX_REPEAT, &ok);
    if (!ok)
        return GM_EX_NONE;
    if (min > max) {
        size_t mark = gm_stag_push_key(c, "max");
        gm_stag_fail(c, mx, GM_ERR_FORMAT, "Repeat min must be <= max (max %u is below min %u)", max,
             min);
        gm_stag_pop(c, mark);
        return GM_EX_NONE;
    }
    return repeated(c, v, min, max);
}

static uint32_t format(stag *c, const gm_jv *v)
{
    if (c->status != GM_OK)
        return GM_EX_NONE;
    if (v->kind != GM_JV_OBJECT)
        return gm_stag_fail(c, v, GM_ERR_FORMAT, "Format must be an object with a \"type\"");
    const gm_jv *tv = member(v, "type");
    if (!tv)
        return gm_stag_fail(c, v, GM_ERR_FORMAT, "Invalid format: missing \"type\"");
    if (tv->kind != GM_JV_STRING) {
        size_t mark = gm_stag_push_key(c, "type");
        gm_stag_fail(c, tv, GM_ERR_FORMAT, "Format's type must be a string");
        gm_stag_pop(c, mark);
        return GM_EX_NONE;
    }
    if (++c->depth > MAX_DEPTH) {
        c->depth--;
        return gm_stag_fail(c, v, GM_ERR_LIMIT, "formats nested more than %d deep", MAX_DEPTH);
    }
    const gm_jv *type = get_string(c, v, "type", true);
    uint32_t node = GM_EX_NONE;
    const char *t = type ? type->u.s : "";
    static const char *const const_keys[] = {"type", "value", "text", NULL};
    static const char *const schema_keys[] = {"type", "json_schema", "style", "any_order",
                                              "max_whitespace_cnt", NULL};
    static const char *const grammar_keys[] = {"type", "grammar", NULL};
    static const char *const regex_keys[] = {"type", "pattern", NULL};
    static const char *const elements_keys[] = {"type", "elements", NULL};
    static const char *const content_keys[] = {"type", "content", NULL};
    static const char *const repeat_keys[] = {"type", "min", "max", "content", NULL};
    static const char *const triggered_keys[] = {"type", "triggers", "tags", "at_least_one",
                                                 "stop_after_first", "excludes", "excluded_str",
                                                 "text_before_first", NULL};
    static const char *const separator_keys[] = {"type", "tags", "separator", "at_least_one",
                                                 "stop_after_first", NULL};
    static const char *const dispatch_keys[] = {"type", "rules", "loop", "excludes",
                                                "excluded_str", NULL};
    if (!type) {
        /* reported */
    } else if (!strcmp(t, "const_string")) {
        const gm_jv *s = !known_keys(c, v, "a const_string", const_keys) ||
                                 !gm_stag_shape(c, v, t) ? NULL
                         : member(v, "text") && !member(v, "value")
                             ? get_string(c, v, "text", true)
                             : get_string(c, v, "value", true);
        if (s)
            node = text_node(c, s->u.s, s->n);
    } else if (!strcmp(t, "json_schema")) {
        if (known_keys(c, v, "a json_schema", schema_keys))
            node = json_schema(c, v, NULL);
    } else if (!strcmp(t, "qwen_xml_parameter")) {
        static const char *const qwen_keys[] = {"type", "json_schema", NULL};
        if (known_keys(c, v, "a qwen_xml_parameter", qwen_keys))
            node = json_schema(c, v, "qwen_xml");
    } else if (!strcmp(t, "grammar")) {
        if (known_keys(c, v, "a grammar", grammar_keys))
            node = grammar(c, v);
    } else if (!strcmp(t, "regex")) {
        if (known_keys(c, v, "a regex", regex_keys))
            node = regex(c, v);
    } else if (!strcmp(t, "sequence") || !strcmp(t, "or")) {
        if (known_keys(c, v, t[0] == 's' ? "a sequence" : "an or", elements_keys) &&
            gm_stag_shape(c, v, t))
            node = elements(c, v, t[0] == 'o');
    } else if (!strcmp(t, "tag")) {
        if (gm_stag_shape(c, v, t))
            node = tag(c, v);
    } else if (!strcmp(t, "any_text")) {
        uint32_t ids[MAX_SPECIAL];
        size_t n = 0;
        uint32_t max_chars, max_tokens;
        if (known_keys(c, v, "an any_text", any_text_keys) &&
            text_budget(c, v, &max_chars, &max_tokens) && excluded(c, v, ids, &n, MAX_SPECIAL))
        {
            /* a region's text is one automaton without references (note [token budgets]):
               never a repetition rule, so free UTF-8 text is the UNTIL of a byte no UTF-8
               text holds */
            if (max_tokens != GM_EX_INF && max_tokens && n == 0 &&
                !(c->until_flags & GM_UNTIL_BYTES) &&
                (ids[n++] = gm_ebnf_add_bytes(c->g, "\xff", 1)) == GM_EX_NONE)
                gm_stag_nomem(c);
            node = c->status != GM_OK ? GM_EX_NONE
                   : max_tokens == 0  ? text_node(c, "", 0)
                                      : budget_region(c, until_max(c, ids, n, GM_EX_NONE, max_chars),
                                                      max_tokens);
        }
    } else if (!strcmp(t, "optional") || !strcmp(t, "plus") || !strcmp(t, "star")) {
        if (known_keys(c, v, t[0] == 'o' ? "an optional" : t[0] == 'p' ? "a plus" : "a star",
                       content_keys))
            node = repeated(c, v, t[0] == 'p', t[0] == 'o' ? 1 : GM_EX_INF);
    } else if (!strcmp(t, "token")) {
        node = token_node(c, v);
    } else if (gm_stag_token_level(t)) {
        node = gm_stag_token_format(c, v, t);
    } else if (!strcmp(t, "dispatch")) {
        if (known_keys(c, v, "a dispatch", dispatch_keys))
            node = dispatch_format(c, v);
    } else if (!strcmp(t, "repeat")) {
        if (known_keys(c, v, "a repeat", repeat_keys) && gm_stag_shape(c, v, t))
            node = repeat_format(c, v);
    } else if (!strcmp(t, "lalr")) {
        gm_stag_fail(c, v, GM_ERR_FORMAT, "an lalr format is only allowed as the content of a tag "
             "(begin, content, end)");
    } else if (!strcmp(t, "triggered_tags")) {
        if (known_keys(c, v, "a triggered_tags", triggered_keys) && gm_stag_shape(c, v, t))
            node = triggered_tags(c, v);
    } else if (!strcmp(t, "tags_with_separator")) {
        if (known_keys(c, v, "a tags_with_separator", separator_keys) &&
            gm_stag_shape(c, v, t))
            node = tags_with_separator(c, v);
    } else {
        size_t mark = gm_stag_push_key(c, "type");
        gm_stag_fail(c, type, GM_ERR_UNSUPPORTED, "Format type not recognized: %s (format type \"%s\" is not "
             "supported; gramask knows "
             "const_string, json_schema, qwen_xml_parameter, grammar, regex, lalr, sequence, or, tag, token, "
             "any_text, optional, plus, star, repeat, dispatch, triggered_tags, "
             "tags_with_separator, exclude_token, any_tokens, token_triggered_tags, "
             "token_dispatch)", t, t);
        gm_stag_pop(c, mark);
    }
    c->depth--;
    return c->status == GM_OK ? node : GM_EX_NONE;
}

/* ---- the document -------------------------------------------------------- */

static bool add_special(stag *c, const char *s, size_t n, const gm_jv *at)
{
    if (n == 0) {
        gm_stag_fail(c, at, GM_ERR_FORMAT, "a special token's text is empty");
        return false;
    }
    if (c->nspecial == MAX_SPECIAL) {
        gm_stag_fail(c, at, GM_ERR_LIMIT, "more than %d special tokens", MAX_SPECIAL);
        return false;
    }
    c->special[c->nspecial] = s;
    c->special_len[c->nspecial++] = n;
    return true;
}

static uint32_t document(stag *c, const gm_jv *root)
{
    if (root->kind != GM_JV_OBJECT)
        return gm_stag_fail(c, root, GM_ERR_FORMAT, "Structural tag must be an object");
    const gm_jv *specials = get_array(c, root, "special_tokens", false);
    for (uint32_t i = 0; specials && i < specials->n; i++) {
        const gm_jv *s = specials->u.items[i];
        size_t mark = gm_stag_push_key(c, "special_tokens");
        gm_stag_push_index(c, i);
        if (s->kind != GM_JV_STRING)
            gm_stag_fail(c, s, GM_ERR_FORMAT, "expected a string");
        else
            add_special(c, s->u.s, s->n, s);
        gm_stag_pop(c, mark);
    }
    /* candidates: text here; the caller resolves them against a vocabulary and
       compiles again with those it has as special_tokens (note [special token candidates]) */
    const gm_jv *cands = get_array(c, root, "special_token_candidates", false);
    for (uint32_t i = 0; cands && i < cands->n && c->status == GM_OK; i++) {
        const gm_jv *s = cands->u.items[i];
        size_t mark = gm_stag_push_key(c, "special_token_candidates");
        gm_stag_push_index(c, i);
        if (s->kind != GM_JV_STRING || s->n == 0 || memchr(s->u.s, 0, s->n))
            gm_stag_fail(c, s, GM_ERR_FORMAT, "expected a non-empty string without NUL");
        else if (c->opts->candidates)
            gm_strbuf_append(c->opts->candidates, s->u.s, s->n + 1);
        gm_stag_pop(c, mark);
    }
    const gm_jv *ft = get_string(c, root, "free_text", false);
    if (ft && !strcmp(ft->u.s, "bytes")) {
        c->until_flags = GM_UNTIL_BYTES;
    } else if (ft && !strcmp(ft->u.s, "utf8")) {
        c->until_flags = 0;
    } else if (ft) {
        size_t mark = gm_stag_push_key(c, "free_text");
        gm_stag_fail(c, ft, GM_ERR_FORMAT, "expected \"utf8\" (the default: free text stays valid "
             "UTF-8) or \"bytes\" (any bytes)");
        gm_stag_pop(c, mark);
    }
    if (c->status != GM_OK)
        return GM_EX_NONE;
    const gm_jv *type = member(root, "type");
    /* XGrammar's StructuralTag has type="structural_tag" by default: {"format": ...}
       without a type is the wrapper (a format always names its type) */
    bool wrapper = type ? type->kind == GM_JV_STRING && !strcmp(type->u.s, "structural_tag")
                        : member(root, "format") != NULL;
    if (!wrapper && member(root, "format")) {
        size_t mark = gm_stag_push_key(c, "type");
        gm_stag_fail(c, type ? type : root, GM_ERR_FORMAT,
             "Structural tag's type must be a string \"structural_tag\"");
        gm_stag_pop(c, mark);
        return GM_EX_NONE;
    }
    if (!wrapper)
        return format(c, root);
    if (!member(root, "format") && !member(root, "structures") && !member(root, "triggers"))
        return gm_stag_fail(c, root, GM_ERR_FORMAT, "Structural tag must have a format field (or the "
                    "first version's \"structures\" and \"triggers\")");
    const gm_jv *f = member(root, "format");
    static const char *const wrapper_keys[] = {"type", "format", NULL};
    static const char *const first_keys[] = {"type", "structures", "triggers", NULL};
    if (!known_keys(c, root, "a structural_tag", f ? wrapper_keys : first_keys))
        return GM_EX_NONE;
    if (f) {
        size_t mark = gm_stag_push_key(c, "format");
        uint32_t node = format(c, f);
        gm_stag_pop(c, mark);
        return node;
    }
    /* The first version: structures (begin, schema, end) and triggers. */
    const gm_jv *trig = get_array(c, root, "triggers", true);
    const gm_jv *tags = trig ? tag_list(c, root, "structures") : NULL;
    if (!tags)
        return GM_EX_NONE;
    return triggered(c, root, trig, tags, "structures", false, false, false);
}

gm_status gm_stag_compile(gm_mem *m, const char *name, const char *json, size_t len,
                          const gm_stag_options *opts, gm_ebnf *g, gm_error *err)
{
    static const gm_stag_options none;
    stag *c = gm_mem_calloc(m, 1, sizeof *c);
    if (!c)
        return gm_mem_fail(m, err, "a structural tag compiler");
    c->mem = m;
    c->g = g;
    c->text = text_node;
    c->free_text = free_text_of;
    c->json_schema_text = schema_text;
    c->format = format;
    c->tag_after = tag_after;
    c->name = name ? name : "structural tag";
    c->opts = opts ? opts : &none;
    c->err = err;
    c->any_byte = GM_EX_NONE;
    c->any_char = GM_EX_NONE;
    c->until_flags = c->opts->free_text_bytes ? GM_UNTIL_BYTES : 0;
    c->unshared = c->opts->unshared;
    gm_intern_init(&c->schemas, m);
    gm_limits_init_defaults(&c->limits);
    if (opts && opts->limits.max_input_bytes)
        c->limits = opts->limits;
    gm_status st = gm_jdoc_parse(&c->doc, m, c->name, json, len, MAX_DEPTH * 4, &c->limits, err);
    if (st == GM_ERR_SYNTAX)
        gm_error_prefix(err, "Failed to parse JSON");
    if (st == GM_OK) {
        for (size_t k = 0; c->opts->special_tokens && k < c->opts->n_special_tokens; k++)
            if (!add_special(c, c->opts->special_tokens[k], strlen(c->opts->special_tokens[k]),
                             NULL))
                break;
        uint32_t root = c->status == GM_OK ? document(c, c->doc.root) : GM_EX_NONE;
        if (root != GM_EX_NONE) {
            uint32_t r = gm_ebnf_rule_get(g, "root", 4);
            if (r == GM_EX_NONE) {
                gm_stag_nomem(c);
            } else {
                g->rules[r].body = root;
                g->rules[r].loc = (gm_srcloc){gm_ebnf_file(g, c->name), 1, 1};
                g->root = r;
            }
        }
        st = c->status;
        if (st == GM_OK && root == GM_EX_NONE)
            st = GM_ERR_NOMEM;
        /* one copy of the helper rules the imported grammars share (note [merging equal rules]) */
        if (st == GM_OK && c->imports > 1)
            st = gm_ebnf_merge_rules(g, NULL, err);
        if (st == GM_OK) {
            gm_grammar_options go = {0}; /* the defaults but for the limits */
            go.limits = c->limits;
            st = gm_ebnf_check(g, &go, err);
        }
    }
    gm_jdoc_free(&c->doc);
    gm_intern_free(&c->schemas);
    gm_vec_free(m, &c->schema_nodes);
    gm_mem_free(m, c);
    return st;
}
