/*
 * Tests of the lexing DFA and the transducer: the seed example, maximal
 * munch, priorities, keywords versus identifiers, ignored terminals, end of
 * input, diagnostics (shadowed and empty-string terminals), Prod, the start
 * state, allocation failures, golden dumps, and a differential test against
 * a reference lexer that runs every terminal's own minimal DFA side by side
 * and applies note [terminal resolution] by brute force.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lexer/dfa.h"
#include "lexer/dump.h"
#include "lexer/lexer.h"
#include "lexer/termfile.h"
#include "parser/contextual.h"
#include "runtime/objects.h"
#include "base/strbuf.h"

/* ---- helpers ---- */

typedef struct stream {
    char text[8192];   /* "NAME NAME ..." of the non-ignored lexemes */
    size_t n;
    gm_lexeme all[4096];
    size_t nall;
    const gm_lexer *lx;
} stream;

static gm_status collect(void *ud, const gm_lexeme *l)
{
    stream *s = ud;
    if (s->nall < sizeof s->all / sizeof s->all[0])
        s->all[s->nall++] = *l;
    if (s->lx->terminals[l->terminal].ignored)
        return GM_OK;
    int k = snprintf(s->text + s->n, sizeof s->text - s->n, "%s%s", s->n ? " " : "",
                     s->lx->terminals[l->terminal].name);
    if (k > 0 && (size_t)k < sizeof s->text - s->n)
        s->n += (size_t)k;
    return GM_OK;
}

/* Lexes text; returns the status and fills the stream (and *off on errors). */
static gm_status lex(const gm_lexer *lx, const char *text, stream *s, size_t *off)
{
    memset(s, 0, sizeof *s);
    s->lx = lx;
    gm_error err;
    *off = (size_t)-1;
    return gm_lexer_run(lx, (const uint8_t *)text, strlen(text), collect, s, off, &err);
}

typedef struct warnings {
    char text[4096];
    int count;
} warnings;

static void on_warning(void *ud, const gm_error *w)
{
    warnings *ws = ud;
    ws->count++;
    size_t n = strlen(ws->text);
    snprintf(ws->text + n, sizeof ws->text - n, "%s\n", w->message);
}

/* Builds a lexer from a terminal list in termfile syntax. */
static gm_status build(gm_mem *m, const char *terms, gm_lexer **lx, warnings *ws, gm_error *err)
{
    gm_termfile tf;
    gm_status st = gm_termfile_parse(m, "t.terms", terms, strlen(terms), &tf, err);
    if (st != GM_OK)
        return st;
    if (ws)
        memset(ws, 0, sizeof *ws);
    st = gm_lexer_build(m, tf.specs, tf.n, NULL, ws ? on_warning : NULL, ws, lx, err);
    gm_termfile_free(&tf);
    return st;
}

static gm_lexer *must_build(gm_mem *m, const char *terms)
{
    gm_lexer *lx = NULL;
    gm_error err;
    gm_error_clear(&err);
    gm_status st = build(m, terms, &lx, NULL, &err);
    if (st != GM_OK)
        fail_msg("build failed: %s", err.message);
    return lx;
}

static uint32_t term_id(const gm_lexer *lx, const char *name)
{
    for (uint32_t i = 0; i < lx->nterminals; i++)
        if (!strcmp(lx->terminals[i].name, name))
            return i;
    fail_msg("no terminal %s", name);
    return 0;
}

static void expect_stream(const gm_lexer *lx, const char *text, const char *want)
{
    stream s;
    size_t off;
    gm_status st = lex(lx, text, &s, &off);
    if (st != GM_OK)
        fail_msg("lexing \"%s\" failed at offset %zu", text, off);
    if (strcmp(s.text, want))
        fail_msg("lexing \"%s\": got [%s], want [%s]", text, s.text, want);
}

static void expect_error(const gm_lexer *lx, const char *text, size_t want_off)
{
    stream s;
    size_t off;
    gm_status st = lex(lx, text, &s, &off);
    if (st != GM_ERR_REJECTED || off != want_off)
        fail_msg("lexing \"%s\": want an error at %zu, got status %d offset %zu", text, want_off, st,
                 off);
}

/* ---- stream tests ---- */

