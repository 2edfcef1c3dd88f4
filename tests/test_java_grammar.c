/*
 * The bundled Java 17 grammar (grammars/java.lark): its LALR(1) tables have
 * no conflict; it accepts the constructs of tests/java/valid/ (files that
 * javac 17 compiles) and the Java files of the shared corpus; it rejects the
 * snippets of tests/java/invalid.txt where javac does, at the expected place;
 * every tokenization of a run of closing `>` that maximal munch can produce
 * parses (note [java: closing type arguments]); literals lex as one token of
 * the right terminal, malformed ones do not.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>

#include <cmocka.h>

#include "lexer/lexer.h"
#include "parser/bundled.h"
#include "parser/grammar.h"
#include "parser/lr.h"
#include "tests/testutil.h"

typedef struct java {
    gm_mem mem;
    gm_cfg *g;
    gm_lexer *lx;
    gm_lr_table *t;
} java;

static java J;

static int setup(void **state)
{
    (void)state;
    gm_mem_init(&J.mem, NULL, 0);
    gm_error err;
    size_t len = 0;
    const char *text = gm_bundled_grammar("java", &len);
    assert_non_null(text);
    if (gm_grammar_load(&J.mem, "java.lark", text, len, NULL, &J.g, &err) != GM_OK)
        fail_msg("java.lark: %s", err.message);
    gm_limits limits;
    gm_limits_init_defaults(&limits);
    if (gm_lexer_build(&J.mem, J.g->terminals, J.g->nterminals, &limits, NULL, NULL, &J.lx, &err) != GM_OK)
        fail_msg("java.lark lexer: %s", err.message);
    /* The default options make any conflict an error. */
    if (gm_lalr_build(&J.mem, J.g, NULL, &J.t, &err) != GM_OK)
        fail_msg("java.lark tables: %s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gm_lr_table_destroy(J.t);
    gm_lexer_destroy(J.lx);
    gm_cfg_destroy(J.g);
    assert_int_equal(atomic_load(&J.mem.used), 0);
    return 0;
}

typedef enum { PARSED, LEXICAL_ERROR, SYNTAX_ERROR } verdict;

typedef struct parse_run {
    gm_lr_node *top;
    size_t bad;              /* offset of the rejected lexeme */
    bool rejected;
} parse_run;

static gm_status on_lexeme(void *ud, const gm_lexeme *lx)
{
    parse_run *r = ud;
    if (J.g->terminals[lx->terminal].ignored)
        return GM_OK;
    gm_lr_node *next;
    gm_status st = gm_lr_feed(J.t, &J.mem, r->top, lx->terminal, &next);
    if (st == GM_ERR_REJECTED) {
        r->rejected = true;
        r->bad = lx->start;
        return st;
    }
    assert_int_equal(st, GM_OK);
    gm_lr_node_release(&J.mem, r->top);
    r->top = next;
    return GM_OK;
}

/* Lexes and parses text; *where is the offset of the error. */
static verdict parse(const char *text, size_t len, size_t *where)
{
    parse_run r = {gm_lr_stack_new(&J.mem), 0, false};
    assert_non_null(r.top);
    size_t off = 0;
    gm_error err;
    gm_status st = gm_lexer_run(J.lx, (const uint8_t *)text, len, on_lexeme, &r, &off, &err);
    verdict v = PARSED;
    if (r.rejected) {
        v = SYNTAX_ERROR;
        *where = r.bad;
    } else if (st != GM_OK) {
        v = LEXICAL_ERROR;
        *where = off;
    } else if (!gm_lr_accepts(J.t, r.top)) {
        v = SYNTAX_ERROR;
        *where = len;
    }
    gm_lr_node_release(&J.mem, r.top);
    return v;
}

static void line_col(const char *text, size_t off, unsigned *line, unsigned *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            ++*line;
            *col = 1;
        } else {
            ++*col;
        }
    }
}

