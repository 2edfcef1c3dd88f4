/*
 * Unit tests of the grammar IR (ir/ebnf.c): the builder and rule
 * index, fresh rule names, gm_ebnf_check (undefined rules, recursion
 * without a way out, empty languages, limits, warnings), gm_ebnf_print's
 * text, and allocation failures (every one reported, nothing leaked).
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ebnf.h"

typedef struct fixture {
    gm_mem mem;
    gm_ebnf g;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    gm_mem_init(&f->mem, NULL, 0);
    gm_ebnf_init(&f->g, &f->mem);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gm_ebnf_free(&f->g);
    assert_int_equal(atomic_load(&f->mem.used), 0);
    free(f);
    return 0;
}

static uint32_t lit(gm_ebnf *g, const char *s) { return gm_ebnf_add_bytes(g, s, strlen(s)); }

static uint32_t rule(gm_ebnf *g, const char *name) { return gm_ebnf_rule_get(g, name, strlen(name)); }

static uint32_t ref(gm_ebnf *g, const char *name) { return gm_ebnf_add_ref(g, rule(g, name)); }

static uint32_t range(gm_ebnf *g, uint32_t lo, uint32_t hi)
{
    gm_cpset s = {0};
    assert_int_equal(gm_cpset_add_range(g->mem, &s, lo, hi), 0);
    return gm_ebnf_add_set(g, &s);
}

static void define(gm_ebnf *g, const char *name, uint32_t body, uint32_t line)
{
    uint32_t r = rule(g, name);
    g->rules[r].body = body;
    g->rules[r].loc = (gm_srcloc){gm_ebnf_file(g, "t.ebnf"), line, 1};
}

static uint32_t seq2(gm_ebnf *g, uint32_t a, uint32_t b)
{
    uint32_t ids[2] = {a, b};
    return gm_ebnf_add_seq(g, ids, 2);
}

static uint32_t alt2(gm_ebnf *g, uint32_t a, uint32_t b)
{
    uint32_t ids[2] = {a, b};
    return gm_ebnf_add_alt(g, ids, 2);
}

static const char *printed(gm_ebnf *g, gm_strbuf *b)
{
    gm_strbuf_init(b, g->mem);
    gm_ebnf_print(g, b);
    assert_false(b->failed);
    return gm_strbuf_str(b);
}

static void test_builder(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    uint32_t a = lit(g, "a");
    assert_int_equal(g->nodes[a].kind, GM_EX_BYTES);
    assert_int_equal(g->nodes[a].count, 1);
    /* zero and one children collapse */
    uint32_t e = gm_ebnf_add_seq(g, NULL, 0);
    assert_int_equal(g->nodes[e].kind, GM_EX_EMPTY);
    uint32_t n = gm_ebnf_add_alt(g, NULL, 0);
    assert_int_equal(g->nodes[n].kind, GM_EX_NOTHING);
    assert_int_equal(gm_ebnf_add_seq(g, &a, 1), a);
    assert_int_equal(gm_ebnf_add_alt(g, &a, 1), a);
    uint32_t s = seq2(g, a, a); /* shared child */
    assert_int_equal(g->nodes[s].kind, GM_EX_SEQ);
    assert_int_equal(g->kids[g->nodes[s].first], a);
    assert_int_equal(g->kids[g->nodes[s].first + 1], a);
    uint32_t r = gm_ebnf_add_repeat(g, s, 2, GM_EX_INF);
    assert_int_equal(g->nodes[r].min, 2);
    assert_int_equal(g->nodes[r].max, GM_EX_INF);
    gm_cpset set = {0};
    assert_int_equal(gm_cpset_add_range(g->mem, &set, 'a', 'z'), 0);
    uint32_t cs = gm_ebnf_add_set(g, &set);
    assert_int_equal(set.n, 0); /* ownership taken */
    assert_null(set.r);
    assert_true(gm_cpset_has(&g->sets[g->nodes[cs].arg], 'q'));
    uint32_t bits[8] = {0};
    bits[0xff >> 5] |= 1u << (0xff & 31);
    uint32_t bs = gm_ebnf_add_byteset(g, bits);
    assert_int_equal(g->bytesets[g->nodes[bs].arg][7], 1u << 31);
    uint32_t t = gm_ebnf_add_token(g, "<|end|>", 7);
    assert_int_equal(g->nodes[t].kind, GM_EX_TOKEN);
    assert_memory_equal(g->bytes + g->nodes[t].first, "<|end|>", 7);
}

