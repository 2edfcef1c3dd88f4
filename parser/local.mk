# parser: see the stage's header comments.

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
