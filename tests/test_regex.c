/*
 * Unit tests of the regex front end and the byte automata: errors with
 * their codes, construct names and columns; limits; UTF-8 exactness of
 * code point sets (exhaustive over all code points, and over byte strings
 * of up to three bytes); flags; the documented differences from Python.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "lexer/cpset.h"
#include "lexer/dfa.h"
#include "lexer/dump.h"
#include "lexer/lexer.h"
#include "lexer/regex.h"
#include "lexer/uclass.h"
#include "lexer/utf8_ranges.h"

/* Compiles re with flags; returns the status and leaves the minimal DFA in *d on success. */
static gm_status compile(gm_mem *m, const char *re, unsigned flags, const gm_limits *lim, gm_dfa *d,
                         gm_error *err)
{
    return gm_regex_compile(m, NULL, re, strlen(re), flags, lim, d, NULL, NULL, err);
}

static bool matches(const gm_dfa *d, const char *s, size_t n)
{
    return gm_dfa_match(d, (const uint8_t *)s, n) != GM_LEX_NONE;
}

/* ---- errors ---- */

typedef struct err_case {
    const char *re;
    unsigned flags;
    gm_status code;
    const char *needle;  /* must appear in the message */
    uint32_t column;     /* 1-based byte column */
} err_case;

