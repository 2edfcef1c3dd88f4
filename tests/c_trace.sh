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
[ "$fails" -eq 0 ]
