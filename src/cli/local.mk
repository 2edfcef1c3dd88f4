# The gramask command-line tool. Stages add their subcommands with
# `gramask_SOURCES += src/cli/cmd_<name>.c` in their own local.mk.
gramask_SOURCES += src/cli/main.c src/cli/cli.h src/cli/commands.h
