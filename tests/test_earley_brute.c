/*
 * The Earley engine's masks against the independent reference recognizer
 * (tests/earley_ref.h), which shares no code with it:
 *   - the eight llama.cpp grammars of ../shared/grammars/gbnf with the full
 *     real vocabularies (sp32k, llama3, qwen3), at sampled steps of random
 *     constrained walks;
 *   - length-bounded strings (counted repetitions, ASCII and multi-byte),
 *     at fixed prefixes reaching each bound and along random walks;
 *   - generated random grammars (ambiguous, left-recursive, nullable, deeply
 *     nested, large repetitions, special tokens) over small vocabularies,
 *     at every step;
 *   - random constrained generation: thousands of texts per grammar never
 *     reach a dead end, and every finished text is a sentence.
 * A token is allowed iff the reference says prefix + its bytes is viable;
 * EOS iff the prefix is a sentence; special tokens iff the reference
 * accepts them as the special symbol.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>

#include "ir/ebnf_parse.h"
#include "earley/engine.h"
#include "vocab/trie.h"
#include "vocab/vocab.h"
#include "tests/earley_ref.h"

typedef struct ctx {
    gm_mem mem;
    gm_vocab_data *v;
    gm_trie *t;
    gm_egrammar *g;
    gm_eengine *e;
    gm_escratch *w;
    gm_eref *ref;
    const uint8_t **ext;   /* [vocab] token bytes for gm_eref_try_all */
    uint32_t *len;
    uint8_t *viable;
    size_t words;
} ctx;

static gm_status ctx_open(ctx *c, const char *text, gm_vocab_data *v, uint32_t variant,
                          gm_error *err)
{
    gm_ebnf src;
    gm_ebnf_init(&src, &c->mem);
    gm_status st = gm_ebnf_parse(&src, "g.gbnf", text, strlen(text), GM_EBNF_GBNF, NULL, err);
    if (st == GM_OK)
        st = gm_egrammar_build(&c->mem, &src, NULL, &c->g, err);
    if (st == GM_OK)
        st = gm_eref_create(&src, &c->ref, err);
    gm_ebnf_free(&src);
    if (st != GM_OK)
        return st;
    c->v = v;
    assert_int_equal(gm_trie_build(&c->mem, v, &c->t, err), GM_OK);
    gm_eengine_options o;
    memset(&o, 0, sizeof o);
    o.variant = variant;
    /* Exactness, not the work budget: some random grammars are wildly ambiguous
       (r0 ::= r0 [^a-z] | (r0){1,40} r1 | "x" needs more than the default by step 4). */
    o.limits.max_earley_work = UINT32_MAX;
    if ((st = gm_eengine_create(&c->mem, c->g, v, c->t, NULL, &o, &c->e, err)) != GM_OK)
        return st;
    assert_int_equal(gm_escratch_create(c->e, &c->w, err), GM_OK);
    c->ext = malloc(v->size * sizeof *c->ext);
    c->len = malloc(v->size * sizeof *c->len);
    c->viable = malloc(v->size);
    for (uint32_t i = 0; i < v->size; i++) {
        size_t l;
        c->ext[i] = gm_vocab_data_token(v, i, &l);
        c->len[i] = (uint32_t)l;
    }
    c->words = (v->size + 31) / 32;
    return GM_OK;
}

static void ctx_close(ctx *c)
{
    free(c->ext);
    free(c->len);
    free(c->viable);
    gm_eref_destroy(c->ref);
    gm_escratch_destroy(c->e, c->w);
    gm_eengine_destroy(c->e);
    gm_egrammar_destroy(c->g);
    gm_trie_destroy(c->t);
    gm_vocab_data_destroy(c->v);
    assert_int_equal(atomic_load(&c->mem.used), 0);
}

