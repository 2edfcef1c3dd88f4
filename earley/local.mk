# The reference recognizer of the IR (tests/earley_ref.h), for every test that needs a judge.
tests_libgmtest_la_SOURCES += tests/earley_ref.c tests/earley_ref.h
GM_TESTS += tests/test_earley_ref
tests_test_earley_ref_SOURCES = tests/test_earley_ref.c
tests_test_earley_ref_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_earley_ref_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/earley_ref_cases.py

# earley: the Earley engine for character-level grammars over the IR (ir/):
# rule automata, the recognizer, the token-mask caches.
libgmcore_la_SOURCES += \
	earley/engine.h \
	earley/fsm.c earley/fsm.h earley/fsm_build.c earley/fsm_io.c \
	earley/eengine.h earley/eset.c earley/maskcache.c earley/engine_api.c \
	earley/xcache.c earley/xkey.c earley/closed.c earley/fsm_minimize.c earley/fsm_minimize.h \
	earley/fsm_det.c earley/fsm_det.h \
	earley/fsm_cache.c earley/fsm_cache.h \
	earley/budget.c \
	earley/capture.c earley/capture.h \
	earley/temperature.c \
	earley/lookahead.c earley/lookahead.h

GM_TESTS += tests/test_earley
tests_test_earley_SOURCES = tests/test_earley.c
tests_test_earley_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_earley_LDADD = $(GM_TEST_LDADD)

GM_TESTS += tests/test_earley_json
tests_test_earley_json_SOURCES = tests/test_earley_json.c
tests_test_earley_json_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_earley_json_LDADD = $(GM_TEST_LDADD)
EXTRA_DIST += tests/data/json_lark.gbnf
GM_FUZZ += tests/fuzz/fuzz_egrammar

GM_TESTS += tests/test_earley_brute
tests_test_earley_brute_SOURCES = tests/test_earley_brute.c
tests_test_earley_brute_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_earley_brute_LDADD = $(GM_TEST_LDADD)
