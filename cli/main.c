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
    fprintf(out, "\nRun `gramask COMMAND --help` for the options of a command.\n\n"
                 "exit status:\n"
                 "  0  success (and for trace, generate, parse: every check passed)\n"
                 "  1  the work failed: an input could not be read, was rejected (a grammar,\n"
                 "     tokenizer, compiled or ids file, with the reason on stderr), or a check\n"
                 "     failed (trace: a true token was masked or EOS refused at the end;\n"
                 "     generate: a dead end; parse: a syntax error)\n"
                 "  2  bad command line: a one-line reason and the command's usage on stderr\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "gramask: missing COMMAND\n");
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
    fprintf(stderr, "gramask: unknown command '%s'\nusage: gramask COMMAND [ARGS...]; the "
                    "commands:", argv[1]);
    for (size_t i = 0; gm_cli_commands[i].name; i++)
        fprintf(stderr, "%s %s", i ? "," : "", gm_cli_commands[i].name);
    fprintf(stderr, "\n(gramask --help for details)\n");
    return 2;
}
