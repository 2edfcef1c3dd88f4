#!/bin/sh
# The command line over the Earley engine: GBNF, EBNF and regex grammars by
# extension or --format, in parse, compile, info, trace and generate, with the
# exact messages users see.
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
G=$d/grammars/gbnf
T=$d/tokenizers/llama3

printf '[1, 2, [3]]' > "$t/a.json"
printf '{"a": [1, 2,, 3]}' > "$t/b.json"
printf '{"a": [1' > "$t/c.json"
run parse "$G/json.gbnf" "$t/b.json"
has "b.json:1:13: unexpected ',' (byte 0x2c); expected 0x0a, ' ', '\"', '-', '0'-'9', '[', 'f', 'n', 't', '{'" && has "exit 1"
ok "parse names the first refused byte and what the grammar takes there" $?
run trace "$G/json.gbnf" --tokenizer "$T" --text "$t/b.json"
# the token ",," is refused at its second byte, where parse (byte by byte) refuses it too
has "true token 10856 \",,\" (step 8) is not allowed: its byte 2 (0x2c) is refused" &&
    has "expected at that byte: 0x0a, ' ', '\"', '-', '0'-'9', '[', 'f', 'n', 't', '{'"
ok "trace says what an Earley grammar expected at the byte it refused" $?
run parse "$G/json.gbnf" "$t/c.json"
has "c.json:1:9: unexpected end of input; expected" && has "exit 1"
ok "parse reports an unfinished text" $?
printf '\\[[0-9]+(, ?([0-9]+|\\[[0-9]\\]))*\\]\n' > "$t/list.regex"
run parse "$t/list.regex" "$t/a.json" "$t/b.json"
has "a.json: OK (11 bytes)" && has "b.json:1:1: unexpected '{'" && has "exit 1"
ok "a .regex file is a grammar; one line per file" $?
printf 'root ::= [a-z\n' > "$t/bad.gbnf"
run trace "$t/bad.gbnf" --tokenizer "$T" --ids "$d/corpus/json/ids.llama3.json"
has "bad.gbnf:1:" && has "exit 1"
ok "grammar errors carry file:line:column" $?

run compile "$G/json.gbnf" --tokenizer "$T" -o "$t/j.gmc"
has "engine          Earley" && has "exit 0"
ok "compile a GBNF grammar" $?
run info "$t/j.gmc"
has "engine          Earley" && has "rules" && has "exit 0"
ok "info on an Earley compiled file" $?
run generate "$G/json.gbnf" --tokenizer "$T" -n 20 --seed 3
has "exit 0"
ok "generate never dead-ends on json.gbnf" $?
cp "$G/json_arr.gbnf" "$t/arr.txt"
run generate "$t/arr.txt" --format gbnf --tokenizer "$T" -n 5
has "exit 0"
ok "--format gbnf whatever the extension" $?
run trace "$G/json.gbnf" --format lark --tokenizer "$T" --ids "$d/corpus/json/ids.llama3.json"
has "exit 1"
ok "--format lark reads the same file as Lark (and fails)" $?
finish