static void test_rules(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    assert_int_equal(gm_ebnf_rule_find(g, "x", 1), GM_EX_NONE);
    uint32_t x = rule(g, "x");
    assert_int_equal(rule(g, "x"), x);
    assert_int_equal(gm_ebnf_rule_find(g, "x", 1), x);
    assert_int_equal(g->rules[x].body, GM_EX_NONE);
    assert_int_equal(g->rules[x].lookahead, GM_EX_NONE);
    /* names may hold any bytes, NUL included */
    uint32_t odd = gm_ebnf_rule_get(g, "a\0b", 3);
    assert_int_not_equal(odd, x);
    assert_int_equal(gm_ebnf_rule_find(g, "a\0b", 3), odd);
    /* fresh names: the hint itself when free, then hint_1, hint_2... skipping taken ones */
    uint32_t h = gm_ebnf_fresh_rule(g, "h");
    assert_string_equal(g->rules[h].name, "h");
    rule(g, "h_2");
    assert_string_equal(g->rules[gm_ebnf_fresh_rule(g, "h")].name, "h_1");
    assert_string_equal(g->rules[gm_ebnf_fresh_rule(g, "h")].name, "h_3");
    assert_string_equal(g->rules[gm_ebnf_fresh_rule(g, "x")].name, "x_1");
    for (int i = 0; i < 1000; i++)
        assert_int_not_equal(gm_ebnf_fresh_rule(g, "many"), GM_EX_NONE);
    assert_int_not_equal(gm_ebnf_rule_find(g, "many_999", 8), GM_EX_NONE);
    /* file names are interned */
    const char *f1 = gm_ebnf_file(g, "a.gbnf");
    assert_ptr_equal(gm_ebnf_file(g, "a.gbnf"), f1);
    assert_ptr_not_equal(gm_ebnf_file(g, "b.gbnf"), f1);
}

/* ---- check ---- */

static gm_status check(gm_ebnf *g, gm_error *err)
{
    gm_error_clear(err);
    return gm_ebnf_check(g, NULL, err);
}

static void test_check_ok(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    gm_error err;
    /* left recursion, nullable rules and ambiguity are fine */
    define(g, "root", alt2(g, seq2(g, ref(g, "root"), lit(g, "a")), ref(g, "e")), 1);
    define(g, "e", alt2(g, gm_ebnf_add_empty(g), gm_ebnf_add_empty(g)), 2);
    g->root = rule(g, "root");
    assert_int_equal(check(g, &err), GM_OK);
}

static void test_check_no_root(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    gm_error err;
    assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "no root rule"));
    g->root = rule(g, "root");
    assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "root rule 'root' is not defined"));
}

static void test_check_undefined(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    gm_error err;
    define(g, "root", seq2(g, lit(g, "a"), ref(g, "b")), 1);
    define(g, "b", ref(g, "nowhere"), 7);
    g->root = rule(g, "root");
    assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "t.ebnf:7:1: rule 'b' uses rule 'nowhere', which is not defined"));
    assert_int_equal(err.line, 7);
}

