# runtime: masks, the matcher, the public objects and the batch pool.
libgmcore_la_SOURCES += \
	runtime/api_compiled.c \
	runtime/api_grammar.c \
	runtime/api_combine.c \
	runtime/api_link.c \
	runtime/api_vocab.c \
	runtime/api_encode.c \
	runtime/api_schema.c \
	runtime/diagnose.h \
	runtime/batch.c \
	runtime/api_dispatch.c \
	runtime/stag_source.c runtime/stag_source.h \
	runtime/api_cache.c \
	runtime/ctx_spanners.c runtime/ctx_spanners.h \
	runtime/engine.h runtime/engine_lalr.c runtime/engine_earley.c runtime/engine_budget.c \
	runtime/blocks.h runtime/engine_blocks.c \
	runtime/cdecl.h runtime/engine_cdecl.c runtime/cdecl_index.c runtime/cdecl_index.h \
	runtime/indent.c runtime/indent.h \
	runtime/layer.c runtime/layer.h \
	runtime/mask.c runtime/mask.h \
	runtime/matcher.c runtime/matcher_walk.h \
	runtime/draft_tree.c \
	runtime/serialize.c \
	runtime/objects.h \
	runtime/vstack.h

# Decoding commands of the CLI.
gramask_SOURCES += \
	cli/session.c cli/session.h \
	cli/cmd_compile.c \
	cli/cmd_demo.c \
	cli/cmd_generate.c cli/triggers.c cli/triggers.h \
	cli/cmd_trace.c
gramask_CPPFLAGS = $(AM_CPPFLAGS) -DGM_SRCDATA='"$(abs_top_srcdir)/tests/data"' \
	-DGM_PKGDATA='"$(pkgdatadir)"' \
	-DGM_TOKENIZER_DIRS='"$(GM_SHARED_DIR)/tokenizers:$(abs_top_srcdir)/tests/data:$(pkgdatadir)"'
# Installed as $(pkgdatadir)/sp32k/... and $(pkgdatadir)/demo/..., where the demo (and
# the Python package's) look for them (nobase_ would have kept tests/data/ in the path).
demosp32kdir = $(pkgdatadir)/sp32k
dist_demosp32k_DATA = tests/data/sp32k/tokenizer.json tests/data/sp32k/tokenizer_config.json \
	tests/data/sp32k/PACKAGE-LICENSE
demosampledir = $(pkgdatadir)/demo
dist_demosample_DATA = tests/data/demo/sample.json
EXTRA_DIST += tests/data/README.md

GM_TESTS += tests/test_spanner
tests_test_spanner_SOURCES = tests/test_spanner.c
tests_test_spanner_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_spanner_LDADD = $(GM_TEST_LDADD)

# Written only against include/gramask.h and linked against the shared
# library, so it also proves the public symbols are exported.
GM_TESTS += tests/test_api
tests_test_api_SOURCES = tests/test_api.c
tests_test_api_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_api_LDADD = libgramask.la $(CMOCKA_LIBS)

GM_TESTS += tests/test_mask
tests_test_ctxmask_SOURCES = tests/test_ctxmask.c
tests_test_ctxmask_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_ctxmask_LDADD = $(GM_TEST_LDADD)
GM_TESTS += tests/test_ctxmask

# C's typedef-name layer in masks (runtime/cdecl.h) against a brute-force reference.
tests_test_cmask_SOURCES = tests/test_cmask.c
tests_test_cmask_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_cmask_LDADD = $(GM_TEST_LDADD)
GM_TESTS += tests/test_cmask
GM_TESTS += tests/test_compiled_bytes
tests_test_compiled_bytes_SOURCES = tests/test_compiled_bytes.c
tests_test_compiled_bytes_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_compiled_bytes_LDADD = $(GM_TEST_LDADD)

