/*
 * Terminal composition: a Lark terminal that uses other terminals, literals
 * and regexes with EBNF operators becomes one regex for the lexer.
 *
 * note [terminal composition]
 * A terminal defined as exactly one literal, regex or terminal keeps that
 * pattern as it is: "if" stays a literal (is_literal, flags), /x/i keeps
 * its flags. Anything else is joined into one regex without flags of its
 * own: literal parts are escaped, a part with flags is wrapped in a scoped
 * group such as (?i:...) (a verbose part's group closes on a new line, so
 * that a trailing # comment cannot swallow it), alternatives become
 * (?:a|b), and ? * + [x] ~n ~n..m become ? * + ? {n} {n,m} on a group
 * where the operand is not a single atom. A terminal that reaches itself
 * through its parts is an error, as in Lark. Priority is the terminal's
 * own; the parts' priorities do not matter.
 */
#include "parser/lark_load.h"

#include <stdio.h>
#include <string.h>

#include "lexer/lexer.h"

enum { MAX_COMPOSE_DEPTH = 1000 };

/* How a regex fragment may be embedded: as an operand of a quantifier, in a concatenation. */
enum { SH_ATOM, SH_SEQ, SH_ALT };

typedef struct frag {
    const char *re;          /* regex text, flags scoped inside */
    size_t len;
    uint8_t shape;
    bool single;             /* exactly one literal/regex/terminal: pat is its own pattern */
    gm_lpattern pat;
} frag;

static bool is_meta(unsigned char c)
{
    return c && strchr(".^$*+?{}[]\\|()", c) != NULL;
}

static size_t utf8_len(unsigned char c)
{
    return c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
}

/* Appends byte c of a literal, escaped for a regex (outside a class). */
static void escape_byte(gm_strbuf *b, unsigned char c)
{
    switch (c) {
    case '\n': gm_strbuf_puts(b, "\\n"); return;
    case '\t': gm_strbuf_puts(b, "\\t"); return;
    case '\r': gm_strbuf_puts(b, "\\r"); return;
    case '\f': gm_strbuf_puts(b, "\\f"); return;
    case '\v': gm_strbuf_puts(b, "\\v"); return;
    default: break;
    }
    if (c < 0x20 || c == 0x7f)
        gm_strbuf_printf(b, "\\x%02x", c);
    else {
        if (is_meta(c))
            gm_strbuf_putc(b, '\\');
        gm_strbuf_putc(b, (char)c);
    }
}

/* End (index of ']') of the class starting at re[i] == '[', or n when unterminated. */
static size_t class_end(const char *re, size_t n, size_t i)
{
    size_t j = i + 1;
    if (j < n && re[j] == '^')
        j++;
    if (j < n && re[j] == ']')
        j++;
    while (j < n && re[j] != ']') {
        if (re[j] == '\\')
            j++;
        j++;
    }
    return j < n ? j : n;
}

/* The shape of a regex written by the user (no flags): see the enum above. */
static uint8_t regex_shape(const char *re, size_t n)
{
    if (n == 0)
        return SH_SEQ;
    if (n == 1)
        return re[0] == '.' || !is_meta((unsigned char)re[0]) ? SH_ATOM : SH_SEQ;
    if (n == 2 && re[0] == '\\')
        return SH_ATOM;
    if (utf8_len((unsigned char)re[0]) == n)
        return SH_ATOM;
    int depth = 0;
    bool alt = false;
    size_t first_close = 0, first_class_end = 0;
    for (size_t i = 0; i < n; i++) {
        char c = re[i];
        if (c == '\\') {
            i++;
        } else if (c == '[') {
            size_t e = class_end(re, n, i);
            if (i == 0)
                first_class_end = e;
            i = e;
        } else if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
            if (depth == 0 && !first_close)
                first_close = i;
        } else if (c == '|' && depth == 0) {
            alt = true;
        }
    }
    if (alt)
        return SH_ALT;
    if ((re[0] == '(' && first_close == n - 1) || (re[0] == '[' && first_class_end == n - 1))
        return SH_ATOM;
    return SH_SEQ;
}


/* Copies a strbuf's text into the arena as a fragment's regex. */
static gm_status finish(gm_lterms *t, gm_strbuf *b, frag *f, uint8_t shape)
{
    gm_lload *L = t->L;
    if (b->failed) {
        gm_strbuf_free(b);
        return gm_lload_nomem(L);
    }
    if (b->n > L->limits.max_input_bytes) {
        gm_strbuf_free(b);
        return gm_error_set(L->err, GM_ERR_LIMIT,
                            "a composed terminal pattern is over the limit of %u bytes",
                            (unsigned)L->limits.max_input_bytes);
    }
    char *s = gm_arena_strndup(&L->arena, gm_strbuf_str(b), b->n);
    size_t n = b->n;
    gm_strbuf_free(b);
    if (!s)
        return gm_lload_nomem(L);
    memset(f, 0, sizeof *f);
    f->re = s;
    f->len = n;
    f->shape = shape;
    return GM_OK;
}