static void seed_example(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, "B /ab*/\nC /ac*/\n");
    expect_stream(lx, "abaccab", "B C B");
    stream s;
    size_t off;
    assert_int_equal(lex(lx, "abaccab", &s, &off), GM_OK);
    assert_int_equal(s.nall, 3);
    assert_int_equal(s.all[0].start, 0);
    assert_int_equal(s.all[0].end, 2);
    assert_int_equal(s.all[1].start, 2);
    assert_int_equal(s.all[1].end, 5);
    assert_int_equal(s.all[2].start, 5);
    assert_int_equal(s.all[2].end, 7);
    /* Prod: after "a" both terminals are possible, after "ab" only B. */
    uint32_t qa = gm_lexer_move(lx, 0, lx->byte_class['a']);
    uint32_t qab = gm_lexer_move(lx, qa, lx->byte_class['b']);
    uint32_t B = term_id(lx, "B"), C = term_id(lx, "C");
    assert_true(gm_lexer_can_produce(lx, qa, B) && gm_lexer_can_produce(lx, qa, C));
    assert_true(gm_lexer_can_produce(lx, qab, B) && !gm_lexer_can_produce(lx, qab, C));
    assert_false(gm_lexer_can_produce(lx, 0, B) && 0);
    assert_true(gm_lexer_can_produce(lx, 0, B) && gm_lexer_can_produce(lx, 0, C));
    assert_int_equal(lx->accept[qab], B);
    assert_int_equal(lx->accept[0], GM_LEX_NONE);
    gm_lexer_destroy(lx);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void maximal_munch(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, "EQ \"=\"\nEQEQ \"==\"\nEQ3 \"===\"\nNUM /[0-9]+/\nDOT \".\"\nFLOAT /[0-9]+\\.[0-9]+/\n");
    expect_stream(lx, "====", "EQ3 EQ");
    expect_stream(lx, "=====", "EQ3 EQEQ");
    expect_stream(lx, "12.5", "FLOAT");
    expect_stream(lx, "12.5.7", "FLOAT DOT NUM");
    /* 1-lookahead: "12." is not a FLOAT and the lexer does not back up to NUM DOT. */
    expect_error(lx, "12.", 3);
    expect_error(lx, "12.x", 3);
    gm_lexer_destroy(lx);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void priorities_and_keywords(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    /* Literal over regex at equal priority; longer identifiers stay identifiers. */
    gm_lexer *lx = must_build(&m, "ID /[a-z_][a-z0-9_]*/\nIF \"if\"\nIN \"in\"\nINT \"int\"\nWS /\\s+/\n%ignore WS\n");
    expect_stream(lx, "if in int iff inti x", "IF IN INT ID ID ID");
    gm_lexer_destroy(lx);
    /* A higher priority regex beats the literal; declaration order settles ties. */
    lx = must_build(&m, "ID.2 /[a-z]+/\nIF \"if\"\nWS /\\s+/\n%ignore WS\n");
    expect_stream(lx, "if x", "ID ID");
    gm_lexer_destroy(lx);
    lx = must_build(&m, "A /x+/\nB /x/\nWS /\\s+/\n%ignore WS\n");
    expect_stream(lx, "x xx", "A A");
    gm_lexer_destroy(lx);
    lx = must_build(&m, "B /x/\nA /x+/\nWS /\\s+/\n%ignore WS\n");
    expect_stream(lx, "x xx", "B A");
    gm_lexer_destroy(lx);
    /* Negative priorities and case-insensitive keywords. */
    lx = must_build(&m, "SELECT \"select\"i\nNAME.-1 /\\w+/\nWS /\\s+/\n%ignore WS\n");
    expect_stream(lx, "SELECT Select sel selects", "SELECT SELECT NAME NAME");
    gm_lexer_destroy(lx);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void ignored_and_end_of_input(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m,
                              "STR /\"(?:[^\"\\\\\\n]|\\\\.)*\"/\nID /\\w+/\nWS /[ \\t]+/\nNL /\\n/\n"
                              "COMMENT /#[^\\n]*/\n%ignore WS COMMENT\n");
    expect_stream(lx, "a \"b c\" # d\ne", "ID STR NL ID");
    expect_stream(lx, "", "");
    expect_stream(lx, "   ", "");
    expect_stream(lx, "# only a comment", "");
    stream s;
    size_t off;
    assert_int_equal(lex(lx, "a \"b", &s, &off), GM_ERR_REJECTED);
    assert_int_equal(off, 4); /* unfinished lexeme at the end: offset = len */
    assert_int_equal(s.nall, 2); /* ID and WS were emitted before */
    expect_error(lx, "a \"b\nc\"", 4);
    expect_error(lx, "a ~", 2); /* no terminal starts with '~' */
    /* Ignored lexemes are still reported by gm_lexer_run, flagged by the terminal. */
    assert_int_equal(lex(lx, "a b", &s, &off), GM_OK);
    assert_int_equal(s.nall, 3);
    assert_true(lx->terminals[s.all[1].terminal].ignored);
    gm_lexer_destroy(lx);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void callback_status_stops_the_run(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, "A /a/\n");
    gm_error err;
    size_t off = 0;
    gm_status st = gm_lexer_run(lx, (const uint8_t *)"aaa", 3, NULL, NULL, &off, &err);
    assert_int_equal(st, GM_ERR_ARGUMENT);
    gm_lexer_destroy(lx);
}

