#!/bin/sh
# Code blocks (note [code blocks] in runtime/engine_blocks.c): random
# constrained generation inside a block of each bundled language never
# reaches a dead end (gramask generate fails on one), and every finished
# text — "```LANG\n" code "\n```" — holds code that `gramask parse` (lexer +
# LR parser on the whole text, a path independent of the masks) accepts.
set -eu
gramask=${GM_BUILDDIR:-.}/gramask
tok=${GM_SRCDIR:-.}/tests/data/sp32k/tokenizer.json
py=${PYTHON3:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
finished=0
for g in json python go java; do
    printf '{"type": "tag", "begin": "```%s\\n", "content": {"type": "lalr", "grammar": "%s"}, "end": "\\n```"}\n' \
        "$g" "$g" >"$work/$g.stag"
    "$gramask" generate --sampling uniform --structural-tag "$work/$g.stag" --tokenizer "$tok" --seed 5 -n 500 \
        --max-tokens 40 --eos-prob 0.5 --out "$work/$g.jsonl" 2>"$work/$g.log" ||
        { cat "$work/$g.log"; exit 1; }
    tail -1 "$work/$g.log"
    "$py" - "$work/$g.jsonl" "$work/$g" "$g" <<'PY'
import json, os, sys
os.makedirs(sys.argv[2], exist_ok=True)
begin, end = ("```%s\n" % sys.argv[3]).encode(), b"\n```"
n = 0
for line in open(sys.argv[1], encoding="utf-8", errors="surrogateescape"):
    rec = json.loads(line)
    if rec["finished"]:
        text = rec["text"].encode("utf-8", "surrogateescape")
        assert text.startswith(begin) and text.endswith(end), text
        code = text[len(begin):-len(end)]
        assert end not in code + b"\n", text
        with open(os.path.join(sys.argv[2], "%05d.txt" % n), "wb") as f:
            f.write(code)
        n += 1
PY
    n=0
    for f in "$work/$g"/*.txt; do
        [ -e "$f" ] || continue
        "$gramask" parse "$g" "$f" >/dev/null || { echo "code of a finished $g block does not parse:"; cat "$f"; exit 1; }
        n=$((n + 1))
    done
    echo "$g: $n finished blocks parse"
    finished=$((finished + n))
done
[ "$finished" -gt 0 ] || { echo "no block finished: the check checked nothing"; exit 1; }
