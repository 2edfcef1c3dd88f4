/*
 * Unit tests of the Earley engine (earley/engine.h): rule automata, the
 * recognizer on hand-picked grammars (ambiguous, left-recursive, nullable,
 * repetitions, special tokens), masks against a brute-force check over
 * small and real vocabularies, serialization, limits.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ebnf_parse.h"
#include "earley/engine.h"
#include "earley/fsm.h"
#include "vocab/trie.h"
#include "vocab/vocab.h"

typedef struct eg {
    gm_mem mem;
    gm_vocab_data *v;
    gm_trie *t;
    gm_egrammar *g;
    gm_eengine *e;
    gm_escratch *w;
    size_t engine_memory;  /* the engine's limits.max_memory (0 = default) */
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

static gm_status eg_open_x(eg *x, const char *text, gm_ebnf_dialect d, gm_vocab_data *v,
                           const gm_trie *shared_trie, gm_excache *xc, uint32_t variant,
                           gm_error *err)
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
    if (!shared_trie)
        assert_int_equal(gm_trie_build(&x->mem, v, &x->t, err), GM_OK);
    gm_eengine_options o;
    memset(&o, 0, sizeof o);
    o.variant = variant;
    o.limits.max_memory = x->engine_memory;
    st = gm_eengine_create(&x->mem, x->g, v, shared_trie ? shared_trie : x->t, xc, &o, &x->e, err);
    if (st == GM_OK)
        st = gm_escratch_create(x->e, &x->w, err);
    return st;
}

static gm_status eg_open(eg *x, const char *text, gm_ebnf_dialect d, gm_vocab_data *v,
                         uint32_t variant, gm_error *err)
{
    return eg_open_x(x, text, d, v, NULL, NULL, variant, err);
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

/*
 * A token drawn uniformly from mask (words 32-bit words): *n gets how many
 * bits are set, and UINT32_MAX comes back when none is.
 */
static uint32_t random_token(const uint32_t *mask, size_t words, uint32_t *rng, uint32_t *n)
{
    *n = 0;
    for (size_t i = 0; i < words; i++)
        *n += (uint32_t)__builtin_popcount(mask[i]);
    if (*n == 0)
        return UINT32_MAX;
    *rng = *rng * 1103515245u + 12345u;
    uint32_t pick = (*rng >> 8) % *n;
    for (size_t i = 0; i < words; i++) {
        uint32_t c = (uint32_t)__builtin_popcount(mask[i]);
        if (pick >= c) {
            pick -= c;
            continue;
        }
        uint32_t x = mask[i];
        while (pick--)
            x &= x - 1;
        return (uint32_t)(i * 32 + (uint32_t)__builtin_ctz(x));
    }
    return UINT32_MAX;
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
    /* a counted repetition (past the expansion threshold) whose iteration
       starts with a nullable reference: at the maximum, neither the
       reference nor what follows it may start another iteration */
    {"root ::= \"a\" (ws \"b\" \"a\"){0,40}\nws ::= \" \" ws | \"\"", "ababababababababababababababababababababababababababababababababababababababababa", 2},
    {"root ::= \"a\" (ws \"b\" \"a\"){0,40}\nws ::= \" \" ws | \"\"", "a ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba", 2},
    {"root ::= \"a\" (ws \"b\" \"a\"){0,40}\nws ::= \" \" ws | \"\"", "ababababababababababababababababababababababababababababababababababababababababab", 0},
    {"root ::= \"a\" (ws \"b\" \"a\"){0,40}\nws ::= \" \" ws | \"\"", "ababababababababababababababababababababababababababababababababababababababababa ", 0},
    {"root ::= \"a\" (ws \"b\" \"a\"){0,40}\nws ::= \" \" ws | \"\"", "a ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba ba b", 0},
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
        uint32_t n, t = random_token(mask, words, &rng, &n);
        if (n == 0)
            fail_msg("%s: dead end after %d steps", what, k);
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

/*
 * One cross-grammar cache for grammars built to look alike (note [unit
 * keys] in earley/xkey.c): rules equal but for a byte deep inside,
 * recursions that differ in one member, the same rule under different
 * names and references, rules whose follow differs. Every mask of every
 * grammar must equal the brute force (an entry shared between two
 * structures that differ would show), and equal rules must share entries.
 */
static const char *const lookalike_grammars[] = {
    "root ::= \"[\" s \"]\"\ns ::= \"a\" t\nt ::= \"b\" | \"c\" t",
    "root ::= \"[\" s \"]\"\ns ::= \"a\" t\nt ::= \"b\" | \"d\" t",
    "root ::= \"[\" s \"]\" \"!\"?\ns ::= \"a\" t\nt ::= \"b\" | \"c\" t",
    "root ::= \"(\" q \")\"\nq ::= \"a\" u\nu ::= \"b\" | \"c\" u",
    "root ::= x\nx ::= \"(\" y \")\" | \"a\"\ny ::= x | x \"+\" y",
    "root ::= x\nx ::= \"(\" y \")\" | \"a\"\ny ::= x | x \"!\" y",
    "root ::= x \"!\"\nx ::= \"(\" y \")\" | \"a\"\ny ::= x | x \"+\" y",
    "root ::= ([a-c] \"b\"?){3,40} \"!\"",
    "root ::= ([a-c] \"b\"?){3,41} \"!\"",
    "root ::= ([a-d] \"b\"?){3,40} \"!\"",
};

static void test_cross_cache_lookalikes(void **state)
{
    (void)state;
    static const char *const toks[] = {"a", "b", "c", "d", "x", "+", "(", ")", "!", "[", "]",
                                       "ab", "ac", "ad", "cb", "db", "b]", "a)", "(a", "a+",
                                       "+(", "))", "ba", "bb", "cc", "dd", "b!", "]!", ")!",
                                       "abc", "acb", "adb", "cab"};
    gm_mem mem;
    gm_mem_init(&mem, NULL, 0);
    gm_error err;
    gm_vocab_data *v = small_vocab(&mem, toks, sizeof toks / sizeof *toks);
    gm_trie *t;
    assert_int_equal(gm_trie_build(&mem, v, &t, &err), GM_OK);
    gm_excache *xc;
    assert_int_equal(gm_excache_create(&mem, v, t, &xc, &err), GM_OK);
    uint32_t hits = 0;
    for (int round = 0; round < 2; round++)
        for (size_t gi = 0; gi < sizeof lookalike_grammars / sizeof *lookalike_grammars; gi++) {
            eg x;
            memset(&x, 0, sizeof x);
            gm_mem_init(&x.mem, NULL, 0);
            if (eg_open_x(&x, lookalike_grammars[gi], GM_EBNF_GBNF, v, t, xc, 0, &err) != GM_OK)
                fail_msg("%s: %s", lookalike_grammars[gi], err.message);
            for (uint32_t seed = 0; seed < 6; seed++)
                walk_and_check(&x, seed, 40, lookalike_grammars[gi]);
            gm_eengine_stats st;
            gm_eengine_get_stats(x.e, &st);
            hits += st.cross_hits;
            if (round == 1 && st.cross_hits != st.cache_entries)
                fail_msg("%s: %u of %u entries from the cache the second time",
                         lookalike_grammars[gi], st.cross_hits, st.cache_entries);
            gm_escratch_destroy(x.e, x.w);
            gm_eengine_destroy(x.e);
            gm_egrammar_destroy(x.g);
            assert_int_equal(atomic_load(&x.mem.used), 0);
        }
    assert_true(hits > 0);
    gm_excache_destroy(xc);
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&mem.used), 0);
}

