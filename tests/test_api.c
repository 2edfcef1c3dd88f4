/*
 * Tests of the public C API, written only against include/gramask.h:
 * behaviour of the matcher operations on a small grammar and vocabulary,
 * and a clear error (never a crash) for every kind of misuse.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gramask.h"

/* A tiny assignment language with an ignored space. */
static const char grammar_text[] =
    "start: stmt+\n"
    "stmt: NAME \"=\" value \";\"\n"
    "value: NAME | NUMBER | \"[\" [value (\",\" value)*] \"]\"\n"
    "NAME: /[a-z]+/\n"
    "NUMBER: /[0-9]+/\n"
    "%ignore \" \"\n";

/* ids: 0 "x" 1 "y" 2 "=" 3 ";" 4 "1" 5 "23" 6 "[" 7 "]" 8 "," 9 " " 10 "x=" 11 "];"
 *      12 "ab" 13 "<eos>" (special, EOS) 14 "<pad>" (special) 15 "q!" 16 "=[" */
static const char *const vocab_tokens[] = {"x", "y", "=", ";", "1", "23", "[", "]", ",", " ",
                                           "x=", "];", "ab", "<eos>", "<pad>", "q!", "=["};
enum { NTOK = 17, EOS = 13 };

typedef struct world {
    gm_vocab *vocab;
    gm_grammar *grammar;
    gm_compiled *compiled;
    gm_matcher *m;
    uint32_t mask[8];
    size_t words;
} world;

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    const uint8_t *bytes[NTOK];
    size_t lens[NTOK];
    bool special[NTOK] = {0};
    for (int i = 0; i < NTOK; i++) {
        bytes[i] = (const uint8_t *)vocab_tokens[i];
        lens[i] = strlen(vocab_tokens[i]);
    }
    special[13] = special[14] = true;
    uint32_t eos = EOS;
    gm_vocab_options vo;
    gm_vocab_options_init_defaults(&vo);
    vo.model_vocab_size = 40; /* ids 17..39 are padding */
    gm_error err;
    if (gm_vocab_create_from_tokens(bytes, lens, NTOK, special, &eos, 1, &vo, &w->vocab, &err))
        fail_msg("vocab: %s", err.message);
    if (gm_grammar_create(grammar_text, strlen(grammar_text), "assign.lark", NULL, &w->grammar,
                          &err))
        fail_msg("grammar: %s", err.message);
    if (gm_compiled_create(w->grammar, w->vocab, NULL, &w->compiled, &err))
        fail_msg("compile: %s", err.message);
    if (gm_matcher_create(w->compiled, NULL, &w->m, &err))
        fail_msg("matcher: %s", err.message);
    w->words = gm_compiled_mask_words(w->compiled);
    *state = w;
    return 0;
}

static int teardown(void **state)
{
    world *w = *state;
    gm_matcher_destroy(w->m);
    gm_compiled_destroy(w->compiled);
    gm_grammar_destroy(w->grammar);
    gm_vocab_destroy(w->vocab);
    free(w);
    return 0;
}

static int allowed(world *w, uint32_t id) { return (w->mask[id >> 5] >> (id & 31)) & 1; }

static void fill(world *w)
{
    gm_error err;
    if (gm_matcher_fill_mask(w->m, w->mask, w->words, &err))
        fail_msg("fill: %s", err.message);
}

static void accept(world *w, uint32_t id)
{
    gm_error err;
    if (gm_matcher_accept_token(w->m, id, &err))
        fail_msg("accept %u: %s", id, err.message);
}

static void sizes(void **state)
{
    world *w = *state;
    assert_int_equal(gm_compiled_vocab_size(w->compiled), 40);
    assert_int_equal(w->words, 2);
    assert_int_equal(gm_vocab_size(w->vocab), 40);
    const uint32_t *eos;
    assert_int_equal(gm_vocab_eos_ids(w->vocab, &eos), 1);
    assert_int_equal(eos[0], EOS);
    size_t len;
    assert_memory_equal(gm_vocab_token(w->vocab, 10, &len), "x=", 2);
    assert_int_equal(len, 2);
    assert_null(gm_vocab_token(w->vocab, 40, &len));
}

