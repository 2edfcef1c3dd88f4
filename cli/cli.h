/*
 * The gramask command: one file per subcommand (cmd_<name>.c), each
 * exporting `int gm_cmd_<name>(int argc, char **argv)` that returns the
 * process exit status (0 ok, 1 failure of the input, 2 usage error).
 * argv[0] is the subcommand name.
 */
#ifndef GM_CLI_H
#define GM_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "gramask.h"

typedef struct gm_cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *synopsis; /* one line for --help */
} gm_cli_command;

/* Prints "gramask <cmd>: message" from err (or a plain message) to stderr; returns 1. */
int gm_cli_fail(const char *cmd, const gm_error *err);
int gm_cli_usage(const char *cmd, const char *usage);

#endif
