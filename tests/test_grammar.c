/*
 * Unit tests of the grammar front end (parser/grammar.h): each Lark
 * construct loaded and its cfg dump compared with the expected text; the
 * desugaring of ? * + [] ~ and groups (also checked by the set of lengths
 * the start rule derives); templates; terminal composition (the composed
 * pattern text); imports from the bundled common library and from files;
 * the %insert directive and the layer it configures (parser/postlex.h);
 * the indentation layer (%indent and Lark's PythonIndenter defaults);
 * warnings; the SynCode benchmark grammars (counts as Lark reports them);
 * limits; and allocation failure at every allocation of a load.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lexer/lexer.h"
#include "parser/bundled.h"
#include "parser/grammar.h"
#include "parser/lr.h"
#include "base/strbuf.h"

typedef struct warnings {
    int count;
    char first[GM_ERROR_MESSAGE_MAX];
} warnings;

static void on_warning(void *ud, const gm_error *w)
{
    warnings *ws = ud;
    if (ws->count++ == 0)
        snprintf(ws->first, sizeof ws->first, "%s", w->message);
}

/* Loads text; returns the cfg or NULL (err filled). */
static gm_cfg *load(gm_mem *m, const char *text, const char *start, warnings *ws, gm_error *err)
{
    gm_grammar_options opts = {0};
    opts.start = start;
    opts.warn = ws ? on_warning : NULL;
    opts.warn_ud = ws;
    gm_cfg *g = NULL;
    gm_status st = gm_grammar_load(m, "t.lark", text, strlen(text), &opts, &g, err);
    assert_true((st == GM_OK) == (g != NULL));
    return g;
}

static char *dump_of(const gm_cfg *g)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_strbuf b;
    gm_strbuf_init(&b, &m);
    gm_cfg_dump(g, &b);
    assert_false(b.failed);
    char *s = strdup(gm_strbuf_str(&b));
    gm_strbuf_free(&b);
    return s;
}

static void expect_dump(const char *text, const char *expected)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_cfg *g = load(&m, text, NULL, NULL, &err);
    if (!g)
        fail_msg("load failed: %s", err.message);
    char *d = dump_of(g);
    if (strcmp(d, expected)) {
        print_error("--- expected\n%s--- got\n%s", expected, d);
        fail();
    }
    free(d);
    gm_cfg_destroy(g);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* The first line of the error of loading text. */