static void diagnostics(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = NULL;
    warnings ws;
    gm_error err;
    /* KW2 can never win against the literal KW; DUP loses to the earlier X. */
    assert_int_equal(build(&m, "KW \"if\"\nKW2 /if/\nX /[xy]/\nDUP /x|y/\nID /[a-z]+/\n", &lx, &ws, &err), GM_OK);
    assert_int_equal(ws.count, 2);
    assert_non_null(strstr(ws.text, "t.terms:2:1: warning: terminal KW2 can never be produced"));
    assert_non_null(strstr(ws.text, "taken by KW (a string literal wins over a regex)"));
    assert_non_null(strstr(ws.text, "terminal DUP can never be produced"));
    assert_non_null(strstr(ws.text, "X (declared earlier)"));
    gm_lexer_destroy(lx);
    /* A terminal with an empty language. */
    assert_int_equal(build(&m, "A /a/\nNONE /[^\\s\\S]/\n", &lx, &ws, &err), GM_OK);
    assert_int_equal(ws.count, 1);
    assert_non_null(strstr(ws.text, "NONE can never be produced: its pattern matches no string"));
    gm_lexer_destroy(lx);
    /* Priority wins are explained too. */
    assert_int_equal(build(&m, "A /a+/\nB.5 /a+/\n", &lx, &ws, &err), GM_OK);
    assert_non_null(strstr(ws.text, "A can never be produced: every string it matches is taken by B (higher priority)"));
    gm_lexer_destroy(lx);
    /* The empty string is an error that names the terminal. */
    lx = NULL;
    assert_int_equal(build(&m, "A /a/\nOPT /b*/\n", &lx, NULL, &err), GM_ERR_GRAMMAR);
    assert_null(lx);
    assert_non_null(strstr(err.message, "t.terms:2:1: terminal OPT matches the empty string"));
    assert_int_equal(err.line, 2);
    assert_int_equal(build(&m, "E \"\"\n", &lx, NULL, &err), GM_ERR_GRAMMAR);
    /* Regex errors name the terminal, the construct and the column in the pattern. */
    assert_int_equal(build(&m, "A /a/\nLOOK /ab(?=cd)/\n", &lx, NULL, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "t.terms:2:1: terminal LOOK: unsupported construct: lookahead (?=...) (it looks more than one byte past the end of the lexeme"));
    assert_non_null(strstr(err.message, "at column 3\n  ab(?=cd)\n    ^"));
    assert_int_equal(build(&m, "A /a/\nLOOK /(?<=x)ab/\n", &lx, NULL, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "terminal LOOK: unsupported construct: lookbehind (?<=...) (it looks before the start of the lexeme"));
    assert_int_equal(build(&m, "LOOK /a(?<=[^x])b/\n", &lx, NULL, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "lookbehind (?<=...) over anything but up to 4 ASCII characters"));
    assert_int_equal(build(&m, "LOOK /a*+b/\n", &lx, NULL, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "possessive quantifier"));
    assert_int_equal(build(&m, "BAD /a{2,1}/\n", &lx, NULL, &err), GM_ERR_SYNTAX);
    assert_non_null(strstr(err.message, "terminal BAD: min repeat greater than max repeat at column 2"));
    assert_int_equal(build(&m, "BIG /(?:ab){1000}(?:cd){1000}x{1000}/\n", &lx, NULL, &err), GM_OK);
    gm_lexer_destroy(lx);
    gm_limits lim;
    memset(&lim, 0, sizeof lim);
    lim.max_dfa_states = 100;
    gm_termfile tf;
    /* The limit error names the terminal that needs the states alone, at its definition. */
    const char *big = "A /a/\nB /[ab]*a[ab]{12}/\n";
    assert_int_equal(gm_termfile_parse(&m, "t.terms", big, strlen(big), &tf, &err), GM_OK);
    assert_int_equal(gm_lexer_build(&m, tf.specs, tf.n, &lim, NULL, NULL, &lx, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "t.terms:2:1: terminal B: its lexer DFA alone needs more than "
                                        "100 states (gm_limits.max_dfa_states)"));
    assert_int_equal(err.line, 2);
    gm_termfile_free(&tf);
    /* Twenty 10-letter keywords: 11 states each alone, about 180 together. */
    char many[512] = "";
    for (int i = 0; i < 20; i++) {
        char line[32];
        snprintf(line, sizeof line, "K%02d \"%c%c%c%c%c%c%c%c%c%c\"\n", i, 'a' + i, 'a' + i, 'a' + i,
                 'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + i, 'a' + (i + 1) % 26);
        strcat(many, line);
    }
    assert_int_equal(gm_termfile_parse(&m, "t.terms", many, strlen(many), &tf, &err), GM_OK);
    assert_int_equal(gm_lexer_build(&m, tf.specs, tf.n, &lim, NULL, NULL, &lx, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "the lexer DFA of all 20 terminals together needs more than 100 "
                                        "states (gm_limits.max_dfa_states); no terminal does alone, "
                                        "the largest: K00 (11), K01 (11), K02 (11)"));
    gm_termfile_free(&tf);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void declared_terminals(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = NULL;
    warnings ws;
    gm_error err;
    assert_int_equal(build(&m, "%declare INDENT DEDENT\nA /a/\n", &lx, &ws, &err), GM_OK);
    assert_int_equal(ws.count, 0);
    assert_int_equal(lx->nterminals, 3);
    assert_true(lx->terminals[0].declared_only && lx->terminals[1].declared_only);
    assert_false(lx->terminals[2].declared_only);
    for (uint32_t q = 0; q < lx->nstates; q++) {
        assert_true(lx->accept[q] == GM_LEX_NONE || lx->accept[q] == 2);
        assert_false(gm_lexer_can_produce(lx, q, 0));
    }
    gm_lexer_destroy(lx);
    /* No terminals at all: a lexer that accepts only the empty input. */
    assert_int_equal(gm_lexer_build(&m, NULL, 0, NULL, NULL, NULL, &lx, &err), GM_OK);
    assert_int_equal(lx->nstates, 1);
    expect_stream(lx, "", "");
    expect_error(lx, "x", 0);
    gm_lexer_destroy(lx);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void start_state_is_never_reentered(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    /* (ab)*c: the textbook minimal DFA loops back to the start after "ab". */
    gm_lexer *lx = must_build(&m, "T /(?:ab)*c/\nU /x(?:yx)*/\n");
    for (uint32_t q = 0; q < lx->nstates; q++)
        for (uint32_t c = 0; c < lx->nclasses; c++)
            assert_int_not_equal(gm_lexer_move(lx, q, c), 0);
    expect_error(lx, "ab", 2); /* pending "ab" at the end is not a clean end */
    expect_stream(lx, "ababcxyxc", "T U T");
    gm_lexer_destroy(lx);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* gm_lexer_step byte by byte gives the same stream as gm_lexer_run. */
static void step_agrees_with_run(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, "ID /[^\\W\\d]\\w*/\nNUM /\\d+/\nOP /[-+*\\/=<>]=?/\nWS /\\s+/\n%ignore WS\n");
    const char *text = "naïve = x1 <= 42 + größe\t* 3";
    stream s;
    size_t off;
    assert_int_equal(lex(lx, text, &s, &off), GM_OK);
    uint32_t q = 0;
    size_t k = 0;
    for (size_t i = 0; text[i]; i++) {
        uint32_t nq = 0, em[GM_LEX_MAX_EMIT], nem;
        assert_true(gm_lexer_step(lx, q, (uint8_t)text[i], &nq, em, &nem));
        assert_true(nem <= 1);
        if (nem) {
            assert_int_equal(em[0], s.all[k].terminal);
            assert_int_equal(i, s.all[k].end);
            k++;
        }
        q = nq;
    }
    assert_int_equal(lx->accept[q], s.all[k].terminal);
    assert_int_equal(k + 1, s.nall);
    gm_lexer_destroy(lx);
}

/* ---- backtracking (note [lexer backtracking]) ---- */

/* SynCode's idiom: a line end may run on into a docstring, and a name may start like one. */
static const char bt_terms[] =
    "NL /(\\n[ \\t]*|[fr]?\"\"\"[^\"]*\"\"\"|<[a-z]*>)+/\n"
    "NAME /<?[a-z]+/\n"
    "STR /[fr]?\"[^\"\\n]*\"/\n"
    "DOT \".\"\nELLIPSIS \"...\"\n"
    "WS /[ ]+/\n%ignore WS\n";

static void backtracking_as_lark(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, bt_terms);
    expect_error(lx, "x\n  for", 5); /* 1-lookahead: "\n  fo" is no lexeme */
    gm_error err;
    assert_int_equal(gm_lexer_add_backtracking(lx, 1000, &err), GM_OK);
    assert_true(lx->nstates > lx->ndfa);
    assert_int_equal(gm_lexer_add_backtracking(lx, 1000, &err), GM_ERR_STATE);
    expect_stream(lx, "x\n  for", "NAME NL NAME");
    expect_stream(lx, "x\n  f\"a\"", "NAME NL STR");
    expect_stream(lx, "x\n  f\"\"\"doc\"\"\"\n  y", "NAME NL NAME");
    expect_stream(lx, "x\n<abc", "NAME NL NAME");
    expect_stream(lx, "x\n<abcdefg", "NAME NL NAME");
    expect_stream(lx, "x\n<abcdefghijklmnopqrstuvwxyz", "NAME NL NAME"); /* windows of any length */
    expect_stream(lx, "a..b", "NAME DOT DOT NAME"); /* ".." falls back to "." as in Lark */
    expect_stream(lx, "a...b", "NAME ELLIPSIS NAME");
    gm_lexer_destroy(lx);
    /* Too many states for the limit: an error, the lexer unchanged. */
    lx = must_build(&m, bt_terms);
    uint32_t n = lx->nstates;
    assert_int_equal(gm_lexer_add_backtracking(lx, 2, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "backtracking states"));
    assert_int_equal(lx->nstates, n);
    expect_error(lx, "x\n  for", 5);
    gm_lexer_destroy(lx);
    assert_int_equal(atomic_load(&m.used), 0);
}

/*
 * The backtracking states (gm_lexer_step, then breaks at the end) against
 * gm_lexer_run, which backtracks over the text itself. Returns the number
 * of bytes that emitted more than one terminal.
 */
static int step_agrees_with_backtracking_run(const gm_lexer *lx, const char *text, size_t len)
{
    gm_error err;
    stream s;
    memset(&s, 0, sizeof s);
    s.lx = lx;
    size_t off = (size_t)-1;
    gm_status st = gm_lexer_run(lx, (const uint8_t *)text, len, collect, &s, &off, &err);
    uint32_t got[64], ngot = 0, q = 0;
    size_t fail_at = (size_t)-1;
    int multi = 0;
    for (size_t i = 0; i < len && fail_at == (size_t)-1; i++) {
        uint32_t em[GM_LEX_MAX_EMIT], nem;
        if (!gm_lexer_step(lx, q, (uint8_t)text[i], &q, em, &nem))
            fail_at = i;
        multi += nem > 1;
        for (uint32_t k = 0; k < nem && fail_at == (size_t)-1 && ngot < 64; k++)
            got[ngot++] = em[k];
    }
    while (fail_at == (size_t)-1 && q != 0 && ngot < 64) {
        uint32_t t;
        if (!gm_lexer_break(lx, q, lx->nclasses, &t, &q))
            fail_at = len;
        else
            got[ngot++] = t;
    }
    if ((st == GM_OK) != (fail_at == (size_t)-1) || (st != GM_OK && off != fail_at))
        fail_msg("\"%.*s\": run status %d at %zu, steps fail at %zu", (int)len, text, st, off,
                 fail_at);
    if (st == GM_OK) {
        assert_int_equal(ngot, s.nall);
        for (uint32_t k = 0; k < ngot; k++)
            assert_int_equal(got[k], s.all[k].terminal);
    }
    return multi;
}

static void backtracking_step_agrees_with_run(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, bt_terms);
    gm_error err;
    assert_int_equal(gm_lexer_add_backtracking(lx, 1000, &err), GM_OK);
    static const char *cases[] = {"x\n  for", "x\n  f\"a\"", "x\n  f\"\"\"doc\"\"\"\n  y", "x\n<abc",
                                  "x\n<abcdefg", "x\n<abcdefgh", "a..b", "a...b", "x\n<ab cd"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        step_agrees_with_backtracking_run(lx, cases[i], strlen(cases[i]));
    static const char alphabet[] = "\n \tfr\"<>ax.";
    unsigned seed = 12345;
    int fell_back = 0;
    for (int iter = 0; iter < 30000; iter++) {
        char text[16];
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 16) % sizeof text;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            text[i] = alphabet[(seed >> 16) % (sizeof alphabet - 1)];
        }
        fell_back += step_agrees_with_backtracking_run(lx, text, len);
    }
    assert_true(fell_back > 0); /* some byte emitted a fallback and a re-lexed lexeme */
    gm_lexer_destroy(lx);
}

