/* XML argument styles of a json_schema format (note [xml styles]). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "dispatch/stag_internal.h"
#include "ir/ebnf_parse.h"
#include "schema/formats.h"

/*
 * note [xml styles]
 * A json_schema format with "style" other than "json" (XGrammar's
 * JSONSchemaFormat.style; "qwen_xml_parameter" is the qwen_xml style under
 * XGrammar's older name) writes a tool's arguments, the schema's object,
 * as XML parameters instead of a JSON object:
 *   qwen_xml      <parameter=KEY>VALUE</parameter>
 *   minimax_xml   <parameter name="KEY">VALUE</parameter>
 *   deepseek_xml  <｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>
 *                 (string="true" for a string value, raw; "false" for JSON; either
 *                 where the schema allows both)
 *   glm_xml       <arg_key>KEY</arg_key> <arg_value>VALUE</arg_value>
 *   kimi_k3_xml   <|open|>argument key="KEY" type="T"<|sep|>VALUE<|close|>argument<|sep|>
 *                 (KEY with & and " as &amp; &quot;; T the value's type as the
 *                 model's renderer writes it: string, number for integers and
 *                 numbers, boolean, null, array, object; any of those where
 *                 the schema does not pin one type: anyOf, free-form keys)
 *   cohere_xml    <cofl:value name="KEY" type="raw|json|dict|list">VALUE</cofl:value>,
 *                 recursively: an object value is its parameters (dict), an
 *                 array value its items as unnamed value tags (list), a
 *                 string raw, anything else JSON; a schema with alternatives
 *                 (anyOf, oneOf, a type list, an enum of mixed kinds) is one
 *                 tag per alternative, each with its own type.
 * A VALUE of type string is raw text: with no pattern, format or length,
 * free text without the closing tag (it may hold any whitespace); with
 * one, text matching it (the pattern matched whole, as XGrammar does; with
 * only maxLength, free text of at most that many characters without the
 * closing tag). A
 * const or enum string is its raw text, other constants their JSON text.
 * No whitespace goes around a string's raw text (a parser would keep it).
 * Other values are JSON valid under their schema (schema/), whitespace
 * [ \n\t]* around them and between parameters; their free strings (any
 * string, free-form keys) never hold the closing tag, which would end the
 * value for a parser (schema/exclude.c; Kimi K3's: neither block marker). The
 * parameters follow the declared order, required ones present, optional
 * ones skippable, then any additional, pattern or propertyNames-keyed ones (keys
 * [a-zA-Z_][a-zA-Z0-9_]* or the pattern); an absent additionalProperties
 * allows none (XGrammar's strict mode). With any_order, parameters come in
 * any order and may repeat, max(minProperties, required) to maxProperties
 * of them, as XGrammar defines it. Local $refs ("#/...") are followed; a
 * JSON value whose schema refers to $defs or definitions is compiled with
 * them. Recursion through $ref in cohere dicts is a rule per schema.
 */

enum { XS_PLAIN, XS_DEEPSEEK, XS_KIMI, XS_COHERE };
enum { MAX_XML_DEPTH = 48 };

typedef struct xml_style {
    const char *name;
    const char *key_prefix, *key_suffix, *value_prefix, *suffix;
    int kind;
} xml_style;

static const xml_style styles[] = {
    {"qwen_xml", "<parameter=", ">", "", "</parameter>", XS_PLAIN},
    {"minimax_xml", "<parameter name=\"", "\">", "", "</parameter>", XS_PLAIN},
    {"deepseek_xml", "<\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter name=\"", "", "",
     "</\xef\xbd\x9c" "DSML\xef\xbd\x9cparameter>", XS_DEEPSEEK},
    {"glm_xml", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", XS_PLAIN},
    {"cohere_xml", "<cofl:value", ">", "", "</cofl:value>", XS_COHERE},
    {"kimi_k3_xml", "<|open|>argument key=\"", "", "", "<|close|>argument<|sep|>", XS_KIMI},
};

typedef struct xg {
    stag *c;
    const xml_style *st;
    const gm_jv *root;            /* the schema: where $refs point */
    const gm_schema_options *so;
    uint32_t ws;                  /* [ \n\t]* */
    uint32_t raw;                 /* free text without the closing tag */
    uint32_t name;                /* [a-zA-Z_][a-zA-Z0-9_]* */
    uint32_t any_json;            /* any JSON value */
    uint32_t *memo;               /* cohere: the rule of each schema value (by id), or 0 */
    uint32_t depth;
} xg;

bool gm_stag_xml_style_known(const char *style)
{
    for (size_t i = 0; i < sizeof styles / sizeof *styles; i++)
        if (!strcmp(styles[i].name, style))
            return true;
    return false;
}

/* ---- nodes ---------------------------------------------------------------- */

static uint32_t lit(xg *x, const char *s) { return gm_stag_text(x->c, s, strlen(s)); }

static uint32_t seq(xg *x, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == GM_EX_NONE)
            return GM_EX_NONE;
    uint32_t node = gm_ebnf_add_seq(x->c->g, ids, n);
    return node == GM_EX_NONE ? gm_stag_nomem(x->c) : node;
}

static uint32_t alt(xg *x, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == GM_EX_NONE)
            return GM_EX_NONE;
    if (n == 1)
        return ids[0];
    uint32_t node = n ? gm_ebnf_add_alt(x->c->g, ids, n) : gm_ebnf_add_nothing(x->c->g);
    return node == GM_EX_NONE ? gm_stag_nomem(x->c) : node;
}

