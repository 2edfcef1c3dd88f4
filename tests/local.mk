# cmocka test programs. Each stage adds its programs in its own local.mk:
#   GM_TESTS += tests/test_<name>
#   tests_test_<name>_SOURCES = tests/test_<name>.c
#   tests_test_<name>_CFLAGS = $(GM_TEST_CFLAGS)
#   tests_test_<name>_LDADD = $(GM_TEST_LDADD)
check_LTLIBRARIES += tests/libgmtest.la
tests_libgmtest_la_SOURCES = tests/testutil.c tests/testutil.h
tests_libgmtest_la_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

# Helpers for the tests that link only the public library (libgramask).
check_LTLIBRARIES += tests/libgmapitest.la
tests_libgmapitest_la_SOURCES = tests/apitest.c tests/apitest.h

GM_TEST_LDADD = tests/libgmtest.la libgmcore.la $(CMOCKA_LIBS)
GM_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

GM_TESTS = tests/test_base
tests_test_base_SOURCES = tests/test_base.c
tests_test_base_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_base_LDADD = $(GM_TEST_LDADD)

check_PROGRAMS += $(GM_TESTS)
TESTS += $(GM_TESTS)

# Fuzz targets (libFuzzer). A stage adds `GM_FUZZ += tests/fuzz/fuzz_<name>` in its
# local.mk, with tests/fuzz/fuzz_<name>.c and seeds in tests/fuzz/corpus/<name>/.
# `make fuzz` compiles the library sources and each target with clang
# (-fsanitize=fuzzer,address,undefined) into _fuzz/; `make fuzz-run` runs every
# target for FUZZ_SECONDS seconds (new inputs go to _fuzz/corpus/<name>/).
GM_FUZZ =
FUZZ_CC = clang
FUZZ_SECONDS = 60
GM_FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
	-fno-sanitize-recover=undefined -std=c11 -D_POSIX_C_SOURCE=200809L \
	-I$(top_srcdir)/include -I$(top_srcdir) -I$(top_builddir) $(JANSSON_CFLAGS) $(UTF8PROC_CFLAGS)
fuzz: all
	@CC='$(FUZZ_CC)' CFLAGS='$(GM_FUZZ_CFLAGS)' LIBS='$(JANSSON_LIBS) $(UTF8PROC_LIBS) -pthread -lm' \
	  sh $(srcdir)/tests/fuzz/build.sh '$(srcdir)' '$(GM_FUZZ)' $(libgmcore_la_OBJECTS)
fuzz-run: fuzz
	@set -e; for t in $(GM_FUZZ); do \
	  n=$$(basename $$t); c=$${n#fuzz_}; mkdir -p _fuzz/corpus/$$c; \
	  echo "== $$n: $(FUZZ_SECONDS) s"; \
	  dict=; test ! -f $(srcdir)/tests/fuzz/$$c.dict || dict=-dict=$(srcdir)/tests/fuzz/$$c.dict; \
	  if ./_fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 $$dict \
	       -print_final_stats=1 _fuzz/corpus/$$c $(srcdir)/tests/fuzz/corpus/$$c >_fuzz/$$n.log 2>&1; \
	  then grep -E '^(#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss)' _fuzz/$$n.log; \
	  else tail -60 _fuzz/$$n.log; echo "$$n failed: crash input in ./crash-* (log _fuzz/$$n.log)"; exit 1; fi; \
	done
.PHONY: fuzz fuzz-run
EXTRA_DIST += tests/fuzz tests/cli_lib.sh

# The include graph flows one way: stages include only stages below them, and
# no two modules include each other (DESIGN.md, "Layout").
TESTS += tests/include_graph.py
EXTRA_DIST += tests/include_graph.py
GM_FUZZ += tests/fuzz/fuzz_encode
