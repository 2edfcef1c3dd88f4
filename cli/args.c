/* Reporting a bad command line the same way in every subcommand (cli.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int gm_cli_bad_arg(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gramask %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* the synopsis: the usage's first line */
    int n = (int)strcspn(usage, "\n");
    fprintf(stderr, "\nusage: gramask %s %.*s\n(gramask %s --help for details)\n", cmd, n, usage,
            cmd);
    return 2;
}

/* Whether usage names option `a` as one that takes a value ("-o OUT", "--format lark|..."). */
static bool takes_value(const char *usage, const char *a)
{
    size_t n = strlen(a);
    for (const char *p = strstr(usage, a); p; p = strstr(p + 1, a)) {
        bool starts = p == usage || strchr(" [(|\n", p[-1]);
        if (starts && p[n] == ' ' && p[n + 1] && !strchr("-[(|\n", p[n + 1]))
            return true;
    }
    return false;
}

int gm_cli_bad_arg_at(const char *cmd, const char *usage, int argc, char **argv, int i)
{
    const char *a = argv[i];
    if (a[0] != '-' || !a[1])
        return gm_cli_bad_arg(cmd, usage, "unexpected argument '%s'", a);
    if (!takes_value(usage, a))
        return gm_cli_bad_arg(cmd, usage, "unknown option '%s'", a);
    if (i + 1 >= argc)
        return gm_cli_bad_arg(cmd, usage, "%s needs a value", a);
    return gm_cli_bad_arg(cmd, usage, "bad value '%s' for %s", argv[i + 1], a);
}
