#!/bin/sh
# Generated Rust programs against the oracle (`make check-rust-generate`; not
# part of `make check`: about 10 minutes on a loaded 2-core machine).
# `gramask generate` writes random programs under the masks of grammars/rust.lark
# (start rule changed to require at least one item, so that finished programs
# are not empty), with the bundled sp32k tokenizer; every finished program must
# be accepted by Debian's rustc in parse-only mode
# (RUSTC_BOOTSTRAP=1 /usr/bin/rustc --edition 2021 -Z parse-only), generation
# must never dead-end, and at least GM_RUST_GENERATE_MIN (200) programs must
# finish. GM_RUST_GENERATE_N texts are started (default 2000).
set -u
src=${GM_SRCDIR:-.}
g=${GM_BUILDDIR:-.}/gramask
py=${PYTHON3:-python3}
n=${GM_RUST_GENERATE_N:-2000}
min=${GM_RUST_GENERATE_MIN:-200}
rustc=/usr/bin/rustc
[ -x "$rustc" ] || { echo "SKIP: no $rustc (Debian package rustc)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/^start: inner_attr\* item\*$/start: inner_attr* item+/' "$src/grammars/rust.lark" > "$work/rust1.lark"
grep -q '^start: inner_attr\* item+$' "$work/rust1.lark" || { echo "FAIL: start rule not found"; exit 1; }
"$g" generate "$work/rust1.lark" --tokenizer "$src/tests/data/sp32k/tokenizer.json" --seed 7 -n "$n" \
    --max-tokens 120 --eos-prob 0.5 --quiet --out "$work/gen.jsonl" 2>"$work/gen.log" \
    || { cat "$work/gen.log"; echo "FAIL: gramask generate (a dead end?)"; exit 1; }
tail -1 "$work/gen.log"
"$py" "$src/tests/finished_programs.py" "$work/gen.jsonl" "$work/p" rs
ok=0 bad=0
for f in "$work"/p/*.rs; do
    [ -e "$f" ] || continue
    if RUSTC_BOOTSTRAP=1 "$rustc" --edition 2021 -Z parse-only "$f" >"$work/err" 2>&1; then
        ok=$((ok + 1))
    else
        bad=$((bad + 1))
        echo "FAIL: rustc rejects a generated program:"; cat "$f"; echo; head -5 "$work/err"
    fi
done
echo "rust: $ok of $((ok + bad)) finished generated programs pass rustc -Z parse-only"
[ "$bad" -eq 0 ] || exit 1
[ "$ok" -ge "$min" ] || { echo "FAIL: fewer than $min programs finished (raise GM_RUST_GENERATE_N)"; exit 1; }