/*
 * Backtracking states repeat rows (gm_lexer.row16): the table keeps each
 * distinct row once, and compacting a full table again gives the same moves.
 * Lark's own python.lark (Debian python3-lark) has such a lexer.
 */
static void shared_rows(void **state)
{
    (void)state;
    const char *path = gm_test_lark_python_grammar();
    if (!path)
        skip();
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.conflicts = GM_CONFLICTS_LARK;
    o.start = "file_input";
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_create_from_file(path, &o, &g, &err) != GM_OK)
        fail_msg("%s: %s", path, err.message);
    const gm_lexer *lx = g->lexer;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    assert_true(lx->nstates > lx->ndfa);
    assert_non_null(lx->row16);
    uint32_t nrows = 0, k = lx->nclasses;
    for (uint32_t q = 0; q < lx->nstates; q++)
        nrows = lx->row16[q] + 1u > nrows ? lx->row16[q] + 1u : nrows;
    assert_true(nrows * 4 <= lx->nstates * 3);
    size_t n = (size_t)lx->nstates * k;
    gm_lexer copy = *lx;
    copy.mem = &m;
    copy.next = gm_mem_reallocarray(&m, NULL, n + 1, sizeof *copy.next);
    assert_non_null(copy.next);
    for (uint32_t q = 0; q < lx->nstates; q++)
        for (uint32_t c = 0; c < k; c++)
            copy.next[(size_t)q * k + c] = gm_lexer_move(lx, q, c);
    copy.next16 = NULL;
    copy.row16 = NULL;
    copy.patch_at = NULL;
    copy.patch = NULL;
    assert_int_equal(gm_lexer_compact(&copy, &err), GM_OK);
    assert_null(copy.next);
    assert_non_null(copy.row16);
    uint32_t differ = 0;
    for (uint32_t q = 0; q < lx->nstates; q++) {
        for (uint32_t c = 0; c < k; c++)
            assert_int_equal(gm_lexer_move(&copy, q, c), gm_lexer_move(lx, q, c));
        differ += q > 0 && lx->row16[q] != lx->row16[q - 1];
    }
    assert_true(differ > 0);
    gm_mem_free(&m, copy.next16);
    gm_mem_free(&m, copy.row16);
    gm_mem_free(&m, copy.patch_at);
    gm_mem_free(&m, copy.patch);
    assert_int_equal(atomic_load(&m.used), 0);
    gm_grammar_destroy(g);
}

