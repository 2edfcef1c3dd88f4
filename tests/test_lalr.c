/*
 * Unit tests of the LALR(1) construction and the LR runtime: exact
 * languages against an Earley recognizer (exhaustively on short inputs),
 * the persistent stack, the allocation-free checks against feeding,
 * conflicts in the three modes, reports, limits and allocation failures.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parser/lr.h"
#include "base/bitset.h"
#include "tests/lalr_testlib.h"
#include "tests/testutil.h"

/* ---- helpers ---------------------------------------------------------------- */

typedef struct fixture {
    gm_mem mem;
    gm_cfg *g;
    gm_lr_table *t;
} fixture;

static void build(fixture *f, const char *text, gm_conflict_mode mode)
{
    gm_mem_init(&f->mem, NULL, 0);
    f->g = lt_cfg_parse(&f->mem, "test.lark", text);
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.conflicts = mode;
    gm_error err;
    gm_status st = gm_lalr_build(&f->mem, f->g, &o, &f->t, &err);
    if (st)
        fail_msg("gm_lalr_build: %s", err.message);
}

static void teardown_fixture(fixture *f)
{
    gm_lr_table_destroy(f->t);
    lt_cfg_free(f->g);
    assert_int_equal(atomic_load(&f->mem.used), 0);
}

/* Terminal ids of a space-separated list of names. */
static size_t terms_of(const gm_cfg *g, const char *s, uint32_t *out)
{
    size_t n = 0;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " "))
        out[n++] = lt_term(g, tok);
    return n;
}

static bool accepts_text(fixture *f, const char *s)
{
    uint32_t seq[256];
    size_t n = terms_of(f->g, s, seq);
    return lt_lr_run(f->t, &f->mem, seq, n) == n;
}

static const char *EXPR =
    "start: e\n"
    "e: e \"+\" t | t\n"
    "t: t \"*\" f | f\n"
    "f: \"(\" e \")\" | ID\n"
    "%declare ID\n";

/* ---- construction ------------------------------------------------------------- */

static void test_expr_tables(void **state)
{
    (void)state;
    fixture f;
    /* The dragon book's grammar 4.1 has 12 LR(0) states; `start: e` adds one. */
    build(&f, EXPR, GM_CONFLICTS_ERROR);
    assert_int_equal(f.t->nstates, 13);
    assert_int_equal(f.t->nconflicts, 0);
    assert_int_equal(f.t->loop_guard, 0);
    assert_true(accepts_text(&f, "ID"));
    assert_true(accepts_text(&f, "ID \"+\" ID \"*\" ID"));
    assert_true(accepts_text(&f, "\"(\" ID \"+\" ID \")\" \"*\" ID"));
    assert_false(accepts_text(&f, "ID \"+\""));
    assert_false(accepts_text(&f, "\"(\" ID"));
    /* No default reductions: after ID, only "+", "*", ")" and $end have actions. */
    uint32_t id = lt_term(f.g, "ID");
    gm_lr_action a = gm_lr_action_of(f.t, 0, id);
    assert_int_equal(GM_LR_KIND(a), GM_LR_SHIFT);
    uint32_t s = GM_LR_ARG(a);
    assert_int_equal(GM_LR_KIND(gm_lr_action_of(f.t, s, lt_term(f.g, "\"(\""))), GM_LR_ERROR);
    assert_int_equal(GM_LR_KIND(gm_lr_action_of(f.t, s, id)), GM_LR_ERROR);
    assert_int_equal(GM_LR_KIND(gm_lr_action_of(f.t, s, f.t->eof)), GM_LR_REDUCE);
    assert_int_equal(f.t->accessing[s], id);
    teardown_fixture(&f);
}

/* Grammars without conflicts, each with an alphabet small enough for exhaustive tests. */
static const char *const CLEAN[] = {
    /* nullable chains */
    "start: a b c\na: \"x\" | \nb: \"y\" a | \nc: \"z\" | \n",
    /* left recursion with nullable separator */
    "start: l\nl: l s \"a\" | \"a\"\ns: \",\" | \n",
    /* right recursion */
    "start: r\nr: \"a\" r | \"b\"\n",
    /* nested right recursion with empty lists */
    "start: \"[\" items \"]\"\nitems: item items | \nitem: \"a\" | \"[\" items \"]\"\n",
    /* LALR(1) but not SLR(1) (dragon book 4.49) */
    "start: l \"=\" r | r\nl: \"*\" r | ID\nr: l\n%declare ID\n",
    /* balanced parentheses, epsilon-heavy */
    "start: s\ns: s \"(\" s \")\" | \n",
    /* expression grammar */
    "start: e\ne: e \"+\" t | t\nt: t \"*\" f | f\nf: \"(\" e \")\" | ID\n%declare ID\n",
    /* a list grammar with optional trailing comma */
    "start: \"(\" args \")\"\nargs: | arglist | arglist \",\"\narglist: ID | arglist \",\" ID\n%declare ID\n",
    /* several nullable nonterminals in a row before a terminal */
    "start: a b c d \"x\" | \"y\" d c b a\na: | \"a\"\nb: | \"b\"\nc: | \"c\"\nd: | \"d\"\n",
    /* mutual recursion through nullable prefixes */
    "start: p\np: q \"a\" | \"b\"\nq: \"(\" o p | \"c\"\no: | \"o\"\n",
};

