/*
 * The regex parser: Python 3.11's re/_parser.py, transcribed to C for the
 * dialect of note [regex dialect], building the gm_regex AST directly.
 * Where Python has a quirk (a '{' that does not start a valid count is a
 * literal, (?#...) comments end at an unescaped ')', global flags only at
 * the very start) we follow it, so that a pattern means the same here as
 * in Lark.
 */
#include "lexer/regex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hex.h"
#include "lexer/lexer.h"
#include "lexer/utf8_ranges.h"
#include "base/error.h"
#include "base/vec.h"

/* One token of the pattern: a character, or a backslash and the character after it. */
typedef struct token {
    size_t start;  /* byte offset */
    size_t end;
    uint32_t cp;   /* the character (after the backslash when escaped) */
    bool escaped;
} token;

typedef struct parser {
    gm_regex *re;
    gm_uclass *uc;
    const uint8_t *p;
    size_t len;
    size_t pos;
    uint32_t max_repeat;
    gm_error *err;
    gm_status st;
    uint32_t depth;
    bool lark;           /* GM_RE_LARK_MATCH: keep lookarounds and laziness (lexer/ordered.h) */
    bool xgr;            /* GM_RE_XGRAMMAR: XGrammar's additions (note [xgrammar regex]) */
    bool fold_ascii;     /* GM_RE_XGR_FOLD_ASCII: a global (?i) means flags="i" (ASCII) */
    GM_VEC(token) names; /* names of (?P<name>...) groups, for duplicates */
} parser;

typedef struct item {
    uint32_t node;
    bool repeat; /* made by a quantifier: another quantifier is "multiple repeat" */
} item;

static const unsigned TYPE_FLAGS = GM_RE_ASCII | GM_RE_UNICODE;

/* ---- errors ---- */

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

static gm_status fail_nomem(parser *ps)
{
    if (ps->st != GM_OK)
        return ps->st;
    ps->st = gm_mem_fail(ps->re->mem, ps->err, "a regex");
    return ps->st;
}

/* ---- AST construction ---- */

static uint32_t new_node(parser *ps, gm_rx_kind kind)
{
    uint32_t id = gm_regex_add_node(ps->re, kind);
    if (id == UINT32_MAX)
        fail_nomem(ps);
    return id;
}

/* A node with children ids[0..n). */
static uint32_t new_parent(parser *ps, gm_rx_kind kind, const uint32_t *ids, size_t n)
{
    uint32_t id = gm_regex_add_parent(ps->re, kind, ids, n);
    if (id == UINT32_MAX)
        fail_nomem(ps);
    return id;
}

/* Takes ownership of *set (it is reset to empty). */
static uint32_t new_set(parser *ps, gm_cpset *set)
{
    uint32_t id = gm_regex_add_set(ps->re, set);
    if (id == UINT32_MAX)
        fail_nomem(ps);
    return id;
}

