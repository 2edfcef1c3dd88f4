/* The JSON document reader of schema/ (json.h): recursive descent into an arena. */
#include "schema/json.h"

#include <stdlib.h>
#include <string.h>

#include "schema/decimal.h"
#include "base/utf8.h"
#include "base/vec.h"

struct gm_jdoc_block {
    gm_jdoc_block *next;
    size_t used, cap;
    _Alignas(max_align_t) unsigned char data[];
};

void *gm_jdoc_alloc(gm_jdoc *d, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    gm_jdoc_block *b = d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        if (b && b->cap < 1u << 20 && n <= b->cap * 2)
            cap = b->cap * 2 > cap ? b->cap * 2 : cap;
        b = gm_mem_alloc(d->mem, sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = d->blocks;
        b->used = 0;
        b->cap = cap;
        d->blocks = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void gm_jdoc_free(gm_jdoc *d)
{
    if (!d)
        return;
    gm_jdoc_block *b = d->blocks;
    while (b) {
        gm_jdoc_block *next = b->next;
        gm_mem_free(d->mem, b);
        b = next;
    }
    d->blocks = NULL;
    d->root = NULL;
    d->nvalues = 0;
}

typedef struct reader {
    gm_jdoc *d;
    const uint8_t *p;
    size_t len, pos;
    uint32_t depth, max_depth;
    gm_error *err;
    gm_status st;
    GM_VEC(gm_jv *) items;    /* children of the arrays being read, a stack */
    GM_VEC(gm_jmember) members;
    GM_VEC(char) sbuf;        /* the string being decoded */
} reader;

gm_srcloc gm_jdoc_loc(const gm_jdoc *d, uint32_t off)
{
    return gm_srcloc_of_offset(d->name, d->text, d->len, off);
}

static gm_status fail(reader *r, gm_status code, size_t off, const char *what)
{
    if (r->st != GM_OK)
        return r->st;
    r->st = code;
    gm_error_set_at(r->err, code, gm_jdoc_loc(r->d, (uint32_t)off), r->d->text, r->d->len,
                    "%s", what);
    return code;
}

static gm_status nomem(reader *r)
{
    if (r->st == GM_OK)
        r->st = gm_mem_fail(r->d->mem, r->err, "a JSON document");
    return r->st;
}

static void skip_ws(reader *r)
{
    while (r->pos < r->len) {
        uint8_t c = r->p[r->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        r->pos++;
    }
}

static int hex4(const uint8_t *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    *out = v;
    return 0;
}

static int put_utf8(reader *r, uint32_t cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | cp >> 6);
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | cp >> 12);
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | cp >> 18);
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    for (size_t i = 0; i < n; i++)
        if (gm_vec_push(r->d->mem, &r->sbuf, b[i]))
            return -1;
    return 0;
}

/* Reads a string at r->pos (the opening quote); the decoded text, NUL-terminated, in the arena. */
static gm_status read_string(reader *r, const char **out, uint32_t *outlen)
{
    size_t start = r->pos++;
    r->sbuf.n = 0;
    for (;;) {
        if (r->pos >= r->len)
            return fail(r, GM_ERR_SYNTAX, start, "unterminated string");
        uint8_t c = r->p[r->pos];
        if (c == '"') {
            r->pos++;
            break;
        }
        if (c < 0x20)
            return fail(r, GM_ERR_SYNTAX, r->pos, "control character in a string (escape it)");
        if (c == '\\') {
            if (r->pos + 1 >= r->len)
                return fail(r, GM_ERR_SYNTAX, start, "unterminated string");
            uint8_t e = r->p[r->pos + 1];
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *k = e ? strchr(from, e) : NULL;
            if (k) {
                if (gm_vec_push(r->d->mem, &r->sbuf, to[k - from]))
                    return nomem(r);
                r->pos += 2;
                continue;
            }
            if (e != 'u')
                return fail(r, GM_ERR_SYNTAX, r->pos, "invalid escape in a string");
            uint32_t cp;
            if (r->pos + 6 > r->len || hex4(r->p + r->pos + 2, &cp))
                return fail(r, GM_ERR_SYNTAX, r->pos, "invalid \\u escape (four hex digits expected)");
            size_t at = r->pos;
            r->pos += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (r->pos + 6 <= r->len && r->p[r->pos] == '\\' && r->p[r->pos + 1] == 'u' &&
                    !hex4(r->p + r->pos + 2, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    r->pos += 6;
                } else {
                    return fail(r, GM_ERR_SYNTAX, at, "lone surrogate escape in a string");
                }
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                return fail(r, GM_ERR_SYNTAX, at, "lone surrogate escape in a string");
            }
            if (put_utf8(r, cp))
                return nomem(r);
            continue;
        }
        if (c < 0x80) {
            if (gm_vec_push(r->d->mem, &r->sbuf, (char)c))
                return nomem(r);
            r->pos++;
            continue;
        }
        uint32_t cp;
        size_t n = gm_utf8_decode(r->p + r->pos, r->len - r->pos, &cp);
        if (!n)
            return fail(r, GM_ERR_SYNTAX, r->pos, "invalid UTF-8 in a string");
        for (size_t i = 0; i < n; i++)
            if (gm_vec_push(r->d->mem, &r->sbuf, (char)r->p[r->pos + i]))
                return nomem(r);
        r->pos += n;
    }
    if (r->sbuf.n > UINT32_MAX - 1)
        return fail(r, GM_ERR_LIMIT, start, "string too long");
    char *s = gm_jdoc_alloc(r->d, r->sbuf.n + 1);
    if (!s)
        return nomem(r);
    if (r->sbuf.n)
        memcpy(s, r->sbuf.v, r->sbuf.n);
    s[r->sbuf.n] = 0;
    *out = s;
    *outlen = (uint32_t)r->sbuf.n;
    return GM_OK;
}

