/*
 * ECMA-262 patterns -> the lexer's regex AST (ecma_regex.h). Two passes:
 * a recursive-descent parser builds a small AST that still holds the
 * anchors ^ and $, then the lowering of note [anchors] removes them and
 * adds the unanchored search around the pattern.
 *
 * note [anchors]
 * A pattern P matches string w when w = x m y with m matched by P, where ^
 * inside P holds only at offset 0 of w and $ only at its end. Write
 * L(n, s, e) for the strings node n matches when its match starts at the
 * string's start (s) or not, and ends at the string's end (e) or not; then
 *   w in x L(P, x empty, y empty) y
 * and the language is the union of the four cases
 *   L(P,T,T) | S+ L(P,F,T) | L(P,T,F) S+ | S+ L(P,F,F) S+   (S: any character).
 * L splits into its empty part E(n,s,e) (a truth value) and its nonempty
 * part NE(n,s,e); once a nonempty piece is read, the position is neither
 * the start nor the end on the side it moved. For a concatenation n = a b:
 *   NE(ab,s,e) = NE(a,s,F) NE(b,F,e) | [E(b,F,e)] NE(a,s,e) | [E(a,s,F)] NE(b,s,e)
 *   E(ab,s,e)  = E(a,s,e) and E(b,s,e)
 * for an alternation the union of the branches, ^ is E = s, $ is E = e
 * (NE empty), and for a repetition the nonempty iterations are the first
 * (s side), the middle ones (F,F) and the last (e side), empty iterations
 * filling the count wherever E allows one. Nodes without anchors skip all
 * this (L = their plain language). The result is exact, and linear in the
 * pattern for the usual shapes (anchors at the ends, in alternatives).
 */
#include "schema/ecma_regex.h"

#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <utf8proc.h>

#include "base/hex.h"
#include "lexer/cpset.h"
#include "base/error.h"
#include "base/utf8.h"
#include "base/vec.h"

#define MAX_DEPTH 200
#define NOTHING (UINT32_MAX - 1) /* lowered language: no string */
#define FAILED UINT32_MAX

typedef enum ekind {
    EK_EMPTY,
    EK_SET,     /* a: the gm_regex SET node */
    EK_CAT,
    EK_ALT,
    EK_REP,     /* a..b times kids[first] */
    EK_BOL,
    EK_EOL,
    EK_ANYSTR,  /* any string (a relaxed back reference) */
} ekind;

typedef struct enode {
    uint8_t kind;
    bool anchored;      /* holds ^ or $ somewhere */
    uint32_t a, b;
    uint32_t first, count;
} enode;

typedef struct parser {
    gm_regex *re;
    gm_mem *mem;
    const uint8_t *p;
    size_t len, pos;
    unsigned flags;
    unsigned relaxed;
    uint32_t max_repeat;
    uint32_t ngroups;
    uint32_t depth;
    gm_error *err;
    gm_status st;
    GM_VEC(enode) nodes;
    GM_VEC(uint32_t) kids;
    GM_VEC(uint32_t) stack;  /* children being collected */
    uint32_t any_set;        /* gm_regex SET node of every code point, or FAILED */
    uint32_t empty_node;     /* gm_regex EMPTY node, or FAILED */
    uint32_t *memo;          /* lowering memo: [node * 8 + what] -> regex node + 1 */
} parser;

static gm_status fail_at(parser *ps, gm_status code, size_t off, const char *fmt, ...)
    GM_PRINTF(4, 5);

static gm_status fail_at(parser *ps, gm_status code, size_t off, const char *fmt, ...)
{
    if (ps->st != GM_OK)
        return ps->st;
    ps->st = code;
    if (ps->err) {
        va_list ap;
        va_start(ap, fmt);
        gm_error_vset(ps->err, code, fmt, ap);
        va_end(ap);
        ps->err->column = (uint32_t)(off + 1);
    }
    return code;
}

static uint32_t nomem(parser *ps)
{
    if (ps->st == GM_OK)
        ps->st = gm_mem_fail(ps->mem, ps->err, "a pattern");
    return FAILED;
}

/* ---- the parse AST ---- */

static uint32_t enew(parser *ps, ekind kind, uint32_t a, uint32_t b)
{
    enode n = {0};
    n.kind = (uint8_t)kind;
    n.a = a;
    n.b = b;
    n.anchored = kind == EK_BOL || kind == EK_EOL;
    if (gm_vec_push(ps->mem, &ps->nodes, n))
        return nomem(ps);
    return (uint32_t)ps->nodes.n - 1;
}

/* A CAT or ALT node of the children stack[base..]; pops them. */
static uint32_t eparent(parser *ps, ekind kind, size_t base)
{
    size_t n = ps->stack.n - base;
    if (n == 0)
        return enew(ps, kind == EK_CAT ? EK_EMPTY : EK_EMPTY, 0, 0);
    if (n == 1) {
        ps->stack.n = base;
        return ps->stack.v[base];
    }
    if (gm_vec_reserve(ps->mem, &ps->kids, ps->kids.n + n))
        return nomem(ps);
    uint32_t id = enew(ps, kind, 0, 0);
    if (id == FAILED)
        return id;
    enode *e = &ps->nodes.v[id];
    e->first = (uint32_t)ps->kids.n;
    e->count = (uint32_t)n;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = ps->stack.v[base + i];
        ps->kids.v[ps->kids.n++] = k;
        if (ps->nodes.v[k].anchored)
            e->anchored = true;
    }
    ps->stack.n = base;
    return id;
}

static uint32_t erep(parser *ps, uint32_t kid, uint32_t min, uint32_t max)
{
    if (gm_vec_push(ps->mem, &ps->kids, kid))
        return nomem(ps);
    uint32_t id = enew(ps, EK_REP, min, max);
    if (id == FAILED)
        return id;
    ps->nodes.v[id].first = (uint32_t)ps->kids.n - 1;
    ps->nodes.v[id].count = 1;
    ps->nodes.v[id].anchored = ps->nodes.v[kid].anchored;
    return id;
}

/* A SET node taking ownership of *s. */
static uint32_t eset(parser *ps, gm_cpset *s)
{
    uint32_t rx = gm_regex_add_set(ps->re, s);
    if (rx == UINT32_MAX)
        return nomem(ps);
    return enew(ps, EK_SET, rx, 0);
}

