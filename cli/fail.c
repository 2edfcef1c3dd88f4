/* Reporting a failed input the same way in every subcommand (cli.h): below
   main.c, which dispatches to the subcommands that call these. */
#include <stdio.h>

#include "cli/cli.h"

int gm_cli_fail(const char *cmd, const gm_error *err)
{
    fprintf(stderr, "gramask %s: %s\n", cmd,
            err && err->message[0] ? err->message : gm_status_name(err ? err->code : GM_OK));
    return 1;
}

int gm_cli_usage(const char *cmd, const char *usage)
{
    return gm_cli_bad_arg(cmd, usage, "missing or bad arguments");
}
