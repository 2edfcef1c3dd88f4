#!/bin/sh
# Readable sampling of `gramask generate` under the tool formats (issue 33,
# item 6): with fixed seeds, most turns finish within a modest --max-tokens,
# with no dead end and every finished turn re-checked by generate itself
# (a fresh matcher; special tokens as ids). Under qwen and harmony with
# --tool-choice required every finished turn holds a call whose arguments
# parse as JSON (python's json) and hold the schema's required key. Uniform
# sampling stays available for stress tests. Skips without the shared
# tokenizers.
set -u
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"
py=${PYTHON3:-python3}
tk="$d/tokenizers"
[ -f "$tk/qwen3/tokenizer.json" ] && [ -f "$tk/gptoss/tokenizer.json" ] && [ -f "$tk/llama3/tokenizer.json" ] ||
    { echo "skip: no shared tokenizers in $tk"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/tools.json" <<'JSON'
[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
   "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7},
                  "units": {"type": "string", "enum": ["c", "f"]}},
   "required": ["city"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "search", "parameters": {"type": "object",
   "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
   "required": ["query"], "additionalProperties": false}}}]
JSON

# gen FORMAT TOKENIZER MIN_FINISHED ARGS...: 10 turns; at least MIN_FINISHED finished, none
# dead, none failing the re-check
gen() {
    f=$1 t=$2 min=$3
    shift 3
    run generate --tools "$tmp/tools.json" --format "$f" --tokenizer "$tk/$t" -n 10 --max-tokens 200 \
        --seed 1 --out "$tmp/$f.jsonl" "$@"
    printf '%s\n' "$o" | grep '^generate:'
    n=$(printf '%s\n' "$o" | sed -n 's/^generate: 10 texts, \([0-9]*\) finished.*/\1/p')
    [ -n "$n" ] && [ "$n" -ge "$min" ] && has ' 0 dead ends, 0 failed re-check' && has 'exit 0'
}

# calls FILE BEGIN END: every finished turn holds a call; its arguments are JSON with the
# tool's required key
calls() {
    "$py" - "$@" <<'PY'
import json, sys
path, begin, end = sys.argv[1:]
need = {"get_weather": "city", "search": "query"}
turns = [json.loads(l) for l in open(path, encoding="utf-8", errors="surrogateescape")]
done = [t["text"] for t in turns if t["finished"]]
for text in done:
    parts = text.split(begin)[1:]
    assert parts, "no call in %r" % text
    for p in parts:
        if begin == '{"name":':  # llama-json: {"name": NAME, "parameters": ARGS}, no end
            call, _ = json.JSONDecoder().raw_decode(begin + p)
            name, args = call["name"], call["parameters"]
            assert need[name] in args, (name, args)
            continue
        body = p[:p.index(end)]
        if begin == "<tool_call>":  # qwen: {"name": ..., "arguments": ...}
            call = json.loads(body)
            name, args = call["name"], call["arguments"]
        elif begin == "<function=":  # llama: NAME>ARGS
            name = body[:body.index(">")]
            args = json.loads(body[body.index(">") + 1:])
        else:  # harmony: NAME<|constrain|>json<|message|>ARGS
            name = body[:body.index("<|")]
            args = json.loads(body[body.index("<|message|>") + len("<|message|>"):])
        assert need[name] in args, (name, args)
print("%d finished turns, every call's arguments hold the required key" % len(done))
PY
}

gen qwen qwen3 8 --tool-choice required && calls "$tmp/qwen.jsonl" "<tool_call>" "
</tool_call>"
ok "qwen, calls required: most turns finish, their arguments are instances" $?
gen harmony gptoss 8 --tool-choice required && calls "$tmp/harmony.jsonl" " to=functions." "<|call|>"
ok "harmony, calls required: most turns finish, their arguments are instances" $?
gen llama llama3 8; ok "llama: most turns finish" $?
gen llama-json llama3 8; ok "llama-json: most turns finish" $?
# plain-text triggers (<function=, {"name":) span several tokens: readable sampling writes
# them out (cli/triggers.c), so calls required finish too
gen llama llama3 8 --tool-choice required && calls "$tmp/llama.jsonl" "<function=" "</function>"
ok "llama, calls required: most turns finish, their arguments are instances" $?
gen llama-json llama3 8 --tool-choice required && calls "$tmp/llama-json.jsonl" '{"name":' ""
ok "llama-json, calls required: most turns finish, their arguments are instances" $?
run generate --tools "$tmp/tools.json" --format qwen --tool-choice required --tokenizer "$tk/qwen3" -n 20 \
    --max-tokens 60 --sampling uniform
has ' 0 dead ends, 0 failed re-check' && has 'exit 0'; ok "uniform sampling (the stress test) stays" $?
finish
