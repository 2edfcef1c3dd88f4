#!/bin/sh
# Decoding under Lark's contextual lexer (runtime/ctx_spanners.h, note [contextual masks])
# with Lark's own python.lark on files of the machine's Python standard library, tokenized
# with llama3's encoder: `gramask trace` must allow every true token and EOS at the end.
# Skips when no python3 can import lark (Debian: python3-lark) or the tokenizer is missing.
py=${LARK_PYTHON:-}
if [ -z "$py" ] || ! "$py" -c 'import lark' 2>/dev/null; then
    echo "SKIP: no python3 with lark (LARK_PYTHON; Debian: python3-lark)"
    exit 77
fi
tok=${GM_SHARED_DIR:-../shared}/tokenizers/llama3
[ -f "$tok/tokenizer.json" ] || { echo "SKIP: no $tok"; exit 77; }
grammar=$("$py" -c 'import lark, os; print(os.path.join(os.path.dirname(lark.__file__), "grammars", "python.lark"))')
lib=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
# A deterministic sample: every 60th module of under 20 KB, six of them.
files=$(find "$lib" -maxdepth 2 -name '*.py' -size -20k | LC_ALL=C sort | awk 'NR % 60 == 5' | head -6)
[ -n "$files" ] || { echo "SKIP: no Python files under $lib"; exit 77; }
# shellcheck disable=SC2086
exec "${GM_BUILDDIR:-.}/gramask" trace "$grammar" --lark --start=file_input --lexer=contextual \
    --tokenizer "$tok" --quiet --text $files
