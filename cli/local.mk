# The gramask command-line tool. Stages add their subcommands with
# `gramask_SOURCES += cli/cmd_<name>.c` in their own local.mk.
gramask_SOURCES += cli/main.c cli/cli.h cli/commands.h cli/args.c cli/cmd_encode.c \
	cli/trace_report.c cli/progress.c
