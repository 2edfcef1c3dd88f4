/*
 * The bundled Python grammar (grammars/python.lark) through the whole
 * front end: lexer, the indentation layer over the stream
 * (parser/postlex.c) and the LALR(1) tables. Each snippet's verdict was
 * checked against CPython 3.11 (`ast.parse`) when it was written; the
 * few that CPython rejects but the grammar accepts are marked SUPERSET
 * and documented in the grammar's header. The layer's terminals are
 * also compared with CPython's tokenizer on whole files by
 * tests/python_tokens.py.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <string.h>

#include "lexer/lexer.h"
#include "parser/bundled.h"
#include "parser/grammar.h"
#include "parser/lr.h"
#include "parser/postlex.h"

typedef struct python {
    gm_mem mem;
    gm_cfg *g;
    gm_lexer *lx;
    gm_lr_table *t;
} python;

static python py;

static int setup(void **state)
{
    (void)state;
    gm_mem_init(&py.mem, NULL, 0);
    size_t len;
    const char *text = gm_bundled_grammar("python", &len);
    assert_non_null(text);
    gm_error err;
    gm_limits limits;
    gm_limits_init_defaults(&limits);
    if (gm_grammar_load(&py.mem, "python.lark", text, len, NULL, &py.g, &err) != GM_OK ||
        gm_lexer_build(&py.mem, py.g->terminals, py.g->nterminals, &limits, NULL, NULL, &py.lx,
                       &err) != GM_OK ||
        gm_lalr_build(&py.mem, py.g, NULL, &py.t, &err) != GM_OK)
        fail_msg("%s", err.message);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    gm_lr_table_destroy(py.t);
    gm_lexer_destroy(py.lx);
    gm_cfg_destroy(py.g);
    assert_int_equal(atomic_load(&py.mem.used), 0);
    return 0;
}

typedef struct run {
    const uint8_t *text;
    gm_lr_node *top;
    gm_postlex_stream layer;
    bool rejected;
    bool layer_error;
} run;

static gm_status feed(run *r, const uint32_t *terms, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        gm_lr_node *next;
        gm_status st = gm_lr_feed(py.t, &py.mem, r->top, terms[i], &next);
        if (st != GM_OK) {
            r->rejected = true;
            return st;
        }
        gm_lr_node_release(&py.mem, r->top);
        r->top = next;
    }
    return GM_OK;
}

static gm_status on_lexeme(void *ud, const gm_lexeme *lx)
{
    run *r = ud;
    if (py.g->terminals[lx->terminal].ignored)
        return GM_OK;
    const uint32_t *terms;
    size_t n;
    gm_error err;
    if (gm_postlex_stream_feed(&r->layer, lx->terminal, r->text + lx->start, lx->end - lx->start,
                               &terms, &n, &err) != GM_OK) {
        r->layer_error = true;
        return GM_ERR_REJECTED;
    }
    return feed(r, terms, n);
}

/* Whether src parses; *why says how it failed ("lexer", "layer", "parser"). */
static bool parses(const char *src, const char **why)
{
    run r;
    memset(&r, 0, sizeof r);
    r.text = (const uint8_t *)src;
    r.top = gm_lr_stack_new(&py.mem);
    assert_non_null(r.top);
    gm_postlex_stream_init(&r.layer, &py.g->postlex);
    size_t off;
    gm_error err;
    gm_status st = gm_lexer_run(py.lx, r.text, strlen(src), on_lexeme, &r, &off, &err);
    bool ok = false;
    *why = r.layer_error ? "layer" : r.rejected ? "parser" : "lexer";
    if (st == GM_OK) {
        const uint32_t *terms;
        size_t n;
        gm_postlex_stream_end(&r.layer, &terms, &n);
        ok = feed(&r, terms, n) == GM_OK && gm_lr_accepts(py.t, r.top);
        *why = "parser";
    }
    gm_lr_node_release(&py.mem, r.top);
    return ok;
}

typedef struct snippet {
    const char *src;
    const char *fails; /* NULL: parses; else how it fails: "lexer", "layer" or "parser" */
} snippet;

static void check_snippets(const snippet *s, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const char *why;
        bool ok = parses(s[i].src, &why);
        if (ok == !s[i].fails && (ok || !strcmp(why, s[i].fails)))
            continue;
        print_error("snippet %zu: %s, expected %s%s:\n%s\n", i, ok ? "parses" : why,
                    s[i].fails ? "a failure in the " : "it to parse", s[i].fails ? s[i].fails : "",
                    s[i].src);
        bad++;
    }
    assert_int_equal(bad, 0);
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

