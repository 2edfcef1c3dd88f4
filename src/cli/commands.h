/* The subcommand table. Add a command: its cmd_<name>.c, a line here, a line in local.mk. */
#ifndef GM_CLI_COMMANDS_H
#define GM_CLI_COMMANDS_H

#include "src/cli/cli.h"

int gm_cmd_vocab(int argc, char **argv);
int gm_cmd_regex(int argc, char **argv);
int gm_cmd_lex(int argc, char **argv);

static const gm_cli_command gm_cli_commands[] = {
    {"vocab", gm_cmd_vocab, "facts about a tokenizer vocabulary; decode reference ids"},
    {"regex", gm_cmd_regex, "compile a terminal regex and show its automata (state counts, DFA)"},
    {"lex", gm_cmd_lex, "lex a file with a set of terminals and print the terminal stream"},
    {NULL, NULL, NULL}, /* end of table */
};

#endif