/*
 * Near rows are patched (gm_lexer_patch_rows, note [transition rows]): tables of rows that repeat
 * or differ from another in a few cells, dead cells among them, compact to
 * less than the plain table and move exactly as it does, whatever the class
 * count (1 to 256) and the number of states; tables of unrelated rows stay
 * plain.
 */
static void patched_rows(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    uint32_t patched = 0;
    for (int round = 0; round < 40; round++) {
        uint32_t k = round == 0 ? 1 : round == 1 ? 256 : 1 + (uint32_t)(gm_test_rand(&seed) % 200);
        uint32_t n = 1 + (uint32_t)(gm_test_rand(&seed) % (round % 4 == 0 ? 4000 : 400));
        bool unrelated = round % 10 == 9;
        gm_lexer lx = {.mem = &m, .nstates = n, .nclasses = k};
        lx.next = gm_mem_reallocarray(&m, NULL, (size_t)n * k, sizeof *lx.next);
        uint32_t *plain = malloc((size_t)n * k * sizeof *plain);
        assert_non_null(lx.next);
        assert_non_null(plain);
        for (uint32_t q = 0; q < n; q++) {
            uint32_t *r = plain + (size_t)q * k;
            /* A fresh row, a copy of an earlier one, or of a recent one with a few cells changed. */
            uint64_t kind = gm_test_rand(&seed) % 16;
            if (q == 0 || unrelated || kind == 0) {
                for (uint32_t c = 0; c < k; c++)
                    r[c] = gm_test_rand(&seed) % 3 == 0 ? GM_LEX_DEAD : (uint32_t)(gm_test_rand(&seed) % n);
                continue;
            }
            uint32_t from = kind < 4 ? (uint32_t)(gm_test_rand(&seed) % q)
                                     : q - 1 - (uint32_t)(gm_test_rand(&seed) % (q < 8 ? q : 8));
            memcpy(r, plain + (size_t)from * k, k * sizeof *r);
            /* Changed cells come in runs, as a class range goes elsewhere in a real lexer. */
            uint32_t changes = kind < 4 ? 0 : (uint32_t)(gm_test_rand(&seed) % (k / 16 + 2));
            uint32_t at = (uint32_t)(gm_test_rand(&seed) % k);
            for (uint32_t i = 0; i < changes; i++, at = (at + 1) % k)
                r[kind == 4 ? gm_test_rand(&seed) % k : at] =
                    gm_test_rand(&seed) % 4 == 0 ? GM_LEX_DEAD : (uint32_t)(gm_test_rand(&seed) % n);
        }
        memcpy(lx.next, plain, (size_t)n * k * sizeof *plain);
        assert_int_equal(gm_lexer_compact(&lx, &err), GM_OK);
        assert_null(lx.next);
        assert_null(lx.patch);
        assert_int_equal(gm_lexer_patch_rows(&lx, &err), GM_OK);
        assert_non_null(lx.next16);
        for (uint32_t q = 0; q < n; q++)
            for (uint32_t c = 0; c < k; c++)
                if (gm_lexer_move(&lx, q, c) != plain[(size_t)q * k + c])
                    fail_msg("round %d (%u states, %u classes): state %u class %u moves to %u, not %u",
                             round, n, k, q, c, gm_lexer_move(&lx, q, c), plain[(size_t)q * k + c]);
        size_t bytes = atomic_load(&m.used);
        if (lx.patch) {
            patched++;
            assert_true(bytes < (size_t)n * k * 2);
        }
        if (unrelated && n > 100)
            assert_null(lx.row16);
        gm_mem_free(&m, lx.next16);
        gm_mem_free(&m, lx.row16);
        gm_mem_free(&m, lx.patch_at);
        gm_mem_free(&m, lx.patch);
        assert_int_equal(atomic_load(&m.used), 0);
        free(plain);
    }
    assert_true(patched >= 20);
}

/*
 * The contextual lexer's lexers are patched, and move as the same lexer
 * built without patches does (Java's, every seventh set).
 */
