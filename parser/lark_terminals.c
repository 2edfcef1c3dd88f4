/*
 * Terminal composition: a Lark terminal that uses other terminals, literals
 * and regexes with EBNF operators becomes one regex for the lexer.
 *
 * note [terminal composition]
 * As Lark composes it (lark/load_grammar.py, TerminalTreeToPattern), so that
 * the pattern text, whose length orders Lark's lexer, and the order of
 * alternatives, which re.match tries in turn, are Lark's: a literal is a
 * string pattern ("if" keeps is_literal and its flags), a regex keeps its
 * flags; a sequence of several items joins their regexes without flags of
 * its own; alternatives are sorted by longest possible match, then longest
 * shortest match, then longest text (stable), and joined as (?:a|b); ? * +
 * [x] ~n ~n..m wrap the operand as (?:x)? ... keeping the operand's flags.
 * An item's regex is a literal escaped as re.escape does, or the regex,
 * each flag wrapped around it as (?i:...) (a verbose group whose last line
 * holds a comment closes on a new line, where Lark's would break). A terminal that
 * reaches itself through its parts is an error, as in Lark. Priority is the
 * terminal's own; the parts' priorities do not matter.
 */
#include "parser/lark_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "lexer/uclass.h"

enum { MAX_COMPOSE_DEPTH = 1000 };

/* How a regex fragment may be embedded: as an operand of a quantifier, in a concatenation. */
enum { SH_ATOM, SH_SEQ, SH_ALT };

/* Python's re.escape (3.7 and later) escapes these characters. */
static bool re_special(unsigned char c)
{
    return c && strchr("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", c) != NULL;
}

/* Lark's to_regexp: the pattern as a regex, its flags wrapped around it. */
static void put_regexp(gm_strbuf *b, const gm_lpattern *p)
{
    unsigned f = p->is_literal ? p->flags & GM_RE_IGNORECASE : p->flags;
    char letters[8];
    gm_lpattern_flag_letters(letters, f);
    size_t nf = strlen(letters);
    for (size_t i = 0; i < nf; i++)
        gm_strbuf_printf(b, "(?%c:", letters[i]);
    if (p->is_literal) {
        for (size_t i = 0; i < p->len; i++) {
            unsigned char c = (unsigned char)p->bytes[i];
            if (re_special(c))
                gm_strbuf_putc(b, '\\');
            gm_strbuf_putc(b, (char)c);
        }
    } else {
        gm_strbuf_append(b, p->bytes, p->len);
    }
    /* A verbose pattern whose last line holds a # comment would swallow the ")": Lark's
       pattern breaks there; a line break before it keeps the group. */
    bool comment = false;
    for (size_t i = p->len; !p->is_literal && i-- > 0 && p->bytes[i] != '\n';)
        comment |= p->bytes[i] == '#';
    for (size_t i = nf; i-- > 0;)
        gm_strbuf_puts(b, letters[i] == 'x' && comment ? "\n)" : ")");
}

/* Characters of a pattern's text (Lark's len(pattern.value)). */
static size_t value_chars(const gm_lpattern *p)
{
    size_t c = 0;
    for (size_t i = 0; i < p->len; i++)
        c += ((unsigned char)p->bytes[i] & 0xC0) != 0x80;
    return c;
}

/* Python's getwidth of a pattern (max and min, in characters). */
static gm_status widths(gm_lterms *t, const gm_lpattern *p, uint32_t *maxw, uint32_t *minw)
{
    if (p->is_literal) {
        *maxw = *minw = (uint32_t)value_chars(p);
        return GM_OK;
    }
    gm_mem *m = t->L->mem;
    gm_uclass uc;
    gm_uclass_init(&uc, m);
    gm_regex re;
    gm_regex_init(&re, m);
    gm_error e;
    *maxw = *minw = 0; /* a regex that does not parse is reported by the lexer */
    gm_status st = gm_regex_parse(&re, &uc, p->bytes, p->len, p->flags | GM_RE_LARK_MATCH,
                                  &t->L->limits, &e);
    if (st == GM_OK) {
        gm_regex_width(&re, re.root, false, minw, maxw);
    }
    gm_regex_free(&re);
    gm_uclass_free(&uc);
    return st == GM_ERR_NOMEM ? gm_lload_nomem(t->L) : GM_OK;
}

