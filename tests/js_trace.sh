#!/bin/sh
# The bundled JavaScript grammar (contextual lexer) along real tokenizations:
# `gramask trace` decodes JavaScript files token by token with llama3 and
# qwen3 (as each encodes them) and fails if a true next token is ever masked
# or EOS is refused at the end. Files: tests/javascript/*.js (written here,
# the hard parts of grammars/javascript.lark together) and, when Debian's
# nodejs is installed, every 300th *.js file under /usr/lib/node_modules/npm
# that `node --check` accepts and the grammar parses. Then code blocks in
# free text (TagDispatch): a ```javascript block is constrained by
# javascript.lark (built with the contextual lexer, which it needs).
# Skipped (77) without the shared tokenizers.
set -u
src=${GM_SRCDIR:-.}
g=${GM_BUILDDIR:-.}/gramask
d=${GM_SHARED_DIR:-$src/../shared}
[ -d "$d/tokenizers/llama3" ] || { echo "SKIP: no $d/tokenizers/llama3"; exit 77; }
files=$(ls "$src"/tests/javascript/*.js)
if [ -d /usr/lib/node_modules/npm ] && command -v node >/dev/null; then
    for f in $(find /usr/lib/node_modules/npm -name '*.js' | LC_ALL=C sort | awk 'NR % 300 == 1'); do
        node --check "$f" >/dev/null 2>&1 && "$g" parse javascript "$f" --lexer=contextual >/dev/null 2>&1 \
            && files="$files $f"
    done
fi
fails=0
for tok in llama3 qwen3; do
    [ -d "$d/tokenizers/$tok" ] || continue
    # shellcheck disable=SC2086
    out=$("$g" trace javascript --lexer=contextual --tokenizer "$d/tokenizers/$tok" --quiet --text $files 2>&1)
    rc=$?
    echo "$tok: $(echo "$out" | tail -2 | head -1)"
    if [ $rc -ne 0 ]; then
        echo "FAIL: trace with $tok (exit $rc):"
        echo "$out" | grep -v ' all  yes ' | head -20
        fails=$((fails + 1))
    fi
done
# Code blocks: a ```javascript block (and a ```rust one beside it) in Markdown.
tmp=${TMPDIR:-/tmp}/js_block.$$
mkdir -p "$tmp"
printf 'Two blocks.\n\n```javascript\nconst x = a / b;\nlet r = /ab+c/g;\nfunction f() {\n  return\n  1\n}\n```\n\nAnd Rust:\n\n```rust\nfn main() { let v = vec![{ 1 }]; }\n```\n\nDone.\n' > "$tmp/good.md"
out=$("$g" trace --code-blocks javascript,rust --tokenizer "$d/tokenizers/llama3" --quiet --text "$tmp/good.md" 2>&1) \
    || { echo "FAIL: javascript and rust code blocks:"; echo "$out" | tail -5; fails=$((fails + 1)); }
echo "code blocks: $(echo "$out" | tail -2 | head -1)"
# `let x = ;` is no JavaScript: the block must refuse it.
printf 'Text.\n\n```javascript\nlet x = ;\n```\n' > "$tmp/bad.md"
if "$g" trace --code-blocks javascript --tokenizer "$d/tokenizers/llama3" --quiet --text "$tmp/bad.md" >/dev/null 2>&1; then
    echo "FAIL: 'let x = ;' in a javascript code block was allowed"; fails=$((fails + 1))
fi
rm -rf "$tmp"
exit $((fails > 0))