static gm_jv *new_value(reader *r, gm_jv_kind kind, size_t off)
{
    gm_jv *v = gm_jdoc_alloc(r->d, sizeof *v);
    if (!v) {
        nomem(r);
        return NULL;
    }
    memset(v, 0, sizeof *v);
    v->kind = (uint8_t)kind;
    v->id = r->d->nvalues++;
    v->off = (uint32_t)off;
    return v;
}

static bool match_word(reader *r, const char *w)
{
    size_t n = strlen(w);
    if (r->len - r->pos < n || memcmp(r->p + r->pos, w, n))
        return false;
    r->pos += n;
    return true;
}

static gm_jv *read_value(reader *r);

/* The n children collected on a stack, copied into the arena (*count = n). */
/* Copies n elements from index base of a vector's array (NULL while the vector is empty). */
static void *keep(reader *r, const void *vec, size_t base, size_t n, size_t elem, uint32_t *count)
{
    *count = (uint32_t)n;
    if (!n)
        return NULL;
    const char *src = (const char *)vec + base * elem;
    void *p = gm_jdoc_alloc(r->d, n * elem);
    if (!p) {
        nomem(r);
        return NULL;
    }
    memcpy(p, src, n * elem);
    return p;
}


static gm_jv *read_array(reader *r, gm_jv *v)
{
    size_t base = r->items.n;
    r->pos++;
    skip_ws(r);
    if (r->pos < r->len && r->p[r->pos] == ']') {
        r->pos++;
    } else {
        for (;;) {
            gm_jv *item = read_value(r);
            if (!item)
                return NULL;
            if (gm_vec_push(r->d->mem, &r->items, item)) {
                nomem(r);
                return NULL;
            }
            skip_ws(r);
            if (r->pos < r->len && r->p[r->pos] == ',') {
                r->pos++;
                continue;
            }
            if (r->pos < r->len && r->p[r->pos] == ']') {
                r->pos++;
                break;
            }
            fail(r, GM_ERR_SYNTAX, r->pos, "',' or ']' expected in an array");
            return NULL;
        }
    }
    v->u.items = keep(r, r->items.v, base, r->items.n - base, sizeof *r->items.v, &v->n);
    r->items.n = base;
    return v->n && !v->u.items ? NULL : v;
}

/* members of an object checked for duplicates pairwise as they come */
enum { DUP_SCAN_MAX = 32 };

static int cmp_member(const void *a, const void *b)
{
    const gm_jmember *x = a, *y = b;
    if (x->klen != y->klen)
        return x->klen < y->klen ? -1 : 1;
    int c = memcmp(x->key, y->key, x->klen);
    if (c)
        return c;
    return x->koff < y->koff ? -1 : x->koff > y->koff;
}

/*
 * Duplicate keys among the members from base on, for objects too large for
 * the pairwise scan (quadratic: a 3 MB object took a minute): a sorted
 * copy; the error names the first member, in document order, whose key
 * came before, as the scan would.
 */