/* ---- character sets ---- */

static int add_range(parser *ps, gm_cpset *s, uint32_t lo, uint32_t hi)
{
    if (gm_cpset_add_range(ps->mem, s, lo, hi)) {
        nomem(ps);
        return -1;
    }
    return 0;
}

static const uint32_t space_ranges[][2] = {
    {0x09, 0x0D}, {0x20, 0x20}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF},
};

/* General category names and aliases (UTS #18 / ECMA-262 table of values). */
typedef struct catname {
    const char *name;
    uint32_t mask; /* bits 1 << UTF8PROC_CATEGORY_* */
} catname;

#define C(x) (1u << UTF8PROC_CATEGORY_##x)
static const catname catnames[] = {
    {"L", C(LU) | C(LL) | C(LT) | C(LM) | C(LO)},
    {"Letter", C(LU) | C(LL) | C(LT) | C(LM) | C(LO)},
    {"LC", C(LU) | C(LL) | C(LT)}, {"Cased_Letter", C(LU) | C(LL) | C(LT)},
    {"Lu", C(LU)}, {"Uppercase_Letter", C(LU)},
    {"Ll", C(LL)}, {"Lowercase_Letter", C(LL)},
    {"Lt", C(LT)}, {"Titlecase_Letter", C(LT)},
    {"Lm", C(LM)}, {"Modifier_Letter", C(LM)},
    {"Lo", C(LO)}, {"Other_Letter", C(LO)},
    {"M", C(MN) | C(MC) | C(ME)}, {"Mark", C(MN) | C(MC) | C(ME)},
    {"Combining_Mark", C(MN) | C(MC) | C(ME)},
    {"Mn", C(MN)}, {"Nonspacing_Mark", C(MN)},
    {"Mc", C(MC)}, {"Spacing_Mark", C(MC)},
    {"Me", C(ME)}, {"Enclosing_Mark", C(ME)},
    {"N", C(ND) | C(NL) | C(NO)}, {"Number", C(ND) | C(NL) | C(NO)},
    {"Nd", C(ND)}, {"Decimal_Number", C(ND)}, {"digit", C(ND)},
    {"Nl", C(NL)}, {"Letter_Number", C(NL)},
    {"No", C(NO)}, {"Other_Number", C(NO)},
    {"P", C(PC) | C(PD) | C(PS) | C(PE) | C(PI) | C(PF) | C(PO)},
    {"Punctuation", C(PC) | C(PD) | C(PS) | C(PE) | C(PI) | C(PF) | C(PO)},
    {"punct", C(PC) | C(PD) | C(PS) | C(PE) | C(PI) | C(PF) | C(PO)},
    {"Pc", C(PC)}, {"Connector_Punctuation", C(PC)},
    {"Pd", C(PD)}, {"Dash_Punctuation", C(PD)},
    {"Ps", C(PS)}, {"Open_Punctuation", C(PS)},
    {"Pe", C(PE)}, {"Close_Punctuation", C(PE)},
    {"Pi", C(PI)}, {"Initial_Punctuation", C(PI)},
    {"Pf", C(PF)}, {"Final_Punctuation", C(PF)},
    {"Po", C(PO)}, {"Other_Punctuation", C(PO)},
    {"S", C(SM) | C(SC) | C(SK) | C(SO)}, {"Symbol", C(SM) | C(SC) | C(SK) | C(SO)},
    {"Sm", C(SM)}, {"Math_Symbol", C(SM)},
    {"Sc", C(SC)}, {"Currency_Symbol", C(SC)},
    {"Sk", C(SK)}, {"Modifier_Symbol", C(SK)},
    {"So", C(SO)}, {"Other_Symbol", C(SO)},
    {"Z", C(ZS) | C(ZL) | C(ZP)}, {"Separator", C(ZS) | C(ZL) | C(ZP)},
    {"Zs", C(ZS)}, {"Space_Separator", C(ZS)},
    {"Zl", C(ZL)}, {"Line_Separator", C(ZL)},
    {"Zp", C(ZP)}, {"Paragraph_Separator", C(ZP)},
    {"C", C(CC) | C(CF) | C(CS) | C(CO) | C(CN)},
    {"Other", C(CC) | C(CF) | C(CS) | C(CO) | C(CN)},
    {"Cc", C(CC)}, {"Control", C(CC)}, {"cntrl", C(CC)},
    {"Cf", C(CF)}, {"Format", C(CF)},
    {"Cs", C(CS)}, {"Surrogate", C(CS)},
    {"Co", C(CO)}, {"Private_Use", C(CO)},
    {"Cn", C(CN)}, {"Unassigned", C(CN)},
};
#undef C

static int add_category(parser *ps, gm_cpset *s, uint32_t mask)
{
    uint32_t lo = 0;
    bool in = false;
    for (uint32_t cp = 0; cp <= GM_CP_MAX + 1; cp++) {
        bool has = cp <= GM_CP_MAX && (mask >> utf8proc_category((utf8proc_int32_t)cp) & 1);
        if (has && !in) {
            lo = cp;
            in = true;
        } else if (!has && in) {
            if (add_range(ps, s, lo, cp - 1))
                return -1;
            in = false;
        }
    }
    return 0;
}

/* Adds class escape d w s D W S to s. */
static int add_class(parser *ps, gm_cpset *s, uint32_t which)
{
    gm_cpset t = {0};
    uint32_t lower = which | 0x20;
    int rc = 0;
    if (lower == 'd') {
        rc = add_range(ps, &t, '0', '9');
    } else if (lower == 'w') {
        rc = add_range(ps, &t, '0', '9') || add_range(ps, &t, 'A', 'Z') ||
             add_range(ps, &t, '_', '_') || add_range(ps, &t, 'a', 'z');
    } else {
        for (size_t i = 0; i < sizeof space_ranges / sizeof *space_ranges && !rc; i++)
            rc = add_range(ps, &t, space_ranges[i][0], space_ranges[i][1]);
    }
    if (!rc && which != lower && gm_cpset_negate(ps->mem, &t))
        rc = -1, nomem(ps);
    if (!rc && gm_cpset_add_set(ps->mem, s, &t))
        rc = -1, nomem(ps);
    gm_cpset_free(ps->mem, &t);
    return rc;
}

