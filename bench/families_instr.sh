#!/bin/sh
# Instructions of one cold compile of each model-family preset (valgrind's
# callgrind): gm_grammar_from_tools + gm_compiled_create + gm_matcher_create
# and the first gm_matcher_fill_mask, on a freshly loaded vocabulary, N
# tools (default 32). A count, not a time: it does not move with the load of
# a shared machine. One run of bench_dispatch's families section: it
# compiles each preset once to see whether the family takes the tools, then
# twice cold; callgrind dumps after each first mask, and the second dump of
# each family (its second cold compile, alone) is counted.
#
# usage: bench/families_instr.sh [N [FAMILY]]   (from the build tree;
#        GM_SHARED_DIR as for bench_dispatch; BENCH_DISPATCH: the binary;
#        GM_FAMILIES_TOKENIZER: one tokenizer for every family; 5 to 15
#        minutes for all families on a loaded 2-core machine)
set -e
n=${1:-32}
bin=${BENCH_DISPATCH:-bench/bench_dispatch}
set -- --only families --runs 2 --tools "$n" ${2:+--format "$2"} \
    ${GM_FAMILIES_TOKENIZER:+--tokenizer "$GM_FAMILIES_TOKENIZER"}
command -v valgrind >/dev/null || { echo "families_instr.sh: valgrind is not installed" >&2; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$dir/cg" \
    --toggle-collect=gm_grammar_from_tools --toggle-collect=gm_compiled_create \
    --toggle-collect=gm_matcher_create --toggle-collect=gm_matcher_fill_mask \
    --dump-after=gm_matcher_fill_mask "$bin" "$@" >"$dir/out" 2>"$dir/err" ||
    { cat "$dir/err" >&2; exit 1; }
echo "| family (tokenizer) | $n tools: instructions (millions) |"
echo "|---|---|"
# the rows with a figure in the N tools' column, in order: dumps 2, 4, ...
k=0
sed -n '/column by part/q; s/^| \([a-z0-9_]*\) (\([a-z0-9_]*\)) |.*| \([0-9.]*\) |.*|$/\1 \2 \3/p' \
    "$dir/out" |
while read -r fam tok ms; do
    k=$((k + 2))
    ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$dir/cg.$k")
    echo "| $fam ($tok) | $(awk -v i="$ir" 'BEGIN { printf "%.1f", i / 1e6 }') |"
done
