#!/bin/sh
# Generated TypeScript programs against the oracle (`make check-ts-generate`;
# not part of `make check`: a few minutes on a loaded 2-core machine).
# `gramask generate` writes random programs under the masks of
# grammars/typescript.lark (contextual lexer; start rule changed to require
# at least one item, so that finished programs are not empty), with the
# bundled sp32k tokenizer; every finished program must be accepted by
# TypeScript's own parser (ts.createSourceFile as a .ts file, no parse
# diagnostic: tests/ts_generate_oracle.js), generation must never dead-end,
# and at least GM_TS_GENERATE_MIN (200) programs must finish and pass.
# GM_TS_GENERATE_N texts are started (default 1000), with seed
# GM_TS_GENERATE_SEED (default 11).
# The typescript package (the version corpus/check_corpus.py pins) is the one
# `make check-corpus` installed under _corpus/ts, or else npm installs it into
# _corpus/ts-generate (GM_TS_MODULES names another node_modules).
# Three rejections the grammar's header lists as limits are counted and
# shown apart, not failed: an invalid identifier character or \u escape
# (NAME approximates ID_Start/ID_Continue), a reserved word taken as a name
# in a state that takes no keyword (the oracle finds a reserved word where
# tsc's first diagnostic is), and arrow parameters that the expression cover
# lets through (`(a + 1) => x`: tsc's first diagnostic is at a `=>` right
# after a parenthesized expression or call arguments). Every other
# rejection fails.
set -u
src=${GM_SRCDIR:-.}
build=${GM_BUILDDIR:-.}
g=$build/gramask
py=${PYTHON3:-python3}
n=${GM_TS_GENERATE_N:-1000}
min=${GM_TS_GENERATE_MIN:-200}
seed=${GM_TS_GENERATE_SEED:-11}
command -v node >/dev/null || { echo "SKIP: no node (Debian package nodejs)"; exit 77; }
tsver=$(sed -n 's/^TS_PACKAGES = \["\(typescript@[0-9.]*\)".*/\1/p' "$src/corpus/check_corpus.py")
[ -n "$tsver" ] || { echo "FAIL: no typescript version in corpus/check_corpus.py"; exit 1; }
modules=${GM_TS_MODULES:-}
if [ -z "$modules" ]; then
    modules=$build/_corpus/ts/node_modules
    if ! grep -q "$tsver" "$build/_corpus/ts/installed" 2>/dev/null; then
        modules=$build/_corpus/ts-generate/node_modules
        if ! grep -qx "$tsver" "$build/_corpus/ts-generate/installed" 2>/dev/null; then
            mkdir -p "$build/_corpus/ts-generate"
            npm install --prefix "$build/_corpus/ts-generate" --no-audit --no-fund --ignore-scripts \
                --no-save "$tsver" >"$build/_corpus/ts-generate/npm.log" 2>&1 \
                || { tail -20 "$build/_corpus/ts-generate/npm.log"; echo "FAIL: npm install $tsver"; exit 1; }
            echo "$tsver" > "$build/_corpus/ts-generate/installed"
        fi
    fi
fi
[ -f "$modules/typescript/package.json" ] || { echo "FAIL: no typescript package in $modules"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/^start: HASHBANG? items$/start: HASHBANG? items module_item/' "$src/grammars/typescript.lark" > "$work/ts1.lark"
grep -q '^start: HASHBANG? items module_item$' "$work/ts1.lark" || { echo "FAIL: start rule not found"; exit 1; }
"$g" generate "$work/ts1.lark" --lexer=contextual --tokenizer "$src/tests/data/sp32k/tokenizer.json" --seed "$seed" \
    -n "$n" --max-tokens 80 --eos-prob 0.5 --quiet --out "$work/gen.jsonl" 2>"$work/gen.log" \
    || { cat "$work/gen.log"; echo "FAIL: gramask generate (a dead end?)"; exit 1; }
tail -1 "$work/gen.log"
"$py" "$src/tests/finished_programs.py" "$work/gen.jsonl" "$work/p" ts
ls "$work"/p/*.ts >/dev/null 2>&1 || { echo "FAIL: no finished program"; exit 1; }
node "$src/tests/ts_generate_oracle.js" "$modules/typescript" "$work"/p/*.ts > "$work/oracle" \
    || { cat "$work/oracle"; echo "FAIL: the oracle failed"; exit 1; }
ok=$(grep -c '^OK ' "$work/oracle")
chars=0 reserved=0 arrow=0 bad=0
while read -r res f kind msg; do
    [ "$res" = ERR ] || continue
    case $kind in
    char:)
        [ "$msg" = "Invalid character." ] || kind=other: ;;
    esac
    case $kind in
    char:) chars=$((chars + 1)); echo "identifier character (grammar header, not checked): $(cat "$f")" ;;
    reserved:) reserved=$((reserved + 1)); echo "reserved word as a name (grammar header, not checked): $(cat "$f")" ;;
    arrow:) arrow=$((arrow + 1)); echo "arrow parameters that are no parameters (grammar header, not checked): $(cat "$f")" ;;
    *) bad=$((bad + 1))
       echo "FAIL: TypeScript's parser rejects a generated program ($msg):"; cat "$f"; echo ;;
    esac
done < "$work/oracle"
echo "typescript: $ok of $((ok + chars + reserved + arrow + bad)) finished generated programs pass TypeScript's parser;" \
     "$chars rejected for an identifier character, $reserved for a reserved word as a name, $arrow for arrow" \
     "parameters that are no parameters (header limits); $bad other"
[ "$bad" -eq 0 ] || exit 1
[ "$ok" -ge "$min" ] || { echo "FAIL: fewer than $min programs finished (raise GM_TS_GENERATE_N)"; exit 1; }
