/* Reporting a bad command line the same way in every subcommand (cli.h). */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cli.h"

int gm_cli_bad_arg(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "gramask %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: gramask %s %s\n(gramask %s --help for details)\n", cmd, usage, cmd);
    return 2;
}
