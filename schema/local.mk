# schema: JSON Schema -> Earley grammar IR (schema/schema.h describes the pipeline).
libgmcore_la_SOURCES += \
	schema/schema.h schema/internal.h \
	schema/json.c schema/json.h \
	schema/decimal.c schema/decimal.h \
	schema/uri.c schema/uri.h \
	schema/ecma_regex.c schema/ecma_regex.h \
	schema/irb.c schema/irb.h \
	schema/jindex.c schema/jindex.h \
	schema/resolve.c schema/pattern.c schema/synth.c \
	schema/shape.c schema/shape.h \
	schema/validate.c schema/validate.h \
	schema/formats.c schema/formats.h \
	schema/numrange.c schema/numrange.h \
	schema/strdfa.c schema/strdfa.h \
	schema/emit.h schema/rules.c schema/compile.c schema/emit_scalar.c schema/emit_struct.c \
	schema/exclude.c
gramask_SOURCES += cli/cmd_schema.c cli/cmd_maskbench.c

GM_TESTS += tests/test_schema_suite
tests_test_schema_suite_SOURCES = tests/test_schema_suite.c
tests_test_schema_suite_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_suite_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_schema_regex
tests_test_schema_regex_SOURCES = tests/test_schema_regex.c
tests_test_schema_regex_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_regex_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/schema_regex.py

GM_TESTS += tests/test_schema_masks
tests_test_schema_masks_SOURCES = tests/test_schema_masks.c
tests_test_schema_masks_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_masks_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/schema_validate.py

GM_TESTS += tests/test_schema_escapes
tests_test_schema_escapes_SOURCES = tests/test_schema_escapes.c
tests_test_schema_escapes_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_escapes_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/schema_escapes.py

GM_FUZZ += tests/fuzz/fuzz_schema
TESTS += tests/cli_schema.sh
EXTRA_DIST += tests/cli_schema.sh tests/fuzz/fuzz_schema.c

GM_TESTS += tests/test_schema_errors
tests_test_schema_errors_SOURCES = tests/test_schema_errors.c
tests_test_schema_errors_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_errors_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_schema_multiple
tests_test_schema_multiple_SOURCES = tests/test_schema_multiple.c
tests_test_schema_multiple_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_multiple_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_schema_formats
tests_test_schema_formats_SOURCES = tests/test_schema_formats.c
tests_test_schema_formats_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_formats_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/schema_formats.py

GM_TESTS += tests/test_schema_counts
tests_test_schema_counts_SOURCES = tests/test_schema_counts.c
tests_test_schema_counts_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_schema_counts_LDADD = $(GM_TEST_LDADD)

# Issue 16: MaskBench's dev half, single-threaded (a long run: bench/results/maskbench.md
# and maskbench.json; `make bench` runs it after the other benchmarks).
bench-maskbench: gramask$(EXEEXT)
	./gramask maskbench '$(GM_SHARED_DIR)/maskbench/dev.jsonl.gz' \
	  --tokenizer '$(GM_SHARED_DIR)/tokenizers/llama3' \
	  --json-out '$(srcdir)/bench/results/maskbench.json' > '$(srcdir)/bench/results/maskbench.md'
bench: bench-maskbench
.PHONY: bench-maskbench

# JSON strings avoiding several texts (note [excluded texts]) against brute force.
GM_TESTS += tests/test_excluded_texts
tests_test_excluded_texts_SOURCES = tests/test_excluded_texts.c
tests_test_excluded_texts_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_excluded_texts_LDADD = $(GM_TEST_LDADD)