static void expect_error(const char *text, gm_status code, const char *first_line)
{
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_cfg *g = load(&m, text, NULL, NULL, &err);
    if (g)
        fail_msg("loaded, expected: %s", first_line);
    char *nl = strchr(err.message, '\n');
    if (nl)
        *nl = '\0';
    assert_string_equal(err.message, first_line);
    assert_int_equal(err.code, code);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* ------------------------------------------------------------------------ */

static void rules_literals_and_terminals(void **state)
{
    (void)state;
    /* the same literal is one terminal; a terminal defined as that literal is used instead */
    expect_dump("start: \"(\" NAME \")\" | \"(\" \")\" | \"if\"\n"
                "NAME: /[a-z]+/\n"
                "IF: \"if\"\n",
                "%start start\n"
                "%terminals 4\n"
                "NAME: /[a-z]+/\n"
                "IF: \"if\"\n"
                "\"(\": \"(\"\n"
                "\")\": \")\"\n"
                "%rules 3\n"
                "start: \"(\" NAME \")\"\n"
                "start: \"(\" \")\"\n"
                "start: IF\n");
    /* a regex in a rule, the i flag, an empty alternative, comments, continuations */
    expect_dump("// a comment\n"
                "start: /[0-9]+/ \"x\"i  # another\n"
                "     | \\\n"
                "       /[0-9]+/\n"
                "\n"
                "     // between alternatives\n"
                "     |\n",
                "%start start\n"
                "%terminals 2\n"
                "/[0-9]+/: /[0-9]+/\n"
                "\"x\"i: \"x\"i\n"
                "%rules 3\n"
                "start: /[0-9]+/ \"x\"i\n"
                "start: /[0-9]+/\n"
                "start:\n");
}

static void literal_escapes(void **state)
{
    (void)state;
    /* Lark's eval_escaping: \n \t \xHH \uHHHH become characters, \\ one backslash,
       unknown escapes stay, \" a quote; in regexes \\ and \d stay, \/ is / */
    expect_dump("start: \"a\\n\\t\\x41\\u00e9\\\\\\d\\\"\" /a\\/b\\\\c\\d/\n",
                "%start start\n"
                "%terminals 2\n"
                "\"a\\n\\tA\\xc3\\xa9\\\\\\\\d\\\"\": \"a\\n\\tA\\xc3\\xa9\\\\\\\\d\\\"\"\n"
                "/a\\/b\\\\c\\d/: /a\\/b\\\\c\\d/\n"
                "%rules 1\n"
                "start: \"a\\n\\tA\\xc3\\xa9\\\\\\\\d\\\"\" /a\\/b\\\\c\\d/\n");
}

static void optionals_expand_inline(void **state)
{
    (void)state;
    /* x? and [x] become alternatives of the rule (Lark's inline expansion) */
    expect_dump("start: \"a\" \"b\"? [\"c\" | \"d\"] \"e\"\n",
                "%start start\n"
                "%terminals 5\n"
                "\"a\": \"a\"\n"
                "\"b\": \"b\"\n"
                "\"c\": \"c\"\n"
                "\"d\": \"d\"\n"
                "\"e\": \"e\"\n"
                "%rules 6\n"
                "start: \"a\" \"b\" \"c\" \"e\"\n"
                "start: \"a\" \"b\" \"d\" \"e\"\n"
                "start: \"a\" \"b\" \"e\"\n"
                "start: \"a\" \"c\" \"e\"\n"
                "start: \"a\" \"d\" \"e\"\n"
                "start: \"a\" \"e\"\n");
    /* identical productions are kept once */
    expect_dump("start: \"a\"? \"a\"?\n",
                "%start start\n"
                "%terminals 1\n"
                "\"a\": \"a\"\n"
                "%rules 3\n"
                "start: \"a\" \"a\"\n"
                "start: \"a\"\n"
                "start:\n");
}

static void repetition_helpers(void **state)
{
    (void)state;
    /* x+ and x* share one left-recursive helper per expanded x, across rules */
    expect_dump("start: a (\"x\" | \"y\")+ b\n"
                "a: (\"x\" | \"y\")*\n"
                "b: \"z\" (\",\" \"z\")* \",\"?\n",
                "%start start\n"
                "%terminals 4\n"
                "\"x\": \"x\"\n"
                "\"y\": \"y\"\n"
                "\"z\": \"z\"\n"
                "\",\": \",\"\n"
                "%rules 13\n"
                "start: a __start_plus_0 b\n"
                "a: __start_plus_0\n"
                "a:\n"
                "b: \"z\" __b_star_1 \",\"\n"
                "b: \"z\" __b_star_1\n"
                "b: \"z\" \",\"\n"
                "b: \"z\"\n"
                "__start_plus_0: \"x\"\n"
                "__start_plus_0: \"y\"\n"
                "__start_plus_0: __start_plus_0 \"x\"\n"
                "__start_plus_0: __start_plus_0 \"y\"\n"
                "__b_star_1: \",\" \"z\"\n"
                "__b_star_1: __b_star_1 \",\" \"z\"\n");
    expect_dump("start: \"a\"~2 \"b\"~0..2\n",
                "%start start\n"
                "%terminals 2\n"
                "\"a\": \"a\"\n"
                "\"b\": \"b\"\n"
                "%rules 3\n"
                "start: \"a\" \"a\"\n"
                "start: \"a\" \"a\" \"b\"\n"
                "start: \"a\" \"a\" \"b\" \"b\"\n");
}

/* The lengths (up to max) of the terminal strings the start rule derives. */
static void derivable_lengths(const gm_cfg *g, unsigned max, unsigned char *out)
{
    uint32_t nn = g->nnonterminals;
    /* can[n * (max+1) + L]: nonterminal n derives a string of length L */
    unsigned char *can = calloc((size_t)nn * (max + 1), 1);
    unsigned char *tmp = malloc(max + 1), *next = malloc(max + 1);
    assert_non_null(can);
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint32_t k = 0; k < g->nprods; k++) {
            const gm_production *p = &g->prods[k];
            memset(tmp, 0, max + 1);
            tmp[0] = 1;
            for (uint32_t i = 0; i < p->len; i++) {
                gm_sym s = g->rhs[p->rhs + i];
                memset(next, 0, max + 1);
                for (unsigned a = 0; a <= max; a++) {
                    if (!tmp[a])
                        continue;
                    if (gm_cfg_is_terminal(g, s)) {
                        if (a + 1 <= max)
                            next[a + 1] = 1;
                    } else {
                        for (unsigned b = 0; a + b <= max; b++)
                            if (can[(size_t)(s - g->nterminals) * (max + 1) + b])
                                next[a + b] = 1;
                    }
                }
                memcpy(tmp, next, max + 1);
            }
            unsigned char *row = can + (size_t)(p->lhs - g->nterminals) * (max + 1);
            for (unsigned a = 0; a <= max; a++)
                if (tmp[a] && !row[a])
                    row[a] = 1, changed = 1;
        }
    }
    memcpy(out, can + (size_t)(g->start - g->nterminals) * (max + 1), max + 1);
    free(can);
    free(tmp);
    free(next);
}

static void large_repetitions_keep_the_language(void **state)
{
    (void)state;
    /* counts of 50 and more are split into helpers (Lark's _generate_repeats) */
    static const unsigned ranges[][2] = {{50, 50}, {0, 60}, {3, 77}, {64, 130}, {7, 200},
                                         {123, 123}, {1, 51}};
    for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        char text[64];
        snprintf(text, sizeof text, "start: \"a\"~%u..%u\n", ranges[r][0], ranges[r][1]);
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_error err;
        gm_cfg *g = load(&m, text, NULL, NULL, &err);
        assert_non_null(g);
        unsigned char len[260];
        derivable_lengths(g, 259, len);
        for (unsigned k = 0; k < 260; k++)
            if ((len[k] != 0) != (k >= ranges[r][0] && k <= ranges[r][1]))
                fail_msg("%s: length %u %s", text, k, len[k] ? "derived" : "missing");
        gm_cfg_destroy(g);
    }
}