static uint32_t rep(xg *x, uint32_t child, uint32_t min, uint32_t max)
{
    if (child == GM_EX_NONE)
        return GM_EX_NONE;
    uint32_t node = gm_ebnf_add_repeat(x->c->g, child, min, max);
    return node == GM_EX_NONE ? gm_stag_nomem(x->c) : node;
}

static uint32_t charset(xg *x, const char *ranges)
{
    gm_cpset set = {0};
    for (const char *r = ranges; r[0] && r[1]; r += 2)
        if (gm_cpset_add_range(x->c->mem, &set, (uint8_t)r[0], (uint8_t)r[1]))
            return gm_stag_nomem(x->c);
    uint32_t node = gm_ebnf_add_set(x->c->g, &set);
    return node == GM_EX_NONE ? gm_stag_nomem(x->c) : node;
}

/* A fresh rule (its body set later) and a reference to it. */
static uint32_t fresh_rule(xg *x, uint32_t *rule)
{
    *rule = gm_ebnf_fresh_rule(x->c->g, "xml");
    if (*rule == GM_EX_NONE)
        return gm_stag_nomem(x->c);
    x->c->g->rules[*rule].loc = (gm_srcloc){gm_ebnf_file(x->c->g, x->c->name), 1, 1};
    uint32_t ref = gm_ebnf_add_ref(x->c->g, *rule);
    return ref == GM_EX_NONE ? gm_stag_nomem(x->c) : ref;
}

/*
 * A pattern matched whole, as XGrammar does: its anchors are dropped, ^ where
 * an alternative starts and $ where one ends (outside classes and escapes).
 */
static uint32_t regex_node(xg *x, const gm_jv *at, const char *pattern)
{
    uint32_t node;
    size_t n = strlen(pattern), len = 0;
    char *buf = gm_mem_alloc(x->c->mem, n + 1);
    if (!buf)
        return gm_stag_nomem(x->c);
    bool in_class = false;
    for (size_t i = 0; i < n; i++) {
        char ch = pattern[i];
        if (ch == '\\' && i + 1 < n) {
            buf[len++] = ch;
            buf[len++] = pattern[++i];
            continue;
        }
        if (in_class) {
            in_class = ch != ']';
        } else if (ch == '[') {
            in_class = true;
        } else if (ch == '^' && (len == 0 || buf[len - 1] == '|' || buf[len - 1] == '(')) {
            continue;
        } else if (ch == '$' && (i + 1 == n || pattern[i + 1] == '|' || pattern[i + 1] == ')')) {
            continue;
        }
        buf[len++] = ch;
    }
    pattern = buf;
    gm_status st = gm_ebnf_add_regex(x->c->g, pattern, len, 0, &x->c->limits, &node, x->c->err);
    gm_mem_free(x->c->mem, buf);
    if (st != GM_OK) {
        x->c->status = st;
        gm_error_prefix(x->c->err, "structural tag %s", x->c->ptr_len ? x->c->ptr : "");
        (void)at;
        return GM_EX_NONE;
    }
    return node;
}

/* ---- schemas -------------------------------------------------------------- */

static const gm_jv *get(const gm_jv *s, const char *key)
{
    return s && s->kind == GM_JV_OBJECT ? gm_jv_get(s, key) : NULL;
}

/* s with its local $refs followed (NULL after an error). */
static const gm_jv *resolve(xg *x, const gm_jv *s)
{
    for (int hops = 0; s && s->kind == GM_JV_OBJECT; hops++) {
        const gm_jv *ref = gm_jv_get(s, "$ref");
        const gm_jv *all = gm_jv_get(s, "allOf");
        if (!ref && all && all->kind == GM_JV_ARRAY && all->n == 1 &&
            !gm_jv_unknown_key(s, (const char *const[]){"allOf", "description", "title", NULL})) {
            s = all->u.items[0]; /* a single allOf is its schema */
            continue;
        }
        if (!ref)
            return s;
        if (ref->kind != GM_JV_STRING || ref->u.s[0] != '#' || hops > 32) {
            gm_stag_fail(x->c, ref, GM_ERR_UNSUPPORTED, "$ref \"%s\": only local references "
                         "(\"#/...\") are followed in an XML style",
                         ref->kind == GM_JV_STRING ? ref->u.s : "?");
            return NULL;
        }
        const gm_jv *at = x->root;
        const char *p = ref->u.s + 1;
        while (at && *p == '/') {
            char seg[256];
            size_t k = 0;
            for (p++; *p && *p != '/' && k + 1 < sizeof seg; p++) {
                if (p[0] == '~' && (p[1] == '0' || p[1] == '1')) {
                    seg[k++] = p[1] == '0' ? '~' : '/';
                    p++;
                } else {
                    seg[k++] = *p;
                }
            }
            seg[k] = 0;
            if (at->kind == GM_JV_ARRAY) {
                unsigned long i = strtoul(seg, NULL, 10);
                at = i < at->n ? at->u.items[i] : NULL;
            } else {
                at = gm_jv_get(at, seg);
            }
        }
        if (!at || *p) {
            gm_stag_fail(x->c, ref, GM_ERR_GRAMMAR, "$ref \"%s\" points to nothing", ref->u.s);
            return NULL;
        }
        s = at;
    }
    return s;
}

