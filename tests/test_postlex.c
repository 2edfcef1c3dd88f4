/*
 * Unit tests of the post-lexing layers over a stream (parser/postlex.c):
 * hand-written token streams with the terminals the parser must get, as
 * note [indentation] and note [semicolon insertion] define them (worked
 * out by hand from Python's tokenizer rules), the error cases, the bounds
 * (254 nested levels), and streams without a layer.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <string.h>

#include "parser/postlex.h"

enum { NL, IN, OUT, LP, RP, NAME, COLON, SEMI, NTERMS };
static const char *const NAMES[NTERMS] = {"NL", "IN", "OUT", "(", ")", "NAME", ":", ";"};

typedef struct lexeme {
    uint32_t term;
    const char *text;
} lexeme;

static int8_t brackets[NTERMS] = {[LP] = 1, [RP] = -1};

static gm_postlex indent_layer(void)
{
    gm_postlex pl;
    memset(&pl, 0, sizeof pl);
    pl.indentation = true;
    pl.newline = NL;
    pl.indent = IN;
    pl.dedent = OUT;
    pl.bracket = brackets;
    pl.nterminals = NTERMS;
    pl.tab_width = 8;
    return pl;
}

static void put_terms(char *buf, size_t cap, const uint32_t *t, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? " " : "", NAMES[t[i]]);
}

/* Feeds the lexemes and the end; compares what the parser gets with `expected`. */
static void expect_stream(const gm_postlex *pl, const lexeme *lx, size_t n, const char *expected)
{
    gm_postlex_stream s;
    gm_postlex_stream_init(&s, pl);
    uint32_t all[4096];
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *out;
        size_t k;
        gm_error err;
        const char *text = lx[i].text ? lx[i].text : NAMES[lx[i].term];
        if (gm_postlex_stream_feed(&s, lx[i].term, (const uint8_t *)text, strlen(text), &out, &k,
                                   &err) != GM_OK)
            fail_msg("lexeme %zu: %s", i, err.message);
        assert_true(total + k <= 4096);
        memcpy(all + total, out, k * sizeof *out);
        total += k;
    }
    const uint32_t *out;
    size_t k;
    gm_postlex_stream_end(&s, &out, &k);
    memcpy(all + total, out, k * sizeof *out);
    total += k;
    char got[8192];
    put_terms(got, sizeof got, all, total);
    assert_string_equal(got, expected);
}

