# Generic containers, errors, allocation: shared by every stage.
libgmcore_la_SOURCES += \
	src/base/bitset.h \
	src/base/error.c src/base/error.h \
	src/base/file.c src/base/file.h \
	src/base/hash.c src/base/hash.h \
	src/base/mem.c src/base/mem.h \
	src/base/strbuf.c src/base/strbuf.h \
	src/base/timing.c src/base/timing.h \
	src/base/utf8.c src/base/utf8.h \
	src/base/vec.c src/base/vec.h
