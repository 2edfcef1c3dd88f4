/*
 * Compiled files as fuzz_compiled sees them. Each compiled-file seed, framed
 * as the harness frames its input (gm_compiled_header: the current format
 * in front of the payload), loads and decodes: a format bump that left the
 * seeds or the harness behind would otherwise leave fuzz_compiled rejecting
 * every input at the header, testing nothing. And hostile backtracking
 * states (a break that does not resume in a smaller state, a chain deeper
 * than a window) are refused with GM_ERR_FORMAT saying so.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/objects.h"

static uint8_t *read_seed(const char *name, size_t *n)
{
    char rel[256];
    snprintf(rel, sizeof rel, "tests/fuzz/corpus/compiled/%s", name);
    FILE *f = fopen(gm_test_src_path(rel), "rb");
    if (!f)
        fail_msg("cannot open seed %s", rel);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *file = malloc(*n + GM_COMPILED_HEADER);
    assert_non_null(file);
    assert_int_equal(fread(file + GM_COMPILED_HEADER, 1, *n, f), *n);
    fclose(f);
    return file;
}

static void compiled_seeds_load(void **state)
{
    (void)state;
    static const char *const seeds[] = {"seed1", "semicolons", "indentation", "backtracking",
                                        "contextual"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        size_t n;
        uint8_t *file = read_seed(seeds[i], &n);
        gm_compiled_header(file, file + GM_COMPILED_HEADER, n);
        gm_compiled *c;
        gm_error err;
        if (gm_compiled_load_buffer(file, n + GM_COMPILED_HEADER, seeds[i], NULL, &c, &err) != GM_OK)
            fail_msg("seed %s does not load: %s", seeds[i], err.message);
        gm_matcher *m;
        assert_int_equal(gm_matcher_create(c, NULL, &m, &err), GM_OK);
        uint32_t mask[1];
        assert_int_equal(gm_matcher_fill_mask(m, mask, 1, &err), GM_OK);
        assert_true(mask[0] != 0);
        gm_matcher_destroy(m);
        gm_compiled_destroy(c);
        free(file);
    }
}

/*
 * A profile whose token set is malformed after its ids were read (found by
 * fuzz_compiled): refused, and what the set had read is freed (the sanitizer
 * run's leak check sees it).
 */
static void malformed_token_set_refused(void **state)
{
    (void)state;
    size_t n;
    uint8_t *file = read_seed("malformed_tokset", &n);
    gm_compiled_header(file, file + GM_COMPILED_HEADER, n);
    gm_compiled *c;
    gm_error err;
    assert_int_equal(gm_compiled_load_buffer(file, n + GM_COMPILED_HEADER, "malformed_tokset",
                                             NULL, &c, &err),
                     GM_ERR_FORMAT);
    assert_non_null(strstr(err.message, "token"));
    free(file);
}

/* The "backtracking" seed's lexer, changed by `corrupt`, saved and loaded again. */
static void expect_refused(void (*corrupt)(gm_lexer *), const char *says)
{
    size_t n;
    uint8_t *file = read_seed("backtracking", &n);
    gm_compiled_header(file, file + GM_COMPILED_HEADER, n);
    gm_compiled *c;
    gm_error err;
    assert_int_equal(gm_compiled_load_buffer(file, n + GM_COMPILED_HEADER, "seed", NULL, &c, &err),
                     GM_OK);
    free(file);
    gm_lexer *lx = c->grammar->lexer;
    assert_true(lx->nstates - lx->ndfa > GM_LEX_BACKTRACK_MAX);
    corrupt(lx);
    char path[] = "/tmp/gramask_seed_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(gm_compiled_save(c, path, &err), GM_OK);
    gm_compiled_destroy(c);
    assert_int_equal(gm_compiled_load(path, NULL, &c, &err), GM_ERR_FORMAT);
    unlink(path);
    assert_null(c);
    if (!strstr(err.message, says))
        fail_msg("\"%s\" does not say %s", err.message, says);
}

static void resume_in_itself(gm_lexer *lx)
{
    lx->bt_relex[0] = lx->ndfa;
}

static void fall_back_to_nothing(gm_lexer *lx)
{
    lx->bt_fallback[0] = lx->nterminals;
}

static void chain_too_deep(gm_lexer *lx)
{
    for (uint32_t i = 1; i <= GM_LEX_BACKTRACK_MAX; i++)
        lx->bt_relex[i] = lx->ndfa + i - 1;
}

static void hostile_backtracking_states(void **state)
{
    (void)state;
    expect_refused(resume_in_itself, "malformed lexer backtracking state");
    expect_refused(fall_back_to_nothing, "malformed lexer backtracking state");
    expect_refused(chain_too_deep, "nest deeper than a window");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compiled_seeds_load),
        cmocka_unit_test(malformed_token_set_refused),
        cmocka_unit_test(hostile_backtracking_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
