/*
 * Unit tests of the GBNF / EBNF / regex front ends (ir/ebnf_parse.c,
 * ir/ebnf_regex.c): what each construct parses to (through the
 * printer's canonical text), every error with its code, message, line and
 * column, the limits, the eight llama.cpp grammars of ../shared, the
 * print -> parse round trip, and allocation failures.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ebnf_parse.h"
#include "lexer/lexer.h"

static gm_status parse(gm_mem *m, gm_ebnf *g, const char *text, gm_ebnf_dialect d, gm_error *err)
{
    gm_ebnf_init(g, m);
    gm_error_clear(err);
    return gm_ebnf_parse(g, "t.gbnf", text, strlen(text), d, NULL, err);
}

/* Parses text and returns its printed form (malloc'ed), failing the test on an error. */
static char *canon(const char *text, gm_ebnf_dialect d)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_error err;
    gm_status st = parse(&m, &g, text, d, &err);
    if (st != GM_OK)
        fail_msg("parsing %s: %s", text, err.message);
    gm_strbuf b;
    gm_strbuf_init(&b, &m);
    gm_ebnf_print(&g, &b);
    assert_false(b.failed);
    char *s = strdup(gm_strbuf_str(&b));
    gm_strbuf_free(&b);
    gm_ebnf_free(&g);
    assert_int_equal(atomic_load(&m.used), 0);
    return s;
}

typedef struct form_case {
    gm_ebnf_dialect d;
    const char *text;
    const char *printed;
} form_case;

#define G GM_EBNF_GBNF
#define X GM_EBNF_XGRAMMAR