static void masks_follow_the_grammar(void **state)
{
    world *w = *state;
    fill(w);
    /* At the start: a statement begins with a NAME. */
    assert_true(allowed(w, 0) && allowed(w, 1) && allowed(w, 10) && allowed(w, 12));
    assert_true(allowed(w, 9)); /* ignored space */
    assert_false(allowed(w, 2) || allowed(w, 4) || allowed(w, 6) || allowed(w, 15));
    assert_false(allowed(w, EOS)); /* stmt+ needs one statement */
    assert_false(allowed(w, 14));  /* special, never */
    for (uint32_t id = 17; id < 40; id++)
        assert_false(allowed(w, id)); /* padding, never */
    accept(w, 10);                      /* "x=" */
    fill(w);
    assert_true(allowed(w, 4) && allowed(w, 6) && allowed(w, 0));
    assert_false(allowed(w, 2) || allowed(w, 3) || allowed(w, 16));
    accept(w, 6); /* "[" */
    fill(w);
    assert_true(allowed(w, 7) && allowed(w, 11) && allowed(w, 4));
    assert_false(allowed(w, 8) || allowed(w, 3));
    accept(w, 11); /* "];" */
    fill(w);
    assert_true(allowed(w, EOS) && allowed(w, 0));
    assert_true(gm_matcher_is_accepting(w->m));
    assert_false(gm_matcher_is_terminated(w->m));
    accept(w, EOS);
    assert_true(gm_matcher_is_terminated(w->m));
    assert_false(gm_matcher_is_accepting(w->m));
}

static void rejected_tokens_leave_state_unchanged(void **state)
{
    world *w = *state;
    gm_matcher_reset(w->m);
    gm_error err;
    assert_int_equal(gm_matcher_accept_token(w->m, 2, &err), GM_ERR_REJECTED);
    assert_non_null(strstr(err.message, "not allowed"));
    assert_int_equal(gm_matcher_accept_token(w->m, 14, &err), GM_ERR_REJECTED);
    assert_int_equal(gm_matcher_accept_token(w->m, 20, &err), GM_ERR_REJECTED);
    assert_int_equal(gm_matcher_accept_token(w->m, EOS, &err), GM_ERR_REJECTED);
    accept(w, 0); /* still at the start: "x" is fine */
    accept(w, 2);
    fill(w);
    assert_true(allowed(w, 4));
}

static void rollback_and_validate(void **state)
{
    world *w = *state;
    gm_matcher_reset(w->m);
    uint32_t draft[] = {0, 2, 5, 3, 1, 3, 4};
    size_t n;
    gm_error err;
    assert_int_equal(gm_matcher_validate_tokens(w->m, draft, 7, &n, &err), GM_OK);
    assert_int_equal(n, 5); /* x = 23 ; y   then ";" is not allowed after y without "=" */
    fill(w);
    assert_true(allowed(w, 0)); /* unchanged */
    for (int i = 0; i < 4; i++)
        accept(w, draft[i]);
    fill(w);
    assert_true(allowed(w, EOS));
    assert_int_equal(gm_matcher_rollback(w->m, 2, &err), GM_OK); /* back to "x =" */
    fill(w);
    assert_false(allowed(w, EOS));
    assert_true(allowed(w, 4));
    assert_int_equal(gm_matcher_rollback(w->m, 3, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "only 2"));
    accept(w, 4);
    accept(w, 3);
    accept(w, EOS);
    assert_int_equal(gm_matcher_rollback(w->m, 1, &err), GM_OK);
    assert_false(gm_matcher_is_terminated(w->m));
    fill(w);
    assert_true(allowed(w, EOS));
}

