# The JavaScript grammar (grammars/javascript.lark, contextual lexer only): its traces
# with llama3 and qwen3 and its code blocks (tests/js_trace.sh). Its corpus check is the
# javascript entry of corpus/check_corpus.py (`make check-corpus`).
TESTS += tests/js_trace.sh
EXTRA_DIST += tests/js_trace.sh tests/javascript

# Generated programs against node --check (slow: not in make check; see the script).
check-js-generate: gramask$(EXEEXT)
	GM_SRCDIR='$(abs_top_srcdir)' GM_BUILDDIR='$(abs_top_builddir)' PYTHON3='$(PYTHON3)' \
	  $(SHELL) $(srcdir)/tests/js_generate.sh
.PHONY: check-js-generate
EXTRA_DIST += tests/js_generate.sh tests/finished_programs.py

# Eager and lazy compilation of javascript and typescript give the same masks (issue 38).
tests_test_eager_lazy_SOURCES = tests/test_eager_lazy.c
tests_test_eager_lazy_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_eager_lazy_LDADD = $(GM_TEST_LDADD)
GM_TESTS += tests/test_eager_lazy