static const form_case forms[] = {
    /* literals and escapes */
    {G, "root ::= \"ab\" \"\"", "root ::= \"ab\" \"\"\n"},
    {G, "root ::= \"\\x41\\u00e9\\U0001F600\\t\\n\\r\\\\\\\"\\[\\]\\-\"",
     "root ::= \"A\\u00E9\\U0001F600\\t\\n\\r\\\\\\\"[]-\"\n"},
    {G, "root ::= \"\\x41B\"", "root ::= \"AB\"\n"},     /* GBNF: \x takes two digits */
    {X, "root ::= \"\\x41B\"", "root ::= \"\\u041B\"\n"}, /* XGrammar: as many as there are */
    {X, "root ::= \"\\'\\?\\a\\b\\f\\v\\0\\e\"", "root ::= \"'?\\u0007\\u0008\\u000C\\u000B\\u0000\\u001B\"\n"},
    {X, "root ::= \"a\\/b\"", "root ::= \"a/b\"\n"},
    {G, "root ::= \"é\"", "root ::= \"\\u00E9\"\n"},
    {G, "root ::= \"a\nb\"", "root ::= \"a\\nb\"\n"},    /* llama.cpp reads raw newlines in literals */
    /* classes */
    {G, "root ::= [a-z0-9_] [^\"\\\\\\x7F\\x00-\\x1F]", "root ::= [0-9_a-z] [^\\u0000-\\u001F\\\"\\\\\\u007F]\n"},
    {G, "root ::= [-a] [a-] [--/] [\\]\\[]", "root ::= [\\-a] [\\-a] [\\--/] [\\[\\]]\n"},
    {G, "root ::= [] | \"x\"", "root ::= [] | \"x\"\n"},
    {G, "root ::= [^] .", "root ::= [^] [^]\n"},
    {G, "root ::= [\\uD800-\\uDFFF] | \"a\"", "root ::= [\\uD800-\\uDFFF] | \"a\"\n"},
    {X, "root ::= [\\^\\$\\.\\*\\+\\?\\(\\)\\{\\}\\|\\/]", "root ::= [$(-+./?^{-}]\n"},
    {G, "root ::= [ぁ-ゟ]", "root ::= [\\u3041-\\u309F]\n"},
    /* grouping, alternatives, postfix */
    {G, "root ::= ( \"a\" | ) \"b\"* \"c\"+ \"d\"? \"e\"{2} \"f\"{2,} \"g\"{2,3} \"h\"{ 0 , 4 }",
     "root ::= (\"a\" | \"\") \"b\"* \"c\"+ \"d\"? \"e\"{2} \"f\"{2,} \"g\"{2,3} \"h\"{0,4}\n"},
    {G, "root ::= \"x\"{2}{3} \"y\"*?", "root ::= (\"x\"{2}){3} (\"y\"*)?\n"},
    {G, "root ::= ()", "root ::= \"\"\n"},
    {G, "root ::=", "root ::= \"\"\n"},
    {G, "root ::= | \"a\"", "root ::= \"\" | \"a\"\n"},
    {G, "root ::= [a-z]{0,65536}", "root ::= [a-z]{0,65536}\n"},
    /* rules, newlines, comments */
    {G, "# c\nroot ::= a b # c\n\n a ::= \"a\" |\n \"A\"\nb ::= (\n\"b\" # c\n)\n",
     "root ::= a b\na ::= \"a\" | \"A\"\nb ::= \"b\"\n"},
    {G, "root ::=\n  \"a\"\r\nx-y_Z9 ::= root\r\n", "root ::= \"a\"\nx-y_Z9 ::= root\n"},
    {X, "root ::= a\n  b\nb ::= \"b\"\n  | \"c\" a ::= \"a\"", "root ::= a b\nb ::= \"b\" | \"c\"\na ::= \"a\"\n"},
    /* XGrammar's rule attributes (note [rule attributes] in ir/ebnf_parse.c) */
    {X, "root ::= r \">\"\nr [ max_tokens = 7 ] ::= [a-z]*", "root ::= r \">\"\nr[max_tokens=7] ::= [a-z]*\n"},
    {X, "root[max_tokens=2147483647] ::= \"a\"", "root[max_tokens=2147483647] ::= \"a\"\n"},
    {X, "root[temperature=0.6, max_tokens=2] ::= [a-z]*", "root[max_tokens=2, temperature=0.6] ::= [a-z]*\n"},
    {X, "root ::= v\nv[temperature=1e-2] ::= \"x\"", "root ::= v\nv[temperature=0.01] ::= \"x\"\n"},
    {X, "root ::= v\nv[temperature=0] ::= \"x\"", "root ::= v\nv[temperature=0] ::= \"x\"\n"},
    /* note [rule max_chars]: the body rewritten, a fixed point */
    {X, "root ::= r \">\"\nr[max_chars=2] ::= t\nt ::= (\"\\n\" | [^\\n])*", "root ::= r \">\"\nr[max_chars=2] ::= (\"\\n\" | [^\\n]){0,2}\nt ::= (\"\\n\" | [^\\n])*\n"},
    {X, "root[max_chars=3] ::= [a-z]{4,9}", "root[max_chars=3] ::= [a-z]{4}\n"},
    /* note [max_chars on regular bodies]: printed as written (its state rules are not) */
    {X, "root ::= r \">\"\nr[max_chars=2] ::= \"x\" [a]* \"y\"", "root ::= r \">\"\nr[max_chars=2] ::= \"x\" [a]* \"y\"\n"},
    {X, "root ::= r\nr[max_chars=3] ::= \"a\" t\nt[max_chars=2] ::= (\"b\" | \"cd\")*", "root ::= r\nr[max_chars=3] ::= \"a\" t\nt[max_chars=2] ::= (\"b\" | \"cd\")*\n"},
    {X, "root[max_chars=0] ::= [a-z]*", "root[max_chars=0] ::= [a-z]{0}\n"},
    {X, "root[max_chars=2, max_tokens=5] ::= \"ab\" | \"c\"", "root[max_tokens=5, max_chars=2] ::= \"ab\" | \"c\"\n"},
    /* special tokens */
    {G, "root ::= <|channel|> \"x\" <think>", "root ::= <|channel|> \"x\" <think>\n"},
    {X, "root ::= <\"[INST]\"> <\"\\xFF\">", "root ::= <\"[INST]\"> <\"\\xFF\">\n"},
    /* XGrammar additions */
    {X, "root ::= \"a\" b (= \"c\" [0-9])\nb ::= \"b\"", "root ::= \"a\" b (= \"c\" [0-9])\nb ::= \"b\"\n"},
    {X, "root ::= %\"\\xFF\\x00a\" %[\\x80-\\xBF] %[^\\x00-\\x7F]",
     "root ::= %\"\\xFF\\x00a\" %[\\x80-\\xBF] %[^\\x00-\\x7F]\n"},
    {X, "root ::= Regex(\"[a-c]+x?\") \"!\"", "root ::= [a-c]+ \"x\"? \"!\"\n"},
    {X, "root ::= Regex ( \"ab|c{2}\" )", "root ::= \"ab\" | \"c\"{2}\n"},
    {X, "root ::= Until(\"<a>\", %\"\\xFF\") \"x\" | Until(\"</b>\",\"<c>\" , end = 1) \"y\"",
     "root ::= Until(\"<a>\", %\"\\xFF\") \"x\" | Until(\"</b>\", \"<c>\", end=1) \"y\"\n"},
    {X, "root ::= Until(\"<a>\", bytes = 1) \"x\" | Until(\"</b>\", end=0, max_chars=7)",
     "root ::= Until(\"<a>\", bytes=1) \"x\" | Until(\"</b>\", end=0, max_chars=7)\n"},
    {X, "root ::= Until(\"<a>\", \"b\", end = 0, before = 1) \"<a>\"",
     "root ::= Until(\"<a>\", \"b\", end=0, before=1) \"<a>\"\n"},
};

