#!/bin/sh
# The bundled C grammar along real tokenizations: `gramask trace` decodes
# tests/c/*.c (typedef names, their shadowing and scopes) token by token with
# llama3 and qwen3 (as each encodes them) and fails if a true next token is
# ever masked or EOS is refused at the end. Skipped (77) without the shared
# tokenizers. Preprocessed corpus files (system headers: hundreds of typedef
# names) are slower: `make check-c-trace` (tests/c_trace_corpus.sh).
set -u
src=${GM_SRCDIR:-.}
g=${GM_BUILDDIR:-.}/gramask
d=${GM_SHARED_DIR:-$src/../shared}
[ -d "$d/tokenizers/llama3" ] || { echo "SKIP: no $d/tokenizers/llama3"; exit 77; }
fails=0
for tok in llama3 qwen3; do
    [ -d "$d/tokenizers/$tok" ] || continue
    out=$("$g" trace c --tokenizer "$d/tokenizers/$tok" --quiet --text "$src"/tests/c/*.c 2>&1)
    rc=$?
    echo "$tok: $(echo "$out" | tail -2 | head -1)"
    if [ $rc -ne 0 ]; then
        echo "FAIL: trace with $tok (exit $rc):"
        echo "$out" | grep -v ' all  yes ' | head -20
        fails=$((fails + 1))
    fi
done
# What the layer cannot do yet is refused with a clear error, never done without it:
# saving a compiled C grammar (a loaded one could not rebuild the layer) and C in
# code blocks of free text (that engine walks the inner grammar without the layer).
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
refused() { # refused WHAT PATTERN COMMAND...
    what=$1 pat=$2; shift 2
    if out=$("$@" 2>&1); then
        echo "FAIL: $what was not refused"; fails=$((fails + 1))
    elif ! echo "$out" | grep -q "$pat"; then
        echo "FAIL: $what: unclear error: $out"; fails=$((fails + 1))
    elif echo "$out" | grep -qi "sanitizer\|segmentation\|abort"; then
        echo "FAIL: $what crashed: $out"; fails=$((fails + 1))
    else
        echo "refused as it should: $what: $(echo "$out" | head -1)"
    fi
}
printf 'Code:\n```c\nint x;\n```\n' > "$w/blocks.md"
refused "saving compiled C" "typedef" "$g" compile c --tokenizer "$d/tokenizers/llama3" -o "$w/c.gmc"
refused "C in code blocks" "typedef-name layer" "$g" trace --code-blocks c --tokenizer "$d/tokenizers/llama3" --quiet --text "$w/blocks.md"
[ "$fails" -eq 0 ]
