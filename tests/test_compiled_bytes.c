/*
 * Compiled grammars through bytes (gm_compiled_save_bytes /
 * gm_compiled_load_bytes) and files: a grammar compiled in one process and
 * loaded in another must give the masks of the original, step by step.
 *
 * Each case compiles a grammar for the sp32k test vocabulary, saves it to
 * bytes and to a file, loads both, and walks the original and both copies
 * together: along the tokens of a program text (LALR: the bundled Go, JSON
 * and Python grammars, under the basic and the contextual lexer) and along
 * seeded random walks that pick allowed tokens (every case, the Earley
 * grammars' too: EBNF, JSON Schema, structural tag). At every step the three
 * masks must be equal bit for bit, and the three matchers must agree on
 * accepting the token. Before the walk the copies' file bytes equal the
 * bytes (one format, one writer). Then bad bytes: truncated at every
 * section, wrong magic, other version, other byte order, a flipped payload
 * byte (checksum), and corrupted tables behind a valid checksum, each a
 * GM_ERR_FORMAT naming what is wrong. A vocabulary alone goes through
 * bytes too (gm_vocab_save_bytes): a grammar compiled for the copy is the
 * same compiled file. The file copy is mapped (note [mapped compiled
 * files]): it holds less memory of its own, and survives the file being
 * saved again and truncated while loaded.
 */
#include "tests/testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/objects.h"

typedef struct world {
    gm_vocab *vocab;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    gm_error err;
    if (gm_vocab_create_from_file(gm_test_src_path("tests/data/sp32k"), NULL, &w->vocab, &err))
        fail_msg("vocab: %s", err.message);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    gm_vocab_destroy(w->vocab);
    free(w);
    return 0;
}

enum { NCOPIES = 3 }; /* the original, loaded from bytes, loaded from a file */

typedef struct walk {
    gm_compiled *c[NCOPIES];
    gm_matcher *m[NCOPIES];
    uint32_t *mask[NCOPIES];
    size_t words;
    uint32_t nbits;
} walk;

static void walk_open(walk *wk, gm_compiled *orig, bool eager)
{
    gm_error err;
    memset(wk, 0, sizeof *wk);
    wk->c[0] = orig;
    uint8_t *bytes;
    size_t len;
    if (gm_compiled_save_bytes(orig, &bytes, &len, &err) != GM_OK)
        fail_msg("save_bytes: %s", err.message);
    gm_compile_options co;
    gm_compile_options_init_defaults(&co);
    co.eager = eager;
    if (gm_compiled_load_bytes(bytes, len, &co, &wk->c[1], &err) != GM_OK)
        fail_msg("load_bytes: %s", err.message);
    char path[] = "/tmp/gm_test_compiled_bytes_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    if (gm_compiled_save(orig, path, &err) != GM_OK)
        fail_msg("save: %s", err.message);
    size_t flen;
    char *file = gm_test_read_file(path, &flen);
    assert_int_equal(flen, len);
    assert_memory_equal(file, bytes, len);
    free(file);
    if (gm_compiled_load(path, &co, &wk->c[2], &err) != GM_OK)
        fail_msg("load: %s", err.message);
    /* The file load maps it (note [mapped compiled files]): its vocabulary and tables
       are not the process's own memory, as the copies of the bytes load are. */
    gm_compiled_stats s1, s2;
    gm_compiled_get_stats(wk->c[1], &s1);
    gm_compiled_get_stats(wk->c[2], &s2);
    if (s2.memory_bytes + gm_compiled_vocab_size(orig) > s1.memory_bytes)
        fail_msg("the mapped load holds %zu bytes, the copying one %zu", s2.memory_bytes,
                 s1.memory_bytes);
    /* Saving over the file while it is loaded leaves the loaded copy whole (a new file
       is renamed over it); a truncated file would fault its pages. */
    if (gm_compiled_save(orig, path, &err) != GM_OK)
        fail_msg("save again: %s", err.message);
    assert_int_equal(truncate(path, 0), 0);
    unlink(path);
    /* Loading copies what it keeps: the bytes can go. */
    memset(bytes, 0xa5, len);
    gm_compiled_free_bytes(orig, bytes);
    wk->words = gm_compiled_mask_words(orig);
    wk->nbits = gm_compiled_vocab_size(orig);
    for (int i = 0; i < NCOPIES; i++) {
        assert_int_equal(gm_compiled_mask_words(wk->c[i]), wk->words);
        if (gm_matcher_create(wk->c[i], NULL, &wk->m[i], &err) != GM_OK)
            fail_msg("matcher: %s", err.message);
        wk->mask[i] = calloc(wk->words, 4);
    }
}