static void aliases_modifiers_priorities(void **state)
{
    (void)state;
    expect_dump("start: expr\n"
                "?expr: expr \"+\" term -> add\n"
                "     | term\n"
                "!term.3: \"(\" expr \")\" | _num\n"
                "_num.-1: NUM\n"
                "NUM.2: /[0-9]+/\n",
                "%start start\n"
                "%terminals 4\n"
                "NUM: /[0-9]+/ %priority 2\n"
                "\"+\": \"+\"\n"
                "\"(\": \"(\"\n"
                "\")\": \")\"\n"
                "%rules 6\n"
                "start: expr\n"
                "?expr: expr \"+\" term -> add\n"
                "?expr: term\n"
                "!term: \"(\" expr \")\" %priority 3\n"
                "!term: _num %priority 3\n"
                "_num: NUM %priority -1\n");
}

static void templates_are_instantiated(void **state)
{
    (void)state;
    /* one rule per instance, named by the arguments; instances nest */
    expect_dump("start: _sep{item, \",\"} | _sep{_sep{item, \";\"}, \",\"}\n"
                "_sep{it, sep}: it (sep it)*\n"
                "item: \"x\"\n",
                "%start start\n"
                "%terminals 3\n"
                "\",\": \",\"\n"
                "\";\": \";\"\n"
                "\"x\": \"x\"\n"
                "%rules 15\n"
                "start: _sep{item,\",\"}\n"
                "start: _sep{_sep{item,\";\"},\",\"}\n"
                "item: \"x\"\n"
                "_sep{item,\",\"}: item ___sep{item,\",\"}_star_0\n"
                "_sep{item,\",\"}: item\n"
                "_sep{item,\";\"}: item ___sep{item,\";\"}_star_1\n"
                "_sep{item,\";\"}: item\n"
                "_sep{_sep{item,\";\"},\",\"}: _sep{item,\";\"} "
                "___sep{_sep{item,\";\"},\",\"}_star_2\n"
                "_sep{_sep{item,\";\"},\",\"}: _sep{item,\";\"}\n"
                "___sep{item,\",\"}_star_0: \",\" item\n"
                "___sep{item,\",\"}_star_0: ___sep{item,\",\"}_star_0 \",\" item\n"
                "___sep{item,\";\"}_star_1: \";\" item\n"
                "___sep{item,\";\"}_star_1: ___sep{item,\";\"}_star_1 \";\" item\n"
                "___sep{_sep{item,\";\"},\",\"}_star_2: \",\" _sep{item,\";\"}\n"
                "___sep{_sep{item,\";\"},\",\"}_star_2: ___sep{_sep{item,\";\"},\",\"}_star_2 "
                "\",\" _sep{item,\";\"}\n");
}

static void terminal_composition(void **state)
{
    (void)state;
    /* single literal/regex/terminal keeps its pattern and literal-ness; priorities are own */
    expect_dump("start: A B C D E F G H\n"
                "A: \"if\"\n"
                "B.3: A\n"
                "C: /[a-z]+/i\n"
                "D: \"a\"i \"b\" (C | \".\")+ \"x\"~2..3 [\"-\"]\n"
                "E: /a|b/ \"c\" /d/ \"e\"*\n"
                "F: (\"0\"..\"9\")~4 \"é\"..\"ü\"\n"
                "G: /a # comment\n"
                "      b/x \"c\"\n"
                "H: /x/s | /y/mu | \"ab\"\n",
                "%start start\n"
                "%terminals 8\n"
                "A: \"if\"\n"
                "B: \"if\" %priority 3\n"
                "C: /[a-z]+/i\n"
                "D: /(?i:a)b(?:(?:(?i:[a-z]+)|\\.))+(?:x){2,3}(?:\\-)?/\n"
                "E: /a|bcd(?:e)*/\n"
                "F: /(?:[0-9]){4}[\xc3\xa9-\xc3\xbc]/\n"
                "G: /(?x:a # comment\\n      b)c/\n"
                "H: /(?:ab|(?s:x)|(?m:(?u:y)))/\n"
                "%rules 1\n"
                "start: A B C D E F G H\n");
    /* a rule literal equal to a composed terminal's pattern is not that terminal */
    expect_dump("start: AB \"ab\"\nAB: \"a\" \"b\"\n",
                "%start start\n"
                "%terminals 2\n"
                "AB: /ab/\n"
                "\"ab\": \"ab\"\n"
                "%rules 1\n"
                "start: AB \"ab\"\n");
}

static void imports(void **state)
{
    (void)state;
    /* dependencies of imported terminals are folded in; -> renames; (A, B) imports several;
       the imports of one file are merged and come in that file's order */
    expect_dump("%import common.SIGNED_INT -> NUM\n"
                "%import common (WS_INLINE, CNAME)\n"
                "start: NUM CNAME\n"
                "%ignore WS_INLINE\n",
                "%start start\n"
                "%terminals 3\n"
                "NUM: /(?:(?:\\+|\\-))?(?:[0-9])+/\n"
                "CNAME: /(?:(?:[A-Z]|[a-z])|_)(?:(?:(?:[A-Z]|[a-z])|[0-9]|_))*/\n"
                "WS_INLINE: /(?:(?:\\ |\\t))+/ %ignore\n"
                "%rules 1\n"
                "start: NUM CNAME\n");
    /* %override and %extend, %declare, %ignore of a pattern */
    expect_dump("%import common.INT\n"
                "%override INT: /[1-9][0-9]*/\n"
                "start: INT | x | _INDENT\n"
                "x: \"a\"\n"
                "%extend x: \"b\"\n"
                "%declare _INDENT\n"
                "%ignore \" \" | \"\\t\"\n",
                "%start start\n"
                "%terminals 5\n"
                "INT: /[1-9][0-9]*/\n"
                "_INDENT: %declare\n"
                "__IGNORE_0: /(?:\\ |\\\\t)/ %ignore\n"
                "\"b\": \"b\"\n"
                "\"a\": \"a\"\n"
                "%rules 5\n"
                "start: INT\n"
                "start: x\n"
                "start: _INDENT\n"
                "x: \"b\"\n"
                "x: \"a\"\n");
}