/*
 * Tail calls (note [tail calls] in earley/fsm_build.c): a right-linear
 * recursion is one automaton with loops, so the Earley set after a plain
 * byte is the set before it; other recursions keep their references; an
 * expansion past the state limit falls back to references. Masks against
 * the brute force each time.
 */
/*
 * Entries derived from a sibling's (note [sibling entries] in
 * earley/maskcache.c): after "[q" the state goes as the free state f does
 * on most bytes, but "z" must be followed by "!" there, while f reads "z"
 * as any letter. Masks against brute force; some entries derived.
 */
static void test_sibling_entries(void **state)
{
    (void)state;
    static const char *const toks[] = {"[", "]", "a", "b", "c", "d", "e", "f", "g", "h", "q", "z",
                                       "!", "zz", "z!", "za", "qz", "q!", "az", "zq", "!]", "qq",
                                       "ab", "z]", "q]", "[q", "a]", "!a"};
    static const char *const grammars[] = {
        "root ::= \"[\" f\nf ::= [a-pr-z] f | \"q\" p | \"]\"\n"
        "p ::= [a-pr-y] f | \"q\" p | \"z\" \"!\" f | \"]\"",
        "root ::= \"[\" f \"!\"\nf ::= [a-pr-z] f | \"q\" p | \"]\"\n"
        "p ::= [a-pr-y] f | \"q\" p | \"z\" \"!\" f | \"]\"",
    };
    for (size_t gi = 0; gi < sizeof grammars / sizeof *grammars; gi++) {
        eg x;
        memset(&x, 0, sizeof x);
        gm_mem_init(&x.mem, NULL, 0);
        gm_error err;
        if (eg_open(&x, grammars[gi], GM_EBNF_GBNF,
                    small_vocab(&x.mem, toks, sizeof toks / sizeof *toks), 0, &err) != GM_OK)
            fail_msg("%s: %s", grammars[gi], err.message);
        for (uint32_t seed = 0; seed < 16; seed++)
            walk_and_check(&x, seed, 30, grammars[gi]);
        gm_eengine_stats st;
        gm_eengine_get_stats(x.e, &st);
        if (!st.derived)
            fail_msg("%s: no entry derived from a sibling's", grammars[gi]);
        eg_close(&x, true);
        assert_int_equal(atomic_load(&x.mem.used), 0);
    }
}