/* The single "type" of s, or NULL (none or a list). */
static const char *type_of(const gm_jv *s)
{
    const gm_jv *t = get(s, "type");
    if (t && t->kind == GM_JV_STRING)
        return t->u.s;
    if (t && t->kind == GM_JV_ARRAY && t->n == 1 && t->u.items[0]->kind == GM_JV_STRING)
        return t->u.items[0]->u.s;
    if (!t && (get(s, "properties") || get(s, "additionalProperties") ||
               get(s, "patternProperties") || get(s, "required")))
        return "object";
    if (!t && (get(s, "items") || get(s, "prefixItems")))
        return "array";
    return NULL;
}

/* Whether s says nothing a value must satisfy (true, {}, only annotations). */
static bool is_any(const gm_jv *s)
{
    if (s->kind == GM_JV_TRUE)
        return true;
    if (s->kind != GM_JV_OBJECT)
        return false;
    static const char *const words[] = {"type", "enum", "const", "anyOf", "oneOf", "allOf",
                                        "not", "$ref", "properties", "items", "prefixItems",
                                        "additionalProperties", "patternProperties", "required",
                                        "pattern", "format", "minLength", "maxLength", NULL};
    for (const char *const *w = words; *w; w++)
        if (gm_jv_get(s, *w))
            return false;
    return true;
}

static uint32_t json_value_text(xg *x, const char *schema, const char *type)
{
    char buf[96];
    int n = snprintf(buf, sizeof buf, "{\"allOf\":[%s],\"type\":\"%s\"}", schema,
                     type ? type : "object");
    if (!type)
        n = snprintf(buf, sizeof buf, "%s", schema);
    return gm_stag_json_schema_text(x->c, buf, (size_t)n, x->so);
}

/* JSON valid under s, or under s and {"type": type} when type is given. */
static uint32_t json_value(xg *x, const gm_jv *s, const char *type)
{
    const char *text = x->c->doc.text;
    if (s->end == s->off) /* not from the document: the schema true */
        return json_value_text(x, "true", type);
    const gm_jv *defs = get(x->root, "$defs"), *defs2 = get(x->root, "definitions");
    bool wrap = type || (s != x->root && (defs || defs2));
    if (!wrap)
        return gm_stag_json_schema_text(x->c, text + s->off, s->end - s->off, x->so);
    size_t cap = (s->end - s->off) + (defs ? defs->end - defs->off : 0) +
                 (defs2 ? defs2->end - defs2->off : 0) + 128;
    char *buf = gm_mem_alloc(x->c->mem, cap);
    if (!buf)
        return gm_stag_nomem(x->c);
    int n = snprintf(buf, cap, "{\"allOf\":[%.*s]", (int)(s->end - s->off), text + s->off);
    if (type)
        n += snprintf(buf + n, cap - (size_t)n, ",\"type\":\"%s\"", type);
    if (defs)
        n += snprintf(buf + n, cap - (size_t)n, ",\"$defs\":%.*s", (int)(defs->end - defs->off),
                      text + defs->off);
    if (defs2)
        n += snprintf(buf + n, cap - (size_t)n, ",\"definitions\":%.*s",
                      (int)(defs2->end - defs2->off), text + defs2->off);
    n += snprintf(buf + n, cap - (size_t)n, "}");
    uint32_t node = gm_stag_json_schema_text(x->c, buf, (size_t)n, x->so);
    gm_mem_free(x->c->mem, buf);
    return node;
}

/* A JSON literal as raw text: a string's characters, other values their JSON text. */
static uint32_t literal(xg *x, const gm_jv *v)
{
    if (v->kind == GM_JV_STRING)
        return gm_stag_text(x->c, v->u.s, v->n);
    return gm_stag_text(x->c, x->c->doc.text + v->off, v->end - v->off);
}

/* A string value written raw (the string schema s). */
static uint32_t raw_string(xg *x, const gm_jv *s)
{
    const gm_jv *fmt = get(s, "format"), *pat = get(s, "pattern");
    const gm_jv *mn = get(s, "minLength"), *mx = get(s, "maxLength");
    if (fmt && fmt->kind == GM_JV_STRING) {
        const sc_format *f = sc_format_find(fmt->u.s);
        if (f)
            return regex_node(x, fmt, f->regex);
    }
    if (pat && pat->kind == GM_JV_STRING)
        return regex_node(x, pat, pat->u.s);
    if ((mn && mn->kind == GM_JV_NUMBER) || (mx && mx->kind == GM_JV_NUMBER)) {
        unsigned long lo = mn && mn->kind == GM_JV_NUMBER ? strtoul(mn->u.s, NULL, 10) : 0;
        unsigned long hi = mx && mx->kind == GM_JV_NUMBER ? strtoul(mx->u.s, NULL, 10)
                                                          : GM_EX_INF;
        if (lo > GM_EBNF_MAX_REPEAT || (hi != GM_EX_INF && hi > GM_EBNF_MAX_REPEAT))
            return gm_stag_fail(x->c, mn ? mn : mx, GM_ERR_LIMIT, "a string length above %u",
                                (unsigned)GM_EBNF_MAX_REPEAT);
        /* at most hi characters and never the closing tag (nor a special token's text):
           the raw free text with a bound, exact (UNTIL counts characters, UTF-8 mode) */
        if (lo == 0 && !(x->c->until_flags & GM_UNTIL_BYTES)) {
            uint32_t close = gm_ebnf_add_bytes(x->c->g, x->st->suffix, strlen(x->st->suffix));
            return close == GM_EX_NONE ? gm_stag_nomem(x->c)
                                       : gm_stag_free_text_max(x->c, &close, 1, (uint32_t)hi);
        }
        gm_cpset set = {0};
        if (gm_cpset_add_range(x->c->mem, &set, 0, 0x10ffff))
            return gm_stag_nomem(x->c);
        uint32_t one = gm_ebnf_add_set(x->c->g, &set);
        if (one == GM_EX_NONE)
            return gm_stag_nomem(x->c);
        return rep(x, one, (uint32_t)lo, (uint32_t)hi);
    }
    return x->raw;
}