static void clone_is_independent(void **state)
{
    world *w = *state;
    gm_matcher_reset(w->m);
    accept(w, 0);
    gm_matcher *c;
    gm_error err;
    assert_int_equal(gm_matcher_clone(w->m, &c, &err), GM_OK);
    accept(w, 2);
    assert_int_equal(gm_matcher_accept_token(c, 4, &err), GM_ERR_REJECTED);
    assert_int_equal(gm_matcher_accept_token(c, 2, &err), GM_OK);
    assert_int_equal(gm_matcher_accept_token(c, 4, &err), GM_OK);
    gm_matcher_destroy(c);
    accept(w, 5);
}

static void bytes_and_forced(void **state)
{
    world *w = *state;
    gm_matcher_reset(w->m);
    gm_error err;
    const uint8_t text[] = "ab = [1, 2];";
    assert_int_equal(gm_matcher_accept_bytes(w->m, text, sizeof text - 1, &err), GM_OK);
    assert_true(gm_matcher_is_accepting(w->m));
    assert_int_equal(gm_matcher_accept_bytes(w->m, (const uint8_t *)"=", 1, &err),
                     GM_ERR_REJECTED);
    gm_matcher_reset(w->m);
    assert_int_equal(gm_matcher_accept_bytes(w->m, (const uint8_t *)"x", 1, &err), GM_OK);
    uint8_t buf[8];
    size_t len;
    /* After "x" a letter, a space or "=" may follow: nothing is forced. */
    assert_int_equal(gm_matcher_forced_bytes(w->m, buf, sizeof buf, &len, &err), GM_OK);
    assert_int_equal(len, 0);
    assert_int_equal(gm_matcher_accept_bytes(w->m, (const uint8_t *)"=1", 2, &err), GM_OK);
    /* After "x=1" a digit, a space or ";" may follow. */
    assert_int_equal(gm_matcher_forced_bytes(w->m, buf, sizeof buf, &len, &err), GM_OK);
    assert_int_equal(len, 0);
}

static void batch_matches_single(void **state)
{
    world *w = *state;
    gm_error err;
    gm_batch *b;
    gm_batch_options too_long = {.threads = 2, .spin_us = 2000000};
    assert_int_equal(gm_batch_create(&too_long, &b, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "spin_us 2000000"));
    assert_null(b);
    gm_batch_options two = {.threads = 2, .spin_us = GM_BATCH_SPIN_US_DEFAULT};
    assert_int_equal(gm_batch_create(&two, &b, &err), GM_OK);
    gm_matcher *ms[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(gm_matcher_create(w->compiled, NULL, &ms[i], &err), GM_OK);
    assert_int_equal(gm_matcher_accept_token(ms[1], 10, &err), GM_OK);
    assert_int_equal(gm_matcher_accept_token(ms[2], 0, &err), GM_OK);
    uint32_t rows[3 * 2];
    assert_int_equal(gm_batch_fill_masks(b, ms, 3, rows, 2, &err), GM_OK);
    for (int i = 0; i < 3; i++) {
        uint32_t one[2];
        assert_int_equal(gm_matcher_fill_mask(ms[i], one, 2, &err), GM_OK);
        assert_memory_equal(one, rows + 2 * i, sizeof one);
    }
    assert_int_equal(gm_batch_fill_masks(b, ms, 3, rows, 1, &err), GM_ERR_ARGUMENT);
    for (int i = 0; i < 3; i++)
        gm_matcher_destroy(ms[i]);
    gm_batch_destroy(b);
}

/* Writes bytes to path (a test helper, no error handling beyond asserts). */
static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static void *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc(*n ? *n : 1);
    assert_int_equal(fread(p, 1, *n, f), *n);
    fclose(f);
    return p;
}