static gm_status check_duplicates(reader *r, size_t base)
{
    size_t n = r->members.n - base;
    gm_jmember *t = gm_mem_alloc(r->d->mem, n * sizeof *t);
    if (!t)
        return nomem(r);
    memcpy(t, r->members.v + base, n * sizeof *t);
    qsort(t, n, sizeof *t, cmp_member);
    uint32_t at = UINT32_MAX;
    for (size_t i = 1; i < n; i++)
        if (t[i].klen == t[i - 1].klen && !memcmp(t[i].key, t[i - 1].key, t[i].klen) &&
            t[i].koff < at)
            at = t[i].koff;
    gm_mem_free(r->d->mem, t);
    if (at != UINT32_MAX)
        return fail(r, GM_ERR_SYNTAX, at, "duplicate key in an object");
    return GM_OK;
}

static gm_jv *read_object(reader *r, gm_jv *v)
{
    size_t base = r->members.n;
    r->pos++;
    skip_ws(r);
    if (r->pos < r->len && r->p[r->pos] == '}') {
        r->pos++;
    } else {
        for (;;) {
            skip_ws(r);
            if (r->pos >= r->len || r->p[r->pos] != '"') {
                fail(r, GM_ERR_SYNTAX, r->pos, "a string key expected in an object");
                return NULL;
            }
            gm_jmember m = {0};
            m.koff = (uint32_t)r->pos;
            if (read_string(r, &m.key, &m.klen) != GM_OK)
                return NULL;
            if (r->members.n - base < DUP_SCAN_MAX)
                for (size_t i = base; i < r->members.n; i++)
                    if (r->members.v[i].klen == m.klen &&
                        !memcmp(r->members.v[i].key, m.key, m.klen)) {
                        fail(r, GM_ERR_SYNTAX, m.koff, "duplicate key in an object");
                        return NULL;
                    }
            skip_ws(r);
            if (r->pos >= r->len || r->p[r->pos] != ':') {
                fail(r, GM_ERR_SYNTAX, r->pos, "':' expected after an object key");
                return NULL;
            }
            r->pos++;
            m.value = read_value(r);
            if (!m.value)
                return NULL;
            if (gm_vec_push(r->d->mem, &r->members, m)) {
                nomem(r);
                return NULL;
            }
            skip_ws(r);
            if (r->pos < r->len && r->p[r->pos] == ',') {
                r->pos++;
                continue;
            }
            if (r->pos < r->len && r->p[r->pos] == '}') {
                r->pos++;
                break;
            }
            fail(r, GM_ERR_SYNTAX, r->pos, "',' or '}' expected in an object");
            return NULL;
        }
    }
    if (r->members.n - base > DUP_SCAN_MAX && check_duplicates(r, base) != GM_OK)
        return NULL;
    v->u.members = keep(r, r->members.v, base, r->members.n - base, sizeof *r->members.v, &v->n);
    r->members.n = base;
    return v->n && !v->u.members ? NULL : v;
}

