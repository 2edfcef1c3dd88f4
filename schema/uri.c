/* URI resolution and JSON pointers (uri.h). */
#include "schema/uri.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"

typedef struct uri_parts {
    const char *scheme, *auth, *path, *query, *frag;
    size_t nscheme, nauth, npath, nquery, nfrag;
    bool has_scheme, has_auth, has_query, has_frag;
} uri_parts;

static bool scheme_char(char c, bool first)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return !first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

static void parse(const char *s, size_t n, uri_parts *u)
{
    memset(u, 0, sizeof *u);
    size_t i = 0;
    while (i < n && scheme_char(s[i], i == 0))
        i++;
    if (i > 0 && i < n && s[i] == ':') {
        u->has_scheme = true;
        u->scheme = s;
        u->nscheme = i;
        s += i + 1;
        n -= i + 1;
    }
    if (n >= 2 && s[0] == '/' && s[1] == '/') {
        size_t j = 2;
        while (j < n && s[j] != '/' && s[j] != '?' && s[j] != '#')
            j++;
        u->has_auth = true;
        u->auth = s + 2;
        u->nauth = j - 2;
        s += j;
        n -= j;
    }
    size_t j = 0;
    while (j < n && s[j] != '?' && s[j] != '#')
        j++;
    u->path = s;
    u->npath = j;
    s += j;
    n -= j;
    if (n && s[0] == '?') {
        j = 1;
        while (j < n && s[j] != '#')
            j++;
        u->has_query = true;
        u->query = s + 1;
        u->nquery = j - 1;
        s += j;
        n -= j;
    }
    if (n && s[0] == '#') {
        u->has_frag = true;
        u->frag = s + 1;
        u->nfrag = n - 1;
    }
}

/* RFC 3986 §5.2.4 on the NUL-terminated string p, in place (the output never outruns the input). */
static void remove_dot_segments(char *p)
{
    char *in = p, *out = p;
    while (*in) {
        if (!strncmp(in, "../", 3)) {
            in += 3;
        } else if (!strncmp(in, "./", 2)) {
            in += 2;
        } else if (!strncmp(in, "/./", 3)) {
            in += 2;
        } else if (!strcmp(in, "/.")) {
            in += 1;
            in[0] = '/';
        } else if (!strncmp(in, "/../", 4) || !strcmp(in, "/..")) {
            if (in[3]) {
                in += 3;
            } else {
                in += 2;
                in[0] = '/';
            }
            while (out > p && *--out != '/')
                ;
        } else if (!strcmp(in, ".") || !strcmp(in, "..")) {
            break;
        } else {
            char *seg = in + (*in == '/');
            while (*seg && *seg != '/')
                seg++;
            size_t k = (size_t)(seg - in);
            memmove(out, in, k);
            out += k;
            in = seg;
        }
    }
    *out = 0;
}

static void put(gm_strbuf *b, const char *s, size_t n)
{
    gm_strbuf_append(b, s, n);
}

/* Appends path with its dot segments removed. */
static void put_path(gm_strbuf *out, const char *path, size_t n)
{
    char buf[1024];
    char *p = n < sizeof buf ? buf : malloc(n + 1);
    if (!p) {
        out->failed = true;
        return;
    }
    memcpy(p, path, n);
    p[n] = 0;
    remove_dot_segments(p);
    put(out, p, strlen(p));
    if (p != buf)
        free(p);
}