static void compiled_files(void **state)
{
    world *w = *state;
    gm_error err;
    char path[] = "/tmp/gramask_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gm_compiled_save(w->compiled, path, &err), GM_OK);
    /* Round trip: the loaded grammar gives the same masks along a sentence. */
    gm_compiled *c;
    assert_int_equal(gm_compiled_load(path, NULL, &c, &err), GM_OK);
    assert_int_equal(gm_compiled_vocab_size(c), 40);
    gm_matcher *a, *b;
    assert_int_equal(gm_matcher_create(w->compiled, NULL, &a, &err), GM_OK);
    assert_int_equal(gm_matcher_create(c, NULL, &b, &err), GM_OK);
    uint32_t ids[] = {10, 6, 4, 8, 0, 11};
    for (size_t i = 0; i <= 6; i++) {
        uint32_t ma[2], mb[2];
        assert_int_equal(gm_matcher_fill_mask(a, ma, 2, &err), GM_OK);
        assert_int_equal(gm_matcher_fill_mask(b, mb, 2, &err), GM_OK);
        assert_memory_equal(ma, mb, sizeof ma);
        if (i < 6) {
            assert_int_equal(gm_matcher_accept_token(a, ids[i], &err), GM_OK);
            assert_int_equal(gm_matcher_accept_token(b, ids[i], &err), GM_OK);
        }
    }
    gm_matcher_destroy(a);
    gm_matcher_destroy(b);
    gm_compiled_destroy(c);
    /* Every way a file can be wrong is a GM_ERR_FORMAT that says which. */
    size_t n;
    uint8_t *good = read_all(path, &n);
    uint8_t *bad = malloc(n);
    struct {
        size_t keep;           /* bytes of the file kept (truncation) */
        size_t at;             /* a byte changed there (n = none) */
        uint8_t value;
        const char *says;
    } cases[] = {
        {40, n, 0, "truncated"},
        {n - 1, n, 0, "truncated"},
        {n, n - 7, 0x55, "checksum"},
        {n, 8, 99, "version"},
        {n, 12, 0x04, "byte order"},
        {n, 0, 'X', "not a gramask compiled file"},
        {10, n, 0, "not a gramask compiled file"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memcpy(bad, good, n);
        if (cases[k].at < n)
            bad[cases[k].at] = cases[k].value == bad[cases[k].at] ? (uint8_t)~cases[k].value
                                                                    : cases[k].value;
        if (cases[k].at == 12) { /* the byte-order mark of the other order */
            uint32_t other = 0x04030201;
            memcpy(bad + 12, &other, 4);
        }
        write_file(path, bad, cases[k].keep);
        assert_int_equal(gm_compiled_load(path, NULL, &c, &err), GM_ERR_FORMAT);
        if (!strstr(err.message, cases[k].says))
            fail_msg("case %zu: \"%s\" does not say %s", k, err.message, cases[k].says);
        assert_null(c);
    }
    free(good);
    free(bad);
    unlink(path);
    assert_int_equal(gm_compiled_load(path, NULL, &c, &err), GM_ERR_IO);
    assert_int_equal(gm_compiled_load(NULL, NULL, &c, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_compiled_save(NULL, path, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_compiled_save(w->compiled, "/nonexistent-dir/x.gmc", &err), GM_ERR_IO);
}

/* Whether token id is set in mask. */
static bool has_bit(const uint32_t *mask, uint32_t id)
{
    return (mask[id >> 5] >> (id & 31)) & 1;
}

/*
 * Lark mode falls back as Lark's lexer does: a line end that may run on into
 * f"..." (SynCode's docstring idiom) ends before "fo". Masks say so, and a
 * compiled file keeps it.
 */
static void lark_backtracking(void **state)
{
    (void)state;
    static const char text[] = "start: (NAME _NL)+\nNAME: /[a-z]+/\n_NL: (/\\n/ | /f\"[a-z]*\"/)+\n";
    /* ids: 0 "a" 1 "\n" 2 "\nf" 3 "o" 4 "\nfo" 5 "\"" 6 "<eos>" */
    static const char *const toks[] = {"a", "\n", "\nf", "o", "\nfo", "\"", "<eos>"};
    const uint8_t *bytes[7];
    size_t lens[7];
    bool special[7] = {0};
    for (int i = 0; i < 7; i++) {
        bytes[i] = (const uint8_t *)toks[i];
        lens[i] = strlen(toks[i]);
    }
    special[6] = true;
    uint32_t eos = 6;
    gm_error err;
    gm_vocab *v;
    assert_int_equal(gm_vocab_create_from_tokens(bytes, lens, 7, special, &eos, 1, NULL, &v, &err), GM_OK);
    gm_grammar_options lark;
    gm_grammar_options_init_defaults(&lark);
    lark.conflicts = GM_CONFLICTS_LARK;
    gm_grammar *plain, *g;
    assert_int_equal(gm_grammar_create(text, strlen(text), "nl.lark", NULL, &plain, &err), GM_OK);
    assert_int_equal(gm_grammar_create(text, strlen(text), "nl.lark", &lark, &g, &err), GM_OK);
    gm_compiled *cp, *c, *loaded;
    assert_int_equal(gm_compiled_create(plain, v, NULL, &cp, &err), GM_OK);
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    char path[] = "/tmp/gramask_test_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gm_compiled_save(c, path, &err), GM_OK);
    assert_int_equal(gm_compiled_load(path, NULL, &loaded, &err), GM_OK);
    unlink(path);
    gm_matcher *mp, *m, *ml;
    assert_int_equal(gm_matcher_create(cp, NULL, &mp, &err), GM_OK);
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    assert_int_equal(gm_matcher_create(loaded, NULL, &ml, &err), GM_OK);
    uint32_t mask[1], again[1];
    assert_int_equal(gm_matcher_accept_token(mp, 0, &err), GM_OK);
    assert_int_equal(gm_matcher_fill_mask(mp, mask, 1, &err), GM_OK);
    assert_false(has_bit(mask, 4)); /* without backtracking "\nfo" is no lexeme */
    assert_int_equal(gm_matcher_accept_token(mp, 4, &err), GM_ERR_REJECTED);
    /* "a" "\nf" "o" "\n" <eos>, and "a" "\nfo" "\n" <eos>. */
    const uint32_t path1[] = {0, 2, 3, 1, 6}, path2[] = {0, 4, 1, 6};
    const uint32_t *paths[] = {path1, path2};
    const size_t lens2[] = {5, 4};
    for (int p = 0; p < 2; p++) {
        gm_matcher_reset(m);
        gm_matcher_reset(ml);
        for (size_t i = 0; i < lens2[p]; i++) {
            assert_int_equal(gm_matcher_fill_mask(m, mask, 1, &err), GM_OK);
            assert_int_equal(gm_matcher_fill_mask(ml, again, 1, &err), GM_OK);
            assert_int_equal(mask[0], again[0]);
            assert_true(has_bit(mask, paths[p][i]));
            if (i == 2 && p == 0)
                assert_true(has_bit(mask, 5)); /* "\nf" then "\"": the line end runs on */
            assert_int_equal(gm_matcher_accept_token(m, paths[p][i], &err), GM_OK);
            assert_int_equal(gm_matcher_accept_token(ml, paths[p][i], &err), GM_OK);
        }
        assert_true(gm_matcher_is_terminated(m));
    }
    gm_matcher_destroy(mp);
    gm_matcher_destroy(m);
    gm_matcher_destroy(ml);
    gm_compiled_destroy(loaded);
    gm_compiled_destroy(c);
    gm_compiled_destroy(cp);
    gm_grammar_destroy(g);
    gm_grammar_destroy(plain);
    gm_vocab_destroy(v);
}

static void misuse_is_reported(void **state)
{
    world *w = *state;
    gm_error err;
    gm_matcher_reset(w->m);
    assert_int_equal(gm_matcher_fill_mask(NULL, w->mask, w->words, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_matcher_fill_mask(w->m, NULL, w->words, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_matcher_fill_mask(w->m, w->mask, 1, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "needs 2"));
    assert_int_equal(gm_matcher_accept_token(w->m, 40, &err), GM_ERR_ARGUMENT);
    assert_non_null(strstr(err.message, "out of range"));
    assert_int_equal(gm_matcher_accept_token(NULL, 0, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_matcher_accept_bytes(w->m, NULL, 3, &err), GM_ERR_ARGUMENT);
    size_t n;
    assert_int_equal(gm_matcher_validate_tokens(w->m, NULL, 2, &n, &err), GM_ERR_ARGUMENT);
    uint32_t bad[] = {0, 99};
    assert_int_equal(gm_matcher_validate_tokens(w->m, bad, 2, &n, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_matcher_rollback(NULL, 1, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_matcher_clone(NULL, NULL, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_matcher_forced_bytes(w->m, NULL, 4, &n, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_matcher_create(NULL, NULL, NULL, &err), GM_ERR_ARGUMENT);
    assert_int_equal(gm_compiled_create(NULL, NULL, NULL, NULL, &err), GM_ERR_ARGUMENT);
    gm_compiled *c;
    assert_int_equal(gm_compiled_create(w->grammar, NULL, NULL, &c, &err), GM_ERR_ARGUMENT);
    gm_vocab *v;
    assert_int_equal(gm_vocab_create_from_file("/nonexistent/tokenizer.json", NULL, &v, &err),
                     GM_ERR_IO);
    assert_non_null(strstr(err.message, "/nonexistent/tokenizer.json"));
    assert_int_equal(gm_vocab_create_from_tokens(NULL, NULL, 0, NULL, NULL, 0, NULL, &v, &err),
                     GM_ERR_ARGUMENT);
    gm_grammar *g;
    assert_int_equal(gm_grammar_create("start: \"a\" (\n", 13, "bad.lark", NULL, &g, &err),
                     GM_ERR_SYNTAX);
    assert_int_equal(err.line, 1);
    assert_string_equal(err.file, "bad.lark");
    assert_int_equal(gm_grammar_create_bundled("no-such-grammar", NULL, &g, &err),
                     GM_ERR_ARGUMENT);
    assert_int_equal(gm_grammar_create(NULL, 0, NULL, NULL, &g, &err), GM_ERR_ARGUMENT);
    /* After EOS: no more tokens, and an all-zero mask with GM_ERR_STATE. */
    accept(w, 0);
    accept(w, 2);
    accept(w, 4);
    accept(w, 3);
    accept(w, EOS);
    assert_int_equal(gm_matcher_accept_token(w->m, 0, &err), GM_ERR_STATE);
    memset(w->mask, 0xff, sizeof w->mask);
    assert_int_equal(gm_matcher_fill_mask(w->m, w->mask, w->words, &err), GM_ERR_STATE);
    assert_int_equal(w->mask[0] | w->mask[1], 0);
    assert_int_equal(gm_matcher_accept_bytes(w->m, (const uint8_t *)"x", 1, &err), GM_ERR_STATE);
    /* NULL is fine for every destroy. */
    gm_matcher_destroy(NULL);
    gm_compiled_destroy(NULL);
    gm_grammar_destroy(NULL);
    gm_vocab_destroy(NULL);
    gm_batch_destroy(NULL);
    assert_string_equal(gm_status_name(GM_ERR_REJECTED), "rejected");
    assert_non_null(gm_version());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes),
        cmocka_unit_test(masks_follow_the_grammar),
        cmocka_unit_test(rejected_tokens_leave_state_unchanged),
        cmocka_unit_test(rollback_and_validate),
        cmocka_unit_test(clone_is_independent),
        cmocka_unit_test(bytes_and_forced),
        cmocka_unit_test(batch_matches_single),
        cmocka_unit_test(compiled_files),
        cmocka_unit_test(lark_backtracking),
        cmocka_unit_test(misuse_is_reported),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
