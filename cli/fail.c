/* Reporting a failed input the same way in every subcommand (cli.h): below
   main.c, which dispatches to the subcommands that call these. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int gm_cli_fail(const char *cmd, const gm_error *err)
{
    const char *msg = err && err->message[0] ? err->message : gm_status_name(err ? err->code : GM_OK);
    fprintf(stderr, "gramask %s: %s\n", cmd, msg);
    gm_cli_hint(cmd, msg);
    return 1;
}

void gm_cli_hint(const char *cmd, const char *msg)
{
    /* the options that answer the library's messages, which cannot know the command line */
    if (strstr(msg, "is not LALR(1)"))
        fprintf(stderr, "gramask %s: hint: for a grammar written for Lark, --conflicts=lark "
                        "resolves each conflict as Lark does (each reported)\n", cmd);
    if (strstr(msg, "gm_limits.max_dfa_states"))
        fprintf(stderr, "gramask %s: hint: --max-dfa-states N raises the limit\n", cmd);
}

int gm_cli_usage(const char *cmd, const char *usage)
{
    return gm_cli_bad_arg(cmd, usage, "missing or bad arguments");
}