# Issue 35: the tables a mapped compiled file's processes share, and each refused corrupt.
GM_TESTS += tests/test_compiled_shared
tests_test_compiled_shared_SOURCES = tests/test_compiled_shared.c
tests_test_compiled_shared_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_compiled_shared_LDADD = $(GM_TEST_LDADD)
# ... and a loaded file's masks equal the fresh grammar's along corpus traces (../shared).
TESTS += tests/compiled_trace.sh
EXTRA_DIST += tests/compiled_trace.sh
tests_test_mask_SOURCES = tests/test_mask.c
tests_test_mask_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_mask_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_fuzz_seeds
tests_test_fuzz_seeds_SOURCES = tests/test_fuzz_seeds.c
tests_test_fuzz_seeds_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_fuzz_seeds_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_threads
tests_test_threads_SOURCES = tests/test_threads.c
tests_test_threads_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_threads_LDADD = $(GM_TEST_LDADD)

GM_FUZZ += tests/fuzz/fuzz_compiled

TESTS += tests/generate_check.sh
EXTRA_DIST += tests/generate_check.sh

# The public API over the Earley engine (only include/gramask.h, shared library).
GM_TESTS += tests/test_api_earley
tests_test_api_earley_SOURCES = tests/test_api_earley.c
tests_test_api_earley_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_api_earley_LDADD = libgramask.la $(CMOCKA_LIBS)

GM_TESTS += tests/test_rule_temperature
tests_test_rule_temperature_SOURCES = tests/test_rule_temperature.c
tests_test_rule_temperature_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_rule_temperature_LDADD = libgramask.la $(CMOCKA_LIBS) -lm
TESTS += tests/cli_earley.sh
EXTRA_DIST += tests/cli_earley.sh

# Code blocks (note [code blocks]): masks against an independent reference and brute force.
GM_TESTS += tests/test_blocks
tests_test_blocks_SOURCES = tests/test_blocks.c
tests_test_blocks_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_blocks_LDADD = $(GM_TEST_LDADD)
# The code-block engine's masks against its own stepping (libFuzzer).
GM_FUZZ += tests/fuzz/fuzz_blocks
# Random generation inside code blocks: no dead ends; finished blocks parse.
TESTS += tests/blocks_generate.sh
EXTRA_DIST += tests/blocks_generate.sh

# Masks agree with accept_token over both engines and every front end, on random small
# vocabularies with overlapping special, stop and text tokens (issue 32).
GM_TESTS += tests/test_mask_accept
tests_test_mask_accept_SOURCES = tests/test_mask_accept.c
tests_test_mask_accept_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_mask_accept_LDADD = $(GM_TEST_LDADD)

# Draft trees (speculative decoding) against the accept/fill/rollback loop, and eos_after_end.
GM_TESTS += tests/test_draft_tree
tests_test_draft_tree_SOURCES = tests/test_draft_tree.c
tests_test_draft_tree_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_draft_tree_LDADD = $(GM_TEST_LDADD)

# gm_grammar_combine (XGrammar's Grammar.union / Grammar.concat) against its parts.
GM_TESTS += tests/test_combine
tests_test_combine_SOURCES = tests/test_combine.c
tests_test_combine_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_combine_LDADD = tests/libgmapitest.la libgramask.la $(CMOCKA_LIBS)

# gm_grammar_link (XGrammar's Lark dialect: %json, named grammars) against the same grammar written out.
GM_TESTS += tests/test_link
tests_test_link_SOURCES = tests/test_link.c
tests_test_link_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_link_LDADD = tests/libgmapitest.la libgramask.la $(CMOCKA_LIBS)

# note [deeper anchors] (spanner/accept.h): Rust's nested token trees, masks with the
# 8-state entries equal to those of the walk without entries (issue 38).
GM_TESTS += tests/test_deep_anchor
tests_test_deep_anchor_SOURCES = tests/test_deep_anchor.c
tests_test_deep_anchor_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_deep_anchor_LDADD = $(GM_TEST_LDADD)