static void exhaustive_on(fixture *fx, const char *text, size_t maxlen);

/* Every input up to length maxlen: LR verdict and error position against Earley. */
static void exhaustive(const char *text, size_t maxlen)
{
    fixture f;
    build(&f, text, GM_CONFLICTS_ERROR);
    exhaustive_on(&f, text, maxlen);
    teardown_fixture(&f);
}

static void exhaustive_on(fixture *fx, const char *text, size_t maxlen)
{
    fixture f = *fx;
    uint32_t nt = f.g->nterminals;
    uint32_t seq[16];
    size_t checked = 0;
    for (size_t len = 0; len <= maxlen; len++) {
        size_t total = 1;
        for (size_t i = 0; i < len; i++)
            total *= nt;
        if (total > 200000)
            break;
        for (size_t code = 0; code < total; code++) {
            size_t c = code;
            for (size_t i = 0; i < len; i++) {
                seq[i] = (uint32_t)(c % nt);
                c /= nt;
            }
            size_t lr = lt_lr_run(f.t, &f.mem, seq, len);
            size_t ea = lt_earley_run(f.g, seq, len);
            if (lr != ea) {
                char buf[512] = "";
                for (size_t i = 0; i < len; i++) {
                    strcat(buf, f.g->names[seq[i]]);
                    strcat(buf, " ");
                }
                fail_msg("grammar:\n%s\ninput: %s\nLR says %zu, Earley says %zu", text, buf, lr, ea);
            }
            /* The allocation-free check agrees with feeding on every prefix. */
            for (size_t k = 0; k <= len; k++) {
                gm_lr_node *bottom = gm_lr_stack_new(&f.mem);
                bool viable = k <= lr || lr >= len;
                assert_int_equal(gm_lr_can_feed(f.t, bottom, seq, k), viable);
                assert_int_equal(gm_lr_can_feed_segmented(f.t, bottom, seq, k), viable);
                gm_lr_node_release(&f.mem, bottom);
            }
            checked++;
        }
    }
    assert_true(checked >= (nt ? maxlen + 1 : 1));
}

static void test_exhaustive_against_earley(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CLEAN / sizeof *CLEAN; i++)
        exhaustive(CLEAN[i], 8);
}

/* Random reduced grammars without conflicts, exhaustively against Earley. */
static void test_random_grammars_against_earley(void **state)
{
    (void)state;
    lt_rng r = {424242};
    unsigned clean = 0, conflicting = 0, tries = 0;
    while (clean < 150) {
        assert_true(++tries < 100000);
        char *text = lt_random_grammar_text(&r, 3, 5, 3, 3);
        fixture f;
        gm_mem_init(&f.mem, NULL, 0);
        f.g = lt_cfg_try_parse(&f.mem, "random.lark", text);
        f.t = NULL;
        if (f.g && lt_cfg_is_reduced(f.g)) {
            gm_error err;
            gm_status st = gm_lalr_build(&f.mem, f.g, NULL, &f.t, &err);
            if (st == GM_OK) {
                exhaustive_on(&f, text, 6);
                clean++;
            } else {
                assert_int_equal(st, GM_ERR_GRAMMAR);
                conflicting++;
            }
        }
        teardown_fixture(&f);
        free(text);
    }
    assert_true(conflicting > 0);
}

/* Random grammars (conflicts or not): tables against the slow reference. */
static void test_random_grammars_against_reference(void **state)
{
    (void)state;
    lt_rng r = {99};
    unsigned checked = 0, conflicting = 0;
    for (unsigned i = 0; i < 3000; i++) {
        char *text = i % 2 ? lt_random_grammar_text(&r, 4, 6, 3, 4) : lt_random_grammar_text(&r, 8, 12, 4, 6);
        fixture f;
        gm_mem_init(&f.mem, NULL, 0);
        f.g = lt_cfg_try_parse(&f.mem, "random.lark", text);
        if (!f.g) { /* a rule derives no terminal string: the front end refuses it */
            free(text);
            continue;
        }
        gm_lalr_options o;
        memset(&o, 0, sizeof o);
        o.conflicts = GM_CONFLICTS_BISON;
        gm_error err;
        assert_int_equal(gm_lalr_build(&f.mem, f.g, &o, &f.t, &err), GM_OK);
        char why[256];
        if (!lt_check_lalr_reference(f.g, f.t, why, sizeof why))
            fail_msg("grammar:\n%s\n%s", text, why);
        checked++;
        conflicting += f.t->nconflicts > 0;
        teardown_fixture(&f);
        free(text);
    }
    assert_true(checked > 1500 && conflicting > 100 && conflicting + 100 < checked);
}