/* Copies a strbuf's text into the arena as a regex pattern with flags. */
static gm_status finish(gm_lterms *t, gm_strbuf *b, unsigned flags, gm_lpattern *out)
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
    out->bytes = s;
    out->len = n;
    out->flags = flags;
    out->is_literal = false;
    return GM_OK;
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

static gm_status compose(gm_lterms *t, const gm_ldef *d, const gm_lx *x, gm_lpattern *out);

static gm_status compose_kids(gm_lterms *t, const gm_ldef *d, const gm_lx *x, gm_lpattern **kids)
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

/* An alternative with Lark's sort key: longest possible match, shortest match, text. */
typedef struct alt {
    const gm_lpattern *p;
    uint32_t maxw, minw;
    size_t chars;
    uint32_t order;
} alt;

static int cmp_alt(const void *a, const void *b)
{
    const alt *x = a, *y = b;
    if (x->maxw != y->maxw)
        return x->maxw > y->maxw ? -1 : 1;
    if (x->minw != y->minw)
        return x->minw > y->minw ? -1 : 1;
    if (x->chars != y->chars)
        return x->chars > y->chars ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order; /* Python's sort is stable */
}

static gm_status compose(gm_lterms *t, const gm_ldef *d, const gm_lx *x, gm_lpattern *out)
{
    gm_lload *L = t->L;
    if (++t->depth > MAX_COMPOSE_DEPTH) {
        t->depth--;
        return gm_lload_error(L, GM_ERR_LIMIT, x->loc,
                              "terminal '%s' nests terminals deeper than %d levels", d->name,
                              MAX_COMPOSE_DEPTH);
    }
    gm_status st = GM_OK;
    gm_lpattern *kids = NULL;
    gm_strbuf b;
    gm_strbuf_init(&b, L->mem);
    switch ((gm_lx_kind)x->kind) {
    case LX_LITERAL:
    case LX_REGEX:
    case LX_RANGE:
        st = gm_lterms_leaf(t, x, out);
        break;
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
        st = gm_lterms_pattern(t, r, out);
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
            alt *a = gm_arena_array(&L->arena, x->n, sizeof *a);
            if (!a) {
                st = gm_lload_nomem(L);
                break;
            }
            for (uint32_t i = 0; i < x->n; i++) {
                a[i].p = &kids[i];
                a[i].order = i;
                a[i].chars = value_chars(&kids[i]);
                if (st == GM_OK)
                    st = widths(t, &kids[i], &a[i].maxw, &a[i].minw);
            }
            if (st != GM_OK)
                break;
            qsort(a, x->n, sizeof *a, cmp_alt);
            gm_strbuf_puts(&b, "(?:");
            for (uint32_t i = 0; i < x->n; i++) {
                if (i)
                    gm_strbuf_putc(&b, '|');
                put_regexp(&b, a[i].p);
            }
            gm_strbuf_putc(&b, ')');
        } else {
            for (uint32_t i = 0; i < x->n; i++)
                put_regexp(&b, &kids[i]);
        }
        st = finish(t, &b, 0, out);
        break;
    case LX_OPT:
    case LX_MAYBE:
    case LX_STAR:
    case LX_PLUS:
    case LX_REPEAT:
        st = compose_kids(t, d, x, &kids);
        if (st != GM_OK)
            break;
        gm_strbuf_puts(&b, "(?:");
        put_regexp(&b, &kids[0]);
        gm_strbuf_putc(&b, ')');
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
        /* Lark keeps the operand's flags: they wrap the group again. */
        st = finish(t, &b, kids[0].is_literal ? kids[0].flags & GM_RE_IGNORECASE : kids[0].flags, out);
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
    gm_status st = compose(t, d, d->body, &t->pat[id]);
    if (st != GM_OK)
        return st;
    if (t->pat[id].len == 0)
        return gm_lload_error(t->L, GM_ERR_GRAMMAR, d->loc, "terminal '%s' is empty", d->name);
    t->state[id] = 2;
    *out = t->pat[id];
    return GM_OK;
}