static void expect_parses(const char *what, const char *text)
{
    size_t where = 0;
    verdict v = parse(text, strlen(text), &where);
    if (v != PARSED) {
        unsigned line, col;
        line_col(text, where, &line, &col);
        fail_msg("%s: %s error at %u:%u", what, v == LEXICAL_ERROR ? "lexical" : "syntax", line, col);
    }
}

static void test_tables(void **state)
{
    (void)state;
    print_message("java.lark: %u terminals, %u nonterminals, %u productions, %u LALR(1) states, no conflict\n",
                  J.g->nterminals, J.g->nnonterminals, J.g->nprods, J.t->nstates);
    assert_true(J.t->nstates > 1000);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .java file of dir parses; returns how many there were. */
static size_t parse_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("cannot open %s", dir);
    char *files[256];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".java"))
            files[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(files, n, sizeof *files, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        char *text = gm_test_read_file(path, NULL);
        expect_parses(path, text);
        free(text);
        free(files[i]);
    }
    return n;
}

static void test_valid_files(void **state)
{
    (void)state;
    assert_true(parse_dir(gm_test_src_path("tests/java/valid")) >= 1);
}

/* The Java files of the shared corpus: the files `gramask trace` decodes. */
static void test_shared_corpus(void **state)
{
    (void)state;
    char dir[2048];
    snprintf(dir, sizeof dir, "%s", gm_test_shared_path("corpus/java"));
    size_t n = parse_dir(dir);
    print_message("%zu files of the shared Java corpus parse\n", n);
    assert_true(n >= 20);
}

static void test_invalid_snippets(void **state)
{
    (void)state;
    char *all = gm_test_read_file(gm_test_src_path("tests/java/invalid.txt"), NULL);
    size_t count = 0;
    for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        unsigned want_line, want_col;
        char kind[16];
        char *tab = strchr(line, '\t');
        if (!tab || sscanf(line, "%u:%u %15s", &want_line, &want_col, kind) != 3)
            fail_msg("tests/java/invalid.txt: bad line: %s", line);
        char text[1024];
        snprintf(text, sizeof text, "%s\n", tab + 1);
        size_t where = 0;
        verdict v = parse(text, strlen(text), &where);
        if (v == PARSED)
            fail_msg("accepted: %s", tab + 1);
        unsigned l, c;
        line_col(text, where, &l, &c);
        const char *got = v == LEXICAL_ERROR ? "lexical" : "syntax";
        if (l != want_line || c != want_col || strcmp(got, kind))
            fail_msg("%s: %s error at %u:%u, expected %s at %u:%u", tab + 1, got, l, c, kind, want_line,
                     want_col);
        count++;
    }
    free(all);
    print_message("%zu invalid snippets rejected where expected\n", count);
    assert_true(count >= 50);
}

/* All ways to write n closing `>` characters as tokens `>`, `>>`, `>>>`
 * separated by spaces: the tokenizations maximal munch can produce. */
static void closers(int n, char *buf, size_t at, size_t cap, void (*fn)(const char *, int), int depth)
{
    if (n == 0) {
        buf[at] = '\0';
        fn(buf, depth);
        return;
    }
    for (int k = 1; k <= 3 && k <= n; k++) {
        size_t p = at;
        if (p > 0 && p + 1 < cap)
            buf[p++] = ' ';
        for (int i = 0; i < k && p + 1 < cap; i++)
            buf[p++] = '>';
        closers(n - k, buf, p, cap, fn, depth);
    }
}

/* The opening part of a type nested `levels` deep, ending in T: plain
 * (`List<Map<String, T`) or with wildcards (`List<? extends Map<?, ? super T`). */
static void open_type(char *buf, size_t cap, int levels, bool wild)
{
    buf[0] = '\0';
    for (int i = 0; i < levels; i++) {
        const char *part = wild ? (i % 2 ? "Map<?, ? super " : "List<? extends ") : (i % 2 ? "Map<String, " : "List<");
        strncat(buf, part, cap - strlen(buf) - 1);
    }
    strncat(buf, "T", cap - strlen(buf) - 1);
}