/* ---- the persistent stack --------------------------------------------------------- */

static gm_lr_node *feed_ok(fixture *f, gm_lr_node *top, const char *name)
{
    gm_lr_node *next;
    assert_int_equal(gm_lr_feed(f->t, &f->mem, top, lt_term(f->g, name), &next), GM_OK);
    return next;
}

static void test_stack_fork_rollback(void **state)
{
    (void)state;
    fixture f;
    build(&f, EXPR, GM_CONFLICTS_ERROR);
    size_t base_used = atomic_load(&f.mem.used);
    gm_lr_node *s0 = gm_lr_stack_new(&f.mem);
    gm_lr_node *s1 = feed_ok(&f, s0, "ID");
    gm_lr_node *s2 = feed_ok(&f, s1, "\"+\"");
    /* Fork at s2: two continuations share s2 and everything below. */
    gm_lr_node *a = feed_ok(&f, s2, "ID");
    gm_lr_node *b = feed_ok(&f, s2, "\"(\"");
    assert_true(gm_lr_accepts(f.t, a));
    assert_false(gm_lr_accepts(f.t, b));
    assert_false(gm_lr_accepts(f.t, s2));
    /* Rollback is keeping the old top: s1 is still a complete expression. */
    assert_true(gm_lr_accepts(f.t, s1));
    /* Rejection leaves nothing behind and does not touch the stack. */
    gm_lr_node *bad = (gm_lr_node *)1;
    size_t before = atomic_load(&f.mem.used);
    assert_int_equal(gm_lr_feed(f.t, &f.mem, b, lt_term(f.g, "\")\""), &bad), GM_ERR_REJECTED);
    assert_null(bad);
    assert_int_equal(atomic_load(&f.mem.used), before);
    assert_int_equal(atomic_load(&b->refs), 1);
    /* Reference counts: s2 is held by the caller and by the bottoms of a's and b's new nodes. */
    assert_true(atomic_load(&s2->refs) >= 2);
    gm_lr_node_release(&f.mem, s0);
    gm_lr_node_release(&f.mem, s1);
    gm_lr_node_release(&f.mem, s2);
    /* a and b keep their stacks alive. */
    assert_true(gm_lr_accepts(f.t, a));
    gm_lr_node *a2 = feed_ok(&f, a, "\"*\"");
    gm_lr_node_release(&f.mem, a);
    gm_lr_node *a3 = feed_ok(&f, a2, "ID");
    assert_true(gm_lr_accepts(f.t, a3));
    gm_lr_node_release(&f.mem, a2);
    gm_lr_node_release(&f.mem, a3);
    gm_lr_node_release(&f.mem, b);
    gm_lr_node_release(&f.mem, NULL);
    assert_int_equal(atomic_load(&f.mem.used), base_used);
    teardown_fixture(&f);
}

/* A long chain released from its top frees every node without recursion. */
static void test_stack_deep_release(void **state)
{
    (void)state;
    fixture f;
    build(&f, "start: r\nr: \"a\" r | \"b\"\n", GM_CONFLICTS_ERROR);
    size_t base_used = atomic_load(&f.mem.used);
    gm_lr_node *top = gm_lr_stack_new(&f.mem);
    for (int i = 0; i < 200000; i++) {
        gm_lr_node *next = feed_ok(&f, top, "\"a\"");
        gm_lr_node_release(&f.mem, top);
        top = next;
    }
    assert_int_equal(top->depth, 200000);
    assert_false(gm_lr_accepts(f.t, top));
    gm_lr_node *end = feed_ok(&f, top, "\"b\"");
    assert_true(gm_lr_accepts(f.t, end));
    gm_lr_node_release(&f.mem, top);
    gm_lr_node_release(&f.mem, end);
    assert_int_equal(atomic_load(&f.mem.used), base_used);
    teardown_fixture(&f);
}

/* ---- allocation-free checks against feeding ------------------------------------------- */