static void test_forms(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        char *s = canon(forms[i].text, forms[i].d);
        if (strcmp(s, forms[i].printed) != 0)
            fail_msg("case %zu: %s\nprinted:  %swanted:   %s", i, forms[i].text, s,
                     forms[i].printed);
        free(s);
    }
}

typedef struct err_case {
    gm_ebnf_dialect d;
    const char *text;
    gm_status code;
    const char *needle;
    uint32_t line, column;
} err_case;

static const err_case errors[] = {
    {G, "", GM_ERR_SYNTAX, "the grammar is empty", 1, 1},
    {G, "  # only a comment\n\n", GM_ERR_SYNTAX, "the grammar is empty", 3, 1},
    {G, "root ::= \"a\"\nroot ::= \"b\"", GM_ERR_GRAMMAR, "rule 'root' is defined twice (first at line 1)", 2, 1},
    {G, "root ::= a b\na ::= \"x\"", GM_ERR_GRAMMAR, "rule 'b' is not defined", 1, 12},
    {G, "start ::= \"x\"", GM_ERR_GRAMMAR, "the grammar has no rule 'root'", 0, 0},
    {G, "root ::= \"abc", GM_ERR_SYNTAX, "unterminated string literal", 1, 10},
    {X, "root ::= \"abc\n\"", GM_ERR_SYNTAX, "unterminated string literal", 1, 10},
    {G, "root ::= [abc", GM_ERR_SYNTAX, "unterminated character class", 1, 10},
    {X, "root ::= [a\n]", GM_ERR_SYNTAX, "unterminated character class", 1, 10},
    {G, "root ::= \"\\q\"", GM_ERR_SYNTAX, "bad escape \\q", 1, 11},
    {G, "root ::= \"\\'\"", GM_ERR_SYNTAX, "bad escape \\'", 1, 11},
    {G, "root ::= \"\\x4\"", GM_ERR_SYNTAX, "bad escape \\x: expected 2 hex digits", 1, 11},
    {G, "root ::= [\\u12]", GM_ERR_SYNTAX, "bad escape \\u: expected 4 hex digits", 1, 11},
    {G, "root ::= \"\\U00110000\"", GM_ERR_SYNTAX, "code point \\U00110000 is past U+10FFFF", 1, 11},
    {X, "root ::= \"\\xFFFFFFFFFFFF\"", GM_ERR_SYNTAX, "is past U+10FFFF", 1, 11},
    {G, "root ::= \"\\uD800\"", GM_ERR_SYNTAX, "surrogate code point U+D800", 1, 11},
    {G, "root ::= [z-a]", GM_ERR_SYNTAX, "reversed range z-a", 1, 11},
    {G, "root ::= \"a\"{3,2}", GM_ERR_SYNTAX, "bad repetition {3,2}: the minimum is larger", 1, 13},
    {G, "root ::= \"a\"{2", GM_ERR_SYNTAX, "expected ',' or '}', found the end", 1, 15},
    {G, "root ::= \"a\"{x}", GM_ERR_SYNTAX, "expected a number in {...}", 1, 14},
    {G, "root ::= \"a\"{0,1000001}", GM_ERR_LIMIT, "repetition count 1000001 is larger than 1000000", 1, 16},
    {G, "root ::= \"a\"{99999999999999999999999}", GM_ERR_LIMIT, "is larger than", 1, 14},
    {G, "root \"a\"", GM_ERR_SYNTAX, "expected '::=' after the rule name, found '\"'", 1, 6},
    {G, "root := \"a\"", GM_ERR_SYNTAX, "expected '::=' after the rule name", 1, 6},
    {G, "::= \"a\"", GM_ERR_SYNTAX, "expected a rule name, found ':'", 1, 1},
    {G, "root ::= * \"a\"", GM_ERR_SYNTAX, "nothing to repeat before '*'", 1, 10},
    {G, "root ::= ( \"a\" | *)", GM_ERR_SYNTAX, "nothing to repeat before '*'", 1, 18},
    {G, "root ::= \"a\" )", GM_ERR_SYNTAX, "unmatched ')'", 1, 14},
    {G, "root ::= (\"a\"", GM_ERR_SYNTAX, "expected ')' to close the '(' at line 1, found the end", 1, 14},
    {G, "root ::= \"a\"\n  \"b\"", GM_ERR_SYNTAX, "expected a rule name, found '\"'", 2, 3},
    {G, "root ::= \"a\" ; \"b\"", GM_ERR_SYNTAX, "expected a newline after the rule", 1, 14},
    {G, "root ::= \"a\"\x01", GM_ERR_SYNTAX, "found byte 0x01", 1, 13},
    {G, "root ::= \"a\xff\"", GM_ERR_SYNTAX, "invalid UTF-8 (byte 0xFF)", 1, 12},
    {G, "root ::= [\xc3]", GM_ERR_SYNTAX, "invalid UTF-8 (byte 0xC3)", 1, 11},
    {G, "# caf\xe9\nroot ::= \"a\"", GM_ERR_SYNTAX, "invalid UTF-8", 1, 6},
    {G, "root ::= root", GM_ERR_GRAMMAR, "rule 'root' derives no finite string", 1, 1},
    {G, "root ::= \"x\" a\na ::= \"y\" a | a", GM_ERR_GRAMMAR, "rule 'a' derives no finite string", 2, 1},
    {G, "root ::= [] \"x\"", GM_ERR_GRAMMAR, "language of the root rule 'root' is empty", 1, 1},
    {G, "root ::= <[12]>", GM_ERR_UNSUPPORTED, "token ids <[id]> are not supported", 1, 10},
    {G, "root ::= !<x>", GM_ERR_UNSUPPORTED, "negated tokens", 1, 10},
    {G, "root ::= <abc", GM_ERR_SYNTAX, "unterminated special token", 1, 10},
    {G, "root ::= %\"a\"", GM_ERR_SYNTAX, "found '%'", 1, 10},  /* byte strings are EBNF-only */
    {G, "root ::= \"a\" (= \"b\")", GM_ERR_SYNTAX, "found '='", 1, 15},
    {X, "root ::= (\"a\" (= \"b\"))", GM_ERR_SYNTAX, "lookahead assertion (= ...) may only end", 1, 15},
    {X, "root ::= \"a\" (= \"b\") (= \"c\")", GM_ERR_SYNTAX, "at most one lookahead", 1, 22},
    {X, "root ::= [\\d]", GM_ERR_UNSUPPORTED, "class escape \\d is not supported", 1, 11},
    {X, "root ::= %\"\\u0041\"", GM_ERR_SYNTAX, "bad escape \\u in a byte string", 1, 12},
    {X, "root ::= %\"\xc3\xa9\"", GM_ERR_SYNTAX, "ASCII characters and \\xNN escapes only", 1, 12},
    {X, "root ::= TagDispatch((\"<a>\", b))", GM_ERR_GRAMMAR, "rule 'b' is not defined", 1, 30},
    {X, "root ::= Token()", GM_ERR_SYNTAX, "Token(...) needs at least one token id", 1, 10},
    {X, "root ::= Token(1, x)", GM_ERR_SYNTAX, "Token(...) takes token ids", 1, 19},
    {X, "root[capture=\"\"] ::= \"a\"", GM_ERR_SYNTAX, "capture name must not be empty", 1, 15},
    {X, "root[capture=\"a b\"] ::= \"a\"", GM_ERR_SYNTAX, "capture name must only contain", 1, 16},
    {X, "root[capture, capture] ::= \"a\"", GM_ERR_SYNTAX, "more than once", 1, 15},
    {X, "root[capture, stop] ::= \"a\"", GM_ERR_UNSUPPORTED, "rule attribute stop of rule 'root' is not supported", 1, 15},
    {X, "root[lazy, lazy] ::= \"a\"", GM_ERR_SYNTAX, "lazy attribute is specified more than once", 1, 12},
    {X, "root[foo=3] ::= \"a\"", GM_ERR_UNSUPPORTED, "rule attribute foo of rule 'root' is not supported", 1, 6},
    {X, "root ::= r\nr[max_chars=3] ::= \"x\" r \"y\" | \"z\"", GM_ERR_UNSUPPORTED, "rule 'r': max_chars is supported on a rule whose body is a regular language", 2, 1},
    {X, "root[max_chars=2000000] ::= [a]*", GM_ERR_LIMIT, "rule 'root': max_chars on a repetition is at most 1000000", 1, 1},
    {X, "root[max_chars=1, max_chars=1] ::= [a]*", GM_ERR_SYNTAX, "max_chars is given twice", 1, 19},
    {X, "root[max_tokens=0] ::= \"a\"", GM_ERR_SYNTAX, "max_tokens must be positive", 1, 17},
    {X, "root[max_tokens=2147483648] ::= \"a\"", GM_ERR_LIMIT, "max_tokens above 2147483647", 1, 17},
    {X, "root[max_tokens=1, max_tokens=2] ::= \"a\"", GM_ERR_SYNTAX, "max_tokens is given twice for rule 'root'", 1, 20},
    {X, "root[max_tokens] ::= \"a\"", GM_ERR_SYNTAX, "expected '=' after max_tokens", 1, 16},
    {X, "root[max_tokens=2 ::= \"a\"", GM_ERR_SYNTAX, "expected ',' or ']'", 1, 19},
    {X, "root[] ::= \"a\"", GM_ERR_SYNTAX, "expected an attribute name", 1, 6},
    {X, "root[temperature=-0.1] ::= \"a\"", GM_ERR_SYNTAX, "temperature must be a finite non-negative number", 1, 18},
    {X, "root[temperature=1e999] ::= \"a\"", GM_ERR_SYNTAX, "temperature must be a finite non-negative number", 1, 18},
    {X, "root[temperature=abc] ::= \"a\"", GM_ERR_SYNTAX, "expected a number after temperature=", 1, 18},
    {X, "root[temperature=1, temperature=2] ::= \"a\"", GM_ERR_SYNTAX, "temperature is given twice", 1, 21},
    {X, "root ::= Regex(\"a(b\")", GM_ERR_SYNTAX, "in Regex(...) at column 2 of the pattern: missing ), unterminated subpattern", 1, 16},
    {X, "root ::= Regex(\"a\\\\1\")", GM_ERR_UNSUPPORTED, "backreference", 1, 16},
    {X, "root ::= Regex(\"a\", foo=true)", GM_ERR_SYNTAX, "does not support the named argument foo", 1, 21},
    {X, "root ::= Regex(\"a\", json_string=1)", GM_ERR_SYNTAX, "json_string must be a boolean", 1, 33},
    {X, "root ::= Regex(\"a\", flags=\"m\")", GM_ERR_SYNTAX, "flag 'm' is not supported", 1, 27},
    {X, "root ::= Regex(\"a\", \"b\")", GM_ERR_SYNTAX, "exactly one string argument", 1, 21},
    {X, "root ::= Regex", GM_ERR_SYNTAX, "expected '(' after Regex", 1, 15},
    {X, "root ::= Until(\"a\", end=1)", GM_ERR_SYNTAX, "Until(...) has 1 strings, so end=1 names none", 1, 25},
    {X, "root ::= Until(\"\")", GM_ERR_SYNTAX, "may not be empty", 1, 16},
    {X, "root ::= Until(end=0)", GM_ERR_SYNTAX, "expected a string literal in Until(...)", 1, 16},
    {X, "root ::= Until(\"ab\", \"a\", end=0)", GM_ERR_GRAMMAR, "language of the root rule 'root' is empty", 1, 1},
    {X, "root ::= Until(\"a\", ends=0)", GM_ERR_SYNTAX, "takes end=, bytes=, max_chars= and before=", 1, 21},
    {X, "root ::= Until(\"a\", before=1)", GM_ERR_SYNTAX, "before=1 needs end=", 1, 29},
    {X, "root ::= Until(\"a\", bytes=1, max_chars=2)", GM_ERR_SYNTAX, "max_chars counts characters", 1, 41},
    {X, "root ::= Until(%\"\\xFF\", end=0)", GM_ERR_GRAMMAR, "language of the root rule 'root' is empty", 1, 1},
};