/* ---- reading the pattern ---- */

static bool at_end(parser *ps)
{
    return ps->pos >= ps->len;
}

static uint32_t peek(parser *ps)
{
    return ps->pos < ps->len ? ps->p[ps->pos] : 0;
}

/* Decodes the character at pos (advancing); FAILED on bad UTF-8. */
static uint32_t next_char(parser *ps)
{
    uint32_t cp;
    size_t n = gm_utf8_decode(ps->p + ps->pos, ps->len - ps->pos, &cp);
    if (!n) {
        fail_at(ps, GM_ERR_SYNTAX, ps->pos, "invalid UTF-8 in the pattern");
        return FAILED;
    }
    ps->pos += n;
    return cp;
}

/* n hex digits at pos; -1 (pos unchanged) when absent. */
static int64_t read_hex(parser *ps, int n)
{
    if (ps->len - ps->pos < (size_t)n)
        return -1;
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        int h = gm_hex_value(ps->p[ps->pos + i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    ps->pos += (size_t)n;
    return v;
}

/* After "\u": \uHHHH (joining a surrogate pair) or \u{H...}; FAILED on error. */
static uint32_t read_u_escape(parser *ps, size_t at)
{
    if (peek(ps) == '{') {
        size_t save = ps->pos++;
        int64_t v = 0;
        size_t nd = 0;
        while (!at_end(ps) && gm_hex_value(peek(ps)) >= 0) {
            v = v * 16 + gm_hex_value(ps->p[ps->pos++]);
            nd++;
            if (v > GM_CP_MAX)
                break;
        }
        if (nd && v <= GM_CP_MAX && peek(ps) == '}') {
            ps->pos++;
            return (uint32_t)v;
        }
        ps->pos = save;
        fail_at(ps, GM_ERR_SYNTAX, at, "invalid \\u{...} escape");
        return FAILED;
    }
    int64_t v = read_hex(ps, 4);
    if (v < 0) {
        fail_at(ps, GM_ERR_SYNTAX, at, "invalid \\u escape (four hex digits expected)");
        return FAILED;
    }
    if (v >= 0xD800 && v <= 0xDBFF && ps->len - ps->pos >= 6 && ps->p[ps->pos] == '\\' &&
        ps->p[ps->pos + 1] == 'u') {
        size_t save = ps->pos;
        ps->pos += 2;
        int64_t lo = read_hex(ps, 4);
        if (lo >= 0xDC00 && lo <= 0xDFFF)
            return (uint32_t)(0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00));
        ps->pos = save;
    }
    return (uint32_t)v;
}

/*
 * A character escape after the backslash (pos at the letter): the code
 * point, or FAILED. in_class: \b is backspace, \- is '-'.
 */
static uint32_t char_escape(parser *ps, size_t at, bool in_class)
{
    uint32_t c = peek(ps);
    switch (c) {
    case 't': ps->pos++; return '\t';
    case 'n': ps->pos++; return '\n';
    case 'v': ps->pos++; return '\v';
    case 'f': ps->pos++; return '\f';
    case 'r': ps->pos++; return '\r';
    case 'c': {
        uint8_t l = ps->pos + 1 < ps->len ? ps->p[ps->pos + 1] : 0;
        if ((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z')) {
            ps->pos += 2;
            return l % 32;
        }
        /* Annex B: a backslash that starts no escape is itself */
        return '\\';
    }
    case 'x': {
        ps->pos++;
        int64_t v = read_hex(ps, 2);
        if (v < 0)
            return 'x'; /* Annex B identity escape */
        return (uint32_t)v;
    }
    case 'u':
        ps->pos++;
        return read_u_escape(ps, at);
    case '0':
        if (ps->pos + 1 >= ps->len || ps->p[ps->pos + 1] < '0' || ps->p[ps->pos + 1] > '9') {
            ps->pos++;
            return 0;
        }
        break;
    default:
        break;
    }
    if (c >= '0' && c <= '7') {
        /* Annex B legacy octal (back references were handled by the caller) */
        uint32_t v = 0;
        int n = 0;
        while (n < 3 && peek(ps) >= '0' && peek(ps) <= '7' && v * 8 + (peek(ps) - '0') <= 0377) {
            v = v * 8 + (ps->p[ps->pos++] - '0');
            n++;
        }
        return v;
    }
    if (in_class && c == 'b') {
        ps->pos++;
        return '\b';
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        fail_at(ps, GM_ERR_SYNTAX, at, "unknown escape \\%c", (char)c);
        return FAILED;
    }
    if (at_end(ps)) {
        fail_at(ps, GM_ERR_SYNTAX, at, "the pattern ends with a backslash");
        return FAILED;
    }
    return next_char(ps); /* identity escape */
}

/* \p{...} or \P{...} after the letter: adds the category to s. */
static int property_escape(parser *ps, gm_cpset *s, bool negate, size_t at)
{
    if (peek(ps) != '{') {
        fail_at(ps, GM_ERR_SYNTAX, at, "\\p needs a {name}");
        return -1;
    }
    size_t start = ++ps->pos;
    while (!at_end(ps) && peek(ps) != '}')
        ps->pos++;
    if (at_end(ps)) {
        fail_at(ps, GM_ERR_SYNTAX, at, "unterminated \\p{...}");
        return -1;
    }
    size_t n = ps->pos - start;
    const char *name = (const char *)ps->p + start;
    ps->pos++;
    /* General_Category=X, gc=X */
    for (size_t i = 0; i < n; i++)
        if (name[i] == '=') {
            if ((i == 16 && !memcmp(name, "General_Category", 16)) || (i == 2 && !memcmp(name, "gc", 2))) {
                name += i + 1;
                n -= i + 1;
                break;
            }
            fail_at(ps, GM_ERR_UNSUPPORTED, at,
                    "Unicode property \\p{%.*s} (only general categories are supported)", (int)n,
                    name);
            return -1;
        }
    gm_cpset t = {0};
    int rc = -1;
    if (n == 3 && !memcmp(name, "Any", 3)) {
        rc = add_range(ps, &t, 0, GM_CP_MAX);
    } else if (n == 5 && !memcmp(name, "ASCII", 5)) {
        rc = add_range(ps, &t, 0, 0x7F);
    } else {
        for (size_t i = 0; i < sizeof catnames / sizeof *catnames; i++)
            if (strlen(catnames[i].name) == n && !memcmp(catnames[i].name, name, n)) {
                rc = add_category(ps, &t, catnames[i].mask);
                break;
            }
        if (rc && ps->st == GM_OK) {
            fail_at(ps, GM_ERR_UNSUPPORTED, at,
                    "Unicode property \\p{%.*s} (only general categories are supported)", (int)n,
                    name);
            gm_cpset_free(ps->mem, &t);
            return -1;
        }
    }
    if (!rc && negate && gm_cpset_negate(ps->mem, &t))
        rc = -1, nomem(ps);
    if (!rc && gm_cpset_add_set(ps->mem, s, &t))
        rc = -1, nomem(ps);
    gm_cpset_free(ps->mem, &t);
    return rc;
}

/* One class atom: a character (*cp) or a class escape added to s (*cp = FAILED). */
static int class_atom(parser *ps, gm_cpset *s, uint32_t *cp)
{
    *cp = FAILED;
    if (peek(ps) != '\\') {
        *cp = next_char(ps);
        return *cp == FAILED ? -1 : 0;
    }
    size_t at = ps->pos++;
    uint32_t c = peek(ps);
    if (c == 'd' || c == 'D' || c == 'w' || c == 'W' || c == 's' || c == 'S') {
        ps->pos++;
        return add_class(ps, s, c);
    }
    if (c == 'p' || c == 'P') {
        ps->pos++;
        return property_escape(ps, s, c == 'P', at);
    }
    if (c == '-') {
        ps->pos++;
        *cp = '-';
        return 0;
    }
    *cp = char_escape(ps, at, true);
    return *cp == FAILED ? -1 : 0;
}

static uint32_t parse_class(parser *ps)
{
    size_t at = ps->pos++;
    bool negate = false;
    if (peek(ps) == '^') {
        negate = true;
        ps->pos++;
    }
    gm_cpset s = {0};
    for (;;) {
        if (at_end(ps)) {
            gm_cpset_free(ps->mem, &s);
            fail_at(ps, GM_ERR_SYNTAX, at, "unterminated character class");
            return FAILED;
        }
        if (peek(ps) == ']') {
            ps->pos++;
            break;
        }
        uint32_t lo;
        if (class_atom(ps, &s, &lo))
            goto fail;
        if (peek(ps) == '-' && ps->pos + 1 < ps->len && ps->p[ps->pos + 1] != ']') {
            size_t dash = ps->pos++;
            uint32_t hi;
            gm_cpset t = {0};
            if (class_atom(ps, &t, &hi)) {
                gm_cpset_free(ps->mem, &t);
                goto fail;
            }
            if (lo == FAILED || hi == FAILED) {
                /* Annex B: a class escape next to '-' makes the '-' literal */
                int rc = gm_cpset_add_set(ps->mem, &s, &t);
                gm_cpset_free(ps->mem, &t);
                if (rc || (lo != FAILED && add_range(ps, &s, lo, lo)) ||
                    add_range(ps, &s, '-', '-') || (hi != FAILED && add_range(ps, &s, hi, hi))) {
                    nomem(ps);
                    goto fail;
                }
                continue;
            }
            if (hi < lo) {
                fail_at(ps, GM_ERR_SYNTAX, dash, "range out of order in a character class");
                goto fail;
            }
            if (add_range(ps, &s, lo, hi))
                goto fail;
            continue;
        }
        if (lo != FAILED && add_range(ps, &s, lo, lo))
            goto fail;
    }
    if (negate && gm_cpset_negate(ps->mem, &s)) {
        nomem(ps);
        goto fail;
    }
    return eset(ps, &s);
fail:
    gm_cpset_free(ps->mem, &s);
    return FAILED;
}

static uint32_t single(parser *ps, uint32_t lo, uint32_t hi)
{
    gm_cpset s = {0};
    if (add_range(ps, &s, lo, hi))
        return FAILED;
    return eset(ps, &s);
}

static uint32_t parse_disj(parser *ps);

/* A relaxed construct (lenient) or the error naming it. */
static uint32_t unsupported(parser *ps, size_t at, unsigned what, const char *name, uint32_t kind)
{
    if (!(ps->flags & GM_ECMA_LENIENT)) {
        fail_at(ps, GM_ERR_UNSUPPORTED, at, "%s has no exact grammar equivalent", name);
        return FAILED;
    }
    ps->relaxed |= what;
    return enew(ps, (ekind)kind, 0, 0);
}

/* Reads a group's body after its opener; consumes ')'. */
static uint32_t group_body(parser *ps, size_t at)
{
    uint32_t body = parse_disj(ps);
    if (body == FAILED)
        return FAILED;
    if (peek(ps) != ')') {
        fail_at(ps, GM_ERR_SYNTAX, at, "missing ')'");
        return FAILED;
    }
    ps->pos++;
    return body;
}

/*
 * One atom or assertion; *quantifiable says whether a quantifier may
 * follow. Returns the node, or FAILED.
 */
static uint32_t parse_atom(parser *ps, bool *quantifiable)
{
    size_t at = ps->pos;
    *quantifiable = true;
    uint32_t c = peek(ps);
    switch (c) {
    case '^':
        ps->pos++;
        *quantifiable = false;
        return enew(ps, EK_BOL, 0, 0);
    case '$':
        ps->pos++;
        *quantifiable = false;
        return enew(ps, EK_EOL, 0, 0);
    case '.': {
        ps->pos++;
        gm_cpset s = {0};
        if (add_range(ps, &s, '\n', '\n') || add_range(ps, &s, '\r', '\r') ||
            add_range(ps, &s, 0x2028, 0x2029)) {
            gm_cpset_free(ps->mem, &s);
            return FAILED;
        }
        if (gm_cpset_negate(ps->mem, &s)) {
            gm_cpset_free(ps->mem, &s);
            return nomem(ps);
        }
        return eset(ps, &s);
    }
    case '[':
        return parse_class(ps);
    case '(': {
        ps->pos++;
        if (peek(ps) != '?')
            return group_body(ps, at);
        ps->pos++;
        uint32_t k = peek(ps);
        if (k == ':') {
            ps->pos++;
            return group_body(ps, at);
        }
        if (k == '=' || k == '!' ||
            (k == '<' && ps->pos + 1 < ps->len && (ps->p[ps->pos + 1] == '=' || ps->p[ps->pos + 1] == '!'))) {
            static const char *names[] = {"a lookahead (?=...)", "a negative lookahead (?!...)",
                                          "a lookbehind (?<=...)", "a negative lookbehind (?<!...)"};
            int which = k == '=' ? 0 : k == '!' ? 1 : ps->p[ps->pos + 1] == '=' ? 2 : 3;
            ps->pos += which >= 2 ? 2 : 1;
            if (group_body(ps, at) == FAILED)
                return FAILED;
            *quantifiable = which < 2; /* Annex B allows quantified lookaheads */
            return unsupported(ps, at, GM_ECMA_RELAXED_LOOKAROUND, names[which], EK_EMPTY);
        }
        if (k == '<') {
            ps->pos++;
            while (!at_end(ps) && peek(ps) != '>')
                ps->pos++;
            if (at_end(ps)) {
                fail_at(ps, GM_ERR_SYNTAX, at, "unterminated group name");
                return FAILED;
            }
            ps->pos++;
            return group_body(ps, at);
        }
        fail_at(ps, GM_ERR_SYNTAX, at, "invalid group (?%c", (char)k);
        return FAILED;
    }
    case ')':
        fail_at(ps, GM_ERR_SYNTAX, at, "unbalanced ')'");
        return FAILED;
    case '*':
    case '+':
    case '?':
        fail_at(ps, GM_ERR_SYNTAX, at, "nothing to repeat");
        return FAILED;
    case '\\': {
        ps->pos++;
        if (at_end(ps)) {
            fail_at(ps, GM_ERR_SYNTAX, at, "the pattern ends with a backslash");
            return FAILED;
        }
        uint32_t e = peek(ps);
        if (e == 'b' || e == 'B') {
            ps->pos++;
            *quantifiable = false;
            return unsupported(ps, at, GM_ECMA_RELAXED_BOUNDARY,
                               e == 'b' ? "a word boundary \\b" : "a non-boundary \\B", EK_EMPTY);
        }
        if (e == 'd' || e == 'D' || e == 'w' || e == 'W' || e == 's' || e == 'S' || e == 'p' ||
            e == 'P') {
            gm_cpset s = {0};
            ps->pos++;
            int rc = e == 'p' || e == 'P' ? property_escape(ps, &s, e == 'P', at) : add_class(ps, &s, e);
            if (rc) {
                gm_cpset_free(ps->mem, &s);
                return FAILED;
            }
            return eset(ps, &s);
        }
        if (e == 'k' && ps->pos + 1 < ps->len && ps->p[ps->pos + 1] == '<') {
            ps->pos += 2;
            while (!at_end(ps) && peek(ps) != '>')
                ps->pos++;
            if (!at_end(ps))
                ps->pos++;
            return unsupported(ps, at, GM_ECMA_RELAXED_BACKREF, "a back reference \\k<...>",
                               EK_ANYSTR);
        }
        if (e >= '1' && e <= '9') {
            /* a back reference when that group exists, else (Annex B) an octal escape */
            size_t save = ps->pos;
            uint32_t v = 0;
            while (!at_end(ps) && peek(ps) >= '0' && peek(ps) <= '9' && v < 100000)
                v = v * 10 + (ps->p[ps->pos++] - '0');
            if (v <= ps->ngroups)
                return unsupported(ps, at, GM_ECMA_RELAXED_BACKREF, "a back reference \\N", EK_ANYSTR);
            ps->pos = save;
            if (e >= '8') {
                ps->pos++;
                return single(ps, e, e);
            }
        }
        uint32_t cp = char_escape(ps, at, false);
        return cp == FAILED ? FAILED : single(ps, cp, cp);
    }
    default: {
        uint32_t cp = next_char(ps);
        return cp == FAILED ? FAILED : single(ps, cp, cp);
    }
    }
}

/* Reads a decimal number at pos into *v (saturating); false when there is none. */
static bool read_count(parser *ps, uint32_t *v)
{
    size_t start = ps->pos;
    uint64_t x = 0;
    while (!at_end(ps) && peek(ps) >= '0' && peek(ps) <= '9') {
        x = x * 10 + (ps->p[ps->pos++] - '0');
        if (x > UINT32_MAX - 2)
            x = UINT32_MAX - 2;
    }
    *v = (uint32_t)x;
    return ps->pos > start;
}

/* A quantifier at pos: *min, *max (GM_RX_INF); false (pos unchanged) when there is none. */
static bool parse_quantifier(parser *ps, uint32_t *min, uint32_t *max)
{
    uint32_t c = peek(ps);
    if (c == '*' || c == '+' || c == '?') {
        ps->pos++;
        *min = c == '+' ? 1 : 0;
        *max = c == '?' ? 1 : GM_RX_INF;
    } else if (c == '{') {
        size_t save = ps->pos++;
        uint32_t lo, hi;
        if (!read_count(ps, &lo)) {
            ps->pos = save;
            return false;
        }
        hi = lo;
        if (peek(ps) == ',') {
            ps->pos++;
            if (!read_count(ps, &hi))
                hi = GM_RX_INF;
        }
        if (peek(ps) != '}') {
            ps->pos = save; /* Annex B: a literal '{' */
            return false;
        }
        ps->pos++;
        *min = lo;
        *max = hi;
    } else {
        return false;
    }
    if (peek(ps) == '?')
        ps->pos++; /* lazy: the same language */
    return true;
}

static uint32_t parse_alternative(parser *ps)
{
    size_t base = ps->stack.n;
    while (!at_end(ps) && peek(ps) != '|' && peek(ps) != ')') {
        bool quantifiable;
        uint32_t atom = parse_atom(ps, &quantifiable);
        if (atom == FAILED)
            return FAILED;
        uint32_t min, max;
        size_t qat = ps->pos;
        if (parse_quantifier(ps, &min, &max)) {
            if (!quantifiable) {
                fail_at(ps, GM_ERR_SYNTAX, qat, "nothing to repeat");
                return FAILED;
            }
            if (max != GM_RX_INF && max < min) {
                fail_at(ps, GM_ERR_SYNTAX, qat, "numbers out of order in a {m,n} quantifier");
                return FAILED;
            }
            if (min > ps->max_repeat || (max != GM_RX_INF && max > ps->max_repeat)) {
                fail_at(ps, GM_ERR_LIMIT, qat,
                        "a repeat count over the limit of %u (gm_limits.max_regex_repeat)",
                        ps->max_repeat);
                return FAILED;
            }
            atom = erep(ps, atom, min, max);
            if (atom == FAILED)
                return FAILED;
        }
        if (gm_vec_push(ps->mem, &ps->stack, atom))
            return nomem(ps);
    }
    return eparent(ps, EK_CAT, base);
}

static uint32_t parse_disj(parser *ps)
{
    if (++ps->depth > MAX_DEPTH) {
        fail_at(ps, GM_ERR_LIMIT, ps->pos, "the pattern nests groups more than %d deep", MAX_DEPTH);
        return FAILED;
    }
    size_t base = ps->stack.n;
    for (;;) {
        uint32_t alt = parse_alternative(ps);
        if (alt == FAILED)
            return FAILED;
        if (gm_vec_push(ps->mem, &ps->stack, alt))
            return nomem(ps);
        if (peek(ps) != '|')
            break;
        ps->pos++;
    }
    ps->depth--;
    return eparent(ps, EK_ALT, base);
}

/* Counts capturing groups, for telling back references from octal escapes. */
static uint32_t count_groups(const uint8_t *p, size_t len)
{
    uint32_t n = 0;
    bool in_class = false;
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '\\') {
            i++;
        } else if (in_class) {
            in_class = p[i] != ']';
        } else if (p[i] == '[') {
            in_class = true;
        } else if (p[i] == '(') {
            if (i + 1 >= len || p[i + 1] != '?' ||
                (i + 2 < len && p[i + 2] == '<' && i + 3 < len && p[i + 3] != '=' && p[i + 3] != '!'))
                n++;
        }
    }
    return n;
}

