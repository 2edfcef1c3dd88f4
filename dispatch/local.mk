# dispatch: TagDispatch — structural tags and tool-call presets compiled to
# one Earley grammar (free text as UNTIL, note [until]).
libgmcore_la_SOURCES += \
	dispatch/ir_import.c dispatch/ir_import.h \
	dispatch/stag.c dispatch/stag.h dispatch/stag_internal.h \
	dispatch/stag_base.c dispatch/stag_xml.c dispatch/stag_shape.c dispatch/stag_token.c \
	dispatch/tools.c dispatch/tools.h \
	dispatch/tool_families.c dispatch/tool_families.h dispatch/tool_family_kimi_k3.c \
	dispatch/codeblocks.c dispatch/codeblocks.h

# Structural tags and presets against the reference recognizer.
GM_TESTS += tests/test_stag
tests_test_stag_SOURCES = tests/test_stag.c
tests_test_stag_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_stag_LDADD = $(GM_TEST_LDADD)

# The model-family presets (XGrammar's names) on template-rendered turns (reference recognizer).
GM_TESTS += tests/test_tool_families
tests_test_tool_families_SOURCES = tests/test_tool_families.c
tests_test_tool_families_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_tool_families_LDADD = $(GM_TEST_LDADD)

# The XML argument styles of json_schema formats (qwen, minimax, deepseek, glm, cohere,
# kimi_k3) against the reference recognizer.
GM_TESTS += tests/test_stag_xml
tests_test_stag_xml_SOURCES = tests/test_stag_xml.c
tests_test_stag_xml_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_stag_xml_LDADD = $(GM_TEST_LDADD)

# Agent turns from MaskBench's BFCL tools under every preset (gramask trace --tools).
TESTS += tests/tool_traces_check.py
EXTRA_DIST += tests/tool_traces_check.py tests/tool_traces.py
gramask_SOURCES += cli/cmd_tools.c

# Masks of every preset against brute force (the reference recognizer), real tokenizers.
GM_TESTS += tests/test_dispatch_brute
tests_test_dispatch_brute_SOURCES = tests/test_dispatch_brute.c
tests_test_dispatch_brute_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_dispatch_brute_LDADD = $(GM_TEST_LDADD)

# Random turns under every preset: no dead end; every call parses and validates
# against its tool's schema (python3-jsonschema).
check_PROGRAMS += tests/dispatch_generate
tests_dispatch_generate_SOURCES = tests/dispatch_generate.c
tests_dispatch_generate_CFLAGS = $(GM_TEST_CFLAGS)
tests_dispatch_generate_LDADD = libgmcore.la
TESTS += tests/dispatch_generate_check.py
EXTRA_DIST += tests/dispatch_generate_check.py tests/turn_parse.py

# Random turns under the model-family presets, parsed back as each family's shape, the
# calls validated with python3-jsonschema, 200 finished turns a family at least (issue 37).
# A few minutes on a loaded 2-core machine: its own target, not in `make check`.
EXTRA_DIST += tests/family_generate_check.py
check-families: tests/dispatch_generate
	GM_SHARED_DIR='$(GM_SHARED_DIR)' GM_BUILDDIR='$(abs_top_builddir)' \
	  $(PYTHON3) $(srcdir)/tests/family_generate_check.py; \
	  rc=$$?; test $$rc = 0 || test $$rc = 77
.PHONY: check-families
# The same generator, a few turns of six families, each mask compared with the grammar
# the preset compiled to before its parts were shared (dispatch/stag.c): about 15 s.
TESTS += tests/family_share_check.sh
EXTRA_DIST += tests/family_share_check.sh

# Merging equal rules of imported grammars: cases and languages kept (reference recognizer).
GM_TESTS += tests/test_ir_merge
tests_test_ir_merge_SOURCES = tests/test_ir_merge.c
tests_test_ir_merge_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_ir_merge_LDADD = $(GM_TEST_LDADD)

# The grammar cache: grammars built with it equal those built without (tool sets of BFCL).
GM_TESTS += tests/test_grammar_cache
tests_test_grammar_cache_SOURCES = tests/test_grammar_cache.c
tests_test_grammar_cache_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_grammar_cache_LDADD = $(GM_TEST_LDADD)

# Free text stays valid UTF-8, any_text's fields, unknown keys named by pointer (issue 32).
GM_TESTS += tests/test_free_text
tests_test_free_text_SOURCES = tests/test_free_text.c
tests_test_free_text_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_free_text_LDADD = $(GM_TEST_LDADD)

# any_text max_tokens against a brute-force reference (issue 32 item 2).
GM_TESTS += tests/test_token_budget
tests_test_token_budget_SOURCES = tests/test_token_budget.c
tests_test_token_budget_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_token_budget_LDADD = $(GM_TEST_LDADD)

# Special tokens stay special in the family presets, on the real tokenizers (issue 37 item 4).
GM_TESTS += tests/test_family_specials
tests_test_family_specials_SOURCES = tests/test_family_specials.c
tests_test_family_specials_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_family_specials_LDADD = $(GM_TEST_LDADD)
