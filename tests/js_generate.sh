#!/bin/sh
# Generated JavaScript programs against the oracle (`make check-js-generate`;
# not part of `make check`: several minutes on a loaded 2-core machine).
# `gramask generate` writes random programs under the masks of
# grammars/javascript.lark (contextual lexer; start rule changed to require at
# least one item, so that finished programs are not empty), with the bundled
# sp32k tokenizer; every finished program must be accepted by `node --check`
# as a script (.js) or, failing that, as a module (.mjs): the grammar takes
# scripts and modules as one goal (its header). Generation must never
# dead-end, and at least GM_JS_GENERATE_MIN (200) programs must finish and pass.
# GM_JS_GENERATE_N texts are started (default 1000). A rejection whose message
# is one of the early errors the grammar's header lists as not checked
# (invalid assignment targets, duplicate bindings, labels, break/continue
# targets, strict-mode and regular-expression rules) is counted and shown
# apart, not failed; every other rejection fails.
set -u
src=${GM_SRCDIR:-.}
g=${GM_BUILDDIR:-.}/gramask
py=${PYTHON3:-python3}
n=${GM_JS_GENERATE_N:-1000}
min=${GM_JS_GENERATE_MIN:-200}
command -v node >/dev/null || { echo "SKIP: no node (Debian package nodejs)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/^start: HASHBANG? items$/start: HASHBANG? items module_item/' "$src/grammars/javascript.lark" > "$work/js1.lark"
grep -q '^start: HASHBANG? items module_item$' "$work/js1.lark" || { echo "FAIL: start rule not found"; exit 1; }
"$g" generate "$work/js1.lark" --lexer=contextual --tokenizer "$src/tests/data/sp32k/tokenizer.json" --seed 11 \
    -n "$n" --max-tokens 80 --eos-prob 0.5 --quiet --out "$work/gen.jsonl" 2>"$work/gen.log" \
    || { cat "$work/gen.log"; echo "FAIL: gramask generate (a dead end?)"; exit 1; }
tail -1 "$work/gen.log"
"$py" "$src/tests/finished_programs.py" "$work/gen.jsonl" "$work/p" js
ok=0 bad=0 mod=0 known=0
early='Invalid left-hand side|has already been declared|Duplicate parameter|Undefined label|Illegal (break|continue)|Label .* has already|strict mode|Invalid regular expression|Octal|Delete of an unqualified|Unexpected eval or arguments|Illegal .super.|.super. keyword unexpected|Getter must not|Setter must have|Invalid destructuring|Rest element must be last|Illegal .use strict.|Invalid shorthand property initializer|Classes may not have|Unexpected reserved word|Illegal return|await is only valid|Private field .* must be declared|Invalid optional chain|Duplicate export'
for f in "$work"/p/*.js; do
    [ -e "$f" ] || continue
    if node --check "$f" >"$work/err" 2>&1; then
        ok=$((ok + 1))
    elif cp "$f" "$f.mjs" && node --check "$f.mjs" >/dev/null 2>&1; then
        ok=$((ok + 1)) mod=$((mod + 1))
    elif grep -Eq "$early" "$work/err"; then
        known=$((known + 1))
        echo "early error (grammar header, not checked): $(grep -E "$early" "$work/err" | head -1)"
    else
        bad=$((bad + 1))
        echo "FAIL: node --check rejects a generated program (as script and module):"; cat "$f"; echo
        head -5 "$work/err"
    fi
done
echo "javascript: $ok of $((ok + known + bad)) finished generated programs pass node --check" \
     "($mod as modules only); $known rejected for early errors the grammar does not check; $bad other"
[ "$bad" -eq 0 ] || exit 1
[ "$ok" -ge "$min" ] || { echo "FAIL: fewer than $min programs finished (raise GM_JS_GENERATE_N)"; exit 1; }