static void test_tail_calls(void **state)
{
    (void)state;
    static const char *const toks[] = {"a", "b", "c", "x", "[", "]", "(", ")", "ab", "ba", "aa",
                                       "ca", "]]", "a]", "[a", "((", "))", "()", "xa"};
    static const struct {
        const char *grammar;
        uint32_t max_dfa_states;
        uint32_t rules;           /* rule automata expected */
    } cases[] = {
        {"root ::= \"[\" s\ns ::= \"a\" s | \"b\" t | \"]\"\nt ::= \"c\" s | \"]\"", 0, 1},
        {"root ::= x\nx ::= \"(\" x \")\" x | \"\"", 0, 2},
        {"root ::= \"[\" s \"]\"\ns ::= \"a\" s | \"b\"", 0, 2},
        /* s0 .. s19 in a ring: merged, 21 states; each alone, 3 */
        {NULL, 10, 21},
    };
    char ring[2048];
    size_t n = (size_t)snprintf(ring, sizeof ring, "root ::= \"[\" s0\n");
    for (int i = 0; i < 20; i++)
        n += (size_t)snprintf(ring + n, sizeof ring - n, "s%d ::= \"a\" s%d | \"x\"\n", i,
                              (i + 1) % 20);
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        const char *text = cases[ci].grammar ? cases[ci].grammar : ring;
        eg x;
        memset(&x, 0, sizeof x);
        gm_mem_init(&x.mem, NULL, 0);
        gm_error err;
        gm_vocab_data *v = small_vocab(&x.mem, toks, sizeof toks / sizeof *toks);
        gm_ebnf src;
        gm_ebnf_init(&src, &x.mem);
        assert_int_equal(gm_ebnf_parse(&src, "t.gbnf", text, strlen(text), GM_EBNF_GBNF, NULL,
                                       &err), GM_OK);
        gm_limits lim;
        memset(&lim, 0, sizeof lim);
        lim.max_dfa_states = cases[ci].max_dfa_states;
        if (gm_egrammar_build(&x.mem, &src, &lim, &x.g, &err) != GM_OK)
            fail_msg("%s: %s", text, err.message);
        gm_ebnf_free(&src);
        if (x.g->nrules != cases[ci].rules)
            fail_msg("%s: %u rule automata, expected %u", text, x.g->nrules, cases[ci].rules);
        x.v = v;
        assert_int_equal(gm_trie_build(&x.mem, v, &x.t, &err), GM_OK);
        assert_int_equal(gm_eengine_create(&x.mem, x.g, v, x.t, NULL, NULL, &x.e, &err), GM_OK);
        assert_int_equal(gm_escratch_create(x.e, &x.w, &err), GM_OK);
        for (uint32_t seed = 0; seed < 10; seed++)
            walk_and_check(&x, seed, 30, text);
        if (ci == 0) {
            /* "[a" then "a": the same set */
            gm_estate *s0 = gm_estate_start(x.e, &err), *s1, *s2;
            assert_int_equal(gm_estate_accept_bytes(x.e, x.w, s0, (const uint8_t *)"[a", 2, &s1,
                                                    &err), GM_OK);
            assert_int_equal(gm_estate_accept_bytes(x.e, x.w, s1, (const uint8_t *)"a", 1, &s2,
                                                    &err), GM_OK);
            assert_ptr_equal(s1, s2);
            gm_estate_release(x.e, s0);
            gm_estate_release(x.e, s1);
            gm_estate_release(x.e, s2);
        }
        eg_close(&x, true);
        assert_int_equal(atomic_load(&x.mem.used), 0);
    }
}

/* A walk with masks checked every `every` steps over a real vocabulary. */
/* Random walks under grammar `text` (named grammar_file) over tokenizer tok,
   the mask checked against the brute force every `every` steps. */