static void mutate(lt_rng *r, uint32_t *seq, size_t *n, uint32_t nterms)
{
    uint32_t what = lt_below(r, 4);
    if (what == 0 && *n > 0) {
        size_t i = lt_below(r, (uint32_t)*n);
        memmove(seq + i, seq + i + 1, (*n - i - 1) * sizeof *seq);
        (*n)--;
    } else if (what == 1) {
        size_t i = lt_below(r, (uint32_t)*n + 1);
        memmove(seq + i + 1, seq + i, (*n - i) * sizeof *seq);
        seq[i] = lt_below(r, nterms);
        (*n)++;
    } else if (what == 2 && *n > 1) {
        size_t i = lt_below(r, (uint32_t)*n - 1);
        uint32_t x = seq[i];
        seq[i] = seq[i + 1];
        seq[i + 1] = x;
    } else if (*n > 0) {
        seq[lt_below(r, (uint32_t)*n)] = lt_below(r, nterms);
    }
}

static void can_feed_matches_feed(const char *text)
{
    fixture f;
    build(&f, text, GM_CONFLICTS_ERROR);
    lt_rng r = {12345};
    uint32_t seq[512];
    for (int round = 0; round < 300; round++) {
        size_t n = lt_random_walk(f.t, &f.mem, &r, 1 + lt_below(&r, 40), seq, 400);
        for (uint32_t k = lt_below(&r, 4); k > 0; k--)
            mutate(&r, seq, &n, f.t->eof);
        /* From an intermediate stack: feed a random prefix, then check every suffix. */
        size_t cut = lt_below(&r, (uint32_t)n + 1);
        gm_lr_node *top = gm_lr_stack_new(&f.mem);
        size_t fed = 0;
        for (; fed < cut; fed++) {
            gm_lr_node *next;
            if (gm_lr_feed(f.t, &f.mem, top, seq[fed], &next) != GM_OK)
                break;
            gm_lr_node_release(&f.mem, top);
            top = next;
        }
        for (size_t len = 0; fed + len <= n; len++) {
            size_t run = lt_lr_run(f.t, &f.mem, seq, fed + len); /* from scratch, as reference */
            bool viable = run >= fed + len;
            assert_int_equal(gm_lr_can_feed(f.t, top, seq + fed, len), viable);
            assert_int_equal(gm_lr_can_feed_segmented(f.t, top, seq + fed, len), viable);
        }
        /* Expected terminals are exactly the ones feed accepts. */
        uint64_t bits[8];
        gm_lr_expected(f.t, top, bits);
        for (uint32_t term = 0; term < f.t->eof; term++) {
            gm_lr_node *next;
            gm_status st = gm_lr_feed(f.t, &f.mem, top, term, &next);
            assert_int_equal(gm_bitset_get(bits, term), st == GM_OK);
            gm_lr_node_release(&f.mem, next);
        }
        assert_int_equal(gm_bitset_get(bits, f.t->eof), gm_lr_accepts(f.t, top));
        gm_lr_node_release(&f.mem, top);
    }
    teardown_fixture(&f);
}

static void test_can_feed_random(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof CLEAN / sizeof *CLEAN; i++)
        can_feed_matches_feed(CLEAN[i]);
}

/* Sequences that push more than GM_LR_OVERLAY_MAX states take the segmented path. */
static void test_overlay_overflow(void **state)
{
    (void)state;
    fixture f;
    /* Each "a" pushes an empty e and the shift; right recursion keeps them all. */
    build(&f, "start: items\nitems: item items | \nitem: e \"a\"\ne: \n", GM_CONFLICTS_ERROR);
    uint32_t a = lt_term(f.g, "\"a\""), eof = f.t->eof;
    size_t n = 3000;
    uint32_t *seq = malloc((n + 1) * sizeof *seq);
    for (size_t i = 0; i < n; i++)
        seq[i] = a;
    seq[n] = eof;
    gm_lr_node *bottom = gm_lr_stack_new(&f.mem);
    assert_true(gm_lr_can_feed(f.t, bottom, seq, n));
    assert_true(gm_lr_can_feed(f.t, bottom, seq, n + 1));
    assert_true(gm_lr_can_feed_segmented(f.t, bottom, seq, n + 1));
    seq[n - 1] = eof;
    assert_true(gm_lr_can_feed(f.t, bottom, seq, n));
    assert_false(gm_lr_can_feed(f.t, bottom, seq, n + 1)); /* $end in the middle */
    seq[n - 1] = a;
    gm_lr_node_release(&f.mem, bottom);
    teardown_fixture(&f);

    /* Deep nesting: the overlay holds every "(" until the ")"s pop them. */
    build(&f, "start: s\ns: \"(\" s \")\" | \"x\"\n", GM_CONFLICTS_ERROR);
    uint32_t lp = lt_term(f.g, "\"(\""), rp = lt_term(f.g, "\")\""), x = lt_term(f.g, "\"x\"");
    size_t depth = 1500;
    uint32_t *nest = malloc((2 * depth + 2) * sizeof *nest);
    for (size_t i = 0; i < depth; i++) {
        nest[i] = lp;
        nest[depth + 1 + i] = rp;
    }
    nest[depth] = x;
    nest[2 * depth + 1] = f.t->eof;
    bottom = gm_lr_stack_new(&f.mem);
    assert_true(gm_lr_can_feed(f.t, bottom, nest, 2 * depth + 2));
    assert_true(gm_lr_can_feed(f.t, bottom, nest, 2 * depth)); /* a viable prefix */
    nest[2 * depth] = x;
    assert_false(gm_lr_can_feed(f.t, bottom, nest, 2 * depth + 1));
    nest[2 * depth] = rp;
    /* The same from a real deep stack: pops cross from the overlay into the nodes. */
    gm_lr_node *top = bottom;
    gm_lr_node_retain(top);
    for (size_t i = 0; i < depth; i++) {
        gm_lr_node *next = feed_ok(&f, top, "\"(\"");
        gm_lr_node_release(&f.mem, top);
        top = next;
    }
    assert_true(gm_lr_can_feed(f.t, top, nest + depth, depth + 2));
    assert_true(gm_lr_can_feed_segmented(f.t, top, nest + depth, depth + 2));
    gm_lr_node_release(&f.mem, top);
    gm_lr_node_release(&f.mem, bottom);
    free(seq);
    free(nest);
    teardown_fixture(&f);
}