static void contextual_lexers_patched(void **state)
{
    (void)state;
    gm_grammar_options o;
    gm_grammar_options_init_defaults(&o);
    o.lexer = GM_LEXER_CONTEXTUAL;
    gm_grammar *g;
    gm_error err;
    assert_int_equal(gm_grammar_create_bundled("java", &o, &g, &err), GM_OK);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    const gm_cfg *cfg = g->cfg;
    gm_terminal_spec *specs = calloc(cfg->nterminals, sizeof *specs);
    assert_non_null(specs);
    uint32_t patched = 0, checked = 0;
    for (uint32_t k = 0; k < g->ctx->nsets; k += 7) {
        const gm_lexer *lx;
        assert_int_equal(gm_ctx_lexers_lexer(g->ctx, k, &lx, &err), GM_OK);
        memcpy(specs, cfg->terminals, cfg->nterminals * sizeof *specs);
        for (uint32_t x = 0; x < cfg->nterminals; x++)
            if (!gm_ctx_lexers_has(g->ctx, k, x)) {
                specs[x].pattern = NULL;
                specs[x].pattern_len = 0;
            }
        gm_lexer *plain;
        assert_int_equal(gm_lexer_build_grammar(&m, specs, cfg->nterminals, false, NULL, NULL, NULL,
                                                &plain, &err),
                         GM_OK);
        assert_null(plain->patch);
        assert_int_equal(plain->nstates, lx->nstates);
        assert_int_equal(plain->nclasses, lx->nclasses);
        for (uint32_t q = 0; q < lx->nstates; q++)
            for (uint32_t c = 0; c < lx->nclasses; c++)
                assert_int_equal(gm_lexer_move(lx, q, c), gm_lexer_move(plain, q, c));
        patched += lx->patch != NULL;
        checked++;
        gm_lexer_destroy(plain);
    }
    assert_true(patched * 2 > checked);
    free(specs);
    assert_int_equal(atomic_load(&m.used), 0);
    gm_grammar_destroy(g);
}

/* ---- allocation failures ---- */

/* Every allocation of a build, failed in turn, gives GM_ERR_NOMEM and leaks nothing. */
static void failing_allocations(const char *terms, bool lark)
{
    gm_mem pm;
    gm_mem_init(&pm, NULL, 0);
    gm_termfile tf;
    gm_error err;
    assert_int_equal(gm_termfile_parse(&pm, NULL, terms, strlen(terms), &tf, &err), GM_OK);
    /* Count the allocations of a successful build. */
    gm_test_failing_alloc fa = {0, 0, 0};
    gm_allocator al = gm_test_failing_allocator(&fa);
    gm_mem m;
    gm_mem_init(&m, &al, 0);
    gm_lexer *lx = NULL;
    assert_int_equal(gm_lexer_build_grammar(&m, tf.specs, tf.n, lark, NULL, NULL, NULL, &lx, &err),
                     GM_OK);
    assert_true(lark == (lx->nstates > lx->ndfa));
    gm_lexer_destroy(lx);
    assert_int_equal(fa.live, 0);
    unsigned long total = fa.count;
    assert_true(total > 20);
    for (unsigned long n = 1; n <= total; n++) {
        gm_test_failing_alloc f2 = {0, n, 0};
        al = gm_test_failing_allocator(&f2);
        gm_mem_init(&m, &al, 0);
        lx = NULL;
        gm_error_clear(&err);
        gm_status st = gm_lexer_build_grammar(&m, tf.specs, tf.n, lark, NULL, NULL, NULL, &lx, &err);
        if (st != GM_ERR_NOMEM || lx != NULL || f2.live != 0 || atomic_load(&m.used) != 0)
            fail_msg("failing allocation %lu of %lu: status %d, lexer %p, %ld blocks leaked", n, total, st,
                     (void *)lx, f2.live);
        assert_non_null(strstr(err.message, "out of memory"));
    }
    gm_termfile_free(&tf);
    assert_int_equal(atomic_load(&pm.used), 0);
}

static void allocation_failures_are_clean(void **state)
{
    (void)state;
    failing_allocations(
        "IF \"if\"\nELSE \"else\"\nID /[^\\W\\d]\\w*/\nNUM /\\d+(?:\\.\\d+)?/\nSTR /\"(?:[^\"\\\\]|\\\\.)*\"/\n"
        "OP /[-+*\\/=]=?/\nKW \"select\"i\nWS /\\s+/\n%ignore WS\n",
        false);
    /* In Lark mode the backtracking states are built too (gm_lexer_add_backtracking). */
    failing_allocations(bt_terms, true);
}

/* ---- differential test against a reference lexer ---- */

/* A regex that matches literal bytes (ASCII punctuation escaped). */
static void escape_literal(const char *lit, size_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 5 < cap; i++) {
        unsigned char c = (unsigned char)lit[i];
        if (c < 0x20 || c == 0x7f)
            k += (size_t)snprintf(out + k, cap - k, "\\x%02x", c);
        else if (c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            out[k++] = '\\', out[k++] = (char)c;
        else
            out[k++] = (char)c;
    }
    out[k] = '\0';
}

typedef struct ref_lexer {
    uint32_t n;
    gm_dfa dfa[256];
    const gm_terminal_spec *specs;
} ref_lexer;

static bool ref_wins(const gm_terminal_spec *sp, uint32_t a, uint32_t b)
{
    if (sp[a].priority != sp[b].priority)
        return sp[a].priority > sp[b].priority;
    if (sp[a].is_literal != sp[b].is_literal)
        return sp[a].is_literal;
    return a < b;
}

