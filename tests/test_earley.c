/*
 * Unit tests of the Earley engine (earley/engine.h): rule automata, the
 * recognizer on hand-picked grammars (ambiguous, left-recursive, nullable,
 * repetitions, special tokens), masks against a brute-force check over
 * small and real vocabularies, serialization, limits.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "earley/ebnf_parse.h"
#include "earley/engine.h"
#include "spanner/trie.h"
#include "spanner/vocab.h"

typedef struct eg {
    gm_mem mem;
    gm_vocab_data *v;
    gm_trie *t;
    gm_egrammar *g;
    gm_eengine *e;
    gm_escratch *w;
} eg;

/* A vocabulary of the given strings (NUL-terminated), plus EOS "</s>" as last id. */
static gm_vocab_data *small_vocab(gm_mem *m, const char *const *toks, uint32_t n)
{
    size_t cap = 8;
    for (uint32_t i = 0; i < n; i++)
        cap += strlen(toks[i]);
    gm_vocab_data *v = gm_vocab_new_(m, n + 1, cap);
    assert_non_null(v);
    uint32_t off = 0;
    for (uint32_t i = 0; i < n; i++) {
        size_t l = strlen(toks[i]);
        memcpy(v->bytes + off, toks[i], l);
        off += (uint32_t)l;
        v->offsets[i + 1] = off;
    }
    memcpy(v->bytes + off, "</s>", 4);
    off += 4;
    v->offsets[n + 1] = off;
    v->flags[n] = GM_TOK_SPECIAL;
    uint32_t eos = n;
    gm_error err;
    assert_int_equal(gm_vocab_finish_(v, &eos, 1, NULL, "test", &err), GM_OK);
    return v;
}

static gm_status eg_open(eg *x, const char *text, gm_ebnf_dialect d, gm_vocab_data *v,
                         uint32_t variant, gm_error *err)
{
    gm_ebnf src;
    gm_ebnf_init(&src, &x->mem);
    gm_status st = gm_ebnf_parse(&src, "t.gbnf", text, strlen(text), d, NULL, err);
    if (st == GM_OK)
        st = gm_egrammar_build(&x->mem, &src, NULL, &x->g, err);
    gm_ebnf_free(&src);
    if (st != GM_OK)
        return st;
    x->v = v;
    assert_int_equal(gm_trie_build(&x->mem, v, &x->t, err), GM_OK);
    gm_eengine_options o;
    memset(&o, 0, sizeof o);
    o.variant = variant;
    st = gm_eengine_create(&x->mem, x->g, v, x->t, NULL, &o, &x->e, err);
    if (st == GM_OK)
        st = gm_escratch_create(x->e, &x->w, err);
    return st;
}

static void eg_close(eg *x, bool free_vocab)
{
    gm_escratch_destroy(x->e, x->w);
    gm_eengine_destroy(x->e);
    gm_egrammar_destroy(x->g);
    gm_trie_destroy(x->t);
    if (free_vocab)
        gm_vocab_data_destroy(x->v);
}

/* Whether text is a prefix of the language (stepping byte by byte). */
static bool prefix_ok(eg *x, const char *text, bool *accepting)
{
    gm_error err;
    gm_estate *s = gm_estate_start(x->e, &err), *n;
    gm_status st = gm_estate_accept_bytes(x->e, x->w, s, (const uint8_t *)text, strlen(text), &n,
                                          &err);
    gm_estate_release(x->e, s);
    if (st != GM_OK) {
        assert_int_equal(st, GM_ERR_REJECTED);
        return false;
    }
    if (accepting)
        *accepting = gm_estate_accepting(x->e, n);
    gm_estate_release(x->e, n);
    return true;
}

typedef struct lang_case {
    const char *grammar;
    const char *text;
    int want;   /* 0 rejected, 1 prefix only, 2 sentence */
} lang_case;

