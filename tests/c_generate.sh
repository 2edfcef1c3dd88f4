#!/bin/sh
# Generated C programs against gcc (`make check-c-generate`; not part of make
# check). `gramask generate` writes random programs under the masks of
# grammars/c.lark (start rule changed to require at least one declaration,
# so that finished programs are not empty) with the bundled sp32k tokenizer;
# generation must never dead-end, at least GM_C_GENERATE_MIN (200) programs
# must finish, and gcc must find no syntax error in any of them:
# `gcc -fsyntax-only -std=gnu11` also checks types and declarations, which
# random programs break (undeclared names, wrong operand types), so its
# errors count only when they are the parser's ("expected ...", "before
# ...", "stray ...", "unknown type name": a name the masks took for a
# typedef name that is none, "... undeclared" is not).
set -u
src=${GM_SRCDIR:-.}
g=${GM_BUILDDIR:-.}/gramask
py=${PYTHON3:-python3}
n=${GM_C_GENERATE_N:-1000}
min=${GM_C_GENERATE_MIN:-200}
command -v gcc >/dev/null || { echo "SKIP: no gcc"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/^start: translation_unit?$/start: translation_unit/' "$src/grammars/c.lark" > "$work/c1.lark"
grep -q '^start: translation_unit$' "$work/c1.lark" || { echo "FAIL: start rule not found"; exit 1; }
"$g" generate "$work/c1.lark" --tokenizer "$src/tests/data/sp32k/tokenizer.json" --seed 11 -n "$n" \
    --max-tokens 80 --eos-prob 0.5 --quiet --out "$work/gen.jsonl" 2>"$work/gen.log" \
    || { cat "$work/gen.log"; echo "FAIL: gramask generate (a dead end?)"; exit 1; }
tail -1 "$work/gen.log"
"$py" "$src/tests/finished_programs.py" "$work/gen.jsonl" "$work/p" c
ok=0 bad=0
for f in "$work"/p/*.c; do
    [ -e "$f" ] || continue
    gcc -fsyntax-only -std=gnu11 -w "$f" >"$work/err" 2>&1
    if grep -E 'error: (expected|stray|unknown type name|.*before)' "$work/err" >/dev/null; then
        bad=$((bad + 1))
        echo "FAIL: gcc finds a syntax error in a generated program:"; cat "$f"; echo; grep error "$work/err" | head -3
    else
        ok=$((ok + 1))
    fi
done
echo "c: $ok of $((ok + bad)) finished generated programs have no syntax error for gcc -fsyntax-only"
[ "$bad" -eq 0 ] || exit 1
[ "$ok" -ge "$min" ] || { echo "FAIL: fewer than $min programs finished (raise GM_C_GENERATE_N)"; exit 1; }