/* The reference transducer: every terminal's DFA in parallel, resolution by brute force. */
static gm_status ref_run(const ref_lexer *r, const uint8_t *text, size_t len, gm_lexeme *out, size_t *nout,
                         size_t *err_off)
{
    uint32_t q[256];
    for (uint32_t t = 0; t < r->n; t++)
        q[t] = 0;
    size_t start = 0;
    *nout = 0;
    for (size_t i = 0; i <= len; i++) {
        bool alive = false;
        uint32_t nq[256] = {0};
        if (i < len)
            for (uint32_t t = 0; t < r->n; t++) {
                nq[t] = q[t] == GM_LEX_DEAD ? GM_LEX_DEAD
                                            : r->dfa[t].next[(size_t)q[t] * r->dfa[t].nclasses +
                                                             r->dfa[t].byte_class[text[i]]];
                alive |= nq[t] != GM_LEX_DEAD;
            }
        if (alive) {
            memcpy(q, nq, r->n * sizeof *q);
            continue;
        }
        if (i == len && i == start)
            return GM_OK;
        uint32_t best = GM_LEX_NONE;
        for (uint32_t t = 0; t < r->n; t++)
            if (q[t] != GM_LEX_DEAD && r->dfa[t].label[q[t]] != GM_LEX_NONE &&
                (best == GM_LEX_NONE || ref_wins(r->specs, t, best)))
                best = t;
        if (best == GM_LEX_NONE || i == start) {
            *err_off = i;
            return GM_ERR_REJECTED;
        }
        if (i == len) {
            out[(*nout)++] = (gm_lexeme){best, start, i};
            return GM_OK;
        }
        /* As gm_lexer_step: nothing is emitted when the byte cannot start a lexeme either. */
        alive = false;
        for (uint32_t t = 0; t < r->n; t++) {
            nq[t] = r->dfa[t].next[r->dfa[t].byte_class[text[i]]];
            alive |= nq[t] != GM_LEX_DEAD;
        }
        if (!alive) {
            *err_off = i;
            return GM_ERR_REJECTED;
        }
        out[(*nout)++] = (gm_lexeme){best, start, i};
        start = i;
        memcpy(q, nq, r->n * sizeof *q);
    }
    return GM_OK;
}

typedef struct run_out {
    gm_lexeme v[1 << 14];
    size_t n;
} run_out;

static gm_status push_lexeme(void *ud, const gm_lexeme *l)
{
    run_out *o = ud;
    if (o->n < sizeof o->v / sizeof o->v[0])
        o->v[o->n++] = *l;
    return GM_OK;
}

/* Builds both lexers for a terminal list and compares them on the inputs. */
static void compare_with_reference(const char *terms, const char *const *inputs, size_t ninputs,
                                   const char *alphabet, int nrandom, unsigned seed)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_termfile tf;
    gm_error err;
    assert_int_equal(gm_termfile_parse(&m, "ref.terms", terms, strlen(terms), &tf, &err), GM_OK);
    gm_lexer *lx = NULL;
    if (gm_lexer_build(&m, tf.specs, tf.n, NULL, NULL, NULL, &lx, &err) != GM_OK)
        fail_msg("%s", err.message);
    static ref_lexer r;
    r.n = tf.n;
    r.specs = tf.specs;
    assert_true(tf.n <= 256);
    for (uint32_t t = 0; t < tf.n; t++) {
        char re[4096];
        unsigned flags = tf.specs[t].flags;
        if (tf.specs[t].is_literal)
            escape_literal(tf.specs[t].pattern, tf.specs[t].pattern_len, re, sizeof re);
        else
            snprintf(re, sizeof re, "%.*s", (int)tf.specs[t].pattern_len, tf.specs[t].pattern);
        if (gm_regex_compile(&m, NULL, re, strlen(re), flags, NULL, &r.dfa[t], NULL, NULL, &err) != GM_OK)
            fail_msg("%s: %s", tf.specs[t].name, err.message);
    }
    static run_out got, want;
    srand(seed);
    size_t alen = strlen(alphabet);
    static char buf[1 << 16];
    for (int k = 0; k < (int)ninputs + nrandom; k++) {
        const char *text;
        size_t len;
        if (k < (int)ninputs) {
            text = inputs[k];
            len = strlen(text);
        } else {
            /* Random strings over the alphabet, with whole UTF-8 characters mostly. */
            len = (size_t)(rand() % 24);
            for (size_t i = 0; i < len; i++)
                buf[i] = alphabet[rand() % alen];
            text = buf;
        }
        got.n = want.n = 0;
        size_t goff = (size_t)-1, woff = (size_t)-1;
        gm_status gs = gm_lexer_run(lx, (const uint8_t *)text, len, push_lexeme, &got, &goff, &err);
        gm_status ws = ref_run(&r, (const uint8_t *)text, len, want.v, &want.n, &woff);
        bool same = gs == ws && goff == woff && got.n == want.n;
        for (size_t i = 0; same && i < got.n; i++)
            same = got.v[i].terminal == want.v[i].terminal && got.v[i].start == want.v[i].start &&
                   got.v[i].end == want.v[i].end;
        if (!same)
            fail_msg("lexers disagree on \"%.*s\": gramask status %d (%zu lexemes, error at %zd), "
                     "reference status %d (%zu lexemes, error at %zd)",
                     (int)(len > 200 ? 200 : len), text, gs, got.n, (ssize_t)goff, ws, want.n, (ssize_t)woff);
    }
    for (uint32_t t = 0; t < tf.n; t++)
        gm_dfa_free(&r.dfa[t]);
    gm_lexer_destroy(lx);
    gm_termfile_free(&tf);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void reference_small_sets(void **state)
{
    (void)state;
    const char *seed_in[] = {"abaccab", "aaa", "abc", "acab", "b"};
    compare_with_reference("B /ab*/\nC /ac*/\n", seed_in, 5, "abcx", 3000, 1);
    const char *prefix_in[] = {"ab", "abc", "abdd", "aabc"};
    compare_with_reference("A \"a\"\nABC \"abc\"\nABD /abd+/\nABX.1 /ab[xy]?/\n", prefix_in, 4, "abcdxy", 3000, 2);
    const char *kw_in[] = {"if x iff", "else elsewhere", "int i = 42;"};
    compare_with_reference("IF \"if\"\nELSE \"else\"\nINT \"int\"\nID /[a-z_]\\w*/\nNUM /\\d+/\n"
                           "EQ \"=\"\nEQEQ \"==\"\nSEMI \";\"\nWS /\\s+/\n%ignore WS\n",
                           kw_in, 3, "ifelsntx_0129 =;\n", 4000, 3);
    const char *uni_in[] = {"naïve größe", "中文 123", "Straße STRASSE"};
    compare_with_reference("ID /[^\\W\\d]\\w*/\nNUM /\\d+/\nSYM /[^\\w\\s]+/\nWS /\\s+/\nSS \"strasse\"i\n%ignore WS\n",
                           uni_in, 3, "aS\xc3\xa4\xc3\x9f\xe4\xb8\xad" "1 !\xe2\x80\xa8\xf0\x9f\x98\x80", 4000, 4);
    const char *prio_in[] = {"selectfrom", "SELECT from"};
    compare_with_reference("KW.2 /select|from/i\nNAME /\\w+/\nLIT \"select\"\nWS /\\s/\n%ignore WS\n", prio_in, 2,
                           "selctfromSELCT ", 3000, 5);
}