/* ---- lowering (note [anchors]) ---- */

static uint32_t rx_empty(parser *ps)
{
    if (ps->empty_node == FAILED) {
        ps->empty_node = gm_regex_add_node(ps->re, GM_RX_EMPTY);
        if (ps->empty_node == UINT32_MAX)
            return nomem(ps);
    }
    return ps->empty_node;
}

static uint32_t rx_any(parser *ps)
{
    if (ps->any_set == FAILED) {
        gm_cpset s = {0};
        if (add_range(ps, &s, 0, GM_CP_MAX))
            return FAILED;
        ps->any_set = gm_regex_add_set(ps->re, &s);
        if (ps->any_set == UINT32_MAX)
            return ps->any_set = FAILED, nomem(ps);
    }
    return ps->any_set;
}

static uint32_t rx_parent(parser *ps, gm_rx_kind kind, const uint32_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == FAILED)
            return FAILED;
    uint32_t id = gm_regex_add_parent(ps->re, kind, ids, n);
    return id == UINT32_MAX ? nomem(ps) : id;
}

/* Concatenation with NOTHING absorbing and EMPTY dropped. */
static uint32_t rx_cat2(parser *ps, uint32_t a, uint32_t b)
{
    if (a == FAILED || b == FAILED)
        return FAILED;
    if (a == NOTHING || b == NOTHING)
        return NOTHING;
    if (a == ps->empty_node)
        return b;
    if (b == ps->empty_node)
        return a;
    uint32_t k[2] = {a, b};
    return rx_parent(ps, GM_RX_CONCAT, k, 2);
}