static unsigned long closing_runs;

/* Types closed by `close` (depth `>` characters) wherever a type may end.
 * A form's own `<` (explicit type arguments, type parameters) is one level. */
static void check_closers(const char *close, int depth)
{
    static const struct {
        const char *form;
        int own;                 /* levels opened by the form itself */
        bool wild;
    } forms[] = {
        {"class A { %s%s f; }", 0, false},
        {"class A { %s%s f; }", 0, true},
        {"class A { void m() { %s%s v = null; } }", 0, true},
        {"class A { Object o = (%s%s) null; }", 0, true},
        {"class A { Object o = (%s%s[]) null; }", 0, false},
        {"class A { Object o = (%s%s & Runnable) null; }", 0, false},
        {"class A { void m(%s%s... x) {} }", 0, true},
        {"class A { Object o = (%s%s x) -> x; }", 0, false},
        {"class A { boolean b = o instanceof %s%s; }", 0, true},
        {"class A { boolean b = o instanceof %s%s v; }", 0, false},
        {"class A { Object o = new %s%s(); }", 0, false},
        {"class A { Object o = new %s%s[1]; }", 0, true},
        {"class A extends %s%s {}", 0, false},
        {"class A { Object o = %s%s::size; }", 0, false},
        {"class A { Object o = f(%s%s::size, a < b, c > d); }", 0, true},
        {"class A { Object o = %s%s[]::new; }", 0, true},
        {"class A { Object o = Collections.<%s%s emptyList(); }", 1, false},
        {"class A<X extends %s%s {}", 1, true},
        {"class A { <X extends Comparable<? super %s%s void m() {} }", 2, false},
    };
    char open[512], text[2048];
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        int levels = depth - forms[i].own;
        if (levels < 0)
            continue;
        open_type(open, sizeof open, levels, forms[i].wild);
        snprintf(text, sizeof text, forms[i].form, open, close);
        expect_parses(text, text);
        closing_runs++;
    }
    /* One `>` too many, or one too few, is an error. */
    size_t where;
    open_type(open, sizeof open, depth, false);
    snprintf(text, sizeof text, "class A { %s%s> f; }", open, close);
    if (parse(text, strlen(text), &where) == PARSED)
        fail_msg("accepted: %s", text);
    open_type(open, sizeof open, depth + 1, false);
    snprintf(text, sizeof text, "class A { %s%s f; }", open, close);
    if (parse(text, strlen(text), &where) == PARSED)
        fail_msg("accepted: %s", text);
}

static void test_closing_type_arguments(void **state)
{
    (void)state;
    char buf[256];
    closing_runs = 0;
    for (int depth = 1; depth <= 7; depth++)
        closers(depth, buf, 0, sizeof buf, check_closers, depth);
    print_message("%lu declarations, casts, bounds and calls with every tokenization of their closing `>`\n",
                  closing_runs);
    assert_true(closing_runs > 1000);
}

typedef struct one_token {
    uint32_t terminal;
    size_t count;
} one_token;

static gm_status count_lexemes(void *ud, const gm_lexeme *lx)
{
    one_token *o = ud;
    o->terminal = lx->terminal;
    o->count++;
    return GM_OK;
}

/* The text lexes as exactly one lexeme of the terminal named `want`, or
 * (want NULL) not as one whole token. */
static void expect_token(const char *text, const char *want)
{
    one_token o = {0, 0};
    size_t off;
    gm_error err;
    gm_status st = gm_lexer_run(J.lx, (const uint8_t *)text, strlen(text), count_lexemes, &o, &off, &err);
    bool one = st == GM_OK && o.count == 1;
    if (want == NULL) {
        if (one)
            fail_msg("%s lexes as one %s", text, J.g->names[o.terminal]);
        return;
    }
    if (!one)
        fail_msg("%s: not one token (%s, %zu lexemes)", text, st == GM_OK ? "ok" : err.message, o.count);
    if (strcmp(J.g->names[o.terminal], want))
        fail_msg("%s lexes as %s, expected %s", text, J.g->names[o.terminal], want);
}

