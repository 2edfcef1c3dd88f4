#!/bin/sh
# gramask schema and gramask maskbench end to end: the printed grammar, the
# refusal message (keyword and JSON pointer), the string automata's state
# limit and its option, a deterministic sample of the MaskBench dev half (no
# valid instance rejected, JSON summary keys), and the isolation of a
# crashing and of a hanging schema (test hooks of the harness).
set -eu
b=${GM_BUILDDIR:-.}
shared=${GM_SHARED_DIR:-../shared}
py=${PYTHON3:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

printf '%s' '{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":12}},"required":["n"]}' >"$tmp/s.json"
"$b/gramask" schema "$tmp/s.json" >"$tmp/g.ebnf" || fail "schema"
grep -q '^root ::= ' "$tmp/g.ebnf" || fail "no root rule printed"
"$b/gramask" schema "$tmp/s.json" --stats | grep -q 'expression nodes' || fail "--stats"

printf '%s' '{"properties":{"tags":{"type":"array","uniqueItems":true}}}' >"$tmp/u.json"
if "$b/gramask" schema "$tmp/u.json" >/dev/null 2>"$tmp/err"; then fail "uniqueItems accepted"; fi
grep -q "keyword 'uniqueItems' at /properties/tags/uniqueItems" "$tmp/err" || fail "refusal: $(cat "$tmp/err")"
"$b/gramask" schema "$tmp/u.json" --lenient >/dev/null 2>"$tmp/warn" || fail "--lenient"
grep -q "relaxed" "$tmp/warn" || fail "no relaxation warning"

# a string automaton past its state limit: GM_ERR_LIMIT naming the option; raised, it compiles
printf '%s' '{"type":"object","patternProperties":{"^[ab]*a[ab]{11}$":{"type":"integer"}},"additionalProperties":false}' >"$tmp/k.json"
if "$b/gramask" schema "$tmp/k.json" >/dev/null 2>"$tmp/err"; then fail "automaton limit not reported"; fi
grep -q "keyword 'patternProperties' at /patternProperties: .*the limit max_automaton_states.*--max-automaton-states=N" \
    "$tmp/err" || fail "automaton limit: $(cat "$tmp/err")"
"$b/gramask" schema "$tmp/k.json" --max-automaton-states=20000 --stats >/dev/null || fail "--max-automaton-states"

dev=$shared/maskbench/dev.jsonl.gz
tok=$shared/tokenizers/llama3
if [ ! -f "$dev" ] || [ ! -d "$tok" ]; then echo "no MaskBench data: skipped"; exit 77; fi
"$b/gramask" maskbench "$dev" --tokenizer "$tok" --every 300 --json >"$tmp/mb.json" 2>"$tmp/mb.err" ||
    fail "maskbench sample: $(tail -3 "$tmp/mb.err")"
"$py" - "$tmp/mb.json" <<'PY' || fail "maskbench summary"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("schemas", "passing", "compile_errors", "invalidation_errors", "validation_errors",
          "crashes", "timeouts", "tbm_us", "ttfm_ms", "splits"):
    assert k in d, k
for k in ("mean", "p50", "p99", "max"):
    assert k in d["tbm_us"] and k in d["ttfm_ms"], k
assert d["schemas"] == 20, d["schemas"]
assert d["invalidation_errors"] == 0 and d["crashes"] == 0 and d["timeouts"] == 0, d
assert d["passing"] >= 15, d["passing"]
assert sum(s["schemas"] for s in d["splits"].values()) == d["schemas"]
PY
first=$(gzip -dc "$dev" | head -1 | "$py" -c 'import json,sys; print(json.loads(sys.stdin.read())["name"])')
GRAMASK_MASKBENCH_TEST_CRASH=$first "$b/gramask" maskbench "$dev" --tokenizer "$tok" --limit 3 --json \
    >"$tmp/crash.json" 2>/dev/null && fail "a crash must fail the run"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["crashes"]==1 and d["schemas"]==3, d' \
    "$tmp/crash.json" || fail "crash isolation"
GRAMASK_MASKBENCH_TEST_HANG=$first "$b/gramask" maskbench "$dev" --tokenizer "$tok" --limit 2 --timeout 2 \
    --json >"$tmp/hang.json" 2>/dev/null && fail "a time-out must fail the run"
"$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["timeouts"]==1 and d["schemas"]==2, d' \
    "$tmp/hang.json" || fail "time-out isolation"
echo "ok"
