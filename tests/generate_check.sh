#!/bin/sh
# Soundness of masks on every bundled grammar: thousands of random constrained
# generations never reach a dead end (gramask generate fails on one), and every
# finished text is a sentence of the grammar for `gramask parse`, which lexes
# whole texts and feeds an LR parser: a path independent of the masks.
set -eu
gramask=${GM_BUILDDIR:-.}/gramask
tok=${GM_SRCDIR:-.}/tests/data/sp32k/tokenizer.json
py=${PYTHON3:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checked=0
for g in json json_bounded go java python; do
    "$gramask" grammar "$g" >/dev/null 2>&1 || { echo "skip $g (not bundled)"; continue; }
    "$gramask" generate --sampling uniform "$g" --tokenizer "$tok" --seed 7 -n 1000 --max-tokens 60 \
        --out "$work/$g.jsonl" 2>"$work/$g.log" || { cat "$work/$g.log"; exit 1; }
    tail -1 "$work/$g.log"
    # Write each finished text to its own file and parse it.
    "$py" - "$work/$g.jsonl" "$work/$g" <<'PY'
import json, os, sys
os.makedirs(sys.argv[2], exist_ok=True)
n = 0
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    rec = json.loads(line)
    if rec["finished"]:
        with open(os.path.join(sys.argv[2], "%05d.txt" % n), "wb") as f:
            f.write(rec["text"].encode("utf-8", "surrogateescape"))
        n += 1
PY
    n=0
    for f in "$work/$g"/*.txt; do
        [ -e "$f" ] || continue
        "$gramask" parse "$g" "$f" >/dev/null || { echo "finished text $f of $g does not parse:"; cat "$f"; exit 1; }
        n=$((n + 1))
    done
    echo "$g: $n finished texts parse"
    [ "$n" -gt 0 ] || { echo "$g: no text finished: the check checked nothing"; exit 1; }
    checked=$((checked + 1))
done
[ "$checked" -ge 2 ]