static void real_walks_text(const char *grammar_file, const char *text, const char *tok, int walks,
                            int steps, int every)
{
    eg x;
    memset(&x, 0, sizeof x);
    gm_mem_init(&x.mem, NULL, 0);
    gm_error err;
    char path[512];
    snprintf(path, sizeof path, "tokenizers/%s/tokenizer.json", tok);
    gm_vocab_data *v;
    assert_int_equal(gm_vocab_load(&x.mem, gm_test_shared_path(path), NULL, &v, &err), GM_OK);
    gm_status st = eg_open(&x, text, GM_EBNF_GBNF, v, 0, &err);
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
            uint32_t n, t = random_token(mask, words, &rng, &n);
            if (n == 0)
                fail_msg("%s: dead end after %d steps", grammar_file, k);
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

static void real_walks(const char *grammar_file, const char *tok, int walks, int steps, int every)
{
    char path[512];
    snprintf(path, sizeof path, "grammars/gbnf/%s", grammar_file);
    size_t len;
    char *text = gm_test_read_file(gm_test_shared_path(path), &len);
    real_walks_text(grammar_file, text, tok, walks, steps, every);
    free(text);
}

/*
 * Strings over real byte-level and SentencePiece vocabularies (note [utf-8
 * loops] in earley/closed.c): sets that loop over every UTF-8 character
 * accept subtrees of well-formed UTF-8 whole; sets that leave out some
 * non-ASCII character, or take only some, must not.
 */
static void test_utf8_loops(void **state)
{
    (void)state;
    static const char *const grammars[] = {
        "root ::= \"\\\"\" ([^\"\\\\\\x00-\\x1F] | \"\\\\\" [\"nt])* \"\\\"\" \"!\"",
        "root ::= \"\\\"\" [^\"\\u00e9\\u4e2d]* \"\\\"\"",
        "root ::= \"<\" [^>\\U0001F600]* \">\"",
        "root ::= [a-z\\u0430-\\u044f ]* \".\"",
        "root ::= \"(\" [^)\\x80-\\u07FF]* \")\" root?",
    };
    static const char *const toks[] = {"llama3", "qwen3", "sp32k"};
    for (size_t i = 0; i < sizeof grammars / sizeof *grammars; i++)
        real_walks_text(grammars[i], grammars[i], toks[i % 3], 2, 24, 4);
}

/* The same over a vocabulary of ill-formed and split UTF-8: surrogates,
   overlongs, code points past U+10FFFF, stray continuation bytes. */
static void test_utf8_loops_bytes(void **state)
{
    (void)state;
    static const char *const toks[] = {
        "\"", "a", "ab", "\xc3", "\xa9", "\xc3\xa9", "a\xc3", "\xa9" "b", "\xed\x9f\xbf",
        "\xed\xa0\x80", "\xed", "\xa0\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\x80",
        "\xe0\xa0\x80", "\xf0\x8f\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf",
        "\xf4\x90\x80\x80", "\xf5\x80", "\xff", "\xe4\xb8", "\xe4\xb8\xad", "\xad\"",
        "x\xed\xa0", "\"\"", "\xf0\x9f", "\x98\x80", "\xf0\x9f\x98\x80\"",
    };
    static const char *const grammars[] = {
        "root ::= \"\\\"\" [^\"]* \"\\\"\"",
        "root ::= (\"\\\"\" [^\"\\u4e2d]* \"\\\"\")+",
    };
    for (size_t gi = 0; gi < sizeof grammars / sizeof *grammars; gi++) {
        eg x;
        memset(&x, 0, sizeof x);
        gm_mem_init(&x.mem, NULL, 0);
        gm_error err;
        if (eg_open(&x, grammars[gi], GM_EBNF_GBNF,
                    small_vocab(&x.mem, toks, sizeof toks / sizeof *toks), 0, &err) != GM_OK)
            fail_msg("%s: %s", grammars[gi], err.message);
        for (uint32_t seed = 0; seed < 12; seed++)
            walk_and_check(&x, seed, 30, grammars[gi]);
        eg_close(&x, true);
        assert_int_equal(atomic_load(&x.mem.used), 0);
    }
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
 * fresh engine build the cache entries while they are filled). The second
 * program runs on an engine whose set tables are emptied every few steps
 * (a small memory budget: note [hash-consed Earley sets]).
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
    char *grammar = gm_test_read_file(gm_test_shared_path("grammars/gbnf/c.gbnf"), &len);
    size_t words = (v->size + 31) / 32;
    uint32_t *mask = malloc(words * 4);
    static const char *const files[] = {"gcd.c", "collatz.c"};
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        x.engine_memory = f == 1 ? (size_t)1 << 20 : 0;
        if (eg_open(&x, grammar, GM_EBNF_GBNF, v, 0, &err) != GM_OK)
            fail_msg("%s", err.message);
        char *text;
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
        eg_close(&x, f + 1 == sizeof files / sizeof *files);
    }
    free(grammar);
    free(mask);
    gm_vocab_destroy(pv);
    assert_int_equal(atomic_load(&x.mem.used), 0);
}

/* A small vocabulary for the robustness tests. */
static const char *const robust_toks[] = {"{", "}", "[", "]", "\"", ":", ",", " ", "a", "ab",
                                          "1", "12", "true", "\"a", "\":", "],", "},", "0",
                                          "-", "e", ".", "n", "null", "\"}", "u", "l", "r",
                                          "t", "z"};

