# Benchmarks: `make bench` builds every program of GM_BENCH and runs each
# (single-threaded, shared data from GM_SHARED_DIR), then the mask suite
# bench_masks (issue 7), which writes bench/results/{REPORT.md,results.json}
# and PNG plots (gnuplot: Debian gnuplot-nox). A stage adds
# `GM_BENCH += bench/bench_<name>` and its sources below.
# `make bench-quick` (< 2 min) runs a reduced suite into bench/results-quick
# and prints every figure more than 20% worse than the committed results.json.
GM_BENCH = bench/bench_vocab
GM_BENCH += bench/bench_lexer
EXTRA_PROGRAMS = $(GM_BENCH) bench/bench_masks

bench_bench_vocab_SOURCES = bench/bench_vocab.c
bench_bench_vocab_LDADD = libgmcore.la
bench_bench_lexer_SOURCES = bench/bench_lexer.c
bench_bench_lexer_LDADD = libgmcore.la

GM_BENCH += bench/bench_lalr
bench_bench_lalr_SOURCES = bench/bench_lalr.c
bench_bench_lalr_LDADD = libgmcore.la

bench_bench_masks_SOURCES = bench/bench_masks.c bench/bench_util.c bench/bench_util.h \
	bench/bench_report.c bench/bench_report.h bench/bench_compare.c
bench_bench_masks_LDADD = libgmcore.la -lm

# Extra rows for bench_masks: NAME=[PATH][,lark][,contextual][,corpus=LANG][,files=LIST]
# each (issue 8: the SynCode grammars, e.g.
# python=$(GM_SHARED_DIR)/benchmarks/syncode-grammars/python.lark,lark).
GM_BENCH_GRAMMARS =
# Issue 38: the bundled javascript (contextual lexer) and rust grammars, whose corpora
# (Debian packages' files listed in bench/data/*.files) are encoded with each tokenizer at
# bench time; in `make bench` and `make bench-only`, not in bench-quick (javascript's
# eager preprocessing alone takes about 40 s of CPU, past bench-quick's 2 minutes).
GM_BENCH_LANGS = javascript=,contextual,files=$(abs_top_srcdir)/bench/data/javascript.files \
	rust=,files=$(abs_top_srcdir)/bench/data/rust.files
# C (issue 38): four preprocessed binutils files of the C corpus of make check-corpus,
# which exists only once preprocessed: bench/c_files.py prepares it in _corpus (make
# check-corpus's work directory, kept between runs; not under bench/, a stage that
# tests/include_graph.py reads) and lists the files in bench/c.files.
GM_BENCH_LANGS += c=,files=$(abs_top_builddir)/bench/c.files
bench/c.files: $(srcdir)/bench/c_files.py
	$(PYTHON3) $(srcdir)/bench/c_files.py '$(abs_top_srcdir)' '$(abs_top_builddir)/_corpus' $@
GM_BENCH_COMMIT = `git -C $(srcdir) describe --always --dirty 2>/dev/null || echo unknown`

bench: $(GM_BENCH) bench/bench_masks bench/c.files
	@set -e; for b in $(GM_BENCH); do \
	  echo "== $$b"; out=; [ $$b = bench/bench_syncode ] && out="--out $(srcdir)/bench/results/syncode.md"; \
	  [ $$b = bench/bench_earley ] && out="--out $(srcdir)/bench/results/earley.md"; \
	  [ $$b = bench/bench_dispatch ] && out="--out $(srcdir)/bench/results/dispatch.md"; \
	  [ $$b = bench/bench_draft_tree ] && out="--out $(srcdir)/bench/results/draft_tree.md"; \
	  GM_SHARED_DIR='$(GM_SHARED_DIR)' GM_SRCDIR='$(abs_top_srcdir)' ./$$b $$out; echo; \
	done
	@echo "== bench/bench_masks (writes $(srcdir)/bench/results)"
	@command -v gnuplot >/dev/null || echo "bench: gnuplot missing, no plots (apt-get install -y gnuplot-nox)"
	./bench/bench_masks run --shared '$(GM_SHARED_DIR)' --out '$(srcdir)/bench/results' \
	  --commit "$(GM_BENCH_COMMIT)" $(GM_BENCH_GRAMMARS:%=--grammar %) $(GM_BENCH_LANGS:%=--grammar %)

bench-quick: bench/bench_masks
	@mkdir -p bench/results-quick
	./bench/bench_masks run --quick --shared '$(GM_SHARED_DIR)' --out bench/results-quick \
	  --commit "$(GM_BENCH_COMMIT)" $(GM_BENCH_GRAMMARS:%=--grammar %)
	@git -C '$(srcdir)' show HEAD:bench/results/results.json > bench/results-quick/baseline.json \
	  2>/dev/null || cp '$(srcdir)/bench/results/results.json' bench/results-quick/baseline.json \
	  2>/dev/null || true
	@./bench/bench_masks compare bench/results-quick/baseline.json bench/results-quick/results.json
# Only the Table 1 rows of the grammars in GM_BENCH_ONLY (default: the issue 38 languages),
# merged into the committed bench/results (their old rows replaced, the others kept).
GM_BENCH_ONLY = javascript,rust,c
bench-only: bench/bench_masks bench/c.files
	./bench/bench_masks run --only '$(GM_BENCH_ONLY)' --shared '$(GM_SHARED_DIR)' \
	  --out '$(srcdir)/bench/results' --commit "$(GM_BENCH_COMMIT)" \
	  $(GM_BENCH_GRAMMARS:%=--grammar %) $(GM_BENCH_LANGS:%=--grammar %)