/* The fragment of one pattern, keeping the pattern itself for single use. */
static gm_status frag_of(gm_lterms *t, const gm_lpattern *p, frag *f)
{
    gm_strbuf b;
    gm_strbuf_init(&b, t->L->mem);
    uint8_t shape;
    unsigned scoped = p->is_literal ? p->flags & GM_RE_IGNORECASE : p->flags;
    if (scoped) {
        char letters[8];
        gm_lpattern_flag_letters(letters, scoped);
        gm_strbuf_printf(&b, "(?%s:", letters);
    }
    if (p->is_literal)
        for (size_t i = 0; i < p->len; i++)
            escape_byte(&b, (unsigned char)p->bytes[i]);
    else
        gm_strbuf_append(&b, p->bytes, p->len);
    if (scoped)
        gm_strbuf_puts(&b, scoped & GM_RE_VERBOSE ? "\n)" : ")");
    if (scoped)
        shape = SH_ATOM;
    else if (p->is_literal)
        shape = p->len && utf8_len((unsigned char)p->bytes[0]) == p->len ? SH_ATOM : SH_SEQ;
    else
        shape = regex_shape(p->bytes, p->len);
    gm_status st = finish(t, &b, f, shape);
    if (st == GM_OK) {
        f->single = true;
        f->pat = *p;
    }
    return st;
}

/* The regex of a literal range "a".."z": a class of code points lo..hi. */
static gm_status range_pattern(gm_lterms *t, uint32_t lo, uint32_t hi, gm_lpattern *out)
{
    char buf[64];
    size_t k = 0;
    uint32_t cps[2] = {lo, hi};
    buf[k++] = '[';
    for (int i = 0; i < 2; i++) {
        uint32_t c = cps[i];
        if (i)
            buf[k++] = '-';
        if (c < 0x20 || c == 0x7f)
            k += (size_t)snprintf(buf + k, sizeof buf - k, "\\x%02x", (unsigned)c);
        else if (c < 0x80) {
            if (strchr("]\\^-[", (int)c))
                buf[k++] = '\\';
            buf[k++] = (char)c;
        } else {
            /* raw UTF-8: the lexer reads classes by code point */
            char *o = buf + k;
            if (c < 0x800) {
                o[0] = (char)(0xC0 | (c >> 6));
                o[1] = (char)(0x80 | (c & 0x3F));
                k += 2;
            } else if (c < 0x10000) {
                o[0] = (char)(0xE0 | (c >> 12));
                o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
                o[2] = (char)(0x80 | (c & 0x3F));
                k += 3;
            } else {
                o[0] = (char)(0xF0 | (c >> 18));
                o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
                o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
                o[3] = (char)(0x80 | (c & 0x3F));
                k += 4;
            }
        }
    }
    buf[k++] = ']';
    char *s = gm_arena_strndup(&t->L->arena, buf, k);
    if (!s)
        return gm_lload_nomem(t->L);
    out->bytes = s;
    out->len = k;
    out->flags = 0;
    out->is_literal = false;
    return GM_OK;
}

gm_status gm_lterms_leaf(gm_lterms *t, const gm_lx *x, gm_lpattern *out)
{
    if (x->kind == LX_RANGE)
        return range_pattern(t, x->min, x->max, out);
    out->bytes = x->bytes;
    out->len = x->len;
    out->flags = x->flags;
    out->is_literal = x->kind == LX_LITERAL;
    return GM_OK;
}

/* Appends f as an operand of a quantifier. */
static void put_atom(gm_strbuf *b, const frag *f)
{
    if (f->shape == SH_ATOM) {
        gm_strbuf_append(b, f->re, f->len);
        return;
    }
    gm_strbuf_puts(b, "(?:");
    gm_strbuf_append(b, f->re, f->len);
    gm_strbuf_putc(b, ')');
}

static gm_status compose(gm_lterms *t, const gm_ldef *d, const gm_lx *x, frag *out);

static gm_status compose_kids(gm_lterms *t, const gm_ldef *d, const gm_lx *x, frag **kids)
{
    *kids = gm_arena_array(&t->L->arena, x->n ? x->n : 1, sizeof **kids);
    if (!*kids)
        return gm_lload_nomem(t->L);
    for (uint32_t i = 0; i < x->n; i++) {
        gm_status st = compose(t, d, x->kids[i], &(*kids)[i]);
        if (st != GM_OK)
            return st;
    }
    return GM_OK;
}

