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
 *   - Regex("pattern", json_string=b, flags="..."): a regex (lexer/regex.h
 *     dialect, the lexer's parser) as an expression, its arguments as
 *     XGrammar documents them (parse_regex_macro);
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
 *   - XGrammar's Token(ids), ExcludeToken(ids), TokenTagDispatch(...) and
 *     TagDispatch(...) (note [token macros]), Substring("chunk", ...)
 *     (parse_substring_macro);
 * Not taken from XGrammar, each GM_ERR_UNSUPPORTED naming it: rule
 * attributes other than max_tokens, max_chars and temperature (note [rule attributes]), class escapes \d \w \s
 * (XGrammar rejects them too). Names are [A-Za-z0-9_-] in both dialects:
 * XGrammar also allows '.', which we keep as GBNF's any-character.
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
#include "ir/ebnf_max_chars.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "lexer/lexer.h"
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

/*
 * Reads `digits` hex digits at pos (digits 0: one or more, XGrammar's \x)
 * into *v. Returns false when they are missing or the value passes
 * U+10FFFF (the caller reports it).
 */
static bool read_hex(parser *p, int digits, uint32_t *v)
{
    uint64_t x = 0;
    int n = 0;
    while ((digits == 0 || n < digits) && gm_hex_value(peek(p)) >= 0) {
        x = x * 16 + (uint64_t)gm_hex_value(peek(p));
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
        static const char plain[] = "'?/"; /* \/ as JSON has it (XGrammar reads it so) */
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

/* Whether the name text[off..off+n) is `word`. */
static bool arg_is(const parser *p, size_t off, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(p->text + off, word, n) == 0;
}

/*
 * Regex("pattern", json_string=b, flags="...") of the XGrammar dialect, pos
 * after the name. As XGrammar documents it: without flags the pattern is
 * taken verbatim and '.' matches every code point; with flags, '.' leaves
 * out '\n' unless "s" is given, "i" folds ASCII letters only, "u" is
 * accepted and changes nothing. json_string=true leaves '"', '\\' and the
 * control characters U+0000-U+001F out of every character the pattern
 * matches (the body of a JSON string: GM_EBNF_RE_JSON_STRING).
 */
static gm_status parse_regex_macro(parser *p, size_t start)
{
    p->pos++; /* ( */
    skip_space(p, true);
    if (peek(p) == ')')
        return error_at(p, GM_ERR_SYNTAX, p->pos, "Regex expects exactly one string argument");
    if (peek(p) != '"')
        return error_at(p, GM_ERR_SYNTAX, p->pos,
                        "Regex pattern must be a string literal: Regex(\"pattern\")");
    size_t lit = p->pos;
    gm_status st = read_quoted(p, false);
    if (st)
        return st;
    /* the pattern, kept while the named arguments are read (read_quoted reuses p->buf) */
    uint8_t *pattern = gm_mem_alloc(p->m, p->buf.n + 1);
    if (!pattern)
        return nomem(p);
    size_t plen = p->buf.n;
    if (plen) /* an empty buffer may have no array yet */
        memcpy(pattern, p->buf.v, plen);
    pattern[plen] = 0;
    unsigned flags = GM_RE_DOTALL;
    bool json = false, have_flags = false, have_json = false;
    for (;;) {
        skip_space(p, true);
        if (peek(p) == ')')
            break;
        if (peek(p) != ',') {
            st = unexpected(p, "',' or ')' in Regex(...)");
            break;
        }
        p->pos++;
        skip_space(p, true);
        size_t at = p->pos, n = name_len(p, p->pos);
        if (!n || (p->pos += n, skip_space(p, true), peek(p) != '=')) {
            st = error_at(p, GM_ERR_SYNTAX, at, "Regex expects exactly one string argument "
                          "(then the named arguments json_string= and flags=)");
            break;
        }
        p->pos++;
        skip_space(p, true);
        size_t vat = p->pos;
        if (arg_is(p, at, n, "json_string") && !have_json) {
            size_t v = name_len(p, p->pos);
            if (!arg_is(p, p->pos, v, "true") && !arg_is(p, p->pos, v, "false")) {
                st = error_at(p, GM_ERR_SYNTAX, vat, "json_string must be a boolean (true or false)");
                break;
            }
            json = v == 4;
            have_json = true;
            p->pos += v;
        } else if (arg_is(p, at, n, "flags") && !have_flags) {
            if (peek(p) != '"') {
                st = error_at(p, GM_ERR_SYNTAX, vat, "flags must be a string, such as \"is\"");
                break;
            }
            if ((st = read_quoted(p, false)))
                break;
            flags = 0;
            for (size_t i = 0; i < p->buf.n && st == GM_OK; i++) {
                uint8_t c = p->buf.v[i];
                if (c == 'i')
                    flags |= GM_RE_IGNORECASE | GM_RE_ASCII;
                else if (c == 's')
                    flags |= GM_RE_DOTALL;
                else if (c != 'u')
                    st = error_at(p, GM_ERR_SYNTAX, vat, "regular-expression flag '%c' is not "
                                  "supported in Regex(...) (i, s and u are)", c >= 0x20 && c < 0x7f ? c : '?');
            }
            have_flags = true;
        } else {
            st = error_at(p, GM_ERR_SYNTAX, at, "Regex does not support the named argument "
                          "%.*s%s (json_string= and flags= once each)", (int)n, p->text + at,
                          arg_is(p, at, n, "json_string") || arg_is(p, at, n, "flags") ? " twice" : "");
            break;
        }
        if (st)
            break;
    }
    if (st) {
        gm_mem_free(p->m, pattern);
        return st;
    }
    p->pos++;
    uint32_t node;
    gm_error rerr;
    gm_error_clear(&rerr);
    st = gm_ebnf_add_regex(p->g, (const char *)pattern, plen,
                           flags | GM_RE_XGR_FOLD_ASCII | (json ? GM_EBNF_RE_JSON_STRING : 0),
                           p->limits, &node, &rerr);
    gm_mem_free(p->m, pattern);
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

/* ---- XGrammar's dispatch and token macros ---------------------------------------- */

/*
 * note [token macros]
 * Token(ids) and ExcludeToken(ids) are token id sets (ir/ebnf.h note
 * [token id sets]); an empty ExcludeToken() is any token (gm_ebnf_print
 * writes it for a TokenTagDispatch with neither triggers nor excludes).
 * The dispatch macros are written out in the IR:
 *   TokenTagDispatch((t1, r1), ..., excludes=(e...), loop_after_dispatch=b)
 *     free = ExcludeToken(t... e...): any token but a trigger or an exclude;
 *     b true (the default):  (free | Token(t1) r1 | ...)*
 *     b false:               free* (Token(t1) r1 | ...)?
 *   TagDispatch(("s1", r1), ..., excludes=("x"...), loop_after_dispatch=b)
 *     with L = s1.. x.. and UNTIL of ir/ebnf.h note [until]:
 *     b true:   (UNTIL(L, 1) r1 | ...)* UNTIL(L, none)
 *     b false:  UNTIL(L, none) | UNTIL(L, 1) r1 | ...
 * Triggers may not overlap the excludes (XGrammar's rule; GM_ERR_GRAMMAR).
 */

/* The arguments of a macro: positional tuples and named values, as XGrammar reads them. */
typedef struct macro_arg {
    size_t at;            /* offset in the text */
    bool is_str;          /* a string (its bytes in strs[str]) or an integer / rule name */
    uint32_t num;         /* integer value */
    uint32_t str;         /* string index */
    size_t name, nlen;    /* a rule name: offset and length (nlen 0: none) */
} macro_arg;

typedef struct macro_args {
    GM_VEC(macro_arg) v;
    GM_VEC(uint32_t) strs;   /* BYTES nodes of the strings */
} macro_args;

/* One value at pos (not a tuple): an integer, a string, a rule name, true or false. */
static gm_status read_macro_value(parser *p, macro_args *a, const char *macro)
{
    macro_arg x = {.at = p->pos};
    int c = peek(p);
    gm_status st;
    if (c >= '0' && c <= '9') {
        uint64_t v = 0;
        while (peek(p) >= '0' && peek(p) <= '9') {
            if (v <= UINT32_MAX)
                v = v * 10 + (uint64_t)(peek(p) - '0');
            p->pos++;
        }
        if (v >= UINT32_MAX)
            return error_at(p, GM_ERR_LIMIT, x.at, "token id %.*s in %s(...) is too large",
                            (int)(p->pos - x.at), p->text + x.at, macro);
        x.num = (uint32_t)v;
    } else if (c == '"') {
        if ((st = read_quoted(p, false)))
            return st;
        uint32_t node = p->buf.n ? gm_ebnf_add_bytes(p->g, p->buf.v, p->buf.n)
                                 : gm_ebnf_add_empty(p->g);
        if (node == GM_EX_NONE || gm_vec_push(p->m, &a->strs, node))
            return nomem(p);
        x.is_str = true;
        x.str = (uint32_t)a->strs.n - 1;
    } else if (name_len(p, p->pos)) {
        x.name = p->pos;
        x.nlen = name_len(p, p->pos);
        p->pos += x.nlen;
    } else {
        char b[64];
        snprintf(b, sizeof b, "a number, a string or a rule name in %s(...)", macro);
        return unexpected(p, b);
    }
    if (gm_vec_push(p->m, &a->v, x))
        return nomem(p);
    return GM_OK;
}

/*
 * A tuple ( v, v, ... ) at pos into a->v[first ..], its length in *n
 * (trailing comma allowed, no nesting).
 */
static gm_status read_macro_tuple(parser *p, macro_args *a, const char *macro, size_t *n)
{
    size_t first = a->v.n;
    p->pos++; /* ( */
    for (;;) {
        skip_space(p, true);
        if (peek(p) == ')')
            break;
        gm_status st = read_macro_value(p, a, macro);
        if (st)
            return st;
        skip_space(p, true);
        if (peek(p) == ',') {
            p->pos++;
            continue;
        }
        if (peek(p) != ')') {
            char b[64];
            snprintf(b, sizeof b, "',' or ')' in a tuple of %s(...)", macro);
            return unexpected(p, b);
        }
    }
    p->pos++;
    *n = a->v.n - first;
    return GM_OK;
}

/* A rule reference named by a macro argument. */
static uint32_t macro_rule_ref(parser *p, const macro_arg *x)
{
    uint32_t r = gm_ebnf_rule_get(p->g, p->text + x->name, x->nlen);
    if (r == GM_EX_NONE || !grow_rule_arrays(p))
        return GM_EX_NONE;
    if (p->use_off.v[r] == SIZE_MAX)
        p->use_off.v[r] = x->at;
    return gm_ebnf_add_ref(p->g, r);
}

/* Token(ids) / ExcludeToken(ids), pos at '('. */
static gm_status parse_token_macro(parser *p, bool exclude, size_t start)
{
    const char *macro = exclude ? "ExcludeToken" : "Token";
    macro_args a = {0};
    size_t n = 0;
    gm_status st = read_macro_tuple(p, &a, macro, &n);
    uint32_t *ids = NULL;
    for (size_t i = 0; st == GM_OK && i < n; i++)
        if (a.v.v[i].is_str || a.v.v[i].nlen)
            st = error_at(p, GM_ERR_SYNTAX, a.v.v[i].at, "%s(...) takes token ids (integers)",
                          macro);
    if (st == GM_OK && n == 0 && !exclude)
        st = error_at(p, GM_ERR_SYNTAX, start, "Token(...) needs at least one token id");
    if (st == GM_OK && !(ids = gm_mem_alloc(p->m, (n ? n : 1) * sizeof *ids)))
        st = nomem(p);
    for (size_t i = 0; st == GM_OK && i < n; i++)
        ids[i] = a.v.v[i].num;
    if (st == GM_OK)
        st = push(p, gm_ebnf_add_token_ids(p->g, exclude, ids, n));
    gm_mem_free(p->m, ids);
    gm_vec_free(p->m, &a.v);
    gm_vec_free(p->m, &a.strs);
    return st;
}

/*
 * Substring("c0", "c1", ...), pos at '(': every run c_i c_i+1 ... c_j of
 * whole chunks, and "". Helper rules R_i ::= c_i R_i+1 | c_i (R_n-1 ::= c_n-1)
 * keep it linear in the chunks: the node is "" | R_0 | ... | R_n-1.
 */
static gm_status parse_substring_macro(parser *p, size_t start)
{
    GM_VEC(uint32_t) chunks = {0};
    gm_status st = GM_OK;
    p->pos++; /* ( */
    for (bool first = true; st == GM_OK; first = false) {
        skip_space(p, true);
        if (first && peek(p) == ')')
            break;
        size_t at = p->pos, n = name_len(p, p->pos);
        if (peek(p) == '"') {
            if ((st = read_quoted(p, false)))
                break;
            uint32_t node = p->buf.n ? gm_ebnf_add_bytes(p->g, p->buf.v, p->buf.n)
                                     : gm_ebnf_add_empty(p->g);
            if (node == GM_EX_NONE || gm_vec_push(p->m, &chunks, node)) {
                st = nomem(p);
                break;
            }
        } else {
            p->pos += n;
            skip_space(p, true);
            bool named = n && peek(p) == '=';
            p->pos = at;
            st = error_at(p, GM_ERR_SYNTAX, at, named ? "Substring() does not accept named arguments"
                                                      : "Substring() arguments must be strings");
            break;
        }
        skip_space(p, true);
        if (peek(p) == ')')
            break;
        if (peek(p) != ',') {
            st = unexpected(p, "',' or ')' in Substring(...)");
            break;
        }
        p->pos++;
    }
    size_t n = chunks.n;
    uint32_t *alts = NULL;
    if (st == GM_OK) {
        p->pos++; /* ) */
        if (!(alts = gm_mem_alloc(p->m, (n + 1) * sizeof *alts)))
            st = nomem(p);
    }
    if (st == GM_OK && (alts[0] = gm_ebnf_add_empty(p->g)) == GM_EX_NONE)
        st = nomem(p);
    /* R_i from the last chunk back */
    uint32_t next = GM_EX_NONE;
    for (size_t k = n; st == GM_OK && k-- > 0;) {
        uint32_t r = gm_ebnf_fresh_rule(p->g, "Substring");
        if (r == GM_EX_NONE || !grow_rule_arrays(p) || gm_vec_push(p->m, &p->defs, r)) {
            st = nomem(p);
            break;
        }
        p->def_off.v[r] = start;
        p->use_off.v[r] = start;
        uint32_t body = chunks.v[k];
        if (next != GM_EX_NONE) {
            uint32_t seq[2] = {chunks.v[k], next};
            uint32_t alt[2] = {gm_ebnf_add_seq(p->g, seq, 2), chunks.v[k]};
            body = alt[0] == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_alt(p->g, alt, 2);
        }
        next = gm_ebnf_add_ref(p->g, r);
        if (body == GM_EX_NONE || next == GM_EX_NONE) {
            st = nomem(p);
            break;
        }
        p->g->rules[r].body = body;
        alts[k + 1] = next;
    }
    if (st == GM_OK)
        st = push(p, gm_ebnf_add_alt(p->g, alts, n + 1));
    gm_mem_free(p->m, alts);
    gm_vec_free(p->m, &chunks);
    return st;
}

/* Whether BYTES nodes u and w hold the same bytes. */
static bool same_bytes(const gm_ebnf *g, uint32_t u, uint32_t w)
{
    const gm_ex *x = &g->nodes[u], *y = &g->nodes[w];
    return x->count == y->count && !memcmp(g->bytes + x->first, g->bytes + y->first, x->count);
}

/* TagDispatch(...) (tokens false) or TokenTagDispatch(...) (tokens true), pos at '('. */
static gm_status parse_dispatch_macro(parser *p, bool tokens)
{
    const char *macro = tokens ? "TokenTagDispatch" : "TagDispatch";
    macro_args a = {0};
    GM_VEC(size_t) pairs = {0};   /* index in a.v of each pair's first value */
    size_t excl_first = 0, nexcl = 0;
    bool loop = true;
    gm_status st = GM_OK;
    p->pos++; /* ( */
    for (bool first = true; st == GM_OK; first = false) {
        skip_space(p, true);
        if (first && peek(p) == ')')
            break;
        size_t at = p->pos, n = name_len(p, p->pos);
        if (peek(p) == '(') {
            size_t k, base = a.v.n;
            if ((st = read_macro_tuple(p, &a, macro, &k)))
                break;
            const macro_arg *x = &a.v.v[base];
            if (k != 2 || x[0].is_str != !tokens || x[0].nlen || !x[1].nlen) {
                st = error_at(p, GM_ERR_SYNTAX, at, "%s(...) takes pairs (%s, rule)", macro,
                              tokens ? "token id" : "\"tag\"");
                break;
            }
            if (!tokens && p->g->nodes[a.strs.v[x[0].str]].kind != GM_EX_BYTES) {
                st = error_at(p, GM_ERR_SYNTAX, at, "the tags of TagDispatch(...) may not be empty");
                break;
            }
            if (gm_vec_push(p->m, &pairs, base)) {
                st = nomem(p);
                break;
            }
        } else if (n) {
            p->pos += n;
            skip_space(p, true);
            if (peek(p) != '=') {
                st = unexpected(p, "'=' after a named argument");
                break;
            }
            p->pos++;
            skip_space(p, true);
            if (arg_is(p, at, n, "excludes")) {
                if (peek(p) != '(') {
                    st = unexpected(p, "a tuple after excludes=");
                    break;
                }
                excl_first = a.v.n;
                if ((st = read_macro_tuple(p, &a, macro, &nexcl)))
                    break;
                for (size_t i = 0; i < nexcl && st == GM_OK; i++) {
                    const macro_arg *x = &a.v.v[excl_first + i];
                    if (x->is_str != !tokens || x->nlen ||
                        (!tokens && p->g->nodes[a.strs.v[x->str]].kind != GM_EX_BYTES))
                        st = error_at(p, GM_ERR_SYNTAX, x->at, "excludes= of %s(...) takes %s",
                                      macro, tokens ? "token ids" : "non-empty strings");
                }
            } else if (arg_is(p, at, n, "loop_after_dispatch")) {
                size_t v = name_len(p, p->pos);
                if (!arg_is(p, p->pos, v, "true") && !arg_is(p, p->pos, v, "false")) {
                    st = unexpected(p, "true or false after loop_after_dispatch=");
                    break;
                }
                loop = v == 4;
                p->pos += v;
            } else {
                st = error_at(p, GM_ERR_SYNTAX, at, "%s(...) takes excludes= and "
                              "loop_after_dispatch=, not \"%.*s\"", macro, (int)n, p->text + at);
                break;
            }
        } else {
            st = unexpected(p, tokens ? "a pair (token id, rule) or a named argument"
                                      : "a pair (\"tag\", rule) or a named argument");
            break;
        }
        if (st)
            break;
        skip_space(p, true);
        if (peek(p) == ')')
            break;
        if (peek(p) != ',') {
            char b[64];
            snprintf(b, sizeof b, "',' or ')' in %s(...)", macro);
            st = unexpected(p, b);
            break;
        }
        p->pos++;
    }
    if (st == GM_OK)
        p->pos++; /* ) */
    size_t npairs = pairs.n;
    uint32_t *ids = NULL, *alts = NULL;
    if (st == GM_OK && (!(ids = gm_mem_alloc(p->m, (npairs + nexcl + 1) * sizeof *ids)) ||
                        !(alts = gm_mem_alloc(p->m, (npairs + 2) * sizeof *alts))))
        st = nomem(p);
    /* triggers and excludes must not overlap */
    for (size_t i = 0; st == GM_OK && i < npairs; i++)
        for (size_t j = 0; j < nexcl; j++) {
            const macro_arg *t = &a.v.v[pairs.v[i]], *x = &a.v.v[excl_first + j];
            bool same = tokens ? t->num == x->num
                               : same_bytes(p->g, a.strs.v[t->str], a.strs.v[x->str]);
            if (same) {
                st = error_at(p, GM_ERR_GRAMMAR, x->at,
                              "%s(...): a trigger may not also be excluded", macro);
                break;
            }
        }
    uint32_t node = GM_EX_NONE;
    if (st == GM_OK && tokens) {
        /* free = ExcludeToken(triggers, excludes) */
        for (size_t i = 0; i < npairs; i++)
            ids[i] = a.v.v[pairs.v[i]].num;
        for (size_t j = 0; j < nexcl; j++)
            ids[npairs + j] = a.v.v[excl_first + j].num;
        uint32_t free_tok = gm_ebnf_add_token_ids(p->g, true, ids, npairs + nexcl);
        size_t k = 0;
        for (size_t i = 0; i < npairs && free_tok != GM_EX_NONE; i++) {
            const macro_arg *x = &a.v.v[pairs.v[i]];
            uint32_t seq[2] = {gm_ebnf_add_token_ids(p->g, false, &x->num, 1),
                               macro_rule_ref(p, &x[1])};
            if (seq[0] == GM_EX_NONE || seq[1] == GM_EX_NONE ||
                (alts[k++] = gm_ebnf_add_seq(p->g, seq, 2)) == GM_EX_NONE)
                free_tok = GM_EX_NONE;
        }
        if (free_tok != GM_EX_NONE && loop) {
            alts[k++] = free_tok;
            uint32_t alt = gm_ebnf_add_alt(p->g, alts, k);
            node = alt == GM_EX_NONE ? alt : gm_ebnf_add_repeat(p->g, alt, 0, GM_EX_INF);
        } else if (free_tok != GM_EX_NONE) {
            uint32_t seq[2] = {gm_ebnf_add_repeat(p->g, free_tok, 0, GM_EX_INF), GM_EX_NONE};
            uint32_t alt = k ? gm_ebnf_add_alt(p->g, alts, k) : gm_ebnf_add_empty(p->g);
            seq[1] = k && alt != GM_EX_NONE ? gm_ebnf_add_repeat(p->g, alt, 0, 1) : alt;
            if (seq[0] != GM_EX_NONE && seq[1] != GM_EX_NONE)
                node = gm_ebnf_add_seq(p->g, seq, 2);
        }
        if (node == GM_EX_NONE)
            st = nomem(p);
    } else if (st == GM_OK) {
        /* L = tags, then excludes */
        for (size_t i = 0; i < npairs; i++)
            ids[i] = a.strs.v[a.v.v[pairs.v[i]].str];
        for (size_t j = 0; j < nexcl; j++)
            ids[npairs + j] = a.strs.v[a.v.v[excl_first + j].str];
        size_t nl = npairs + nexcl;
        uint32_t none = nl ? gm_ebnf_add_until(p->g, ids, nl, GM_EX_NONE, 0, GM_EX_INF) : GM_EX_NONE;
        if (!nl) {
            /* no tags and no excludes: any text */
            gm_cpset all = {0};
            if (gm_cpset_add_range(p->m, &all, 0, GM_CP_MAX)) {
                gm_cpset_free(p->m, &all);
            } else {
                uint32_t any = gm_ebnf_add_set(p->g, &all);
                none = any == GM_EX_NONE ? any : gm_ebnf_add_repeat(p->g, any, 0, GM_EX_INF);
            }
        }
        size_t k = 0;
        for (size_t i = 0; i < npairs && none != GM_EX_NONE; i++) {
            uint32_t seq[2] = {gm_ebnf_add_until(p->g, ids, nl, (uint32_t)i, 0, GM_EX_INF),
                               macro_rule_ref(p, &a.v.v[pairs.v[i] + 1])};
            if (seq[0] == GM_EX_NONE || seq[1] == GM_EX_NONE ||
                (alts[k++] = gm_ebnf_add_seq(p->g, seq, 2)) == GM_EX_NONE)
                none = GM_EX_NONE;
        }
        if (none != GM_EX_NONE && loop) {
            uint32_t alt = k ? gm_ebnf_add_alt(p->g, alts, k) : GM_EX_NONE;
            uint32_t seq[2] = {k && alt != GM_EX_NONE ? gm_ebnf_add_repeat(p->g, alt, 0, GM_EX_INF)
                                                      : gm_ebnf_add_empty(p->g),
                               none};
            if (seq[0] != GM_EX_NONE)
                node = gm_ebnf_add_seq(p->g, seq, 2);
        } else if (none != GM_EX_NONE) {
            alts[k++] = none;
            node = gm_ebnf_add_alt(p->g, alts, k);
        }
        if (node == GM_EX_NONE)
            st = nomem(p);
    }
    if (st == GM_OK)
        st = push(p, node);
    gm_mem_free(p->m, ids);
    gm_mem_free(p->m, alts);
    gm_vec_free(p->m, &pairs);
    gm_vec_free(p->m, &a.v);
    gm_vec_free(p->m, &a.strs);
    return st;
}

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
        bool tok = arg_is(p, start, n, "Token"), excl = arg_is(p, start, n, "ExcludeToken");
        bool tagd = arg_is(p, start, n, "TagDispatch"), ttagd = arg_is(p, start, n, "TokenTagDispatch");
        if (arg_is(p, start, n, "Substring")) {
            if (!call)
                return unexpected(p, "'(' after Substring");
            return parse_substring_macro(p, start);
        }
        if (tok || excl || tagd || ttagd) {
            if (!call)
                return unexpected(p, "'(' after the macro's name");
            return tok || excl ? parse_token_macro(p, excl, start) : parse_dispatch_macro(p, ttagd);
        }
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

/*
 * note [rule attributes]
 * XGrammar writes a rule's attributes between its name and `::=`:
 * name[max_tokens=N, temperature=t] ::= body. Taken here:
 *   max_tokens=N (1 <= N <= 2^31-1): the token budget of each occurrence
 *     of the rule (ir/ebnf.h note [token budgets]); the engine takes it on
 *     a rule whose body, once its references are inlined, reads bytes
 *     alone, and refuses it elsewhere (gm_fsm_check_budgets);
 *   temperature=t (a finite number >= 0): the sampling temperature while
 *     the output is inside the rule (earley/temperature.c); no mask changes.
 *   max_chars=n (0 <= n <= 2^31-1): each occurrence holds at most n
 *     characters where it can end (note [rule max_chars] in
 *     ebnf_max_chars.c: a rewrite of the body, on the forms it names).
 *   capture or capture="label" (letters, digits, '_'; the rule's name when
 *     none): the rule's spans are reported (note [captures] in
 *     earley/capture.c); no mask changes;
 *   lazy: only each occurrence's shortest matches (note [lazy rules] in
 *     earley/fsm_build.c).
 * Each at most once. Any other attribute (suffix, stop, ...) is
 * GM_ERR_UNSUPPORTED naming it and the rule: never read and dropped, since
 * most of them change the masks. pos is at '['; on return it is after ']'.
 * The capture label is owned by the caller, also on error.
 */
typedef struct rule_attrs {
    uint32_t max_tokens;      /* GM_EX_INF: none */
    uint32_t max_chars;       /* GM_EX_INF: none */
    bool has_temperature;
    float temperature;
    char *capture;            /* NULL: none */
    bool lazy;
} rule_attrs;

/* capture's optional ="label" at pos (the rule's name when absent) into a->capture. */
static gm_status read_capture(parser *p, size_t name_off, size_t name_n, rule_attrs *a)
{
    const char *label = p->text + name_off;
    size_t llen = name_n;
    if (peek(p) == '=') {
        p->pos++;
        skip_space(p, true);
        if (peek(p) != '"')
            return unexpected(p, "a string literal after capture=");
        size_t q = ++p->pos;
        while (p->pos < p->len && p->text[p->pos] != '"' && p->text[p->pos] != '\n')
            p->pos++;
        if (peek(p) != '"')
            return error_at(p, GM_ERR_SYNTAX, q - 1, "unterminated capture name");
        label = p->text + q;
        llen = p->pos - q;
        p->pos++;
        if (llen == 0)
            return error_at(p, GM_ERR_SYNTAX, q, "capture name must not be empty");
        for (size_t i = 0; i < llen; i++) {
            unsigned char c = (unsigned char)label[i];
            if (!(c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                  (c >= 'A' && c <= 'Z')))
                return error_at(p, GM_ERR_SYNTAX, q + i,
                                "capture name must only contain letters, digits and '_'");
        }
    }
    if (!(a->capture = gm_mem_strndup(p->m, label, llen)))
        return nomem(p);
    return GM_OK;
}

/* temperature=t's number at pos: digits, '.', an exponent (XGrammar's float forms). */
static gm_status read_temperature(parser *p, float *t)
{
    size_t num = p->pos, n = 0;
    char buf[64];
    while (p->pos < p->len && n + 1 < sizeof buf &&
           strchr("0123456789.eE+-", p->text[p->pos]) && p->text[p->pos]) {
        buf[n++] = p->text[p->pos];
        p->pos++;
    }
    buf[n] = 0;
    char *end = NULL;
    double x = n ? strtod(buf, &end) : 0;
    if (n == 0 || *end)
        return error_at(p, GM_ERR_SYNTAX, num, "expected a number after temperature=");
    if (!(x >= 0 && x <= FLT_MAX))
        return error_at(p, GM_ERR_SYNTAX, num,
                        "temperature must be a finite non-negative number, not %s", buf);
    *t = (float)x;
    return GM_OK;
}

static gm_status parse_rule_attrs(parser *p, size_t name_off, size_t name_n, rule_attrs *a)
{
    p->pos++; /* [ */
    for (;;) {
        skip_space(p, true);
        size_t at = p->pos, n = name_len(p, p->pos);
        if (n == 0)
            return unexpected(p, "an attribute name in the rule attributes [...]");
        p->pos += n;
        skip_space(p, true);
        if (arg_is(p, at, n, "capture") || arg_is(p, at, n, "lazy")) {
            bool cap = arg_is(p, at, n, "capture");
            if (cap ? a->capture != NULL : a->lazy)
                return error_at(p, GM_ERR_SYNTAX, at, "%s attribute is specified more than once",
                                cap ? "capture" : "lazy");
            gm_status st = GM_OK;
            if (cap)
                st = read_capture(p, name_off, name_n, a);
            else
                a->lazy = true;
            if (st)
                return st;
            skip_space(p, true);
            if (peek(p) == ']')
                break;
            if (peek(p) != ',')
                return unexpected(p, "',' or ']' in the rule attributes [...]");
            p->pos++;
            continue;
        }
        bool tokens = arg_is(p, at, n, "max_tokens"), temp = arg_is(p, at, n, "temperature");
        bool chars = arg_is(p, at, n, "max_chars");
        if (!tokens && !temp && !chars)
            return error_at(p, GM_ERR_UNSUPPORTED, at,
                            "rule attribute %.*s of rule '%.*s' is not supported", (int)n,
                            p->text + at, (int)name_n, p->text + name_off);
        if (tokens ? a->max_tokens != GM_EX_INF
                   : chars ? a->max_chars != GM_EX_INF : a->has_temperature)
            return error_at(p, GM_ERR_SYNTAX, at, "%.*s is given twice for rule '%.*s'",
                            (int)n, p->text + at, (int)name_n, p->text + name_off);
        const char *what = tokens ? "max_tokens" : chars ? "max_chars" : "temperature";
        if (peek(p) != '=') {
            char buf[40];
            snprintf(buf, sizeof buf, "'=' after %s", what);
            return unexpected(p, buf);
        }
        p->pos++;
        skip_space(p, true);
        gm_status st;
        if (temp) {
            if ((st = read_temperature(p, &a->temperature)))
                return st;
            a->has_temperature = true;
        } else {
            size_t num = p->pos;
            uint64_t x = 0;
            if (peek(p) < '0' || peek(p) > '9') {
                char buf[40];
                snprintf(buf, sizeof buf, "a number after %s=", what);
                return unexpected(p, buf);
            }
            while (peek(p) >= '0' && peek(p) <= '9') {
                if (x <= INT32_MAX)
                    x = x * 10 + (uint64_t)(peek(p) - '0');
                p->pos++;
            }
            if (x > INT32_MAX)
                return error_at(p, GM_ERR_LIMIT, num, "%s above %d", what, INT32_MAX);
            if (x == 0 && tokens)
                return error_at(p, GM_ERR_SYNTAX, num, "max_tokens must be positive");
            *(tokens ? &a->max_tokens : &a->max_chars) = (uint32_t)x;
        }
        skip_space(p, true);
        if (peek(p) == ']')
            break;
        if (peek(p) != ',')
            return unexpected(p, "',' or ']' in the rule attributes [...]");
        p->pos++;
    }
    p->pos++;
    return GM_OK;
}

/*
 * The end of the bracket that opens at off ('(' or '['), past quoted
 * strings and classes, or SIZE_MAX; for text the parser already read.
 */
static size_t la_skip(const parser *p, size_t off)
{
    int depth = 0;
    for (size_t i = off; i < p->len; i++) {
        char c = p->text[i];
        if (c == '"' || c == '\'' || c == '[') {
            char close = c == '[' ? ']' : c;
            for (i++; i < p->len && p->text[i] != close; i++)
                if (p->text[i] == '\\')
                    i++;
            if (depth == 0)
                return i + 1;
        } else if (c == '(') {
            depth++;
        } else if (c == ')' && --depth == 0) {
            return i + 1;
        }
    }
    return SIZE_MAX;
}

/*
 * XGrammar's shape of a lookahead assertion text[from .. to) (its structure
 * normalizer's rules, with its messages): a sequence, not a choice at the
 * top level nor the empty string nor a lone macro (note [lookahead
 * assertions]).
 */
static gm_status check_lookahead_shape(parser *p, size_t from, size_t to, uint32_t la)
{
    if (p->g->nodes[la].kind == GM_EX_EMPTY)
        return error_at(p, GM_ERR_UNSUPPORTED, from,
                        "Empty string should not be in lookahead assertion");
    while (from < to && strchr(" \t\r\n", p->text[from]))
        from++;
    while (to > from && strchr(" \t\r\n", p->text[to - 1]))
        to--;
    for (size_t i = from; i < to;) {
        char c = p->text[i];
        if (c == '|')
            return error_at(p, GM_ERR_UNSUPPORTED, i,
                            "Choices in lookahead assertion are not supported yet");
        if (c == '#') { /* a comment, to the end of its line */
            while (i < to && p->text[i] != '\n')
                i++;
        } else if (c == '(' || c == '"' || c == '\'' || c == '[') {
            size_t e = la_skip(p, i);
            if (e == SIZE_MAX || e > to)
                return GM_OK;
            /* a group holding only a choice is a choice: `(= ("a" | "b"))` */
            if (c == '(' && i == from && e == to) {
                from = i + 1;
                to = e - 1;
                while (from < to && strchr(" \t\r\n", p->text[from]))
                    from++;
                while (to > from && strchr(" \t\r\n", p->text[to - 1]))
                    to--;
                i = from;
                continue;
            }
            i = e;
        } else {
            i++;
        }
    }
    static const char *const macros[] = {"TagDispatch", "TokenTagDispatch", "Regex", "Substring"};
    size_t n = 0;
    while (from + n < to && is_name_char((unsigned char)p->text[from + n]))
        n++;
    for (size_t k = 0; k < sizeof macros / sizeof *macros; k++) {
        size_t mlen = strlen(macros[k]);
        if (n != mlen || memcmp(p->text + from, macros[k], n) != 0)
            continue;
        size_t at = from + n;
        while (at < to && (p->text[at] == ' ' || p->text[at] == '\t'))
            at++;
        size_t e = at < to && p->text[at] == '(' ? la_skip(p, at) : SIZE_MAX;
        while (e < to && (p->text[e] == ' ' || p->text[e] == '\t' || p->text[e] == '\n' ||
                          p->text[e] == '\r'))
            e++;
        if (e == to)
            return error_at(p, GM_ERR_UNSUPPORTED, from, "%s should not be in lookahead assertion",
                            k == 1 ? "TagDispatch" : macros[k]);
    }
    return GM_OK;
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
    rule_attrs attrs = {GM_EX_INF, GM_EX_INF, false, 0, NULL, false};
    if (p->xg && peek(p) == '[') {
        gm_status ast = parse_rule_attrs(p, start, n, &attrs);
        if (ast) {
            gm_mem_free(p->m, attrs.capture);
            return ast;
        }
        skip_space(p, false);
    }
    if (attrs.capture || attrs.lazy) {
        /* before any error below, so that the rule owns it */
        uint32_t cr = gm_ebnf_rule_get(p->g, p->text + start, n);
        if (cr == GM_EX_NONE) {
            gm_mem_free(p->m, attrs.capture);
            return nomem(p);
        }
        if (attrs.capture) {
            gm_mem_free(p->m, p->g->rules[cr].capture);
            p->g->rules[cr].capture = attrs.capture;
        }
        p->g->rules[cr].lazy = attrs.lazy;
        p->g->rules[cr].noinline = 1;
    }
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
        size_t la_from = p->pos;
        if ((st = parse_alternates(p, true)))
            return st;
        if (peek(p) != ')')
            return unexpected(p, "')' to close the lookahead assertion (= ...)");
        la = p->stack.v[--p->stack.n];
        if ((st = check_lookahead_shape(p, la_from, p->pos, la)))
            return st;
        p->pos++;
        p->depth--;
        skip_space(p, true);
    }
    p->g->rules[r].body = body;
    p->g->rules[r].lookahead = la;
    if (attrs.max_tokens != GM_EX_INF || attrs.has_temperature) {
        /* a region keeps its items (notes [token budgets], [rule temperatures]) */
        p->g->rules[r].max_tokens = attrs.max_tokens;
        p->g->rules[r].has_temperature = attrs.has_temperature;
        p->g->rules[r].temperature = attrs.temperature;
        p->g->rules[r].noinline = 1;
    }
    p->g->rules[r].max_chars = attrs.max_chars; /* applied once all rules are read */
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
    {
        const char *why;
        uint32_t bad;
        if ((st = gm_ebnf_limit_chars_all(p->g, &bad, &why)) == GM_ERR_NOMEM)
            return nomem(p);
        if (st)
            return error_at(p, st, p->def_off.v[bad], "rule '%s': %s", p->g->rules[bad].name, why);
    }
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