static const char robust_grammar[] =
    "root ::= value\n"
    "value ::= \"{\" ws (pair (\",\" ws pair)*)? \"}\" | \"[\" ws (value (\",\" ws value)*)? \"]\" "
    "| str | num | \"true\" | \"null\"\n"
    "pair ::= str \":\" ws value\n"
    "str ::= \"\\\"\" [a-z]{0,40} \"\\\"\"\n"
    "num ::= \"-\"? [0-9]+ (\".\" [0-9]+)?\n"
    "ws ::= \" \"?\n";

/* The masks of a walk over the robust grammar, as a hash per step. */
static uint64_t walk_hash(gm_eengine *e, gm_escratch *w, const gm_vocab_data *v, int steps,
                          gm_status *st, gm_error *err)
{
    size_t words = (v->size + 31) / 32;
    uint32_t *mask = calloc(words, 4);
    uint64_t h = 1469598103934665603ULL;
    *st = GM_OK;
    gm_estate *s = gm_estate_start(e, err);
    if (!s) {
        *st = GM_ERR_NOMEM;
        free(mask);
        return 0;
    }
    uint32_t rng = 99;
    for (int k = 0; k < steps; k++) {
        if ((*st = gm_estate_fill_mask(e, w, s, mask, words, err)) != GM_OK)
            break;
        for (size_t i = 0; i < words; i++)
            h = (h ^ mask[i]) * 1099511628211ULL;
        uint32_t n, t = random_token(mask, words, &rng, &n);
        if (n == 0)
            break; /* a sentence, and a vocabulary without EOS */
        if (v->flags[t] & GM_TOK_EOS)
            break;
        gm_estate *nx;
        if ((*st = gm_estate_accept_token(e, w, s, t, &nx, err)) != GM_OK)
            break;

        gm_estate_release(e, s);
        s = nx;
    }
    gm_estate_release(e, s);
    free(mask);
    return h;
}

static gm_egrammar *robust_build(gm_mem *m)
{
    gm_ebnf src;
    gm_ebnf_init(&src, m);
    gm_error err;
    if (gm_ebnf_parse(&src, "r.gbnf", robust_grammar, strlen(robust_grammar), GM_EBNF_GBNF, NULL,
                      &err) != GM_OK)
        fail_msg("%s", err.message);
    gm_egrammar *g;
    assert_int_equal(gm_egrammar_build(m, &src, NULL, &g, &err), GM_OK);
    gm_ebnf_free(&src);
    return g;
}

/* Serialization: a round trip gives the same masks; every truncation and
   many corruptions are refused or give a working grammar, never a crash. */
static void test_serialize(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    gm_vocab_data *v = small_vocab(&m, robust_toks, sizeof robust_toks / sizeof *robust_toks);
    gm_trie *t;
    assert_int_equal(gm_trie_build(&m, v, &t, &err), GM_OK);
    gm_egrammar *g = robust_build(&m);
    gm_strbuf out;
    gm_strbuf_init(&out, &m);
    gm_egrammar_write(g, &out);
    assert_false(out.failed);
    gm_egrammar *g2;
    size_t used;
    assert_int_equal(gm_egrammar_read(&m, (const uint8_t *)out.s, out.n, &used, &g2, &err), GM_OK);
    assert_int_equal(used, out.n);
    uint64_t h[2];
    for (int i = 0; i < 2; i++) {
        gm_eengine *e;
        gm_escratch *w;
        assert_int_equal(gm_eengine_create(&m, i ? g2 : g, v, t, NULL, NULL, &e, &err), GM_OK);
        assert_int_equal(gm_escratch_create(e, &w, &err), GM_OK);
        gm_status st;
        h[i] = walk_hash(e, w, v, 200, &st, &err);
        assert_int_equal(st, GM_OK);
        gm_escratch_destroy(e, w);
        gm_eengine_destroy(e);
    }
    assert_true(h[0] == h[1]);
    gm_egrammar_destroy(g2);
    /* Every truncation. */
    for (size_t n = 0; n < out.n; n++) {
        gm_status st = gm_egrammar_read(&m, (const uint8_t *)out.s, n, &used, &g2, &err);
        assert_int_equal(st, GM_ERR_FORMAT);
        assert_null(g2);
    }
    /* Byte corruptions: refused, or a grammar the engine runs without harm. */
    uint8_t *copy = malloc(out.n);
    uint32_t rng = 5;
    int refused = 0;
    for (int k = 0; k < 3000; k++) {
        memcpy(copy, out.s, out.n);
        rng = rng * 1103515245u + 12345u;
        size_t at = (rng >> 8) % out.n;
        rng = rng * 1103515245u + 12345u;
        copy[at] ^= (uint8_t)(1u << ((rng >> 8) % 8));
        if (k & 1) {
            rng = rng * 1103515245u + 12345u;
            copy[(rng >> 8) % out.n] = (uint8_t)(rng >> 16);
        }
        gm_status st = gm_egrammar_read(&m, copy, out.n, &used, &g2, &err);
        if (st != GM_OK) {
            assert_int_equal(st, GM_ERR_FORMAT);
            refused++;
            continue;
        }
        gm_eengine *e;
        gm_escratch *w;
        if (gm_eengine_create(&m, g2, v, t, NULL, NULL, &e, &err) == GM_OK) {
            assert_int_equal(gm_escratch_create(e, &w, &err), GM_OK);
            walk_hash(e, w, v, 30, &st, &err);
            gm_escratch_destroy(e, w);
            gm_eengine_destroy(e);
        }
        gm_egrammar_destroy(g2);
    }
    assert_true(refused > 1000);
    free(copy);
    gm_strbuf_free(&out);
    gm_egrammar_destroy(g);
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&m.used), 0);
}

