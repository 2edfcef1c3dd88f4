#!/bin/sh
# `gramask vocab` end to end: --help, facts, --token, --decode (OK and
# MISMATCH), --dump, and the exit status of failures.
set -u
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"

run vocab --help; has 'usage: gramask vocab' && has 'exit 0'; ok "--help" $?
run --help; has '  vocab'; ok "listed in gramask --help" $?
run vocab; has 'usage: gramask vocab' && has 'exit 2'; ok "no arguments: usage, exit 2" $?
run vocab "$d/tokenizers/sp32k"
has 'size:            32000 ids (tokenizer 32000, padding 0)' && has '2: "</s>" (4 bytes) special eos' &&
    has 'strips up to 1 leading space'; ok "facts of sp32k" $?
run vocab "$d/tokenizers/llama3" --model-size 128320 --eos 128009
has 'padding 64' && has '128009: "<|eot_id|>" (10 bytes) special eos'; ok "--model-size and --eos" $?
run vocab "$d/tokenizers/sp32k" --token 272 13 2 99999
has '272: " the" (4 bytes)' && has '13: "\n" (1 bytes)' && has "'99999' is not a token id" &&
    has 'exit 1'; ok "--token, and an id out of range" $?
run vocab "$d/tokenizers/qwen3" --decode "$d/corpus/json/ids.qwen3.json"
has '20 OK, 0 mismatched' && has 'exit 0'; ok "--decode: OK" $?
run vocab "$d/tokenizers/llama3" --decode "$d/corpus/json/ids.qwen3.json"
has 'MISMATCH' && has 'exit 1'; ok "--decode with the wrong tokenizer: MISMATCH, exit 1" $?
run vocab /nonexistent/tok.json
has 'cannot open /nonexistent/tok.json' && has 'exit 1'; ok "unreadable file" $?
tmp=${TMPDIR:-/tmp}/gm_cli_vocab.$$
"$g" vocab "$d/tokenizers/sp32k" --dump >"$tmp"
run vocab "$tmp" --decode "$d/corpus/go/ids.sp32k.json"
has '20 OK, 0 mismatched'; ok "--dump loads back and decodes" $?
rm -f "$tmp"
finish