static const err_case error_cases[] = {
    /* Unsupported constructs: named, with the column where they start. */
    {"ab\\1", 0, GM_ERR_UNSUPPORTED, "backreference \\1", 3},
    {"(a)\\12", 0, GM_ERR_UNSUPPORTED, "backreference \\12", 4},
    {"(?P<x>a)(?P=x)", 0, GM_ERR_UNSUPPORTED, "named backreference (?P=name)", 9},
    {"a(?=b)", 0, GM_ERR_UNSUPPORTED, "lookahead (?=...)", 2},
    {"a(?!b)", 0, GM_ERR_UNSUPPORTED, "negative lookahead (?!...)", 2},
    {"x(?<=a)b", 0, GM_ERR_UNSUPPORTED, "lookbehind (?<=...)", 2},
    {"\".*?(?<!\\\\)(\\\\\\\\)*?\"", 0, GM_ERR_UNSUPPORTED, "negative lookbehind (?<!...)", 5},
    {"(a)?(?(1)b|c)", 0, GM_ERR_UNSUPPORTED, "conditional group", 5},
    {"(?>ab)", 0, GM_ERR_UNSUPPORTED, "atomic group (?>...)", 1},
    {"\\bword", 0, GM_ERR_UNSUPPORTED, "word boundary \\b", 1},
    {"a\\B", 0, GM_ERR_UNSUPPORTED, "non-word boundary \\B", 2},
    {"\\Aabc", 0, GM_ERR_UNSUPPORTED, "start-of-string anchor \\A", 1},
    {"abc\\Z", 0, GM_ERR_UNSUPPORTED, "end-of-string anchor \\Z", 4},
    {"^abc", 0, GM_ERR_UNSUPPORTED, "anchor ^", 1},
    {"abc$", GM_RE_MULTILINE, GM_ERR_UNSUPPORTED, "anchor $", 4},
    {"a|b$", 0, GM_ERR_UNSUPPORTED, "anchor $", 4},
    {"\\N{EM DASH}", 0, GM_ERR_UNSUPPORTED, "named character escape", 1},
    {"(?L)a", 0, GM_ERR_UNSUPPORTED, "locale flag L", 3},
    {"é(?=x)", 0, GM_ERR_UNSUPPORTED, "lookahead", 3}, /* columns count bytes */
    /* Syntax errors, with Python's wording. */
    {"a**", 0, GM_ERR_SYNTAX, "multiple repeat", 3},
    {"a{2}{3}", 0, GM_ERR_SYNTAX, "multiple repeat", 5},
    {"*a", 0, GM_ERR_SYNTAX, "nothing to repeat", 1},
    {"a|+", 0, GM_ERR_SYNTAX, "nothing to repeat", 3},
    {"(?i)?", 0, GM_ERR_SYNTAX, "nothing to repeat", 5},
    {"a{3,2}", 0, GM_ERR_SYNTAX, "min repeat greater than max repeat", 2},
    {"(ab", 0, GM_ERR_SYNTAX, "missing ), unterminated subpattern", 1},
    {"ab)", 0, GM_ERR_SYNTAX, "unbalanced parenthesis", 3},
    {"[abc", 0, GM_ERR_SYNTAX, "unterminated character set", 1},
    {"[]", 0, GM_ERR_SYNTAX, "unterminated character set", 1},
    {"x[z-a]", 0, GM_ERR_SYNTAX, "bad character range z-a", 3},
    {"[a--]", 0, GM_ERR_SYNTAX, "bad character range a--", 2},
    {"[\\w-z]", 0, GM_ERR_SYNTAX, "bad character range \\w-z", 2},
    {"\\q", 0, GM_ERR_SYNTAX, "bad escape \\q", 1},
    {"[\\q]", 0, GM_ERR_SYNTAX, "bad escape \\q", 2},
    {"[\\A]", 0, GM_ERR_SYNTAX, "bad escape \\A", 2},
    {"[\\8]", 0, GM_ERR_SYNTAX, "bad escape \\8", 2},
    {"ab\\", 0, GM_ERR_SYNTAX, "bad escape (end of pattern)", 3},
    {"\\x4", 0, GM_ERR_SYNTAX, "incomplete escape \\x4", 1},
    {"\\u12g4", 0, GM_ERR_SYNTAX, "incomplete escape \\u12", 1},
    {"\\U00110000", 0, GM_ERR_SYNTAX, "bad escape \\U00110000", 1},
    {"\\477", 0, GM_ERR_SYNTAX, "octal escape value \\477 outside of range", 1},
    {"[\\477]", 0, GM_ERR_SYNTAX, "octal escape value", 2},
    {"a(?i)b", 0, GM_ERR_SYNTAX, "global flags not at the start", 2},
    {"(?:(?i)b)", 0, GM_ERR_SYNTAX, "global flags not at the start", 4},
    {"a|(?i)b", 0, GM_ERR_SYNTAX, "global flags not at the start", 3},
    {"(?-i)a", 0, GM_ERR_SYNTAX, "missing :", 5},
    {"(?i-i:a)", 0, GM_ERR_SYNTAX, "flag turned on and off", 1},
    {"(?-a:x)", 0, GM_ERR_SYNTAX, "cannot turn off flags 'a', 'u' and 'L'", 4},
    {"(?au:x)", 0, GM_ERR_SYNTAX, "flags 'a', 'u' and 'L' are incompatible", 4},
    {"(?u)x", GM_RE_ASCII, GM_ERR_SYNTAX, "ASCII and UNICODE flags are incompatible", 1},
    {"(?z)", 0, GM_ERR_SYNTAX, "unknown extension ?z", 1},
    {"(?iz)", 0, GM_ERR_SYNTAX, "unknown flag", 4},
    {"(?P<1a>x)", 0, GM_ERR_SYNTAX, "bad character in group name", 5},
    {"(?P<a>x)(?P<a>y)", 0, GM_ERR_SYNTAX, "redefinition of group name", 13},
    {"(?P<a", 0, GM_ERR_SYNTAX, "missing >, unterminated name", 5},
    {"(?#abc", 0, GM_ERR_SYNTAX, "missing ), unterminated comment", 1},
    {"(?", 0, GM_ERR_SYNTAX, "unexpected end of pattern", 3},
    {"(?<x>a)", 0, GM_ERR_SYNTAX, "unknown extension ?<x", 1},
    {"a\xff", 0, GM_ERR_SYNTAX, "not valid UTF-8", 2},
    /* Limits. */
    {"a{1001}", 0, GM_ERR_LIMIT, "repetition count 1001", 2},
    {"a{2,5000}", 0, GM_ERR_LIMIT, "max_regex_repeat", 2},
    {"a{99999999999999999999}", 0, GM_ERR_LIMIT, "max_regex_repeat", 2},
    {"(a{1000}){1000}", 0, GM_ERR_LIMIT, "max_nfa_states", 0},
    {"((a{1000}){1000}){1000}", 0, GM_ERR_LIMIT, "max_nfa_states", 0},
    {"(?:[ab]{1000}){1000}", 0, GM_ERR_LIMIT, "max_nfa_states", 0},
};