static void file_imports(void **state)
{
    (void)state;
    char dir[] = "/tmp/gm_grammar_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], main_path[256];
    snprintf(path, sizeof path, "%s/lib.lark", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("list: item (\",\" item)*\nitem: NAME | _num\n_num: NUM\nNAME: /[a-z]+/\n"
          "%import common.INT -> NUM\n",
          f);
    fclose(f);
    snprintf(main_path, sizeof main_path, "%s/main.lark", dir);
    f = fopen(main_path, "w");
    assert_non_null(f);
    fputs("%import .lib.list\nstart: list\n", f);
    fclose(f);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_cfg *g;
    gm_error err;
    assert_int_equal(gm_grammar_load_file(&m, main_path, NULL, &g, &err), GM_OK);
    char *d = dump_of(g);
    /* the imported rule keeps its name; what it needs is mangled with the module's name;
       a file's imports come before its own definitions */
    assert_string_equal(d, "%start start\n"
                           "%terminals 3\n"
                           "lib__NUM: /(?:[0-9])+/\n"
                           "lib__NAME: /[a-z]+/\n"
                           "\",\": \",\"\n"
                           "%rules 8\n"
                           "list: lib__item __list_star_0\n"
                           "list: lib__item\n"
                           "lib__item: lib__NAME\n"
                           "lib__item: _lib__num\n"
                           "_lib__num: lib__NUM\n"
                           "start: list\n"
                           "__list_star_0: \",\" lib__item\n"
                           "__list_star_0: __list_star_0 \",\" lib__item\n");
    /* locations point into the imported file */
    assert_int_equal(g->nfiles, 3);
    assert_string_equal(g->files[0], main_path);
    assert_string_equal(g->files[1], path);
    assert_ptr_equal(g->prods[0].loc.file, g->files[1]);
    assert_int_equal(g->prods[0].loc.line, 1);
    assert_int_equal(g->prods[0].loc.column, 7);
    free(d);
    gm_cfg_destroy(g);
    /* the option for untrusted text turns file imports off */
    gm_grammar_options opts = {0};
    opts.no_file_imports = true;
    assert_int_equal(gm_grammar_load_file(&m, main_path, &opts, &g, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "importing grammar files is disabled"));
    /* a file importing itself */
    f = fopen(main_path, "w");
    assert_non_null(f);
    fputs("%import .main.start\n", f);
    fclose(f);
    assert_int_equal(gm_grammar_load_file(&m, main_path, NULL, &g, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "import cycle"));
    remove(path);
    remove(main_path);
    rmdir(dir);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* The terminal id named name in g (fails the test when there is none). */
static uint32_t term_id(const gm_cfg *g, const char *name)
{
    for (uint32_t i = 0; i < g->nterminals; i++)
        if (!strcmp(g->names[i], name))
            return i;
    fail_msg("no terminal %s", name);
    return 0;
}

/* Runs the names of lexer terminals through the layer; the parser's terminals, space-separated. */
static void run_layer(const gm_cfg *g, const char *const *in, char *out, size_t cap)
{
    uint8_t flag = 0;
    size_t k = 0;
    out[0] = '\0';
    for (; *in; in++) {
        uint32_t fed[1];
        uint32_t n = gm_postlex_map(&g->postlex, term_id(g, *in), &flag, fed);
        assert_true(n <= 1);
        for (uint32_t i = 0; i < n; i++)
            k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? " " : "", g->names[fed[i]]);
    }
    uint32_t fed[1];
    if (gm_postlex_end(&g->postlex, flag, fed))
        k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? " " : "", g->names[fed[0]]);
    snprintf(out + k, cap - k, "%s", k ? " $end" : "$end");
}