static void tables(void **state)
{
    (void)state;
    const gm_postlex *pl = &py.g->postlex;
    assert_true(pl->indentation);
    assert_string_equal(py.g->names[pl->newline], "_NEWLINE");
    assert_string_equal(py.g->names[pl->indent], "_INDENT");
    assert_string_equal(py.g->names[pl->dedent], "_DEDENT");
    int brackets = 0;
    for (uint32_t i = 0; i < py.g->nterminals; i++)
        brackets += pl->bracket[i] != 0;
    assert_int_equal(brackets, 6);
    assert_int_equal(py.t->nconflicts, 0);
    print_message("python.lark: %u terminals, %u nonterminals, %u productions, %u LALR(1) states\n",
                  py.g->nterminals, py.g->nnonterminals, py.g->nprods, py.t->nstates);
}

static void indentation_and_lines(void **state)
{
    (void)state;
    static const snippet s[] = {
        {"", NULL},
        {"\n\n", NULL},
        {"x = 1\n", NULL},
        {"x = 1", NULL},                                   /* no line end at the end */
        {"if a:\n    b\nelse:\n    c\n", NULL},
        {"if a:\n    b\n  c\n", "layer"},                   /* unindent to no level */
        {"if a:\nb\n", "parser"},                           /* expected an indent */
        {"a\n    b\n", "parser"},                           /* unexpected indent */
        {"def f():\n    if a:\n        return 1", NULL},  /* dedents at the end */
        {"def f():\n\tif a:\n\t\treturn 1\n\treturn 2\n", NULL},
        {"def f():\n  x = 1\n\n  # comment at another width\n      \n  y = 2\n", NULL},
        {"if a:  # comment\n    b\n", NULL},
        {"if a:\n    b\n# last line is a comment", NULL},
        {"x = 1  # comment without a line end", NULL},
        {"# only a comment", NULL},
        {"x = [1,\n  2,\n        3]\n", NULL},              /* implicit line joining */
        {"f(a,  # comment\n  b)\n", NULL},
        {"x = 1 + \\\n    2\n", NULL},                       /* explicit continuation */
        {"if a and \\\n        b:\n    pass\n", NULL},
        {"x = (1,\n", "parser"},
        {"x = 1\r\ny = 2\r\n", NULL},
        {"class A: pass", NULL},
        {"if a: b\nelif c: d\nelse: e", NULL},
        {"try:\n    a\nexcept E:\n    b\nelse: c\nfinally: d", NULL},
        {"x = 1; y = 2;\n", NULL},
        {"x = 1;; y = 2\n", "parser"},
        {"while a:\n    pass\nelse:\n    pass\n", NULL},
    };
    check_snippets(s, COUNT(s));
}

static void soft_keywords(void **state)
{
    (void)state;
    static const snippet s[] = {
        {"match x:\n    case 1:\n        pass\n", NULL},
        {"match = 1\nmatch.group(0)\nmatch(x)\nmatch[0] = 2\nprint(match, case)\n", NULL},
        {"match: int = 1\nmatch += 1\nmatch, b = 1, 2\n", NULL},
        {"case = 1\n_ = case\n", NULL},
        {"re.match(p, s)\ndef match(case): return case\n", NULL},
        {"match (x):\n    case _:\n        pass\n", NULL},          /* read as the call match(x) */
        {"match -x:\n    case _: pass\n", NULL},
        {"match [a, b]:\n    case [x, y]: pass\n", NULL},
        {"match *a, b:\n    case _: pass\n", NULL},
        {"match a, b:\n    case (1, 2) | [3, 4]: pass\n", NULL},
        {"match x:\n    case {\"k\": v, **rest}: pass\n    case Point(x=0, y=0): pass\n"
         "    case [1, *others]: pass\n    case str() | bytes() as s if s: pass\n"
         "    case -1 | 1.5 | 2+3j | \"s\" \"t\" | None | True | a.b.c: pass\n",
         NULL},
        {"match x:\n    case 1: pass\n    case _:\n        match = 2", NULL},
        {"match x:\n    pass\n", "parser"},                      /* only cases in a match body */
        {"match x:\n    case 1: pass\nx = case\n", NULL},
        {"match x\n", "parser"},                                 /* two names */
        {"match not x:\n    case _: pass\n", "parser"}, /* CPython accepts it: see the grammar */
    };
    check_snippets(s, COUNT(s));
}

