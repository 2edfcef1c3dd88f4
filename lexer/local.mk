# lexer: terminal regexes -> byte NFA -> DFA -> minimal lexing DFA -> transducer.
libgmcore_la_SOURCES += \
	lexer/lexer.h \
	lexer/cpset.c lexer/cpset.h \
	lexer/uclass.c lexer/uclass.h lexer/unicode_tables.h \
	lexer/utf8_ranges.c lexer/utf8_ranges.h \
	lexer/regex.h lexer/regex_ast.c lexer/regex_parse.c lexer/regex_lark.c \
	lexer/nfa.c lexer/nfa.h \
	lexer/dfa.c lexer/dfa.h \
	lexer/determinize.c lexer/minimize.c lexer/minimize_ref.c lexer/regex_compile.c \
	lexer/lexer_build.c lexer/ordered.c lexer/ordered.h lexer/look.c lexer/lexer_run.c lexer/backtrack.c \
	lexer/compact.c \
	lexer/dump.c lexer/dump.h \
	lexer/termfile.c lexer/termfile.h

# Unicode tables are generated at build time from utf8proc (lexer/uclass.h).
nodist_libgmcore_la_SOURCES += lexer/unicode_tables.c
BUILT_SOURCES += lexer/unicode_tables.c
CLEANFILES += lexer/unicode_tables.c
noinst_PROGRAMS += lexer/gen_unicode_tables
lexer_gen_unicode_tables_SOURCES = lexer/gen_unicode_tables.c
lexer_gen_unicode_tables_LDADD = $(UTF8PROC_LIBS)
lexer/unicode_tables.c: lexer/gen_unicode_tables$(EXEEXT)
	$(AM_V_GEN)$(MKDIR_P) lexer && ./lexer/gen_unicode_tables$(EXEEXT) > $@.tmp && mv $@.tmp $@

gramask_SOURCES += cli/cmd_regex.c cli/cmd_lex.c

GM_TESTS += tests/test_regex_diff
tests_test_regex_diff_SOURCES = tests/test_regex_diff.c
tests_test_regex_diff_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_regex_diff_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/regex_cases.py

GM_TESTS += tests/test_regex
tests_test_regex_SOURCES = tests/test_regex.c
tests_test_regex_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_regex_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_lexer
tests_test_lexer_SOURCES = tests/test_lexer.c
tests_test_lexer_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_lexer_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/golden/lex_keywords.terms tests/golden/lex_keywords.dump bench/java.terms \
	tests/golden/regex_nonascii.dump tests/golden/regex_casefold.dump

GM_TESTS += tests/test_automata
tests_test_automata_SOURCES = tests/test_automata.c
tests_test_automata_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_automata_LDADD = $(GM_TEST_LDADD)
GM_FUZZ += tests/fuzz/fuzz_regex

GM_TESTS += tests/test_uclass
tests_test_uclass_SOURCES = tests/test_uclass.c
tests_test_uclass_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_uclass_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/unicode_py.py

TESTS += tests/cli_lexer.sh
EXTRA_DIST += tests/cli_lexer.sh

# The Lark translation (lexer/regex_lark.c) against Python's re.match on the SynCode grammars.
GM_TESTS += tests/test_lark_match
tests_test_lark_match_SOURCES = tests/test_lark_match.c
tests_test_lark_match_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_lark_match_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/lark_match.py
TESTS += tests/syncode.sh
EXTRA_DIST += tests/syncode.sh

# gramask against Lark itself on Lark's, SynCode's and small grammars (python3-lark).
TESTS += tests/lark_diff.sh
EXTRA_DIST += tests/lark_diff.sh tests/lark_diff.py tests/lark
# Decoding Python files with Lark's python.lark under the contextual lexer.
TESTS += tests/ctx_trace.sh
EXTRA_DIST += tests/ctx_trace.sh