static uint32_t rx_alt2(parser *ps, uint32_t a, uint32_t b)
{
    if (a == FAILED || b == FAILED)
        return FAILED;
    if (a == NOTHING)
        return b;
    if (b == NOTHING || a == b)
        return a;
    uint32_t k[2] = {a, b};
    return rx_parent(ps, GM_RX_ALT, k, 2);
}

static uint32_t rx_repeat(parser *ps, uint32_t x, uint32_t min, uint32_t max)
{
    if (x == FAILED)
        return FAILED;
    if (max == 0 || x == ps->empty_node)
        return rx_empty(ps);
    if (x == NOTHING)
        return min == 0 ? rx_empty(ps) : NOTHING;
    if (min == 1 && max == 1)
        return x;
    uint32_t id = rx_parent(ps, GM_RX_REPEAT, &x, 1);
    if (id != FAILED) {
        ps->re->nodes[id].min = min;
        ps->re->nodes[id].max = max;
    }
    return id;
}

static bool nullable(parser *ps, uint32_t n)
{
    const enode *e = &ps->nodes.v[n];
    switch (e->kind) {
    case EK_EMPTY:
    case EK_ANYSTR:
    case EK_BOL:
    case EK_EOL:
        return true;
    case EK_SET:
        return false;
    case EK_CAT:
        for (uint32_t i = 0; i < e->count; i++)
            if (!nullable(ps, ps->kids.v[e->first + i]))
                return false;
        return true;
    case EK_ALT:
        for (uint32_t i = 0; i < e->count; i++)
            if (nullable(ps, ps->kids.v[e->first + i]))
                return true;
        return false;
    case EK_REP:
        return e->a == 0 || nullable(ps, ps->kids.v[e->first]);
    }
    return false;
}

