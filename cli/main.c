/* gramask: dispatch to subcommands, --help and --version. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"

static void print_help(FILE *out)
{
    fprintf(out,
            "gramask %s: grammar-constrained decoding masks for LLM inference\n\n"
            "usage: gramask COMMAND [ARGS...]\n"
            "       gramask --help | --version\n\n"
            "commands:\n",
            gm_version());
    for (size_t i = 0; gm_cli_commands[i].name; i++)
        fprintf(out, "  %-10s %s\n", gm_cli_commands[i].name, gm_cli_commands[i].synopsis);
    fprintf(out, "\nRun `gramask COMMAND --help` for the options of a command.\n");
}

int gm_cli_fail(const char *cmd, const gm_error *err)
{
    fprintf(stderr, "gramask %s: %s\n", cmd,
            err && err->message[0] ? err->message : gm_status_name(err ? err->code : GM_OK));
    return 1;
}

int gm_cli_usage(const char *cmd, const char *usage)
{
    fprintf(stderr, "usage: gramask %s %s\n", cmd, usage);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        print_help(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("gramask %s\n", gm_version());
        return 0;
    }
    for (size_t i = 0; gm_cli_commands[i].name; i++)
        if (!strcmp(argv[1], gm_cli_commands[i].name))
            return gm_cli_commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gramask: unknown command '%s' (see gramask --help)\n", argv[1]);
    return 2;
}