/* The bench's Java token set on real Java source, both lexers. */
static void reference_java_corpus(void **state)
{
    (void)state;
    size_t tlen;
    char *terms = gm_test_read_file(gm_test_src_path("bench/java.terms"), &tlen);
    const char *files[] = {"corpus/java/65f74416_ParsePosition.java", "corpus/java/25788010_DoubleConsts.java"};
    char *texts[2];
    const char *inputs[2];
    for (int i = 0; i < 2; i++) {
        texts[i] = gm_test_read_file(gm_test_shared_path(files[i]), NULL);
        inputs[i] = texts[i];
    }
    compare_with_reference(terms, inputs, 2, "ab1 _.=+<>\"'\\/*\n\xc3\xa9", 2000, 6);
    for (int i = 0; i < 2; i++)
        free(texts[i]);
    free(terms);
}

/* Prod of the Java lexer: never empty, and the reachable accepting labels exactly. */
static void prod_is_reachable_labels(void **state)
{
    (void)state;
    size_t tlen;
    char *terms = gm_test_read_file(gm_test_src_path("bench/java.terms"), &tlen);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, terms);
    uint32_t n = lx->nstates;
    uint8_t *seen = malloc(n);
    uint32_t *stack = malloc(n * sizeof *stack);
    for (uint32_t q = 0; q < n; q++) {
        /* The labels reachable from q, by a plain search. */
        memset(seen, 0, n);
        uint32_t sp = 0;
        stack[sp++] = q;
        seen[q] = 1;
        uint64_t want[4] = {0};
        while (sp) {
            uint32_t s = stack[--sp];
            if (lx->accept[s] != GM_LEX_NONE)
                want[lx->accept[s] >> 6] |= (uint64_t)1 << (lx->accept[s] & 63);
            for (uint32_t c = 0; c < lx->nclasses; c++) {
                uint32_t t = gm_lexer_move(lx, s, c);
                if (t != GM_LEX_DEAD && !seen[t]) {
                    seen[t] = 1;
                    stack[sp++] = t;
                }
            }
        }
        assert_true(lx->prod_words <= 4);
        bool any = false;
        for (uint32_t w = 0; w < lx->prod_words; w++) {
            assert_true(lx->prod[(size_t)q * lx->prod_words + w] == want[w]);
            any |= want[w] != 0;
        }
        assert_true(any);
    }
    free(seen);
    free(stack);
    gm_lexer_destroy(lx);
    free(terms);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* ---- golden dump ---- */

static void golden_lexer_dump(void **state)
{
    (void)state;
    /* tests/golden/lex_keywords.dump holds its command line on its first line. */
    size_t n;
    char *golden = gm_test_read_file(gm_test_src_path("tests/golden/lex_keywords.dump"), &n);
    char *terms = gm_test_read_file(gm_test_src_path("tests/golden/lex_keywords.terms"), NULL);
    const char *body = strchr(golden, '\n');
    assert_non_null(body);
    body++;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_lexer *lx = must_build(&m, terms);
    gm_strbuf b;
    gm_strbuf_init(&b, &m);
    gm_dfa_view v = gm_lexer_view(lx);
    gm_dfa_view_dump(&b, &v);
    assert_string_equal(gm_strbuf_str(&b), body);
    gm_strbuf_free(&b);
    gm_lexer_destroy(lx);
    free(golden);
    free(terms);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_example),
        cmocka_unit_test(maximal_munch),
        cmocka_unit_test(priorities_and_keywords),
        cmocka_unit_test(ignored_and_end_of_input),
        cmocka_unit_test(callback_status_stops_the_run),
        cmocka_unit_test(diagnostics),
        cmocka_unit_test(declared_terminals),
        cmocka_unit_test(start_state_is_never_reentered),
        cmocka_unit_test(step_agrees_with_run),
        cmocka_unit_test(backtracking_as_lark),
        cmocka_unit_test(shared_rows),
        cmocka_unit_test(patched_rows),
        cmocka_unit_test(contextual_lexers_patched),
        cmocka_unit_test(backtracking_step_agrees_with_run),
        cmocka_unit_test(allocation_failures_are_clean),
        cmocka_unit_test(reference_small_sets),
        cmocka_unit_test(reference_java_corpus),
        cmocka_unit_test(prod_is_reachable_labels),
        cmocka_unit_test(golden_lexer_dump),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
