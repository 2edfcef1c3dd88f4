/*
 * The public C API over the Earley engine, written only against
 * include/gramask.h: GBNF, EBNF and regex grammars behind the same objects
 * as Lark grammars (formats, extensions, errors with locations), every
 * matcher operation, compiled files, the batch pool — and each mask checked
 * token by token against the matcher's own accept (a mask bit is set iff
 * accepting that token succeeds), on a vocabulary made to split characters
 * and span rule boundaries.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gramask.h"

/* A list of numbers or words; "é" is two bytes, and tokens below split it. */
static const char gbnf_text[] =
    "# a comment\n"
    "root ::= \"[\" ws ( item ( \",\" ws item )* )? \"]\"\n"
    "item ::= [0-9]+ | \"\\\"\" [a-zé]* \"\\\"\"\n"
    "ws ::= \" \"?\n";

static const char *const vocab_tokens[] = {
    "[", "]", ",", " ", "\"", "1", "23", "a", "b", "\xc3", "\xa9", "\xc3\xa9", "\"é\"", "[1",
    ",\"", "\"]", "] ", "x", "<eos>", "<|special|>", "", "1,2", ", ", "[\"", "é]", "99]"};
enum { NTOK = 26, EOS = 18, SPECIAL = 19 };

typedef struct world {
    gm_vocab *vocab;
    gm_grammar *grammar;
    gm_compiled *compiled;
    gm_matcher *m;
    uint32_t mask[2];
    size_t words;
} world;

static gm_vocab *make_vocab(void)
{
    const uint8_t *bytes[NTOK];
    size_t lens[NTOK];
    bool special[NTOK] = {0};
    for (int i = 0; i < NTOK; i++) {
        bytes[i] = (const uint8_t *)vocab_tokens[i];
        lens[i] = strlen(vocab_tokens[i]);
    }
    special[EOS] = special[SPECIAL] = true;
    uint32_t eos = EOS;
    gm_vocab *v;
    gm_error err;
    if (gm_vocab_create_from_tokens(bytes, lens, NTOK, special, &eos, 1, NULL, &v, &err))
        fail_msg("vocab: %s", err.message);
    return v;
}

static gm_grammar *make_grammar(const char *text, gm_grammar_format format)
{
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = format;
    gm_grammar *g;
    gm_error err;
    if (gm_grammar_create(text, strlen(text), "t.gbnf", &go, &g, &err))
        fail_msg("grammar: %s", err.message);
    return g;
}

static int setup(void **state)
{
    world *w = calloc(1, sizeof *w);
    gm_error err;
    w->vocab = make_vocab();
    w->grammar = make_grammar(gbnf_text, GM_FORMAT_GBNF);
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

static bool bit(const uint32_t *mask, uint32_t t) { return (mask[t >> 5] >> (t & 31)) & 1; }

/* Every mask bit agrees with accepting that token on a clone. */
static void check_mask(world *w, gm_matcher *m)
{
    gm_error err;
    assert_int_equal(gm_matcher_fill_mask(m, w->mask, w->words, &err), GM_OK);
    for (uint32_t t = 0; t < NTOK; t++) {
        gm_matcher *c;
        assert_int_equal(gm_matcher_clone(m, &c, &err), GM_OK);
        gm_status st = gm_matcher_accept_token(c, t, &err);
        if (st != GM_OK && st != GM_ERR_REJECTED)
            fail_msg("token %u: %s", t, err.message);
        if ((st == GM_OK) != bit(w->mask, t))
            fail_msg("token %u ('%s'): mask %d, accept %s", t, vocab_tokens[t], bit(w->mask, t),
                     gm_status_name(st));
        gm_matcher_destroy(c);
    }
}

static void accept_text(gm_matcher *m, const char *s)
{
    gm_error err;
    if (gm_matcher_accept_bytes(m, (const uint8_t *)s, strlen(s), &err))
        fail_msg("accept '%s': %s", s, err.message);
}

static void engine_and_format(void **state)
{
    world *w = *state;
    assert_int_equal(gm_grammar_engine(w->grammar), GM_ENGINE_EARLEY);
    gm_compiled_stats st;
    gm_compiled_get_stats(w->compiled, &st);
    assert_int_equal(st.engine, GM_ENGINE_EARLEY);
    assert_int_equal(st.vocab_size, NTOK);
    assert_true(st.rules >= 1);
    gm_grammar *lark;
    gm_error err;
    assert_int_equal(gm_grammar_create_bundled("json", NULL, &lark, &err), GM_OK);
    assert_int_equal(gm_grammar_engine(lark), GM_ENGINE_LALR);
    gm_grammar_destroy(lark);
}

/* Masks equal accept at every step of several walks through the language. */
static void masks_agree_with_accept(void **state)
{
    world *w = *state;
    static const char *const texts[] = {"[]", "[ 1,23]", "[\"aé\", \"b\",99]", "[ \"\"]"};
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        gm_matcher_reset(w->m);
        const char *s = texts[k];
        for (size_t i = 0; s[i]; i++) {
            check_mask(w, w->m);
            char one[2] = {s[i], 0};
            accept_text(w->m, one);
        }
        check_mask(w, w->m);
        assert_true(gm_matcher_is_accepting(w->m));
        assert_true(bit(w->mask, EOS));
    }
}

