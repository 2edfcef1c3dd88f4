# The Java 17 grammar (grammars/java.lark): its tests. Its corpus check is
# the java entry of corpus/check_corpus.py (`make check-corpus`).
GM_TESTS += tests/test_java_grammar
tests_test_java_grammar_SOURCES = tests/test_java_grammar.c
tests_test_java_grammar_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_java_grammar_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/java

