#!/usr/bin/env python3
"""finished_programs.py GEN.jsonl DIR EXT: writes each finished text of a
`gramask generate --out` file to DIR/gNNNNN.EXT (bytes as generated), for the
language oracles of the *_generate.sh checks."""
import json
import os
import sys

gen, out, ext = sys.argv[1:4]
os.makedirs(out)
k = 0
for line in open(gen, encoding="utf-8", errors="surrogateescape"):
    rec = json.loads(line)
    if rec["finished"]:
        with open(os.path.join(out, "g%05d.%s" % (k, ext)), "wb") as f:
            f.write(rec["text"].encode("utf-8", "surrogateescape"))
        k += 1
