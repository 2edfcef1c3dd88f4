/* The subcommand table. Add a command: its cmd_<name>.c, a line here, a line in local.mk. */
#ifndef GM_CLI_COMMANDS_H
#define GM_CLI_COMMANDS_H

#include "src/cli/cli.h"

int gm_cmd_vocab(int argc, char **argv);

static const gm_cli_command gm_cli_commands[] = {
    {"vocab", gm_cmd_vocab, "facts about a tokenizer vocabulary; decode reference ids"},
    {NULL, NULL, NULL}, /* end of table */
};

#endif
