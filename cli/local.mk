# The gramask command-line tool. Stages add their subcommands with
# `gramask_SOURCES += cli/cmd_<name>.c` in their own local.mk.
gramask_SOURCES += cli/main.c cli/cli.h cli/commands.h cli/args.c cli/fail.c cli/cmd_encode.c \
	cli/trace_report.c cli/progress.c cli/tokenizer.c

# The command-line reference, generated from the help texts (cli/mkdoc.sh),
# installed with the documentation and shipped in the tarball.
doc_DATA = docs/cli.md
docs/cli.md: gramask$(EXEEXT) $(srcdir)/cli/mkdoc.sh
	$(AM_V_GEN)$(MKDIR_P) docs && sh $(srcdir)/cli/mkdoc.sh ./gramask$(EXEEXT) > $@.tmp && \
	  mv $@.tmp $@
EXTRA_DIST += docs/cli.md cli/mkdoc.sh
CLEANFILES += docs/cli.md

# The command line's messages: bad arguments, demo, encode, trace --text, the
# reference page.
TESTS += tests/cli_args.sh tests/cli_encode.sh tests/cli_generate.sh
EXTRA_DIST += tests/cli_args.sh tests/cli_encode.sh tests/cli_generate.sh

# Readable generation finishes the turns of tool presets and model families,
# closed and open argument schemas (issue 33 item 6): a quick subset under
# `make check`; every format, calls required and auto, under
# `make check-generate` (minutes: too slow for make check).
TESTS += tests/cli_generate_families.sh
EXTRA_DIST += tests/cli_generate_families.sh
check-generate: gramask$(EXEEXT)
	GM_GEN_ALL=1 GM_SHARED_DIR='$(GM_SHARED_DIR)' GM_SRCDIR='$(abs_top_srcdir)' \
	  GM_BUILDDIR='$(abs_top_builddir)' PYTHON3='$(PYTHON3)' \
	  $(SHELL) $(srcdir)/tests/cli_generate_families.sh
.PHONY: check-generate
