# Benchmarks: `make bench` builds every program of GM_BENCH and runs each
# (single-threaded, shared data from GM_SHARED_DIR). A stage adds
# `GM_BENCH += bench/bench_<name>` and its sources below.
GM_BENCH = bench/bench_vocab
GM_BENCH += bench/bench_lexer
EXTRA_PROGRAMS = $(GM_BENCH)

bench_bench_vocab_SOURCES = bench/bench_vocab.c
bench_bench_vocab_LDADD = libgmcore.la
bench_bench_lexer_SOURCES = bench/bench_lexer.c
bench_bench_lexer_LDADD = libgmcore.la

GM_BENCH += bench/bench_lalr
bench_bench_lalr_SOURCES = bench/bench_lalr.c
bench_bench_lalr_LDADD = libgmcore.la

bench: $(GM_BENCH)
	@set -e; for b in $(GM_BENCH); do \
	  echo "== $$b"; GM_SHARED_DIR='$(GM_SHARED_DIR)' GM_SRCDIR='$(abs_top_srcdir)' ./$$b; echo; \
	done
.PHONY: bench
CLEANFILES += $(GM_BENCH)

# Issue 8: Table 1 rows on SynCode's grammars as given (sp32k, llama3, qwen3).
GM_BENCH += bench/bench_syncode
bench_bench_syncode_SOURCES = bench/bench_syncode.c
bench_bench_syncode_LDADD = libgmcore.la $(JANSSON_LIBS)
