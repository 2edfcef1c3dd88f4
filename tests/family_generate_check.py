#!/usr/bin/env python3
"""Random assistant turns under the model-family presets (issue 37's evidence).

For tool sets made from MaskBench's BFCL schemas (tests/tool_traces.py), each
family of dispatch/tool_families.c (and kimi_k3) draws random turns with
tests/dispatch_generate (every token from the public matcher's mask, see
there), under tool_choice auto and required, reasoning allowed and forbidden.
Every finished turn is parsed back here, independently of gramask, as the
family's published shape (README, "Model families"): the reasoning block the
prompt opened up to its end, then free text and the family's calls (in its
section where it has one). Every call must name a tool of the set, and its
arguments (JSON, or the family's XML parameters: a string-typed value raw,
others JSON) must decode as strict UTF-8 JSON without duplicate members and
validate against the tool's schema with python3-jsonschema; tool_choice
required must have a call. Each family must have at least 200 finished
turns so checked. Run by `make check-families` (about a minute per family on
a loaded 2-core machine, so not in `make check`); skips when the shared data
is absent.

GM_COMPARE_UNSHARED=1: every run also compiles the preset without the sharing
of dispatch/stag.c (note [schema memo], note [shared alternatives]) and the
masks of both must be equal at every step (dispatch_generate
--compare-unshared); GM_FAMILY_MIN_TURNS lowers the 200 finished turns a
family must have (tests/family_share_check.sh: a few turns of a few families
in `make check`). Families to run: the arguments (default: all).
"""
import json
import os
import random
import subprocess
import sys
import tempfile

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tool_traces  # noqa: E402
from turn_parse import DECODER, Bad, expect, json_at, utf8  # noqa: E402

NAME, INDEX, ARGS = object(), object(), object()
DS = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")


def fam(tok, call, trigger, style="json", section=None, sep="", think=("</think>", ""),
        think_empty=""):
    return dict(tok=tok, call=call, trigger=trigger, style=style, section=section, sep=sep,
                think=think, think_empty=think_empty)


# What dispatch/tool_families.c writes (the templates' shapes). Tokenizers: the family's
# own where ../shared has it (qwen3, deepseek_v3: there its delimiters are drawn as their
# token ids, note [special token candidates]), else another, where they are text; the
# decoded turn reads the same either way.
FAMILIES = {
    "qwen_3": fam("qwen3", ['<tool_call>\n{"name": "', NAME, '", "arguments": ', ARGS,
                            "}\n</tool_call>"], "<tool_call>", think=("</think>", "\n\n")),
    "qwen_3_coder": fam("qwen3", ["<tool_call>\n<function=", NAME, ">\n", ARGS,
                                  "\n</function>\n</tool_call>"], "<tool_call>\n<function=",
                        style="qwen_xml", think=("</think>", "\n\n")),
    "kimi": fam("llama3", ["<|tool_call_begin|>functions.", NAME, ":", INDEX,
                           "<|tool_call_argument_begin|>", ARGS, "<|tool_call_end|>"],
                "<|tool_calls_section_begin|>",
                section=("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>")),
    "deepseek_r1": fam("deepseek_v3", ["<｜tool▁call▁begin｜>function<｜tool▁sep｜>", NAME,
                                       "\n```json\n", ARGS, "\n```<｜tool▁call▁end｜>"],
                       DS[0], section=DS, sep="\n"),
    "deepseek_v3_1": fam("deepseek_v3", ["<｜tool▁call▁begin｜>", NAME, "<｜tool▁sep｜>", ARGS,
                                         "<｜tool▁call▁end｜>"], DS[0], section=DS),
    "deepseek_v3_2": fam("deepseek_v3", ['<｜DSML｜invoke name="', NAME, '">\n', ARGS,
                                         "</｜DSML｜invoke>\n"], "<｜DSML｜function_calls>",
                         style="deepseek_xml", section=("<｜DSML｜function_calls>\n",
                                                        "</｜DSML｜function_calls>")),
    "glm_4_7": fam("gemma3", ["<tool_call>", NAME, ARGS, "</tool_call>"], "<tool_call>",
                   style="glm_xml"),
    "minimax": fam("llama3", ['<invoke name="', NAME, '">\n', ARGS, "</invoke>\n"],
                   "<minimax:tool_call>", style="minimax_xml",
                   section=("<minimax:tool_call>\n", "</minimax:tool_call>"),
                   think=("</think>", "\n\n"), think_empty="\n</think>\n\n\n\n"),
    "exaone": fam("qwen3", ['<tool_call>{"name": "', NAME, '", "arguments": ', ARGS,
                            "}</tool_call>"], "<tool_call>", think=("</think>", "\n\n")),
}
K3 = "kimi_k3"
TOKENIZER = dict({f: d["tok"] for f, d in FAMILIES.items()}, kimi_k3="llama3")