static void walk_close(walk *wk)
{
    for (int i = 0; i < NCOPIES; i++) {
        gm_matcher_destroy(wk->m[i]);
        gm_compiled_destroy(wk->c[i]);
        free(wk->mask[i]);
    }
}

/* Fills the three masks and checks them equal; the number of allowed tokens. */
static uint32_t walk_fill(walk *wk, const char *what, size_t step)
{
    gm_error err;
    for (int i = 0; i < NCOPIES; i++)
        if (gm_matcher_fill_mask(wk->m[i], wk->mask[i], wk->words, &err) != GM_OK)
            fail_msg("%s step %zu copy %d: fill: %s", what, step, i, err.message);
    for (int i = 1; i < NCOPIES; i++)
        if (memcmp(wk->mask[0], wk->mask[i], wk->words * 4))
            fail_msg("%s step %zu: the mask of copy %d (%s) differs from the original's", what,
                     step, i, i == 1 ? "bytes" : "file");
    uint32_t n = 0;
    for (size_t k = 0; k < wk->words; k++)
        n += (uint32_t)__builtin_popcount(wk->mask[0][k]);
    return n;
}

/* Accepts id in all three; whether the original accepted it (the copies must agree). */
static bool walk_accept(walk *wk, uint32_t id, const char *what, size_t step)
{
    gm_error err;
    gm_status st0 = gm_matcher_accept_token(wk->m[0], id, &err);
    for (int i = 1; i < NCOPIES; i++)
        if (gm_matcher_accept_token(wk->m[i], id, &err) != st0)
            fail_msg("%s step %zu: copy %d disagrees on token %u", what, step, i, id);
    return st0 == GM_OK;
}

/* The program text's tokens, each mask compared before it is accepted. */
static void walk_text(walk *wk, const gm_vocab *v, const char *text, const char *what)
{
    uint32_t *ids;
    size_t n;
    gm_error err;
    if (gm_vocab_encode(v, text, strlen(text), NULL, &ids, &n, &err) != GM_OK)
        fail_msg("encode: %s", err.message);
    assert_true(n > 10);
    for (size_t i = 0; i < n; i++) {
        walk_fill(wk, what, i);
        if (!((wk->mask[0][ids[i] >> 5] >> (ids[i] & 31)) & 1))
            fail_msg("%s step %zu: the text's token %u is masked", what, i, ids[i]);
        assert_true(walk_accept(wk, ids[i], what, i));
    }
    walk_fill(wk, what, n);
    assert_true(gm_matcher_is_accepting(wk->m[0]));
    gm_vocab_free_ids(v, ids);
    for (int i = 0; i < NCOPIES; i++)
        gm_matcher_reset(wk->m[i]);
}

/* Seeded random walks over allowed tokens (not EOS until the end). */
static void walk_random(walk *wk, uint64_t seed, size_t steps, const char *what)
{
    for (int round = 0; round < 3; round++) {
        for (size_t s = 0; s < steps; s++) {
            if (gm_matcher_is_terminated(wk->m[0]))
                break;
            uint32_t n = walk_fill(wk, what, s);
            if (n == 0)
                break;
            uint32_t pick = (uint32_t)(gm_test_rand(&seed) % n), id = 0;
            for (uint32_t t = 0; t < wk->nbits; t++)
                if ((wk->mask[0][t >> 5] >> (t & 31)) & 1 && pick-- == 0) {
                    id = t;
                    break;
                }
            assert_true(walk_accept(wk, id, what, s));
        }
        for (int i = 0; i < NCOPIES; i++)
            gm_matcher_reset(wk->m[i]);
    }
}

static gm_compiled *compile(world *w, gm_grammar *g, bool eager)
{
    gm_compile_options co;
    gm_compile_options_init_defaults(&co);
    co.eager = eager;
    gm_compiled *c;
    gm_error err;
    if (gm_compiled_create(g, w->vocab, &co, &c, &err) != GM_OK)
        fail_msg("compile: %s", err.message);
    gm_grammar_destroy(g);
    return c;
}

