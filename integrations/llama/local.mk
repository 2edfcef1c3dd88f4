# The llama.cpp integration (integrations/llama, issue 36): a llama_sampler
# backed by gramask. With ./configure --with-llama=DIR the library
# libgramask-llama and its tests are built and run by `make check`;
# `make check-llama` needs no configure option: it builds llama.cpp (only the
# `llama` target) from GM_SHARED_DIR/llama.cpp into _llama/ of the build tree,
# once, then builds and runs the tests against it. `make bench-llama` (and
# `make bench` when configured with llama) compares the per-token cost.
LLAMA_INTEGRATION_SOURCES = integrations/llama/gramask-llama.c integrations/llama/gramask-llama.h \
	integrations/llama/lazy_patterns.c integrations/llama/lazy_patterns.h \
	integrations/llama/ecma_regex.c integrations/llama/ecma_regex.h
LLAMA_TEST_SOURCES = integrations/llama/llama_util.c integrations/llama/llama_util.h
LLAMA_TESTS = integrations/llama/test_llama_sampler integrations/llama/test_llama_diff \
	integrations/llama/test_llama_trigger

EXTRA_PROGRAMS += $(LLAMA_TESTS) integrations/llama/bench_llama
integrations_llama_test_llama_sampler_SOURCES = integrations/llama/test_llama_sampler.c \
	$(LLAMA_INTEGRATION_SOURCES) $(LLAMA_TEST_SOURCES)
integrations_llama_test_llama_sampler_CPPFLAGS = $(AM_CPPFLAGS) $(LLAMA_CPPFLAGS) \
	-I$(top_srcdir)/integrations/llama
integrations_llama_test_llama_sampler_LDADD = libgmcore.la $(LLAMA_LIBS) -lm
integrations_llama_test_llama_diff_SOURCES = integrations/llama/test_llama_diff.c \
	$(LLAMA_INTEGRATION_SOURCES) $(LLAMA_TEST_SOURCES)
integrations_llama_test_llama_diff_CPPFLAGS = $(integrations_llama_test_llama_sampler_CPPFLAGS)
integrations_llama_test_llama_diff_LDADD = libgmcore.la $(LLAMA_LIBS) -lm
integrations_llama_test_llama_trigger_SOURCES = integrations/llama/test_llama_trigger.c \
	$(LLAMA_INTEGRATION_SOURCES) $(LLAMA_TEST_SOURCES)
integrations_llama_test_llama_trigger_CPPFLAGS = $(integrations_llama_test_llama_sampler_CPPFLAGS)
integrations_llama_test_llama_trigger_LDADD = libgmcore.la $(LLAMA_LIBS) -lm
integrations_llama_bench_llama_SOURCES = integrations/llama/bench_llama.c \
	$(LLAMA_INTEGRATION_SOURCES) $(LLAMA_TEST_SOURCES)
integrations_llama_bench_llama_CPPFLAGS = $(integrations_llama_test_llama_sampler_CPPFLAGS)
integrations_llama_bench_llama_LDADD = libgmcore.la $(LLAMA_LIBS) -lm
CLEANFILES += $(LLAMA_TESTS) integrations/llama/bench_llama
EXTRA_DIST += integrations/llama/README.md integrations/llama/common-sampling.patch \
	integrations/llama/bench_llama.c $(LLAMA_TEST_SOURCES) \
	integrations/llama/test_llama_sampler.c integrations/llama/test_llama_diff.c \
	integrations/llama/test_llama_trigger.c

if GM_LLAMA
lib_LTLIBRARIES += libgramask-llama.la
libgramask_llama_la_SOURCES = $(LLAMA_INTEGRATION_SOURCES)
libgramask_llama_la_CPPFLAGS = $(AM_CPPFLAGS) $(LLAMA_CPPFLAGS)
libgramask_llama_la_LIBADD = libgramask.la $(LLAMA_LIBS) -lm
include_HEADERS += integrations/llama/gramask-llama.h
check_PROGRAMS += $(LLAMA_TESTS)
TESTS += $(LLAMA_TESTS)
GM_BENCH += integrations/llama/bench_llama
endif

