# The Java 17 grammar (grammars/java.lark): its tests and corpus check.
GM_TESTS += tests/test_java_grammar
tests_test_java_grammar_SOURCES = tests/test_java_grammar.c
tests_test_java_grammar_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_java_grammar_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/java

# `make check-corpus-java`: share of OpenJDK 17's java.base sources that
# `gramask parse` accepts (target 95%); tests/corpus/java.sh says how.
check-corpus-java: gramask$(EXEEXT)
	@sh $(srcdir)/tests/corpus/java.sh '$(abs_top_builddir)/gramask$(EXEEXT)' \
	  '$(abs_top_srcdir)/grammars/java.lark' '$(abs_top_builddir)/_corpus/java'
.PHONY: check-corpus-java
EXTRA_DIST += tests/corpus/java.sh