/* ---- conflicts --------------------------------------------------------------------------- */

static const char *DANGLING =
    "start: stmt\n"
    "stmt: \"if\" ID \"then\" stmt\n"
    "    | \"if\" ID \"then\" stmt \"else\" stmt\n"
    "    | ID\n"
    "%declare ID\n";

static const char *DANGLING_ERROR =
    "test.lark: the grammar is not LALR(1): 1 conflict (1 shift/reduce, 0 reduce/reduce)\n"
    "state 7: shift/reduce conflict on \"else\"\n"
    "  items:\n"
    "    stmt: \"if\" ID \"then\" stmt .\n"
    "    stmt: \"if\" ID \"then\" stmt . \"else\" stmt\n"
    "  actions on \"else\":\n"
    "    shift, and go to state 8\n"
    "    reduce using rule 1 (stmt: \"if\" ID \"then\" stmt) at test.lark:2:7\n"
    "  example: \"if\" ID \"then\" ID . \"else\"";

static void test_conflict_error_report(void **state)
{
    (void)state;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_cfg *g = lt_cfg_parse(&mem, "test.lark", DANGLING);
    gm_lr_table *t = (gm_lr_table *)1;
    gm_error err;
    gm_strbuf full;
    gm_strbuf_init(&full, &mem);
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.conflict_report = &full;
    assert_int_equal(gm_lalr_build(&mem, g, &o, &t, &err), GM_ERR_GRAMMAR);
    assert_null(t);
    assert_int_equal(err.code, GM_ERR_GRAMMAR);
    assert_string_equal(err.message, DANGLING_ERROR);
    assert_string_equal(err.file, "test.lark");
    /* The full report is the message plus a newline. */
    assert_int_equal(full.n, strlen(DANGLING_ERROR) + 1);
    assert_memory_equal(full.s, DANGLING_ERROR, strlen(DANGLING_ERROR));
    gm_strbuf_free(&full);
    lt_cfg_free(g);
    assert_int_equal(atomic_load(&mem.used), 0);
}

/* Many conflicts: the message holds whole reports up to its size, then a count. */
static void test_conflict_error_truncated(void **state)
{
    (void)state;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_cfg *g = lt_cfg_parse(&mem, "amb.lark",
                             "start: e\ne: e \"+\" e | e \"-\" e | e \"*\" e | e \"/\" e | ID\n%declare ID\n");
    gm_lr_table *t;
    gm_error err;
    gm_strbuf full;
    gm_strbuf_init(&full, &mem);
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.conflict_report = &full;
    assert_int_equal(gm_lalr_build(&mem, g, &o, &t, &err), GM_ERR_GRAMMAR);
    /* 4 operator states x 4 lookaheads, all shift/reduce (as Bison reports). */
    assert_non_null(strstr(err.message, "16 conflicts (16 shift/reduce, 0 reduce/reduce)"));
    assert_non_null(strstr(err.message, "more conflicting cells not shown"));
    assert_true(strlen(err.message) < GM_ERROR_MESSAGE_MAX);
    size_t cells = 0;
    for (const char *p = full.s; (p = strstr(p, "shift/reduce conflict on")); p++)
        cells++;
    assert_int_equal(cells, 16);
    gm_strbuf_free(&full);
    lt_cfg_free(g);
    assert_int_equal(atomic_load(&mem.used), 0);
}

typedef struct warnings {
    int count;
    char last[GM_ERROR_MESSAGE_MAX];
} warnings;

