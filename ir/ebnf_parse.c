/*
 * The GBNF and EBNF front ends (ir/ebnf_parse.h): a hand-written
 * recursive-descent parser from grammar text to the IR (ir/ebnf.h).
 *
 * note [ebnf dialect]
 * GM_EBNF_GBNF is llama.cpp's GBNF as its grammars/README.md and its
 * parser (src/llama-grammar.cpp) define it:
 *   - rules `name ::= body`, names of [A-Za-z0-9_-] (the README's set;
 *     older parsers lack '_'); a rule ends at a newline, except inside
 *     parentheses and after `::=` or `|`; `#` comments to the end of line;
 *   - "..." literals and [...] / [^...] classes of code points, with the
 *     escapes \xXX (exactly two digits), \uXXXX, \UXXXXXXXX, \t \n \r \\
 *     \" \[ \] \- ; raw newlines may appear inside them (as in llama.cpp);
 *     `.` is any code point; ranges a-z, a '-' first or last is literal;
 *   - ( ) grouping, | alternatives (empty ones allowed: `ws ::= | " "`),
 *     postfix * + ? {m} {m,} {m,n} (spaces allowed inside the braces, and
 *     chained postfixes apply to what precedes them: `x{2}{3}` is x{6});
 *   - llama.cpp's token syntax: `<text>` is the special token whose text
 *     is `<text>` brackets included (`<|channel|>`, `<think>`): GM_EX_TOKEN,
 *     produced only by that token id, never by bytes. The id form `<[42]>`
 *     and negated tokens `!<...>` are GM_ERR_UNSUPPORTED (the IR names
 *     tokens by text, and "any token but" is not a language of bytes).
 * Where llama.cpp is silent or lax we pick the strict reading: code points
 * above U+10FFFF, reversed ranges [z-a], {m,n} with m > n, a surrogate in a
 * literal (it has no UTF-8) are errors; a surrogate in a class is allowed and
 * matches nothing; `[]` is the empty set (it matches nothing, where llama.cpp
 * accidentally reads "") and `[^]` any code point; a rule defined twice is
 * an error naming both places (llama.cpp silently keeps the last definition;
 * XGrammar rejects it too); the text must be UTF-8 and hold no NUL byte.
 *
 * GM_EBNF_XGRAMMAR is XGrammar's EBNF (cpp/grammar_parser.cc): GBNF plus
 *   - newlines are plain white space: a rule ends where the next
 *     `name ::=` starts (XGrammar's rule), so bodies may span lines freely;
 *   - XGrammar's escapes: \' \" \? \\ \a \b \f \n \r \t \v \0 \e, \x with
 *     any number of hex digits (unlike GBNF's two), \uXXXX, \UXXXXXXXX, and
 *     in classes also \^ \$ \. \* \+ \? \( \) \[ \] \{ \} \| \/ \- ; no raw
 *     newline inside a literal or a class (XGrammar rejects it);
 *   - a lookahead assertion after a rule's body: `rule ::= body (= expr)`
 *     (note [lookahead assertions]);
 *   - Regex("pattern"): a regex (lexer/regex.h dialect, the lexer's parser)
 *     as an expression;
 *   - our own additions, needed so that gm_ebnf_print can write every IR:
 *     byte strings %"..." and byte classes %[...] / %[^...] whose \xNN
 *     (exactly two digits) and plain ASCII characters are raw bytes
 *     (GM_EX_BYTES that are not UTF-8, GM_EX_BYTESET); special tokens
 *     with any text: <"..."> (a byte string between < and >; llama.cpp's
 *     <text> form works too); Until("s1", "s2", ...) and
 *     Until("s1", "s2", ..., end=i), the free text GM_EX_UNTIL of
 *     ir/ebnf.h note [until] (text holding none of the strings, or
 *     text up to and including the first one, which is s_i; the strings
 *     are literals or byte strings, not empty), valid UTF-8 unless
 *     bytes=1 is given, of at most n characters with max_chars=n.
 * Not taken from XGrammar, each GM_ERR_UNSUPPORTED naming it: TagDispatch,
 * TokenTagDispatch, Token(ids), ExcludeToken(ids) (token-id sets: the IR
 * names tokens by text), rule attributes name[max_tokens=..., capture=...],
 * class escapes \d \w \s (XGrammar rejects them too), Regex's named
 * arguments. Names are [A-Za-z0-9_-] in both dialects: XGrammar also allows
 * '.', which we keep as GBNF's any-character.
 *
 * note [lookahead assertions]
 * `rule ::= body (= expr)` means: the rule matches a string s only where
 * the text after s begins with a string of expr's language; expr is not
 * consumed. The parser stores expr in gm_ebnf_rule.lookahead and nothing
 * else changes (the body's language is the same). XGrammar uses such
 * assertions to decide tokens earlier; here the engine decides: it must
 * either enforce the assertion exactly or refuse the grammar with
 * GM_ERR_UNSUPPORTED naming the rule — never ignore it silently, since a
 * mask that allows a token the assertion forbids is a wrong answer.
 */