static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++) {
        const err_case *c = &errors[i];
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_ebnf g;
        gm_error err;
        gm_status st = parse(&m, &g, c->text, c->d, &err);
        gm_ebnf_free(&g);
        assert_int_equal(atomic_load(&m.used), 0);
        if (st != c->code || !strstr(err.message, c->needle) || err.line != c->line ||
            err.column != c->column)
            fail_msg("case %zu: %s\n got %d at %u:%u: %s\nwant %d at %u:%u: ...%s...", i, c->text,
                     st, err.line, err.column, err.message, c->code, c->line, c->column,
                     c->needle);
        if (c->line && !strstr(err.message, "t.gbnf:"))
            fail_msg("case %zu: no file name in %s", i, err.message);
    }
}

static void test_caret(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_error err;
    assert_int_equal(parse(&m, &g, "root ::= x\nx ::= [b-a]\n", G, &err), GM_ERR_SYNTAX);
    assert_string_equal(err.message,
                        "t.gbnf:2:8: reversed range b-a in a character class\n  x ::= [b-a]\n         ^");
    gm_ebnf_free(&g);
}

static void test_start_option(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_grammar_options opts;
    gm_grammar_options_init_defaults(&opts);
    opts.start = "doc";
    gm_error err;
    const char *text = "doc ::= item+\nitem ::= \"i\"\n";
    assert_int_equal(gm_ebnf_parse(&g, NULL, text, strlen(text), G, &opts, &err), GM_OK);
    assert_string_equal(g.rules[g.root].name, "doc");
    assert_string_equal(g.rules[1].loc.file, "<grammar>");
    assert_int_equal(g.rules[1].loc.line, 2);
    gm_ebnf_free(&g);
}