static void on_warning(void *ud, const gm_error *w)
{
    warnings *ws = ud;
    ws->count++;
    snprintf(ws->last, sizeof ws->last, "%s", w->message);
}

static gm_status build_mode(gm_mem *mem, gm_cfg *g, gm_conflict_mode mode, warnings *ws, gm_lr_table **t,
                            gm_error *err)
{
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.conflicts = mode;
    o.warn = on_warning;
    o.warn_ud = ws;
    return gm_lalr_build(mem, g, &o, t, err);
}

static void test_lark_mode_shift_wins(void **state)
{
    (void)state;
    fixture f;
    gm_mem_init(&f.mem, NULL, 0);
    f.g = lt_cfg_parse(&f.mem, "test.lark", DANGLING);
    warnings ws = {0};
    gm_error err;
    assert_int_equal(build_mode(&f.mem, f.g, GM_CONFLICTS_LARK, &ws, &f.t, &err), GM_OK);
    assert_int_equal(ws.count, 1);
    assert_non_null(strstr(ws.last, "test.lark:2:7: warning: LALR(1) conflict resolved: state 7: shift/reduce conflict on \"else\", resolved as shift (Lark)"));
    assert_non_null(strstr(ws.last, "kept: shift, and go to state 8"));
    assert_non_null(strstr(ws.last, "dropped: reduce using rule 1"));
    assert_int_equal(f.t->nconflicts, 1);
    assert_int_equal(f.t->conflicts[0].state, 7);
    assert_int_equal(GM_LR_KIND(f.t->conflicts[0].kept), GM_LR_SHIFT);
    assert_true(f.t->loop_guard > 0);
    /* The else binds to the nearest if. */
    assert_true(accepts_text(&f, "\"if\" ID \"then\" \"if\" ID \"then\" ID \"else\" ID"));
    assert_true(accepts_text(&f, "\"if\" ID \"then\" ID \"else\" ID"));
    assert_false(accepts_text(&f, "\"if\" ID \"then\" ID \"else\" ID \"else\" ID"));
    teardown_fixture(&f);
}

/* Reduce/reduce: Lark takes the strictly highest priority and refuses ties; Bison takes the
   earlier rule. */
static const char *RR =
    "start: a \"x\" | b \"y\" | a \"y\"\n"
    "a: ID\n"
    "b.2: ID\n"
    "%declare ID\n";

static const char *RR_TIE =
    "start: a \"x\" | b \"y\" | a \"y\"\n"
    "a: ID\n"
    "b: ID\n"
    "%declare ID\n";

static void test_reduce_reduce_modes(void **state)
{
    (void)state;
    fixture f;
    gm_mem_init(&f.mem, NULL, 0);
    f.g = lt_cfg_parse(&f.mem, "rr.lark", RR);
    warnings ws = {0};
    gm_error err;
    assert_int_equal(build_mode(&f.mem, f.g, GM_CONFLICTS_LARK, &ws, &f.t, &err), GM_OK);
    assert_int_equal(ws.count, 1);
    assert_non_null(strstr(ws.last, "resolved by rule priority (Lark)"));
    assert_int_equal(f.t->nconflicts, 1);
    /* b (priority 2) wins on "y": "ID y" parses as b "y"; "ID x" still as a "x". */
    assert_true(accepts_text(&f, "ID \"y\""));
    assert_true(accepts_text(&f, "ID \"x\""));
    assert_int_equal(GM_LR_KIND(f.t->conflicts[0].kept), GM_LR_REDUCE);
    assert_string_equal(f.g->names[f.g->prods[GM_LR_ARG(f.t->conflicts[0].kept)].lhs], "b");
    gm_lr_table_destroy(f.t);
    /* Bison mode ignores priorities: the earlier rule (a) wins. */
    ws.count = 0;
    assert_int_equal(build_mode(&f.mem, f.g, GM_CONFLICTS_BISON, &ws, &f.t, &err), GM_OK);
    assert_int_equal(ws.count, 1);
    assert_string_equal(f.g->names[f.g->prods[GM_LR_ARG(f.t->conflicts[0].kept)].lhs], "a");
    teardown_fixture(&f);

    gm_mem_init(&f.mem, NULL, 0);
    f.g = lt_cfg_parse(&f.mem, "rr.lark", RR_TIE);
    ws.count = 0;
    f.t = NULL;
    assert_int_equal(build_mode(&f.mem, f.g, GM_CONFLICTS_LARK, &ws, &f.t, &err), GM_ERR_GRAMMAR);
    assert_null(f.t);
    assert_int_equal(ws.count, 0);
    assert_non_null(strstr(err.message, "1 conflict (0 shift/reduce, 1 reduce/reduce) that Lark does not resolve"));
    assert_non_null(strstr(err.message, "reduce/reduce conflict on \"y\""));
    assert_non_null(strstr(err.message, "reduce using rule 3 (a: ID) at rr.lark:2:4"));
    assert_non_null(strstr(err.message, "reduce using rule 4 (b: ID) at rr.lark:3:4"));
    assert_non_null(strstr(err.message, "example: ID . \"y\""));
    teardown_fixture(&f);
}