static uint32_t value(xg *x, const gm_jv *s);
static uint32_t params(xg *x, const gm_jv *obj);
static uint32_t cohere_param(xg *x, const char *name, uint32_t key, const gm_jv *s,
                             const char *type);

/* A cohere list: the items as unnamed value tags, one after another. */
static uint32_t cohere_list(xg *x, const gm_jv *s)
{
    const gm_jv *prefix = get(s, "prefixItems"), *items = get(s, "items");
    if (items && items->kind == GM_JV_ARRAY) { /* draft 4's tuple form */
        prefix = items;
        items = get(s, "additionalItems");
    }
    const gm_jv *mn = get(s, "minItems"), *mx = get(s, "maxItems");
    unsigned long lo = mn && mn->kind == GM_JV_NUMBER ? strtoul(mn->u.s, NULL, 10) : 0;
    unsigned long hi = mx && mx->kind == GM_JV_NUMBER ? strtoul(mx->u.s, NULL, 10) : GM_EX_INF;
    uint32_t np = prefix && prefix->kind == GM_JV_ARRAY ? prefix->n : 0;
    uint32_t parts[65];
    size_t n = 0;
    for (uint32_t i = 0; i < np && n < 64; i++)
        parts[n++] = cohere_param(x, NULL, GM_EX_NONE, prefix->u.items[i], NULL);
    bool more = items ? items->kind != GM_JV_FALSE : np == 0;
    if (more && (hi == GM_EX_INF || hi > np)) {
        static const gm_jv any = {.kind = GM_JV_TRUE};
        uint32_t item = cohere_param(x, NULL, GM_EX_NONE, items ? items : &any, NULL);
        uint32_t min = lo > np ? (uint32_t)(lo - np) : 0;
        uint32_t max = hi == GM_EX_INF ? GM_EX_INF : (uint32_t)(hi - np);
        parts[n++] = rep(x, item, min, max);
    }
    return n ? seq(x, parts, n) : gm_stag_text(x->c, "", 0);
}

/* The cohere type attribute of a single-kind schema (after resolving). */
static const char *cohere_type(const gm_jv *s, const char *type)
{
    if (!type)
        type = type_of(s);
    const gm_jv *k = get(s, "const");
    if (k)
        return k->kind == GM_JV_STRING ? "raw" : "json";
    const gm_jv *e = get(s, "enum");
    if (e && e->kind == GM_JV_ARRAY && e->n)
        return e->u.items[0]->kind == GM_JV_STRING ? "raw" : "json";
    if (type && !strcmp(type, "string"))
        return "raw";
    if (type && !strcmp(type, "object"))
        return "dict";
    if (type && !strcmp(type, "array"))
        return "list";
    return "json";
}

/* A value of s with the type `type` (from a list of types) where given. */
static uint32_t typed_value(xg *x, const gm_jv *s, const char *type)
{
    bool cohere = x->st->kind == XS_COHERE;
    const gm_jv *k = get(s, "const"), *e = get(s, "enum");
    if (k)
        return literal(x, k);
    if (e && e->kind == GM_JV_ARRAY) {
        uint32_t ids[256];
        size_t n = 0;
        for (uint32_t i = 0; i < e->n && n < 256; i++)
            ids[n++] = literal(x, e->u.items[i]);
        return alt(x, ids, n);
    }
    if (!type)
        type = type_of(s);
    if (type && !strcmp(type, "string"))
        return raw_string(x, s);
    if (cohere && type && !strcmp(type, "object"))
        return params(x, s);
    if (cohere && type && !strcmp(type, "array"))
        return cohere_list(x, s);
    return json_value(x, s, type && s->kind == GM_JV_OBJECT && gm_jv_get(s, "type") &&
                                    gm_jv_get(s, "type")->kind == GM_JV_ARRAY ? type : NULL);
}

/* The alternatives of s (anyOf, oneOf, a type list), or 0 when it has none. */
static uint32_t options(const gm_jv *s, const gm_jv **arr, const gm_jv **types)
{
    *arr = get(s, "anyOf") ? get(s, "anyOf") : get(s, "oneOf");
    *types = NULL;
    if (*arr && (*arr)->kind == GM_JV_ARRAY && (*arr)->n)
        return (*arr)->n;
    *arr = NULL;
    const gm_jv *t = get(s, "type");
    if (t && t->kind == GM_JV_ARRAY && t->n > 1 && !get(s, "enum") && !get(s, "const")) {
        *types = t;
        return t->n;
    }
    return 0;
}

