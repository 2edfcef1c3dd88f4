# The gramask command-line tool.
bin_PROGRAMS += gramask
gramask_SOURCES = src/cli/main.c src/cli/cli.h src/cli/commands.h
gramask_LDADD = libgmcore.la