/*
 * The robust grammar from text to a walk of `steps` masks over a vocabulary
 * of four tokens, every object from m: the status of the first failure.
 */
static gm_status robust_run(gm_mem *m, int steps, gm_error *err)
{
    gm_vocab_data *v = NULL;
    gm_trie *t = NULL;
    gm_egrammar *g = NULL;
    gm_eengine *e = NULL;
    gm_escratch *w = NULL;
    gm_ebnf src;
    gm_ebnf_init(&src, m);
    gm_status st = gm_ebnf_parse(&src, "r.gbnf", robust_grammar, strlen(robust_grammar),
                                 GM_EBNF_GBNF, NULL, err);
    if (st == GM_OK)
        st = gm_egrammar_build(m, &src, NULL, &g, err);
    gm_ebnf_free(&src);
    if (st == GM_OK) {
        v = gm_vocab_new_(m, 4, 8);
        if (v) {
            memcpy(v->bytes, "[\"a]", 4);
            for (uint32_t i = 1; i <= 4; i++)
                v->offsets[i] = i;
            st = gm_vocab_finish_(v, NULL, 0, NULL, "t", err);
        } else {
            st = gm_mem_fail(m, err, "a vocabulary");
        }
    }
    if (st == GM_OK)
        st = gm_trie_build(m, v, &t, err);
    if (st == GM_OK)
        st = gm_eengine_create(m, g, v, t, NULL, NULL, &e, err);
    if (st == GM_OK)
        st = gm_escratch_create(e, &w, err);
    if (st == GM_OK)
        walk_hash(e, w, v, steps, &st, err);
    gm_escratch_destroy(e, w);
    gm_eengine_destroy(e);
    gm_egrammar_destroy(g);
    gm_trie_destroy(t);
    gm_vocab_data_destroy(v);
    return st;
}

