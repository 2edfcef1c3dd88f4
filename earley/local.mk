# earley: the Earley engine for character-level grammars (GBNF, XGrammar's
# EBNF, a regex as a whole grammar). Front ends and the grammar IR first.
libgmcore_la_SOURCES += \
	earley/ebnf.c earley/ebnf.h \
	earley/ebnf_parse.c earley/ebnf_parse.h earley/ebnf_regex.c \
	earley/engine.h

GM_TESTS += tests/test_ebnf
tests_test_ebnf_SOURCES = tests/test_ebnf.c
tests_test_ebnf_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_ebnf_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_ebnf_parse
tests_test_ebnf_parse_SOURCES = tests/test_ebnf_parse.c
tests_test_ebnf_parse_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_ebnf_parse_LDADD = $(GM_TEST_LDADD)
CLEANFILES += ebnf_rt1.txt ebnf_rt2.txt

# The reference recognizer of the IR (tests/earley_ref.h), for every test that needs a judge.
tests_libgmtest_la_SOURCES += tests/earley_ref.c tests/earley_ref.h
GM_TESTS += tests/test_earley_ref
tests_test_earley_ref_SOURCES = tests/test_earley_ref.c
tests_test_earley_ref_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_earley_ref_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/earley_ref_cases.py
