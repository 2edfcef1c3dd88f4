/*
 * The fuzz targets' seeds do what they are there for: each compiled-file
 * seed, framed as fuzz_compiled frames its input (gm_compiled_header: the
 * current format in front of the payload), loads and decodes. A format
 * bump that left the seeds or the harness behind would otherwise leave
 * fuzz_compiled rejecting every input at the header, testing nothing.
 */
#include "tests/testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    static const char *const seeds[] = {"seed1", "semicolons", "indentation", "backtracking"};
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(compiled_seeds_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