static void test_depth(void **state)
{
    (void)state;
    size_t n = GM_EBNF_MAX_DEPTH;
    char *text = malloc(2 * n + 32);
    strcpy(text, "root ::= ");
    size_t k = strlen(text);
    for (size_t i = 0; i < n; i++)
        text[k++] = '(';
    text[k++] = '"';
    text[k++] = 'a';
    text[k++] = '"';
    for (size_t i = 0; i < n; i++)
        text[k++] = ')';
    text[k] = 0;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_error err;
    assert_int_equal(parse(&m, &g, text, G, &err), GM_OK);
    gm_ebnf_free(&g);
    /* one more level */
    memmove(text + 10, text + 9, k - 9 + 1);
    text[9] = '(';
    strcat(text, ")");
    assert_int_equal(parse(&m, &g, text, G, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "parentheses nested more than 1000 deep"));
    assert_int_equal(err.column, 9 + GM_EBNF_MAX_DEPTH + 1);
    gm_ebnf_free(&g);
    free(text);
}

static void test_input_limit(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_grammar_options opts;
    gm_grammar_options_init_defaults(&opts);
    opts.limits.max_input_bytes = 8;
    gm_error err;
    assert_int_equal(gm_ebnf_parse(&g, "big.gbnf", "root ::= \"abc\"", 14, G, &opts, &err),
                     GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "big.gbnf: the grammar has 14 bytes, more than the limit of 8"));
    gm_ebnf_free(&g);
}