/* Memo slots per node: plain, nonempty-plain, then NE for the four (s,e). */
enum { M_PLAIN, M_NE_PLAIN, M_NE };

static uint32_t *memo_slot(parser *ps, uint32_t n, int what)
{
    return &ps->memo[(size_t)n * 8 + (size_t)what];
}

static uint32_t plain(parser *ps, uint32_t n);
static uint32_t ne_plain(parser *ps, uint32_t n);

/* The language of an anchor-free node. */
static uint32_t plain_uncached(parser *ps, uint32_t n)
{
    const enode *e = &ps->nodes.v[n];
    switch (e->kind) {
    case EK_EMPTY:
        return rx_empty(ps);
    case EK_SET:
        return e->a;
    case EK_ANYSTR:
        return rx_repeat(ps, rx_any(ps), 0, GM_RX_INF);
    case EK_CAT: {
        uint32_t r = rx_empty(ps);
        for (uint32_t i = 0; i < e->count && r != FAILED && r != NOTHING; i++)
            r = rx_cat2(ps, r, plain(ps, ps->kids.v[e->first + i]));
        return r;
    }
    case EK_ALT: {
        uint32_t r = NOTHING;
        for (uint32_t i = 0; i < e->count && r != FAILED; i++)
            r = rx_alt2(ps, r, plain(ps, ps->kids.v[e->first + i]));
        return r;
    }
    case EK_REP:
        return rx_repeat(ps, plain(ps, ps->kids.v[e->first]), e->a, e->b);
    default:
        return FAILED; /* anchors never reach here */
    }
}