static void statements_and_expressions(void **state)
{
    (void)state;
    static const snippet s[] = {
        {"@decorator\n@d.e(f)[g]\nclass A(B, metaclass=M):\n    x: int = 3\n    def f(self) -> None: ...\n",
         NULL},
        {"async def f():\n    async with a as b, c:\n        await x\n    async for y in z: pass\n"
         "    return [y async for y in z]\n",
         NULL},
        {"def f(a, b=1, /, c=2, *args, d, e=3, **kw): pass\n", NULL},
        {"def f(a, /): pass\ndef g(*, a): pass\ndef h(*a: *Ts): pass\n", NULL},
        {"def f(a=1, b): pass\n", "parser"},
        {"def f(*): pass\n", "parser"},
        {"def f(**k, a): pass\n", "parser"},
        {"lambda: 0\nlambda x, *y, z=1, **w: x\nf = lambda a, /, b: a\n", NULL},
        {"f(a, *b, c=1, *d, **e, g=2)\nf(x for x in y)\n", NULL},
        {"f(a=1, b)\n", "parser"},
        {"f(**a, *b)\n", "parser"},
        {"if (n := len(a)) > 10: pass\n[y := f(x), y ** 2]\n", NULL},
        {"a[1:2, ::3, *b]\na[:]\na[x:=1]\n", NULL},
        {"x = *a, *b\nfor x in *a, *b: pass\nreturn_ = [*a, *b]\n", NULL},
        {"x = {**a, 'b': 1}\ny = {*a, 1}\nz = {k: v for k, v in d.items() if k}\n", NULL},
        {"try:\n    pass\nexcept* ValueError as e:\n    pass\n", NULL},
        {"with (open(a) as f, open(b) as g,):\n    pass\n", NULL},
        {"with (a, b):\n    pass\nwith (yield x) as y: pass\n", NULL},
        {"with a as (b, c): pass\n", NULL},
        {"from . import a\nfrom .. import b\nfrom ...c.d import (e as f, g,)\nimport h.i as j\n",
         NULL},
        {"from a import b,\n", "parser"},
        {"global a, b\nnonlocal c\ndel a, b[0], c.d\nassert x, 'm'\nraise E from e\n", NULL},
        {"x = yield\ny = yield from z\nprint(*a, sep='', file=f)\nprint >>f, x\n", NULL},
        {"a if b else c if d else e\nnot a is not b\na < b <= c != d in e not in f is g\n", NULL},
        {"-x ** -y\n~a | b ^ c & d << e >> f + g - h * i @ j / k // l % m\n", NULL},
        {"x = ...\ny = None, True, False\n", NULL},
        {"a, b: int = 1\n", "parser"},
        {"a, b += 1\n", "parser"},
        {"x = = 1\n", "parser"},
    };
    check_snippets(s, COUNT(s));
}

static void literals(void **state)
{
    (void)state;
    static const snippet s[] = {
        {"x = 0x_1F + 0o17 + 0b1010 + 1_000 + 1.5e-3 + .5 + 5. + 1j + 1.5J + 1e5j\n", NULL},
        {"s = 'a' \"b\" r'\\d' f'{x!r:>10}' F\"{d['k']}\" u'z'\nb = b'\\x00' rb\"x\" Br'y'\n", NULL},
        {"s = '''a\n'b' ''c'\n''' + \"\"\"\"x\" \"\"\"\n", NULL},
        {"s = '''a\\''''\n", NULL},
        {"s = 'don\\'t'\nt = \"line \\\n continued\"\n", NULL},
        {"s = 'unterminated\n", "lexer"},
        {"s = '''never closed\n", "lexer"},
        {"x = 1 if y else 2\n", NULL},
        {"x = 0x\n", "lexer"},
        {"x = $\n", "lexer"},
        {"caf\xc3\xa9 = \"\xe6\x97\xa5\xe6\x9c\xac\"\n", NULL},     /* non-ASCII names and strings */
    };
    check_snippets(s, COUNT(s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables),
        cmocka_unit_test(indentation_and_lines),
        cmocka_unit_test(soft_keywords),
        cmocka_unit_test(statements_and_expressions),
        cmocka_unit_test(literals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