# XML parameter styles: (key prefix, key suffix, value prefix, suffix)
XML = {"qwen_xml": ("<parameter=", ">", "", "</parameter>"),
       "minimax_xml": ('<parameter name="', '">', "", "</parameter>"),
       "glm_xml": ("<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")}
WS = b" \n\t"
STATS = {"closing tag inside a JSON value": 0}


def json_whole(b):
    s = utf8(b).strip(" \n\t")
    try:
        v, k = DECODER.raw_decode(s)
    except ValueError as e:
        raise Bad("value is not JSON: %s: %r" % (e, b[:80]))
    if k != len(s):
        raise Bad("text after a JSON value: %r" % s[k:k + 40])
    return v


def skip_ws(b, i):
    while i < len(b) and b[i] in WS:
        i += 1
    return i


def is_string(schema):
    """Whether a property's value is written raw (a string, or a string constant)."""
    if not isinstance(schema, dict):
        return False
    if "const" in schema:
        return isinstance(schema["const"], str)
    if "enum" in schema:
        return all(isinstance(e, str) for e in schema["enum"])
    return schema.get("type") == "string"


def xml_args(style, b, i, schema, end):
    """The arguments object of the XML parameters at b[i] (up to end) and the index of end."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    args = {}
    if style == "deepseek_xml":
        kp, ks, vp, sx = '<｜DSML｜parameter name="', None, "", "</｜DSML｜parameter>"
    elif style == "kimi_k3_xml":
        kp, ks, vp, sx = '<|open|>argument key="', None, "", "<|close|>argument<|sep|>"
    else:
        kp, ks, vp, sx = XML[style]
    while True:
        j = skip_ws(b, i)
        if not b.startswith(kp.encode(), j):
            break
        k = j + len(kp.encode())
        if ks is None:  # deepseek and kimi k3: key="K" then the value's type
            q = b.find(b'"', k)
            key = utf8(b[k:q])
            if style == "kimi_k3_xml":
                key = key.replace("&quot;", '"').replace("&amp;", "&")
                k = expect(b, q, '" type="')
                q2 = b.find(b'"', k)
                raw = b[k:q2] == b"string"
                k = expect(b, q2, '"<|sep|>')
            else:
                k = expect(b, q, '" string="')
                raw = b.startswith(b"true", k)
                k = expect(b, k, 'true">' if raw else 'false">')
        else:
            q = b.find(ks.encode(), k)
            if q < 0:
                raise Bad("unterminated key at %d" % k)
            key = utf8(b[k:q])
            k = skip_ws(b, q + len(ks.encode())) if vp else q + len(ks.encode())
            k = expect(b, k, vp)
            raw = is_string(props.get(key))
        if key in args:
            raise Bad("parameter %r twice" % key)
        if raw:
            v_end = b.find(sx.encode(), k)
            if v_end < 0:
                raise Bad("unterminated value of %r" % key)
            args[key] = utf8(b[k:v_end])
        else:
            # JSON read whole, as the grammar does: a string inside may hold the closing
            # tag (which a parser that cuts at its first occurrence would split: counted)
            args[key], v_end = json_at(b, skip_ws(b, k))
            if sx.encode() in b[k:v_end]:
                STATS["closing tag inside a JSON value"] += 1
            v_end = skip_ws(b, v_end)
            if not b.startswith(sx.encode(), v_end):
                raise Bad("expected %r after the value of %r" % (sx, key))
        i = v_end + len(sx.encode())
    # the end, possibly after whitespace
    j = i
    while True:
        if b.startswith(end.encode(), j):
            return args, j
        if j < len(b) and b[j] in WS:
            j += 1
            continue
        raise Bad("expected %r after the parameters at %d, found %r" % (end, i, b[i:i + 40]))


def parse_call(f, b, i, tools):
    """One call at b[i]: (name, args, index past it)."""
    parts = f["call"]
    name = None
    for n, p in enumerate(parts):
        if p is NAME:
            nxt = parts[n + 1]
            cands = [t for t in tools if b.startswith(t.encode(), i)]
            if nxt is not ARGS:
                cands = [t for t in cands if b.startswith(nxt.encode(), i + len(t.encode()))]
            if not cands:
                raise Bad("unknown tool at %d: %r" % (i, b[i:i + 40]))
            name = max(cands, key=len)
            i += len(name.encode())
        elif p is INDEX:
            j = i
            while j < len(b) and b[j:j + 1].isdigit():
                j += 1
            if j == i:
                raise Bad("no call index at %d" % i)
            i = j
        elif p is ARGS:
            if f["style"] == "json":
                args, i = json_at(b, i)
            else:
                args, i = xml_args(f["style"], b, i, tools[name], parts[n + 1])
        else:
            i = expect(b, i, p)
    return name, args, i


def after_think(f, b, opts):
    r = opts[opts.index("--reasoning") + 1] if "--reasoning" in opts else "allowed"
    if r == "forbidden":
        return expect(b, 0, f["think_empty"]) if f["think_empty"] else 0
    end, suffix = f["think"]
    j = b.find(end.encode())
    if j < 0:
        raise Bad("the reasoning block is not closed")
    return expect(b, j + len(end.encode()), suffix)


def family_calls(fmt, b, opts, tools):
    f = FAMILIES[fmt]
    i = after_think(f, b, opts)
    calls = []
    trig = f["trigger"].encode()
    while True:
        j = b.find(trig, i)
        utf8(b[i:] if j < 0 else b[i:j])  # free text
        if j < 0:
            return calls
        if f["section"]:
            i = expect(b, j, f["section"][0])
            while True:
                name, args, i = parse_call(f, b, i, tools)
                calls.append((name, args))
                if b.startswith(f["section"][1].encode(), i):
                    i += len(f["section"][1].encode())
                    break
                i = expect(b, i, f["sep"])
        else:
            name, args, i = parse_call(f, b, j, tools)
            calls.append((name, args))


def k3_calls(b, opts, tools):
    """Kimi K3: [reasoning<|close|>think<|sep|><|open|>response<|sep|>]text<|close|>response
    <|sep|>[<|open|>tools<|sep|>calls<|close|>tools<|sep|>]<|close|>message<|sep|>."""
    r = opts[opts.index("--reasoning") + 1] if "--reasoning" in opts else "allowed"
    i = 0
    if r != "forbidden":
        j = b.find(b"<|close|>think<|sep|>")
        if j < 0:
            raise Bad("the think block is not closed")
        i = expect(b, j + len(b"<|close|>think<|sep|>"), "<|open|>response<|sep|>")
    j = b.find(b"<|close|>response<|sep|>", i)
    if j < 0:
        raise Bad("the response block is not closed")
    utf8(b[i:j])
    i = j + len(b"<|close|>response<|sep|>")
    calls = []
    if b.startswith(b"<|open|>tools<|sep|>", i):
        i += len(b"<|open|>tools<|sep|>")
        f = dict(style="kimi_k3_xml", call=['<|open|>call tool="', NAME, '" index="', INDEX,
                                            '"<|sep|>', ARGS, "<|close|>call<|sep|>"])
        while not b.startswith(b"<|close|>tools<|sep|>", i):
            name, args, i = parse_call(f, b, i, tools)
            calls.append((name, args))
        i += len(b"<|close|>tools<|sep|>")
    i = expect(b, i, "<|close|>message<|sep|>")
    if i != len(b):
        raise Bad("text after the message's end: %r" % b[i:i + 40])
    return calls


def check_turn(fmt, opts, tools, rec):
    if any(k == "s" for k, _ in rec["parts"]):
        raise Bad("a special token in a %s turn" % fmt)
    b = b"".join(s.encode("utf-8", "surrogateescape") for _, s in rec["parts"])
    calls = k3_calls(b, opts, tools) if fmt == K3 else family_calls(fmt, b, opts, tools)
    if "required" in opts and not calls:
        raise Bad("no call though tool_choice is required")
    for name, args in calls:
        schema = tools[name]
        errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(args))
        if errors:
            raise Bad("arguments of %s invalid: %s: %s" % (name, errors[0].message,
                                                           json.dumps(args)[:200]))
    return calls


def goals(fmt, names):
    """Texts the generator sets out to write now and then."""
    if fmt == K3:
        return (["<|close|>think<|sep|><|open|>response<|sep|>", "<|close|>response<|sep|>",
                 "<|open|>tools<|sep|>", "<|close|>call<|sep|>", "<|close|>tools<|sep|>",
                 "<|close|>message<|sep|>", "<|close|>argument<|sep|>"] +
                ['<|open|>call tool="%s" index="1"<|sep|>' % n for n in names])
    f = FAMILIES[fmt]
    out = [f["think"][0] + f["think"][1]]
    parts = f["call"]
    k = parts.index(NAME)
    after = parts[k + 1] if parts[k + 1] is not ARGS else ""
    if after is INDEX:
        after = "0" + parts[k + 3]
    begin = "".join(parts[:k])
    for n in names:
        out.append(((f["section"][0] if f["section"] else "") + begin + n + after))
    out += [p for p in parts[parts.index(ARGS) + 1:]]
    if f["section"]:
        out.append(f["section"][1])
    if f["style"] in XML:
        out += [XML[f["style"]][3], XML[f["style"]][1]]
    if f["style"] == "deepseek_xml":
        out += ["</｜DSML｜parameter>", '" string="true">', '" string="false">']
    return out


def main():
    shared = os.environ.get("GM_SHARED_DIR", "../shared")
    build = os.environ.get("GM_BUILDDIR", ".")
    gen = os.path.join(build, "tests", "dispatch_generate")
    bench = os.path.join(shared, "maskbench", "dev.jsonl.gz")
    if not os.path.exists(bench):
        print("SKIP: no MaskBench data at", bench)
        return 77
    only = sys.argv[1:]
    nturns = int(os.environ.get("GM_GENERATE_TURNS", "100"))
    min_turns = int(os.environ.get("GM_FAMILY_MIN_TURNS", "200"))
    compare = ["--compare-unshared"] if os.environ.get("GM_COMPARE_UNSHARED") == "1" else []
    rng = random.Random(37)
    sets = [s for s in tool_traces.load_sets(bench) if 2 <= len(s[1]) <= 4 and
            len({n for n, _ in s[1]}) == len(s[1])]
    rng.shuffle(sets)
    runs = [[], ["--tool-choice", "required"], ["--reasoning", "forbidden"],
            ["--reasoning", "forbidden", "--tool-choice", "required", "--no-parallel"]]
    failures = 0
    checked = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fi, fmt in enumerate(list(FAMILIES) + [K3]):
            if only and fmt not in only:
                continue
            # sets the family's argument style takes (XML styles refuse some schemas); a
            # family whose forced calls seldom finish within 400 tokens gets more runs
            fam_runs = list(runs)
            r = -1
            while r + 1 < len(fam_runs):
                r += 1
                opts = fam_runs[r]
                for attempt in range(len(sets)):
                    set_name, tool_list, _ = sets[(fi * 7 + r * 3 + attempt) % len(sets)]
                    tools = dict(tool_list)
                    path = os.path.join(tmp, "%s%d.json" % (fmt, r))
                    with open(path, "w", encoding="utf-8") as f:
                        json.dump([{"type": "function", "function": {"name": n,
                                                                     "parameters": p}}
                                   for n, p in tool_list], f)
                    cmd = [gen, "--tools", path, "--format", fmt, "--tokenizer",
                           os.path.join(shared, "tokenizers", TOKENIZER[fmt]), "--seed",
                           str(fi * 10 + r + 1), "-n", str(nturns), "--max-tokens", "400"]
                    cmd += opts + compare
                    for g in goals(fmt, list(tools)):
                        cmd += ["--goal", g]
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    if p.returncode in (0, 1) and p.stdout:
                        break
                    # a schema the family's XML style refuses: the next set
                    if "refuse" not in p.stderr and "not supported" not in p.stderr and \
                            "unsupported" not in p.stderr:
                        break
                what = "%s %s (%s)" % (fmt, " ".join(opts) or "defaults", set_name)
                if p.returncode not in (0, 1) or not p.stdout:
                    print("FAIL: %s: exit %d\n%s" % (what, p.returncode, p.stderr))
                    failures += 1
                    continue
                if p.returncode == 1:
                    print("FAIL: %s: %s" % (what, p.stderr.strip()))
                    failures += 1
                lines = [json.loads(x) for x in p.stdout.split("\n") if x]
                summary = lines[-1]
                finished = calls = 0
                for rec in lines[:-1]:
                    if not rec["finished"]:
                        continue
                    finished += 1
                    try:
                        calls += len(check_turn(fmt, opts, tools, rec))
                    except Bad as e:
                        failures += 1
                        print("FAIL: %s turn %d: %s\n  %s" % (what, rec["turn"], e,
                                                              json.dumps(rec["parts"])[:600]))
                checked[fmt] = checked.get(fmt, 0) + finished
                if r == len(fam_runs) - 1 and r < len(runs) + 2 and checked[fmt] < min_turns:
                    fam_runs.append(["--reasoning", "forbidden"])
                print("%-60s %4d turns, %4d finished, %4d calls, %d dead ends" %
                      (what[:60], summary["turns"], finished, calls, summary["dead_ends"]))
                sys.stdout.flush()
    for fmt, n in checked.items():
        if n < min_turns:
            print("FAIL: %s: only %d finished turns checked (%d wanted)" % (fmt, n, min_turns))
            failures += 1
    for k, v in STATS.items():
        print("note: %s: %d" % (k, v))
    print("family generate: %d families, %d turns checked, %d failures%s" %
          (len(checked), sum(checked.values()), failures,
           ", masks compared with the unshared grammars" if compare else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