static uint32_t plain(parser *ps, uint32_t n)
{
    uint32_t *slot = memo_slot(ps, n, M_PLAIN);
    if (!*slot) {
        uint32_t r = plain_uncached(ps, n);
        if (r == FAILED)
            return r;
        *slot = r + 1;
    }
    return *slot - 1;
}

/* Nonempty part of the suffix kids[i..] of a CAT (anchor-free). */
static uint32_t ne_cat_plain(parser *ps, const enode *e, uint32_t i)
{
    if (i == e->count)
        return NOTHING;
    uint32_t k = ps->kids.v[e->first + i];
    uint32_t rest = rx_empty(ps);
    for (uint32_t j = i + 1; j < e->count && rest != FAILED && rest != NOTHING; j++)
        rest = rx_cat2(ps, rest, plain(ps, ps->kids.v[e->first + j]));
    uint32_t r = rx_cat2(ps, ne_plain(ps, k), rest);
    if (nullable(ps, k))
        r = rx_alt2(ps, r, ne_cat_plain(ps, e, i + 1));
    return r;
}

static uint32_t ne_plain_uncached(parser *ps, uint32_t n)
{
    const enode *e = &ps->nodes.v[n];
    if (!nullable(ps, n))
        return plain(ps, n);
    switch (e->kind) {
    case EK_EMPTY:
        return NOTHING;
    case EK_ANYSTR:
        return rx_repeat(ps, rx_any(ps), 1, GM_RX_INF);
    case EK_CAT:
        return ne_cat_plain(ps, e, 0);
    case EK_ALT: {
        uint32_t r = NOTHING;
        for (uint32_t i = 0; i < e->count && r != FAILED; i++)
            r = rx_alt2(ps, r, ne_plain(ps, ps->kids.v[e->first + i]));
        return r;
    }
    case EK_REP: {
        uint32_t x = ps->kids.v[e->first];
        if (!nullable(ps, x))
            return rx_repeat(ps, plain(ps, x), 1, e->b);
        /* x nullable: x{m,M} = x{0,M}; a nonempty string starts with a nonempty x */
        uint32_t rest = rx_repeat(ps, plain(ps, x), 0, e->b == GM_RX_INF ? GM_RX_INF : e->b - 1);
        return rx_cat2(ps, ne_plain(ps, x), rest);
    }
    default:
        return FAILED;
    }
}

static uint32_t ne_plain(parser *ps, uint32_t n)
{
    uint32_t *slot = memo_slot(ps, n, M_NE_PLAIN);
    if (!*slot) {
        uint32_t r = ne_plain_uncached(ps, n);
        if (r == FAILED)
            return r;
        *slot = r + 1;
    }
    return *slot - 1;
}

static bool E(parser *ps, uint32_t n, bool s, bool e);
static uint32_t NE(parser *ps, uint32_t n, bool s, bool e);

/* E and NE of the suffix kids[i..] of a CAT. */
static bool E_cat(parser *ps, const enode *c, uint32_t i, bool s, bool e)
{
    for (; i < c->count; i++)
        if (!E(ps, ps->kids.v[c->first + i], s, e))
            return false;
    return true;
}

static uint32_t NE_cat(parser *ps, const enode *c, uint32_t i, bool s, bool e)
{
    if (i == c->count)
        return NOTHING;
    if (i + 1 == c->count)
        return NE(ps, ps->kids.v[c->first + i], s, e);
    uint32_t a = ps->kids.v[c->first + i];
    /* a nonempty, rest nonempty */
    uint32_t r = rx_cat2(ps, NE(ps, a, s, false), NE_cat(ps, c, i + 1, false, e));
    /* a nonempty, rest empty */
    if (E_cat(ps, c, i + 1, false, e))
        r = rx_alt2(ps, r, NE(ps, a, s, e));
    /* a empty, rest nonempty */
    if (E(ps, a, s, false))
        r = rx_alt2(ps, r, NE_cat(ps, c, i + 1, s, e));
    return r;
}

static bool E(parser *ps, uint32_t n, bool s, bool e)
{
    const enode *x = &ps->nodes.v[n];
    if (!x->anchored)
        return nullable(ps, n);
    switch (x->kind) {
    case EK_BOL:
        return s;
    case EK_EOL:
        return e;
    case EK_CAT:
        return E_cat(ps, x, 0, s, e);
    case EK_ALT:
        for (uint32_t i = 0; i < x->count; i++)
            if (E(ps, ps->kids.v[x->first + i], s, e))
                return true;
        return false;
    case EK_REP:
        return x->a == 0 || E(ps, ps->kids.v[x->first], s, e);
    default:
        return nullable(ps, n);
    }
}

