# Generic containers, errors, allocation: shared by every stage.
libgmcore_la_SOURCES += \
	base/bitset.h base/bitcount.c \
	base/error.c base/error.h \
	base/file.c base/file.h \
	base/hash.c base/hash.h \
	base/hex.h \
	base/imap.c base/imap.h \
	base/mapping.c base/mapping.h \
	base/mem.c base/mem.h \
	base/strbuf.c base/strbuf.h \
	base/timing.c base/timing.h \
	base/utf8.c base/utf8.h \
	base/vec.c base/vec.h
