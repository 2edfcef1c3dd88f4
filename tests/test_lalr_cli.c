/*
 * The grammar and parse commands against a golden transcript: each line of
 * tests/lalr/cli.script is run (from the source directory, with the built
 * gramask) and its output and exit status are compared with
 * tests/lalr/cli.golden, whose format is
 *     $ COMMAND
 *     OUTPUT (stdout and stderr)
 *     [exit STATUS]
 * Regenerate the golden with GM_UPDATE_GOLDEN=1 after checking the change.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/testutil.h"

static void test_cli_transcript(void **state)
{
    (void)state;
    const char *src = getenv("GM_SRCDIR"), *build = getenv("GM_BUILDDIR");
    char bin[4096], cwd[2048];
    if (build && *build)
        snprintf(bin, sizeof bin, "%s/gramask", build);
    else
        snprintf(bin, sizeof bin, "%s/gramask", getcwd(cwd, sizeof cwd) ? cwd : ".");
    if (access(bin, X_OK))
        fail_msg("no gramask binary at %s (set GM_BUILDDIR)", bin);
    const char *abs_bin = bin;
    if (src && *src && chdir(src))
        fail_msg("cannot enter %s", src);
    char *script = gm_test_read_file("tests/lalr/cli.script", NULL);
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    out[0] = '\0';
    for (char *line = strtok(script, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "gramask ", 8))
            fail_msg("script line without gramask: %s", line);
        char cmd[8192];
        snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", abs_bin, line + 8);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        n += (size_t)snprintf(out + n, cap - n, "$ %s\n", line);
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, p)) > 0) {
            if (n + got + 256 > cap) {
                cap = 2 * (n + got + 256);
                out = realloc(out, cap);
            }
            memcpy(out + n, buf, got);
            n += got;
            out[n] = '\0';
        }
        int status = pclose(p);
        n += (size_t)snprintf(out + n, cap - n, "[exit %d]\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        if (n + 4096 > cap) {
            cap *= 2;
            out = realloc(out, cap);
        }
    }
    const char *update = getenv("GM_UPDATE_GOLDEN");
    if (update && *update) {
        FILE *f = fopen("tests/lalr/cli.golden", "w");
        assert_non_null(f);
        fputs(out, f);
        fclose(f);
    }
    char *golden = gm_test_read_file("tests/lalr/cli.golden", NULL);
    if (strcmp(golden, out)) {
        FILE *f = fopen("/tmp/gm_cli.actual", "w");
        if (f) {
            fputs(out, f);
            fclose(f);
        }
        fail_msg("the transcript differs from tests/lalr/cli.golden (actual output in /tmp/gm_cli.actual)");
    }
    free(golden);
    free(out);
    free(script);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_transcript),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