static void special_and_padding_never(void **state)
{
    world *w = *state;
    gm_error err;
    assert_int_equal(gm_matcher_fill_mask(w->m, w->mask, w->words, &err), GM_OK);
    assert_false(bit(w->mask, SPECIAL));
    assert_false(bit(w->mask, 20)); /* the empty token */
    assert_int_equal(gm_matcher_accept_token(w->m, SPECIAL, &err), GM_ERR_REJECTED);
    assert_int_equal(gm_matcher_accept_token(w->m, 20, &err), GM_ERR_REJECTED);
    assert_int_equal(gm_matcher_accept_token(w->m, NTOK, &err), GM_ERR_ARGUMENT);
}

static void split_characters(void **state)
{
    world *w = *state;
    gm_error err;
    accept_text(w->m, "[\"");
    assert_int_equal(gm_matcher_accept_token(w->m, 9, &err), GM_OK);  /* first byte of é */
    assert_int_equal(gm_matcher_fill_mask(w->m, w->mask, w->words, &err), GM_OK);
    assert_true(bit(w->mask, 10));                                      /* its second byte */
    assert_false(bit(w->mask, 7));                                      /* not a new letter */
    assert_false(gm_matcher_is_accepting(w->m));
    assert_int_equal(gm_matcher_accept_token(w->m, 10, &err), GM_OK);
    check_mask(w, w->m);
}

static void rollback_clone_validate(void **state)
{
    world *w = *state;
    gm_error err;
    uint32_t seq[] = {13, 2, 6, 1, EOS}; /* "[1" "," "23" "]" EOS */
    size_t n;
    assert_int_equal(gm_matcher_validate_tokens(w->m, seq, 5, &n, &err), GM_OK);
    assert_int_equal(n, 5);
    uint32_t bad[] = {13, 13};
    assert_int_equal(gm_matcher_validate_tokens(w->m, bad, 2, &n, &err), GM_OK);
    assert_int_equal(n, 1);
    for (int i = 0; i < 5; i++)
        assert_int_equal(gm_matcher_accept_token(w->m, seq[i], &err), GM_OK);
    assert_true(gm_matcher_is_terminated(w->m));
    assert_int_equal(gm_matcher_fill_mask(w->m, w->mask, w->words, &err), GM_ERR_STATE);
    assert_int_equal(gm_matcher_rollback(w->m, 2, &err), GM_OK); /* back after "23" */
    assert_false(gm_matcher_is_terminated(w->m));
    gm_matcher *c;
    assert_int_equal(gm_matcher_clone(w->m, &c, &err), GM_OK);
    assert_int_equal(gm_matcher_accept_token(c, 17, &err), GM_ERR_REJECTED); /* "x" */
    assert_int_equal(gm_matcher_accept_token(c, 1, &err), GM_OK);
    assert_true(gm_matcher_is_accepting(c));
    assert_false(gm_matcher_is_accepting(w->m));
    assert_int_equal(gm_matcher_rollback(c, 1, &err), GM_OK);
    assert_int_equal(gm_matcher_rollback(c, 4, &err), GM_ERR_ARGUMENT);
    check_mask(w, c);
    gm_matcher_destroy(c);
    check_mask(w, w->m);
}

