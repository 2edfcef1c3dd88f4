/*
 * The fast reader of model.vocab.
 *
 * note [fast vocab]
 * jansson spends about 190 instructions per byte on a tokenizer.json (it
 * reads through a character stream and builds a hash table of JSON values),
 * which made model.vocab most of the load time of a 200K vocabulary. Its
 * shape is fixed and simple, so this file reads it directly: '{', then
 * "key": integer pairs, '}'. The subset accepted is chosen so that jansson
 * accepts the same text with the same meaning:
 *   - keys: escapes \" \\ \/ \b \f \n \r \t and \uXXXX (surrogate pairs
 *     combined; a lone surrogate or \u0000 declines), raw bytes as
 *     well-formed UTF-8 (no surrogates, nothing past U+10FFFF), no control
 *     characters;
 *   - values: -?(0|[1-9][0-9]*) with at most 18 digits (a fraction, an
 *     exponent or a bigger number declines);
 *   - no duplicate keys (jansson is run with JSON_REJECT_DUPLICATES).
 * Anything else declines, and the caller parses the whole file with
 * jansson, which then gives its own error. fuzz_vocab checks that loading
 * with and without this reader gives the same vocabulary or the same error.
 */
#include "vocab/json_vocab.h"

#include <string.h>

#include "vocab/hf_decoder.h"
#include "base/hash.h"

enum { DECLINE = -1, NOMEM = -2 };

static size_t skip_ws(const char *s, size_t i, size_t n)
{
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        i++;
    return i;
}

static int hex4(const char *s, uint32_t *v)
{
    uint32_t x = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return 0;
        x = x << 4 | (uint32_t)d;
    }
    *v = x;
    return 1;
}

long gm_json_read_string(const char *s, size_t n, size_t *i, char *out)
{
    size_t p = *i + 1, o = 0;
    while (p < n) {
        unsigned char c = (unsigned char)s[p];
        if (c == '"') {
            *i = p + 1;
            return (long)o;
        }
        if (c < 0x20)
            return DECLINE;
        if (c < 0x80 && c != '\\') {
            out[o++] = (char)c;
            p++;
            continue;
        }
        if (c >= 0x80) {
            uint32_t cp;
            size_t k = gm_utf8_decode((const uint8_t *)s + p, n - p, &cp);
            if (k == 0)
                return DECLINE;
            memcpy(out + o, s + p, k);
            o += k;
            p += k;
            continue;
        }
        if (p + 1 >= n)
            return DECLINE;
        char e = s[p + 1];
        p += 2;
        switch (e) {
        case '"': out[o++] = '"'; break;
        case '\\': out[o++] = '\\'; break;
        case '/': out[o++] = '/'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'u': {
            uint32_t cp, lo;
            if (p + 4 > n || !hex4(s + p, &cp))
                return DECLINE;
            p += 4;
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return DECLINE;
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (p + 6 > n || s[p] != '\\' || s[p + 1] != 'u' || !hex4(s + p + 2, &lo) ||
                    lo < 0xdc00 || lo > 0xdfff)
                    return DECLINE;
                p += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (cp == 0)
                return DECLINE;
            o += gm_utf8_encode((uint8_t *)out + o, cp);
            break;
        }
        default:
            return DECLINE;
        }
    }
    return DECLINE;
}

static int read_int(const char *s, size_t n, size_t *i, int64_t *v)
{
    size_t p = *i;
    bool neg = p < n && s[p] == '-';
    p += neg;
    size_t d0 = p;
    int64_t x = 0;
    while (p < n && s[p] >= '0' && s[p] <= '9' && p - d0 < 18) /* no overflow */
        x = x * 10 + (s[p++] - '0');
    size_t nd = p - d0;
    if (nd == 0 || nd > 18 || (nd > 1 && s[d0] == '0'))
        return DECLINE;
    if (p < n && (s[p] == '.' || s[p] == 'e' || s[p] == 'E' || (s[p] >= '0' && s[p] <= '9')))
        return DECLINE;
    *v = neg ? -x : x;
    *i = p;
    return 0;
}

/* Adds key index k to the hash set; DECLINE on a duplicate. */
static int insert(gm_json_vocab *v, size_t k)
{
    const char *key = v->keys + v->off[k];
    size_t len = v->off[k + 1] - v->off[k] - 1;
    size_t mask = v->nslots - 1;
    for (size_t i = (size_t)gm_hash_bytes(key, len, 0) & mask;; i = (i + 1) & mask) {
        uint32_t s = v->slots[i];
        if (!s) {
            v->slots[i] = (uint32_t)k + 1;
            return 0;
        }
        size_t o = v->off[s - 1], l = v->off[s] - o - 1;
        if (l == len && !memcmp(v->keys + o, key, len))
            return DECLINE;
    }
}

