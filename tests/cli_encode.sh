#!/bin/sh
# `gramask encode` and `gramask trace --text` end to end: ids files byte for
# byte those of ../shared/corpus, special tokens, errors; the report of a
# rejected token (file:line:column, text, text before, what was expected).
set -u
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"
tmp=${TMPDIR:-/tmp}/gm_cli_encode.$$
mkdir -p "$tmp"

for t in sp32k llama3 qwen3; do
    "$g" encode "$d/tokenizers/$t" $(ls "$d"/corpus/go/*.go) -o "$tmp/ids.json"
    cmp -s "$tmp/ids.json" "$d/corpus/go/ids.$t.json"; ok "encode -o: the corpus's ids.$t.json byte for byte" $?
done
printf '<|start|>assistant<|channel|>final<|message|>Hi<|end|>' > "$tmp/h.txt"
run encode "$d/tokenizers/gptoss" "$tmp/h.txt"
has '[{"file": "h.txt", "ids": [200006, 173781, 200005, 17196, 200008, 12194, 200007]}]' && has 'exit 0'
ok "encode: Harmony special tokens are one id each" $?
run encode "$d/tokenizers/gptoss" "$tmp/h.txt" --special-as-text
has '"ids": [27, 91, 5236' && ! has '200006' && has 'exit 0'; ok "encode --special-as-text" $?
run encode "$d/tokenizers/gptoss" "$tmp/missing.txt"; has 'cannot open' && has 'exit 1'
ok "encode: an unreadable file" $?
printf '{"model": {"type": "Unigram", "vocab": [["a", 0.0]]}, "decoder": {"type": "Metaspace", "replacement": "_", "add_prefix_space": true}}' > "$tmp/tokenizer.json"
run encode "$tmp/tokenizer.json" "$tmp/h.txt"
has "tokenizer.json: model.type: \"Unigram\": only BPE models can encode text" && has 'exit 1'
ok "encode: an unsupported model is named with its JSON path" $?

# trace --text: the corpus passes; a broken text is reported exactly
run trace json --tokenizer "$d/tokenizers/llama3" --text $(ls "$d"/corpus/json/* | grep -v -e ids -e SOURCES | head -3)
has '3 files, 0 failing' && has 'exit 0'; ok "trace --text: corpus files pass" $?
printf '{"a": [1, 2,, 3]}\n' > "$tmp/bad.json"
run trace json --tokenizer "$d/tokenizers/llama3" --text "$tmp/bad.json"
has "gramask trace: $tmp/bad.json:1:12: true token 10856 \",,\" (step 8) is not allowed
  after: \"{\\\"a\\\": [1, 2\"
  expected: \",\" or \"]\" after the NUMBER being lexed (or more of it)" && has 'exit 1'
ok "trace --text: a rejected token with line:column, text, text before, expected" $?
printf 'package main\n\nfunc main() {\n\tx := f(1, 2))\n}\n' > "$tmp/bad.go"
run trace go --tokenizer "$d/tokenizers/qwen3" --text "$tmp/bad.go"
has "gramask trace: $tmp/bad.go:4:13: true token 1171 \"))\\n\" (step 15) is not allowed: its byte 2 (0x29) is refused" &&
    has '  after: "package main\n\nfunc main() {\n\tx := f(1, 2"' && has '  expected at that byte: REL_OP, ";", "(", ".", ",",' &&
    has 'exit 1'; ok "trace --text: Go, line 4" $?
printf '{"a": 1' > "$tmp/short.json"
run trace json --tokenizer "$d/tokenizers/sp32k" --text "$tmp/short.json"
has "gramask trace: $tmp/short.json: EOS not allowed at the end
  expected: \",\" or \"}\" after the NUMBER being lexed (or more of it)" && has 'exit 1'
ok "trace --text: EOS refused, with what was expected" $?
rm -rf "$tmp"
finish