static gm_compiled *bundled(world *w, const char *name, gm_lexer_kind lexer, bool eager)
{
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.lexer = lexer;
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_create_bundled(name, &go, &g, &err) != GM_OK)
        fail_msg("grammar %s: %s", name, err.message);
    return compile(w, g, eager);
}

static const char go_text[] =
    "package main\n\nimport \"fmt\"\n\n// Sum adds.\nfunc Sum(xs []int) (s int) {\n"
    "\tfor _, x := range xs {\n\t\tif x > 0 && x != 7 {\n\t\t\ts += x\n\t\t}\n\t}\n"
    "\treturn s\n}\n\nfunc main() {\n\tm := map[string]int{\"a\": 1}\n"
    "\tfmt.Println(Sum([]int{1, 2, 3}), m)\n}\n";
static const char json_text[] =
    "{\"name\": \"gramask\", \"ok\": true, \"n\": [1, -2.5e3, null],\n"
    " \"nested\": {\"s\": \"\\u00e9\\n\", \"e\": {}}}";
static const char python_text[] =
    "import os\n\n\nclass Box:\n    def __init__(self, x=1, *args, **kw):\n"
    "        self.x = [i ** 2 for i in range(x) if i % 2]\n\n"
    "    def get(self):\n        try:\n            return self.x[0]\n"
    "        except IndexError as e:\n            raise ValueError('empty') from e\n\n\n"
    "print(Box(5).get(), os.sep)\n";

static void lalr_case(world *w, const char *name, const char *text, gm_lexer_kind lexer,
                      bool eager)
{
    char what[64];
    snprintf(what, sizeof what, "%s (%s lexer%s)", name,
             lexer == GM_LEXER_CONTEXTUAL ? "contextual" : "basic", eager ? ", eager" : "");
    walk wk;
    gm_compiled *c = bundled(w, name, lexer, eager);
    if (!eager) {
        /* Some tables built before saving: the file keeps them. */
        gm_matcher *m;
        gm_error err;
        uint32_t *mask = calloc(gm_compiled_mask_words(c), 4);
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        assert_int_equal(gm_matcher_fill_mask(m, mask, gm_compiled_mask_words(c), &err), GM_OK);
        gm_matcher_destroy(m);
        free(mask);
    }
    walk_open(&wk, c, eager);
    walk_text(&wk, w->vocab, text, what);
    walk_random(&wk, 0x5eed ^ strlen(text), 60, what);
    walk_close(&wk);
}

static void lalr_go(void **state)
{
    lalr_case(*state, "go", go_text, GM_LEXER_BASIC, false);
    lalr_case(*state, "go", go_text, GM_LEXER_CONTEXTUAL, false);
}

static void lalr_json(void **state)
{
    lalr_case(*state, "json", json_text, GM_LEXER_BASIC, true);
    lalr_case(*state, "json", json_text, GM_LEXER_CONTEXTUAL, true);
}

static void lalr_python(void **state)
{
    lalr_case(*state, "python", python_text, GM_LEXER_BASIC, false);
    lalr_case(*state, "python", python_text, GM_LEXER_CONTEXTUAL, false);
}

static void earley_case(world *w, gm_grammar *g, const char *what)
{
    walk wk;
    walk_open(&wk, compile(w, g, false), false);
    walk_random(&wk, 0xbeef ^ strlen(what), 80, what);
    walk_close(&wk);
}

static void earley_ebnf(void **state)
{
    static const char ebnf[] =
        "root ::= item (\", \" item)* \"!\"\n"
        "item ::= [a-z]+ | \"<\" [0-9]{1,4} \">\" | \"\\\"\" [^\"\\\\]* \"\\\"\"\n";
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = GM_FORMAT_EBNF;
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_create(ebnf, strlen(ebnf), "t.ebnf", &go, &g, &err) != GM_OK)
        fail_msg("ebnf: %s", err.message);
    earley_case(*state, g, "EBNF");
}

static void earley_schema(void **state)
{
    static const char schema[] =
        "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\": 12},"
        " \"age\": {\"type\": \"integer\", \"minimum\": 0},"
        " \"tags\": {\"type\": \"array\", \"items\": {\"enum\": [\"a\", \"bc\", \"def\"]}}},"
        " \"required\": [\"name\", \"tags\"], \"additionalProperties\": false}";
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_from_json_schema(schema, strlen(schema), NULL, &g, &err) != GM_OK)
        fail_msg("schema: %s", err.message);
    earley_case(*state, g, "JSON Schema");
}