/* Builds the hash set over keys[0..n); DECLINE on a duplicate key. */
static int index_keys(gm_json_vocab *v)
{
    size_t ns = 64;
    while (ns < 2 * v->n)
        ns *= 2;
    v->slots = gm_mem_calloc(v->mem, ns, sizeof *v->slots);
    if (!v->slots)
        return NOMEM;
    v->nslots = ns;
    for (size_t k = 0; k < v->n; k++)
        if (insert(v, k) < 0)
            return DECLINE;
    return 0;
}

gm_status gm_json_vocab_index(gm_json_vocab *v)
{
    int r = index_keys(v);
    return r == 0 ? GM_OK : r == NOMEM ? GM_ERR_NOMEM : GM_ERR_FORMAT;
}

static int parse(gm_json_vocab *v, const char *s, size_t n)
{
    gm_mem *m = v->mem;
    size_t cap = 1024;
    v->keys = gm_mem_alloc(m, n + 1); /* a decoded key and its NUL fit in its quoted form */
    v->off = gm_mem_reallocarray(m, NULL, cap + 1, sizeof *v->off);
    v->ids = gm_mem_reallocarray(m, NULL, cap, sizeof *v->ids);
    if (!v->keys || !v->off || !v->ids)
        return NOMEM;
    size_t i = skip_ws(s, 0, n), o = 0;
    if (i >= n || s[i] != '{')
        return DECLINE;
    i = skip_ws(s, i + 1, n);
    v->off[0] = 0;
    if (i < n && s[i] == '}') {
        i++;
    } else {
        for (;;) {
            if (i >= n || s[i] != '"')
                return DECLINE;
            if (v->n == cap) {
                size_t *no = gm_mem_reallocarray(m, v->off, 2 * cap + 1, sizeof *no);
                if (no)
                    v->off = no;
                int64_t *ni = no ? gm_mem_reallocarray(m, v->ids, 2 * cap, sizeof *ni) : NULL;
                if (!ni)
                    return NOMEM;
                v->ids = ni;
                cap *= 2;
            }
            long k = gm_json_read_string(s, n, &i, v->keys + o);
            if (k < 0)
                return DECLINE;
            o += (size_t)k;
            v->keys[o++] = '\0';
            i = skip_ws(s, i, n);
            if (i >= n || s[i] != ':')
                return DECLINE;
            i = skip_ws(s, i + 1, n);
            if (read_int(s, n, &i, &v->ids[v->n]) < 0)
                return DECLINE;
            v->off[++v->n] = o;
            i = skip_ws(s, i, n);
            if (i < n && s[i] == ',') {
                i = skip_ws(s, i + 1, n);
                continue;
            }
            if (i < n && s[i] == '}') {
                i++;
                break;
            }
            return DECLINE;
        }
    }
    if (skip_ws(s, i, n) != n)
        return DECLINE;
    return index_keys(v);
}

void gm_json_vocab_free(gm_json_vocab *v)
{
    gm_mem *m = v->mem;
    gm_mem_free(m, v->keys);
    gm_mem_free(m, v->off);
    gm_mem_free(m, v->ids);
    gm_mem_free(m, v->slots);
    memset(v, 0, sizeof *v);
    v->mem = m;
}

gm_status gm_json_vocab_parse(gm_mem *m, const char *text, size_t len, gm_json_vocab *out)
{
    memset(out, 0, sizeof *out);
    out->mem = m;
    int r = parse(out, text, len);
    if (r == 0)
        return GM_OK;
    gm_json_vocab_free(out);
    if (r == NOMEM)
        return atomic_load(&m->over_limit) ? GM_ERR_LIMIT : GM_ERR_NOMEM;
    return GM_ERR_UNSUPPORTED;
}

size_t gm_json_vocab_find(const gm_json_vocab *v, const char *s, size_t n)
{
    if (!v->nslots)
        return SIZE_MAX;
    size_t mask = v->nslots - 1;
    for (size_t i = (size_t)gm_hash_bytes(s, n, 0) & mask;; i = (i + 1) & mask) {
        uint32_t k = v->slots[i];
        if (!k)
            return SIZE_MAX;
        size_t o = v->off[k - 1], l = v->off[k] - o - 1;
        if (l == n && !memcmp(v->keys + o, s, n))
            return k - 1;
    }
}
