#!/bin/sh
# `make check-c-trace` (not in make check: a preprocessed binutils file holds
# thousands of lines of system headers and hundreds of typedef names, and
# takes minutes a tokenizer). Decodes every GM_C_TRACE_EVERY-th (default 20)
# file of the C corpus of `make check-corpus` (binutils 2.40 preprocessed by
# gcc, the files gcc accepts: corpus/check_corpus.py, c_files) token by token
# with llama3 and qwen3, and fails if a true next token is ever masked or EOS
# is refused at the end. GM_C_TRACE_WORKDIR keeps the extracted corpus
# between runs (default: a temporary folder).
set -u
src=${GM_SRCDIR:-.}
g=${GM_BUILDDIR:-.}/gramask
d=${GM_SHARED_DIR:-$src/../shared}
py=${PYTHON3:-python3}
every=${GM_C_TRACE_EVERY:-20}
[ -d "$d/tokenizers/llama3" ] || { echo "SKIP: no $d/tokenizers/llama3"; exit 77; }
[ -f /usr/src/binutils/binutils-2.40.tar.xz ] || { echo "SKIP: no binutils-source"; exit 77; }
work=${GM_C_TRACE_WORKDIR:-$(mktemp -d)}
files=$("$py" - "$src/corpus" "$work" "$every" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import check_corpus
class Ctx:
    shared = srcdir = None
    workdir = sys.argv[2]
    cache = {}
files, _ = check_corpus.c_files(Ctx())
print(" ".join(files[::int(sys.argv[3])]))
PY
) || { echo "FAIL: the C corpus"; exit 1; }
fails=0
for tok in llama3 qwen3; do
    [ -d "$d/tokenizers/$tok" ] || continue
    # shellcheck disable=SC2086
    out=$("$g" trace c --tokenizer "$d/tokenizers/$tok" --quiet --text $files 2>&1)
    rc=$?
    echo "$out" | tail -3
    if [ $rc -ne 0 ]; then
        echo "FAIL: trace with $tok (exit $rc):"
        echo "$out" | grep -v ' all  yes ' | head -20
        fails=$((fails + 1))
    fi
done
[ -n "${GM_C_TRACE_WORKDIR:-}" ] || rm -rf "$work"
[ "$fails" -eq 0 ]