void gm_uri_resolve(const char *base, const char *ref, size_t reflen, gm_strbuf *out)
{
    uri_parts b, r;
    parse(base, strlen(base), &b);
    parse(ref, reflen, &r);
    const uri_parts *auth_from, *query_from = &r;
    const char *scheme = r.has_scheme ? r.scheme : b.scheme;
    size_t nscheme = r.has_scheme ? r.nscheme : b.nscheme;
    bool has_scheme = r.has_scheme || b.has_scheme;
    if (has_scheme) {
        put(out, scheme, nscheme);
        put(out, ":", 1);
    }
    if (r.has_scheme) {
        auth_from = &r;
    } else if (r.has_auth) {
        auth_from = &r;
    } else {
        auth_from = &b;
    }
    if (auth_from->has_auth) {
        put(out, "//", 2);
        put(out, auth_from->auth, auth_from->nauth);
    }
    if (r.has_scheme || r.has_auth) {
        put_path(out, r.path, r.npath);
    } else if (r.npath == 0) {
        put(out, b.path, b.npath);
        if (!r.has_query)
            query_from = &b;
    } else if (r.path[0] == '/') {
        put_path(out, r.path, r.npath);
    } else {
        /* merge: base path up to its last '/', then the reference's path */
        gm_strbuf m;
        gm_strbuf_init(&m, out->mem);
        if (b.has_auth && b.npath == 0) {
            put(&m, "/", 1);
        } else {
            size_t k = b.npath;
            while (k > 0 && b.path[k - 1] != '/')
                k--;
            put(&m, b.path, k);
        }
        put(&m, r.path, r.npath);
        if (m.failed)
            out->failed = true;
        else
            put_path(out, gm_strbuf_str(&m), m.n);
        gm_strbuf_free(&m);
    }
    if (query_from->has_query) {
        put(out, "?", 1);
        put(out, query_from->query, query_from->nquery);
    }
    if (r.has_frag) {
        put(out, "#", 1);
        put(out, r.frag, r.nfrag);
    }
}

size_t gm_uri_strip_fragment(const char *uri, size_t len)
{
    const char *h = memchr(uri, '#', len);
    return h ? (size_t)(h - uri) : len;
}

const gm_jv *gm_json_pointer(const gm_jv *root, const char *frag, size_t len, bool *bad_escape)
{
    *bad_escape = false;
    const gm_jv *v = root;
    size_t i = 0;
    if (len == 0)
        return v;
    if (frag[0] != '/') {
        *bad_escape = true;
        return NULL;
    }
    char buf[256];
    while (i < len && v) {
        i++; /* the '/' */
        size_t n = 0;
        while (i < len && frag[i] != '/') {
            char c = frag[i++];
            if (c == '%') {
                int h1 = i < len ? gm_hex_value(frag[i]) : -1, h2 = i + 1 < len ? gm_hex_value(frag[i + 1]) : -1;
                if (h1 < 0 || h2 < 0) {
                    *bad_escape = true;
                    return NULL;
                }
                c = (char)(h1 * 16 + h2);
                i += 2;
            }
            if (n + 1 >= sizeof buf)
                return NULL;
            buf[n++] = c;
        }
        /* ~1 -> '/', ~0 -> '~' (after percent-decoding) */
        size_t m = 0;
        for (size_t k = 0; k < n; k++) {
            if (buf[k] == '~') {
                if (k + 1 >= n || (buf[k + 1] != '0' && buf[k + 1] != '1')) {
                    *bad_escape = true;
                    return NULL;
                }
                buf[m++] = buf[k + 1] == '0' ? '~' : '/';
                k++;
            } else {
                buf[m++] = buf[k];
            }
        }
        if (v->kind == GM_JV_OBJECT) {
            v = gm_jv_getn(v, buf, m);
        } else if (v->kind == GM_JV_ARRAY) {
            if (m == 0 || (m > 1 && buf[0] == '0'))
                return NULL;
            uint64_t idx = 0;
            for (size_t k = 0; k < m; k++) {
                if (buf[k] < '0' || buf[k] > '9' || idx > UINT32_MAX)
                    return NULL;
                idx = idx * 10 + (uint64_t)(buf[k] - '0');
            }
            v = idx < v->n ? v->u.items[idx] : NULL;
        } else {
            return NULL;
        }
    }
    return v;
}

void gm_json_pointer_append(gm_strbuf *ptr, const char *key, size_t len)
{
    gm_strbuf_putc(ptr, '/');
    for (size_t i = 0; i < len; i++) {
        if (key[i] == '~')
            gm_strbuf_puts(ptr, "~0");
        else if (key[i] == '/')
            gm_strbuf_puts(ptr, "~1");
        else
            gm_strbuf_putc(ptr, key[i]);
    }
}