static void semicolon_insertion(void **state)
{
    (void)state;
    /* literals map to the terminal a rule uses (a named one when it has that pattern) or
       to a new one; line ends are kept though no rule uses them, and not warned about */
    const char *text = "start: (stmt \";\")*\n"
                       "stmt: NAME | \"return\" NAME? | \"{\" start \"}\" | \"(\" NAME RPAR\n"
                       "NAME: /[a-z]+/\n"
                       "SEMI: \";\"\n"
                       "RPAR: \")\"\n"
                       "NEWLINE: /\\n/\n"
                       "ML_COMMENT: /\\/\\*[^\\n]*\\n(.|\\n)*\\*\\//\n"
                       "%ignore \" \"\n"
                       "%insert \";\" at NEWLINE ML_COMMENT after NAME \"}\" \")\" \"break\" "
                       "\"return\"\n";
    expect_dump(text, "%start start\n"
                      "%terminals 11\n"
                      "NAME: /[a-z]+/\n"
                      "SEMI: \";\"\n"
                      "RPAR: \")\"\n"
                      "NEWLINE: /\\n/\n"
                      "ML_COMMENT: /\\/\\*[^\\n]*\\n(.|\\n)*\\*\\//\n"
                      "__IGNORE_0: \" \" %ignore\n"
                      "\"return\": \"return\"\n"
                      "\"{\": \"{\"\n"
                      "\"}\": \"}\"\n"
                      "\"(\": \"(\"\n"
                      "\"break\": \"break\"\n"
                      "%insert SEMI at NEWLINE ML_COMMENT after NAME RPAR \"return\" \"}\" "
                      "\"break\"\n"
                      "%rules 9\n"
                      "start: __start_star_0\n"
                      "start:\n"
                      "stmt: NAME\n"
                      "stmt: \"return\" NAME\n"
                      "stmt: \"return\"\n"
                      "stmt: \"{\" start \"}\"\n"
                      "stmt: \"(\" NAME RPAR\n"
                      "__start_star_0: stmt SEMI\n"
                      "__start_star_0: __start_star_0 stmt SEMI\n");
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    warnings ws = {0};
    gm_cfg *g = load(&m, text, NULL, &ws, &err);
    assert_non_null(g);
    assert_int_equal(ws.count, 0);
    const gm_postlex *pl = &g->postlex;
    assert_true(pl->insertion);
    assert_int_equal(pl->nterminals, g->nterminals);
    assert_int_equal(pl->insert, term_id(g, "SEMI"));
    for (uint32_t i = 0; i < g->nterminals; i++) {
        const char *nm = g->names[i];
        assert_int_equal(pl->at[i], !strcmp(nm, "NEWLINE") || !strcmp(nm, "ML_COMMENT"));
        assert_int_equal(pl->after[i], !strcmp(nm, "NAME") || !strcmp(nm, "RPAR") ||
                                           !strcmp(nm, "\"return\"") || !strcmp(nm, "\"}\"") ||
                                           !strcmp(nm, "\"break\""));
    }
    /* the layer: a line end after a trigger becomes SEMI, other line ends vanish, an explicit
       SEMI clears the flag, end of input inserts after a trigger */
    char out[512];
    static const char *const a[] = {"NAME", "NEWLINE", "NEWLINE", "\"return\"", "ML_COMMENT",
                                    "\"{\"", "NEWLINE", "NAME", "SEMI", "NEWLINE", "\"}\"", NULL};
    run_layer(g, a, out, sizeof out);
    assert_string_equal(out, "NAME SEMI \"return\" SEMI \"{\" NAME SEMI \"}\" SEMI $end");
    static const char *const b[] = {"\"(\"", "NAME", "RPAR", "SEMI", NULL};
    run_layer(g, b, out, sizeof out);
    assert_string_equal(out, "\"(\" NAME RPAR SEMI $end");
    gm_cfg_destroy(g);
    /* a grammar without the directive has no layer */
    g = load(&m, "start: NAME\nNAME: /[a-z]+/\n", NULL, NULL, &err);
    assert_non_null(g);
    assert_false(g->postlex.insertion);
    assert_null(g->postlex.at);
    assert_null(g->postlex.after);
    gm_cfg_destroy(g);

    /* %insert in an imported grammar has no effect (as %ignore) */
    char dir[] = "/tmp/gm_grammar_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], main_path[256];
    snprintf(path, sizeof path, "%s/lib.lark", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("item: NAME \";\"\nNAME: /[a-z]+/\nNL: /\\n/\n%insert \";\" at NL after NAME\n", f);
    fclose(f);
    snprintf(main_path, sizeof main_path, "%s/main.lark", dir);
    f = fopen(main_path, "w");
    assert_non_null(f);
    fputs("%import .lib.item\nstart: item+\n", f);
    fclose(f);
    assert_int_equal(gm_grammar_load_file(&m, main_path, NULL, &g, &err), GM_OK);
    assert_false(g->postlex.insertion);
    gm_cfg_destroy(g);
    remove(path);
    remove(main_path);
    rmdir(dir);
    assert_int_equal(atomic_load(&m.used), 0);

    /* errors name the item */
    expect_error("start: NAME \";\"\nNAME: /[a-z]+/\nNL: /\\n/\n%insert \";\" at NL after X\n",
                 GM_ERR_GRAMMAR, "t.lark:4:25: undefined terminal 'X' in %insert");
    expect_error("start: NAME \";\"\nNAME: /[a-z]+/\n%insert \";\" at NAME after NAME\n",
                 GM_ERR_GRAMMAR,
                 "t.lark:1:8: terminal 'NAME' is a line end of %insert (the parser never sees "
                 "it), so rule 'start' cannot use it");
}

static void warnings_for_unused_definitions(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    warnings ws = {0, ""};
    gm_cfg *g = load(&m,
                     "start: A\nA: \"a\"\nB: \"b\"\nunused: A\n%import common.WS\n"
                     "_t{x}: x\n",
                     NULL, &ws, &err);
    assert_non_null(g);
    assert_int_equal(ws.count, 4);
    char *nl = strchr(ws.first, '\n');
    *nl = '\0';
    assert_string_equal(ws.first, "t.lark:4:1: warning: rule 'unused' is unused (not reachable "
                                  "from 'start')");
    gm_cfg_destroy(g);
    /* another start symbol */
    ws.count = 0;
    g = load(&m, "start: A\nA: \"a\"\nother: \"b\"\n", "other", &ws, &err);
    assert_non_null(g);
    assert_string_equal(g->names[g->start], "other");
    assert_int_equal(ws.count, 1); /* start (A is used by start, even if start is not) */
    gm_cfg_destroy(g);
}

/* note [indent directive]: the layer over the cfg's terminal ids. */
static void indentation_layer(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    /* literals are the terminals rules use: LPAR for "(", anonymous "[" and "]" */
    const char *text = "start: (_NL | stmt)*\n"
                       "stmt: NAME LPAR \")\" _NL | NAME \"[\" \"]\" _NL\n"
                       "    | NAME \":\" _NL _IN stmt+ _OUT\n"
                       "NAME: /[a-z]+/\n"
                       "LPAR: \"(\"\n"
                       "_NL: /(\\r?\\n[\\t ]*)+/\n"
                       "%ignore \" \"\n"
                       "%declare _IN _OUT\n"
                       "%indent _NL _IN _OUT \"(\" \")\" \"[\" \"]\"\n";
    gm_cfg *g = load(&m, text, NULL, NULL, &err);
    if (!g)
        fail_msg("%s", err.message);
    const gm_postlex *pl = &g->postlex;
    assert_true(pl->indentation);
    assert_false(pl->insertion);
    assert_int_equal(pl->nterminals, g->nterminals);
    assert_string_equal(g->names[pl->newline], "_NL");
    assert_string_equal(g->names[pl->indent], "_IN");
    assert_string_equal(g->names[pl->dedent], "_OUT");
    assert_int_equal(pl->tab_width, 8);
    int open = 0, close = 0;
    for (uint32_t i = 0; i < g->nterminals; i++) {
        const char *n = g->names[i];
        int want = !strcmp(n, "LPAR") || !strcmp(n, "\"[\"") ? 1
                   : !strcmp(n, "\")\"") || !strcmp(n, "\"]\"") ? -1 : 0;
        assert_int_equal(pl->bracket[i], want);
        open += pl->bracket[i] == 1;
        close += pl->bracket[i] == -1;
    }
    assert_int_equal(open, 2);
    assert_int_equal(close, 2);
    char *d = dump_of(g);
    assert_non_null(strstr(d, "\n%indent _NL _IN _OUT open LPAR \"[\" close \")\" \"]\" tab 8\n"));
    free(d);
    gm_cfg_destroy(g);

    /* no directive and no _INDENT/_DEDENT: no layer */
    g = load(&m, "start: \"a\"\n", NULL, NULL, &err);
    assert_non_null(g);
    assert_false(g->postlex.indentation);
    assert_null(g->postlex.bracket);
    gm_cfg_destroy(g);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* A grammar for Lark's PythonIndenter gets its defaults without a directive. */
static void lark_python_indenter_defaults(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    warnings ws = {0, ""};
    /* _NEWLINE wins over _NL; "{" "}" are not used: skipped without a warning */
    const char *text = "start: (_NEWLINE | stmt)*\n"
                       "stmt: NAME \"(\" \")\" _NEWLINE | NAME \"[\" \"]\" _NL\n"
                       "    | NAME \":\" _NEWLINE _INDENT stmt+ _DEDENT\n"
                       "NAME: /[a-z]+/\n"
                       "_NEWLINE: /(\\r?\\n[\\t ]*)+/\n"
                       "_NL: \";\"\n"
                       "%declare _INDENT _DEDENT\n";
    gm_cfg *g = load(&m, text, NULL, &ws, &err);
    if (!g)
        fail_msg("%s", err.message);
    assert_int_equal(ws.count, 0);
    char *d = dump_of(g);
    assert_non_null(strstr(d, "\n%indent _NEWLINE _INDENT _DEDENT open \"(\" \"[\" close \")\" \"]\" "
                              "tab 8\n"));
    free(d);
    gm_cfg_destroy(g);
    /* the SynCode grammar names its line end _NL */
    size_t len;
    char *py = gm_test_read_file(gm_test_shared_path("benchmarks/syncode-grammars/python_grammar.lark"),
                                 &len);
    gm_grammar_options opts = {0};
    assert_int_equal(gm_grammar_load(&m, "python_grammar.lark", py, len, &opts, &g, &err), GM_OK);
    free(py);
    d = dump_of(g);
    assert_non_null(strstr(d, "\n%indent _NL _INDENT _DEDENT open \"(\" \"[\" \"{\" close \")\" \"]\" "
                              "\"}\" tab 8\n"));
    free(d);
    gm_cfg_destroy(g);
    /* declared only one of the two: no layer */
    g = load(&m, "start: NAME _INDENT?\nNAME: /[a-z]+/\n%declare _INDENT\n", NULL, NULL, &err);
    assert_non_null(g);
    assert_false(g->postlex.indentation);
    gm_cfg_destroy(g);
    expect_error("start: \"a\"\n%indent _NL _IN _OUT\n", GM_ERR_GRAMMAR,
                 "t.lark:2:9: undefined terminal '_NL' in %indent");
    assert_int_equal(atomic_load(&m.used), 0);
}

static void count_warning(void *ud, const gm_error *w)
{
    (void)w;
    (*(int *)ud)++;
}

static void load_and_check_counts(const char *file, uint32_t nterm, uint32_t nnonterm,
                                  uint32_t nprods, int nwarn, uint32_t lr_states,
                                  int resolutions)
{
    size_t len;
    char *text = gm_test_read_file(gm_test_shared_path(file), &len);
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_grammar_options opts = {0};
    warnings ws = {0, ""};
    opts.warn = on_warning;
    opts.warn_ud = &ws;
    gm_cfg *g;
    gm_error err;
    gm_status st = gm_grammar_load(&m, file, text, len, &opts, &g, &err);
    if (st != GM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(g->nterminals, nterm);
    assert_int_equal(g->nnonterminals, nnonterm);
    assert_int_equal(g->nprods, nprods);
    assert_int_equal(ws.count, nwarn);
    /* and the LALR(1) automaton Lark builds from it: same states, same conflicts */
    gm_lalr_options lo = {0};
    int nres = 0;
    lo.conflicts = GM_CONFLICTS_LARK;
    lo.warn = count_warning;
    lo.warn_ud = &nres;
    gm_lr_table *t;
    if (gm_lalr_build(&m, g, &lo, &t, &err) != GM_OK)
        fail_msg("%s", err.message);
    assert_int_equal(t->nstates, lr_states);
    if (resolutions >= 0)
        assert_int_equal(nres, resolutions);
    gm_lr_table_destroy(t);
    gm_cfg_destroy(g);
    free(text);
    assert_int_equal(atomic_load(&m.used), 0);
}

static void syncode_benchmark_grammars(void **state)
{
    (void)state;
    /* Lark 1.2 reports 87/109/349/604, 98/145/366/596 and 94/127/520/752 terminals,
       nonterminals, BNF rules and LALR states (terminals without the two %declare'd ones
       of Python), with 15 and 1 conflicts for Java and Python: the same BNF */
    load_and_check_counts("benchmarks/syncode-grammars/go_grammar.lark", 87, 109, 349, 6, 604,
                          -1);
    load_and_check_counts("benchmarks/syncode-grammars/java_grammar.lark", 98, 145, 366, 0, 596,
                          15);
    load_and_check_counts("benchmarks/syncode-grammars/python_grammar.lark", 96, 127, 520, 4,
                          752, 1);
}

static void limits(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_grammar_options opts = {0};
    opts.limits.max_input_bytes = 10;
    gm_cfg *g;
    gm_error err;
    assert_int_equal(gm_grammar_load(&m, "t.lark", "start: \"abc\"\n", 13, &opts, &g, &err),
                     GM_ERR_LIMIT);
    /* brackets nested too deeply */
    char deep[600];
    size_t k = (size_t)snprintf(deep, sizeof deep, "start: ");
    for (int i = 0; i < 150; i++)
        deep[k++] = '(';
    deep[k++] = '"';
    deep[k++] = 'a';
    deep[k++] = '"';
    for (int i = 0; i < 150; i++)
        deep[k++] = ')';
    deep[k] = '\0';
    expect_error(deep, GM_ERR_LIMIT,
                 "t.lark:1:108: brackets nested deeper than 100 levels");
    /* exponential terminal composition */
    static char big[65536];
    k = (size_t)snprintf(big, sizeof big, "start: A40\nA0: \"ab\"\n");
    for (int i = 1; i <= 40; i++)
        k += (size_t)snprintf(big + k, sizeof big - k, "A%d: A%d A%d\n", i, i - 1, i - 1);
    opts.limits.max_input_bytes = 100000;
    assert_int_equal(gm_grammar_load(&m, "t.lark", big, k, &opts, &g, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "composed terminal pattern"));
    /* exponential expansion of optional items */
    k = (size_t)snprintf(big, sizeof big, "start:");
    for (int i = 0; i < 40; i++)
        k += (size_t)snprintf(big + k, sizeof big - k, " \"a\"? \"b\"?");
    expect_error(big, GM_ERR_LIMIT,
                 "t.lark:1:8: this expands to more than 4096 alternatives (or 250000 "
                 "symbols); move optional parts into rules of their own");
    /* many alternatives times a long sequence: the symbol count stops it early */
    k = (size_t)snprintf(big, sizeof big, "start: (");
    for (int i = 0; i < 2000; i++)
        k += (size_t)snprintf(big + k, sizeof big - k, "%s\"%d\"", i ? "|" : "", i);
    k += (size_t)snprintf(big + k, sizeof big - k, ")");
    for (int i = 0; i < 130; i++)
        k += (size_t)snprintf(big + k, sizeof big - k, " \"x\"");
    expect_error(big, GM_ERR_LIMIT,
                 "t.lark:1:8: this expands to more than 4096 alternatives (or 250000 "
                 "symbols); move optional parts into rules of their own");
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Every allocation of a load fails in turn: a clean error each time, nothing leaked. */
static void fail_each_allocation(const char *text)
{
    unsigned long total = 0;
    for (unsigned long n = 1;; n++) {
        gm_test_failing_alloc fa = {0, n, 0};
        gm_allocator al = gm_test_failing_allocator(&fa);
        gm_mem m;
        gm_mem_init(&m, &al, 0);
        gm_cfg *g;
        gm_error err;
        gm_status st = gm_grammar_load(&m, "t.lark", text, strlen(text), NULL, &g, &err);
        if (st == GM_OK) {
            assert_true(fa.count < n); /* no allocation failed */
            gm_cfg_destroy(g);
            assert_int_equal(fa.live, 0);
            total = n - 1;
            break;
        }
        if (st != GM_ERR_NOMEM)
            fail_msg("allocation %lu: %s (%s)", n, gm_status_name(st), err.message);
        assert_null(g);
        assert_int_equal(fa.live, 0);
        assert_int_equal(atomic_load(&m.used), 0);
    }
    assert_true(total > 20);
}

static void allocation_failures(void **state)
{
    (void)state;
    fail_each_allocation("%import common (WS, NUMBER, ESCAPED_STRING)\n"
                         "%ignore WS\n"
                         "start: _sep{value, \",\"} | obj\n"
                         "_sep{x, sep}: x (sep x)*\n"
                         "?value: NUMBER | ESCAPED_STRING | \"[\" [_sep{value, \",\"}] \"]\" -> list\n"
                         "obj: \"{\" (ESCAPED_STRING \":\" value)~0..2 \"}\"\n"
                         "%extend value: obj\n"
                         "NL: /\\n/\n"
                         "%insert \",\" at NL after NUMBER \"]\"\n");
    fail_each_allocation("start: (_NL | stmt)*\n"
                         "stmt: NAME \"(\" \")\" _NL | NAME \":\" _NL _INDENT stmt+ _DEDENT\n"
                         "NAME: /[a-z]+/\n"
                         "_NL: /(\\r?\\n[\\t ]*)+/\n"
                         "%declare _INDENT _DEDENT\n"
                         "%indent _NL _INDENT _DEDENT \"(\" \")\" \"{\" \"}\"\n");
    fail_each_allocation("start: (_NL | stmt)*\n"
                         "stmt: NAME \"(\" \")\" _NL | NAME \":\" _NL _INDENT stmt+ _DEDENT\n"
                         "NAME: /[a-z]+/\n"
                         "_NL: /(\\r?\\n[\\t ]*)+/\n"
                         "%declare _INDENT _DEDENT\n");
}

/* Writes s[0..n) as a JSON string. */
static void json_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/*
 * Differential test of grammars/common.lark: every terminal's composed
 * pattern must take, by maximal munch, the token Lark's own definition
 * takes with Python's re (tests/grammar/check_common.py).
 */
static void common_matches_lark(void **state)
{
    (void)state;
    static const char *names[] = {
        "DIGIT", "HEXDIGIT", "INT", "SIGNED_INT", "DECIMAL", "_EXP", "FLOAT", "SIGNED_FLOAT",
        "NUMBER", "SIGNED_NUMBER", "_STRING_INNER", "_STRING_ESC_INNER", "ESCAPED_STRING",
        "LCASE_LETTER", "UCASE_LETTER", "LETTER", "WORD", "CNAME", "WS_INLINE", "WS", "CR", "LF",
        "NEWLINE", "SH_COMMENT", "CPP_COMMENT", "C_COMMENT", "SQL_COMMENT"};
    size_t n = sizeof names / sizeof names[0];
    char text[2048];
    size_t k = (size_t)snprintf(text, sizeof text, "%%import common (");
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, "%s%s", i ? ", " : "", names[i]);
    k += (size_t)snprintf(text + k, sizeof text - k, ")\nstart:");
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(text + k, sizeof text - k, " %s", names[i]);
    snprintf(text + k, sizeof text - k, "\n");
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_cfg *g = load(&m, text, NULL, NULL, &err);
    if (!g)
        fail_msg("%s", err.message);
    assert_int_equal(g->nterminals, n);
    char path[] = "/tmp/gm_common_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputc('{', f);
    for (uint32_t i = 0; i < g->nterminals; i++) {
        const gm_terminal_spec *t = &g->terminals[i];
        fprintf(f, "%s\"%s\": {\"pattern\": ", i ? ", " : "", t->name);
        json_string(f, t->pattern, t->pattern_len);
        fprintf(f, ", \"literal\": %s, \"flags\": \"%s%s%s\"}", t->is_literal ? "true" : "false",
                t->flags & GM_RE_IGNORECASE ? "i" : "", t->flags & GM_RE_DOTALL ? "s" : "",
                t->flags & GM_RE_VERBOSE ? "x" : "");
    }
    fputs("}\n", f);
    fclose(f);
    gm_cfg_destroy(g);
    const char *py = getenv("PYTHON3");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' '%s' '%s'", py && *py ? py : "python3",
             gm_test_src_path("tests/grammar/check_common.py"), path);
    int rc = system(cmd);
    remove(path);
    assert_int_equal(rc, 0);
}

static void bundled_grammars(void **state)
{
    (void)state;
    size_t len;
    const char *common = gm_bundled_grammar("common", &len);
    assert_non_null(common);
    assert_int_equal(strlen(common), len);
    assert_null(gm_bundled_grammar("no such grammar", &len));
    assert_int_equal(len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rules_literals_and_terminals),
        cmocka_unit_test(literal_escapes),
        cmocka_unit_test(optionals_expand_inline),
        cmocka_unit_test(repetition_helpers),
        cmocka_unit_test(large_repetitions_keep_the_language),
        cmocka_unit_test(aliases_modifiers_priorities),
        cmocka_unit_test(templates_are_instantiated),
        cmocka_unit_test(terminal_composition),
        cmocka_unit_test(imports),
        cmocka_unit_test(file_imports),
        cmocka_unit_test(semicolon_insertion),
        cmocka_unit_test(warnings_for_unused_definitions),
        cmocka_unit_test(indentation_layer),
        cmocka_unit_test(lark_python_indenter_defaults),
        cmocka_unit_test(syncode_benchmark_grammars),
        cmocka_unit_test(limits),
        cmocka_unit_test(allocation_failures),
        cmocka_unit_test(common_matches_lark),
        cmocka_unit_test(bundled_grammars),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