/* A parameter's value under s (plain styles; cohere dicts and lists go through it too). */
static uint32_t value(xg *x, const gm_jv *s)
{
    s = resolve(x, s);
    if (!s)
        return GM_EX_NONE;
    if (s->kind == GM_JV_FALSE)
        return alt(x, NULL, 0);
    if (is_any(s)) {
        if (x->st->kind == XS_COHERE)
            return x->any_json;
        uint32_t ids[3] = {x->raw, json_value(x, s, "array"), json_value(x, s, "object")};
        return alt(x, ids, 3);
    }
    const gm_jv *arr, *types;
    uint32_t n = options(s, &arr, &types);
    if (n) {
        uint32_t ids[64];
        uint32_t k = 0;
        for (uint32_t i = 0; i < n && k < 64; i++)
            ids[k++] = arr ? value(x, arr->u.items[i])
                           : typed_value(x, s, types->u.items[i]->kind == GM_JV_STRING
                                                   ? types->u.items[i]->u.s : "null");
        return alt(x, ids, k);
    }
    const gm_jv *all = get(s, "allOf");
    if (all && all->kind == GM_JV_ARRAY && all->n == 1 && gm_jv_unknown_key(s, (const char *[]){
                                                              "allOf", "description", "title",
                                                              NULL}) == NULL)
        return value(x, all->u.items[0]);
    /* a cohere dict refers to itself through $ref: one rule per schema */
    if (x->st->kind == XS_COHERE && x->memo) {
        if (x->memo[s->id])
            return gm_ebnf_add_ref(x->c->g, x->memo[s->id] - 1);
        uint32_t rule;
        uint32_t ref = fresh_rule(x, &rule);
        if (ref == GM_EX_NONE)
            return GM_EX_NONE;
        x->memo[s->id] = rule + 1;
        uint32_t body = typed_value(x, s, NULL);
        if (body == GM_EX_NONE)
            return GM_EX_NONE;
        x->c->g->rules[rule].body = body;
        return ref;
    }
    return typed_value(x, s, NULL);
}

/* ---- parameters ----------------------------------------------------------- */

/* Kimi K3's type attribute of s: one type, or NULL for any (note [xml styles]). */
static const char *kimi_type(xg *x, const gm_jv *s)
{
    s = resolve(x, s);
    if (!s || is_any(s) || get(s, "anyOf") || get(s, "oneOf"))
        return NULL;
    const gm_jv *k = get(s, "const"), *e = get(s, "enum");
    const gm_jv *one[1] = {k};
    const gm_jv *const *vals = k ? one : e && e->kind == GM_JV_ARRAY ? (const gm_jv *const *)e->u.items
                                                                    : NULL;
    uint32_t nv = k ? 1 : e && e->kind == GM_JV_ARRAY ? e->n : 0;
    if (vals) {
        const char *common = NULL;
        for (uint32_t i = 0; i < nv; i++) {
            static const char *const names[] = {"null", "boolean", "boolean", "number",
                                                "string", "array", "object"};
            const char *t = names[vals[i]->kind];
            if (common && strcmp(common, t))
                return NULL;
            common = t;
        }
        return common;
    }
    const char *t = type_of(s);
    if (t && !strcmp(t, "integer"))
        return "number";
    return t;
}

/*
 * Whether every value of s is a string written raw: 1 (a string type, a
 * string const, an enum of strings: the text is the string, so nothing may
 * go around it, and DeepSeek's string attribute is "true"), 0 (no string:
 * JSON, string="false"), -1 (either: alternatives, any value).
 */
static int raw_kind(xg *x, const gm_jv *s)
{
    s = s ? resolve(x, s) : NULL;
    if (!s || s->kind != GM_JV_OBJECT || is_any(s) || get(s, "allOf"))
        return -1;
    const gm_jv *arr, *types;
    if (options(s, &arr, &types))
        return -1;
    const gm_jv *k = get(s, "const"), *e = get(s, "enum");
    if (k)
        return k->kind == GM_JV_STRING;
    if (e && e->kind == GM_JV_ARRAY && e->n) {
        uint32_t strings = 0;
        for (uint32_t i = 0; i < e->n; i++)
            strings += e->u.items[i]->kind == GM_JV_STRING;
        return strings == e->n ? 1 : strings == 0 ? 0 : -1;
    }
    const char *t = type_of(s);
    return t ? !strcmp(t, "string") : -1;
}

/* The text between a key and its value (the style's key suffix). */
static uint32_t key_suffix(xg *x, const gm_jv *s, bool declared)
{
    if (x->st->kind == XS_DEEPSEEK) {
        /* string="true" when the value is a string (DeepSeek's encoder writes it for str
           values), "false" for JSON: a number written raw would parse as a string */
        int raw = raw_kind(x, s);
        uint32_t tf[2] = {lit(x, "true"), lit(x, "false")};
        uint32_t ids[3] = {lit(x, "\" string=\""),
                           raw == 1 ? tf[0] : raw == 0 ? tf[1] : alt(x, tf, 2), lit(x, "\">")};
        return seq(x, ids, 3);
    }
    if (x->st->kind == XS_KIMI) {
        const char *t = declared && s ? kimi_type(x, s) : s ? kimi_type(x, s) : NULL;
        uint32_t tn;
        if (t) {
            tn = lit(x, t);
        } else {
            static const char *const all[] = {"string", "number", "integer", "boolean",
                                              "object", "array", "null"};
            uint32_t ids[7];
            for (int i = 0; i < 7; i++)
                ids[i] = lit(x, all[i]);
            tn = alt(x, ids, 7);
        }
        uint32_t ids[3] = {lit(x, "\" type=\""), tn, lit(x, "\"<|sep|>")};
        return seq(x, ids, 3);
    }
    return lit(x, x->st->key_suffix);
}