static void errors_name_construct_and_column(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    for (size_t i = 0; i < sizeof error_cases / sizeof error_cases[0]; i++) {
        const err_case *c = &error_cases[i];
        gm_dfa d;
        gm_error err;
        gm_error_clear(&err);
        gm_status st = compile(&m, c->re, c->flags, NULL, &d, &err);
        if (st != c->code || !strstr(err.message, c->needle) || err.column != c->column)
            fail_msg("/%s/: expected %s '%s' at column %u, got %s '%s' at column %u", c->re,
                     gm_status_name(c->code), c->needle, c->column, gm_status_name(st), err.message,
                     err.column);
        if (st == GM_OK)
            gm_dfa_free(&d);
    }
    assert_int_equal(atomic_load(&m.used), 0);
}

static void error_format_shows_caret(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa d;
    gm_error err;
    const char *re = "ab(?=c)";
    assert_int_equal(compile(&m, re, 0, NULL, &d, &err), GM_ERR_UNSUPPORTED);
    char buf[2048];
    gm_regex_format_error(buf, sizeof buf, &err, re, strlen(re));
    assert_string_equal(buf, "unsupported construct: lookahead (?=...) at column 3\n  ab(?=c)\n    ^");
}

static void limits_fail_without_building(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa d;
    gm_error err;
    /* The lower bound stops it before any state is allocated. */
    assert_int_equal(compile(&m, "(a{1000}){1000}", 0, NULL, &d, &err), GM_ERR_LIMIT);
    assert_true(atomic_load(&m.peak) < (1u << 20));

    gm_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_dfa_states = 1000;
    /* 2^20 DFA states for this one: the DFA limit stops the subset construction. */
    assert_int_equal(compile(&m, "[ab]*a[ab]{19}", 0, &lim, &d, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "max_dfa_states"));
    memset(&lim, 0, sizeof lim);
    lim.max_nfa_states = 50;
    assert_int_equal(compile(&m, "\\w+", 0, &lim, &d, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "max_nfa_states"));
    memset(&lim, 0, sizeof lim);
    lim.max_regex_repeat = 5;
    assert_int_equal(compile(&m, "a{6}", 0, &lim, &d, &err), GM_ERR_LIMIT);
    assert_int_equal(compile(&m, "a{5}", 0, &lim, &d, &err), GM_OK);
    gm_dfa_free(&d);
    memset(&lim, 0, sizeof lim);
    lim.max_input_bytes = 4;
    assert_int_equal(compile(&m, "abcde", 0, &lim, &d, &err), GM_ERR_LIMIT);

    /* Nesting is bounded so the recursive parser cannot overflow the stack. */
    char deep[2 * 300 + 2];
    for (int i = 0; i < 300; i++) {
        deep[i] = '(';
        deep[300 + 1 + i] = ')';
    }
    deep[300] = 'a';
    deep[601] = '\0';
    assert_int_equal(compile(&m, deep, 0, NULL, &d, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "nested deeper"));

    /* A memory limit turns into GM_ERR_LIMIT, not a crash. */
    gm_mem small;
    gm_mem_init(&small, NULL, 64 * 1024);
    assert_int_equal(compile(&small, "\\w{200}", 0, NULL, &d, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "memory limit"));
    assert_int_equal(atomic_load(&small.used), 0);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* ---- UTF-8 exactness ---- */

/* Checks every code point's encoding against set membership. */
static void check_all_code_points(const gm_dfa *d, const gm_cpset *set, const char *what)
{
    for (uint32_t cp = 0; cp <= GM_CP_MAX; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            continue;
        uint8_t buf[4];
        int n = gm_utf8_encode_char(cp, buf);
        bool want = gm_cpset_has(set, cp);
        bool got = gm_dfa_match(d, buf, (size_t)n) != GM_LEX_NONE;
        if (want != got)
            fail_msg("%s: U+%04X %s but the DFA says %s", what, cp, want ? "is in the set" : "is not",
                     got ? "match" : "no match");
        /* Any proper prefix of a multi-byte character is never a match. */
        for (int k = 1; k < n; k++)
            if (gm_dfa_match(d, buf, (size_t)k) != GM_LEX_NONE)
                fail_msg("%s: a %d-byte prefix of U+%04X matches", what, k, cp);
    }
}

static void sets_are_exact_over_all_code_points(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_uclass uc;
    gm_uclass_init(&uc, &m);
    struct {
        const char *re;
        unsigned flags;
    } cases[] = {
        {".", GM_RE_DOTALL}, {".", 0},        {"[^a]", 0},  {"\\w", 0},      {"\\W", 0},
        {"\\d", 0},          {"\\s", 0},      {"[^\\w]", GM_RE_ASCII},
        {"[\\x7f-\\u0800\\uffff-\\U00010000\\U0010fffe-\\U0010ffff]", 0},
        {"[\\u07ff\\u0800\\ud7ff\\ue000\\U0003ffff\\U00040000]", 0},
        {"[^\\u0100-\\U000fffff]", 0},        {"(?i)[k-s]", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_dfa d;
        gm_error err;
        assert_int_equal(gm_regex_compile(&m, &uc, cases[i].re, strlen(cases[i].re), cases[i].flags, NULL,
                                          &d, NULL, NULL, &err),
                         GM_OK);
        /* The expected set, computed independently of the parser where possible. */
        gm_cpset set = {0};
        const char *re = cases[i].re;
        if (!strcmp(re, ".")) {
            gm_cpset_add_range(&m, &set, 0, GM_CP_MAX);
            if (!(cases[i].flags & GM_RE_DOTALL)) {
                gm_cpset_clear(&set);
                gm_cpset_add_range(&m, &set, 0, 9);
                gm_cpset_add_range(&m, &set, 11, GM_CP_MAX);
            }
        } else if (!strcmp(re, "[^a]")) {
            gm_cpset_add_range(&m, &set, 'a', 'a');
            gm_cpset_negate(&m, &set);
        } else if (re[0] == '\\' || !strncmp(re, "[^\\w]", 5)) {
            for (uint32_t cp = 0; cp <= GM_CP_MAX; cp++) {
                int cat = utf8proc_category((utf8proc_int32_t)cp);
                bool word = (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
                            (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO) || cp == '_';
                bool in = false;
                if (!strcmp(re, "\\w"))
                    in = word;
                else if (!strcmp(re, "\\W"))
                    in = !word;
                else if (!strcmp(re, "\\d"))
                    in = cat == UTF8PROC_CATEGORY_ND;
                else if (!strcmp(re, "\\s"))
                    in = (cp >= 9 && cp <= 13) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
                         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
                         cp == 0x202f || cp == 0x205f || cp == 0x3000;
                else
                    in = !(cp < 128 && (cp == '_' || (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') ||
                                        (cp >= 'A' && cp <= 'Z')));
                if (in)
                    gm_cpset_add_range(&m, &set, cp, cp);
            }
        } else if (!strncmp(re, "(?i)", 4)) {
            /* k-s plus what folds onto them: K (Kelvin) and long s. */
            gm_cpset_add_range(&m, &set, 'k', 's');
            gm_cpset_add_range(&m, &set, 'K', 'S');
            gm_cpset_add_range(&m, &set, 0x212A, 0x212A);
            gm_cpset_add_range(&m, &set, 0x017F, 0x017F);
        } else if (!strncmp(re, "[^\\u0100", 8)) {
            gm_cpset_add_range(&m, &set, 0, 0xFF);
            gm_cpset_add_range(&m, &set, 0x100000, GM_CP_MAX);
        } else if (!strncmp(re, "[\\x7f", 5)) {
            gm_cpset_add_range(&m, &set, 0x7f, 0x800);
            gm_cpset_add_range(&m, &set, 0xffff, 0x10000);
            gm_cpset_add_range(&m, &set, 0x10fffe, 0x10ffff);
        } else {
            uint32_t cps[] = {0x7ff, 0x800, 0xd7ff, 0xe000, 0x3ffff, 0x40000};
            for (size_t j = 0; j < 6; j++)
                gm_cpset_add_range(&m, &set, cps[j], cps[j]);
        }
        check_all_code_points(&d, &set, re);
        gm_cpset_free(&m, &set);
        gm_dfa_free(&d);
    }
    gm_uclass_free(&uc);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Well-formed UTF-8, decoded independently with utf8proc. */
static bool valid_utf8(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0 || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += (size_t)k;
    }
    return true;
}

static void ill_formed_utf8_is_never_accepted(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa one, any;
    gm_error err;
    assert_int_equal(compile(&m, ".", GM_RE_DOTALL, NULL, &one, &err), GM_OK);
    assert_int_equal(compile(&m, ".*", GM_RE_DOTALL, NULL, &any, &err), GM_OK);
    /* Every byte string of length 1..3: (?s). accepts exactly one well-formed character. */
    uint8_t b[4];
    for (uint32_t x = 0; x < (1u << 24); x++) {
        for (int len = 1; len <= 3; len++) {
            if (len < 3 && (x >> (8 * len)))
                continue;
            for (int i = 0; i < len; i++)
                b[i] = (uint8_t)(x >> (8 * (len - 1 - i)));
            bool want = valid_utf8(b, (size_t)len);
            if ((gm_dfa_match(&any, b, (size_t)len) != GM_LEX_NONE) != want)
                fail_msg("(?s).* on %d bytes %06x: want %d", len, x, want);
            uint32_t cp;
            bool single = (int)gm_utf8_decode(b, (size_t)len, &cp) == len;
            if ((gm_dfa_match(&one, b, (size_t)len) != GM_LEX_NONE) != single)
                fail_msg("(?s). on %d bytes %06x: want %d", len, x, single);
        }
    }
    /* Four-byte strings: every lead byte with random continuations, biased to the edges. */
    srand(7);
    const uint8_t edges[] = {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff};
    for (int lead = 0; lead < 256; lead++)
        for (int r = 0; r < 3000; r++) {
            b[0] = (uint8_t)lead;
            for (int i = 1; i < 4; i++)
                b[i] = r % 2 ? edges[rand() % 10] : (uint8_t)(0x80 + rand() % 64);
            bool want = valid_utf8(b, 4);
            if ((gm_dfa_match(&any, b, 4) != GM_LEX_NONE) != want)
                fail_msg("(?s).* on %02x %02x %02x %02x: want %d", b[0], b[1], b[2], b[3], want);
        }
    /* Known bad forms by name. */
    const char *bad[] = {"\xc0\xaf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xed\xa0\x80", "\xed\xbf\xbf",
                         "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\x80", "\xc2", "\xe4\xb8", "\xf0\x9f\x98"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(matches(&any, bad[i], strlen(bad[i])));
    gm_dfa_free(&one);
    gm_dfa_free(&any);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void negated_classes_with_non_ascii(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa d;
    gm_error err;
    assert_int_equal(compile(&m, "[^é中😀\\n]+", 0, NULL, &d, &err), GM_OK);
    assert_true(matches(&d, "abc", 3));
    assert_true(matches(&d, "èx中", strlen("èx")));
    assert_false(matches(&d, "aé", strlen("aé")));
    assert_false(matches(&d, "中", strlen("中")));
    assert_false(matches(&d, "😀", strlen("😀")));
    assert_true(matches(&d, "😁", strlen("😁")));
    assert_false(matches(&d, "\xf0\x9f\x98", 3)); /* a truncated emoji */
    assert_false(matches(&d, "a\n", 2));
    gm_dfa_free(&d);
    /* Under IGNORECASE the negation applies after case closure (Python's semantics). */
    assert_int_equal(compile(&m, "[^k]", GM_RE_IGNORECASE, NULL, &d, &err), GM_OK);
    assert_false(matches(&d, "K", 1));
    assert_false(matches(&d, "\u212a", strlen("\u212a")));
    assert_true(matches(&d, "j", 1));
    gm_dfa_free(&d);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* ---- dialect details ---- */

static void lazy_and_possessive_are_greedy(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_dfa d;
    gm_error err;
    /* Documented difference: Python's a*+a matches nothing; here it is a*a. */
    assert_int_equal(compile(&m, "a*+a", 0, NULL, &d, &err), GM_OK);
    assert_true(matches(&d, "aaa", 3));
    assert_false(matches(&d, "", 0));
    gm_dfa_free(&d);
    /* Lazy forms: the same full-match language as greedy ones. */
    gm_dfa g;
    assert_int_equal(compile(&m, "/\\*.*?\\*/", GM_RE_DOTALL, NULL, &d, &err), GM_OK);
    assert_int_equal(compile(&m, "/\\*.*\\*/", GM_RE_DOTALL, NULL, &g, &err), GM_OK);
    assert_int_equal(d.nstates, g.nstates);
    assert_memory_equal(d.next, g.next, (size_t)d.nstates * d.nclasses * sizeof *d.next);
    gm_dfa_free(&d);
    gm_dfa_free(&g);
}

static void flags_parse(void **state)
{
    (void)state;
    unsigned f;
    assert_int_equal(gm_re_flags_parse("imsxua", 6, &f), 6);
    assert_int_equal(f, GM_RE_IGNORECASE | GM_RE_MULTILINE | GM_RE_DOTALL | GM_RE_VERBOSE |
                            GM_RE_UNICODE | GM_RE_ASCII);
    assert_int_equal(gm_re_flags_parse("iq", 2, &f), 1);
    assert_int_equal(gm_re_flags_parse("l", 1, &f), 0);
}

static void literal_specs(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_uclass uc;
    gm_uclass_init(&uc, &m);
    gm_regex re;
    gm_regex_init(&re, &m);
    gm_error err;
    /* Regex metacharacters are plain bytes in a literal; invalid UTF-8 is kept byte for byte. */
    const char lit[] = "a.*\xff(";
    assert_int_equal(gm_regex_literal(&re, &uc, lit, sizeof lit - 1, GM_RE_IGNORECASE, &err), GM_OK);
    assert_false(gm_regex_nullable(&re, re.root));
    assert_int_equal(re.nodes[re.root].kind, GM_RX_CONCAT);
    assert_int_equal(re.nodes[re.root].count, 5);
    assert_int_equal(re.nodes[re.kids[re.nodes[re.root].first + 3]].kind, GM_RX_BYTE);
    gm_regex_free(&re);
    gm_regex_init(&re, &m);
    assert_int_equal(gm_regex_literal(&re, &uc, "", 0, 0, &err), GM_OK);
    assert_true(gm_regex_nullable(&re, re.root));
    gm_regex_free(&re);
    gm_uclass_free(&uc);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void cpset_operations(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_cpset s = {0};
    assert_int_equal(gm_cpset_add_range(&m, &s, 10, 20), 0);
    assert_int_equal(gm_cpset_add_range(&m, &s, 30, 40), 0);
    assert_int_equal(gm_cpset_add_range(&m, &s, 21, 29), 0); /* bridges both */
    assert_int_equal(s.n, 1);
    assert_int_equal(s.r[0].lo, 10);
    assert_int_equal(s.r[0].hi, 40);
    assert_int_equal(gm_cpset_add_range(&m, &s, 0, 0), 0);
    assert_int_equal(gm_cpset_add_range(&m, &s, 5, 7), 0);
    assert_int_equal(s.n, 3);
    assert_int_equal(gm_cpset_count(&s), 1 + 3 + 31);
    assert_int_equal(gm_cpset_negate(&m, &s), 0);
    assert_false(gm_cpset_has(&s, 0));
    assert_true(gm_cpset_has(&s, 1));
    assert_true(gm_cpset_has(&s, GM_CP_MAX));
    assert_int_equal(gm_cpset_count(&s), GM_CP_MAX + 1 - 35);
    assert_int_equal(gm_cpset_negate(&m, &s), 0);
    assert_int_equal(gm_cpset_count(&s), 35);
    gm_cpset_clear(&s);
    assert_int_equal(gm_cpset_negate(&m, &s), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(gm_cpset_negate(&m, &s), 0);
    assert_int_equal(s.n, 0);
    gm_cpset_free(&m, &s);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void golden_dumps(void **state)
{
    (void)state;
    /* The stable text dump of small minimal DFAs (STYLE.md §11). */
    struct {
        const char *re;
        unsigned flags;
        const char *dump;
    } cases[] = {
        {"ab*|ac*", 0,
         "dfa states=4 classes=4\n"
         "s0\n  'a' -> s1\n"
         "s1 accept 0\n  'b' -> s2\n  'c' -> s3\n"
         "s2 accept 0\n  'b' -> s2\n"
         "s3 accept 0\n  'c' -> s3\n"},
    };
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_dfa d;
        gm_error err;
        assert_int_equal(compile(&m, cases[i].re, cases[i].flags, NULL, &d, &err), GM_OK);
        gm_strbuf b;
        gm_strbuf_init(&b, &m);
        gm_dfa_view v = gm_dfa_view_of(&d);
        gm_dfa_view_dump(&b, &v);
        assert_string_equal(gm_strbuf_str(&b), cases[i].dump);
        gm_strbuf_free(&b);
        gm_dfa_free(&d);
    }
}

/* Regexes with an empty language (surrogates cannot occur in UTF-8) compile to one dead state. */
static void empty_languages(void **state)
{
    (void)state;
    const char *res[] = {"\\ud800", "[\\ud800-\\udfff]", "[^\\s\\S]", "\\ud800-\\udfff]", "a[\\udc00]b"};
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    for (size_t i = 0; i < sizeof res / sizeof res[0]; i++) {
        gm_dfa d;
        gm_error err;
        assert_int_equal(compile(&m, res[i], GM_RE_VERBOSE, NULL, &d, &err), GM_OK);
        assert_int_equal(d.nstates, 1);
        assert_int_equal(d.label[0], GM_LEX_NONE);
        assert_false(matches(&d, "\xed\xa0\x80", 3));
        gm_dfa_free(&d);
    }
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Golden files: the first line is the command that produced the rest. */
static void golden_files(void **state)
{
    (void)state;
    const char *files[] = {"tests/golden/regex_nonascii.dump", "tests/golden/regex_casefold.dump"};
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char *text = gm_test_read_file(gm_test_src_path(files[i]), NULL);
        char *nl = strchr(text, '\n');
        assert_non_null(nl);
        *nl = '\0';
        /* "# gramask regex --dump [--flags F] 'RE'" */
        char *q1 = strchr(text, '\''), *q2 = strrchr(text, '\'');
        assert_true(q1 && q2 > q1);
        *q2 = '\0';
        unsigned flags = 0;
        char *fl = strstr(text, "--flags ");
        if (fl && fl < q1) {
            fl += 8;
            size_t n = strcspn(fl, " ");
            assert_int_equal(gm_re_flags_parse(fl, n, &flags), n);
        }
        gm_dfa d;
        gm_error err;
        assert_int_equal(compile(&m, q1 + 1, flags, NULL, &d, &err), GM_OK);
        gm_strbuf b;
        gm_strbuf_init(&b, &m);
        gm_dfa_view v = gm_dfa_view_of(&d);
        gm_dfa_view_dump(&b, &v);
        assert_string_equal(gm_strbuf_str(&b), nl + 1);
        gm_strbuf_free(&b);
        gm_dfa_free(&d);
        free(text);
    }
    assert_int_equal(atomic_load(&m.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(errors_name_construct_and_column),
        cmocka_unit_test(error_format_shows_caret),
        cmocka_unit_test(limits_fail_without_building),
        cmocka_unit_test(sets_are_exact_over_all_code_points),
        cmocka_unit_test(ill_formed_utf8_is_never_accepted),
        cmocka_unit_test(negated_classes_with_non_ascii),
        cmocka_unit_test(lazy_and_possessive_are_greedy),
        cmocka_unit_test(flags_parse),
        cmocka_unit_test(literal_specs),
        cmocka_unit_test(cpset_operations),
        cmocka_unit_test(golden_dumps),
        cmocka_unit_test(golden_files),
        cmocka_unit_test(empty_languages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
