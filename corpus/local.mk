# corpus: `make check-corpus`, the coverage of the bundled grammars over
# real sources (issue 6). The languages, their Debian packages, how files
# are selected and the targets are the LANGUAGES table of
# corpus/check_corpus.py; adding a language is one entry there.
CHECK_CORPUS_JOBS = $$(nproc 2>/dev/null || echo 2)

check-corpus: gramask$(EXEEXT)
	$(PYTHON3) $(srcdir)/corpus/check_corpus.py --gramask ./gramask$(EXEEXT) \
	  --srcdir '$(srcdir)' --shared '$(GM_SHARED_DIR)' --workdir _corpus \
	  --jobs $(CHECK_CORPUS_JOBS) $(CHECK_CORPUS_FLAGS)
.PHONY: check-corpus
EXTRA_DIST += corpus/check_corpus.py corpus/ts_oracle.js

# The bundled grammars on small files (needs `gramask parse`).
TESTS += tests/bundled_grammars.sh
EXTRA_DIST += tests/bundled_grammars.sh tests/bundled