/* A value and the closing tag: raw text (a raw string, a string constant, raw: the
   value is a string) directly, anything else with whitespace around. */
static uint32_t value_and_close(xg *x, uint32_t v, bool raw)
{
    uint32_t close = lit(x, x->st->suffix);
    if (v == x->raw || raw) {
        uint32_t ids[2] = {v, close};
        return seq(x, ids, 2);
    }
    uint32_t ids[4] = {x->ws, v, x->ws, close};
    return seq(x, ids, 4);
}

/* One parameter (plain styles): key given as text (name) or as a node (key). */
static uint32_t param(xg *x, const char *name, uint32_t key, const gm_jv *s)
{
    if (x->st->kind == XS_COHERE)
        return cohere_param(x, name, key, s, NULL);
    uint32_t ids[6];
    size_t n = 0;
    ids[n++] = lit(x, x->st->key_prefix);
    if (name && x->st->kind == XS_KIMI) { /* the renderer escapes & and " in attributes */
        char buf[1024];
        size_t k = 0;
        for (const char *p = name; *p && k + 7 < sizeof buf; p++) {
            const char *e = *p == '&' ? "&amp;" : *p == '"' ? "&quot;" : NULL;
            if (e) {
                memcpy(buf + k, e, strlen(e));
                k += strlen(e);
            } else {
                buf[k++] = *p;
            }
        }
        ids[n++] = gm_stag_text(x->c, buf, k);
    } else {
        ids[n++] = name ? lit(x, name) : key;
    }
    ids[n++] = key_suffix(x, s, name != NULL);
    if (x->st->value_prefix[0]) {
        ids[n++] = x->ws;
        ids[n++] = lit(x, x->st->value_prefix);
    }
    static const gm_jv any = {.kind = GM_JV_TRUE};
    ids[n++] = value_and_close(x, value(x, s ? s : &any), raw_kind(x, s) == 1);
    return seq(x, ids, n);
}

/* A cohere value tag: name given as text, as a node or not at all (a list item). */
static uint32_t cohere_param(xg *x, const char *name, uint32_t key, const gm_jv *s,
                             const char *type)
{
    static const gm_jv any = {.kind = GM_JV_TRUE};
    if (!s)
        s = &any;
    if (++x->depth > MAX_XML_DEPTH) {
        x->depth--;
        return gm_stag_fail(x->c, s, GM_ERR_LIMIT, "values nested more than %d deep",
                            MAX_XML_DEPTH);
    }
    uint32_t node = GM_EX_NONE;
    s = resolve(x, s);
    const gm_jv *arr, *types;
    uint32_t n = s && !type ? options(s, &arr, &types) : 0;
    const gm_jv *e = get(s, "enum");
    bool mixed = false;
    for (uint32_t i = 1; s && !type && !n && e && e->kind == GM_JV_ARRAY && i < e->n; i++)
        mixed |= (e->u.items[i]->kind == GM_JV_STRING) != (e->u.items[0]->kind == GM_JV_STRING);
    if (!s) {
        /* reported */
    } else if (n) { /* one tag per alternative, each with its own type */
        uint32_t ids[64];
        uint32_t k = 0;
        for (uint32_t i = 0; i < n && k < 64; i++)
            ids[k++] = arr ? cohere_param(x, name, key, arr->u.items[i], NULL)
                           : cohere_param(x, name, key, s, types->u.items[i]->kind ==
                                          GM_JV_STRING ? types->u.items[i]->u.s : "null");
        node = alt(x, ids, k);
    } else if (mixed) {
        uint32_t ids[2][256];
        uint32_t k[2] = {0, 0};
        for (uint32_t i = 0; i < e->n && k[0] < 256 && k[1] < 256; i++) {
            int raw = e->u.items[i]->kind == GM_JV_STRING;
            ids[raw][k[raw]++] = literal(x, e->u.items[i]);
        }
        uint32_t both[2];
        for (int r = 0; r < 2; r++) {
            uint32_t parts[8];
            size_t np = 0;
            parts[np++] = lit(x, x->st->key_prefix);
            if (name) {
                char buf[600];
                snprintf(buf, sizeof buf, " name=\"%s\"", name);
                parts[np++] = lit(x, buf);
            }
            parts[np++] = lit(x, r ? " type=\"raw\">" : " type=\"json\">");
            parts[np++] = value_and_close(x, alt(x, ids[r], k[r]), r == 1);
            both[r] = seq(x, parts, np);
        }
        node = alt(x, both, 2);
    } else {
        uint32_t parts[8];
        size_t np = 0;
        parts[np++] = lit(x, x->st->key_prefix);
        if (name) {
            char buf[600];
            snprintf(buf, sizeof buf, " name=\"%s\"", name);
            parts[np++] = lit(x, buf);
        } else if (key != GM_EX_NONE) {
            parts[np++] = lit(x, " name=\"");
            parts[np++] = key;
            parts[np++] = lit(x, "\"");
        }
        char tbuf[32];
        snprintf(tbuf, sizeof tbuf, " type=\"%s\">", cohere_type(s, type));
        parts[np++] = lit(x, tbuf);
        uint32_t v = type ? typed_value(x, s, type) : value(x, s);
        parts[np++] = value_and_close(x, v, !strcmp(cohere_type(s, type), "raw"));
        node = seq(x, parts, np);
    }
    x->depth--;
    return node;
}