/* The token of rank `pick` among the bits set in mask. */
static uint32_t nth_token(const uint32_t *mask, size_t words, uint32_t pick)
{
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

/* The engine's mask at s equals the reference's at its committed prefix. */
static void compare(ctx *c, gm_estate *s, const uint32_t *mask, const char *what, int step)
{
    const gm_vocab_data *v = c->v;
    gm_eref_try_all(c->ref, c->ext, c->len, v->size, c->viable, NULL);
    bool acc = gm_eref_accepting(c->ref);
    if (acc != gm_estate_accepting(c->e, s))
        fail_msg("%s step %d: accepting: engine %d, reference %d", what, step,
                 gm_estate_accepting(c->e, s), acc);
    for (uint32_t t = 0; t < v->size; t++) {
        bool got = (mask[t / 32] >> (t % 32)) & 1, want;
        if (v->flags[t] & GM_TOK_PADDING)
            want = false;
        else if (v->flags[t] & GM_TOK_SPECIAL)
            want = gm_eref_try_special(c->ref, c->ext[t], c->len[t], NULL) ||
                   ((v->flags[t] & GM_TOK_EOS) && acc);
        else
            want = c->len[t] > 0 && c->viable[t];
        if (got != want) {
            fprintf(stderr, "token %u ", t);
            gm_test_show_bytes(stderr, c->ext[t], c->len[t]);
            fail_msg("%s step %d: token %u: engine %d, reference %d", what, step, t, got, want);
        }
    }
}

/* Random walks under the engine's masks, compared with the reference every `every` steps. */
static void walks(ctx *c, int nwalks, int steps, int every, uint32_t seed, const char *what)
{
    gm_error err;
    uint32_t *mask = malloc(c->words * 4);
    for (int wk = 0; wk < nwalks; wk++) {
        gm_eref_rollback(c->ref, 0);
        gm_estate *s = gm_estate_start(c->e, &err);
        uint32_t rng = seed * 7919u + (uint32_t)wk * 2654435761u + 1;
        for (int k = 0; k < steps; k++) {
            if (gm_estate_fill_mask(c->e, c->w, s, mask, c->words, &err) != GM_OK) fail_msg("%s step %d: %s", what, k, err.message);
            if (k % every == 0)
                compare(c, s, mask, what, k);
            uint32_t n = 0;
            for (size_t i = 0; i < c->words; i++)
                n += (uint32_t)__builtin_popcount(mask[i]);
            if (n == 0)
                fail_msg("%s: dead end at step %d", what, k);
            rng = rng * 1103515245u + 12345u;
            uint32_t t = nth_token(mask, c->words, (rng >> 8) % n);
            if (c->v->flags[t] & GM_TOK_EOS)
                break;
            gm_estate *nx;
            assert_int_equal(gm_estate_accept_token(c->e, c->w, s, t, &nx, &err), GM_OK);
            gm_estate_release(c->e, s);
            s = nx;
            bool ok = (c->v->flags[t] & GM_TOK_SPECIAL)
                          ? gm_eref_feed_special(c->ref, c->ext[t], c->len[t])
                          : gm_eref_feed(c->ref, c->ext[t], c->len[t]);
            if (!ok)
                fail_msg("%s: the reference rejects token %u at step %d", what, t, k);
        }
        gm_estate_release(c->e, s);
    }
    free(mask);
}

static void test_gbnf_grammars(void **state)
{
    (void)state;
    static const char *const files[] = {"json.gbnf", "c.gbnf", "arithmetic.gbnf", "chess.gbnf",
                                        "english.gbnf", "japanese.gbnf", "json_arr.gbnf",
                                        "list.gbnf"};
    static const char *const toks[] = {"llama3", "qwen3", "sp32k"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        ctx c;
        memset(&c, 0, sizeof c);
        gm_mem_init(&c.mem, NULL, 0);
        gm_error err;
        char path[256];
        snprintf(path, sizeof path, "tokenizers/%s/tokenizer.json", toks[i % 3]);
        gm_vocab_data *v;
        assert_int_equal(gm_vocab_load(&c.mem, gm_test_shared_path(path), NULL, &v, &err), GM_OK);
        snprintf(path, sizeof path, "grammars/gbnf/%s", files[i]);
        size_t len;
        char *text = gm_test_read_file(gm_test_shared_path(path), &len);
        if (ctx_open(&c, text, v, 0, &err) != GM_OK)
            fail_msg("%s: %s", files[i], err.message);
        free(text);
        walks(&c, 2, 30, 7, (uint32_t)i, files[i]);
        ctx_close(&c);
    }
}

/* Masks compared after every `every` bytes of text (a sentence's prefix) and at its end. */
static void fixed(ctx *c, const char *text, size_t every, const char *what)
{
    gm_error err;
    uint32_t *mask = malloc(c->words * 4);
    gm_eref_rollback(c->ref, 0);
    gm_estate *s = gm_estate_start(c->e, &err);
    for (size_t k = 0;; k++) {
        assert_int_equal(gm_estate_fill_mask(c->e, c->w, s, mask, c->words, &err), GM_OK);
        if (k % every == 0 || !text[k])
            compare(c, s, mask, what, (int)k);
        if (!text[k])
            break;
        gm_estate *nx;
        assert_int_equal(gm_estate_accept_bytes(c->e, c->w, s, (const uint8_t *)text + k, 1, &nx,
                                                &err),
                         GM_OK);
        assert_non_null(nx);
        gm_estate_release(c->e, s);
        s = nx;
        assert_true(gm_eref_feed(c->ref, (const uint8_t *)text + k, 1));
    }
    gm_estate_release(c->e, s);
    free(mask);
}

/*
 * Counted repetitions of single characters, as JSON Schema's length bounds
 * make them: a walk from inside one accepts whole trie subtrees whose
 * counters stay within their bounds (note [counted loops] in
 * earley/closed.c). Masks at every step, near and at each bound.
 */
static void test_counted_strings(void **state)
{
    (void)state;
    static const char *const grammars[] = {
        "root ::= \"{\\\"k\\\": \\\"\" ([^\"\\\\\\x00-\\x1f] | \"\\\\\" [\"\\\\/bfnrt]){0,40} \"\\\", \\\"n\\\": \\\"\" "
        "  ([^\"\\\\\\x00-\\x1f] | \"\\\\\" [\"\\\\/bfnrt]){33,40} \"\\\"}\"\n",
        "root ::= \"\\\"\" [a-zA-Z0-9 ]{5,60} \"\\\"\"\n",
        "root ::= ([a-z]{1,20} \" \"){3,5} \".\"\n",
        "root ::= \"<\" [ -~]{0,50} \">\"\n",
    };
    /* prefixes that reach each bound, in ASCII and in multi-byte characters */
    static const char *const texts[][2] = {
        {"{\"k\": \"abcdefghijklmnopqrstuvwxyz0123456789\", \"n\": \"abcdefghijklmnopqrstuvwxyz0123456\"}",
         "{\"k\": \"\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba" "ab\", \"n\": \"\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba\xd1\x81\xd1\x8c\xd0\xba" "ab\"}"},
        {"\"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 012345\"", "\"abcd"},
        {"abcdefghijklmnopqrst abcdefghijklmnopqrst abc abc ab .", "a"},
        {"<abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVW>", "<"},
    };
    for (size_t i = 0; i < sizeof grammars / sizeof *grammars; i++) {
        ctx c;
        memset(&c, 0, sizeof c);
        gm_mem_init(&c.mem, NULL, 0);
        gm_error err;
        gm_vocab_data *v;
        assert_int_equal(gm_vocab_load(&c.mem, gm_test_shared_path("tokenizers/sp32k/tokenizer.json"),
                                       NULL, &v, &err),
                         GM_OK);
        if (ctx_open(&c, grammars[i], v, 0, &err) != GM_OK)
            fail_msg("grammar %zu: %s", i, err.message);
        char what[32];
        snprintf(what, sizeof what, "counted grammar %zu", i);
        walks(&c, 2, 24, 3, (uint32_t)i + 100, what);
        fixed(&c, texts[i][0], 3, what);
        fixed(&c, texts[i][1], 3, what);
        ctx_close(&c);
    }
}

/* ---- random grammars ----------------------------------------------------------- */

typedef struct gen {
    uint32_t rng;
    char buf[4096];
    size_t n;
    int depth;
} gen;

static uint32_t rnd(gen *g, uint32_t n)
{
    g->rng = g->rng * 1103515245u + 12345u;
    return (g->rng >> 8) % n;
}

static void put(gen *g, const char *s)
{
    size_t l = strlen(s);
    if (g->n + l < sizeof g->buf - 1) {
        memcpy(g->buf + g->n, s, l);
        g->n += l;
        g->buf[g->n] = 0;
    }
}

/* An expression over rules r0..r{nrules-1} and the letters a-e, +, (, ). */
static void expr(gen *g, int nrules, int depth)
{
    static const char *const lits[] = {"\"a\"", "\"b\"", "\"ab\"", "\"c\"", "\"(\"", "\")\"",
                                       "\"+\"", "[a-c]", "[^a-z]", "\"é\"", "[d-e]", "\"\""};
    static const char *const reps[] = {"*", "+", "?", "{2}", "{0,3}", "{1,40}", "{0,100}",
                                       "{3,}", "{35,70}"};
    uint32_t k = depth > 3 ? rnd(g, 2) : rnd(g, 6);
    char tmp[64];
    switch (k) {
    case 0:
        put(g, lits[rnd(g, sizeof lits / sizeof *lits)]);
        break;
    case 1:
        snprintf(tmp, sizeof tmp, "r%u", rnd(g, (uint32_t)nrules));
        put(g, tmp);
        break;
    case 2: /* sequence */
        put(g, "(");
        expr(g, nrules, depth + 1);
        put(g, " ");
        expr(g, nrules, depth + 1);
        put(g, ")");
        break;
    case 3: /* alternative */
        put(g, "(");
        expr(g, nrules, depth + 1);
        put(g, " | ");
        expr(g, nrules, depth + 1);
        put(g, ")");
        break;
    case 4: /* repetition */
        put(g, "(");
        expr(g, nrules, depth + 1);
        put(g, ")");
        put(g, reps[rnd(g, sizeof reps / sizeof *reps)]);
        break;
    default: /* a special token now and then */
        put(g, rnd(g, 3) ? "\"a\"" : "<|t|>");
        break;
    }
}

/* A grammar of 1-5 rules; rule 0 left-recursive or nullable now and then. */
static void random_grammar(gen *g, uint32_t seed)
{
    g->rng = seed * 2654435761u + 17;
    g->n = 0;
    g->buf[0] = 0;
    int nrules = 1 + (int)rnd(g, 5);
    put(g, "root ::= r0\n");
    for (int r = 0; r < nrules; r++) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "r%d ::= ", r);
        put(g, tmp);
        uint32_t shape = rnd(g, 4);
        if (shape == 0) {
            snprintf(tmp, sizeof tmp, "r%d ", r); /* left recursion */
            put(g, tmp);
            expr(g, nrules, 1);
            put(g, " | ");
            expr(g, nrules, 1);
        } else if (shape == 1) {
            put(g, "\"\" | "); /* nullable */
            expr(g, nrules, 1);
        } else {
            expr(g, nrules, 0);
        }
        /* a way out, so that every rule derives a string */
        put(g, " | \"x\"\n");
    }
}

