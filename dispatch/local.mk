# dispatch: TagDispatch — structural tags and tool-call presets compiled to
# one Earley grammar (free text as UNTIL, note [until]).
libgmcore_la_SOURCES += \
	dispatch/ir_import.c dispatch/ir_import.h \
	dispatch/stag.c dispatch/stag.h \
	dispatch/tools.c dispatch/tools.h

# Structural tags and presets against the reference recognizer.
GM_TESTS += tests/test_stag
tests_test_stag_SOURCES = tests/test_stag.c
tests_test_stag_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_stag_LDADD = $(GM_TEST_LDADD)

# Agent turns from MaskBench's BFCL tools under every preset (gramask trace --tools).
TESTS += tests/tool_traces_check.py
EXTRA_DIST += tests/tool_traces_check.py tests/tool_traces.py
gramask_SOURCES += cli/cmd_tools.c