static void forced_bytes(void **state)
{
    (void)state;
    gm_vocab *v = make_vocab();
    gm_grammar *g = make_grammar("root ::= \"abc\" (\"d\" | \"e\") \"fg\"", GM_FORMAT_GBNF);
    gm_compiled *c;
    gm_matcher *m;
    gm_error err;
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
    uint8_t buf[16];
    size_t len;
    assert_int_equal(gm_matcher_forced_bytes(m, buf, sizeof buf, &len, &err), GM_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(buf, "abc", 3);
    assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)"abce", 4, &err), GM_OK);
    assert_int_equal(gm_matcher_forced_bytes(m, buf, 1, &len, &err), GM_OK);
    assert_int_equal(len, 1);
    assert_int_equal(buf[0], 'f');
    assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)"fx", 2, &err),
                     GM_ERR_REJECTED);
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

static void regex_and_ebnf_formats(void **state)
{
    (void)state;
    gm_vocab *v = make_vocab();
    static const struct {
        const char *text;
        gm_grammar_format format;
        const char *yes, *no;
    } cases[] = {
        {"\\[[0-9]+(,[0-9]+)*\\]", GM_FORMAT_REGEX, "[1,23]", "[1,]"},
        {"root ::= \"[\" [0-9]* \"]\"", GM_FORMAT_EBNF, "[123]", "[a]"},
    };
    for (size_t k = 0; k < 2; k++) {
        gm_grammar *g = make_grammar(cases[k].text, cases[k].format);
        gm_compiled *c;
        gm_matcher *m;
        gm_error err;
        assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        accept_text(m, cases[k].yes);
        assert_true(gm_matcher_is_accepting(m));
        gm_matcher_reset(m);
        assert_int_equal(gm_matcher_accept_bytes(m, (const uint8_t *)cases[k].no,
                                                 strlen(cases[k].no), &err),
                         GM_ERR_REJECTED);
        gm_matcher_destroy(m);
        gm_compiled_destroy(c);
        gm_grammar_destroy(g);
    }
    gm_vocab_destroy(v);
}

static void errors_name_the_place(void **state)
{
    (void)state;
    gm_grammar_options go;
    gm_grammar_options_init_defaults(&go);
    go.format = GM_FORMAT_GBNF;
    gm_grammar *g = NULL;
    gm_error err;
    const char *text = "root ::= item\nitem ::= [a-z\n";
    assert_int_equal(gm_grammar_create(text, strlen(text), "bad.gbnf", &go, &g, &err),
                     GM_ERR_SYNTAX);
    assert_null(g);
    assert_string_equal(err.file, "bad.gbnf");
    assert_int_equal(err.line, 2);
    const char *undef = "root ::= missing\n";
    assert_int_not_equal(gm_grammar_create(undef, strlen(undef), "u.gbnf", &go, &g, &err), GM_OK);
    assert_non_null(strstr(err.message, "missing"));
    go.format = (gm_grammar_format)42;
    assert_int_equal(gm_grammar_create(undef, strlen(undef), "u.gbnf", &go, &g, &err),
                     GM_ERR_ARGUMENT);
    /* by extension */
    char path[] = "/tmp/gramask_test_XXXXXX.gbnf";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, gbnf_text, strlen(gbnf_text)), (ssize_t)strlen(gbnf_text));
    close(fd);
    assert_int_equal(gm_grammar_create_from_file(path, NULL, &g, &err), GM_OK);
    assert_int_equal(gm_grammar_engine(g), GM_ENGINE_EARLEY);
    gm_grammar_destroy(g);
    unlink(path);
}