/* In GBNF, llama.cpp's <text> keeps any text but '>' (a quote too). */
static void test_tokens(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_error err;
    assert_int_equal(parse(&m, &g, "root ::= <\"x\"> <a b>", G, &err), GM_OK);
    const gm_ex *t = &g.nodes[g.kids[g.nodes[g.rules[g.root].body].first]];
    assert_int_equal(t->kind, GM_EX_TOKEN);
    assert_int_equal(t->count, 5);
    assert_memory_equal(g.bytes + t->first, "<\"x\">", 5);
    gm_ebnf_free(&g);
}

/* ---- the eight llama.cpp grammars, and print -> parse round trips ---- */

static const char *const gbnf_files[] = {"arithmetic", "c", "chess", "english",
                                          "japanese", "json", "json_arr", "list"};

/* parse(text) -> print -> parse -> print: the two prints are equal. */
static void round_trip(const char *name, const char *text, size_t len, gm_ebnf_dialect d)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_error err;
    gm_status st = gm_ebnf_parse(&g, name, text, len, d, NULL, &err);
    if (st != GM_OK)
        fail_msg("%s: %s", name, err.message);
    gm_strbuf p1, p2;
    gm_strbuf_init(&p1, &m);
    gm_strbuf_init(&p2, &m);
    gm_ebnf_print(&g, &p1);
    gm_ebnf_free(&g);
    gm_ebnf_init(&g, &m);
    st = gm_ebnf_parse(&g, name, gm_strbuf_str(&p1), p1.n, GM_EBNF_XGRAMMAR, NULL, &err);
    if (st != GM_OK)
        fail_msg("%s printed:\n%s\ndoes not parse: %s", name, gm_strbuf_str(&p1), err.message);
    gm_ebnf_print(&g, &p2);
    if (strcmp(gm_strbuf_str(&p1), gm_strbuf_str(&p2)) != 0) {
        FILE *f1 = fopen("ebnf_rt1.txt", "w"), *f2 = fopen("ebnf_rt2.txt", "w");
        fputs(gm_strbuf_str(&p1), f1);
        fputs(gm_strbuf_str(&p2), f2);
        fclose(f1);
        fclose(f2);
        fail_msg("%s: print is not a fixed point:\n%s\n----\n%s", name, gm_strbuf_str(&p1),
                 gm_strbuf_str(&p2));
    }
    for (size_t i = 0; i < p1.n; i++)
        assert_true((unsigned char)p1.s[i] < 0x80);
    gm_strbuf_free(&p1);
    gm_strbuf_free(&p2);
    gm_ebnf_free(&g);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void test_gbnf_files(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof gbnf_files / sizeof *gbnf_files; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "grammars/gbnf/%s.gbnf", gbnf_files[i]);
        size_t len;
        char *text = gm_test_read_file(gm_test_shared_path(rel), &len);
        round_trip(rel, text, len, GM_EBNF_GBNF);
        free(text);
    }
}

