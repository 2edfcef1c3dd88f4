#!/usr/bin/env python3
"""Agent turns with tool calls, built from real tool definitions.

The BFCL_* schemas of MaskBench's development half describe function calls as
{"type": "object", "properties": {NAME: PARAMETERS}} (one tool) or an anyOf of
those (a set of tools); their valid instances are real arguments. This script
turns them into OpenAI-style tool lists and into assistant turns in each
format gramask has a preset for — free text, reasoning, several calls per
turn — for `gramask trace --tools`:

    tool_traces.py MASKBENCH OUTDIR [--sets N] [--seed S]

writes OUTDIR/FORMAT/setK.tools.json (the tools) and OUTDIR/FORMAT/setK.*.txt
(turns); a turn whose name holds ".bad" has invalid arguments (a mutation that
breaks the parameter schema) and must be rejected somewhere. FORMAT is llama,
llama-json, qwen or harmony (Harmony turns hold its special tokens as text:
encode them with special tokens parsed). Deterministic for a given seed.
"""
import argparse
import copy
import gzip
import json
import os
import random
import sys


def tools_of(schema):
    """[(name, parameters)] of a BFCL schema."""
    alts = schema.get("anyOf", [schema])
    out = []
    for alt in alts:
        props = alt.get("properties", {})
        if alt.get("type") != "object" or len(props) != 1:
            return None
        (name, params), = props.items()
        out.append((name, params))
    return out


def load_sets(path):
    """Tool sets with their valid calls [(name, args)] from MaskBench's BFCL schemas."""
    sets = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if not d["split"].startswith("BFCL"):
                continue
            tools = tools_of(d["schema"])
            if not tools:
                continue
            calls = []
            for t in d["tests"]:
                if t["valid"]:
                    (name, args), = json.loads(t["text"]).items()
                    calls.append((name, args))
            if calls:
                sets.append((d["name"], tools, calls))
    return sets


def dumps(v):
    # MaskBench renders instances with Python's default separators.
    return json.dumps(v, ensure_ascii=False)


def break_args(args, params, rng):
    """A mutation of args that the parameter schema rejects, or None."""
    required = params.get("required", [])
    props = params.get("properties", {})
    bad = copy.deepcopy(args)
    if required and rng.random() < 0.5:
        del bad[rng.choice(required)]
        return bad
    for k, sub in props.items():
        t = sub.get("type") if isinstance(sub, dict) else None
        if k in bad and t in ("integer", "number", "boolean", "array", "object"):
            bad[k] = "not a " + t
            return bad
        if k in bad and t == "string":
            bad[k] = 12345
            return bad
    if params.get("additionalProperties") is False:
        bad["zz_not_a_parameter"] = 1
        return bad
    return None


PROSE = [
    "Let me look that up for you.",
    "I'll call the tool with the values you gave.",
    "Sure — checking now.",
    "Here is what I will do: call the function, then summarize.",
]


def turn(fmt, calls, rng, think=True):
    """One assistant turn calling each (name, args_text) of calls."""
    text = rng.choice(PROSE)
    if fmt == "llama":
        out = text + "\n"
        out += "".join(f"<function={n}>{a}</function>" for n, a in calls)
        return out
    if fmt == "llama-json":
        n, a = calls[0]
        return f'{{"name": "{n}", "parameters": {a}}}'
    if fmt == "qwen":
        out = f"<think>\n{text}\n</think>\n\n" if think else ""
        out += "I will use the tools.\n"
        out += "\n".join(f'<tool_call>\n{{"name": "{n}", "arguments": {a}}}\n</tool_call>'
                         for n, a in calls)
        return out
    if fmt == "harmony":
        n, a = calls[0]
        return (f"<|channel|>analysis<|message|>{text} Need to use function {n}.<|end|>"
                f"<|start|>assistant<|channel|>commentary to=functions.{n} "
                f"<|constrain|>json<|message|>{a}<|call|>")
    raise ValueError(fmt)


FORMATS = ["llama", "llama-json", "qwen", "harmony"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("maskbench")
    ap.add_argument("outdir")
    ap.add_argument("--sets", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    sets = load_sets(a.maskbench)
    # Several tools per set: the anyOf sets, and single tools grouped by four.
    multi = [s for s in sets if len(s[1]) > 1]
    single = [s for s in sets if len(s[1]) == 1]
    groups = [(n, t, c) for n, t, c in multi]
    for i in range(0, len(single) - 3, 4):
        chunk = single[i:i + 4]
        groups.append(("+".join(s[0] for s in chunk), [t for s in chunk for t in s[1]],
                       [c for s in chunk for c in s[2]]))
    rng.shuffle(groups)
    groups = groups[:a.sets]
    for fmt in FORMATS:
        os.makedirs(os.path.join(a.outdir, fmt), exist_ok=True)
    for k, (name, tools, calls) in enumerate(groups):
        names = [n for n, _ in tools]
        if len(set(names)) != len(names):
            continue
        tool_list = [{"type": "function",
                      "function": {"name": n, "description": f"BFCL {name}", "parameters": p}}
                     for n, p in tools]
        params = dict(tools)
        for fmt in FORMATS:
            d = os.path.join(a.outdir, fmt)
            with open(os.path.join(d, f"set{k}.tools.json"), "w", encoding="utf-8") as f:
                json.dump(tool_list, f, ensure_ascii=False, indent=1)
            picked = [rng.choice(calls) for _ in range(rng.randint(1, 3))]
            good = [(n, dumps(args)) for n, args in picked]
            with open(os.path.join(d, f"set{k}.good.txt"), "w", encoding="utf-8") as f:
                f.write(turn(fmt, good, rng))
            n0, args0 = picked[0]
            broken = break_args(args0, params[n0], rng)
            if broken is not None:
                bad = [(n0, dumps(broken))] + good[1:]
                with open(os.path.join(d, f"set{k}.bad.txt"), "w", encoding="utf-8") as f:
                    f.write(turn(fmt, bad, rng))
    return 0


if __name__ == "__main__":
    sys.exit(main())