static gm_vocab_data *random_vocab(gm_mem *m, uint32_t seed, bool special)
{
    static const char *const base[] = {"a", "b", "c", "d", "e", "x", "+", "(", ")", "é", "\xc3",
                                       "\xa9", "!", " ", "ab", "ba", "aa", "abc", "x+", "+x",
                                       "((", "))", "()", "aaaa", "bbbb", "ccc", "ee", "de",
                                       "a(", ")b", "xa", "ax", "éa", "1", "<", "|t|>"};
    uint32_t n = sizeof base / sizeof *base;
    uint32_t extra = 12;
    gm_vocab_data *v = gm_vocab_new_(m, n + extra + 2, 1024);
    assert_non_null(v);
    uint32_t off = 0, rng = seed * 31u + 3;
    for (uint32_t i = 0; i < n + extra; i++) {
        char tok[16];
        if (i < n) {
            snprintf(tok, sizeof tok, "%s", base[i]);
        } else {
            /* random strings of 2-6 characters from the base letters */
            size_t l = 0;
            rng = rng * 1103515245u + 12345u;
            size_t want = 2 + (rng >> 8) % 5;
            while (l < want) {
                rng = rng * 1103515245u + 12345u;
                tok[l++] = "abcdex+()!"[(rng >> 8) % 10];
            }
            tok[l] = 0;
        }
        size_t l = strlen(tok);
        memcpy(v->bytes + off, tok, l);
        off += (uint32_t)l;
        v->offsets[i + 1] = off;
    }
    memcpy(v->bytes + off, "<|t|>", 5);
    off += 5;
    v->offsets[n + extra + 1] = off;
    v->flags[n + extra] = special ? GM_TOK_SPECIAL : 0;
    memcpy(v->bytes + off, "</s>", 4);
    off += 4;
    v->offsets[n + extra + 2] = off;
    v->flags[n + extra + 1] = GM_TOK_SPECIAL;
    uint32_t eos = n + extra + 1;
    gm_error err;
    assert_int_equal(gm_vocab_finish_(v, &eos, 1, NULL, "random", &err), GM_OK);
    return v;
}