static void test_round_trip_forms(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++)
        round_trip("form", forms[i].text, strlen(forms[i].text), forms[i].d);
}

/* The seeds of fuzz_gbnf parse (byte 0 picks the front end as the harness does). */
static void test_fuzz_seeds(void **state)
{
    (void)state;
    static const char *const seeds[] = {"arithmetic", "c", "chess", "english", "japanese", "json",
                                        "json_arr", "list", "ebnf_features", "gbnf_features",
                                        "regex"};
    for (size_t i = 0; i < sizeof seeds / sizeof *seeds; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "tests/fuzz/corpus/gbnf/%s", seeds[i]);
        size_t len;
        char *data = gm_test_read_file(gm_test_src_path(rel), &len);
        assert_true(len > 1);
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_ebnf g;
        gm_ebnf_init(&g, &m);
        gm_error err;
        int mode = data[0] & 3;
        gm_status st = mode == 2 ? gm_ebnf_from_regex(&g, rel, data + 1, len - 1, 0, NULL, &err)
                                 : gm_ebnf_parse(&g, rel, data + 1, len - 1,
                                                 mode == 0 ? G : X, NULL, &err);
        if (st != GM_OK)
            fail_msg("seed %s: %s", seeds[i], err.message);
        gm_ebnf_free(&g);
        free(data);
    }
}

