/*
 * Golden tests of grammar diagnostics: every tests/grammar_errors/NAME.lark
 * is loaded and the first line of its error (or of its first warning, when
 * it loads) is compared with NAME.err. See tests/grammar_errors/README.
 */
#include "tests/testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parser/grammar.h"

static void on_warning(void *ud, const gm_error *w)
{
    char *first = ud;
    if (!first[0])
        snprintf(first, GM_ERROR_MESSAGE_MAX, "%s", w->message);
}

static void first_line(char *s)
{
    char *nl = strchr(s, '\n');
    if (nl)
        *nl = '\0';
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void golden_errors(void **state)
{
    (void)state;
    /* paths in messages are relative to the source tree */
    assert_int_equal(chdir(gm_test_src_path("")), 0);
    DIR *d = opendir("tests/grammar_errors");
    assert_non_null(d);
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 512) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".lark"))
            names[n++] = strndup(e->d_name, len - 5);
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    int failures = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        char path[512], expected_path[512];
        snprintf(path, sizeof path, "tests/grammar_errors/%s.lark", names[i]);
        snprintf(expected_path, sizeof expected_path, "tests/grammar_errors/%s.err", names[i]);
        char *expected = gm_test_read_file(expected_path, NULL);
        first_line(expected);
        char warning[GM_ERROR_MESSAGE_MAX] = "";
        gm_grammar_options opts = {0};
        opts.warn = on_warning;
        opts.warn_ud = warning;
        gm_mem m;
        gm_mem_init(&m, NULL, 0);
        gm_cfg *g;
        gm_error err;
        gm_status st = gm_grammar_load_file(&m, path, &opts, &g, &err);
        const char *got;
        if (st == GM_OK) {
            gm_cfg_destroy(g);
            got = warning;
        } else {
            errors++;
            got = err.message;
            /* the line is the one the message names, and the caret is under the column */
            if (err.line) {
                const char *caret = strrchr(err.message, '\n');
                assert_non_null(caret);
                assert_int_equal(strlen(caret + 1), 2 + err.column);
            }
        }
        char line[GM_ERROR_MESSAGE_MAX];
        snprintf(line, sizeof line, "%s", got);
        first_line(line);
        if (strcmp(line, expected)) {
            print_error("%s:\n  expected: %s\n  got:      %s\n", path, expected, line);
            failures++;
        }
        assert_int_equal(atomic_load(&m.used), 0);
        free(expected);
        free(names[i]);
    }
    assert_int_equal(failures, 0);
    /* the corpus covers at least 25 distinct errors */
    assert_true(errors >= 25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