/* A key: a name not among the declared ones (cohere), as XGrammar's trie of them. */
static uint32_t other_name(xg *x, const gm_jv *props)
{
    if (x->st->kind != XS_COHERE || !props || props->kind != GM_JV_OBJECT || !props->n)
        return x->name;
    /* names that are a declared one are refused by an exact check: a name is any
       identifier, and the alternatives below cover every identifier but those */
    uint32_t alts[2];
    size_t na = 0;
    /* identifiers longer than the longest declared name, or differing somewhere */
    size_t longest = 0;
    for (uint32_t i = 0; i < props->n; i++)
        if (props->u.members[i].klen > longest)
            longest = props->u.members[i].klen;
    (void)alts;
    (void)na;
    /* build by brute force over prefixes: for each declared name d and each position
       j < |d|, the identifiers that share d[0..j) and then differ (when no other
       declared name continues that way), plus the proper prefixes and extensions */
    uint32_t ids[512];
    size_t n = 0;
    uint32_t first = charset(x, "AZ__az"), cont = charset(x, "AZ__az09");
    uint32_t tail = rep(x, cont, 0, GM_EX_INF);
    /* the empty prefix: a first character no declared name starts with */
    char used[256] = {0};
    for (uint32_t i = 0; i < props->n; i++)
        used[(uint8_t)props->u.members[i].key[0]] = 1;
    char ranges[256];
    size_t r = 0;
    for (int ch = 0; ch < 128 && r + 2 < sizeof ranges; ch++) {
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
        if (ok && !used[ch]) {
            ranges[r++] = (char)ch;
            ranges[r++] = (char)ch;
        }
    }
    ranges[r] = 0;
    if (r) {
        uint32_t p[2] = {charset(x, ranges), tail};
        ids[n++] = seq(x, p, 2);
    }
    /* every prefix P of a declared name (non-empty): P itself unless declared, and P
       followed by a character that continues no declared name with prefix P */
    for (uint32_t i = 0; i < props->n && n + 2 < 512; i++) {
        const char *d = props->u.members[i].key;
        size_t dl = props->u.members[i].klen;
        for (size_t j = 1; j <= dl && n + 2 < 512; j++) {
            bool seen = false; /* an earlier name with the same prefix did this one */
            for (uint32_t q = 0; q < i && !seen; q++)
                seen = props->u.members[q].klen >= j && !memcmp(props->u.members[q].key, d, j);
            if (seen)
                continue;
            bool declared = false;
            char next[256] = {0};
            for (uint32_t q = 0; q < props->n; q++) {
                const gm_jmember *m = &props->u.members[q];
                if (m->klen >= j && !memcmp(m->key, d, j)) {
                    if (m->klen == j)
                        declared = true;
                    else
                        next[(uint8_t)m->key[j]] = 1;
                }
            }
            if (!declared)
                ids[n++] = gm_stag_text(x->c, d, j);
            r = 0;
            for (int ch = 0; ch < 128 && r + 2 < sizeof ranges; ch++) {
                bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
                          (ch >= '0' && ch <= '9');
                if (ok && !next[ch]) {
                    ranges[r++] = (char)ch;
                    ranges[r++] = (char)ch;
                }
            }
            ranges[r] = 0;
            if (r) {
                uint32_t p[3] = {gm_stag_text(x->c, d, j), charset(x, ranges), tail};
                ids[n++] = seq(x, p, 3);
            }
        }
    }
    (void)first;
    (void)longest;
    return alt(x, ids, n);
}

/* The parameters of the object schema obj, whitespace around and between them. */
static uint32_t params(xg *x, const gm_jv *obj)
{
    const gm_jv *props = get(obj, "properties"), *req = get(obj, "required");
    const gm_jv *addl = get(obj, "additionalProperties");
    if (!addl)
        addl = get(obj, "unevaluatedProperties");
    const gm_jv *pat = get(obj, "patternProperties"), *names = get(obj, "propertyNames");
    bool any = obj->kind == GM_JV_TRUE || is_any(obj);
    uint32_t decl[128], other[66];
    bool required[128];
    size_t nd = 0, no = 0, nreq = 0;
    for (uint32_t i = 0; props && props->kind == GM_JV_OBJECT && i < props->n && nd < 128; i++) {
        const gm_jmember *m = &props->u.members[i];
        size_t mark = gm_stag_push_key(x->c, "properties");
        gm_stag_push_key(x->c, m->key);
        decl[nd] = param(x, m->key, GM_EX_NONE, m->value);
        gm_stag_pop(x->c, mark);
        required[nd] = false;
        for (uint32_t k = 0; req && req->kind == GM_JV_ARRAY && k < req->n; k++)
            if (req->u.items[k]->kind == GM_JV_STRING && !strcmp(req->u.items[k]->u.s, m->key))
                required[nd] = true;
        nreq += required[nd];
        nd++;
    }
    for (uint32_t i = 0; pat && pat->kind == GM_JV_OBJECT && i < pat->n && no < 64; i++) {
        const gm_jmember *m = &pat->u.members[i];
        other[no++] = param(x, NULL, regex_node(x, m->value, m->key), m->value);
    }
    bool more = any || (addl && addl->kind != GM_JV_FALSE) ||
                (names && !(addl && addl->kind == GM_JV_FALSE));
    if (more) {
        const gm_jv *np = get(names, "pattern");
        uint32_t key = np && np->kind == GM_JV_STRING ? regex_node(x, np, np->u.s)
                                                      : other_name(x, props);
        other[no++] = param(x, NULL, key, addl && addl->kind != GM_JV_TRUE ? addl : NULL);
    }
    if (x->c->status != GM_OK)
        return GM_EX_NONE;
    bool any_order = x->so->any_order;
    uint32_t body[131];
    size_t nb = 0;
    body[nb++] = x->ws;
    if (any_order && (nd || no)) {
        uint32_t all[200];
        size_t na = 0;
        for (size_t i = 0; i < nd; i++)
            all[na++] = decl[i];
        for (size_t i = 0; i < no; i++)
            all[na++] = other[i];
        const gm_jv *mn = get(obj, "minProperties"), *mx = get(obj, "maxProperties");
        unsigned long lo = mn && mn->kind == GM_JV_NUMBER ? strtoul(mn->u.s, NULL, 10) : 0;
        unsigned long hi = mx && mx->kind == GM_JV_NUMBER ? strtoul(mx->u.s, NULL, 10)
                                                          : GM_EX_INF;
        if (lo < nreq)
            lo = nreq;
        uint32_t one[2] = {alt(x, all, na), x->ws};
        body[nb++] = rep(x, seq(x, one, 2), (uint32_t)lo, (uint32_t)hi);
    } else {
        for (size_t i = 0; i < nd; i++) {
            uint32_t one[2] = {decl[i], x->ws};
            uint32_t p = seq(x, one, 2);
            body[nb++] = required[i] ? p : rep(x, p, 0, 1);
        }
        if (no) {
            uint32_t one[2] = {alt(x, other, no), x->ws};
            body[nb++] = rep(x, seq(x, one, 2), 0, GM_EX_INF);
        }
    }
    return seq(x, body, nb);
}