static void earley_structural_tag(void **state)
{
    static const char tag[] =
        "{\"type\": \"structural_tag\", \"format\": {\"type\": \"triggered_tags\","
        " \"triggers\": [\"<f=\"], \"tags\": [{\"begin\": \"<f=get>\", \"content\":"
        " {\"type\": \"json_schema\", \"json_schema\": {\"type\": \"object\", \"properties\":"
        " {\"q\": {\"type\": \"string\"}}, \"required\": [\"q\"]}}, \"end\": \"</f>\"}]}}";
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_from_structural_tag(tag, strlen(tag), NULL, &g, &err) != GM_OK)
        fail_msg("structural tag: %s", err.message);
    earley_case(*state, g, "structural tag");
}

/* The load of b[0..n) fails with GM_ERR_FORMAT and a message holding `why`. */
static void refused(const uint8_t *b, size_t n, const char *why)
{
    gm_compiled *c = (gm_compiled *)1;
    gm_error err;
    gm_status st = gm_compiled_load_bytes(b, n, NULL, &c, &err);
    if (st != GM_ERR_FORMAT)
        fail_msg("expected GM_ERR_FORMAT (%s), got %s: %s", why, gm_status_name(st),
                 st == GM_OK ? "" : err.message);
    assert_null(c);
    if (!strstr(err.message, why))
        fail_msg("expected \"%s\" in: %s", why, err.message);
    assert_non_null(strstr(err.message, "the compiled bytes"));
}

/* b with its checksum made right again after an edit of the payload. */
static void reseal(uint8_t *b, size_t n)
{
    gm_compiled_header(b, b + GM_COMPILED_HEADER, n - GM_COMPILED_HEADER);
}