static const lang_case lang_cases[] = {
    {"root ::= \"ab\" | \"ac\"", "ab", 2},
    {"root ::= \"ab\" | \"ac\"", "a", 1},
    {"root ::= \"ab\" | \"ac\"", "ad", 0},
    {"root ::= \"ab\" | \"ac\"", "", 1},
    /* left recursion */
    {"root ::= root \"a\" | \"b\"", "baaa", 2},
    {"root ::= root \"a\" | \"b\"", "ab", 0},
    {"root ::= root \"+\" root | \"x\"", "x+x+x", 2},
    {"root ::= root \"+\" root | \"x\"", "x+", 1},
    {"root ::= root \"+\" root | \"x\"", "x++", 0},
    /* nullable rules, in the middle and at the ends */
    {"root ::= a b a \"!\"\na ::= \"\" | \"a\"\nb ::= a a", "!", 2},
    {"root ::= a b a \"!\"\na ::= \"\" | \"a\"\nb ::= a a", "aaaa!", 2},
    {"root ::= a b a \"!\"\na ::= \"\" | \"a\"\nb ::= a a", "aaaaa!", 0},
    {"root ::= x\nx ::= x x | \"\" | \"(\" x \")\"", "(()())", 2},
    {"root ::= x\nx ::= x x | \"\" | \"(\" x \")\"", "(()", 1},
    {"root ::= x\nx ::= x x | \"\" | \"(\" x \")\"", "())", 0},
    {"root ::= x\nx ::= x x | \"\" | \"(\" x \")\"", "", 2},
    /* cycles: x ::= y, y ::= x */
    {"root ::= x\nx ::= y | \"a\"\ny ::= x | \"b\"", "b", 2},
    {"root ::= x\nx ::= y | \"a\"\ny ::= x | \"b\"", "ab", 0},
    /* repetitions, expanded and counted */
    {"root ::= [a-z]{2,3}", "ab", 2},
    {"root ::= [a-z]{2,3}", "abcd", 0},
    {"root ::= [a-z]{100,200} \"!\"", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", 0},
    {"root ::= [a-z]{100,200} \"!\"", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", 2},
    {"root ::= (\"ab\" | x){40,50}\nx ::= \"c\" x | \"d\"", "abcdabababababababababababababababababababababababababababababababababababababab", 2},
    {"root ::= (\"ab\" | x){40,50}\nx ::= \"c\" x | \"d\"", "abcdababababababababababababababababababababababababababababababababababababab", 1},
    {"root ::= (\"a\" | e){0,100}\ne ::= \"\"", "aaa", 2},
    {"root ::= (e \"a\"?){3,100}\ne ::= \"\"", "", 2},
    /* UTF-8 */
    {"root ::= [α-ω]+", "αβ", 2},
    {"root ::= [α-ω]+", "\xce", 1},
    {"root ::= [α-ω]+", "\xce\x80", 0},
    {"root ::= [^a]", "\xf0\x9f\x98\x80", 2},
};

static void test_languages(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof lang_cases / sizeof *lang_cases; i++) {
        const lang_case *c = &lang_cases[i];
        eg x;
        memset(&x, 0, sizeof x);
        gm_mem_init(&x.mem, NULL, 0);
        static const char *const toks[] = {"a", "b"};
        gm_error err;
        gm_status st = eg_open(&x, c->grammar, GM_EBNF_GBNF, small_vocab(&x.mem, toks, 2), 0, &err);
        if (st != GM_OK)
            fail_msg("%s: %s", c->grammar, err.message);
        bool acc = false;
        bool ok = prefix_ok(&x, c->text, &acc);
        int got = !ok ? 0 : acc ? 2 : 1;
        if (got != c->want)
            fail_msg("grammar %s, text \"%s\": got %d, want %d", c->grammar, c->text, got, c->want);
        eg_close(&x, true);
        assert_int_equal(atomic_load(&x.mem.used), 0);
    }
}

/*
 * The mask at s equals the brute force: token t allowed iff stepping s
 * over its bytes succeeds (special tokens: through gm_estate_accept_token).
 */
static void check_mask(eg *x, gm_estate *s, uint32_t *mask, size_t words, const char *what)
{
    gm_error err;
    assert_int_equal(gm_estate_fill_mask(x->e, x->w, s, mask, words, &err), GM_OK);
    for (uint32_t t = 0; t < x->v->size; t++) {
        bool got = (mask[t / 32] >> (t % 32)) & 1;
        bool want;
        if (x->v->flags[t] & GM_TOK_EOS) {
            want = gm_estate_accepting(x->e, s);
        } else {
            gm_estate *n = NULL;
            gm_status st = gm_estate_accept_token(x->e, x->w, s, t, &n, &err);
            want = st == GM_OK;
            if (st != GM_OK && st != GM_ERR_REJECTED)
                fail_msg("%s: accept_token %u: %s", what, t, err.message);
            gm_estate_release(x->e, n);
        }
        if (got != want) {
            size_t len;
            const uint8_t *b = gm_vocab_data_token(x->v, t, &len);
            fprintf(stderr, "token %u ", t);
            gm_test_show_bytes(stderr, b, len);
            fail_msg("%s: token %u: mask %d, brute force %d", what, t, got, want);
        }
    }
}

/* A random walk of up to `steps` tokens, checking the mask at every step. */
static void walk_and_check(eg *x, uint32_t seed, int steps, const char *what)
{
    gm_error err;
    size_t words = (x->v->size + 31) / 32;
    uint32_t *mask = malloc(words * 4);
    gm_estate *s = gm_estate_start(x->e, &err);
    uint32_t rng = seed * 2654435761u + 1;
    for (int k = 0; k < steps; k++) {
        check_mask(x, s, mask, words, what);
        uint32_t n = 0;
        for (size_t i = 0; i < words; i++)
            n += (uint32_t)__builtin_popcount(mask[i]);
        if (n == 0)
            fail_msg("%s: dead end after %d steps", what, k);
        rng = rng * 1103515245u + 12345u;
        uint32_t pick = (rng >> 8) % n, t = 0;
        for (t = 0; t < x->v->size; t++)
            if (((mask[t / 32] >> (t % 32)) & 1) && pick-- == 0)
                break;
        if (x->v->flags[t] & GM_TOK_EOS)
            break;
        gm_estate *nx;
        assert_int_equal(gm_estate_accept_token(x->e, x->w, s, t, &nx, &err), GM_OK);
        gm_estate_release(x->e, s);
        s = nx;
    }
    gm_estate_release(x->e, s);
    free(mask);
}

static const char *const small_grammars[] = {
    "root ::= root \"+\" root | \"x\" | \"(\" root \")\"",
    "root ::= x\nx ::= x x | \"\" | \"(\" x \")\"",
    "root ::= [a-c]{0,300}",
    "root ::= ([a-c] \"b\"?){3,40} \"!\"",
    "root ::= (\"ab\" | x){5,50}\nx ::= \"c\" x | \"d\"",
    "root ::= a b\na ::= \"a\"*\nb ::= (\"b\" | a)*",
};

static void test_small_masks(void **state)
{
    (void)state;
    static const char *const toks[] = {"a", "b", "c", "d", "x", "+", "(", ")", "!", "ab", "ba",
                                       "abc", "x+", "+x", "((", "))", "()", "aaaa", "bbbb",
                                       "cab", "x)", ")+", "(x", "a!", "b!", "!!", "dd", "cd"};
    for (size_t gi = 0; gi < sizeof small_grammars / sizeof *small_grammars; gi++) {
        for (uint32_t variant = 0; variant < 32; variant += 1) {
            eg x;
            memset(&x, 0, sizeof x);
            gm_mem_init(&x.mem, NULL, 0);
            gm_error err;
            gm_status st = eg_open(&x, small_grammars[gi], GM_EBNF_GBNF,
                                   small_vocab(&x.mem, toks, sizeof toks / sizeof *toks), variant,
                                   &err);
            if (st != GM_OK)
                fail_msg("%s: %s", small_grammars[gi], err.message);
            for (uint32_t seed = 0; seed < 8; seed++)
                walk_and_check(&x, seed, 60, small_grammars[gi]);
            eg_close(&x, true);
            assert_int_equal(atomic_load(&x.mem.used), 0);
        }
    }
}

/* A walk with masks checked every `every` steps over a real vocabulary. */
static void real_walks(const char *grammar_file, const char *tok, int walks, int steps, int every)
{
    eg x;
    memset(&x, 0, sizeof x);
    gm_mem_init(&x.mem, NULL, 0);
    gm_error err;
    char path[512];
    snprintf(path, sizeof path, "tokenizers/%s/tokenizer.json", tok);
    gm_vocab_data *v;
    assert_int_equal(gm_vocab_load(&x.mem, gm_test_shared_path(path), NULL, &v, &err), GM_OK);
    snprintf(path, sizeof path, "grammars/gbnf/%s", grammar_file);
    size_t len;
    char *text = gm_test_read_file(gm_test_shared_path(path), &len);
    gm_status st = eg_open(&x, text, GM_EBNF_GBNF, v, 0, &err);
    free(text);
    if (st != GM_OK)
        fail_msg("%s: %s", grammar_file, err.message);
    size_t words = (v->size + 31) / 32;
    uint32_t *mask = malloc(words * 4);
    for (int wk = 0; wk < walks; wk++) {
        gm_estate *s = gm_estate_start(x.e, &err);
        uint32_t rng = (uint32_t)wk * 2654435761u + 7;
        for (int k = 0; k < steps; k++) {
            if (k % every == 0) {
                check_mask(&x, s, mask, words, grammar_file);
            } else {
                assert_int_equal(gm_estate_fill_mask(x.e, x.w, s, mask, words, &err), GM_OK);
            }
            uint32_t n = 0;
            for (size_t i = 0; i < words; i++)
                n += (uint32_t)__builtin_popcount(mask[i]);
            if (n == 0)
                fail_msg("%s: dead end after %d steps", grammar_file, k);
            rng = rng * 1103515245u + 12345u;
            uint32_t pick = (rng >> 8) % n, t;
            for (t = 0; t < v->size; t++)
                if (((mask[t / 32] >> (t % 32)) & 1) && pick-- == 0)
                    break;
            if (v->flags[t] & GM_TOK_EOS)
                break;
            gm_estate *nx;
            assert_int_equal(gm_estate_accept_token(x.e, x.w, s, t, &nx, &err), GM_OK);
            gm_estate_release(x.e, s);
            s = nx;
        }
        gm_estate_release(x.e, s);
    }
    free(mask);
    eg_close(&x, true);
    assert_int_equal(atomic_load(&x.mem.used), 0);
}

static void test_real_grammars(void **state)
{
    (void)state;
    static const char *const files[] = {"json.gbnf", "c.gbnf", "arithmetic.gbnf", "chess.gbnf",
                                        "english.gbnf", "japanese.gbnf", "json_arr.gbnf",
                                        "list.gbnf"};
    static const char *const toks[] = {"llama3", "qwen3", "sp32k"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        real_walks(files[i], toks[i % 3], 2, 40, 13);
}

/*
 * Real texts: the C programs of bench/data/c, encoded with llama3's own
 * encoder, under c.gbnf, masks checked at every step (the first masks of a
 * fresh engine build the cache entries while they are filled).
 */
static void test_c_programs(void **state)
{
    (void)state;
    eg x;
    memset(&x, 0, sizeof x);
    gm_mem_init(&x.mem, NULL, 0);
    gm_error err;
    const char *tpath = gm_test_shared_path("tokenizers/llama3/tokenizer.json");
    char vpath[1024];
    snprintf(vpath, sizeof vpath, "%s", tpath);
    gm_vocab *pv;
    assert_int_equal(gm_vocab_create_from_file(vpath, NULL, &pv, &err), GM_OK);
    gm_vocab_data *v;
    assert_int_equal(gm_vocab_load(&x.mem, vpath, NULL, &v, &err), GM_OK);
    size_t len;
    char *text = gm_test_read_file(gm_test_shared_path("grammars/gbnf/c.gbnf"), &len);
    if (eg_open(&x, text, GM_EBNF_GBNF, v, 0, &err) != GM_OK)
        fail_msg("%s", err.message);
    free(text);
    size_t words = (v->size + 31) / 32;
    uint32_t *mask = malloc(words * 4);
    static const char *const files[] = {"gcd.c", "collatz.c"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char rel[256];
        snprintf(rel, sizeof rel, "bench/data/c/%s", files[f]);
        text = gm_test_read_file(gm_test_src_path(rel), &len);
        uint32_t *ids;
        size_t n;
        assert_int_equal(gm_vocab_encode(pv, text, len, NULL, &ids, &n, &err), GM_OK);
        gm_estate *s = gm_estate_start(x.e, &err);
        for (size_t k = 0; k <= n; k++) {
            check_mask(&x, s, mask, words, files[f]);
            if (k == n)
                break;
            gm_estate *nx;
            assert_int_equal(gm_estate_accept_token(x.e, x.w, s, ids[k], &nx, &err), GM_OK);
            gm_estate_release(x.e, s);
            s = nx;
        }
        assert_true(gm_estate_accepting(x.e, s));
        gm_estate_release(x.e, s);
        gm_vocab_free_ids(pv, ids);
        free(text);
    }
    free(mask);
    eg_close(&x, true);
    gm_vocab_destroy(pv);
    assert_int_equal(atomic_load(&x.mem.used), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_languages),
        cmocka_unit_test(test_small_masks),
        cmocka_unit_test(test_real_grammars),
        cmocka_unit_test(test_c_programs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
