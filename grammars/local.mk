# grammars: the bundled grammars (.lark), embedded into the library as C
# strings by grammars/embed.py at build time (gm_bundled_grammar).
# Adding a grammar is one line: GM_BUNDLED_GRAMMARS += grammars/NAME.lark
GM_BUNDLED_GRAMMARS = grammars/common.lark
GM_BUNDLED_GRAMMARS += grammars/json.lark
GM_BUNDLED_GRAMMARS += grammars/json_bounded.lark
GM_BUNDLED_GRAMMARS += grammars/go.lark
GM_BUNDLED_GRAMMARS += grammars/python.lark

EXTRA_DIST += $(GM_BUNDLED_GRAMMARS) grammars/embed.py
nodist_libgmcore_la_SOURCES += grammars/bundled.c
BUILT_SOURCES += grammars/bundled.c
CLEANFILES += grammars/bundled.c

grammars/bundled.c: $(GM_BUNDLED_GRAMMARS) $(srcdir)/grammars/embed.py grammars/local.mk
	$(AM_V_GEN)$(MKDIR_P) grammars && \
	$(PYTHON3) $(srcdir)/grammars/embed.py $(srcdir) $@ $(GM_BUNDLED_GRAMMARS)
