/*
 * The scanner of Lark grammar files (re2c). Owns the token rules of Lark's
 * grammar language and the unescaping of literals.
 *
 * note [Lark newlines]
 * A definition ends at a newline, except that a newline followed (after
 * blank lines, spaces and comments) by `|` continues the alternatives:
 * Lark's _NL and _NL_OR tokens. The scanner folds the whole gap into one
 * token, T_OR or T_NL, so the Bison grammar sees one separator. Comments
 * are `//...` and `#...`; a backslash before the newline continues a line.
 * At the end of input one T_NL is supplied when the text does not end with
 * one (Lark appends "\n" to the text).
 *
 * note [Lark escapes]
 * Lark evaluates the body of "..." and /.../ with its eval_escaping: \n \t
 * \r \f \xHH \uHHHH \UHHHHHHHH become the character (UTF-8 here), \" becomes
 * ", and every other backslash pair is kept as written, so a regex sees \d,
 * \\, \. unchanged. In a string, a kept \\ then becomes one backslash. We
 * also turn \/ into / in a regex: the same regex, without the escape that
 * only the grammar syntax needed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/hex.h"
#include "lexer/lexer.h"
#include "parser/lark_parse.h"
#include "parser/lark_state.h"

/*
 * The location of p, at or after the start of the current token (which is
 * on the current line: lines are counted after every token that spans some).
 */
static gm_srcloc loc_at(const gm_lscan *s, const unsigned char *p)
{
    gm_srcloc l = {s->file, s->line, 1};
    const unsigned char *ls = s->line_start;
    for (const unsigned char *q = s->tok; q < p; q++)
        if (*q == '\n') {
            l.line++;
            ls = q + 1;
        }
    l.column = (uint32_t)(p - ls) + 1;
    return l;
}

/* Moves the line counter over [from, to). */
static void advance_lines(gm_lscan *s, const unsigned char *from, const unsigned char *to)
{
    for (const unsigned char *p = from; p < to; p++)
        if (*p == '\n') {
            s->line++;
            s->line_start = p + 1;
        }
}

static size_t put_utf8(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/*
 * Unescapes body[0..n) of a string (is_regex false) or regex literal
 * (note [Lark escapes]). Body starts at column col0 of the current token's
 * line(s), for error locations. Returns false after reporting an error.
 */
static bool unescape(gm_lscan *s, const unsigned char *body, size_t n, bool is_regex,
                     const char **out, size_t *out_len)
{
    char *buf = gm_arena_alloc(s->arena, n + 1);
    if (!buf) {
        gm_lscan_nomem(s);
        return false;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = body[i];
        if (c != '\\' || i + 1 >= n) {
            buf[k++] = (char)c;
            continue;
        }
        unsigned char e = body[i + 1];
        int digits = 0;
        switch (e) {
        case 'n': buf[k++] = '\n'; i++; continue;
        case 't': buf[k++] = '\t'; i++; continue;
        case 'r': buf[k++] = '\r'; i++; continue;
        case 'f': buf[k++] = '\f'; i++; continue;
        case '"': buf[k++] = '"'; i++; continue;
        case '\\':
            buf[k++] = '\\';
            if (is_regex)
                buf[k++] = '\\';
            i++;
            continue;
        case '/':
            if (is_regex) {
                buf[k++] = '/';
                i++;
                continue;
            }
            break;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default: break;
        }
        if (!digits) {
            buf[k++] = '\\';
            continue; /* the escaped character is copied on the next turn */
        }
        uint32_t cp = 0;
        int got = 0;
        while (got < digits && i + 2 + (size_t)got < n && gm_hex_value(body[i + 2 + got]) >= 0) {
            cp = cp * 16 + (uint32_t)gm_hex_value(body[i + 2 + got]);
            got++;
        }
        gm_srcloc at = loc_at(s, body + i);
        if (got < digits) {
            gm_lscan_error(s, GM_ERR_SYNTAX, at,
                           "bad escape '\\%c' in a %s: it needs %d hexadecimal digits",
                           e, is_regex ? "regular expression" : "string literal", digits);
            return false;
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            gm_lscan_error(s, GM_ERR_SYNTAX, at,
                           "bad escape in a %s: U+%04X is not a Unicode scalar value",
                           is_regex ? "regular expression" : "string literal", (unsigned)cp);
            return false;
        }
        k += put_utf8(buf + k, cp);
        i += 1 + (size_t)digits;
    }
    buf[k] = '\0';
    *out = buf;
    *out_len = k;
    return true;
}

/* Regex flag letters as Lark takes them (imslux); 'l' is Python 2's LOCALE. */
static bool regex_flags(gm_lscan *s, const unsigned char *p, const unsigned char *end,
                        unsigned *flags)
{
    *flags = 0;
    for (; p < end; p++) {
        switch (*p) {
        case 'i': *flags |= GM_RE_IGNORECASE; break;
        case 'm': *flags |= GM_RE_MULTILINE; break;
        case 's': *flags |= GM_RE_DOTALL; break;
        case 'u': *flags |= GM_RE_UNICODE; break;
        case 'x': *flags |= GM_RE_VERBOSE; break;
        case 'l':
            gm_lscan_error(s, GM_ERR_UNSUPPORTED, loc_at(s, p),
                           "regex flag 'l' (LOCALE) is not supported: Python 3 rejects it "
                           "for text patterns");
            return false;
        default:
            gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, p),
                           "unknown regex flag '%c' (Lark allows i, m, s, u and x)", *p);
            return false;
        }
    }
    return true;
}