/* Grammars whose recursion never ends, each built by a small function. */
static void dead_self(gm_ebnf *g)  /* root ::= root */
{
    define(g, "root", ref(g, "root"), 1);
}
static void dead_right(gm_ebnf *g)  /* root ::= "b" a ; a ::= "x" a */
{
    define(g, "root", seq2(g, lit(g, "b"), ref(g, "a")), 1);
    define(g, "a", seq2(g, lit(g, "x"), ref(g, "a")), 2);
}
static void dead_mutual(gm_ebnf *g)  /* root ::= "r" q ; q ::= p "y" ; p ::= "z" q */
{
    define(g, "root", seq2(g, lit(g, "r"), ref(g, "q")), 1);
    define(g, "q", seq2(g, ref(g, "p"), lit(g, "y")), 2);
    define(g, "p", seq2(g, lit(g, "z"), ref(g, "q")), 3);
}
static void dead_repeat(gm_ebnf *g)  /* root ::= a{1,} ; a ::= a "x" | a */
{
    define(g, "root", gm_ebnf_add_repeat(g, ref(g, "a"), 1, GM_EX_INF), 1);
    define(g, "a", alt2(g, seq2(g, ref(g, "a"), lit(g, "x")), ref(g, "a")), 2);
}

static void test_check_dead(void **state)
{
    static const struct {
        void (*build)(gm_ebnf *);
        const char *blamed;
        uint32_t line;
    } cases[] = {
        {dead_self, "root", 1},
        {dead_right, "a", 2},
        {dead_mutual, "q", 2},
        {dead_repeat, "a", 2},
    };
    fixture *f = *state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        gm_ebnf *g = &f->g;
        gm_ebnf_free(g);
        cases[i].build(g);
        g->root = rule(g, "root");
        gm_error err;
        assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
        char want[128];
        snprintf(want, sizeof want, "rule '%s' derives no finite string", cases[i].blamed);
        if (!strstr(err.message, want) || err.line != cases[i].line)
            fail_msg("case %zu: got \"%s\" at line %u, want \"%s\" at line %u", i, err.message,
                     err.line, want, cases[i].line);
    }
}

static void test_check_nothing(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    gm_error err;
    /* an empty set makes its sequence empty but the alternative survives */
    gm_cpset empty = {0};
    uint32_t none = gm_ebnf_add_set(g, &empty);
    define(g, "root", alt2(g, seq2(g, lit(g, "a"), ref(g, "z")), lit(g, "b")), 1);
    define(g, "z", seq2(g, none, lit(g, "c")), 2);
    g->root = rule(g, "root");
    assert_int_equal(check(g, &err), GM_OK);
    /* ... but a root with an empty language is an error */
    g->rules[g->root].body = seq2(g, lit(g, "a"), ref(g, "z"));
    assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "language of the root rule 'root' is empty"));
    /* surrogates only: matches nothing either */
    g->rules[g->root].body = range(g, 0xD800, 0xDFFF);
    assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
    uint32_t nob[8] = {0};
    g->rules[g->root].body = gm_ebnf_add_byteset(g, nob);
    assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
    g->rules[g->root].body = gm_ebnf_add_nothing(g);
    assert_int_equal(check(g, &err), GM_ERR_GRAMMAR);
}

typedef struct warnings {
    int n;
    char last[GM_ERROR_MESSAGE_MAX];
} warnings;

static void on_warn(void *ud, const gm_error *w)
{
    warnings *ws = ud;
    ws->n++;
    snprintf(ws->last, sizeof ws->last, "%s", w->message);
}

static void test_check_warnings(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    define(g, "root", lit(g, "a"), 1);
    define(g, "unused", ref(g, "unused"), 2); /* unreachable: not even checked for productivity */
    g->root = rule(g, "root");
    warnings ws = {0};
    gm_grammar_options opts;
    gm_grammar_options_init_defaults(&opts);
    opts.warn = on_warn;
    opts.warn_ud = &ws;
    gm_error err;
    assert_int_equal(gm_ebnf_check(g, &opts, &err), GM_OK);
    assert_int_equal(ws.n, 1);
    assert_non_null(strstr(ws.last, "t.ebnf:2:1: warning: rule 'unused' is not used"));
}

