"""Cases and verdicts for tests/test_schema_escapes: JSON strings spelled with escapes.

schema_escapes.py DEV.jsonl.gz
    MaskBench (../shared/maskbench): every STEP-th schema with instances. Prints
    "S <schema>" and, per instance, "<judge> <label> <hex text> <hex ascii> <hex mixed>":
    judge = python3-jsonschema's verdict (1 valid, 0 invalid; formats checked, the
    validator $schema names, 2020-12 otherwise), label = MaskBench's, text = the
    instance as MaskBench spells it (ensure_ascii=False), ascii = the same value with
    every string as json.dumps(ensure_ascii=True) spells it, mixed = every character
    of every string spelled at random among the ways RFC 8259 allows (literal, short
    escape, \\uXXXX with each hex digit in either case, surrogate pairs). Numbers keep
    their text, members their order and duplicates.

schema_escapes.py FILE
    FILE holds "S <schema>" lines (case 0, 1, ...) and "<case> <hex text>" lines;
    prints "<1|0|x>" per text: valid, invalid, or not JSON (json.loads).
"""
import gzip
import json
import random
import sys

import jsonschema
from jsonschema import validators

STEP = 6
SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n",
         "\r": "\\r", "\t": "\\t"}


def validator(schema):
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def hex4(v, rnd):
    return "".join(c.upper() if rnd.random() < 0.5 else c for c in "%04x" % v)


def spell_mixed(ch, rnd):
    cp = ord(ch)
    ways = []
    if cp >= 0x20 and ch not in '"\\':
        ways.append(ch)
    if ch in SHORT:
        ways.append(SHORT[ch])
    if cp < 0x10000:
        ways.append("\\u" + hex4(cp, rnd))
    else:
        v = cp - 0x10000
        ways.append("\\u" + hex4(0xD800 + (v >> 10), rnd) + "\\u" + hex4(0xDC00 + (v & 0x3FF), rnd))
    return rnd.choice(ways)


class Raw:
    """A number as the instance spells it."""
    def __init__(self, text):
        self.text = text


class Pairs(list):
    """An object's members in order, duplicates kept."""


def dumps(v, string):
    """v (parsed with Raw numbers and Pairs objects) with MaskBench's separators."""
    if isinstance(v, str):
        return string(v)
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, Pairs):
        return "{" + ", ".join(string(k) + ": " + dumps(x, string) for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(dumps(x, string) for x in v) + "]"
    return json.dumps(v)


def maskbench(path):
    rnd = random.Random(32)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    for i, row in enumerate(rows):
        if i % STEP or not row.get("tests"):
            continue
        try:
            val = validator(row["schema"])
            lines = []
            for t in row["tests"]:
                text = t["text"]
                judge = not any(True for _ in val.iter_errors(json.loads(text)))
                v = json.loads(text, parse_float=Raw, parse_int=Raw, object_pairs_hook=Pairs)
                ascii_text = dumps(v, lambda s: json.dumps(s, ensure_ascii=True))
                mixed = dumps(v, lambda s: '"' + "".join(spell_mixed(c, rnd) for c in s) + '"')
                lines.append("%d %d %s %s %s" % (judge, t["valid"], text.encode().hex(),
                                                 ascii_text.encode().hex(), mixed.encode().hex()))
        except Exception:  # a schema python-jsonschema cannot use (bad $ref, regex...)
            continue
        print("S " + json.dumps(row["schema"], ensure_ascii=False, separators=(",", ":")))
        print("\n".join(lines))


def judge(path):
    vals = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("S "):
            vals.append(validator(json.loads(line[2:])))
            continue
        case, hx = line.split(" ", 1)
        try:
            value = json.loads(bytes.fromhex(hx).decode("utf-8"))
        except ValueError:
            print("x")
            continue
        print("0" if any(True for _ in vals[int(case)].iter_errors(value)) else "1")


if __name__ == "__main__":
    if sys.argv[1].endswith(".jsonl.gz"):
        maskbench(sys.argv[1])
    else:
        judge(sys.argv[1])