static gm_jv *read_number(reader *r, gm_jv *v)
{
    size_t start = r->pos;
    const uint8_t *p = r->p;
    size_t i = r->pos;
    if (i < r->len && p[i] == '-')
        i++;
    if (i < r->len && p[i] == '0') {
        i++;
    } else if (i < r->len && p[i] >= '1' && p[i] <= '9') {
        while (i < r->len && p[i] >= '0' && p[i] <= '9')
            i++;
    } else {
        fail(r, GM_ERR_SYNTAX, start, "invalid number");
        return NULL;
    }
    if (i < r->len && p[i] == '.') {
        i++;
        if (i >= r->len || p[i] < '0' || p[i] > '9') {
            fail(r, GM_ERR_SYNTAX, i, "digits expected after '.' in a number");
            return NULL;
        }
        while (i < r->len && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    if (i < r->len && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < r->len && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= r->len || p[i] < '0' || p[i] > '9') {
            fail(r, GM_ERR_SYNTAX, i, "digits expected in a number's exponent");
            return NULL;
        }
        while (i < r->len && p[i] >= '0' && p[i] <= '9')
            i++;
    }
    char *s = gm_jdoc_alloc(r->d, i - start + 1);
    if (!s) {
        nomem(r);
        return NULL;
    }
    memcpy(s, p + start, i - start);
    s[i - start] = 0;
    v->u.s = s;
    v->n = (uint32_t)(i - start);
    r->pos = i;
    return v;
}

static gm_jv *read_value(reader *r)
{
    skip_ws(r);
    if (r->pos >= r->len) {
        fail(r, GM_ERR_SYNTAX, r->pos, "a JSON value expected, found the end of the text");
        return NULL;
    }
    size_t off = r->pos;
    uint8_t c = r->p[r->pos];
    gm_jv *v = NULL;
    if (c == '{' || c == '[') {
        if (++r->depth > r->max_depth) {
            fail(r, GM_ERR_LIMIT, off, "JSON nested too deeply");
            return NULL;
        }
        v = new_value(r, c == '{' ? GM_JV_OBJECT : GM_JV_ARRAY, off);
        if (v)
            v = c == '{' ? read_object(r, v) : read_array(r, v);
        r->depth--;
    } else if (c == '"') {
        v = new_value(r, GM_JV_STRING, off);
        if (v && read_string(r, &v->u.s, &v->n) != GM_OK)
            v = NULL;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        v = new_value(r, GM_JV_NUMBER, off);
        if (v)
            v = read_number(r, v);
    } else if (match_word(r, "true")) {
        v = new_value(r, GM_JV_TRUE, off);
    } else if (match_word(r, "false")) {
        v = new_value(r, GM_JV_FALSE, off);
    } else if (match_word(r, "null")) {
        v = new_value(r, GM_JV_NULL, off);
    } else {
        fail(r, GM_ERR_SYNTAX, off, "a JSON value expected");
        return NULL;
    }
    if (v)
        v->end = (uint32_t)r->pos;
    return v;
}

gm_status gm_jdoc_parse(gm_jdoc *d, gm_mem *m, const char *name, const char *text, size_t len,
                        uint32_t max_depth, const gm_limits *limits, gm_error *err)
{
    memset(d, 0, sizeof *d);
    d->mem = m;
    d->name = name;
    d->text = text;
    d->len = len;
    size_t max_len = limits && limits->max_input_bytes ? limits->max_input_bytes : 64u << 20;
    if (len >= UINT32_MAX || len > max_len)
        return gm_error_set_file(err, GM_ERR_LIMIT, name ? name : "JSON",
                                 "the text is %zu bytes, over the limit of %zu", len, max_len);
    reader r = {0};
    r.d = d;
    r.p = (const uint8_t *)text;
    r.len = len;
    r.max_depth = max_depth ? max_depth : 512;
    r.err = err;
    r.st = GM_OK;
    gm_jv *root = read_value(&r);
    if (root) {
        skip_ws(&r);
        if (r.pos != len)
            fail(&r, GM_ERR_SYNTAX, r.pos, "text after the JSON value");
    }
    gm_vec_free(m, &r.items);
    gm_vec_free(m, &r.members);
    gm_vec_free(m, &r.sbuf);
    if (r.st != GM_OK) {
        gm_jdoc_free(d);
        return r.st;
    }
    d->root = root;
    return GM_OK;
}

const gm_jv *gm_jv_getn(const gm_jv *v, const char *key, size_t klen)
{
    if (!v || v->kind != GM_JV_OBJECT)
        return NULL;
    for (uint32_t i = 0; i < v->n; i++)
        if (v->u.members[i].klen == klen && !memcmp(v->u.members[i].key, key, klen))
            return v->u.members[i].value;
    return NULL;
}

const gm_jv *gm_jv_get(const gm_jv *v, const char *key)
{
    return gm_jv_getn(v, key, strlen(key));
}

const gm_jmember *gm_jv_unknown_key(const gm_jv *v, const char *const *allowed)
{
    if (!v || v->kind != GM_JV_OBJECT)
        return NULL;
    for (uint32_t i = 0; i < v->n; i++) {
        const gm_jmember *m = &v->u.members[i];
        bool known = false;
        for (const char *const *a = allowed; *a && !known; a++)
            known = strlen(*a) == m->klen && !memcmp(*a, m->key, m->klen);
        if (!known)
            return m;
    }
    return NULL;
}

bool gm_jv_equal(const gm_jv *a, const gm_jv *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case GM_JV_NUMBER: {
        gm_dec x, y;
        if (gm_dec_parse(&x, a->u.s, a->n) || gm_dec_parse(&y, b->u.s, b->n))
            return a->n == b->n && !memcmp(a->u.s, b->u.s, a->n);
        return gm_dec_cmp(&x, &y) == 0;
    }
    case GM_JV_STRING:
        return a->n == b->n && !memcmp(a->u.s, b->u.s, a->n);
    case GM_JV_ARRAY:
        if (a->n != b->n)
            return false;
        for (uint32_t i = 0; i < a->n; i++)
            if (!gm_jv_equal(a->u.items[i], b->u.items[i]))
                return false;
        return true;
    case GM_JV_OBJECT:
        if (a->n != b->n)
            return false;
        for (uint32_t i = 0; i < a->n; i++) {
            const gm_jv *w = gm_jv_getn(b, a->u.members[i].key, a->u.members[i].klen);
            if (!w || !gm_jv_equal(a->u.members[i].value, w))
                return false;
        }
        return true;
    default:
        return true;
    }
}