uint32_t gm_stag_xml_schema(stag *c, const gm_jv *v, const gm_jv *schema, const char *style,
                            const gm_schema_options *so)
{
    xg x = {.c = c, .root = schema, .so = so};
    for (size_t i = 0; i < sizeof styles / sizeof *styles; i++)
        if (!strcmp(styles[i].name, style))
            x.st = &styles[i];
    if (!x.st)
        return gm_stag_fail(c, v, GM_ERR_FORMAT, "unknown style \"%s\"", style);
    uint32_t ws_max = GM_EX_INF;
    if (so->whitespace == GM_SCHEMA_WS_FLEXIBLE && so->max_ws_run &&
        so->max_ws_run < GM_EBNF_MAX_REPEAT && gm_jv_get(v, "max_whitespace_cnt"))
        ws_max = so->max_ws_run;
    x.ws = rep(&x, charset(&x, "\t\n  "), 0, ws_max);
    uint32_t close = gm_ebnf_add_bytes(c->g, x.st->suffix, strlen(x.st->suffix));
    if (close == GM_EX_NONE)
        return gm_stag_nomem(c);
    x.raw = gm_stag_free_text(c, &close, 1);
    uint32_t first = charset(&x, "AZ__az"), cont = charset(&x, "AZ__az09");
    uint32_t nm[2] = {first, rep(&x, cont, 0, GM_EX_INF)};
    x.name = seq(&x, nm, 2);
    /* a parser cuts a JSON value at the closing tag: its strings must not hold it (note
       [excluded text] in schema/exclude.c). Kimi K3's tag, whose prefix "<|close|>argument<|"
       ends as it begins, is not of the form that note handles: its strings hold neither
       block marker (note [excluded texts]), as the preset's free text does not
       (dispatch/tool_family_kimi_k3.c), so never the tag */
    c->json_exclude = x.st->kind == XS_KIMI ? "<|close|>" : x.st->suffix;
    c->json_exclude2 = x.st->kind == XS_KIMI ? "<|open|>" : NULL;
    if (x.st->kind == XS_COHERE) {
        static const char any_text[] = "{}";
        x.any_json = gm_stag_json_schema_text(c, any_text, 2, so);
        x.memo = gm_mem_calloc(c->mem, c->doc.nvalues + 1, sizeof *x.memo);
        if (!x.memo)
            return gm_stag_nomem(c);
    }
    uint32_t node = GM_EX_NONE;
    const gm_jv *s = c->status == GM_OK ? resolve(&x, schema) : NULL;
    if (s) {
        const char *t = type_of(s);
        if (s->kind == GM_JV_TRUE || is_any(s) || (t && !strcmp(t, "object")))
            node = params(&x, s);
        else
            node = value(&x, s);
    }
    c->json_exclude = NULL;
    c->json_exclude2 = NULL;
    gm_mem_free(c->mem, x.memo);
    if (c->status != GM_OK || node == GM_EX_NONE)
        return GM_EX_NONE;
    if (c->unshared)
        return node;
    /* The arguments are a rule of their own, never inlined, as a JSON Schema's root is
       (json_schema in stag.c): inlined, every tool's parameters went into the dispatch
       automaton, built twice where the calls repeat (the first call, then the loop), and
       its subset construction and minimization were most of a family's compile time
       (qwen_3_coder, glm_4_7, minimax with 32 tools). The language is the same. */
    uint32_t rule;
    uint32_t ref = fresh_rule(&x, &rule);
    if (ref == GM_EX_NONE)
        return GM_EX_NONE;
    c->g->rules[rule].body = node;
    c->g->rules[rule].noinline = 1;
    return ref;
}
