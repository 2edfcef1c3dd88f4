/* The terminal-list format of termfile.h: a line-by-line hand-written parser. */
#include "lexer/termfile.h"

#include <string.h>

#include "base/hex.h"
#include "lexer/utf8_ranges.h"
#include "base/error.h"
#include "base/vec.h"

typedef struct tparser {
    gm_termfile *tf;
    const char *text;
    size_t len, pos;
    gm_error *err;
} tparser;

static gm_status syntax(tparser *p, size_t off, const char *what)
{
    gm_srcloc loc = gm_srcloc_of_offset(p->tf->path, p->text, p->len, off);
    return gm_error_set_at(p->err, GM_ERR_SYNTAX, loc, p->text, p->len, "%s", what);
}

static bool is_name_start(int c)
{
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_name_char(int c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static int peek(const tparser *p)
{
    return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

static void skip_blanks(tparser *p)
{
    while (peek(p) == ' ' || peek(p) == '\t' || peek(p) == '\r')
        p->pos++;
}

/* At the end of a line's content: blanks, an optional comment, then newline or end. */
static gm_status end_of_line(tparser *p)
{
    skip_blanks(p);
    if (peek(p) == '#')
        while (peek(p) != -1 && peek(p) != '\n')
            p->pos++;
    if (peek(p) == '\n') {
        p->pos++;
        return GM_OK;
    }
    if (peek(p) == -1)
        return GM_OK;
    return syntax(p, p->pos, "unexpected text after the definition");
}

static size_t read_name(tparser *p)
{
    size_t start = p->pos;
    if (!is_name_start(peek(p)))
        return 0;
    while (is_name_char(peek(p)))
        p->pos++;
    return p->pos - start;
}

static gm_terminal_spec *find(gm_termfile *tf, const char *name, size_t n)
{
    for (uint32_t i = 0; i < tf->n; i++)
        if (strlen(tf->specs[i].name) == n && !memcmp(tf->specs[i].name, name, n))
            return &tf->specs[i];
    return NULL;
}

/* A "..." literal with Lark's escapes; the unescaped bytes go to *out (allocated). */
static gm_status read_literal(tparser *p, char **out, size_t *outlen)
{
    gm_mem *m = p->tf->mem;
    size_t open = p->pos++;
    GM_VEC(char) buf = {0};
    for (;;) {
        int c = peek(p);
        if (c == -1 || c == '\n') {
            gm_vec_free(m, &buf);
            return syntax(p, open, "unterminated string literal");
        }
        p->pos++;
        if (c == '"')
            break;
        uint8_t bytes[4];
        int nb = 1;
        bytes[0] = (uint8_t)c;
        if (c == '\\' && peek(p) != -1 && peek(p) != '\n') {
            int e = peek(p);
            p->pos++;
            int ndig = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
            switch (e) {
            case 'n': bytes[0] = '\n'; break;
            case 't': bytes[0] = '\t'; break;
            case 'r': bytes[0] = '\r'; break;
            case 'f': bytes[0] = '\f'; break;
            case 'v': bytes[0] = '\v'; break;
            case '0': bytes[0] = '\0'; break;
            case '"': bytes[0] = '"'; break;
            case '\\': bytes[0] = '\\'; break;
            default:
                if (ndig) {
                    uint32_t v = 0;
                    for (int i = 0; i < ndig; i++) {
                        int h = gm_hex_value(peek(p));
                        if (h < 0) {
                            gm_vec_free(m, &buf);
                            return syntax(p, p->pos, "bad escape in string literal");
                        }
                        v = v * 16 + (uint32_t)h;
                        p->pos++;
                    }
                    if (e == 'x') {
                        bytes[0] = (uint8_t)v;
                    } else if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
                        gm_vec_free(m, &buf);
                        return syntax(p, p->pos - 1, "escape is not a Unicode scalar value");
                    } else {
                        nb = gm_utf8_encode_char(v, bytes);
                    }
                } else {
                    /* Unknown escapes stay as written, as Lark leaves them. */
                    bytes[0] = '\\';
                    bytes[1] = (uint8_t)e;
                    nb = 2;
                }
            }
        }
        for (int i = 0; i < nb; i++)
            if (gm_vec_push(m, &buf, (char)bytes[i])) {
                gm_vec_free(m, &buf);
                return gm_mem_fail(m, p->err, "a terminal list");
            }
    }
    *outlen = buf.n;
    if (gm_vec_push(m, &buf, '\0')) {
        gm_vec_free(m, &buf);
        return gm_mem_fail(m, p->err, "a terminal list");
    }
    *out = buf.v;
    return GM_OK;
}

/* A /.../ regex: the text between the slashes, kept as written. */
static gm_status read_regex(tparser *p, char **out, size_t *outlen)
{
    size_t open = p->pos++;
    size_t start = p->pos;
    for (;;) {
        int c = peek(p);
        if (c == -1 || c == '\n')
            return syntax(p, open, "unterminated regex (a '/' inside it is written \\/)");
        if (c == '/')
            break;
        p->pos += c == '\\' && p->pos + 1 < p->len && p->text[p->pos + 1] != '\n' ? 2 : 1;
    }
    *outlen = p->pos - start;
    p->pos++;
    *out = gm_mem_strndup(p->tf->mem, p->text + start, *outlen);
    return *out ? GM_OK : gm_mem_fail(p->tf->mem, p->err, "a terminal list");
}

/* %ignore / %declare NAME... */
static gm_status directive(tparser *p)
{
    size_t at = p->pos++;
    size_t n = read_name(p);
    bool ignore = n == 6 && !memcmp(p->text + at + 1, "ignore", 6);
    bool declare = n == 7 && !memcmp(p->text + at + 1, "declare", 7);
    if (!ignore && !declare)
        return syntax(p, at, "unknown directive (known: %ignore, %declare)");
    int count = 0;
    for (;;) {
        skip_blanks(p);
        size_t nstart = p->pos;
        size_t nl = read_name(p);
        if (!nl)
            break;
        count++;
        gm_terminal_spec *s = find(p->tf, p->text + nstart, nl);
        if (ignore) {
            if (!s)
                return syntax(p, nstart, "%ignore names a terminal that is not defined above");
            s->ignored = true;
            continue;
        }
        if (s)
            return syntax(p, nstart, "terminal defined twice");
        gm_termfile *tf = p->tf;
        if (gm_vec_grow_(tf->mem, (void **)&tf->specs, &tf->cap, (size_t)tf->n + 1, sizeof *tf->specs))
            return gm_mem_fail(tf->mem, p->err, "a terminal list");
        gm_terminal_spec *sp = &tf->specs[tf->n];
        memset(sp, 0, sizeof *sp);
        sp->name = gm_mem_strndup(tf->mem, p->text + nstart, nl);
        if (!sp->name)
            return gm_mem_fail(tf->mem, p->err, "a terminal list");
        sp->loc = gm_srcloc_of_offset(tf->path, p->text, p->len, nstart);
        tf->n++;
    }
    if (!count)
        return syntax(p, p->pos, "expected a terminal name");
    return end_of_line(p);
}

static gm_status definition(tparser *p)
{
    gm_termfile *tf = p->tf;
    size_t nstart = p->pos;
    size_t nl = read_name(p);
    if (!nl)
        return syntax(p, p->pos, "expected a terminal name, %ignore or %declare");
    if (find(tf, p->text + nstart, nl))
        return syntax(p, nstart, "terminal defined twice");
    int32_t priority = 0;
    if (peek(p) == '.') {
        p->pos++;
        bool neg = peek(p) == '-';
        if (neg)
            p->pos++;
        if (!(peek(p) >= '0' && peek(p) <= '9'))
            return syntax(p, p->pos, "expected a priority number after '.'");
        int64_t v = 0;
        while (peek(p) >= '0' && peek(p) <= '9') {
            v = v * 10 + (peek(p) - '0');
            if (v > INT32_MAX)
                return syntax(p, nstart, "priority out of range");
            p->pos++;
        }
        priority = (int32_t)(neg ? -v : v);
    }
    skip_blanks(p);
    if (peek(p) == ':') {
        p->pos++;
        skip_blanks(p);
    }
    char *pattern = NULL;
    size_t plen = 0;
    bool literal = peek(p) == '"';
    gm_status st;
    if (literal)
        st = read_literal(p, &pattern, &plen);
    else if (peek(p) == '/')
        st = read_regex(p, &pattern, &plen);
    else
        return syntax(p, p->pos, "expected /regex/ or \"literal\"");
    if (st != GM_OK)
        return st;
    unsigned flags = 0;
    size_t fstart = p->pos;
    while (peek(p) >= 'a' && peek(p) <= 'z')
        p->pos++;
    size_t bad = gm_re_flags_parse(p->text + fstart, p->pos - fstart, &flags);
    if (bad < p->pos - fstart || (literal && (flags & ~(unsigned)GM_RE_IGNORECASE))) {
        gm_mem_free(tf->mem, pattern);
        return syntax(p, fstart + (bad < p->pos - fstart ? bad : 0),
                      literal ? "a string literal takes only the flag i" : "unknown regex flag (known: i s m x u a)");
    }
    char *name = gm_mem_strndup(tf->mem, p->text + nstart, nl);
    if (!name || gm_vec_grow_(tf->mem, (void **)&tf->specs, &tf->cap, (size_t)tf->n + 1, sizeof *tf->specs)) {
        gm_mem_free(tf->mem, name);
        gm_mem_free(tf->mem, pattern);
        return gm_mem_fail(tf->mem, p->err, "a terminal list");
    }
    gm_terminal_spec *sp = &tf->specs[tf->n++];
    memset(sp, 0, sizeof *sp);
    sp->name = name;
    sp->pattern = pattern;
    sp->pattern_len = plen;
    sp->flags = flags;
    sp->priority = priority;
    sp->is_literal = literal;
    sp->loc = gm_srcloc_of_offset(tf->path, p->text, p->len, nstart);
    return end_of_line(p);
}

gm_status gm_termfile_parse(gm_mem *m, const char *path, const char *text, size_t len,
                            gm_termfile *out, gm_error *err)
{
    memset(out, 0, sizeof *out);
    out->mem = m;
    out->path = gm_mem_strndup(m, path ? path : "<terminals>", strlen(path ? path : "<terminals>"));
    if (!out->path)
        return gm_mem_fail(m, err, "a terminal list");
    tparser p = {out, text, len, 0, err};
    gm_status st = GM_OK;
    while (st == GM_OK && p.pos < len) {
        skip_blanks(&p);
        int c = peek(&p);
        if (c == '\n' || c == '#' || c == -1)
            st = end_of_line(&p);
        else if (c == '%')
            st = directive(&p);
        else
            st = definition(&p);
    }
    if (st != GM_OK)
        gm_termfile_free(out);
    return st;
}

void gm_termfile_free(gm_termfile *tf)
{
    for (uint32_t i = 0; i < tf->n; i++) {
        gm_mem_free(tf->mem, (void *)tf->specs[i].name);
        gm_mem_free(tf->mem, (void *)tf->specs[i].pattern);
    }
    gm_mem_free(tf->mem, tf->specs);
    gm_mem_free(tf->mem, tf->path);
    gm_mem *m = tf->mem;
    memset(tf, 0, sizeof *tf);
    tf->mem = m;
}
