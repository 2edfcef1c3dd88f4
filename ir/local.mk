# ir: the grammar IR of the character-level engine and its text front ends
# (GBNF, XGrammar's EBNF, a regex as a whole grammar), rule merging and Until:
# what earley/, schema/ and dispatch/ build on.
libgmcore_la_SOURCES += \
	ir/ebnf.c ir/ebnf.h ir/ebnf_max_chars.c ir/ebnf_max_chars.h ir/ebnf_max_chars_regular.c ir/ebnf_max_chars_regular.h \
	ir/ebnf_parse.c ir/ebnf_parse.h ir/ebnf_regex.c \
	ir/ir_merge.c ir/ir_merge.h \
	ir/token_ids.c \
	ir/ir_nfa.c ir/ir_nfa.h

GM_TESTS += tests/test_ebnf
tests_test_ebnf_SOURCES = tests/test_ebnf.c
tests_test_ebnf_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_ebnf_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_ebnf_parse
tests_test_ebnf_parse_SOURCES = tests/test_ebnf_parse.c
tests_test_ebnf_parse_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_ebnf_parse_LDADD = $(GM_TEST_LDADD)
CLEANFILES += ebnf_rt1.txt ebnf_rt2.txt
GM_FUZZ += tests/fuzz/fuzz_gbnf

# UNTIL, the free text of TagDispatch: its Aho–Corasick automaton.
libgmcore_la_SOURCES += ir/until.c ir/until.h
GM_TESTS += tests/test_until
tests_test_until_SOURCES = tests/test_until.c
tests_test_until_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_until_LDADD = $(GM_TEST_LDADD)

# XGrammar's token macros (Token, ExcludeToken, TokenTagDispatch) and TagDispatch in grammar
# text, against the same grammars without token id sets.
GM_TESTS += tests/test_token_sets
tests_test_token_sets_SOURCES = tests/test_token_sets.c
tests_test_token_sets_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_token_sets_LDADD = $(GM_TEST_LDADD)
