# parser: the grammar front end (Lark grammar files -> gm_cfg), LALR(1)
# tables and the LR runtime.
#
# The front end's scanner (re2c) and parser (Bison) are generated at build
# time into the build directory; only their sources are distributed.
libgmcore_la_SOURCES += \
	parser/arena.c parser/arena.h \
	parser/cfg.c parser/grammar.c parser/grammar.h \
	parser/lark_ast.c parser/lark_ast.h parser/lark_state.c parser/lark_state.h \
	parser/lark_pattern.c parser/lark_pattern.h parser/bundled.h \
	parser/lark_bnf.c parser/lark_load.c parser/lark_load.h parser/lark_terminals.c \
	parser/postlex.c parser/postlex.h parser/contextual.c parser/contextual.h \
	parser/ctypedef.c parser/ctypedef.h parser/cscope.c parser/cscope.h

nodist_libgmcore_la_SOURCES += parser/lark_parse.c parser/lark_parse.h parser/lark_scan.c
BUILT_SOURCES += parser/lark_parse.c parser/lark_parse.h parser/lark_scan.c
CLEANFILES += parser/lark_parse.c parser/lark_parse.h parser/lark_scan.c
EXTRA_DIST += parser/lark_parse.y parser/lark_scan.re
# the lexer contract that cfg.h embeds (gm_terminal_spec)
EXTRA_DIST += lexer/lexer.h

parser/lark_parse.c: $(srcdir)/parser/lark_parse.y
	$(AM_V_GEN)$(MKDIR_P) parser && \
	$(BISON) -Wall -Werror -d -o parser/lark_parse.c $(srcdir)/parser/lark_parse.y
# Bison writes the header with the parser; remake both when the header is missing.
parser/lark_parse.h: parser/lark_parse.c
	@test -f $@ || rm -f parser/lark_parse.c
	@test -f $@ || $(MAKE) $(AM_MAKEFLAGS) parser/lark_parse.c
parser/lark_scan.c: $(srcdir)/parser/lark_scan.re parser/lark_parse.h
	$(AM_V_GEN)$(MKDIR_P) parser && \
	$(RE2C) -W -Werror --no-generation-date --no-version -o $@ $(srcdir)/parser/lark_scan.re

# Tests of the grammar front end.
check_PROGRAMS += tests/grammar_dump
tests_grammar_dump_SOURCES = tests/grammar_dump.c
tests_grammar_dump_LDADD = libgmcore.la

GM_TESTS += tests/test_grammar
tests_test_grammar_SOURCES = tests/test_grammar.c
tests_test_grammar_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_grammar_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_grammar_errors
tests_test_grammar_errors_SOURCES = tests/test_grammar_errors.c
tests_test_grammar_errors_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_grammar_errors_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/grammar_errors tests/grammar

# LALR(1) construction and the LR runtime (parser/lr.h).
libgmcore_la_SOURCES += \
	parser/cfg.h parser/lr.h parser/lalr_internal.h \
	parser/grammar_sets.c \
	parser/lr0.c \
	parser/lalr_lookahead.c \
	parser/lr_conflicts.c \
	parser/lr_table.c \
	parser/lr_report.c \
	parser/lr_stack.c

# The grammar and parse commands.
gramask_SOURCES += cli/cmd_grammar.c cli/cmd_parse.c cli/parse_earley.c cli/parse_earley.h

# Tests of the LALR(1) construction and the LR runtime.
check_LTLIBRARIES += tests/libgmlalrtest.la
tests_libgmlalrtest_la_SOURCES = tests/lalr_testlib.c tests/lalr_testlib.h
tests_libgmlalrtest_la_CFLAGS = $(GM_TEST_CFLAGS)

GM_TESTS += tests/test_lalr
tests_test_lalr_SOURCES = tests/test_lalr.c
tests_test_lalr_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_lalr_LDADD = tests/libgmlalrtest.la $(GM_TEST_LDADD)
EXTRA_DIST += tests/lalr

# The LALR(1) construction against Bison (tests/lalr_bison/*.lark).
GM_TESTS += tests/test_lalr_bison
tests_test_lalr_bison_SOURCES = tests/test_lalr_bison.c
tests_test_lalr_bison_CFLAGS = $(GM_TEST_CFLAGS) -DGM_BISON='"$(BISON)"' -DGM_CC='"$(CC)"'
tests_test_lalr_bison_LDADD = tests/libgmlalrtest.la $(GM_TEST_LDADD)
EXTRA_DIST += tests/lalr_bison

# The post-lexing layers over a stream (parser/postlex.c).
GM_TESTS += tests/test_postlex
tests_test_postlex_SOURCES = tests/test_postlex.c
tests_test_postlex_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_postlex_LDADD = $(GM_TEST_LDADD)

# The grammar and parse commands against a golden transcript (tests/lalr/cli.*).
GM_TESTS += tests/test_lalr_cli
tests_test_lalr_cli_SOURCES = tests/test_lalr_cli.c
tests_test_lalr_cli_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_lalr_cli_LDADD = $(GM_TEST_LDADD)

# libFuzzer target of the grammar loader (make fuzz; tests/local.mk).
GM_FUZZ += tests/fuzz/fuzz_grammar
