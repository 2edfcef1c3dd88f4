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
