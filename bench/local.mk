# Benchmarks: `make bench` builds every program of GM_BENCH and runs each
# (single-threaded, shared data from GM_SHARED_DIR). A stage adds
# `GM_BENCH += bench/bench_<name>` and its sources below.
GM_BENCH = bench/bench_vocab
EXTRA_PROGRAMS = $(GM_BENCH)

bench_bench_vocab_SOURCES = bench/bench_vocab.c
bench_bench_vocab_LDADD = libgmcore.la

GM_BENCH += bench/bench_lalr
bench_bench_lalr_SOURCES = bench/bench_lalr.c
bench_bench_lalr_LDADD = libgmcore.la

bench: $(GM_BENCH)
	@set -e; for b in $(GM_BENCH); do \
	  echo "== $$b"; GM_SHARED_DIR='$(GM_SHARED_DIR)' ./$$b; echo; \
	done
.PHONY: bench
CLEANFILES += $(GM_BENCH)