/* Limits: items per set, automaton states, memory: errors, never a crash. */
static void test_limits(void **state)
{
    (void)state;
    gm_error err;
    /* Automaton states of one rule. */
    {
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_ebnf src;
        gm_ebnf_init(&src, &m);
        const char *text = "root ::= big\nbig ::= (\"a\" | \"b\")* \"a\" (\"a\" | \"b\"){12} \"!\" big?";
        assert_int_equal(gm_ebnf_parse(&src, "l.gbnf", text, strlen(text), GM_EBNF_GBNF, NULL, &err),
                         GM_OK);
        gm_limits lim;
        memset(&lim, 0, sizeof lim);
        lim.max_dfa_states = 100;
        gm_egrammar *g;
        assert_int_equal(gm_egrammar_build(&m, &src, &lim, &g, &err), GM_ERR_LIMIT);
        assert_non_null(strstr(err.message, "big"));
        lim.max_dfa_states = 0;
        assert_int_equal(gm_egrammar_build(&m, &src, &lim, &g, &err), GM_OK);
        gm_egrammar_destroy(g);
        gm_ebnf_free(&src);
        assert_int_equal(atomic_load(&m.used), 0);
    }
    /* Items per set: an ambiguous grammar whose sets grow with the input. */
    {
        eg x;
        memset(&x, 0, sizeof x);
        gm_mem_init(&x.mem, NULL, 0);
        static const char *const toks[] = {"x", "+", "xx"};
        gm_ebnf src;
        gm_ebnf_init(&src, &x.mem);
        const char *text = "root ::= s\ns ::= s s | s \"+\" s | \"x\"";
        assert_int_equal(gm_ebnf_parse(&src, "l.gbnf", text, strlen(text), GM_EBNF_GBNF, NULL, &err),
                         GM_OK);
        assert_int_equal(gm_egrammar_build(&x.mem, &src, NULL, &x.g, &err), GM_OK);
        gm_ebnf_free(&src);
        x.v = small_vocab(&x.mem, toks, 3);
        assert_int_equal(gm_trie_build(&x.mem, x.v, &x.t, &err), GM_OK);
        gm_eengine_options o;
        memset(&o, 0, sizeof o);
        o.limits.max_nfa_states = 40;
        assert_int_equal(gm_eengine_create(&x.mem, x.g, x.v, x.t, NULL, &o, &x.e, &err), GM_OK);
        assert_int_equal(gm_escratch_create(x.e, &x.w, &err), GM_OK);
        gm_estate *s = gm_estate_start(x.e, &err), *n;
        gm_status st = GM_OK;
        for (int k = 0; k < 100 && st == GM_OK; k++) {
            st = gm_estate_accept_bytes(x.e, x.w, s, (const uint8_t *)"x", 1, &n, &err);
            if (st == GM_OK) {
                gm_estate_release(x.e, s);
                s = n;
            }
        }
        assert_int_equal(st, GM_ERR_LIMIT);
        assert_non_null(strstr(err.message, "items"));
        gm_estate_release(x.e, s);
        eg_close(&x, true);
        assert_int_equal(atomic_load(&x.mem.used), 0);
    }
    /* Memory: a limit too small for the engine's caches. */
    for (size_t limit = 1u << 12; limit <= 1u << 22; limit <<= 2) {
        gm_mem m;
        gm_mem_init(&m, NULL, limit);
        gm_status st = robust_run(&m, 50, &err);
        assert_true(st == GM_OK || st == GM_ERR_LIMIT);
        assert_int_equal(atomic_load(&m.used), 0);
    }
}

/* Every allocation failure of build, engine and steps is reported, without leaks. */
static void test_alloc_failures(void **state)
{
    (void)state;
    bool completed = false;
    for (unsigned long n = 1; !completed && n < 100000; n++) {
        gm_test_failing_alloc fa = {.fail_at = n};
        gm_allocator a = gm_test_failing_allocator(&fa);
        gm_mem m;
        gm_mem_init(&m, &a, 0);
        gm_error err;
        gm_status st = robust_run(&m, 20, &err);
        if (st != GM_OK && st != GM_ERR_NOMEM)
            fail_msg("allocation %lu: %s", n, err.message);
        assert_int_equal(fa.live, 0);
        completed = fa.count < n;
    }
    assert_true(completed);
}