# test_ecma_regex compares ecma_regex.c with std::regex itself (ecma_oracle.cpp,
# llama.cpp's find() over the C++ library): it needs a C++ compiler, as
# llama.cpp does, so only check-llama builds and runs it.
LLAMA_CXX = c++
integrations/llama/test_ecma_regex: $(srcdir)/integrations/llama/test_ecma_regex.c \
		$(srcdir)/integrations/llama/ecma_oracle.cpp $(srcdir)/integrations/llama/ecma_regex.c \
		$(srcdir)/integrations/llama/ecma_regex.h libgmcore.la
	@$(MKDIR_P) integrations/llama
	$(LLAMA_CXX) -O1 -c -o integrations/llama/ecma_oracle.o $(srcdir)/integrations/llama/ecma_oracle.cpp
	$(COMPILE) -I$(srcdir)/integrations/llama -c -o integrations/llama/test_ecma_regex.o \
		$(srcdir)/integrations/llama/test_ecma_regex.c
	$(COMPILE) -c -o integrations/llama/ecma_regex_oracle.o $(srcdir)/integrations/llama/ecma_regex.c
	$(LIBTOOL) --tag=CC --mode=link $(CC) $(AM_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ \
		integrations/llama/test_ecma_regex.o integrations/llama/ecma_regex_oracle.o \
		integrations/llama/ecma_oracle.o libgmcore.la -lstdc++
CLEANFILES += integrations/llama/test_ecma_regex integrations/llama/ecma_oracle.o \
	integrations/llama/test_ecma_regex.o integrations/llama/ecma_regex_oracle.o
EXTRA_DIST += integrations/llama/ecma_oracle.cpp integrations/llama/test_ecma_regex.c

# llama.cpp built from the shared snapshot (out of tree: the snapshot may be read-only).
LLAMA_SRC = $(GM_SHARED_DIR)/llama.cpp
LLAMA_BUILD_DIR = _llama/build
LLAMA_BUILD = $(abs_top_builddir)/$(LLAMA_BUILD_DIR)
LLAMA_CMAKE_FLAGS = -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
	-DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
	-DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_HTML=OFF -DLLAMA_CURL=OFF
LLAMA_LOCAL_MAKEFLAGS = \
	LLAMA_CPPFLAGS='-isystem $(LLAMA_SRC)/include -isystem $(LLAMA_SRC)/ggml/include' \
	LLAMA_LIBS='-L$(LLAMA_BUILD)/bin -Wl,-rpath,$(LLAMA_BUILD)/bin -lllama'

$(LLAMA_BUILD_DIR)/bin/libllama.so:
	@test -f '$(LLAMA_SRC)/CMakeLists.txt' || { echo "check-llama: no llama.cpp source at $(LLAMA_SRC)"; exit 1; }
	@command -v cmake >/dev/null && command -v ninja >/dev/null || { echo "check-llama: cmake and ninja-build are needed (./bootstrap installs them)"; exit 1; }
	cmake -S '$(LLAMA_SRC)' -B '$(LLAMA_BUILD)' $(LLAMA_CMAKE_FLAGS) >/dev/null
	ninja -C '$(LLAMA_BUILD)' llama

llama-build: $(LLAMA_BUILD_DIR)/bin/libllama.so

check-llama: $(LLAMA_BUILD_DIR)/bin/libllama.so integrations/llama/test_ecma_regex
	rm -f $(LLAMA_TESTS)
	$(MAKE) $(AM_MAKEFLAGS) $(LLAMA_LOCAL_MAKEFLAGS) $(LLAMA_TESTS)
	@echo "== integrations/llama/test_ecma_regex"; ./integrations/llama/test_ecma_regex
	@set -e; for t in $(LLAMA_TESTS); do echo "== $$t"; \
	  GM_SHARED_DIR='$(GM_SHARED_DIR)' ./$$t; done

bench-llama: $(LLAMA_BUILD_DIR)/bin/libllama.so
	rm -f integrations/llama/bench_llama
	$(MAKE) $(AM_MAKEFLAGS) $(LLAMA_LOCAL_MAKEFLAGS) integrations/llama/bench_llama
	GM_SHARED_DIR='$(GM_SHARED_DIR)' ./integrations/llama/bench_llama

clean-llama:
	rm -rf _llama
.PHONY: check-llama bench-llama llama-build clean-llama
