/*
 * Merging equal rules (ir/ir_merge.c, note [merging equal rules]):
 * which rules merge (equal bodies, references to equal rules, recursion,
 * bisimilar rules of different shapes) and which must not (a reference to
 * a different rule, lookahead assertions); and on random grammars given
 * twice (each rule and a renamed copy), the merged grammar's language equals
 * the original's for the independent reference recognizer (tests/
 * earley_ref.h) on every string up to a length: same viable prefixes, same
 * sentences. A JSON Schema whose $ref target is used at many places builds
 * that target's automata once (MaskBench's Github_ultra---o13934: 170
 * properties referencing one object of 300 properties took 79 s to build).
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ir_merge.h"
#include "ir/ebnf_parse.h"
#include "tests/earley_ref.h"
#include "earley/engine.h"
#include "schema/schema.h"

static void parse(gm_mem *m, gm_ebnf *g, const char *text, gm_ebnf_dialect d)
{
    gm_error err;
    gm_ebnf_init(g, m);
    if (gm_ebnf_parse(g, "t", text, strlen(text), d, NULL, &err))
        fail_msg("%s\n%s", err.message, text);
}

static uint32_t merge(gm_ebnf *g)
{
    gm_error err;
    uint32_t merged;
    assert_int_equal(gm_ebnf_merge_rules(g, &merged, &err), GM_OK);
    return merged;
}

static void cases(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        gm_ebnf_dialect dialect;
        uint32_t merged;
    } cs[] = {
        /* equal bodies, the second through equal references */
        {"root ::= a1 b1\na1 ::= \"(\" s1 \")\"\ns1 ::= [a-z]*\nb1 ::= \"(\" s2 \")\"\n"
         "s2 ::= [a-z]*\n", GM_EBNF_GBNF, 2},
        /* same shape, references to rules that differ */
        {"root ::= p1 p2\np1 ::= \"a\" q1\nq1 ::= \"b\"\np2 ::= \"a\" q2\nq2 ::= \"c\"\n",
         GM_EBNF_GBNF, 0},
        /* recursion: e1 and the pair e2/f2 unfold to the same tree */
        {"root ::= e1 e2\ne1 ::= \"x\" e1 | \"y\"\ne2 ::= \"x\" f2 | \"y\"\n"
         "f2 ::= \"x\" e2 | \"y\"\n", GM_EBNF_GBNF, 2},
        /* repetition bounds, sets and byte strings must all agree */
        {"root ::= r1 r2 r3\nr1 ::= [0-9]{2,5}\nr2 ::= [0-9]{2,6}\nr3 ::= [0-8]{2,5}\n",
         GM_EBNF_GBNF, 0},
        /* rules with a lookahead assertion are left alone */
        {"root ::= l1 \"y\" l2 \"y\"\nl1 ::= \"x\" (= \"y\")\nl2 ::= \"x\" (= \"y\")\n",
         GM_EBNF_XGRAMMAR, 0},
    };
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++) {
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_ebnf g;
        parse(&mem, &g, cs[k].text, cs[k].dialect);
        uint32_t merged = merge(&g);
        if (merged != cs[k].merged)
            fail_msg("case %zu: %u rules merged, expected %u\n%s", k, merged, cs[k].merged,
                     cs[k].text);
        gm_error err;
        assert_int_equal(gm_ebnf_check(&g, NULL, &err), GM_OK);
        gm_ebnf_free(&g);
        assert_int_equal(atomic_load(&mem.used), 0);
    }
}

/* ---- random grammars, each rule twice --------------------------------------- */

typedef struct text {
    char s[8192];
    size_t n;
    uint64_t rng;
} text;

static void put(text *t, const char *s)
{
    size_t l = strlen(s);
    if (t->n + l < sizeof t->s) {
        memcpy(t->s + t->n, s, l + 1);
        t->n += l;
    }
}

/* An expression over the rules P0..P{n-1} (P the prefix) and the letters a, b, c. */
static void expr(text *t, char prefix, int nrules, int depth)
{
    static const char *const atoms[] = {"\"a\"", "\"b\"", "\"ab\"", "[a-c]", "\"\"", "\"c\""};
    char ref[16];
    switch (depth > 2 ? gm_test_rand(&t->rng) % 2 : gm_test_rand(&t->rng) % 5) {
    case 0: put(t, atoms[gm_test_rand(&t->rng) % 6]); break;
    case 1:
        snprintf(ref, sizeof ref, "%c%u", prefix, (unsigned)(gm_test_rand(&t->rng) % nrules));
        put(t, ref);
        break;
    case 2:
        put(t, "(");
        expr(t, prefix, nrules, depth + 1);
        put(t, " ");
        expr(t, prefix, nrules, depth + 1);
        put(t, ")");
        break;
    case 3:
        put(t, "(");
        expr(t, prefix, nrules, depth + 1);
        put(t, " | ");
        expr(t, prefix, nrules, depth + 1);
        put(t, ")");
        break;
    default:
        put(t, "(");
        expr(t, prefix, nrules, depth + 1);
        put(t, gm_test_rand(&t->rng) % 2 ? ")*" : "){0,2}");
        break;
    }
}