static void compiled_file_round_trip(void **state)
{
    world *w = *state;
    char path[] = "/tmp/gramask_test_XXXXXX.gmc";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    gm_error err;
    assert_int_equal(gm_compiled_save(w->compiled, path, &err), GM_OK);
    gm_compiled *loaded;
    gm_compile_options co;
    gm_compile_options_init_defaults(&co);
    co.eager = true;
    assert_int_equal(gm_compiled_load(path, &co, &loaded, &err), GM_OK);
    gm_compiled_stats st;
    gm_compiled_get_stats(loaded, &st);
    assert_int_equal(st.engine, GM_ENGINE_EARLEY);
    gm_matcher *m;
    assert_int_equal(gm_matcher_create(loaded, NULL, &m, &err), GM_OK);
    uint32_t other[2];
    const char *s = "[\"ab\",1]";
    for (size_t i = 0;; i++) {
        assert_int_equal(gm_matcher_fill_mask(m, other, w->words, &err), GM_OK);
        assert_int_equal(gm_matcher_fill_mask(w->m, w->mask, w->words, &err), GM_OK);
        assert_memory_equal(other, w->mask, w->words * sizeof *other);
        if (!s[i])
            break;
        accept_text(m, (char[]){s[i], 0});
        accept_text(w->m, (char[]){s[i], 0});
    }
    gm_matcher_destroy(m);
    gm_compiled_destroy(loaded);
    /* A corrupt Earley section is refused, whatever byte is flipped. */
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)size);
    assert_int_equal(fread(data, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    truncate(path, size / 2);
    assert_int_equal(gm_compiled_load(path, NULL, &loaded, &err), GM_ERR_FORMAT);
    free(data);
    unlink(path);
}

static void batch_fills_earley_rows(void **state)
{
    world *w = *state;
    gm_batch *b;
    gm_error err;
    gm_batch_options bo = {2, 0};
    assert_int_equal(gm_batch_create(&bo, &b, &err), GM_OK);
    gm_matcher *ms[3];
    for (int i = 0; i < 3; i++)
        assert_int_equal(gm_matcher_clone(w->m, &ms[i], &err), GM_OK);
    accept_text(ms[1], "[1");
    accept_text(ms[2], "[\"a");
    uint32_t rows[3 * 1];
    assert_int_equal(gm_batch_fill_masks(b, ms, 3, rows, w->words, &err), GM_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(gm_matcher_fill_mask(ms[i], w->mask, w->words, &err), GM_OK);
        assert_memory_equal(&rows[i * w->words], w->mask, w->words * sizeof *w->mask);
        gm_matcher_destroy(ms[i]);
    }
    gm_batch_destroy(b);
}

/* A vocabulary without a stop token: gm_matcher_create refuses it, saying what to do, unless
   terminate_without_stop_token; then the matcher runs and says when the text may end. */
static void no_stop_token(void **state)
{
    (void)state;
    const uint8_t a[] = "a", b[] = "b";
    const uint8_t *toks[] = {a, b};
    size_t lens[] = {1, 1};
    gm_vocab *v;
    gm_error err;
    assert_int_equal(gm_vocab_create_from_tokens(toks, lens, 2, NULL, NULL, 0, NULL, &v, &err),
                     GM_OK);
    gm_grammar *g = make_grammar("root ::= \"a\"+", GM_FORMAT_GBNF);
    gm_compiled *c;
    assert_int_equal(gm_compiled_create(g, v, NULL, &c, &err), GM_OK);
    gm_matcher *m = NULL;
    assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_ERR_ARGUMENT);
    assert_null(m);
    assert_non_null(strstr(err.message, "no stop token"));
    assert_non_null(strstr(err.message, "terminate_without_stop_token"));
    gm_matcher_options mo = {.terminate_without_stop_token = true};
    assert_int_equal(gm_matcher_create(c, &mo, &m, &err), GM_OK);
    assert_false(gm_matcher_is_accepting(m));
    assert_int_equal(gm_matcher_accept_token(m, 0, &err), GM_OK);
    assert_true(gm_matcher_is_accepting(m));
    assert_int_equal(gm_matcher_accept_token(m, 1, &err), GM_ERR_REJECTED);
    uint32_t mask[1];
    assert_int_equal(gm_matcher_fill_mask(m, mask, 1, &err), GM_OK);
    assert_int_equal(mask[0], 1u); /* "a" again; no stop token to allow */
    gm_matcher_destroy(m);
    gm_compiled_destroy(c);
    gm_grammar_destroy(g);
    gm_vocab_destroy(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(engine_and_format, setup, teardown),
        cmocka_unit_test_setup_teardown(masks_agree_with_accept, setup, teardown),
        cmocka_unit_test_setup_teardown(special_and_padding_never, setup, teardown),
        cmocka_unit_test_setup_teardown(split_characters, setup, teardown),
        cmocka_unit_test_setup_teardown(rollback_clone_validate, setup, teardown),
        cmocka_unit_test(forced_bytes),
        cmocka_unit_test(regex_and_ebnf_formats),
        cmocka_unit_test(no_stop_token),
        cmocka_unit_test(errors_name_the_place),
        cmocka_unit_test_setup_teardown(compiled_file_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(batch_fills_earley_rows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