static void test_literals(void **state)
{
    (void)state;
    static const char *ints[] = {"0", "7", "123", "1_000_000", "9__9", "0x0", "0XFF", "0xdead_BEEF", "0777",
                                 "0_7", "00", "0b0", "0B1010_1010", "2147483648", "1L", "0x7fffffffffffffffL",
                                 "0b1l", "017L"};
    static const char *floats[] = {"1.", ".5", "1.5", "1e10", "1E+10", "1e-1_0", "1.5f", "2F", "3d", "4D",
                                   "1.5e3d", "09.5", "00.0", "1_0.0_1", "0x1p3", "0x1.8p3", "0X.8P-1f",
                                   "0xA.p0d", "0x1_0P1_0", "1e5F", ".0e0"};
    static const char *chars[] = {"'a'", "'\\n'", "'\\''", "'\"'", "'\\\\'", "'\\0'", "'\\77'", "'\\377'",
                                  "'\\s'", "'\\u0041'", "'\\uuu00e9'", "'\xc3\xa9'"};
    static const char *strings[] = {"\"\"", "\"abc\"", "\"a\\\"b\"", "\"\\t\\b\\n\\r\\f\\s\\'\\\"\\\\\"",
                                    "\"\\0\\12\\123\\400\"", "\"\\u00e9\"", "\"caf\xc3\xa9\""};
    static const char *blocks[] = {"\"\"\"\n\"\"\"", "\"\"\"  \t\nabc\"\"\"", "\"\"\"\na\"b\"\"c\\\"\"\"\n\"\"\"",
                                   "\"\"\"\r\nx\\\ny\"\"\"", "\"\"\"\n\\\"\"\"\"", "\"\"\"\n\"\"\n\"\"\""};
    static const char *idents[] = {"x", "$", "_x", "$x1", "x_", "caf\xc3\xa9", "\xce\xbb", "var", "when", "goto"};
    static const char *bad[] = {"0x", "1_", "0b", "0b2", "09", "1e", "1e+", "0x1.8", "0x1p", "1__", "1_.0", "0x_1",
                                "'ab'", "''", "'\\400'", "'\\q'", "\"a\\qb\"", "\"abc", "\"a\nb\"",
                                "\"\"\"abc\"\"\"", "\"\"\"\nabc\"\"", "_", "0_", "1.e"};
#define GROUP(cases, terminal) {cases, sizeof cases / sizeof *cases, terminal}
    static const struct {
        const char *const *cases;
        size_t n;
        const char *terminal; /* NULL: not one token */
    } groups[] = {GROUP(ints, "INTEGER_LITERAL"), GROUP(floats, "FLOATING_POINT_LITERAL"),
                  GROUP(chars, "CHARACTER_LITERAL"), GROUP(strings, "STRING_LITERAL"),
                  GROUP(blocks, "TEXT_BLOCK"),       GROUP(idents, "IDENTIFIER"),
                  GROUP(bad, NULL)};
#undef GROUP
    for (size_t k = 0; k < sizeof groups / sizeof *groups; k++)
        for (size_t i = 0; i < groups[k].n; i++)
            expect_token(groups[k].cases[i], groups[k].terminal);
    /* Keywords and contextual keywords are their own literal terminals. */
    expect_token("class", "\"class\"");
    expect_token("record", "\"record\"");
    expect_token("non", "\"non\"");
    expect_token(">>>", "\">>>\"");
    expect_token(">>>=", "\">>>=\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_valid_files),
        cmocka_unit_test(test_shared_corpus),
        cmocka_unit_test(test_invalid_snippets),
        cmocka_unit_test(test_closing_type_arguments),
        cmocka_unit_test(test_literals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