static void bad_bytes(void **state)
{
    world *w = *state;
    gm_compiled *c = bundled(w, "json", GM_LEXER_CONTEXTUAL, false);
    uint8_t *orig;
    size_t n;
    gm_error err;
    assert_int_equal(gm_compiled_save_bytes(c, &orig, &n, &err), GM_OK);
    uint8_t *b = malloc(n);

    refused(orig, 0, "not a gramask compiled file");
    refused(orig, 20, "not a gramask compiled file");
    for (size_t cut = GM_COMPILED_HEADER; cut < n; cut += 1 + (n - cut) / 7)
        refused(orig, cut, "truncated");
    memcpy(b, orig, n);
    b[0] = 'X';
    refused(b, n, "not a gramask compiled file");
    memcpy(b, orig, n);
    uint32_t v = GM_COMPILED_FORMAT - 1;
    memcpy(b + 8, &v, 4);
    refused(b, n, "recompile");
    memcpy(b, orig, n);
    uint32_t order = 0x04030201;
    memcpy(b + 12, &order, 4);
    refused(b, n, "other byte order");
    memcpy(b, orig, n);
    b[n / 2] ^= 0x40;
    refused(b, n, "checksum");

    /* Behind a valid checksum: the tables themselves are checked. */
    memcpy(b, orig, n);
    uint32_t huge = 0xffffffffu;
    memcpy(b + GM_COMPILED_HEADER + 4, &huge, 4); /* the vocabulary size */
    reseal(b, n);
    refused(b, n, "corrupt compiled file");
    /* The contextual lexer section: its tag, then its sizes. */
    size_t off = 0;
    for (size_t i = GM_COMPILED_HEADER; i + 8 <= n && !off; i++) {
        uint32_t lark;
        memcpy(&lark, orig + i + 4, 4);
        if (!memcmp(orig + i, "CTXL", 4) && lark <= 1)
            off = i;
    }
    assert_true(off > 0);
    memcpy(b, orig, n);
    memcpy(b + off + 12, &huge, 4); /* nsets */
    reseal(b, n);
    refused(b, n, "contextual lexer sizes");
    /* A state's lexer past the last one. */
    memcpy(b, orig, n);
    uint32_t nsets;
    memcpy(&nsets, orig + off + 12, 4);
    memcpy(b + off + 20, &nsets, 4); /* set_of[0] */
    reseal(b, n);
    refused(b, n, "contextual lexer does not exist");
    /* Every byte of the section flipped in turn: an error, or a grammar that loads (a
       change the checks cannot tell from a real grammar), never a crash (ASan/UBSan
       builds check the reads). */
    size_t end = off + 4096 < n ? off + 4096 : n;
    for (size_t i = off; i < end; i += 3) {
        memcpy(b, orig, n);
        b[i] ^= 0x11;
        reseal(b, n);
        gm_compiled *l = NULL;
        gm_status st = gm_compiled_load_bytes(b, n, NULL, &l, &err);
        assert_true(st == GM_OK || st == GM_ERR_FORMAT);
        gm_compiled_destroy(l);
    }
    /* Old files are refused by their version before anything else. */
    memcpy(b, orig, n);
    v = 7;
    memcpy(b + 8, &v, 4);
    refused(b, n, "version 7");

    gm_compiled *none;
    assert_int_equal(gm_compiled_load_bytes(NULL, 5, NULL, &none, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_compiled_save_bytes(NULL, &b, &n, &err), GM_ERR_ARGUMENT);
    free(b);
    gm_compiled_free_bytes(c, orig);
    gm_compiled_destroy(c);
}

/* A vocabulary through bytes: a grammar compiled for the copy is the same file. */
static void vocab_bytes(void **state)
{
    world *w = *state;
    uint8_t *b;
    size_t n;
    gm_error err;
    assert_int_equal(gm_vocab_save_bytes(w->vocab, &b, &n, &err), GM_OK);
    gm_vocab *v;
    assert_int_equal(gm_vocab_load_bytes(b, n, NULL, &v, &err), GM_OK);
    assert_int_equal(gm_vocab_size(v), gm_vocab_size(w->vocab));
    const uint32_t *e0, *e1;
    size_t ne = gm_vocab_eos_ids(w->vocab, &e0);
    assert_true(ne > 0);
    assert_int_equal(gm_vocab_eos_ids(v, &e1), ne);
    assert_memory_equal(e0, e1, ne * 4);
    gm_grammar *g;
    assert_int_equal(gm_grammar_create_bundled("json", NULL, &g, &err), GM_OK);
    gm_compiled *c0, *c1;
    assert_int_equal(gm_compiled_create(g, w->vocab, NULL, &c0, &err), GM_OK);
    assert_int_equal(gm_compiled_create(g, v, NULL, &c1, &err), GM_OK);
    gm_grammar_destroy(g);
    uint8_t *f0, *f1;
    size_t n0, n1;
    assert_int_equal(gm_compiled_save_bytes(c0, &f0, &n0, &err), GM_OK);
    assert_int_equal(gm_compiled_save_bytes(c1, &f1, &n1, &err), GM_OK);
    assert_int_equal(n0, n1);
    assert_memory_equal(f0, f1, n0);
    /* A compiled grammar's bytes are not a vocabulary's, and the reverse. */
    gm_vocab *bad;
    assert_int_equal(gm_vocab_load_bytes(f0, n0, NULL, &bad, &err), GM_ERR_FORMAT);
    assert_non_null(strstr(err.message, "more than a vocabulary"));
    gm_compiled *badc;
    assert_int_equal(gm_compiled_load_bytes(b, n, NULL, &badc, &err), GM_ERR_FORMAT);
    b[n - 1] ^= 1;
    assert_int_equal(gm_vocab_load_bytes(b, n, NULL, &bad, &err), GM_ERR_FORMAT);
    assert_non_null(strstr(err.message, "checksum"));
    assert_int_equal(gm_vocab_load_bytes(b, 10, NULL, &bad, &err), GM_ERR_FORMAT);
    gm_compiled_free_bytes(c0, f0);
    gm_compiled_free_bytes(c1, f1);
    gm_compiled_destroy(c0);
    gm_compiled_destroy(c1);
    gm_vocab_free_bytes(w->vocab, b);
    gm_vocab_destroy(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_bytes),
        cmocka_unit_test(vocab_bytes),
        cmocka_unit_test(lalr_json),
        cmocka_unit_test(lalr_go),
        cmocka_unit_test(lalr_python),
        cmocka_unit_test(earley_ebnf),
        cmocka_unit_test(earley_schema),
        cmocka_unit_test(earley_structural_tag),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