/* rules r0.. and their copies s0.. (same bodies, references renamed). */
static void twice(text *t, uint64_t seed)
{
    t->n = 0;
    t->s[0] = 0;
    t->rng = seed;
    int n = 1 + (int)(gm_test_rand(&t->rng) % 4);
    text body[4];
    for (int r = 0; r < n; r++) {
        body[r].n = 0;
        body[r].s[0] = 0;
        body[r].rng = gm_test_rand(&t->rng);
        expr(&body[r], 'r', n, 0);
    }
    put(t, "root ::= r0 \"|\" s0\n");
    for (int copy = 0; copy < 2; copy++)
        for (int r = 0; r < n; r++) {
            char head[32];
            snprintf(head, sizeof head, "%c%d ::= ", copy ? 's' : 'r', r);
            put(t, head);
            char *b = strdup(body[r].s);
            for (char *p = b; copy && *p; p++)
                if (*p == 'r' && p[1] >= '0' && p[1] <= '9')
                    *p = 's';
            put(t, b);
            put(t, " | \"c\"\n"); /* every rule derives a string */
            free(b);
        }
}

/* Every string over {a, b, c, |} up to `len`: same answers from both recognizers. */
static void same_language(gm_eref *x, gm_eref *y, const char *grammar)
{
    static const char alphabet[] = "abc|";
    char w[8];
    for (size_t len = 0; len <= 6; len++) {
        size_t total = 1;
        for (size_t i = 0; i < len; i++)
            total *= 4;
        for (size_t code = 0; code < total; code++) {
            size_t c = code;
            for (size_t i = 0; i < len; i++, c /= 4)
                w[i] = alphabet[c % 4];
            bool cx, cy;
            bool vx = gm_eref_try(x, w, len, &cx), vy = gm_eref_try(y, w, len, &cy);
            if (vx != vy || cx != cy)
                fail_msg("'%.*s': viable %d/%d, sentence %d/%d after merging\n%s", (int)len, w,
                         vx, vy, cx, cy, grammar);
        }
    }
}

static void random_grammars(void **state)
{
    (void)state;
    int tested = 0;
    for (uint64_t seed = 1; seed < 400 && tested < 60; seed++) {
        text t;
        twice(&t, seed);
        gm_mem mem;
        gm_mem_init(&mem, NULL, 0);
        gm_ebnf a, b;
        gm_error err;
        gm_ebnf_init(&a, &mem);
        if (gm_ebnf_parse(&a, "t", t.s, t.n, GM_EBNF_GBNF, NULL, &err)) {
            gm_ebnf_free(&a); /* refused (a rule without a way out...): skip */
            continue;
        }
        parse(&mem, &b, t.s, GM_EBNF_GBNF);
        uint32_t nrules = b.nrules, merged = merge(&b);
        /* each copy merges with its original (or with an equal rule) */
        if (merged < (nrules - 1) / 2)
            fail_msg("%u of %u rules merged\n%s", merged, nrules, t.s);
        gm_eref *x, *y;
        assert_int_equal(gm_eref_create(&a, &x, &err), GM_OK);
        assert_int_equal(gm_eref_create(&b, &y, &err), GM_OK);
        same_language(x, y, t.s);
        gm_eref_destroy(x);
        gm_eref_destroy(y);
        gm_ebnf_free(&a);
        gm_ebnf_free(&b);
        assert_int_equal(atomic_load(&mem.used), 0);
        tested++;
    }
    assert_true(tested >= 40);
}

/* ---- a schema's $ref target, used at many places ------------------------------ */

/* Automaton states of the schema {properties: {p0..p(n-1): {$ref: #/$defs/o}}}, o an
   object of 24 properties. */
static uint32_t ref_states(int n)
{
    char json[8192];
    size_t k = (size_t)snprintf(json, sizeof json, "{\"$defs\": {\"o\": {\"properties\": {");
    for (int i = 0; i < 24; i++)
        k += (size_t)snprintf(json + k, sizeof json - k, "%s\"field%d\": {\"type\": \"string\"}",
                              i ? ", " : "", i);
    k += (size_t)snprintf(json + k, sizeof json - k, "}}}, \"properties\": {");
    for (int i = 0; i < n; i++)
        k += (size_t)snprintf(json + k, sizeof json - k, "%s\"p%d\": {\"$ref\": \"#/$defs/o\"}",
                              i ? ", " : "", i);
    snprintf(json + k, sizeof json - k, "}}");
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    gm_ebnf g;
    gm_ebnf_init(&g, &mem);
    gm_error err;
    if (gm_schema_compile(&mem, "s", json, strlen(json), &o, &g, &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_egrammar *eg;
    if (gm_egrammar_build(&mem, &g, NULL, &eg, &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_egrammar_stats st;
    gm_egrammar_get_stats(eg, &st);
    gm_egrammar_destroy(eg);
    gm_ebnf_free(&g);
    assert_int_equal(atomic_load(&mem.used), 0);
    return st.states;
}

static void schema_refs(void **state)
{
    (void)state;
    uint32_t one = ref_states(1), many = ref_states(40);
    /* 40 uses add 39 keys to the outer object (its ordered layout grows with the square of
       its properties), not 39 copies of o's automaton: 14,262 states against 230,400
       without the merge */
    if (many > 4 * one)
        fail_msg("one use: %u states; 40 uses: %u states", one, many);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cases),
        cmocka_unit_test(random_grammars),
        cmocka_unit_test(schema_refs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