/* Feeds the lexemes; the last one must fail with a message containing `what`. */
static void expect_error(const gm_postlex *pl, const lexeme *lx, size_t n, const char *what)
{
    gm_postlex_stream s;
    gm_postlex_stream_init(&s, pl);
    for (size_t i = 0; i < n; i++) {
        const uint32_t *out;
        size_t k;
        gm_error err;
        const char *text = lx[i].text ? lx[i].text : NAMES[lx[i].term];
        gm_status st =
            gm_postlex_stream_feed(&s, lx[i].term, (const uint8_t *)text, strlen(text), &out, &k, &err);
        if (i + 1 < n) {
            assert_int_equal(st, GM_OK);
            continue;
        }
        assert_int_equal(st, GM_ERR_REJECTED);
        if (!strstr(err.message, what))
            fail_msg("got '%s', expected it to contain '%s'", err.message, what);
    }
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

/*
 *  a:
 *      b(
 *    c)
 *      d:
 *          e
 *    # comment
 *
 *          f
 *  g
 */
static void python_blocks(void **state)
{
    (void)state;
    gm_postlex pl = indent_layer();
    const lexeme lx[] = {
        {NAME, "a"}, {COLON, 0}, {NL, "\n    "},
        {NAME, "b"}, {LP, 0}, {NL, "\n  "}, {NAME, "c"}, {RP, 0}, {NL, "\n    "},
        {NAME, "d"}, {COLON, 0}, {NL, "\n        "},
        {NAME, "e"}, {NL, "\n  # comment\n\n        "},
        {NAME, "f"}, {NL, "\n"},
        {NAME, "g"}, {NL, "\n"},
    };
    expect_stream(&pl, lx, COUNT(lx),
                  "NAME : NL IN NAME ( NAME ) NL NAME : NL IN NAME NL NAME NL OUT OUT NAME NL");
}

/* Levels still open at the end are closed; a tab is 8 columns (Lark counts, not tab stops);
   \r and \f count 0. */
static void tabs_and_end_of_input(void **state)
{
    (void)state;
    gm_postlex pl = indent_layer();
    const lexeme lx[] = {
        {NAME, "a"}, {COLON, 0}, {NL, "\r\n\t"},
        {NAME, "b"}, {COLON, 0}, {NL, "\n        \f\t"},
        {NAME, "c"}, {NL, "\r\n    \f    "},
        {NAME, "d"},
    };
    expect_stream(&pl, lx, COUNT(lx), "NAME : NL IN NAME : NL IN NAME NL OUT NAME OUT");
    pl.tab_width = 4;
    const lexeme lx4[] = {
        {NAME, "a"}, {COLON, 0}, {NL, "\n\t"}, {NAME, "b"}, {NL, "\n    "}, {NAME, "c"}, {NL, "\n"},
    };
    expect_stream(&pl, lx4, COUNT(lx4), "NAME : NL IN NAME NL NAME NL OUT");
}

/* Nested brackets drop every line end. A closing bracket too many (which no parser
   accepts) counts below 0, as in the matcher: a line end inside the next pair is fed. */
static void brackets_join_lines(void **state)
{
    (void)state;
    gm_postlex pl = indent_layer();
    const lexeme lx[] = {
        {NAME, "f"}, {LP, 0}, {LP, 0}, {NL, "\n      "}, {RP, 0}, {NL, "\n"}, {NAME, "x"},
        {RP, 0}, {NL, "\n"}, {RP, 0}, {NL, "\n  "}, {NAME, "y"}, {LP, 0}, {NL, "\n  "},
    };
    expect_stream(&pl, lx, COUNT(lx), "NAME ( ( ) NAME ) NL ) NL IN NAME ( NL OUT");
}

static void bad_dedent(void **state)
{
    (void)state;
    gm_postlex pl = indent_layer();
    const lexeme dedent[] = {
        {NAME, "a"}, {COLON, 0}, {NL, "\n    "}, {NAME, "b"}, {COLON, 0}, {NL, "\n        "},
        {NAME, "c"}, {NL, "\n  "},
    };
    expect_error(&pl, dedent, COUNT(dedent),
                 "unindent to column 2 does not match any outer indentation level (the "
                 "enclosing block is at column 0)");
}

/* Widths saturate at GM_INDENT_MAX_WIDTH (as the matcher and the spanner count them). */
static void wide_lines_saturate(void **state)
{
    (void)state;
    gm_postlex pl = indent_layer();
    char wide[300] = "\n", max[300] = "\n";
    memset(wide + 1, ' ', 280);
    wide[281] = '\0';
    memset(max + 1, ' ', GM_INDENT_MAX_WIDTH);
    max[GM_INDENT_MAX_WIDTH + 1] = '\0';
    const lexeme lx[] = {
        {NAME, "a"}, {COLON, 0}, {NL, wide}, {NAME, "b"}, {NL, max}, {NAME, "c"}, {NL, "\n"},
    };
    expect_stream(&pl, lx, COUNT(lx), "NAME : NL IN NAME NL NAME NL OUT");
}

/* The deepest stack: 254 levels of one column each, closed by one line end. */
static void deepest_stack(void **state)
{
    (void)state;
    gm_postlex pl = indent_layer();
    gm_postlex_stream s;
    gm_postlex_stream_init(&s, &pl);
    char text[GM_INDENT_MAX_WIDTH + 2] = "\n";
    const uint32_t *out;
    size_t n;
    gm_error err;
    for (uint32_t w = 1; w <= GM_INDENT_MAX_WIDTH; w++) {
        text[w] = ' ';
        assert_int_equal(gm_postlex_stream_feed(&s, NL, (const uint8_t *)text, w + 1, &out, &n, &err),
                         GM_OK);
        assert_int_equal(n, 2);
        assert_int_equal(out[0], NL);
        assert_int_equal(out[1], IN);
    }
    assert_int_equal(gm_postlex_stream_feed(&s, NL, (const uint8_t *)"\n", 1, &out, &n, &err), GM_OK);
    assert_int_equal(n, 1 + GM_INDENT_MAX_WIDTH);
    for (size_t i = 1; i < n; i++)
        assert_int_equal(out[i], OUT);
    /* and again, closed by the end of input */
    for (uint32_t w = 1; w <= GM_INDENT_MAX_WIDTH; w++)
        assert_int_equal(gm_postlex_stream_feed(&s, NL, (const uint8_t *)text, w + 1, &out, &n, &err),
                         GM_OK);
    gm_postlex_stream_end(&s, &out, &n);
    assert_int_equal(n, GM_INDENT_MAX_WIDTH);
}

/* note [semicolon insertion] through the stream; no layer passes terminals through. */
static void insertion_and_no_layer(void **state)
{
    (void)state;
    uint8_t at[NTERMS] = {[NL] = 1};
    uint8_t after[NTERMS] = {[NAME] = 1, [RP] = 1};
    gm_postlex pl;
    memset(&pl, 0, sizeof pl);
    pl.insertion = true;
    pl.insert = SEMI;
    pl.at = at;
    pl.after = after;
    pl.nterminals = NTERMS;
    const lexeme lx[] = {
        {NAME, "a"}, {NL, "\n"}, {NL, "\n"}, {NAME, "f"}, {LP, 0}, {NL, "\n"}, {RP, 0},
        {NL, "\n"}, {COLON, 0}, {NL, "\n"}, {NAME, "z"},
    };
    expect_stream(&pl, lx, COUNT(lx), "NAME ; NAME ( ) ; : NAME ;");
    const lexeme plain[] = {{NAME, "a"}, {NL, "\n    "}, {LP, 0}, {NL, "\n"}};
    expect_stream(NULL, plain, COUNT(plain), "NAME NL ( NL");
    memset(&pl, 0, sizeof pl);
    expect_stream(&pl, plain, COUNT(plain), "NAME NL ( NL");
}

/*
 * note [offending-token insertion]: what gm_postlex_map hands the parser,
 * worked out by hand. ":" stands for the inserted terminal, NL is the line
 * end, ")" triggers the forced insertion, OUT is tried always (JavaScript's
 * "}"), and "(" after a line end becomes IN (a rename).
 */
static void offending_marks(void **state)
{
    (void)state;
    uint8_t at[NTERMS] = {[NL] = 1}, after[NTERMS] = {[RP] = 1}, try_before[NTERMS] = {[OUT] = 1};
    uint32_t renamed[NTERMS];
    for (int i = 0; i < NTERMS; i++)
        renamed[i] = GM_POSTLEX_NONE;
    renamed[LP] = IN;
    gm_postlex pl;
    memset(&pl, 0, sizeof pl);
    pl.insertion = true;
    pl.offending = true;
    pl.insert = COLON;
    pl.at = at;
    pl.after = after;
    pl.try_before = try_before;
    pl.renamed = renamed;
    pl.nterminals = NTERMS;
    const uint32_t T = GM_POSTLEX_TRY;
    const uint32_t in[] = {NAME, NL, NAME, OUT, NL, LP, LP, RP, NL, NAME, NL};
    const uint32_t want[][2] = {{1, NAME}, {0, 0}, {1, NAME | T}, {1, OUT | T}, {0, 0},
                                {1, IN | T}, {1, LP}, {1, RP}, {1, COLON}, {1, NAME | T}, {0, 0}};
    uint8_t flag = 0;
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        uint32_t out = UINT32_MAX;
        uint32_t n = gm_postlex_map(&pl, in[i], &flag, &out);
        assert_int_equal(n, want[i][0]);
        if (n)
            assert_int_equal(out, want[i][1]);
    }
    /* the end: nothing forced (the parser's test before $end is the caller's) */
    uint32_t out;
    assert_int_equal(gm_postlex_end(&pl, flag, &out), 0);
    flag = 0;
    assert_int_equal(gm_postlex_map(&pl, RP, &flag, &out), 1);
    assert_int_equal(gm_postlex_end(&pl, flag, &out), 1);
    assert_int_equal(out, COLON);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(python_blocks),
        cmocka_unit_test(tabs_and_end_of_input),
        cmocka_unit_test(brackets_join_lines),
        cmocka_unit_test(bad_dedent),
        cmocka_unit_test(wide_lines_saturate),
        cmocka_unit_test(deepest_stack),
        cmocka_unit_test(insertion_and_no_layer),
        cmocka_unit_test(offending_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