/* A resolved table of an ambiguous grammar can loop on reductions; the runtime stops. */
static void test_reduction_loop_guard(void **state)
{
    (void)state;
    fixture f;
    gm_mem_init(&f.mem, NULL, 0);
    f.g = lt_cfg_parse(&f.mem, "loop.lark", "start: a\na: b | \"x\"\nb: a\n");
    warnings ws = {0};
    gm_error err;
    assert_int_equal(build_mode(&f.mem, f.g, GM_CONFLICTS_BISON, &ws, &f.t, &err), GM_OK);
    assert_true(f.t->nconflicts > 0);
    uint32_t x = lt_term(f.g, "\"x\"");
    gm_lr_node *bottom = gm_lr_stack_new(&f.mem);
    gm_lr_node *top;
    assert_int_equal(gm_lr_feed(f.t, &f.mem, bottom, x, &top), GM_OK);
    /* Whatever the verdict, these return. */
    (void)gm_lr_accepts(f.t, top);
    uint32_t seq[2] = {x, f.t->eof};
    (void)gm_lr_can_feed(f.t, bottom, seq, 2);
    (void)gm_lr_can_feed_segmented(f.t, bottom, seq, 2);
    gm_lr_node_release(&f.mem, top);
    gm_lr_node_release(&f.mem, bottom);
    teardown_fixture(&f);
}

/* ---- reports, limits, errors --------------------------------------------------------------- */

static void test_report_golden(void **state)
{
    (void)state;
    fixture f;
    char *text = gm_test_read_file(gm_test_src_path("tests/lalr/expr.lark"), NULL);
    gm_mem_init(&f.mem, NULL, 0);
    f.g = lt_cfg_parse(&f.mem, "tests/lalr/expr.lark", text);
    free(text);
    gm_error err;
    assert_int_equal(gm_lalr_build(&f.mem, f.g, NULL, &f.t, &err), GM_OK);
    gm_strbuf b;
    gm_strbuf_init(&b, &f.mem);
    assert_int_equal(gm_lr_report(f.g, f.t, &b, &err), GM_OK);
    char *golden = gm_test_read_file(gm_test_src_path("tests/lalr/expr.report"), NULL);
    /* The golden file starts with the comment naming the command that produced it. */
    const char *body = strstr(golden, "LALR(1) tables of");
    if (!body || strcmp(gm_strbuf_str(&b), body)) {
        FILE *out = fopen("expr.report.actual", "w");
        if (out) {
            fputs(gm_strbuf_str(&b), out);
            fclose(out);
        }
        fail_msg("report differs from tests/lalr/expr.report (actual in expr.report.actual)");
    }
    free(golden);
    gm_strbuf_free(&b);
    teardown_fixture(&f);
}