/* ---- regex ---- */

static void test_regex(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf g;
    gm_ebnf_init(&g, &m);
    gm_error err;
    const char *re = "(?i)é[0-9]{2,}|\\d?|x*";
    assert_int_equal(gm_ebnf_from_regex(&g, "r.regex", re, strlen(re), 0, NULL, &err), GM_OK);
    gm_strbuf b;
    gm_strbuf_init(&b, &m);
    gm_ebnf_print(&g, &b);
    assert_non_null(strstr(gm_strbuf_str(&b), "root ::= [\\u00C9\\u00E9] [0-9]{2,} | "));
    assert_non_null(strstr(gm_strbuf_str(&b), " | [Xx]*\n"));
    gm_strbuf_free(&b);
    gm_ebnf_free(&g);

    gm_ebnf_init(&g, &m);
    re = "ab(c";
    assert_int_equal(gm_ebnf_from_regex(&g, "r.regex", re, strlen(re), 0, NULL, &err), GM_ERR_SYNTAX);
    assert_string_equal(err.message,
                        "r.regex:1:3: missing ), unterminated subpattern\n  ab(c\n    ^");
    gm_ebnf_free(&g);

    gm_ebnf_init(&g, &m);
    /* above the IR's bound (under the default limit a count may reach it: ebnf_regex.c) */
    re = "a{2000000}";
    assert_int_equal(gm_ebnf_from_regex(&g, NULL, re, strlen(re), 0, NULL, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "<regex>:1:"));
    gm_ebnf_free(&g);

    /* a pattern matching nothing is an empty language */
    gm_ebnf_init(&g, &m);
    re = "[^\\x00-\\U0010FFFF]";
    assert_int_equal(gm_ebnf_from_regex(&g, NULL, re, strlen(re), 0, NULL, &err), GM_ERR_GRAMMAR);
    gm_ebnf_free(&g);

    /* gm_ebnf_add_regex into an existing grammar, with flags */
    gm_ebnf_init(&g, &m);
    uint32_t node;
    assert_int_equal(gm_ebnf_add_regex(&g, "a.b", 3, GM_RE_DOTALL, NULL, &node, &err), GM_OK);
    assert_int_equal(g.nodes[node].kind, GM_EX_SEQ);
    assert_int_equal(gm_ebnf_add_regex(&g, "a)", 2, 0, NULL, &node, &err), GM_ERR_SYNTAX);
    assert_int_equal(err.column, 2);
    assert_int_equal(node, GM_EX_NONE);
    gm_ebnf_free(&g);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* ---- allocation failures ---- */

static void test_alloc_failures(void **state)
{
    (void)state;
    size_t len;
    char *text = gm_test_read_file(gm_test_shared_path("grammars/gbnf/c.gbnf"), &len);
    static const char extra[] = "root ::= Regex(\"[a-z]+(b|c)*\") %\"\\xff\" <|x|> <\"y\"> (= \"z\")";
    for (int which = 0; which < 2; which++) {
        bool completed = false;
        for (unsigned long n = 1; n < 100000 && !completed; n++) {
            gm_test_failing_alloc fa = {.fail_at = n};
            gm_allocator a = gm_test_failing_allocator(&fa);
            gm_mem m;
            gm_mem_init(&m, &a, 0);
            gm_ebnf g;
            gm_ebnf_init(&g, &m);
            gm_error err;
            gm_status st = which == 0
                               ? gm_ebnf_parse(&g, "c.gbnf", text, len, G, NULL, &err)
                               : gm_ebnf_parse(&g, "x", extra, strlen(extra), X, NULL, &err);
            gm_ebnf_free(&g);
            if (st != GM_OK && st != GM_ERR_NOMEM)
                fail_msg("allocation %lu: %s", n, err.message);
            assert_int_equal(fa.live, 0);
            completed = fa.count < n;
            if (completed)
                assert_int_equal(st, GM_OK);
        }
        assert_true(completed);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_caret),
        cmocka_unit_test(test_start_option),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_input_limit),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_gbnf_files),
        cmocka_unit_test(test_round_trip_forms),
        cmocka_unit_test(test_fuzz_seeds),
        cmocka_unit_test(test_regex),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
