# dispatch: TagDispatch — structural tags and tool-call presets compiled to
# one Earley grammar (free text as UNTIL, note [until]).
libgmcore_la_SOURCES += \
	dispatch/ir_import.c dispatch/ir_import.h \
	dispatch/stag.c dispatch/stag.h \
	dispatch/tools.c dispatch/tools.h
