# spanner: the token spanner over the vocabulary trie (vocab/): profiles of
# lexer states (note [token classes]).
libgmcore_la_SOURCES += \
	spanner/accept.c spanner/accept.h \
	spanner/tokpool.c spanner/tokpool.h \
	spanner/profile.c spanner/profile.h \
	spanner/spanner.c spanner/spanner.h spanner/tables.h \
	spanner/walkshare.c spanner/walkshare.h
