# The TypeScript grammar (grammars/typescript.lark): its snippets, checked
# against TypeScript's own parser when written (tests/typescript/README). Its
# corpus check is the typescript entry of corpus/check_corpus.py
# (`make check-corpus`).
TESTS += tests/typescript_snippets.sh
EXTRA_DIST += tests/typescript_snippets.sh tests/typescript

# Generated programs against TypeScript's parser (slow: not in make check;
# see the script).
check-ts-generate: gramask$(EXEEXT)
	GM_SRCDIR='$(abs_top_srcdir)' GM_BUILDDIR='$(abs_top_builddir)' PYTHON3='$(PYTHON3)' \
	  $(SHELL) $(srcdir)/tests/ts_generate.sh
.PHONY: check-ts-generate
EXTRA_DIST += tests/ts_generate.sh tests/ts_generate_oracle.js grammars/typescript_generic_calls.md
