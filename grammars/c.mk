# C's typedef-name layer in masks (runtime/cdecl.h): mask traces along real
# tokenizations in make check; the corpus traces and generated programs
# against gcc behind their own targets (minutes each).
TESTS += tests/c_trace.sh
EXTRA_DIST += tests/c_trace.sh tests/c tests/c_trace_corpus.sh tests/c_generate.sh

# Every 20th preprocessed binutils file of the C corpus, traced with llama3 and qwen3.
check-c-trace: gramask$(EXEEXT)
	GM_SRCDIR='$(abs_top_srcdir)' GM_BUILDDIR='$(abs_top_builddir)' PYTHON3='$(PYTHON3)' \
	  GM_SHARED_DIR='$(GM_SHARED_DIR)' $(SHELL) $(srcdir)/tests/c_trace_corpus.sh
# Generated programs: no syntax error for gcc -fsyntax-only -std=gnu11.
check-c-generate: gramask$(EXEEXT)
	GM_SRCDIR='$(abs_top_srcdir)' GM_BUILDDIR='$(abs_top_builddir)' PYTHON3='$(PYTHON3)' \
	  $(SHELL) $(srcdir)/tests/c_generate.sh
.PHONY: check-c-trace check-c-generate
