# grammars: the bundled grammars (.lark), embedded into the library as C
# strings by grammars/embed.py at build time (gm_bundled_grammar).
# Adding a grammar is one line: GM_BUNDLED_GRAMMARS += grammars/NAME.lark
GM_BUNDLED_GRAMMARS = grammars/common.lark
GM_BUNDLED_GRAMMARS += grammars/json.lark
GM_BUNDLED_GRAMMARS += grammars/json_bounded.lark
GM_BUNDLED_GRAMMARS += grammars/go.lark
GM_BUNDLED_GRAMMARS += grammars/python.lark
GM_BUNDLED_GRAMMARS += grammars/java.lark
GM_BUNDLED_GRAMMARS += grammars/c.lark
GM_BUNDLED_GRAMMARS += grammars/javascript.lark
GM_BUNDLED_GRAMMARS += grammars/typescript.lark
include grammars/typescript.mk

include grammars/javascript.mk
include grammars/java.mk
GM_BUNDLED_GRAMMARS += grammars/rust.lark
include grammars/rust.mk
include grammars/c.mk

EXTRA_DIST += $(GM_BUNDLED_GRAMMARS) grammars/embed.py
nodist_libgmcore_la_SOURCES += grammars/bundled.c
BUILT_SOURCES += grammars/bundled.c
CLEANFILES += grammars/bundled.c

grammars/bundled.c: $(GM_BUNDLED_GRAMMARS) $(srcdir)/grammars/embed.py grammars/local.mk
	$(AM_V_GEN)$(MKDIR_P) grammars && \
	$(PYTHON3) $(srcdir)/grammars/embed.py $(srcdir) $@ $(GM_BUNDLED_GRAMMARS)

# The bundled Python grammar through the front end, the indentation layer and the
# LALR(1) tables (snippets checked against CPython).
GM_TESTS += tests/test_python
tests_test_python_SOURCES = tests/test_python.c
tests_test_python_CFLAGS = $(GM_TEST_CFLAGS)
tests_test_python_LDADD = $(GM_TEST_LDADD)

# The indentation layer against CPython's tokenizer (python3's tokenize module), and
# the grammar against CPython's parser on mutated standard library files.
TESTS += tests/python_tokens.py tests/python_mutations.py
EXTRA_DIST += tests/python_tokens.py tests/python_mutations.py

# The C grammar (grammars/c.lark) and its typedef-name layer (parser/ctypedef.h)
# against gcc -fsyntax-only on snippets. Its corpus check is the c entry of
# corpus/check_corpus.py (`make check-corpus`).
TESTS += tests/c_snippets.py
EXTRA_DIST += tests/c_snippets.py