static void test_check_limits(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    gm_error err;
    uint32_t x = lit(g, "a");
    for (int i = 0; i < 1200; i++)
        x = seq2(g, x, lit(g, "b"));
    define(g, "root", x, 3);
    g->root = rule(g, "root");
    assert_int_equal(check(g, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "rule 'root' nests expressions more than 1000 deep"));
    g->rules[g->root].body = gm_ebnf_add_repeat(g, lit(g, "a"), 0, GM_EBNF_MAX_REPEAT + 1);
    assert_int_equal(check(g, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "repeats an expression more than"));
    g->rules[g->root].body = gm_ebnf_add_repeat(g, lit(g, "a"), 0, GM_EBNF_MAX_REPEAT);
    assert_int_equal(check(g, &err), GM_OK);
    gm_grammar_options opts;
    gm_grammar_options_init_defaults(&opts);
    opts.limits.max_nfa_states = 100;
    assert_int_equal(gm_ebnf_check(g, &opts, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "expression nodes, more than the limit of 100"));
}

/* ---- print ---- */

static void test_print(void **state)
{
    fixture *f = *state;
    gm_ebnf *g = &f->g;
    /* other rules first in index order, so that root must be moved to the front */
    define(g, "item", alt2(g, seq2(g, lit(g, "a\"\\\n"), range(g, 'x', 'z')), ref(g, "item")), 2);
    gm_cpset s = {0};
    gm_cpset_add_range(g->mem, &s, 0, '"' - 1);
    gm_cpset_add_range(g->mem, &s, '"' + 1, GM_CP_MAX);
    uint32_t notquote = gm_ebnf_add_set(g, &s);
    uint32_t rep = gm_ebnf_add_repeat(g, alt2(g, ref(g, "item"), notquote), 0, GM_EX_INF);
    uint32_t optd = gm_ebnf_add_repeat(g, lit(g, "d"), 0, 1);
    uint32_t ids[] = {
        rep,
        gm_ebnf_add_repeat(g, lit(g, "b"), 1, GM_EX_INF),
        gm_ebnf_add_repeat(g, lit(g, "c"), 0, 1),
        gm_ebnf_add_repeat(g, range(g, 0xe9, 0xe9), 3, 3),
        gm_ebnf_add_repeat(g, range(g, 0x1F600, 0x1F64F), 2, 5),
        gm_ebnf_add_repeat(g, optd, 4, GM_EX_INF),
        gm_ebnf_add_token(g, "<|end|>", 7),
        gm_ebnf_add_token(g, "[INST]", 6),
        gm_ebnf_add_bytes(g, "\xff\x80 \"", 4),
        gm_ebnf_add_empty(g),
        gm_ebnf_add_nothing(g),
        range(g, '-', ']'),
        range(g, '^', '^'),
    };
    uint32_t bits[8] = {0};
    for (unsigned c = 0x80; c <= 0xbf; c++)
        bits[c >> 5] |= 1u << (c & 31);
    uint32_t bs = gm_ebnf_add_byteset(g, bits);
    define(g, "root", seq2(g, gm_ebnf_add_seq(g, ids, sizeof ids / sizeof ids[0]), bs), 1);
    g->rules[rule(g, "root")].lookahead = alt2(g, lit(g, ","), lit(g, "}"));
    g->root = rule(g, "root");
    rule(g, "undeclared");
    uint32_t weird = gm_ebnf_rule_get(g, "a b", 3);
    g->rules[weird].body = lit(g, "w");
    rule(g, "a_b_0");
    g->rules[rule(g, "a_b_0")].body = lit(g, "v");
    gm_strbuf b;
    const char *text = printed(g, &b);
    const char *want =
        "root ::= (item | [^\\\"])* \"b\"+ \"c\"? [\\u00E9]{3} [\\U0001F600-\\U0001F64F]{2,5} "
        "(\"d\"?){4,} <|end|> <\"[INST]\"> %\"\\xFF\\x80 \\\"\" \"\" [] [\\--\\]] [\\u005E] "
        "%[\\x80-\\xBF] (= \",\" | \"}\")\n"
        "item ::= \"a\\\"\\\\\\n\" [x-z] | item\n"
        "# undeclared is not defined\n"
        "a_b_1 ::= \"w\"\n"
        "a_b_0 ::= \"v\"\n";
    if (strcmp(text, want) != 0)
        fail_msg("printed:\n%s\nwanted:\n%s", text, want);
    gm_strbuf_free(&b);
}

