#!/bin/sh
# Instructions of one cold compile of each model-family preset (valgrind's
# callgrind): gm_grammar_from_tools + gm_compiled_create + gm_matcher_create
# and the first gm_matcher_fill_mask, on a freshly loaded vocabulary, N
# tools (default 32). A count, not a time: it does not move with the load of
# a shared machine. bench_dispatch compiles each preset once to see whether
# the family takes the tools, then twice cold: the second cold compile is
# counted (callgrind dumps after each first mask; the first dump also holds
# that check).
#
# usage: bench/families_instr.sh [N [FAMILY...]]   (from the build tree;
#        GM_SHARED_DIR as for bench_dispatch; BENCH_DISPATCH: the binary;
#        GM_FAMILIES_TOKENIZER: one tokenizer for every family; about a
#        minute a family)
set -e
n=${1:-32}
[ $# -gt 0 ] && shift
fams=${*:-"qwen_3 qwen_3_5 qwen_3_coder kimi kimi_k3 kimi_k3_xml deepseek_r1 deepseek_v3_1
 deepseek_v3_2 deepseek_v4 glm_4_7 minimax cohere exaone"}
bin=${BENCH_DISPATCH:-bench/bench_dispatch}
tok=
[ -n "${GM_FAMILIES_TOKENIZER:-}" ] && tok="--tokenizer $GM_FAMILIES_TOKENIZER"
command -v valgrind >/dev/null || { echo "families_instr.sh: valgrind is not installed" >&2; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "| family (tokenizer) | $n tools: instructions (millions) |"
echo "|---|---|"
for f in $fams; do
    # shellcheck disable=SC2086
    valgrind --tool=callgrind --callgrind-out-file="$dir/cg.%p" \
        --toggle-collect=gm_grammar_from_tools --toggle-collect=gm_compiled_create \
        --toggle-collect=gm_matcher_create --toggle-collect=gm_matcher_fill_mask \
        --dump-after=gm_matcher_fill_mask \
        "$bin" --only families --runs 2 --tools "$n" --format "$f" $tok \
        >"$dir/out" 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
    t=$(sed -n "s/^| $f (\([a-z0-9_]*\)) |.*/\1/p" "$dir/out" | head -n 1)
    second=$(ls "$dir"/cg.*.2 2>/dev/null | head -n 1)
    if [ -z "$second" ]; then
        echo "| $f ($t) | - |"
    else
        ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$second")
        echo "| $f ($t) | $(awk -v i="$ir" 'BEGIN { printf "%.1f", i / 1e6 }') |"
    fi
    rm -f "$dir"/cg.*
done
