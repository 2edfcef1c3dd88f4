#!/bin/sh
# The bundled Rust grammar along real tokenizations: `gramask trace` decodes
# Rust files token by token with llama3 and qwen3 (as each encodes them) and
# fails if a true next token is ever masked or EOS is refused at the end.
# Files: tests/rust/*.rs (written here, the hard parts of grammars/rust.lark
# together) and, when Debian's librust-*-dev crate sources are installed
# (corpus/check_corpus.py installs them), every 200th *.rs file under
# /usr/share/cargo/registry that the grammar parses. Skipped (77) without
# the shared tokenizers.
set -u
src=${GM_SRCDIR:-.}
g=${GM_BUILDDIR:-.}/gramask
d=${GM_SHARED_DIR:-$src/../shared}
[ -d "$d/tokenizers/llama3" ] || { echo "SKIP: no $d/tokenizers/llama3"; exit 77; }
files=$(ls "$src"/tests/rust/*.rs)
if [ -d /usr/share/cargo/registry ]; then
    for f in $(find /usr/share/cargo/registry -name '*.rs' | LC_ALL=C sort | awk 'NR % 200 == 1'); do
        "$g" parse rust "$f" >/dev/null 2>&1 && files="$files $f"
    done
fi
fails=0
for tok in llama3 qwen3; do
    [ -d "$d/tokenizers/$tok" ] || continue
    # shellcheck disable=SC2086
    out=$("$g" trace rust --tokenizer "$d/tokenizers/$tok" --quiet --text $files 2>&1)
    rc=$?
    echo "$tok: $(echo "$out" | tail -2 | head -1)"
    if [ $rc -ne 0 ]; then
        echo "FAIL: trace with $tok (exit $rc):"
        echo "$out" | grep -v ' all  yes ' | head -20
        fails=$((fails + 1))
    fi
done
# Code blocks in free text (TagDispatch): a ```rust block is constrained by rust.lark.
out=$("$g" trace --code-blocks rust,python --tokenizer "$d/tokenizers/llama3" --quiet \
      --text "$src/tests/rust/blocks.md" 2>&1) || { echo "FAIL: code blocks:"; echo "$out" | tail -5; fails=$((fails + 1)); }
printf 'Text.\n\n```rust\nfn main() { /* /* */ }\n```\n' > "${TMPDIR:-/tmp}/rust_block_bad.$$.md"
if "$g" trace --code-blocks rust --tokenizer "$d/tokenizers/llama3" --quiet \
        --text "${TMPDIR:-/tmp}/rust_block_bad.$$.md" >/dev/null 2>&1; then
    echo "FAIL: an unterminated nested comment in a rust code block was allowed"; fails=$((fails + 1))
fi
rm -f "${TMPDIR:-/tmp}/rust_block_bad.$$.md"
# Random generation under the masks never dead-ends (gramask generate fails on
# one), and every finished text parses (`gramask parse`: a path independent of
# the masks). The slow check against rustc is `make check-rust-generate`.
gen=${TMPDIR:-/tmp}/rust_gen.$$.jsonl
if "$g" generate --sampling uniform rust --tokenizer "$src/tests/data/sp32k/tokenizer.json" --seed 3 \
        -n 300 --max-tokens 60 --quiet --out "$gen" >"$gen.log" 2>&1; then
    tail -1 "$gen.log"
    "${PYTHON3:-python3}" - "$gen" "$g" <<'PY' || fails=$((fails + 1))
import json, subprocess, sys, tempfile
n = bad = 0
with tempfile.NamedTemporaryFile("wb", suffix=".rs") as f:
    for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
        rec = json.loads(line)
        if not rec["finished"]:
            continue
        f.seek(0)
        f.truncate()
        f.write(rec["text"].encode("utf-8", "surrogateescape"))
        f.flush()
        n += 1
        if subprocess.run([sys.argv[2], "parse", "rust", f.name], capture_output=True).returncode:
            bad += 1
            print("FAIL: a finished generated text does not parse: %r" % rec["text"])
print("generate: %d finished texts parse, %d do not" % (n - bad, bad))
sys.exit(1 if bad or not n else 0)
PY
else
    echo "FAIL: gramask generate rust:"; tail -5 "$gen.log"; fails=$((fails + 1))
fi
rm -f "$gen" "$gen.log"
exit $((fails > 0))