static void test_random_grammars(void **state)
{
    (void)state;
    int tested = 0;
    for (uint32_t seed = 0; seed < 400 && tested < 150; seed++) {
        gen g;
        random_grammar(&g, seed);
        ctx c;
        memset(&c, 0, sizeof c);
        gm_mem_init(&c.mem, NULL, 0);
        gm_error err;
        gm_vocab_data *v = random_vocab(&c.mem, seed, true);
        gm_status st = ctx_open(&c, g.buf, v, seed % 7 == 3 ? GM_EVARIANT_NO_PRUNING : 0, &err);
        if (st != GM_OK) {
            /* Grammars the front end or the check refuses (no way out of a
               recursion...) are skipped; the engine must agree with the
               reference on the ones both take. */
            if (st != GM_ERR_GRAMMAR && st != GM_ERR_SYNTAX)
                fail_msg("seed %u: %s\n%s", seed, err.message, g.buf);
            if (c.e == NULL && c.g)
                gm_egrammar_destroy(c.g);
            gm_eref_destroy(c.ref);
            gm_trie_destroy(c.t);
            gm_vocab_data_destroy(v);
            continue;
        }
        char what[64];
        snprintf(what, sizeof what, "random grammar %u", seed);
        if (getenv("GM_TEST_SHOW"))
            fprintf(stderr, "%s:\n%s", what, g.buf);
        walks(&c, 3, 25, 1, seed, what);
        ctx_close(&c);
        tested++;
    }
    assert_true(tested >= 100);
}

