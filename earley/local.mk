# earley: the Earley engine for character-level grammars (GBNF, XGrammar's
# EBNF, a regex as a whole grammar). Front ends and the grammar IR first.
libgmcore_la_SOURCES += \
	earley/ebnf.c earley/ebnf.h \
	earley/ebnf_parse.h \
	earley/engine.h

GM_TESTS += tests/test_ebnf
tests_test_ebnf_SOURCES = tests/test_ebnf.c
tests_test_ebnf_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_ebnf_LDADD = $(GM_TEST_LDADD)