static bool ascii_letter(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A literal character under the flags: case-closed when IGNORECASE applies to it. */
static uint32_t char_node(parser *ps, uint32_t cp, unsigned flags)
{
    if (flags & GM_RE_IGNORECASE) {
        bool ascii = flags & GM_RE_ASCII;
        if (!ascii || ascii_letter(cp)) {
            gm_cpset s = {0};
            if (gm_cpset_add_range(ps->re->mem, &s, cp, cp) ||
                gm_uclass_case_close(ps->uc, &s, ascii)) {
                gm_cpset_free(ps->re->mem, &s);
                fail_nomem(ps);
                return UINT32_MAX;
            }
            if (s.n > 1 || s.r[0].lo != s.r[0].hi)
                return new_set(ps, &s);
            gm_cpset_free(ps->re->mem, &s);
        }
    }
    uint32_t id = new_node(ps, GM_RX_CHAR);
    if (id != UINT32_MAX)
        ps->re->nodes[id].cp = cp;
    return id;
}

/* A class escape (d w s D W S) as a set node. */
static uint32_t class_node(parser *ps, char which, unsigned flags)
{
    gm_cpset s = {0};
    if (gm_uclass_add_class(ps->uc, &s, which, flags & GM_RE_ASCII)) {
        gm_cpset_free(ps->re->mem, &s);
        fail_nomem(ps);
        return UINT32_MAX;
    }
    return new_set(ps, &s);
}

static uint32_t seq_node(parser *ps, const item *items, size_t n)
{
    if (n == 0)
        return new_node(ps, GM_RX_EMPTY);
    if (n == 1)
        return items[0].node;
    uint32_t ids[64];
    uint32_t *v = ids;
    if (n > 64) {
        v = gm_mem_reallocarray(ps->re->mem, NULL, n, sizeof *v);
        if (!v) {
            fail_nomem(ps);
            return UINT32_MAX;
        }
    }
    for (size_t i = 0; i < n; i++)
        v[i] = items[i].node;
    uint32_t id = new_parent(ps, GM_RX_CONCAT, v, n);
    if (v != ids)
        gm_mem_free(ps->re->mem, v);
    return id;
}

/* ---- tokens ---- */

static bool at_end(const parser *ps)
{
    return ps->pos >= ps->len;
}

static int peek_byte(const parser *ps)
{
    return ps->pos < ps->len ? ps->p[ps->pos] : -1;
}

/* Decodes the character at off into *cp and returns its length, or fails. */
static size_t decode_at(parser *ps, size_t off, uint32_t *cp)
{
    int n = (int)gm_utf8_decode(ps->p + off, ps->len - off, cp);
    if (n == 0) {
        fail_at(ps, GM_ERR_SYNTAX, off, "the pattern is not valid UTF-8");
        return 0;
    }
    return (size_t)n;
}

/* Reads the next token; false (with ps->st set) on an error, or at the end (st stays OK). */
static bool get_token(parser *ps, token *t)
{
    if (at_end(ps))
        return false;
    t->start = ps->pos;
    t->escaped = false;
    size_t off = ps->pos;
    if (ps->p[off] == '\\') {
        if (off + 1 >= ps->len) {
            fail_at(ps, GM_ERR_SYNTAX, off, "bad escape (end of pattern)");
            return false;
        }
        t->escaped = true;
        off++;
    }
    size_t n = decode_at(ps, off, &t->cp);
    if (!n)
        return false;
    ps->pos = off + n;
    t->end = ps->pos;
    return true;
}

static bool match_byte(parser *ps, int c)
{
    if (peek_byte(ps) == c) {
        ps->pos++;
        return true;
    }
    return false;
}

/* Reads exactly n hex digits after an escape \x \u \U; fails with Python's message otherwise. */
static bool hex_escape(parser *ps, const token *t, int n, uint32_t *cp)
{
    uint32_t v = 0;
    int got = 0;
    while (got < n && gm_hex_value(peek_byte(ps)) >= 0) {
        v = v * 16 + (uint32_t)gm_hex_value(peek_byte(ps));
        ps->pos++;
        got++;
    }
    if (got != n) {
        /* XGrammar's wording too, where its dialect is read */
        fail_at(ps, GM_ERR_SYNTAX, t->start, "incomplete escape \\%c%.*s%s%c%s", (int)t->cp, got,
                (const char *)ps->p + t->end, ps->xgr ? " (\\" : "", ps->xgr ? (int)t->cp : ' ',
                !ps->xgr ? "" : n == 2 ? " must be followed by two hexadecimal digits)"
                         : n == 4 ? " must be followed by four hexadecimal digits)"
                                  : " must be followed by eight hexadecimal digits)");
        return false;
    }
    if (v > GM_CP_MAX) {
        fail_at(ps, GM_ERR_SYNTAX, t->start, "bad escape \\%c%.*s", (int)t->cp, got,
                (const char *)ps->p + t->end);
        return false;
    }
    *cp = v;
    return true;
}

static bool is_octal(int c)
{
    return c >= '0' && c <= '7';
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/*
 * note [xgrammar regex]
 * Where a regex is XGrammar's (GM_RE_XGRAMMAR: Regex(...) in EBNF, regex
 * grammars and structural-tag regexes, all read by ir/ebnf_regex.c), its
 * additions to Python's syntax, each an error in Python, are read as
 * ECMAScript (which XGrammar follows) defines them: \u{h...} (1 to 6 hex
 * digits, at most U+10FFFF), \cX (the control character X % 32, X an ASCII
 * letter), \e (U+001B) and named groups (?<name>...) (a plain group, as
 * (?P<name>...)). Terminals of Lark grammars stay Python's.
 */

/* \u{h...} after \u (pos at '{'). */
static bool braced_hex(parser *ps, const token *t, uint32_t *cp)
{
    size_t open = ps->pos++;
    uint32_t v = 0;
    int got = 0;
    while (gm_hex_value(peek_byte(ps)) >= 0) {
        if (v <= GM_CP_MAX)
            v = v * 16 + (uint32_t)gm_hex_value(peek_byte(ps));
        ps->pos++;
        got++;
    }
    if (got == 0 || !match_byte(ps, '}')) {
        fail_at(ps, GM_ERR_SYNTAX, t->start, "incomplete escape \\u%.*s (\\u{ must be followed by "
                "hexadecimal digits and '}')", (int)(ps->pos - open), (const char *)ps->p + open);
        return false;
    }
    if (v > GM_CP_MAX) {
        fail_at(ps, GM_ERR_SYNTAX, t->start, "escape \\u%.*s is beyond the Unicode range "
                "(at most \\u{10FFFF})", (int)(ps->pos - open), (const char *)ps->p + open);
        return false;
    }
    *cp = v;
    return true;
}

/* What an escape denotes. */
typedef enum esc_kind { ESC_LITERAL, ESC_CLASS, ESC_ERROR } esc_kind;

/* Escapes shared by classes and expressions: control letters, hex, unicode, named. */
static esc_kind common_escape(parser *ps, const token *t, uint32_t *cp, bool *handled)
{
    *handled = true;
    switch (t->cp) {
    case 'a': *cp = 7; return ESC_LITERAL;
    case 'f': *cp = '\f'; return ESC_LITERAL;
    case 'n': *cp = '\n'; return ESC_LITERAL;
    case 'r': *cp = '\r'; return ESC_LITERAL;
    case 't': *cp = '\t'; return ESC_LITERAL;
    case 'v': *cp = '\v'; return ESC_LITERAL;
    case '\\': *cp = '\\'; return ESC_LITERAL;
    case 'x': return hex_escape(ps, t, 2, cp) ? ESC_LITERAL : ESC_ERROR;
    case 'u':
        if (ps->xgr && peek_byte(ps) == '{')
            return braced_hex(ps, t, cp) ? ESC_LITERAL : ESC_ERROR;
        return hex_escape(ps, t, 4, cp) ? ESC_LITERAL : ESC_ERROR;
    case 'c':
    case 'e':
        if (!ps->xgr) {
            *handled = false;
            return ESC_ERROR;
        }
        if (t->cp == 'e') {
            *cp = 0x1b;
            return ESC_LITERAL;
        }
        if (peek_byte(ps) < 0 || !ascii_letter((uint32_t)peek_byte(ps))) {
            fail_at(ps, GM_ERR_SYNTAX, t->start, "bad escape \\c: \\c must be followed by an "
                    "ASCII letter");
            return ESC_ERROR;
        }
        *cp = (uint32_t)ps->p[ps->pos++] % 32;
        return ESC_LITERAL;
    case 'U': return hex_escape(ps, t, 8, cp) ? ESC_LITERAL : ESC_ERROR;
    case 'N':
        fail_at(ps, GM_ERR_UNSUPPORTED, t->start,
                "unsupported construct: named character escape \\N{...} (write the character or \\uXXXX)");
        return ESC_ERROR;
    case 'd': case 'w': case 's': case 'D': case 'W': case 'S':
        *cp = t->cp;
        return ESC_CLASS;
    default:
        *handled = false;
        return ESC_ERROR;
    }
}

/* An escape inside [...] (Python's _class_escape). */
static esc_kind class_escape(parser *ps, const token *t, uint32_t *cp)
{
    bool handled;
    esc_kind k = common_escape(ps, t, cp, &handled);
    if (handled)
        return k;
    if (t->cp == 'b') {
        *cp = 8;
        return ESC_LITERAL;
    }
    if (is_octal((int)t->cp)) {
        uint32_t v = t->cp - '0';
        size_t start = ps->pos;
        for (int i = 0; i < 2 && is_octal(peek_byte(ps)); i++)
            v = v * 8 + (uint32_t)(ps->p[ps->pos++] - '0');
        if (v > 0377) {
            fail_at(ps, GM_ERR_SYNTAX, t->start,
                    "octal escape value \\%c%.*s outside of range 0-0o377", (int)t->cp,
                    (int)(ps->pos - start), (const char *)ps->p + start);
            return ESC_ERROR;
        }
        *cp = v;
        return ESC_LITERAL;
    }
    if (t->cp < 128 && (ascii_letter(t->cp) || is_digit((int)t->cp))) {
        fail_at(ps, GM_ERR_SYNTAX, t->start, "bad escape \\%c", (int)t->cp);
        return ESC_ERROR;
    }
    *cp = t->cp;
    return ESC_LITERAL;
}

/* An escape outside classes (Python's _escape). */
static esc_kind expr_escape(parser *ps, const token *t, uint32_t *cp)
{
    switch (t->cp) {
    case 'A':
        fail_at(ps, GM_ERR_UNSUPPORTED, t->start,
                "unsupported construct: start-of-string anchor \\A (a terminal matches a whole lexeme)");
        return ESC_ERROR;
    case 'Z':
        fail_at(ps, GM_ERR_UNSUPPORTED, t->start,
                "unsupported construct: end-of-string anchor \\Z (a terminal matches a whole lexeme)");
        return ESC_ERROR;
    case 'b':
        fail_at(ps, GM_ERR_UNSUPPORTED, t->start, "unsupported construct: word boundary \\b%s",
                ps->xgr ? " (Word boundary assertion)" : "");
        return ESC_ERROR;
    case 'B':
        fail_at(ps, GM_ERR_UNSUPPORTED, t->start, "unsupported construct: non-word boundary \\B%s",
                ps->xgr ? " (Word boundary assertion)" : "");
        return ESC_ERROR;
    case 'p':
    case 'P':
    case 'k':
        if (!ps->xgr)
            break;
        /* ECMAScript's \p{...} and \k<name>, which XGrammar refuses too (in its words) */
        fail_at(ps, GM_ERR_UNSUPPORTED, t->start, t->cp == 'k'
                ? "unsupported construct: backreference \\k (Backreference)"
                : "unsupported construct: \\%c{...} (Unicode property escape)", (int)t->cp);
        return ESC_ERROR;
    default:
        break;
    }
    bool handled;
    esc_kind k = common_escape(ps, t, cp, &handled);
    if (handled)
        return k;
    if (t->cp == '0') {
        uint32_t v = 0;
        for (int i = 0; i < 2 && is_octal(peek_byte(ps)); i++)
            v = v * 8 + (uint32_t)(ps->p[ps->pos++] - '0');
        *cp = v;
        return ESC_LITERAL;
    }
    if (is_digit((int)t->cp)) {
        /* Octal escape (three octal digits) or group reference, as Python decides. */
        size_t start = ps->pos;
        if (is_digit(peek_byte(ps))) {
            int d2 = ps->p[ps->pos++];
            if (is_octal((int)t->cp) && is_octal(d2) && is_octal(peek_byte(ps))) {
                int d3 = ps->p[ps->pos++];
                uint32_t v = (t->cp - '0') * 64 + (uint32_t)(d2 - '0') * 8 + (uint32_t)(d3 - '0');
                if (v > 0377) {
                    fail_at(ps, GM_ERR_SYNTAX, t->start,
                            "octal escape value \\%c%c%c outside of range 0-0o377", (int)t->cp, d2, d3);
                    return ESC_ERROR;
                }
                *cp = v;
                return ESC_LITERAL;
            }
        }
        fail_at(ps, GM_ERR_UNSUPPORTED, t->start,
                "unsupported construct: backreference \\%c%.*s (terminals are regular languages%s)",
                (int)t->cp, (int)(ps->pos - start), (const char *)ps->p + start,
                ps->xgr ? "; Backreference" : "");
        return ESC_ERROR;
    }
    if (t->cp < 128 && ascii_letter(t->cp)) {
        fail_at(ps, GM_ERR_SYNTAX, t->start, "bad escape \\%c", (int)t->cp);
        return ESC_ERROR;
    }
    *cp = t->cp;
    return ESC_LITERAL;
}

/* ---- character classes ---- */

/* Shows a class item (for "bad character range" messages). */
static void show_token(const parser *ps, const token *t, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.*s", (int)(t->end - t->start), (const char *)ps->p + t->start);
}

/*
 * In XGrammar's dialect (ECMAScript's reading) a ']' right after '[' or '[^'
 * closes the class: [] is the empty class and [^] any character, and XGrammar
 * refuses both; Python reads that ']' as a literal ([]a] is ']' or 'a'). The
 * two readings of the same text differ, so the dialect refuses it too, with
 * XGrammar's words.
 */
static void empty_class_error(parser *ps, size_t open, bool negate)
{
    fail_at(ps, GM_ERR_SYNTAX, open, "empty character class %s (Empty character class is not "
            "allowed in XGrammar's regex dialect; write \\] for a literal ']')", negate ? "[^]" : "[]");
}

static uint32_t parse_class(parser *ps, size_t open, unsigned flags)
{
    gm_mem *m = ps->re->mem;
    gm_cpset cased = {0}; /* literals and ranges: case-closed under IGNORECASE */
    gm_cpset cats = {0};  /* \d \w \s and negations: never case-closed */
    bool negate = match_byte(ps, '^');
    size_t nitems = 0;
    uint32_t result = UINT32_MAX;
    bool ascii = flags & GM_RE_ASCII;
    for (;;) {
        token t1;
        if (!get_token(ps, &t1)) {
            if (ps->st == GM_OK)
                fail_at(ps, GM_ERR_SYNTAX, open, "unterminated character set");
            goto out;
        }
        if (!t1.escaped && t1.cp == ']' && nitems > 0)
            break;
        if (!t1.escaped && t1.cp == ']' && ps->xgr) {
            empty_class_error(ps, open, negate);
            goto out;
        }
        uint32_t c1 = t1.cp;
        esc_kind k1 = ESC_LITERAL;
        if (t1.escaped && (k1 = class_escape(ps, &t1, &c1)) == ESC_ERROR)
            goto out;
        if (match_byte(ps, '-')) {
            token t2;
            if (!get_token(ps, &t2)) {
                if (ps->st == GM_OK)
                    fail_at(ps, GM_ERR_SYNTAX, open, "unterminated character set");
                goto out;
            }
            if (!t2.escaped && t2.cp == ']') {
                int rc = k1 == ESC_CLASS ? gm_uclass_add_class(ps->uc, &cats, (char)c1, ascii)
                                         : gm_cpset_add_range(m, &cased, c1, c1);
                if (rc || gm_cpset_add_range(m, &cased, '-', '-')) {
                    fail_nomem(ps);
                    goto out;
                }
                break;
            }
            uint32_t c2 = t2.cp;
            esc_kind k2 = ESC_LITERAL;
            if (t2.escaped && (k2 = class_escape(ps, &t2, &c2)) == ESC_ERROR)
                goto out;
            if (k1 != ESC_LITERAL || k2 != ESC_LITERAL || c2 < c1) {
                char a[16], b[16];
                show_token(ps, &t1, a, sizeof a);
                show_token(ps, &t2, b, sizeof b);
                fail_at(ps, GM_ERR_SYNTAX, t1.start, "bad character range %s-%s", a, b);
                goto out;
            }
            if (gm_cpset_add_range(m, &cased, c1, c2)) {
                fail_nomem(ps);
                goto out;
            }
        } else {
            int rc = k1 == ESC_CLASS ? gm_uclass_add_class(ps->uc, &cats, (char)c1, ascii)
                                     : gm_cpset_add_range(m, &cased, c1, c1);
            if (rc) {
                fail_nomem(ps);
                goto out;
            }
        }
        nitems++;
    }
    if (((flags & GM_RE_IGNORECASE) && gm_uclass_case_close(ps->uc, &cased, ascii)) ||
        gm_cpset_add_set(m, &cased, &cats) || (negate && gm_cpset_negate(m, &cased))) {
        fail_nomem(ps);
        goto out;
    }
    result = new_set(ps, &cased);
out:
    gm_cpset_free(m, &cased);
    gm_cpset_free(m, &cats);
    return result;
}

/* ---- groups and flags ---- */

static int flag_bit(int c)
{
    switch (c) {
    case 'i': return GM_RE_IGNORECASE;
    case 'm': return GM_RE_MULTILINE;
    case 's': return GM_RE_DOTALL;
    case 'x': return GM_RE_VERBOSE;
    case 'a': return GM_RE_ASCII;
    case 'u': return GM_RE_UNICODE;
    case 'L': return -2; /* known to Python, unsupported here */
    case 't': return -3;
    default: return -1;
    }
}

static bool is_alpha(int c)
{
    return c >= 0 && c < 128 && ascii_letter((uint32_t)c);
}

/* Reads one raw character for the flag parser: -1 at end. Non-ASCII counts as "not a flag". */
static int flag_char(parser *ps)
{
    if (at_end(ps))
        return -1;
    int c = ps->p[ps->pos];
    if (c >= 0x80) {
        uint32_t cp;
        size_t n = decode_at(ps, ps->pos, &cp);
        if (!n)
            return -2;
        ps->pos += n;
        return 0x80;
    }
    ps->pos++;
    return c;
}

/*
 * Python's _parse_flags after "(?" and the first flag letter or '-'.
 * Returns 1 for global flags "(?flags)", 0 for scoped "(?flags-flags:", -1 on error.
 */
static int parse_flags(parser *ps, int c, size_t open, unsigned *add, unsigned *del)
{
    *add = *del = 0;
    if (c != '-') {
        for (;;) {
            int bit = flag_bit(c);
            if (bit == -2 || bit == -3) {
                fail_at(ps, GM_ERR_UNSUPPORTED, ps->pos - 1,
                        bit == -2 ? "unsupported construct: locale flag L (patterns are Unicode text)"
                                  : "unsupported construct: template flag t");
                return -1;
            }
            *add |= (unsigned)bit;
            if (((unsigned)bit & TYPE_FLAGS) && (*add & TYPE_FLAGS) != (unsigned)bit) {
                fail_at(ps, GM_ERR_SYNTAX, ps->pos - 1,
                        "bad inline flags: flags 'a', 'u' and 'L' are incompatible");
                return -1;
            }
            c = flag_char(ps);
            if (c == -2)
                return -1;
            if (c == -1) {
                fail_at(ps, GM_ERR_SYNTAX, ps->pos, "missing -, : or )");
                return -1;
            }
            if (c == ')' || c == '-' || c == ':')
                break;
            if (flag_bit(c) == -1) {
                fail_at(ps, GM_ERR_SYNTAX, ps->pos - 1, is_alpha(c) ? "unknown flag" : "missing -, : or )");
                return -1;
            }
        }
    }
    if (c == ')')
        return 1;
    if (c == '-') {
        c = flag_char(ps);
        if (c == -2)
            return -1;
        if (c == -1 || flag_bit(c) == -1) {
            fail_at(ps, GM_ERR_SYNTAX, c == -1 ? ps->pos : ps->pos - 1,
                    c != -1 && is_alpha(c) ? "unknown flag" : "missing flag");
            return -1;
        }
        for (;;) {
            int bit = flag_bit(c);
            if (bit < 0 || ((unsigned)bit & TYPE_FLAGS)) {
                fail_at(ps, GM_ERR_SYNTAX, ps->pos - 1,
                        "bad inline flags: cannot turn off flags 'a', 'u' and 'L'");
                return -1;
            }
            *del |= (unsigned)bit;
            c = flag_char(ps);
            if (c == -2)
                return -1;
            if (c == -1) {
                fail_at(ps, GM_ERR_SYNTAX, ps->pos, "missing :");
                return -1;
            }
            if (c == ':')
                break;
            if (flag_bit(c) == -1) {
                fail_at(ps, GM_ERR_SYNTAX, ps->pos - 1, is_alpha(c) ? "unknown flag" : "missing :");
                return -1;
            }
        }
    }
    if (*add & *del) {
        fail_at(ps, GM_ERR_SYNTAX, open, "bad inline flags: flag turned on and off");
        return -1;
    }
    return 0;
}

/*
 * XGrammar documents a leading (?i) in Regex(...) as its flags="i": ASCII
 * letters fold, nothing else (Regex("(?i)Σ") does not match "σ"), so
 * there (GM_RE_XGR_FOLD_ASCII) it brings GM_RE_ASCII, as flags="i" does in
 * ir/ebnf_parse.c, unless the pattern or the flags choose a type already.
 * Elsewhere (from_regex, Lark terminals) (?i) stays Python's Unicode folding.
 */
static unsigned xgr_inline_fold(const parser *ps, unsigned add, unsigned flags)
{
    if (ps->fold_ascii && (add & GM_RE_IGNORECASE) && !(add & TYPE_FLAGS) && !(flags & TYPE_FLAGS))
        return GM_RE_ASCII;
    return 0;
}

/* Reads a group name up to terminator (Python's getuntil + checkgroupname); false on error. */
static bool group_name(parser *ps, int terminator, token *name)
{
    name->start = ps->pos;
    for (;;) {
        if (at_end(ps)) {
            if (ps->pos == name->start)
                fail_at(ps, GM_ERR_SYNTAX, ps->pos, "missing group name");
            else
                fail_at(ps, GM_ERR_SYNTAX, name->start, "missing %c, unterminated name", terminator);
            return false;
        }
        if (ps->p[ps->pos] == terminator)
            break;
        uint32_t cp;
        size_t n = decode_at(ps, ps->pos, &cp);
        if (!n)
            return false;
        ps->pos += n;
    }
    name->end = ps->pos;
    ps->pos++;
    if (name->end == name->start) {
        fail_at(ps, GM_ERR_SYNTAX, name->start, "missing group name");
        return false;
    }
    /* str.isidentifier() for ASCII names; non-ASCII letters are accepted as Python does for most. */
    for (size_t i = name->start; i < name->end; i++) {
        uint8_t c = ps->p[i];
        bool ok = c >= 0x80 || c == '_' || ascii_letter(c) || (i > name->start && is_digit(c));
        if (!ok) {
            fail_at(ps, GM_ERR_SYNTAX, name->start, "bad character in group name '%.*s'",
                    (int)(name->end - name->start), (const char *)ps->p + name->start);
            return false;
        }
    }
    return true;
}

static uint32_t parse_alt(parser *ps, unsigned *flags, int nested);

/*
 * A "(" construct. Returns the group's node, or UINT32_MAX with *skip set
 * when it produced nothing (a comment or global flags), or UINT32_MAX with
 * ps->st set on an error.
 */
static uint32_t parse_group(parser *ps, size_t open, unsigned *flags, int nested, bool first,
                            size_t nitems, bool *skip)
{
    *skip = false;
    unsigned inner = *flags;
    int look = -1; /* a lookaround: its GM_RX_* kind */
    if (match_byte(ps, '?')) {
        if (at_end(ps)) {
            fail_at(ps, GM_ERR_SYNTAX, ps->pos, "unexpected end of pattern");
            return UINT32_MAX;
        }
        int c = ps->p[ps->pos++];
        switch (c) {
        case 'P':
            if (match_byte(ps, '<')) {
                token name;
                if (!group_name(ps, '>', &name))
                    return UINT32_MAX;
                for (size_t i = 0; i < ps->names.n; i++) {
                    const token *o = &ps->names.v[i];
                    if (o->end - o->start == name.end - name.start &&
                        !memcmp(ps->p + o->start, ps->p + name.start, name.end - name.start)) {
                        fail_at(ps, GM_ERR_SYNTAX, name.start, "redefinition of group name '%.*s'",
                                (int)(name.end - name.start), (const char *)ps->p + name.start);
                        return UINT32_MAX;
                    }
                }
                if (gm_vec_push(ps->re->mem, &ps->names, name)) {
                    fail_nomem(ps);
                    return UINT32_MAX;
                }
            } else if (match_byte(ps, '=')) {
                fail_at(ps, GM_ERR_UNSUPPORTED, open,
                        "unsupported construct: named backreference (?P=name) (terminals are regular languages)");
                return UINT32_MAX;
            } else {
                fail_at(ps, GM_ERR_SYNTAX, open, "unknown extension ?P%c", at_end(ps) ? ' ' : ps->p[ps->pos]);
                return UINT32_MAX;
            }
            break;
        case ':':
            break;
        case '#': {
            /* A comment ends at the first unescaped ')'. */
            for (;;) {
                token t;
                if (!get_token(ps, &t)) {
                    if (ps->st == GM_OK)
                        fail_at(ps, GM_ERR_SYNTAX, open, "missing ), unterminated comment");
                    return UINT32_MAX;
                }
                if (!t.escaped && t.cp == ')')
                    break;
            }
            *skip = true;
            return UINT32_MAX;
        }
        case '=':
            look = GM_RX_AHEAD;
            break;
        case '!':
            look = GM_RX_NOT_AHEAD;
            break;
        case '<':
            if (match_byte(ps, '=')) {
                look = GM_RX_BEHIND;
            } else if (match_byte(ps, '!')) {
                look = GM_RX_NOT_BEHIND;
            } else if (ps->xgr && !at_end(ps)) {
                /* (?<name>...): a named group, as (?P<name>...) (note [xgrammar regex]) */
                token name;
                if (!group_name(ps, '>', &name))
                    return UINT32_MAX;
            } else {
                if (at_end(ps))
                    fail_at(ps, GM_ERR_SYNTAX, ps->pos, "unexpected end of pattern");
                else
                    fail_at(ps, GM_ERR_SYNTAX, open, "unknown extension ?<%c", ps->p[ps->pos]);
                return UINT32_MAX;
            }
            break;
        case '(':
            fail_at(ps, GM_ERR_UNSUPPORTED, open, "unsupported construct: conditional group (?(id)yes|no)");
            return UINT32_MAX;
        case '>':
            fail_at(ps, GM_ERR_UNSUPPORTED, open,
                    "unsupported construct: atomic group (?>...) (its backtracking semantics are not regular)");
            return UINT32_MAX;
        default:
            if (c == '-' || flag_bit(c) != -1) {
                unsigned add, del;
                int g = parse_flags(ps, c, open, &add, &del);
                if (g < 0)
                    return UINT32_MAX;
                if (g == 1) {
                    if (!first || nitems > 0) {
                        fail_at(ps, GM_ERR_SYNTAX, open, "global flags not at the start of the expression");
                        return UINT32_MAX;
                    }
                    if ((add & TYPE_FLAGS) && (*flags & TYPE_FLAGS) && (add & TYPE_FLAGS) != (*flags & TYPE_FLAGS)) {
                        fail_at(ps, GM_ERR_SYNTAX, open, "ASCII and UNICODE flags are incompatible");
                        return UINT32_MAX;
                    }
                    add |= xgr_inline_fold(ps, add, *flags);
                    *flags |= add;
                    *skip = true;
                    return UINT32_MAX;
                }
                if (add & TYPE_FLAGS)
                    inner &= ~TYPE_FLAGS;
                inner = (inner | add) & ~del;
            } else {
                fail_at(ps, GM_ERR_SYNTAX, open, "unknown extension ?%c", c);
                return UINT32_MAX;
            }
        }
    }
    if (look >= 0 && !ps->lark) {
        fail_at(ps, GM_ERR_UNSUPPORTED, open, "unsupported construct: %s", gm_regex_look_name(look));
        return UINT32_MAX;
    }
    if (++ps->depth > GM_REGEX_MAX_DEPTH) {
        fail_at(ps, GM_ERR_LIMIT, open, "groups nested deeper than %d", GM_REGEX_MAX_DEPTH);
        return UINT32_MAX;
    }
    uint32_t node = parse_alt(ps, &inner, nested + 1);
    ps->depth--;
    if (node == UINT32_MAX)
        return node;
    if (!match_byte(ps, ')')) {
        fail_at(ps, GM_ERR_SYNTAX, open, "missing ), unterminated subpattern");
        return UINT32_MAX;
    }
    if (look >= 0) {
        /* Kept for the ordered determinizer (lexer/ordered.h). */
        node = new_parent(ps, GM_RX_LOOK, &node, 1);
        if (node != UINT32_MAX) {
            ps->re->nodes[node].look = (uint8_t)look;
            ps->re->nodes[node].at = (uint32_t)open;
        }
    }
    return node;
}

/* ---- quantifiers ---- */

/* Reads decimal digits, saturating at UINT32_MAX; false when there are none. */
static bool read_count(parser *ps, uint32_t *v)
{
    size_t start = ps->pos;
    uint64_t x = 0;
    while (is_digit(peek_byte(ps))) {
        x = x * 10 + (uint64_t)(ps->p[ps->pos++] - '0');
        if (x > UINT32_MAX)
            x = UINT32_MAX;
    }
    *v = (uint32_t)x;
    return ps->pos > start;
}

/*
 * A quantifier starting with t (one of * + ? {). Returns 1 when items[n-1]
 * was replaced, 0 when '{' turned out to be a literal, -1 on error.
 */
static int parse_quantifier(parser *ps, const token *t, item *items, size_t n)
{
    uint32_t min, max;
    if (t->cp == '?') {
        min = 0;
        max = 1;
    } else if (t->cp == '*') {
        min = 0;
        max = GM_RX_INF;
    } else if (t->cp == '+') {
        min = 1;
        max = GM_RX_INF;
    } else {
        if (peek_byte(ps) == '}')
            return 0;
        size_t here = ps->pos;
        uint32_t lo = 0, hi = 0;
        bool has_lo = read_count(ps, &lo), has_hi;
        if (match_byte(ps, ',')) {
            has_hi = read_count(ps, &hi);
        } else {
            hi = lo;
            has_hi = has_lo;
        }
        if (!match_byte(ps, '}')) {
            ps->pos = here;
            return 0;
        }
        min = has_lo ? lo : 0;
        max = has_hi ? hi : GM_RX_INF;
        if (min > ps->max_repeat || (max != GM_RX_INF && max > ps->max_repeat)) {
            fail_at(ps, GM_ERR_LIMIT, t->start,
                    "repetition count %u is larger than the limit %u (gm_limits.max_regex_repeat)",
                    min > ps->max_repeat ? min : max, ps->max_repeat);
            return -1;
        }
        if (max < min) {
            fail_at(ps, GM_ERR_SYNTAX, t->start, "min repeat greater than max repeat");
            return -1;
        }
    }
    if (n == 0) {
        fail_at(ps, GM_ERR_SYNTAX, t->start, "nothing to repeat");
        return -1;
    }
    if (items[n - 1].repeat) {
        fail_at(ps, GM_ERR_SYNTAX, t->start, "multiple repeat");
        return -1;
    }
    /* Lazy (?) and possessive (+) forms: same language, note [regex dialect];
       a terminal keeps the laziness for the ordered determinizer (lexer/ordered.h),
       which has no way to give nothing back as a possessive loop does. */
    bool lazy = match_byte(ps, '?');
    if (!lazy && peek_byte(ps) == '+') {
        if (ps->lark) {
            fail_at(ps, GM_ERR_UNSUPPORTED, ps->pos,
                    "unsupported construct: possessive quantifier (it never gives back what it "
                    "took, which a regular automaton cannot follow; write the loop without it)");
            return -1;
        }
        ps->pos++;
    }
    uint32_t child = items[n - 1].node;
    uint32_t id = new_parent(ps, GM_RX_REPEAT, &child, 1);
    if (id == UINT32_MAX)
        return -1;
    ps->re->nodes[id].min = min;
    ps->re->nodes[id].max = max;
    ps->re->nodes[id].lazy = lazy && ps->lark;
    ps->re->nodes[id].at = (uint32_t)t->start;
    items[n - 1].node = id;
    items[n - 1].repeat = true;
    return 1;
}

/* ---- sequences and alternation ---- */

static bool is_verbose_space(uint32_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static uint32_t any_node(parser *ps, unsigned flags)
{
    gm_cpset s = {0};
    int rc = (flags & GM_RE_DOTALL) ? gm_cpset_add_range(ps->re->mem, &s, 0, GM_CP_MAX)
                                    : (gm_cpset_add_range(ps->re->mem, &s, 0, '\n' - 1) ||
                                       gm_cpset_add_range(ps->re->mem, &s, '\n' + 1, GM_CP_MAX));
    if (rc) {
        gm_cpset_free(ps->re->mem, &s);
        fail_nomem(ps);
        return UINT32_MAX;
    }
    return new_set(ps, &s);
}

/* Python's _parse: one alternative, up to '|' or ')' or the end. */
static uint32_t parse_seq(parser *ps, unsigned *flags, int nested, bool first)
{
    GM_VEC(item) items = {0};
    uint32_t result = UINT32_MAX;
    for (;;) {
        int b = peek_byte(ps);
        if (b < 0 || b == '|' || b == ')')
            break;
        token t;
        if (!get_token(ps, &t))
            goto out;
        if ((*flags & GM_RE_VERBOSE) && !t.escaped) {
            if (is_verbose_space(t.cp))
                continue;
            if (t.cp == '#') {
                /* Python skips tokens, so an escaped newline does not end the comment. */
                token c;
                while (get_token(ps, &c) && (c.escaped || c.cp != '\n')) {
                }
                if (ps->st != GM_OK)
                    goto out;
                continue;
            }
        }
        uint32_t node = UINT32_MAX;
        if (t.escaped) {
            uint32_t cp;
            esc_kind k = expr_escape(ps, &t, &cp);
            if (k == ESC_ERROR)
                goto out;
            node = k == ESC_CLASS ? class_node(ps, (char)cp, *flags) : char_node(ps, cp, *flags);
        } else {
            switch (t.cp) {
            case '[':
                node = parse_class(ps, t.start, *flags);
                break;
            case '*': case '+': case '?': case '{': {
                int q = parse_quantifier(ps, &t, items.v, items.n);
                if (q < 0)
                    goto out;
                if (q > 0)
                    continue;
                node = char_node(ps, '{', *flags);
                break;
            }
            case '.':
                node = any_node(ps, *flags);
                break;
            case '(': {
                bool skip;
                node = parse_group(ps, t.start, flags, nested, first, items.n, &skip);
                if (skip)
                    continue;
                break;
            }
            case '^':
                fail_at(ps, GM_ERR_UNSUPPORTED, t.start,
                        "unsupported construct: anchor ^ (a terminal matches a whole lexeme)");
                goto out;
            case '$':
                fail_at(ps, GM_ERR_UNSUPPORTED, t.start,
                        "unsupported construct: anchor $ (a terminal matches a whole lexeme)");
                goto out;
            default:
                node = char_node(ps, t.cp, *flags);
                break;
            }
        }
        if (node == UINT32_MAX)
            goto out;
        item it = {node, false};
        if (gm_vec_push(ps->re->mem, &items, it)) {
            fail_nomem(ps);
            goto out;
        }
    }
    result = seq_node(ps, items.v, items.n);
out:
    gm_vec_free(ps->re->mem, &items);
    return ps->st == GM_OK ? result : UINT32_MAX;
}

/* Python's _parse_sub: alternatives separated by '|'. */
static uint32_t parse_alt(parser *ps, unsigned *flags, int nested)
{
    GM_VEC(uint32_t) alts = {0};
    uint32_t result = UINT32_MAX;
    for (;;) {
        uint32_t n = parse_seq(ps, flags, nested + 1, nested == 0 && alts.n == 0);
        if (n == UINT32_MAX)
            goto out;
        if (gm_vec_push(ps->re->mem, &alts, n)) {
            fail_nomem(ps);
            goto out;
        }
        if (!match_byte(ps, '|'))
            break;
    }
    result = alts.n == 1 ? alts.v[0] : new_parent(ps, GM_RX_ALT, alts.v, alts.n);
out:
    gm_vec_free(ps->re->mem, &alts);
    return ps->st == GM_OK ? result : UINT32_MAX;
}

/* ---- public ---- */

void gm_regex_init(gm_regex *re, gm_mem *m)
{
    memset(re, 0, sizeof *re);
    re->mem = m;
    re->root = UINT32_MAX;
}

void gm_regex_free(gm_regex *re)
{
    for (size_t i = 0; i < re->nsets; i++)
        gm_cpset_free(re->mem, &re->sets[i]);
    gm_mem_free(re->mem, re->sets);
    gm_mem_free(re->mem, re->nodes);
    gm_mem_free(re->mem, re->kids);
    gm_regex_init(re, re->mem);
}

gm_status gm_regex_parse(gm_regex *re, gm_uclass *uc, const char *pattern, size_t len,
                         unsigned flags, const gm_limits *limits, gm_error *err)
{
    gm_limits lim;
    gm_limits_init_defaults(&lim);
    parser ps = {0};
    ps.re = re;
    ps.uc = uc;
    ps.p = (const uint8_t *)pattern;
    ps.len = len;
    ps.err = err;
    ps.max_repeat = limits && limits->max_regex_repeat ? limits->max_regex_repeat : lim.max_regex_repeat;
    uint32_t max_bytes = limits && limits->max_input_bytes ? limits->max_input_bytes : lim.max_input_bytes;
    if (len > max_bytes)
        return fail_at(&ps, GM_ERR_LIMIT, 0,
                       "the pattern is %zu bytes long, more than the limit of %u (gm_limits.max_input_bytes)",
                       len, max_bytes);
    if ((flags & GM_RE_ASCII) && (flags & GM_RE_UNICODE))
        return fail_at(&ps, GM_ERR_SYNTAX, 0, "ASCII and UNICODE flags are incompatible");
    ps.lark = flags & GM_RE_LARK_MATCH;
    ps.xgr = flags & GM_RE_XGRAMMAR;
    ps.fold_ascii = flags & GM_RE_XGR_FOLD_ASCII;
    unsigned f = flags;
    uint32_t root = parse_alt(&ps, &f, 0);
    if (root != UINT32_MAX && !at_end(&ps))
        fail_at(&ps, GM_ERR_SYNTAX, ps.pos, "unbalanced parenthesis");
    gm_vec_free(re->mem, &ps.names);
    if (ps.st != GM_OK)
        return ps.st;
    re->root = root;
    return GM_OK;
}

gm_status gm_regex_literal(gm_regex *re, gm_uclass *uc, const char *bytes, size_t len,
                           unsigned flags, gm_error *err)
{
    parser ps = {0};
    ps.re = re;
    ps.uc = uc;
    ps.p = (const uint8_t *)bytes;
    ps.len = len;
    ps.err = err;
    GM_VEC(item) items = {0};
    for (size_t i = 0; i < len && ps.st == GM_OK;) {
        uint32_t cp;
        int n = (flags & GM_RE_IGNORECASE) ? (int)gm_utf8_decode(ps.p + i, len - i, &cp) : 0;
        uint32_t node;
        if (n > 0) {
            node = char_node(&ps, cp, flags);
            i += (size_t)n;
        } else {
            node = new_node(&ps, GM_RX_BYTE);
            if (node != UINT32_MAX)
                re->nodes[node].cp = ps.p[i];
            i++;
        }
        item it = {node, false};
        if (node != UINT32_MAX && gm_vec_push(re->mem, &items, it))
            fail_nomem(&ps);
    }
    uint32_t root = ps.st == GM_OK ? seq_node(&ps, items.v, items.n) : UINT32_MAX;
    gm_vec_free(re->mem, &items);
    if (ps.st != GM_OK)
        return ps.st;
    re->root = root;
    return GM_OK;
}

bool gm_regex_nullable(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *n = &re->nodes[node];
    switch (n->kind) {
    case GM_RX_EMPTY:
        return true;
    case GM_RX_CHAR:
    case GM_RX_SET:
    case GM_RX_BYTE:
        return false;
    case GM_RX_CONCAT:
        for (uint32_t i = 0; i < n->count; i++)
            if (!gm_regex_nullable(re, re->kids[n->first + i]))
                return false;
        return true;
    case GM_RX_ALT:
        for (uint32_t i = 0; i < n->count; i++)
            if (gm_regex_nullable(re, re->kids[n->first + i]))
                return true;
        return false;
    case GM_RX_REPEAT:
        return n->min == 0 || gm_regex_nullable(re, re->kids[n->first]);
    case GM_RX_LOOK:
        return true;
    }
    return false;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t cap = (uint64_t)1 << 62;
    return a + b > cap ? cap : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t cap = (uint64_t)1 << 62;
    if (a && b > cap / a)
        return cap;
    return a * b > cap ? cap : a * b;
}

uint64_t gm_regex_min_states(const gm_regex *re, uint32_t node)
{
    const gm_rx_node *n = &re->nodes[node];
    uint64_t s = 0;
    switch (n->kind) {
    case GM_RX_EMPTY:
    case GM_RX_LOOK:
        return 0;
    case GM_RX_CHAR: {
        uint8_t buf[4];
        return n->cp >= 0xD800 && n->cp <= 0xDFFF ? 1 : (uint64_t)gm_utf8_encode_char(n->cp, buf);
    }
    case GM_RX_SET:
    case GM_RX_BYTE:
        return 1;
    case GM_RX_CONCAT:
    case GM_RX_ALT:
        for (uint32_t i = 0; i < n->count; i++)
            s = sat_add(s, gm_regex_min_states(re, re->kids[n->first + i]));
        return n->kind == GM_RX_ALT ? sat_add(s, 1) : s;
    case GM_RX_REPEAT: {
        uint64_t c = gm_regex_min_states(re, re->kids[n->first]);
        if (n->max == GM_RX_INF)
            return sat_add(sat_mul(c, n->min > 1 ? n->min : 1), 1);
        return sat_add(sat_mul(c, n->max), n->max - n->min);
    }
    }
    return s;
}

void gm_regex_format_error(char *buf, size_t cap, const gm_error *err, const char *pattern,
                           size_t len)
{
    if (!cap)
        return;
    if (!err->column || !pattern) {
        snprintf(buf, cap, "%s", err->message);
        return;
    }
    /* Show at most 60 bytes around the column, on one line, and a caret under it. */
    size_t col = err->column - 1;
    size_t from = col > 40 ? col - 40 : 0, to = from + 60 < len ? from + 60 : len;
    char line[64], caret[64];
    size_t nl = 0, nc = 0;
    for (size_t i = from; i < to; i++) {
        char c = pattern[i];
        line[nl++] = c == '\n' || c == '\r' || c == '\t' ? ' ' : c;
        /* Continuation bytes of a UTF-8 character take no column on screen. */
        if (i < col && (((const uint8_t *)pattern)[i] & 0xC0) != 0x80)
            caret[nc++] = ' ';
    }
    caret[nc++] = '^';
    snprintf(buf, cap, "%s at column %u\n  %.*s\n  %.*s", err->message, err->column, (int)nl, line,
             (int)nc, caret);
}

size_t gm_re_flags_parse(const char *letters, size_t len, unsigned *flags)
{
    unsigned f = 0;
    size_t i = 0;
    for (; i < len; i++) {
        int bit = flag_bit((unsigned char)letters[i]);
        if (bit < 0)
            break;
        f |= (unsigned)bit;
    }
    *flags = f;
    return i;
}
