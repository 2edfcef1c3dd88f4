#!/bin/sh
# A compiled file loaded (mapped: note [mapped compiled files]) gives the masks of the
# grammar compiled afresh, bit for bit, along corpus traces: `gramask trace --dump-masks`
# of the .gmc and of the grammar must write the same masks. Go under the basic lexer
# (compiled eagerly: every table comes from the file) and JSON under the contextual lexer
# (compiled lazily: the contextual lexers come from the file, the tables are built as the
# trace goes), llama3's tokens of ../shared/corpus. Skips when the corpus or the tokenizer
# is missing.
shared=${GM_SHARED_DIR:-../shared}
tok=$shared/tokenizers/llama3
[ -f "$tok/tokenizer.json" ] || { echo "SKIP: no $tok"; exit 77; }
gm=${GM_BUILDDIR:-.}/gramask
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gm_compiled_trace.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
status=0
check() { # NAME LANG ONLY OPTIONS...
    name=$1 lang=$2 only=$3
    shift 3
    ids=$shared/corpus/$lang/ids.llama3.json
    [ -f "$ids" ] || { echo "SKIP $name: no $ids"; return; }
    "$gm" compile "$lang" --tokenizer "$tok" --quiet -o "$tmp/$name.gmc" "$@" >/dev/null || { status=1; return; }
    "$gm" trace "$tmp/$name.gmc" --tokenizer "$tok" --ids "$ids" --only "$only" --quiet \
        --dump-masks "$tmp/$name.loaded" >"$tmp/$name.out" || { cat "$tmp/$name.out"; status=1; return; }
    "$gm" trace "$lang" --tokenizer "$tok" --ids "$ids" --only "$only" --quiet "$@" \
        --dump-masks "$tmp/$name.fresh" >"$tmp/$name.out" || { cat "$tmp/$name.out"; status=1; return; }
    n=$(wc -l <"$tmp/$name.fresh")
    if [ "$n" -lt 100 ]; then
        echo "FAIL $name: only $n masks in the trace"
        status=1
    elif cmp -s "$tmp/$name.loaded" "$tmp/$name.fresh"; then
        echo "ok $name: $n masks of the loaded file equal the fresh grammar's"
    else
        echo "FAIL $name: the loaded file's masks differ from the fresh grammar's:"
        cmp "$tmp/$name.loaded" "$tmp/$name.fresh"
        status=1
    fi
}
check go-eager go 31595471_ratmarsh.go --eager
check json-contextual json 063f833d_release-please-config.json --lexer=contextual
exit $status