/*
 * Constrained generation: many texts per grammar, each token drawn
 * uniformly from the mask; no dead end ever, and every text that ends with
 * EOS is a sentence for the reference.
 */
static void test_generation(void **state)
{
    (void)state;
    static const char *const files[] = {"json.gbnf", "c.gbnf", "arithmetic.gbnf", "chess.gbnf",
                                        "english.gbnf", "japanese.gbnf", "json_arr.gbnf",
                                        "list.gbnf"};
    gm_error err;
    int total_finished = 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        ctx c;
        memset(&c, 0, sizeof c);
        gm_mem_init(&c.mem, NULL, 0);
        gm_vocab_data *v;
        assert_int_equal(gm_vocab_load(&c.mem, gm_test_shared_path("tokenizers/sp32k/tokenizer.json"),
                                       NULL, &v, &err),
                         GM_OK);
        char path[256];
        snprintf(path, sizeof path, "grammars/gbnf/%s", files[i]);
        size_t len;
        char *text = gm_test_read_file(gm_test_shared_path(path), &len);
        if (ctx_open(&c, text, v, 0, &err) != GM_OK)
            fail_msg("%s: %s", files[i], err.message);
        free(text);
        uint32_t *mask = malloc(c.words * 4);
        int finished = 0, texts = 1000;
        uint8_t *out = malloc(1 << 16);
        for (int k = 0; k < texts; k++) {
            gm_estate *s = gm_estate_start(c.e, &err);
            uint32_t rng = (uint32_t)k * 2654435761u + (uint32_t)i;
            size_t olen = 0;
            for (int step = 0; step < 60; step++) {
                assert_int_equal(gm_estate_fill_mask(c.e, c.w, s, mask, c.words, &err), GM_OK);
                uint32_t n = 0;
                for (size_t j = 0; j < c.words; j++)
                    n += (uint32_t)__builtin_popcount(mask[j]);
                if (n == 0)
                    fail_msg("%s: dead end in text %d at step %d", files[i], k, step);
                /* EOS, when allowed, half of the time: texts end. */
                rng = rng * 1103515245u + 12345u;
                if (gm_estate_accepting(c.e, s) && ((rng >> 9) & 1)) {
                    gm_eref_rollback(c.ref, 0);
                    if (!gm_eref_feed(c.ref, out, olen) || !gm_eref_accepting(c.ref))
                        fail_msg("%s: text %d is not a sentence", files[i], k);
                    finished++;
                    break;
                }
                rng = rng * 1103515245u + 12345u;
                uint32_t t = nth_token(mask, c.words, (rng >> 8) % n);
                if (v->flags[t] & GM_TOK_EOS)
                    continue;
                gm_estate *nx;
                assert_int_equal(gm_estate_accept_token(c.e, c.w, s, t, &nx, &err), GM_OK);
                gm_estate_release(c.e, s);
                s = nx;
                if (olen + c.len[t] < (1 << 16)) {
                    memcpy(out + olen, c.ext[t], c.len[t]);
                    olen += c.len[t];
                }
            }
            gm_estate_release(c.e, s);
        }
        print_message("%s: %d texts, %d finished, no dead end\n", files[i], texts, finished);
        total_finished += finished;
        free(out);
        free(mask);
        ctx_close(&c);
    }
    assert_true(total_finished > 2000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gbnf_grammars),
        cmocka_unit_test(test_counted_strings),
        cmocka_unit_test(test_random_grammars),
        cmocka_unit_test(test_generation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