static void test_limits(void **state)
{
    (void)state;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_cfg *g = lt_cfg_parse(&mem, "expr.lark", EXPR);
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.limits.max_lr_states = 12;
    gm_lr_table *t;
    gm_error err;
    assert_int_equal(gm_lalr_build(&mem, g, &o, &t, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "more than 12 LR states"));
    o.limits.max_lr_states = 13;
    assert_int_equal(gm_lalr_build(&mem, g, &o, &t, &err), GM_OK);
    gm_lr_table_destroy(t);
    /* The memory limit of the allocator is reported as a limit too. */
    size_t used = atomic_load(&mem.used);
    mem.limit = used + 600;
    o.limits.max_lr_states = 0;
    assert_int_equal(gm_lalr_build(&mem, g, &o, &t, &err), GM_ERR_LIMIT);
    assert_non_null(strstr(err.message, "memory limit"));
    mem.limit = (size_t)1 << 40;
    lt_cfg_free(g);
    assert_int_equal(atomic_load(&mem.used), 0);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_cfg *g = lt_cfg_parse(&mem, "expr.lark", EXPR);
    gm_lr_table *t;
    gm_error err;
    assert_int_equal(gm_lalr_build(&mem, NULL, NULL, &t, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_lalr_build(&mem, g, NULL, NULL, &err), GM_ERR_ARGUMENT);
    gm_sym start = g->start;
    g->start = 0;
    assert_int_equal(gm_lalr_build(&mem, g, NULL, &t, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "not a nonterminal"));
    g->start = start;
    gm_sym keep = g->rhs[0];
    g->rhs[0] = 1000;
    assert_int_equal(gm_lalr_build(&mem, g, NULL, &t, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "out of range"));
    g->rhs[0] = keep;
    g->prods[1].len = 5000;
    assert_int_equal(gm_lalr_build(&mem, g, NULL, &t, &err), GM_ERR_ARGUMENT);
    g->prods[1].len = 3;
    g->prods[1].lhs = 0;
    assert_int_equal(gm_lalr_build(&mem, g, NULL, &t, &err), GM_ERR_ARGUMENT);
    g->prods[1].lhs = g->start + 1;
    gm_lalr_options o;
    memset(&o, 0, sizeof o);
    o.conflicts = (gm_conflict_mode)7;
    assert_int_equal(gm_lalr_build(&mem, g, &o, &t, &err), GM_ERR_ARGUMENT);
    /* Runtime misuse. */
    assert_int_equal(gm_lalr_build(&mem, g, NULL, &t, &err), GM_OK);
    gm_lr_node *bottom = gm_lr_stack_new(&mem), *out;
    assert_int_equal(gm_lr_feed(t, &mem, bottom, t->nterms, &out), GM_ERR_ARGUMENT);
    assert_int_equal(gm_lr_feed(t, &mem, bottom, t->eof, &out), GM_ERR_REJECTED);
    uint32_t bad = 99999;
    assert_false(gm_lr_can_feed(t, bottom, &bad, 1));
    assert_true(gm_lr_can_feed(t, bottom, NULL, 0));
    gm_lr_node_release(&mem, bottom);
    gm_lr_table_destroy(t);
    gm_lr_table_destroy(NULL);
    lt_cfg_free(g);
    assert_int_equal(atomic_load(&mem.used), 0);
}

/* Failing the Nth allocation of a build (conflicting and clean grammars) and of a feed. */
static void test_allocation_failures(void **state)
{
    (void)state;
    const char *texts[] = {EXPR, DANGLING, CLEAN[3]};
    for (size_t gi = 0; gi < 3; gi++) {
        gm_mem plain;
        gm_mem_init(&plain, NULL, 0);
        gm_cfg *g = lt_cfg_parse(&plain, "fail.lark", texts[gi]);
        bool succeeded = false;
        for (unsigned long n = 1; !succeeded; n++) {
            gm_test_failing_alloc fa = {0, n, 0};
            gm_allocator al = gm_test_failing_allocator(&fa);
            gm_mem mem;
            gm_mem_init(&mem, &al, 0);
            gm_lr_table *t = (gm_lr_table *)1;
            gm_error err;
            gm_strbuf full;
            gm_strbuf_init(&full, &mem);
            gm_lalr_options o;
            memset(&o, 0, sizeof o);
            o.conflict_report = &full;
            gm_status st = gm_lalr_build(&mem, g, &o, &t, &err);
            if (st == GM_OK) {
                succeeded = gi != 1;
                gm_lr_node *bottom = gm_lr_stack_new(&mem);
                if (bottom) {
                    gm_lr_node *out = (gm_lr_node *)1;
                    gm_status fs = gm_lr_feed(t, &mem, bottom, 0, &out);
                    assert_true(fs == GM_OK || fs == GM_ERR_NOMEM || fs == GM_ERR_REJECTED);
                    if (fs != GM_OK)
                        assert_null(out);
                    gm_lr_node_release(&mem, out == (gm_lr_node *)1 ? NULL : out);
                    gm_lr_node_release(&mem, bottom);
                }
                gm_lr_table_destroy(t);
            } else if (st == GM_ERR_GRAMMAR) {
                assert_int_equal(gi, 1);
                assert_null(t);
                if (!full.failed)
                    succeeded = true;
            } else {
                assert_int_equal(st, GM_ERR_NOMEM);
                assert_null(t);
                assert_non_null(strstr(err.message, "out of memory"));
            }
            gm_strbuf_free(&full);
            assert_int_equal(atomic_load(&mem.used), 0);
            assert_int_equal(fa.live, 0);
            assert_true(n < 100000);
        }
        lt_cfg_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expr_tables),
        cmocka_unit_test(test_exhaustive_against_earley),
        cmocka_unit_test(test_random_grammars_against_earley),
        cmocka_unit_test(test_random_grammars_against_reference),
        cmocka_unit_test(test_stack_fork_rollback),
        cmocka_unit_test(test_stack_deep_release),
        cmocka_unit_test(test_can_feed_random),
        cmocka_unit_test(test_overlay_overflow),
        cmocka_unit_test(test_conflict_error_report),
        cmocka_unit_test(test_conflict_error_truncated),
        cmocka_unit_test(test_lark_mode_shift_wins),
        cmocka_unit_test(test_reduce_reduce_modes),
        cmocka_unit_test(test_reduction_loop_guard),
        cmocka_unit_test(test_report_golden),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