/* Lookahead assertions are refused, naming the rule and where it is. */
static void test_lookahead_refused(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_ebnf src;
    gm_ebnf_init(&src, &m);
    gm_error err;
    const char *text = "root ::= item+\nitem ::= [a-z]+ (= \",\")\n";
    assert_int_equal(gm_ebnf_parse(&src, "la.ebnf", text, strlen(text), GM_EBNF_XGRAMMAR, NULL, &err),
                     GM_OK);
    gm_egrammar *g;
    assert_int_equal(gm_egrammar_build(&m, &src, NULL, &g, &err), GM_ERR_UNSUPPORTED);
    assert_non_null(strstr(err.message, "item"));
    assert_non_null(strstr(err.message, "lookahead"));
    assert_int_equal(err.line, 2);
    gm_ebnf_free(&src);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Special tokens: only through their symbol edges, by id; their text as bytes is not them. */
static void test_special_tokens(void **state)
{
    (void)state;
    gm_mem m;
    gm_mem_init(&m, NULL, 0);
    gm_error err;
    static const char *const toks[] = {"x", "y", "<|a|>", "<|b|>", "<", "|a|>", "xy"};
    gm_vocab_data *v = gm_vocab_new_(&m, 8, 64);
    uint32_t off = 0;
    for (uint32_t i = 0; i < 7; i++) {
        memcpy(v->bytes + off, toks[i], strlen(toks[i]));
        off += (uint32_t)strlen(toks[i]);
        v->offsets[i + 1] = off;
    }
    memcpy(v->bytes + off, "</s>", 4);
    v->offsets[8] = off + 4;
    v->flags[2] = v->flags[3] = GM_TOK_SPECIAL;
    v->flags[7] = GM_TOK_SPECIAL;
    uint32_t eos = 7;
    assert_int_equal(gm_vocab_finish_(v, &eos, 1, NULL, "t", &err), GM_OK);
    eg x;
    memset(&x, 0, sizeof x);
    gm_mem_init(&x.mem, NULL, 0);
    if (eg_open(&x, "root ::= \"x\" <|a|> \"y\"*", GM_EBNF_GBNF, v, 0, &err) != GM_OK)
        fail_msg("%s", err.message);
    uint32_t mask[1];
    gm_estate *s = gm_estate_start(x.e, &err), *n;
    assert_int_equal(gm_estate_fill_mask(x.e, x.w, s, mask, 1, &err), GM_OK);
    assert_int_equal(mask[0], 1u << 0);
    assert_int_equal(gm_estate_accept_token(x.e, x.w, s, 0, &n, &err), GM_OK);
    gm_estate_release(x.e, s);
    s = n;
    assert_int_equal(gm_estate_fill_mask(x.e, x.w, s, mask, 1, &err), GM_OK);
    assert_int_equal(mask[0], 1u << 2);                    /* <|a|> only, by id */
    assert_int_equal(gm_estate_accept_bytes(x.e, x.w, s, (const uint8_t *)"<|a|>", 5, &n, &err),
                     GM_ERR_REJECTED);                     /* its text is not it */
    assert_int_equal(gm_estate_accept_token(x.e, x.w, s, 3, &n, &err), GM_ERR_REJECTED);
    assert_int_equal(gm_estate_accept_token(x.e, x.w, s, 2, &n, &err), GM_OK);
    gm_estate_release(x.e, s);
    s = n;
    assert_true(gm_estate_accepting(x.e, s));
    assert_int_equal(gm_estate_fill_mask(x.e, x.w, s, mask, 1, &err), GM_OK);
    assert_int_equal(mask[0], 1u << 1 | 1u << 7);          /* y, EOS */
    gm_estate_release(x.e, s);
    eg_close(&x, false);
    memset(&x, 0, sizeof x);
    gm_mem_init(&x.mem, NULL, 0);
    assert_int_equal(eg_open(&x, "root ::= <|zz|>", GM_EBNF_GBNF, v, 0, &err), GM_ERR_GRAMMAR);
    assert_non_null(strstr(err.message, "<|zz|>"));
    eg_close(&x, false);
    gm_vocab_data_destroy(v);
    assert_int_equal(atomic_load(&x.mem.used), 0);
    assert_int_equal(atomic_load(&m.used), 0);
}

/* Forced bytes: what every continuation starts with, up to a choice, EOS or a special token. */
static void test_forced_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *grammar, *prefix, *forced;
    } cases[] = {
        {"root ::= \"hello\" [a-z]", "", "hello"},
        {"root ::= \"hello\" [a-z]", "he", "llo"},
        {"root ::= \"ab\" (\"cd\" | \"ce\")", "", "abc"},
        {"root ::= x x\nx ::= \"[\" \"]\"", "[", "][]"},
        {"root ::= \"ab\" \"c\"?", "", "ab"},      /* accepting after "ab": stop */
        {"root ::= [a-z]{3} \"!\"", "abc", "!"},
        {"root ::= (\"x\" \"y\"){200,300}", "", "xyxyxy"},  /* capped at 6 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        eg x;
        memset(&x, 0, sizeof x);
        gm_mem_init(&x.mem, NULL, 0);
        static const char *const toks[] = {"a", "b"};
        gm_error err;
        if (eg_open(&x, cases[i].grammar, GM_EBNF_GBNF, small_vocab(&x.mem, toks, 2), 0, &err) !=
            GM_OK)
            fail_msg("%s: %s", cases[i].grammar, err.message);
        gm_estate *s = gm_estate_start(x.e, &err), *n;
        assert_int_equal(gm_estate_accept_bytes(x.e, x.w, s, (const uint8_t *)cases[i].prefix,
                                                strlen(cases[i].prefix), &n, &err),
                         GM_OK);
        uint8_t buf[6];
        size_t len;
        assert_int_equal(gm_estate_forced_bytes(x.e, x.w, n, buf, sizeof buf, &len, &err), GM_OK);
        if (len != strlen(cases[i].forced) || memcmp(buf, cases[i].forced, len))
            fail_msg("%s after \"%s\": forced \"%.*s\", want \"%s\"", cases[i].grammar,
                     cases[i].prefix, (int)len, buf, cases[i].forced);
        gm_estate_release(x.e, s);
        gm_estate_release(x.e, n);
        eg_close(&x, true);
        assert_int_equal(atomic_load(&x.mem.used), 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_languages),
        cmocka_unit_test(test_small_masks),
        cmocka_unit_test(test_cross_cache_lookalikes),
        cmocka_unit_test(test_tail_calls),
        cmocka_unit_test(test_sibling_entries),
        cmocka_unit_test(test_real_grammars),
        cmocka_unit_test(test_utf8_loops),
        cmocka_unit_test(test_utf8_loops_bytes),
        cmocka_unit_test(test_c_programs),
        cmocka_unit_test(test_serialize),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_lookahead_refused),
        cmocka_unit_test(test_special_tokens),
        cmocka_unit_test(test_forced_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