#include "ir/ebnf_parse.h"

#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "base/vec.h"
#include "lexer/utf8_ranges.h"

typedef struct parser {
    gm_ebnf *g;
    gm_mem *m;
    const char *file;      /* owned by g */
    const char *text;
    size_t len, pos;
    bool xg;               /* GM_EBNF_XGRAMMAR */
    const gm_limits *limits;
    gm_error *err;
    uint32_t depth;        /* open parentheses */
    GM_VEC(uint32_t) stack;   /* items of the sequences and alternatives being built */
    GM_VEC(size_t) def_off;   /* [rule] offset of its definition's name, SIZE_MAX = none */
    GM_VEC(size_t) use_off;   /* [rule] offset of its first use, SIZE_MAX = none */
    GM_VEC(uint8_t) buf;      /* a literal's bytes while it is read */
    GM_VEC(uint32_t) defs;    /* defined rules in text order */
} parser;

/* ---- errors --------------------------------------------------------------- */

static gm_status error_at(parser *p, gm_status code, size_t off, const char *fmt, ...) GM_PRINTF(4, 5);
static gm_status error_at(parser *p, gm_status code, size_t off, const char *fmt, ...)
{
    char msg[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gm_srcloc loc = gm_srcloc_of_offset(p->file, p->text, p->len, off);
    return gm_error_set_at(p->err, code, loc, p->text, p->len, "%s", msg);
}

static gm_status nomem(parser *p)
{
    return gm_mem_fail(p->m, p->err, "parsing a grammar");
}

/* The character at off for messages: 'x', a newline, the end... */
static const char *describe(const parser *p, size_t off, char *buf, size_t cap)
{
    if (off >= p->len)
        return "the end of the grammar";
    unsigned char c = (unsigned char)p->text[off];
    if (c == '\n' || c == '\r')
        return "a newline";
    if (c < 0x20 || c == 0x7f) {
        snprintf(buf, cap, "byte 0x%02X", c);
        return buf;
    }
    size_t n = 1;
    while (n < 4 && off + n < p->len && ((unsigned char)p->text[off + n] & 0xC0) == 0x80)
        n++;
    snprintf(buf, cap, "'%.*s'", (int)n, p->text + off);
    return buf;
}

static gm_status unexpected(parser *p, const char *expected)
{
    char b[16];
    return error_at(p, GM_ERR_SYNTAX, p->pos, "expected %s, found %s", expected,
                    describe(p, p->pos, b, sizeof b));
}

/* ---- characters ------------------------------------------------------------ */

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1; }

static int peek_at(const parser *p, size_t k)
{
    return p->pos + k < p->len ? (unsigned char)p->text[p->pos + k] : -1;
}

static bool is_name_char(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

/* Skips blanks and comments; newlines too when nl (always in the XGrammar dialect). */
static void skip_space(parser *p, bool nl)
{
    nl = nl || p->xg;
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (c == ' ' || c == '\t' || (nl && (c == '\n' || c == '\r'))) {
            p->pos++;
        } else if (c == '#') {
            while (p->pos < p->len && p->text[p->pos] != '\n' && p->text[p->pos] != '\r')
                p->pos++;
        } else {
            break;
        }
    }
}

/* The name at pos (its length, 0 when none). */
static size_t name_len(const parser *p, size_t off)
{
    size_t n = 0;
    while (off + n < p->len && is_name_char((unsigned char)p->text[off + n]))
        n++;
    return n;
}

/*
 * Whether a rule definition starts at pos: a name, then (after blanks,
 * comments and, in the XGrammar dialect, newlines; and an XGrammar
 * attribute block [...]) `::=`. Leaves pos unchanged.
 */