.PHONY: bench bench-quick bench-only
EXTRA_DIST += bench/data/javascript.files bench/data/rust.files bench/c_files.py
CLEANFILES += $(GM_BENCH) bench/bench_masks bench/c.files

# Issue 8: Table 1 rows on SynCode's grammars as given (sp32k, llama3, qwen3).
GM_BENCH += bench/bench_syncode
bench_bench_syncode_SOURCES = bench/bench_syncode.c
bench_bench_syncode_LDADD = libgmcore.la $(JANSSON_LIBS)

# Issue 15: the Earley engine (bench/results/earley.md, which bench_masks puts in REPORT.md).
GM_BENCH += bench/bench_earley
bench_bench_earley_SOURCES = bench/bench_earley.c
bench_bench_earley_LDADD = libgmcore.la
EXTRA_DIST += bench/data/c/gcd.c bench/data/c/sum.c bench/data/c/fib.c bench/data/c/collatz.c \
	bench/data/c/stats.c

# Issue 20: text -> ids speed (gm_vocab_encode) on the corpus, and the cost of building
# the encoder on the first encode.
GM_BENCH += bench/bench_encode
bench_bench_encode_SOURCES = bench/bench_encode.c
bench_bench_encode_LDADD = libgmcore.la

# Issue 17: TagDispatch and the tool-call presets (bench/results/dispatch.md, in REPORT.md).
GM_BENCH += bench/bench_dispatch
bench_bench_dispatch_SOURCES = bench/bench_dispatch.c
bench_bench_dispatch_LDADD = libgmcore.la $(JANSSON_LIBS)

# Code blocks (issue 17 item 4): masks in prose, in code and at fences; the plain LALR
# grammars on the same files for comparison.
GM_BENCH += bench/bench_blocks
bench_bench_blocks_SOURCES = bench/bench_blocks.c
bench_bench_blocks_LDADD = libgmcore.la

# Issue 19: the contextual lexer against the basic one (bench/results/contextual.md):
# grammar build and lazy compile, masks over the corpus traces, memory after them, and
# the eager compile (Go, Java, Python; Lark's python.lark when a python3 has lark).
bench: bench-contextual
bench-contextual: gramask
	@echo "== bench/bench_contextual.py (writes $(srcdir)/bench/results/contextual.md)"
	$(PYTHON3) $(srcdir)/bench/bench_contextual.py --gramask ./gramask \
	  --shared '$(GM_SHARED_DIR)' --srcdir '$(srcdir)' --lark-python '$(LARK_PYTHON)' \
	  --out '$(srcdir)/bench/results/contextual.md'
.PHONY: bench-contextual
EXTRA_DIST += bench/bench_contextual.py

# Issue 35 item 6: draft trees of 8, 32 and 64 nodes, one gm_matcher_fill_draft_tree call
# against the accept/fill/rollback loop (bench/results/draft_tree.md).
GM_BENCH += bench/bench_draft_tree
bench_bench_draft_tree_SOURCES = bench/bench_draft_tree.c
bench_bench_draft_tree_LDADD = libgmcore.la
# The same trees from Python: traverse_draft_tree against the Python loop engines run.
bench: bench-draft-tree-python
bench-draft-tree-python: python/lib/.built
	@echo "== bench/bench_draft_tree.py (writes $(srcdir)/bench/results/draft_tree_python.md)"
	PYTHONPATH='$(abs_top_builddir)/python/lib' $(PYTHON3) $(srcdir)/bench/bench_draft_tree.py \
	  --shared '$(GM_SHARED_DIR)' --out '$(srcdir)/bench/results/draft_tree_python.md'
.PHONY: bench-draft-tree-python
EXTRA_DIST += bench/bench_draft_tree.py

# Issue 35: memory of 8 processes loading one compiled file (bench/results/shared_load.md):
# the sum of their proportional set sizes against 8 that only import the package.
bench: bench-shared-load
bench-shared-load: gramask python/lib/.built
	@echo "== bench/bench_shared_load.py (writes $(srcdir)/bench/results/shared_load.md)"
	$(PYTHON3) $(srcdir)/bench/bench_shared_load.py --gramask ./gramask --pythonpath python/lib \
	  --out '$(srcdir)/bench/results/shared_load.md'
.PHONY: bench-shared-load
EXTRA_DIST += bench/bench_shared_load.py

# Issue 37: instructions (valgrind's callgrind) of one cold compile of each model-family
# preset with 32 tools, the figure that does not move with a shared machine's load; not
# part of `make bench` (about a minute a family). GM_FAMILIES_TOOLS, GM_FAMILIES: which.
GM_FAMILIES_TOOLS = 32
bench-families-instr: bench/bench_dispatch
	GM_SHARED_DIR='$(GM_SHARED_DIR)' $(SHELL) $(srcdir)/bench/families_instr.sh \
	  $(GM_FAMILIES_TOOLS) $(GM_FAMILIES)
.PHONY: bench-families-instr
EXTRA_DIST += bench/families_instr.sh