static const char *describe_byte(unsigned char c, char *buf, size_t cap)
{
    if (c >= 0x21 && c < 0x7f)
        snprintf(buf, cap, "'%c'", c);
    else
        snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

int gm_lark_yylex(GM_LARK_YYSTYPE *lval, GM_LARK_YYLTYPE *lloc, gm_lscan *s)
{
    for (;;) {
        const unsigned char *start = s->cur;
        s->tok = start;
        int tok = TOK_ERROR;
        const unsigned char *at = start; /* where the token is reported */
        const unsigned char *q;          /* end of a literal's body */
        /*!re2c
            re2c:api:style = free-form;
            re2c:define:YYCTYPE = "unsigned char";
            re2c:define:YYCURSOR = "s->cur";
            re2c:define:YYMARKER = "s->mar";
            re2c:define:YYLIMIT = "s->lim";
            re2c:yyfill:enable = 0;
            re2c:eof = 0;

            nl = "\r"? "\n";
            sp = [ \t\f\v\r];
            comment = ("//" | "#") [^\n]*;
            gap = (sp | nl | comment)*;
            lower = [a-z];
            upper = [A-Z];
            name = "_"? [a-zA-Z] [_a-zA-Z0-9]*;
            strchar = [^"\\\n] | "\\" [^\n];
            rechar = [^/\\] | "\\" [^];

            $ {
                if (!s->last_was_nl) {
                    s->last_was_nl = true;
                    tok = TOK_NL;
                    goto done;
                }
                s->done = true;
                tok = TOK_END;
                goto done;
            }
            sp+ { continue; }
            comment { continue; }
            "\\" [ \t]* nl { advance_lines(s, start, s->cur); continue; }
            nl gap "|" { at = s->cur - 1; tok = TOK_OR; s->depth = 0; goto done; }
            nl gap { tok = TOK_NL; s->depth = 0; goto done; }
            "|" { tok = TOK_OR; goto done; }
            ":" { tok = TOK_COLON; goto done; }
            "(" { tok = TOK_LPAR; goto open; }
            ")" { tok = TOK_RPAR; goto close; }
            "[" { tok = TOK_LBRA; goto open; }
            "]" { tok = TOK_RBRA; goto close; }
            "{" { tok = TOK_LBRACE; goto open; }
            "}" { tok = TOK_RBRACE; goto close; }
            "," { tok = TOK_COMMA; goto done; }
            "->" { tok = TOK_ARROW; goto done; }
            ".." { tok = TOK_DOTDOT; goto done; }
            "." { tok = TOK_DOT; goto done; }
            "~" { tok = TOK_TILDE; goto done; }
            ("!" | "?" | "!?" | "?!") / [_a-z] {
                lval->mods = 0;
                for (const unsigned char *p = start; p < s->cur; p++)
                    lval->mods |= *p == '?' ? GM_LMOD_EXPAND1 : GM_LMOD_KEEP;
                tok = TOK_MODS;
                goto done;
            }
            "?" { lval->op = '?'; tok = TOK_OP; goto done; }
            "*" { lval->op = '*'; tok = TOK_OP; goto done; }
            "+" { lval->op = '+'; tok = TOK_OP; goto done; }
            "-"? [0-9]+ {
                int64_t v = 0;
                const unsigned char *p = start + (*start == '-');
                for (; p < s->cur; p++) {
                    v = v * 10 + (*p - '0');
                    if (v > INT32_MAX) {
                        gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                                       "number too large (at most %d)", INT32_MAX);
                        goto fail;
                    }
                }
                lval->num = *start == '-' ? -v : v;
                tok = TOK_NUMBER;
                goto done;
            }
            name {
                bool has_lower = false, has_upper = false;
                for (const unsigned char *p = start; p < s->cur; p++) {
                    has_lower |= *p >= 'a' && *p <= 'z';
                    has_upper |= *p >= 'A' && *p <= 'Z';
                }
                if (has_lower && has_upper) {
                    gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                                   "illegal name '%.*s': rule names are lowercase, terminal "
                                   "names uppercase", (int)(s->cur - start), (const char *)start);
                    goto fail;
                }
                lval->str = gm_arena_strndup(s->arena, (const char *)start, (size_t)(s->cur - start));
                if (!lval->str)
                    goto nomem;
                tok = has_upper ? TOK_TERM : TOK_RULE;
                goto done;
            }
            "_"+ [_a-zA-Z0-9]* {
                gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                               "illegal name '%.*s': a name is at most one '_' and a letter, "
                               "then letters, digits and '_' (names starting with '__' are "
                               "reserved)", (int)(s->cur - start), (const char *)start);
                goto fail;
            }
            "%" [a-zA-Z_]+ {
                size_t n = (size_t)(s->cur - start);
                if (n == 7 && !memcmp(start, "%ignore", 7)) tok = TOK_IGNORE;
                else if (n == 7 && !memcmp(start, "%import", 7)) tok = TOK_IMPORT;
                else if (n == 8 && !memcmp(start, "%declare", 8)) tok = TOK_DECLARE;
                else if (n == 9 && !memcmp(start, "%override", 9)) tok = TOK_OVERRIDE;
                else if (n == 7 && !memcmp(start, "%extend", 7)) tok = TOK_EXTEND;
                else if (n == 7 && !memcmp(start, "%insert", 7)) tok = TOK_INSERT;
                else if (n == 7 && !memcmp(start, "%indent", 7)) tok = TOK_INDENT;
                else {
                    gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                                   "unknown directive '%.*s' (Lark has %%ignore, %%import, "
                                   "%%declare, %%override and %%extend; gramask adds "
                                   "%%insert and %%indent)", (int)n, (const char *)start);
                    goto fail;
                }
                goto done;
            }
            "\"" strchar* "\"" "i"? {
                q = s->cur - 1;
                lval->lit.flags = 0;
                if (*q == 'i') {
                    lval->lit.flags = GM_RE_IGNORECASE;
                    q--;
                }
                if (q == start + 1) {
                    gm_lscan_error(s, GM_ERR_GRAMMAR, loc_at(s, start),
                                   "empty string literal: terminals cannot be empty");
                    goto fail;
                }
                if (!unescape(s, start + 1, (size_t)(q - start - 1), false, &lval->lit.bytes,
                              &lval->lit.len))
                    goto fail;
                tok = TOK_STRING;
                goto done;
            }
            "\"" strchar* "\\"? {
                gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                               "unterminated string literal (a string ends with '\"' on the "
                               "same line)");
                goto fail;
            }
            "/" [^/] {
                /* A regex runs to the next unescaped '/'; newlines only with the x flag. */
                s->cur = start + 1;
                const unsigned char *p = s->cur;
                bool newline = false;
                while (p < s->lim && *p != '/') {
                    if (*p == '\n')
                        newline = true;
                    if (*p == '\\' && p + 1 < s->lim)
                        p++;
                    p++;
                }
                if (p >= s->lim) {
                    gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                                   "unterminated regular expression (missing closing '/')");
                    goto fail;
                }
                q = p;
                p++;
                const unsigned char *flags_end = p;
                while (flags_end < s->lim && *flags_end >= 'a' && *flags_end <= 'z')
                    flags_end++;
                s->cur = flags_end;
                if (!regex_flags(s, p, flags_end, &lval->lit.flags))
                    goto fail;
                if (newline && !(lval->lit.flags & GM_RE_VERBOSE)) {
                    gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                                   "regular expression spans lines: missing closing '/'? "
                                   "(newlines are allowed only with the x flag)");
                    goto fail;
                }
                if (!unescape(s, start + 1, (size_t)(q - start - 1), true, &lval->lit.bytes,
                              &lval->lit.len))
                    goto fail;
                tok = TOK_REGEX;
                goto done;
            }
            "'" {
                gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start),
                               "unexpected \"'\": string literals use double quotes");
                goto fail;
            }
            [^] {
                char buf[32];
                gm_lscan_error(s, GM_ERR_SYNTAX, loc_at(s, start), "unexpected %s",
                               describe_byte(*start, buf, sizeof buf));
                goto fail;
            }
        */
    open:
        if (++s->depth > GM_LARK_MAX_NESTING) {
            gm_lscan_error(s, GM_ERR_LIMIT, loc_at(s, start),
                           "brackets nested deeper than %d levels", GM_LARK_MAX_NESTING);
            goto fail;
        }
        goto done;
    close:
        if (s->depth > 0)
            s->depth--;
    done: {
        gm_srcloc l = loc_at(s, at);
        lloc->first_line = lloc->last_line = (int)l.line;
        lloc->first_column = lloc->last_column = (int)l.column;
        if (tok == TOK_NL || tok == TOK_OR || tok == TOK_REGEX)
            advance_lines(s, start, s->cur);
        if (tok != TOK_END)
            s->last_was_nl = tok == TOK_NL;
        return tok;
    }
    nomem:
        gm_lscan_nomem(s);
    fail:
        lloc->first_line = lloc->last_line = (int)s->line;
        lloc->first_column = lloc->last_column = (int)(start - s->line_start) + 1;
        s->cur = s->lim;
        s->done = true;
        return TOK_ERROR;
    }
}