static bool at_rule_start(parser *p)
{
    size_t save = p->pos, n = name_len(p, p->pos);
    bool yes = false;
    if (n) {
        p->pos += n;
        skip_space(p, false);
        if (p->xg && peek(p) == '[') {
            while (p->pos < p->len && p->text[p->pos] != ']' && p->text[p->pos] != '\n')
                p->pos++;
            if (peek(p) == ']')
                p->pos++;
            skip_space(p, false);
        }
        yes = p->len - p->pos >= 3 && memcmp(p->text + p->pos, "::=", 3) == 0;
    }
    p->pos = save;
    return yes;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Reads `digits` hex digits at pos (digits 0: one or more, XGrammar's \x)
 * into *v. Returns false when they are missing or the value passes
 * U+10FFFF (the caller reports it).
 */
static bool read_hex(parser *p, int digits, uint32_t *v)
{
    uint64_t x = 0;
    int n = 0;
    while ((digits == 0 || n < digits) && hexval(peek(p)) >= 0) {
        x = x * 16 + (uint64_t)hexval(peek(p));
        if (x > 0xFFFFFFFFu)
            x = 0xFFFFFFFFu + 1ull; /* stays too large, without overflowing */
        p->pos++;
        n++;
    }
    *v = x > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)x;
    return n > 0 && (digits == 0 || n == digits);
}

enum { IN_STRING, IN_CLASS, IN_BYTES, IN_BYTECLASS };

/*
 * One character of a literal, class, byte string or byte class at pos
 * (an escape or a UTF-8 character; the text is known to be UTF-8):
 * returns GM_OK and *cp, or reports the error.
 */
static gm_status read_char(parser *p, int where, uint32_t *cp)
{
    size_t start = p->pos;
    int c = peek(p);
    bool bytes = where == IN_BYTES || where == IN_BYTECLASS;
    if (c != '\\') {
        if (bytes && c >= 0x80)
            return error_at(p, GM_ERR_SYNTAX, start,
                            "a byte string or byte class holds ASCII characters and \\xNN escapes only");
        size_t k = gm_utf8_decode((const uint8_t *)p->text + p->pos, p->len - p->pos, cp);
        p->pos += k ? k : 1;
        return GM_OK;
    }
    p->pos++;
    int e = peek(p);
    if (e < 0)
        return error_at(p, GM_ERR_SYNTAX, start, "unterminated escape at the end of the grammar");
    p->pos++;
    switch (e) {
    case 'n': *cp = '\n'; return GM_OK;
    case 'r': *cp = '\r'; return GM_OK;
    case 't': *cp = '\t'; return GM_OK;
    case '\\': case '"': case '[': case ']': case '-': *cp = (uint32_t)e; return GM_OK;
    case 'x': case 'u': case 'U': {
        int digits = e == 'u' ? 4 : e == 'U' ? 8 : (p->xg && !bytes) ? 0 : 2;
        if (!read_hex(p, digits, cp)) {
            if (digits == 0)
                return error_at(p, GM_ERR_SYNTAX, start, "bad escape \\x: expected hex digits");
            return error_at(p, GM_ERR_SYNTAX, start, "bad escape \\%c: expected %d hex digits", e,
                            digits);
        }
        if (bytes && e != 'x')
            return error_at(p, GM_ERR_SYNTAX, start,
                            "bad escape \\%c in a byte string or byte class: write bytes as \\xNN", e);
        if (*cp > GM_CP_MAX)
            return error_at(p, GM_ERR_SYNTAX, start, "code point %.*s is past U+10FFFF",
                            (int)(p->pos - start), p->text + start);
        return GM_OK;
    }
    default: break;
    }
    if (p->xg) {
        static const char plain[] = "'?";
        static const char ctrl[] = "abfv0e";
        static const uint32_t ctrl_cp[] = {7, 8, 12, 11, 0, 27};
        static const char cls[] = "^$.*+?()[]{}|/-";
        if (strchr(plain, e)) {
            *cp = (uint32_t)e;
            return GM_OK;
        }
        const char *k = strchr(ctrl, e);
        if (k) {
            *cp = ctrl_cp[k - ctrl];
            return GM_OK;
        }
        if ((where == IN_CLASS || where == IN_BYTECLASS) && strchr(cls, e)) {
            *cp = (uint32_t)e;
            return GM_OK;
        }
        if (where == IN_CLASS && strchr("dwsDWS", e))
            return error_at(p, GM_ERR_UNSUPPORTED, start,
                            "class escape \\%c is not supported in a character class (as in "
                            "XGrammar): list the characters", e);
    }
    size_t n = 1;
    while (n < 4 && start + 1 + n < p->len && ((unsigned char)p->text[start + 1 + n] & 0xC0) == 0x80)
        n++;
    return error_at(p, GM_ERR_SYNTAX, start, "bad escape \\%.*s", (int)n, p->text + start + 1);
}

/* ---- building ----------------------------------------------------------------- */

static gm_status push(parser *p, uint32_t id)
{
    if (id == GM_EX_NONE || gm_vec_push(p->m, &p->stack, id))
        return nomem(p);
    return GM_OK;
}

/* Replaces stack[base..] with one node (seq or alt of them). */
static gm_status reduce(parser *p, size_t base, bool alt)
{
    size_t n = p->stack.n - base;
    const uint32_t *ids = n ? p->stack.v + base : NULL;
    uint32_t id = alt ? gm_ebnf_add_alt(p->g, ids, n) : gm_ebnf_add_seq(p->g, ids, n);
    p->stack.n = base;
    return push(p, id);
}

static bool grow_rule_arrays(parser *p)
{
    uint32_t n = p->g->nrules;
    while (p->def_off.n < n) {
        if (gm_vec_push(p->m, &p->def_off, SIZE_MAX) || gm_vec_push(p->m, &p->use_off, SIZE_MAX))
            return false;
    }
    return true;
}

static gm_status utf8_push(parser *p, uint32_t cp)
{
    if (gm_vec_reserve(p->m, &p->buf, p->buf.n + 4))
        return nomem(p);
    p->buf.n += (size_t)gm_utf8_encode_char(cp, p->buf.v + p->buf.n);
    return GM_OK;
}

/*
 * A quoted literal at pos (pos at the opening quote) into p->buf: code
 * points as UTF-8, or raw bytes when `bytes`.
 */
static gm_status read_quoted(parser *p, bool bytes)
{
    size_t start = p->pos;
    p->pos++;
    p->buf.n = 0;
    for (;;) {
        int c = peek(p);
        if (c < 0 || (p->xg && (c == '\n' || c == '\r')))
            return error_at(p, GM_ERR_SYNTAX, start, "unterminated string literal");
        if (c == '"')
            break;
        size_t at = p->pos;
        uint32_t cp;
        gm_status st = read_char(p, bytes ? IN_BYTES : IN_STRING, &cp);
        if (st)
            return st;
        if (bytes) {
            if (gm_vec_push(p->m, &p->buf, (uint8_t)cp))
                return nomem(p);
            continue;
        }
        if (cp >= 0xD800 && cp <= 0xDFFF)
            return error_at(p, GM_ERR_SYNTAX, at,
                            "surrogate code point U+%04X in a string literal has no UTF-8 encoding",
                            cp);
        if ((st = utf8_push(p, cp)))
            return st;
    }
    p->pos++;
    return GM_OK;
}

static gm_status parse_string(parser *p, bool bytes)
{
    gm_status st = read_quoted(p, bytes);
    if (st)
        return st;
    return push(p, p->buf.n ? gm_ebnf_add_bytes(p->g, p->buf.v, p->buf.n) : gm_ebnf_add_empty(p->g));
}

/* A class [...] or [^...] at pos; with bytes, a byte class (after its '%'). */
static gm_status parse_class(parser *p, bool bytes)
{
    size_t start = p->pos;
    p->pos++;
    bool negate = false;
    if (peek(p) == '^') {
        negate = true;
        p->pos++;
    }
    gm_cpset set = {0};
    uint32_t bits[8] = {0};
    gm_status st = GM_OK;
    int where = bytes ? IN_BYTECLASS : IN_CLASS;
    while (st == GM_OK) {
        int c = peek(p);
        if (c < 0 || (p->xg && (c == '\n' || c == '\r'))) {
            st = error_at(p, GM_ERR_SYNTAX, start, "unterminated character class");
            break;
        }
        if (c == ']')
            break;
        size_t at = p->pos;
        uint32_t lo, hi;
        if ((st = read_char(p, where, &lo)))
            break;
        hi = lo;
        if (peek(p) == '-' && peek_at(p, 1) != ']' && peek_at(p, 1) >= 0) {
            p->pos++;
            if (p->xg && (peek(p) == '\n' || peek(p) == '\r'))
                continue; /* reported as unterminated */
            if ((st = read_char(p, where, &hi)))
                break;
            if (hi < lo) {
                st = error_at(p, GM_ERR_SYNTAX, at, "reversed range %.*s in a character class",
                              (int)(p->pos - at), p->text + at);
                break;
            }
        }
        if (bytes) {
            for (uint32_t b = lo; b <= hi; b++)
                bits[b >> 5] |= 1u << (b & 31);
        } else if (gm_cpset_add_range(p->m, &set, lo, hi)) {
            st = nomem(p);
        }
    }
    if (st == GM_OK) {
        p->pos++;
        if (bytes) {
            if (negate)
                for (int i = 0; i < 8; i++)
                    bits[i] = ~bits[i];
            st = push(p, gm_ebnf_add_byteset(p->g, bits));
        } else if (negate && gm_cpset_negate(p->m, &set)) {
            st = nomem(p);
        } else {
            return push(p, gm_ebnf_add_set(p->g, &set)); /* takes the set, even on failure */
        }
    }
    gm_cpset_free(p->m, &set);
    return st;
}

/* A special token at pos: <text> (llama.cpp) or <"bytes"> (XGrammar dialect). */
static gm_status parse_token(parser *p)
{
    size_t start = p->pos;
    if (peek_at(p, 1) == '[')
        return error_at(p, GM_ERR_UNSUPPORTED, start,
                        "token ids <[id]> are not supported: name the special token by its text, "
                        "as in <|end|>");
    if (p->xg && peek_at(p, 1) == '"') {
        p->pos++;
        gm_status st = read_quoted(p, true);
        if (st)
            return st;
        if (peek(p) != '>')
            return unexpected(p, "'>' to close the special token <\"...\">");
        p->pos++;
        if (p->buf.n == 0)
            return error_at(p, GM_ERR_SYNTAX, start, "empty special token <\"\">");
        return push(p, gm_ebnf_add_token(p->g, p->buf.v, p->buf.n));
    }
    size_t end = start + 1;
    while (end < p->len && p->text[end] != '>' && p->text[end] != '\n' && p->text[end] != '\r')
        end++;
    if (end >= p->len || p->text[end] != '>')
        return error_at(p, GM_ERR_SYNTAX, start, "unterminated special token: expected '>'");
    p->pos = end + 1;
    return push(p, gm_ebnf_add_token(p->g, p->text + start, end + 1 - start));
}

static gm_status parse_alternates(parser *p, bool nested);

/* Reads a repetition count at pos. */
static gm_status read_count(parser *p, uint32_t *v)
{
    size_t start = p->pos;
    uint64_t x = 0;
    if (peek(p) < '0' || peek(p) > '9')
        return unexpected(p, "a number in {...}");
    while (peek(p) >= '0' && peek(p) <= '9') {
        if (x <= GM_EBNF_MAX_REPEAT)
            x = x * 10 + (uint64_t)(peek(p) - '0');
        p->pos++;
    }
    if (x > GM_EBNF_MAX_REPEAT)
        return error_at(p, GM_ERR_LIMIT, start, "repetition count %.*s is larger than %u",
                        (int)(p->pos - start), p->text + start, GM_EBNF_MAX_REPEAT);
    *v = (uint32_t)x;
    return GM_OK;
}

/* Regex("pattern") of the XGrammar dialect, pos after the name. */
static gm_status parse_regex_macro(parser *p, size_t start)
{
    p->pos++; /* ( */
    skip_space(p, true);
    if (peek(p) != '"')
        return unexpected(p, "a string literal: Regex(\"pattern\")");
    size_t lit = p->pos;
    gm_status st = read_quoted(p, false);
    if (st)
        return st;
    skip_space(p, true);
    if (peek(p) == ',')
        return error_at(p, GM_ERR_UNSUPPORTED, p->pos,
                        "Regex(...) takes one argument here (named arguments such as json_string "
                        "are not supported)");
    if (peek(p) != ')')
        return unexpected(p, "')' to close Regex(...)");
    p->pos++;
    uint32_t node;
    gm_error rerr;
    gm_error_clear(&rerr);
    const char *pattern = p->buf.n ? (const char *)p->buf.v : "";
    st = gm_ebnf_add_regex(p->g, pattern, p->buf.n, 0, p->limits, &node, &rerr);
    if (st == GM_ERR_NOMEM)
        return nomem(p);
    if (st)
        return error_at(p, st, lit, "in Regex(...) at %s%u of the pattern: %s",
                        rerr.column ? "column " : "", rerr.column, rerr.message);
    (void)start;
    return push(p, node);
}

/* Until("s", ..., end=i, bytes=1, max_chars=n, before=1) of the XGrammar dialect, pos after
   the name (before=1: GM_UNTIL_BEFORE, which needs end=). */
static gm_status parse_until_macro(parser *p)
{
    size_t base = p->stack.n;
    uint32_t which = GM_EX_NONE, bytes = 0, max_chars = GM_EX_INF, before = 0;
    gm_status st;
    p->pos++; /* ( */
    for (;;) {
        skip_space(p, true);
        size_t at = p->pos;
        size_t n = p->stack.n > base ? name_len(p, p->pos) : 0;
        if (n) {
            /* named arguments, after the strings */
            const char *name = p->text + p->pos;
            uint32_t *slot = n == 3 && !memcmp(name, "end", 3)         ? &which
                             : n == 5 && !memcmp(name, "bytes", 5)     ? &bytes
                             : n == 9 && !memcmp(name, "max_chars", 9) ? &max_chars
                             : n == 6 && !memcmp(name, "before", 6)    ? &before
                                                                       : NULL;
            if (!slot)
                return error_at(p, GM_ERR_SYNTAX, at, "Until(...) takes end=, bytes=, "
                                "max_chars= and before=, not \"%.*s\"", (int)n, name);
            p->pos += n;
            skip_space(p, true);
            if (peek(p) != '=')
                return unexpected(p, "'=' after an argument name in Until(...)");
            p->pos++;
            skip_space(p, true);
            size_t num = p->pos;
            if ((st = read_count(p, slot)))
                return st;
            if (slot == &which && which >= p->stack.n - base)
                return error_at(p, GM_ERR_SYNTAX, num,
                                "Until(...) has %zu strings, so end=%u names none of them",
                                p->stack.n - base, which);
            if ((slot == &bytes && bytes > 1) || (slot == &before && before > 1))
                return error_at(p, GM_ERR_SYNTAX, num, "%s= is 0 or 1",
                                slot == &bytes ? "bytes" : "before");
            if (slot == &max_chars && max_chars > GM_EBNF_MAX_REPEAT)
                return error_at(p, GM_ERR_LIMIT, num, "max_chars above %u", GM_EBNF_MAX_REPEAT);
        } else {
            bool raw = peek(p) == '%' && peek_at(p, 1) == '"';
            if (peek(p) != '"' && !raw)
                return unexpected(p, "a string literal in Until(...)");
            p->pos += raw;
            if ((st = read_quoted(p, raw)))
                return st;
            if (p->buf.n == 0)
                return error_at(p, GM_ERR_SYNTAX, at, "the strings of Until(...) may not be empty");
            if ((st = push(p, gm_ebnf_add_bytes(p->g, p->buf.v, p->buf.n))))
                return st;
        }
        skip_space(p, true);
        if (peek(p) == ')')
            break;
        if (peek(p) != ',')
            return unexpected(p, "',' or ')' in Until(...)");
        p->pos++;
    }
    p->pos++;
    if (bytes && max_chars != GM_EX_INF)
        return error_at(p, GM_ERR_SYNTAX, p->pos - 1, "max_chars counts characters, which "
                        "Until(..., bytes=1) does not keep");
    if (before && which == GM_EX_NONE)
        return error_at(p, GM_ERR_SYNTAX, p->pos - 1, "before=1 needs end=: the text before "
                        "which end string");
    uint32_t id = gm_ebnf_add_until(p->g, p->stack.v + base, p->stack.n - base, which,
                                    (bytes ? GM_UNTIL_BYTES : 0) | (before ? GM_UNTIL_BEFORE : 0),
                                    max_chars);
    p->stack.n = base;
    return push(p, id);
}

static const char *const unsupported_macros[] = {"TagDispatch", "TokenTagDispatch", "Token",
                                                 "ExcludeToken"};

/* A rule reference (or an XGrammar macro) at pos. */
static gm_status parse_name_item(parser *p)
{
    size_t start = p->pos, n = name_len(p, p->pos);
    const char *name = p->text + start;
    p->pos += n;
    if (p->xg) {
        size_t save = p->pos;
        skip_space(p, true);
        bool call = peek(p) == '(' && peek_at(p, 1) != '=';
        if (n == 5 && memcmp(name, "Regex", 5) == 0) {
            if (!call)
                return unexpected(p, "'(' after Regex");
            return parse_regex_macro(p, start);
        }
        if (n == 5 && memcmp(name, "Until", 5) == 0) {
            if (!call)
                return unexpected(p, "'(' after Until");
            return parse_until_macro(p);
        }
        for (size_t i = 0; i < sizeof unsupported_macros / sizeof *unsupported_macros; i++)
            if (strlen(unsupported_macros[i]) == n && memcmp(name, unsupported_macros[i], n) == 0)
                return error_at(p, GM_ERR_UNSUPPORTED, start,
                                "XGrammar's %s(...) is not supported in grammar text",
                                unsupported_macros[i]);
        p->pos = save;
    }
    uint32_t r = gm_ebnf_rule_get(p->g, name, n);
    if (r == GM_EX_NONE || !grow_rule_arrays(p))
        return nomem(p);
    if (p->use_off.v[r] == SIZE_MAX)
        p->use_off.v[r] = start;
    return push(p, gm_ebnf_add_ref(p->g, r));
}

/* A postfix operator at pos applied to the item on top of the stack. */
static gm_status parse_postfix(parser *p, bool nested)
{
    size_t start = p->pos;
    int c = peek(p);
    uint32_t min, max;
    p->pos++;
    if (c == '*') {
        min = 0;
        max = GM_EX_INF;
    } else if (c == '+') {
        min = 1;
        max = GM_EX_INF;
    } else if (c == '?') {
        min = 0;
        max = 1;
    } else {
        gm_status st;
        skip_space(p, nested);
        if ((st = read_count(p, &min)))
            return st;
        skip_space(p, nested);
        max = min;
        if (peek(p) == ',') {
            p->pos++;
            skip_space(p, nested);
            max = GM_EX_INF;
            if (peek(p) >= '0' && peek(p) <= '9') {
                if ((st = read_count(p, &max)))
                    return st;
                skip_space(p, nested);
            }
        }
        if (peek(p) != '}')
            return unexpected(p, peek(p) == ',' || max != min ? "'}'" : "',' or '}'");
        p->pos++;
        if (min > max)
            return error_at(p, GM_ERR_SYNTAX, start,
                            "bad repetition %.*s: the minimum is larger than the maximum",
                            (int)(p->pos - start), p->text + start);
    }
    uint32_t *top = &p->stack.v[p->stack.n - 1];
    uint32_t id = gm_ebnf_add_repeat(p->g, *top, min, max);
    if (id == GM_EX_NONE)
        return nomem(p);
    *top = id;
    return GM_OK;
}

static bool starts_item(const parser *p)
{
    int c = peek(p);
    return c == '"' || c == '[' || c == '.' || c == '(' || c == '<' || c == '!' ||
           is_name_char(c) || (p->xg && c == '%' && (peek_at(p, 1) == '"' || peek_at(p, 1) == '['));
}

static gm_status parse_group(parser *p)
{
    size_t start = p->pos;
    if (p->depth >= GM_EBNF_MAX_DEPTH)
        return error_at(p, GM_ERR_LIMIT, start, "parentheses nested more than %u deep",
                        GM_EBNF_MAX_DEPTH);
    p->depth++;
    p->pos++;
    skip_space(p, true);
    gm_status st = parse_alternates(p, true);
    if (st)
        return st;
    if (peek(p) != ')') {
        if (p->xg && peek(p) == '(' && peek_at(p, 1) == '=')
            return error_at(p, GM_ERR_SYNTAX, p->pos,
                            "a lookahead assertion (= ...) may only end a rule's body");
        char b[16];
        return error_at(p, GM_ERR_SYNTAX, p->pos, "expected ')' to close the '(' at line %u, "
                        "found %s", gm_srcloc_of_offset(NULL, p->text, p->len, start).line,
                        describe(p, p->pos, b, sizeof b));
    }
    p->pos++;
    p->depth--;
    return GM_OK;
}

static gm_status parse_item(parser *p)
{
    int c = peek(p);
    switch (c) {
    case '"': return parse_string(p, false);
    case '[': return parse_class(p, false);
    case '(': return parse_group(p);
    case '<': return parse_token(p);
    case '%':
        p->pos++;
        return peek(p) == '"' ? parse_string(p, true) : parse_class(p, true);
    case '!':
        return error_at(p, GM_ERR_UNSUPPORTED, p->pos,
                        "negated tokens !<...> are not supported");
    case '.': {
        p->pos++;
        gm_cpset all = {0};
        if (gm_cpset_add_range(p->m, &all, 0, GM_CP_MAX)) {
            gm_cpset_free(p->m, &all);
            return nomem(p);
        }
        return push(p, gm_ebnf_add_set(p->g, &all));
    }
    default: return parse_name_item(p);
    }
}

/* A sequence of items and their postfix operators, up to something else. */
static gm_status parse_sequence(parser *p, bool nested)
{
    size_t base = p->stack.n;
    gm_status st;
    for (;;) {
        int c = peek(p);
        if (c == '*' || c == '+' || c == '?' || c == '{') {
            if (p->stack.n == base) {
                char b[16];
                return error_at(p, GM_ERR_SYNTAX, p->pos, "nothing to repeat before %s",
                                describe(p, p->pos, b, sizeof b));
            }
            st = parse_postfix(p, nested);
        } else if (!starts_item(p) || (p->xg && c == '(' && peek_at(p, 1) == '=') ||
                   (p->xg && is_name_char(c) && at_rule_start(p))) {
            break;
        } else {
            st = parse_item(p);
        }
        if (st)
            return st;
        skip_space(p, nested);
    }
    return reduce(p, base, false);
}

static gm_status parse_alternates(parser *p, bool nested)
{
    size_t base = p->stack.n;
    gm_status st = parse_sequence(p, nested);
    while (st == GM_OK && peek(p) == '|') {
        p->pos++;
        skip_space(p, true);
        st = parse_sequence(p, nested);
    }
    return st ? st : reduce(p, base, true);
}

static gm_status parse_rule(parser *p)
{
    size_t start = p->pos, n = name_len(p, p->pos);
    if (n == 0) {
        if (peek(p) == ')')
            return error_at(p, GM_ERR_SYNTAX, p->pos, "unmatched ')'");
        return unexpected(p, "a rule name");
    }
    p->pos += n;
    skip_space(p, false);
    if (p->xg && peek(p) == '[')
        return error_at(p, GM_ERR_UNSUPPORTED, p->pos,
                        "rule attributes %.*s[...] (max_tokens, capture) are not supported",
                        (int)n, p->text + start);
    if (p->len - p->pos < 3 || memcmp(p->text + p->pos, "::=", 3) != 0)
        return unexpected(p, "'::=' after the rule name");
    p->pos += 3;
    uint32_t r = gm_ebnf_rule_get(p->g, p->text + start, n);
    if (r == GM_EX_NONE || !grow_rule_arrays(p))
        return nomem(p);
    if (p->def_off.v[r] != SIZE_MAX) {
        gm_srcloc first = gm_srcloc_of_offset(NULL, p->text, p->len, p->def_off.v[r]);
        return error_at(p, GM_ERR_GRAMMAR, start, "rule '%.*s' is defined twice (first at line %u)",
                        (int)n, p->text + start, first.line);
    }
    p->def_off.v[r] = start;
    if (gm_vec_push(p->m, &p->defs, r))
        return nomem(p);
    skip_space(p, true);
    gm_status st = parse_alternates(p, false);
    if (st)
        return st;
    uint32_t body = p->stack.v[--p->stack.n];
    uint32_t la = GM_EX_NONE;
    if (p->xg && peek(p) == '(' && peek_at(p, 1) == '=') {
        size_t at = p->pos;
        if (p->depth >= GM_EBNF_MAX_DEPTH)
            return error_at(p, GM_ERR_LIMIT, at, "parentheses nested more than %u deep",
                            GM_EBNF_MAX_DEPTH);
        p->depth++;
        p->pos += 2;
        skip_space(p, true);
        if ((st = parse_alternates(p, true)))
            return st;
        if (peek(p) != ')')
            return unexpected(p, "')' to close the lookahead assertion (= ...)");
        p->pos++;
        p->depth--;
        la = p->stack.v[--p->stack.n];
        skip_space(p, true);
    }
    p->g->rules[r].body = body;
    p->g->rules[r].lookahead = la;
    int c = peek(p);
    if (c < 0)
        return GM_OK;
    if (!p->xg && (c == '\n' || c == '\r'))
        return GM_OK;
    if (p->xg && at_rule_start(p))
        return GM_OK;
    if (c == ')')
        return error_at(p, GM_ERR_SYNTAX, p->pos, "unmatched ')'");
    if (p->xg && c == '(' && peek_at(p, 1) == '=')
        return error_at(p, GM_ERR_SYNTAX, p->pos, "a rule has at most one lookahead assertion");
    return unexpected(p, p->xg ? "'|', an expression, or the next rule" :
                                 "a newline after the rule (a rule ends at the end of its line, "
                                 "except inside parentheses or after '|')");
}

/* Sets each defined rule's location, in one sweep over the text (definitions are in text order). */
static void set_locations(parser *p)
{
    uint32_t line = 1;
    size_t line_start = 0, scanned = 0;
    for (size_t i = 0; i < p->defs.n; i++) {
        uint32_t r = p->defs.v[i];
        size_t off = p->def_off.v[r];
        for (; scanned < off; scanned++)
            if (p->text[scanned] == '\n') {
                line++;
                line_start = scanned + 1;
            }
        p->g->rules[r].loc = (gm_srcloc){p->file, line, (uint32_t)(off - line_start + 1)};
    }
}

static gm_status check_text(parser *p)
{
    for (size_t i = 0; i < p->len;) {
        unsigned char c = (unsigned char)p->text[i];
        if (c == 0)
            return error_at(p, GM_ERR_SYNTAX, i, "NUL byte in the grammar");
        if (c < 0x80) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = gm_utf8_decode((const uint8_t *)p->text + i, p->len - i, &cp);
        if (!k)
            return error_at(p, GM_ERR_SYNTAX, i, "invalid UTF-8 (byte 0x%02X) in the grammar", c);
        i += k;
    }
    return GM_OK;
}

static gm_status parse_all(parser *p, const char *root)
{
    gm_status st = check_text(p);
    if (st)
        return st;
    skip_space(p, true);
    if (p->pos >= p->len)
        return error_at(p, GM_ERR_SYNTAX, p->pos, "the grammar is empty (it has no rules)");
    while (p->pos < p->len) {
        if ((st = parse_rule(p)))
            return st;
        skip_space(p, true);
    }
    /* an undefined rule is reported at its first use in the text */
    size_t worst = SIZE_MAX;
    uint32_t undef = GM_EX_NONE;
    for (uint32_t r = 0; r < p->g->nrules; r++)
        if (p->def_off.v[r] == SIZE_MAX && p->use_off.v[r] < worst) {
            worst = p->use_off.v[r];
            undef = r;
        }
    if (undef != GM_EX_NONE)
        return error_at(p, GM_ERR_GRAMMAR, worst, "rule '%s' is not defined", p->g->rules[undef].name);
    set_locations(p);
    uint32_t r = gm_ebnf_rule_find(p->g, root, strlen(root));
    if (r == GM_EX_NONE || p->def_off.v[r] == SIZE_MAX)
        return gm_error_set_at(p->err, GM_ERR_GRAMMAR, (gm_srcloc){p->file, 0, 0}, NULL, 0,
                               "the grammar has no rule '%s' (its start rule)", root);
    p->g->root = r;
    return GM_OK;
}

gm_status gm_ebnf_parse(gm_ebnf *g, const char *file, const char *text, size_t len,
                        gm_ebnf_dialect dialect, const gm_grammar_options *opts, gm_error *err)
{
    gm_limits lim;
    gm_limits_resolve(&lim, opts ? &opts->limits : NULL);
    const char *name = file ? file : "<grammar>";
    if (len > lim.max_input_bytes)
        return gm_error_set_file(err, GM_ERR_LIMIT, name,
                                 "the grammar has %zu bytes, more than the limit of %u", len,
                                 lim.max_input_bytes);
    parser p = {.g = g, .m = g->mem, .text = text, .len = len, .xg = dialect == GM_EBNF_XGRAMMAR,
                .limits = &lim, .err = err};
    p.file = gm_ebnf_file(g, name);
    gm_status st;
    if (!p.file)
        st = nomem(&p);
    else
        st = parse_all(&p, opts && opts->start ? opts->start : "root");
    gm_vec_free(p.m, &p.stack);
    gm_vec_free(p.m, &p.def_off);
    gm_vec_free(p.m, &p.use_off);
    gm_vec_free(p.m, &p.buf);
    gm_vec_free(p.m, &p.defs);
    if (st)
        return st;
    return gm_ebnf_check(g, opts, err);
}