/* ---- allocation failures ---- */

static gm_status build_and_check(gm_mem *m, gm_strbuf *out)
{
    gm_ebnf g;
    gm_ebnf_init(&g, m);
    gm_status st = GM_ERR_NOMEM;
    uint32_t r = gm_ebnf_rule_get(&g, "root", 4);
    uint32_t x = gm_ebnf_rule_get(&g, "x", 1);
    uint32_t fr = gm_ebnf_fresh_rule(&g, "x");
    const char *file = gm_ebnf_file(&g, "f.gbnf");
    if (r == GM_EX_NONE || x == GM_EX_NONE || fr == GM_EX_NONE || !file)
        goto out;
    gm_cpset s = {0};
    if (gm_cpset_add_range(m, &s, 'a', 'z')) {
        gm_cpset_free(m, &s);
        goto out;
    }
    uint32_t bits[8] = {1};
    uint32_t ids[4] = {gm_ebnf_add_set(&g, &s), gm_ebnf_add_bytes(&g, "lit", 3),
                       gm_ebnf_add_ref(&g, x), gm_ebnf_add_byteset(&g, bits)};
    for (int i = 0; i < 4; i++)
        if (ids[i] == GM_EX_NONE)
            goto out;
    uint32_t seq = gm_ebnf_add_seq(&g, ids, 4);
    uint32_t rep = seq == GM_EX_NONE ? GM_EX_NONE : gm_ebnf_add_repeat(&g, seq, 0, 3);
    uint32_t tok = gm_ebnf_add_token(&g, "<s>", 3);
    if (rep == GM_EX_NONE || tok == GM_EX_NONE)
        goto out;
    uint32_t alt = gm_ebnf_add_alt(&g, (uint32_t[]){rep, tok}, 2);
    if (alt == GM_EX_NONE)
        goto out;
    g.rules[r].body = alt;
    g.rules[r].loc = (gm_srcloc){file, 1, 1};
    g.rules[x].body = ids[1];
    g.rules[fr].body = ids[1];
    g.root = r;
    gm_error err;
    st = gm_ebnf_check(&g, NULL, &err);
    if (st == GM_OK) {
        gm_ebnf_print(&g, out);
        if (out->failed)
            st = GM_ERR_NOMEM;
    }
out:
    gm_ebnf_free(&g);
    return st;
}

static void test_alloc_failures(void **state)
{
    (void)state;
    bool completed = false;
    for (unsigned long n = 1; n < 400 && !completed; n++) {
        gm_test_failing_alloc fa = {.fail_at = n};
        gm_allocator a = gm_test_failing_allocator(&fa);
        gm_mem m;
        gm_mem_init(&m, &a, 0);
        gm_strbuf out;
        gm_strbuf_init(&out, &m);
        gm_status st = build_and_check(&m, &out);
        gm_strbuf_free(&out);
        assert_true(st == GM_OK || st == GM_ERR_NOMEM);
        assert_int_equal(fa.live, 0);
        completed = fa.count < n;
        if (completed)
            assert_int_equal(st, GM_OK);
    }
    assert_true(completed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_builder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_no_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_undefined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_dead, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_warnings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_check_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_print, setup, teardown),
        cmocka_unit_test(test_alloc_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