static uint32_t NE_uncached(parser *ps, uint32_t n, bool s, bool e)
{
    const enode *x = &ps->nodes.v[n];
    switch (x->kind) {
    case EK_BOL:
    case EK_EOL:
        return NOTHING;
    case EK_CAT:
        return NE_cat(ps, x, 0, s, e);
    case EK_ALT: {
        uint32_t r = NOTHING;
        for (uint32_t i = 0; i < x->count && r != FAILED; i++)
            r = rx_alt2(ps, r, NE(ps, ps->kids.v[x->first + i], s, e));
        return r;
    }
    case EK_REP: {
        uint32_t k = ps->kids.v[x->first];
        uint32_t min = x->a, max = x->b;
        if (max == 0)
            return NOTHING;
        /* j nonempty iterations; empty ones may pad the count where E allows */
        bool pad1 = E(ps, k, s, false) || E(ps, k, false, e);
        bool pad2 = pad1 || E(ps, k, false, false);
        uint32_t r = NOTHING;
        if (min <= 1 || pad1)
            r = NE(ps, k, s, e);
        if (max >= 2) {
            uint32_t lo = pad2 ? 0 : (min > 2 ? min - 2 : 0);
            uint32_t hi = max == GM_RX_INF ? GM_RX_INF : max - 2;
            uint32_t mid = rx_repeat(ps, NE(ps, k, false, false), lo, hi);
            uint32_t two = rx_cat2(ps, rx_cat2(ps, NE(ps, k, s, false), mid), NE(ps, k, false, e));
            r = rx_alt2(ps, r, two);
        }
        return r;
    }
    default:
        return FAILED;
    }
}

static uint32_t NE(parser *ps, uint32_t n, bool s, bool e)
{
    if (!ps->nodes.v[n].anchored)
        return ne_plain(ps, n);
    uint32_t *slot = memo_slot(ps, n, M_NE + (s ? 2 : 0) + (e ? 1 : 0));
    if (!*slot) {
        uint32_t r = NE_uncached(ps, n, s, e);
        if (r == FAILED)
            return r;
        *slot = r + 1;
    }
    return *slot - 1;
}

/* L(n, s, e) = NE | (empty if E). */
static uint32_t L(parser *ps, uint32_t n, bool s, bool e)
{
    uint32_t r = NE(ps, n, s, e);
    if (E(ps, n, s, e))
        r = rx_alt2(ps, r, rx_empty(ps));
    return r;
}

/*
 * Strips what an unanchored search makes redundant from an anchor-free
 * root: S* X* P = S* P, and S* X{m,M} P = S* X{m} P (same at the end).
 */
static uint32_t trim_edges(parser *ps, uint32_t n)
{
    const enode *e = &ps->nodes.v[n];
    if (e->kind == EK_REP && e->a == 0)
        return FAILED - 1; /* marker: the pattern accepts every string */
    if (e->kind != EK_CAT)
        return n;
    uint32_t first = 0, last = e->count;
    while (first < last && ps->nodes.v[ps->kids.v[e->first + first]].kind == EK_REP &&
           ps->nodes.v[ps->kids.v[e->first + first]].a == 0)
        first++;
    while (last > first && ps->nodes.v[ps->kids.v[e->first + last - 1]].kind == EK_REP &&
           ps->nodes.v[ps->kids.v[e->first + last - 1]].a == 0)
        last--;
    if (first == 0 && last == e->count)
        return n;
    size_t base = ps->stack.n;
    for (uint32_t i = first; i < last; i++)
        if (gm_vec_push(ps->mem, &ps->stack, ps->kids.v[e->first + i]))
            return nomem(ps);
    if (first == last)
        return FAILED - 1;
    return eparent(ps, EK_CAT, base);
}

static uint32_t lower(parser *ps, uint32_t root)
{
    if (ps->flags & GM_ECMA_WHOLE)
        return L(ps, root, true, true);
    uint32_t any = rx_any(ps);
    uint32_t star = rx_repeat(ps, any, 0, GM_RX_INF);
    uint32_t plus = rx_repeat(ps, any, 1, GM_RX_INF);
    if (!ps->nodes.v[root].anchored) {
        if (nullable(ps, root))
            return star;
        uint32_t t = trim_edges(ps, root);
        if (t == FAILED - 1)
            return star;
        if (t == FAILED)
            return FAILED;
        return rx_cat2(ps, rx_cat2(ps, star, plain(ps, t)), star);
    }
    uint32_t r = L(ps, root, true, true);
    r = rx_alt2(ps, r, rx_cat2(ps, plus, L(ps, root, false, true)));
    r = rx_alt2(ps, r, rx_cat2(ps, L(ps, root, true, false), plus));
    r = rx_alt2(ps, r, rx_cat2(ps, rx_cat2(ps, plus, L(ps, root, false, false)), plus));
    return r;
}

gm_status gm_ecma_regex_parse(gm_regex *re, const char *pattern, size_t len, unsigned flags,
                              const gm_limits *limits, unsigned *relaxed, gm_error *err)
{
    parser ps = {0};
    ps.re = re;
    ps.mem = re->mem;
    ps.p = (const uint8_t *)pattern;
    ps.len = len;
    ps.flags = flags;
    ps.err = err;
    ps.st = GM_OK;
    ps.max_repeat = limits && limits->max_regex_repeat ? limits->max_regex_repeat : 1000;
    ps.any_set = FAILED;
    ps.empty_node = FAILED;
    ps.ngroups = count_groups(ps.p, len);
    if (relaxed)
        *relaxed = 0;
    uint32_t root = parse_disj(&ps);
    if (root != FAILED && !at_end(&ps))
        fail_at(&ps, GM_ERR_SYNTAX, ps.pos, "unbalanced ')'");
    if (ps.st == GM_OK && root != FAILED) {
        ps.memo = gm_mem_calloc(ps.mem, (ps.nodes.n + 2) * 8, sizeof *ps.memo); /* + trim_edges' node */
        if (!ps.memo)
            nomem(&ps);
        uint32_t r = ps.st == GM_OK ? lower(&ps, root) : FAILED;
        if (r == NOTHING) {
            gm_cpset none = {0};
            r = gm_regex_add_set(re, &none);
            if (r == UINT32_MAX)
                r = nomem(&ps);
        }
        if (r != FAILED)
            re->root = r;
        else if (ps.st == GM_OK)
            nomem(&ps);
    }
    gm_mem_free(ps.mem, ps.memo);
    gm_vec_free(ps.mem, &ps.nodes);
    gm_vec_free(ps.mem, &ps.kids);
    gm_vec_free(ps.mem, &ps.stack);
    if (relaxed)
        *relaxed = ps.relaxed;
    return ps.st;
}
