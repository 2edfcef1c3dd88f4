/*
 * Eager and lazy compilation give the same masks (issue 38): the bundled
 * JavaScript and TypeScript grammars (contextual lexer, four semicolon
 * flags, walks shared between lexers: note [shared walks], note [hubs of
 * several heavy states], note [per-state attach]) compiled with every
 * token table built up front and with none, walked together along a
 * program's tokens and seeded random walks over allowed tokens. At every
 * step the two masks must be equal bit for bit, and the two matchers must
 * agree on each token. The lazy copy builds its tables in the order the
 * walk needs them, the eager one in state order: descriptions, hubs and
 * shared templates made in another order must not change a profile.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

typedef struct pair {
    gm_compiled *c[2];           /* eager, lazy */
    gm_matcher *m[2];
    uint32_t *mask[2];
    size_t words;
    uint32_t nbits;
} pair;

static gm_compiled *compile(gm_vocab *v, const char *name, bool eager)
{
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.lexer = GM_LEXER_CONTEXTUAL;
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_create_bundled(name, &go, &g, &err) != GM_OK)
        fail_msg("%s: %s", name, err.message);
    gm_compile_options co;
    gm_compile_options_init_defaults(&co);
    co.eager = eager;
    gm_compiled *c;
    if (gm_compiled_create(g, v, &co, &c, &err) != GM_OK)
        fail_msg("%s: %s", name, err.message);
    gm_grammar_destroy(g);
    return c;
}

/* Fills both masks and checks them equal; the number of allowed tokens. */
static uint32_t fill(pair *p, const char *what, size_t step)
{
    gm_error err;
    for (int i = 0; i < 2; i++)
        if (gm_matcher_fill_mask(p->m[i], p->mask[i], p->words, &err) != GM_OK)
            fail_msg("%s step %zu: fill: %s", what, step, err.message);
    if (memcmp(p->mask[0], p->mask[1], p->words * 4)) {
        for (uint32_t t = 0; t < p->nbits; t++) {
            int a = (p->mask[0][t >> 5] >> (t & 31)) & 1, b = (p->mask[1][t >> 5] >> (t & 31)) & 1;
            if (a != b)
                fail_msg("%s step %zu: token %u is %s eagerly, %s lazily", what, step, t,
                         a ? "allowed" : "masked", b ? "allowed" : "masked");
        }
    }
    uint32_t n = 0;
    for (size_t k = 0; k < p->words; k++)
        n += (uint32_t)__builtin_popcount(p->mask[0][k]);
    return n;
}

static bool accept(pair *p, uint32_t id, const char *what, size_t step)
{
    gm_error err;
    gm_status st = gm_matcher_accept_token(p->m[0], id, &err);
    if (gm_matcher_accept_token(p->m[1], id, &err) != st)
        fail_msg("%s step %zu: eager and lazy disagree on token %u", what, step, id);
    return st == GM_OK;
}

static void reset(pair *p)
{
    for (int i = 0; i < 2; i++)
        gm_matcher_reset(p->m[i]);
}

static void check(gm_vocab *v, const char *name, const char *text, uint64_t seed)
{
    pair p;
    gm_error err;
    memset(&p, 0, sizeof p);
    p.c[0] = compile(v, name, true);
    p.c[1] = compile(v, name, false);
    p.words = gm_compiled_mask_words(p.c[0]);
    p.nbits = gm_compiled_vocab_size(p.c[0]);
    for (int i = 0; i < 2; i++) {
        if (gm_matcher_create(p.c[i], NULL, &p.m[i], &err) != GM_OK)
            fail_msg("matcher: %s", err.message);
        p.mask[i] = calloc(p.words, 4);
    }
    uint32_t *ids;
    size_t n;
    if (gm_vocab_encode(v, text, strlen(text), NULL, &ids, &n, &err) != GM_OK)
        fail_msg("encode: %s", err.message);
    for (size_t i = 0; i < n; i++) {
        fill(&p, name, i);
        if (!((p.mask[0][ids[i] >> 5] >> (ids[i] & 31)) & 1))
            fail_msg("%s step %zu: the text's token %u is masked", name, i, ids[i]);
        assert_true(accept(&p, ids[i], name, i));
    }
    fill(&p, name, n);
    assert_true(gm_matcher_is_accepting(p.m[0]));
    gm_vocab_free_ids(v, ids);
    reset(&p);
    for (int round = 0; round < 4; round++) {
        for (size_t s = 0; s < 40 && !gm_matcher_is_terminated(p.m[0]); s++) {
            uint32_t allowed = fill(&p, name, s);
            if (allowed == 0)
                fail_msg("%s: a dead end at step %zu of a random walk", name, s);
            uint32_t pick = (uint32_t)(gm_test_rand(&seed) % allowed), id = 0;
            for (uint32_t t = 0; t < p.nbits; t++)
                if ((p.mask[0][t >> 5] >> (t & 31)) & 1 && pick-- == 0) {
                    id = t;
                    break;
                }
            assert_true(accept(&p, id, name, s));
        }
        reset(&p);
    }
    for (int i = 0; i < 2; i++) {
        gm_matcher_destroy(p.m[i]);
        gm_compiled_destroy(p.c[i]);
        free(p.mask[i]);
    }
}

static void javascript(void **state)
{
    check(*state, "javascript",
          "'use strict'\nconst a = b\n(c)\nlet d = `x${a}//${ {e: 1}.e }`, \u00e9t\u00e9 = 1\n"
          "function* f() { if (a) return /r[/]/g.test(d); yield\n}\nx = y / 2 / z\ni\n++j\n"
          "class K extends L { #p = 1; static async *m() { await this.#p } }\n",
          0x15ea5e);
}

static void typescript(void **state)
{
    check(*state, "typescript",
          "let a: Map<string, Array<Set<number>>> = new Map<K, V<W>>()\n"
          "interface I {\n  a: B\n  <T>(x: T): T\n  [k: string]: C\n}\n"
          "const f = (x: number, y?: A<B>): R => x as unknown as T[]\nz!.w\n",
          0x7e57);
}

static int setup(void **state)
{
    gm_vocab *v;
    gm_error err;
    if (gm_vocab_create_from_file(gm_test_src_path("tests/data/sp32k"), NULL, &v, &err))
        fail_msg("vocab: %s", err.message);
    *state = v;
    return 0;
}

static int teardown(void **state)
{
    gm_vocab_destroy(*state);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(javascript),
        cmocka_unit_test(typescript),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