static gm_status compose(gm_lterms *t, const gm_ldef *d, const gm_lx *x, frag *out)
{
    gm_lload *L = t->L;
    if (++t->depth > MAX_COMPOSE_DEPTH) {
        t->depth--;
        return gm_lload_error(L, GM_ERR_LIMIT, x->loc,
                              "terminal '%s' nests terminals deeper than %d levels", d->name,
                              MAX_COMPOSE_DEPTH);
    }
    gm_status st = GM_OK;
    frag *kids = NULL;
    gm_strbuf b;
    gm_strbuf_init(&b, L->mem);
    switch ((gm_lx_kind)x->kind) {
    case LX_LITERAL:
    case LX_REGEX:
    case LX_RANGE: {
        gm_lpattern p;
        st = gm_lterms_leaf(t, x, &p);
        if (st == GM_OK)
            st = frag_of(t, &p, out);
        break;
    }
    case LX_NAME: {
        const gm_ldef *r = gm_lbuilder_find(t->b, x->name);
        uint32_t id = gm_intern_find(&t->b->names, x->name, strlen(x->name));
        if (r && t->state[id] == 1) {
            if (r == d)
                st = gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                    "terminal '%s' refers to itself: recursion is only allowed "
                                    "in rules", d->name);
            else
                st = gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                    "terminal '%s' is recursive (through '%s'): recursion is "
                                    "only allowed in rules", x->name, d->name);
            break;
        }
        if (!r || !r->body) {
            st = gm_lload_error(L, GM_ERR_GRAMMAR, x->loc,
                                "terminal '%s' cannot use '%s': it has no pattern%s", d->name,
                                x->name, r ? " (it is %declare'd)" : "");
            break;
        }
        gm_lpattern p;
        st = gm_lterms_pattern(t, r, &p);
        if (st == GM_OK)
            st = frag_of(t, &p, out);
        break;
    }
    case LX_SEQ:
    case LX_ALT:
        if (x->n == 1) {
            st = compose(t, d, x->kids[0], out);
            break;
        }
        st = compose_kids(t, d, x, &kids);
        if (st != GM_OK)
            break;
        if (x->kind == LX_ALT) {
            gm_strbuf_puts(&b, "(?:");
            for (uint32_t i = 0; i < x->n; i++) {
                if (i)
                    gm_strbuf_putc(&b, '|');
                gm_strbuf_append(&b, kids[i].re, kids[i].len);
            }
            gm_strbuf_putc(&b, ')');
            st = finish(t, &b, out, SH_ATOM);
        } else {
            for (uint32_t i = 0; i < x->n; i++) {
                if (kids[i].shape == SH_ALT)
                    put_atom(&b, &kids[i]);
                else
                    gm_strbuf_append(&b, kids[i].re, kids[i].len);
            }
            st = finish(t, &b, out, SH_SEQ);
        }
        break;
    case LX_OPT:
    case LX_MAYBE:
    case LX_STAR:
    case LX_PLUS:
    case LX_REPEAT:
        st = compose_kids(t, d, x, &kids);
        if (st != GM_OK)
            break;
        put_atom(&b, &kids[0]);
        if (x->kind == LX_STAR)
            gm_strbuf_putc(&b, '*');
        else if (x->kind == LX_PLUS)
            gm_strbuf_putc(&b, '+');
        else if (x->kind != LX_REPEAT)
            gm_strbuf_putc(&b, '?');
        else if (x->min == x->max)
            gm_strbuf_printf(&b, "{%u}", (unsigned)x->min);
        else
            gm_strbuf_printf(&b, "{%u,%u}", (unsigned)x->min, (unsigned)x->max);
        st = finish(t, &b, out, SH_SEQ);
        break;
    case LX_TEMPLATE:
    case LX_SYM:
        /* validation rejects these in terminals */
        st = gm_lload_error(L, GM_ERR_GRAMMAR, x->loc, "unexpected item in terminal '%s'",
                            d->name);
        break;
    }
    gm_strbuf_free(&b);
    t->depth--;
    return st;
}

gm_status gm_lterms_pattern(gm_lterms *t, const gm_ldef *d, gm_lpattern *out)
{
    uint32_t id = gm_intern_find(&t->b->names, d->name, strlen(d->name));
    if (t->state[id] == 2) {
        *out = t->pat[id];
        return GM_OK;
    }
    t->state[id] = 1;
    frag f;
    gm_status st = compose(t, d, d->body, &f);
    if (st != GM_OK)
        return st;
    if (f.single) {
        t->pat[id] = f.pat;
    } else {
        t->pat[id].bytes = f.re;
        t->pat[id].len = f.len;
        t->pat[id].flags = 0;
        t->pat[id].is_literal = false;
    }
    if (t->pat[id].len == 0)
        return gm_lload_error(t->L, GM_ERR_GRAMMAR, d->loc, "terminal '%s' is empty", d->name);
    t->state[id] = 2;
    *out = t->pat[id];
    return GM_OK;
}
