#!/usr/bin/env python3
"""Random agent turns under every tool-call preset (issue 17's evidence).

For tool sets made from MaskBench's BFCL schemas (tests/tool_traces.py),
each preset and a range of its options (tool_choice, parallel calls,
reasoning), tests/dispatch_generate draws random turns from the masks of
the public matcher. No turn may reach a dead end. Every finished turn is
parsed here, independently of gramask, as its format's published shape
(dispatch/tools.h, note [tool formats]); every tool call's arguments must
parse as JSON (json, strict UTF-8, no duplicate member) and validate against
the tool's parameter schema with python3-jsonschema; the options must hold
(no call under "none", at most one without parallel calls, at least one
when required, only the named tool, the reasoning block where forced and
nowhere when forbidden). Every turn's text, finished or not, must be valid
UTF-8 (strict; an unfinished turn may stop inside its last character), the
free text included (issue 32: free text stays valid UTF-8), and every preset
must have had at least 200 turns so checked. Skips when the shared data is
absent.
"""
import codecs
import json
import os
import random
import subprocess
import sys
import tempfile

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tool_traces  # noqa: E402
from turn_parse import Bad, expect, json_at  # noqa: E402

TOKENIZER = {"llama": "llama3", "llama-json": "llama3", "qwen": "qwen3", "harmony": "gptoss"}

# (format, options) runs; each gets its own tool set.
RUNS = [
    ("llama", []), ("llama", ["--tool-choice", "required", "--no-parallel"]),
    ("llama", ["--tool-choice", "NAMED"]), ("llama", ["--tool-choice", "none"]),
    ("llama-json", []), ("llama-json", ["--tool-choice", "required"]),
    ("llama-json", ["--no-parallel"]),
    ("qwen", []), ("qwen", ["--reasoning", "forced"]),
    ("qwen", ["--reasoning", "forbidden", "--tool-choice", "required"]),
    ("qwen", ["--tool-choice", "NAMED", "--no-parallel"]),
    ("harmony", []), ("harmony", ["--reasoning", "forced"]),
    ("harmony", ["--reasoning", "forbidden", "--tool-choice", "required"]),
    ("harmony", ["--tool-choice", "NAMED"]), ("harmony", ["--tool-choice", "none"]),
]


def name_until(b, i, stop):
    j = b.find(stop, i)
    if j < 0:
        raise Bad("unterminated tool name at %d" % i)
    return b[i:j].decode("utf-8"), j


def text_calls(fmt, b, free):
    """[(name, args)] of a finished text-format turn, its free text appended to free;
    raises Bad."""
    calls = []
    i = 0
    if fmt == "qwen" and b.startswith(b"<think>") and b"</think>" in b:
        # a reasoning block (unclosed, "<think>..." is free text where reasoning is allowed)
        i = b.find(b"</think>") + len(b"</think>")
    trigger = {"llama": b"<function=", "llama-json": b'{"name":', "qwen": b"<tool_call>"}[fmt]
    while True:
        j = b.find(trigger, i)
        free.append(b[i:] if j < 0 else b[i:j])
        if j < 0:
            return calls  # free text to the end
        if fmt == "llama":
            name, k = name_until(b, j + len(trigger), b">")
            args, k = json_at(b, k + 1)
            i = expect(b, k, b"</function>")
        elif fmt == "llama-json":
            k = expect(b, j, b'{"name": "')
            name, k = name_until(b, k, b'"')
            k = expect(b, k, b'", "parameters": ')
            args, k = json_at(b, k)
            i = expect(b, k, b"}")
        else:
            k = expect(b, j, b'<tool_call>\n{"name": "')
            name, k = name_until(b, k, b'"')
            k = expect(b, k, b'", "arguments": ')
            args, k = json_at(b, k)
            i = expect(b, k, b"}\n</tool_call>")
        calls.append((name, args))


def harmony_calls(parts, opts):
    """[(name, args)] of a finished Harmony turn (its messages checked); raises Bad."""
    toks = []
    for kind, s in parts:
        toks.append((kind, s if kind == "s" else s.encode("utf-8", "surrogateescape")))
    pos = 0

    def special(name):
        nonlocal pos
        if pos >= len(toks) or toks[pos] != ("s", name):
            raise Bad("expected %s at part %d, found %r" % (name, pos, toks[pos:pos + 1]))
        pos += 1

    def text(optional=True):
        nonlocal pos
        if pos < len(toks) and toks[pos][0] == "t":
            pos += 1
            return toks[pos - 1][1]
        if not optional:
            raise Bad("expected text at part %d" % pos)
        return b""

    channels = []
    while True:
        special("<|channel|>")
        header = text(False)
        channels.append(header)
        if header in (b"analysis", b"commentary"):
            special("<|message|>")
            text()
            special("<|end|>")
            special("<|start|>")
            if text(False) != b"assistant":
                raise Bad("expected assistant after <|start|>")
            continue
        if header == b"final":
            special("<|message|>")
            text()
            if pos < len(toks) and toks[pos] == ("s", "<|return|>"):
                pos += 1
            calls = []
            break
        prefix = b"commentary to=functions."
        if not header.startswith(prefix):
            raise Bad("unknown channel header %r" % header)
        name = header[len(prefix):]
        constrain = pos < len(toks) and toks[pos] == ("s", "<|constrain|>")
        if name.endswith(b" ") and not constrain:
            raise Bad("a space after the tool name without <|constrain|>")
        name = name[:-1] if name.endswith(b" ") else name
        if constrain:
            pos += 1
            if text(False) != b"json":
                raise Bad("expected json after <|constrain|>")
        special("<|message|>")
        body = text(False)
        args, k = json_at(body, 0)
        if k != len(body):
            raise Bad("text after the arguments: %r" % body[k:k + 40])
        special("<|call|>")
        calls = [(name.decode("utf-8"), args)]
        break
    if pos != len(toks):
        raise Bad("parts after the end of the turn: %r" % toks[pos:pos + 3])
    if "--reasoning" in opts:
        r = opts[opts.index("--reasoning") + 1]
        if r == "forced" and channels[0] != b"analysis":
            raise Bad("reasoning forced but the turn starts with %r" % channels[0])
        if r == "forbidden" and b"analysis" in channels:
            raise Bad("an analysis message though reasoning is forbidden")
    return calls


def check_utf8(rec):
    """Every text part strict UTF-8 (parts are split by special tokens); the last part of
    an unfinished turn may end inside a character that more bytes would complete."""
    parts = [s.encode("utf-8", "surrogateescape") for k, s in rec["parts"] if k == "t"]
    for n, b in enumerate(parts):
        last = n == len(parts) - 1
        dec = codecs.getincrementaldecoder("utf-8")("strict")
        try:
            dec.decode(b, final=rec["finished"] or not last)
        except UnicodeDecodeError as e:
            raise Bad("text part %d is not UTF-8 (%s): %r" % (n, e.reason,
                                                              b[max(0, e.start - 20):e.end + 20]))


def check_turn(fmt, opts, named, tools, rec):
    """The calls of a finished turn, checked; raises Bad."""
    parts = rec["parts"]
    if fmt == "harmony":
        calls = harmony_calls(parts, opts)
    else:
        if any(k == "s" for k, _ in parts):
            raise Bad("a special token in a %s turn" % fmt)
        b = b"".join(s.encode("utf-8", "surrogateescape") for _, s in parts)
        r = opts[opts.index("--reasoning") + 1] if "--reasoning" in opts else "allowed"
        if fmt == "qwen" and r == "forced" and not (b.startswith(b"<think>") and
                                                     b"</think>" in b):
            raise Bad("reasoning forced but no <think>...</think> first")
        free = []
        calls = text_calls(fmt, b, free)
        if fmt == "qwen" and r == "forbidden" and any(b"<think>" in f for f in free):
            raise Bad("<think> in the free text though reasoning is forbidden")
    choice = opts[opts.index("--tool-choice") + 1] if "--tool-choice" in opts else "auto"
    if choice == "none" and calls:
        raise Bad("a call though tool_choice is none")
    if choice in ("required", "NAMED") and not calls:
        raise Bad("no call though tool_choice is %s" % choice)
    if "--no-parallel" in opts and len(calls) > 1:
        raise Bad("%d calls without parallel calls" % len(calls))
    for name, args in calls:
        if name not in tools:
            raise Bad("call of an unknown tool %r" % name)
        if choice == "NAMED" and name != named:
            raise Bad("call of %r though tool_choice names %r" % (name, named))
        schema = tools[name]
        errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(args))
        if errors:
            raise Bad("arguments of %s invalid: %s: %s" % (name, errors[0].message,
                                                           json.dumps(args)[:200]))
    return calls


def goals(fmt, names):
    """Texts the generator sets out to write now and then: begins and ends of tags."""
    if fmt == "llama":
        return ["<function=%s>" % n for n in names] + ["</function>"]
    if fmt == "llama-json":
        return ['{"name": "%s", "parameters": ' % n for n in names] + ["}"]
    if fmt == "qwen":
        return (["<think>\n", "</think>\n\n", "}\n</tool_call>"] +
                ['<tool_call>\n{"name": "%s", "arguments": ' % n for n in names])
    return (["<|end|><|start|>assistant", "<|channel|>final<|message|>"] +
            ["<|channel|>commentary to=functions.%s <|constrain|>json<|message|>" % n
             for n in names] +
            ["<|channel|>commentary to=functions.%s<|message|>" % n for n in names])


def main():
    shared = os.environ.get("GM_SHARED_DIR", "../shared")
    build = os.environ.get("GM_BUILDDIR", ".")
    gen = os.path.join(build, "tests", "dispatch_generate")
    bench = os.path.join(shared, "maskbench", "dev.jsonl.gz")
    if not os.path.exists(bench):
        print("SKIP: no MaskBench data at", bench)
        return 77
    sanitized = subprocess.run([gen, "--sanitized"], capture_output=True,
                               text=True).stdout.strip() == "1"
    nturns = int(os.environ.get("GM_GENERATE_TURNS", "40" if sanitized else "160"))
    rng = random.Random(17)
    sets = [s for s in tool_traces.load_sets(bench) if 2 <= len(s[1]) <= 4 and
            len({n for n, _ in s[1]}) == len(s[1])]
    rng.shuffle(sets)
    totals = {"turns": 0, "finished": 0, "calls": 0, "failures": 0}
    utf8_turns = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r, (fmt, opts) in enumerate(RUNS):
            set_name, tool_list, _ = sets[r % len(sets)]
            tools = dict(tool_list)
            names = [n for n, _ in tool_list]
            named = names[r % len(names)]
            opts = [named if o == "NAMED" else o for o in opts]
            path = os.path.join(tmp, "tools%d.json" % r)
            with open(path, "w", encoding="utf-8") as f:
                json.dump([{"type": "function", "function": {"name": n, "parameters": p}}
                           for n, p in tool_list], f)
            cmd = [gen, "--tools", path, "--format", fmt, "--tokenizer",
                   os.path.join(shared, "tokenizers", TOKENIZER[fmt]), "--seed", str(r + 1),
                   "-n", str(nturns), "--max-tokens", "400"] + opts
            for g in goals(fmt, names):
                cmd += ["--goal", g]
            p = subprocess.run(cmd, capture_output=True, text=True)
            what = "%s %s (%s)" % (fmt, " ".join(opts) or "defaults", set_name)
            if p.returncode not in (0, 1) or not p.stdout:
                print("FAIL: %s: exit %d\n%s" % (what, p.returncode, p.stderr))
                totals["failures"] += 1
                continue
            if p.returncode == 1:
                print("FAIL: %s: %s" % (what, p.stderr.strip()))
                totals["failures"] += 1
            # JSON Lines end at "\n" only: str.splitlines() would also cut at a raw U+2028 or
            # U+0085 inside a string of a generated turn
            lines = [json.loads(x) for x in p.stdout.split("\n") if x]
            summary = lines[-1]
            finished = calls = 0
            opts_named = [("NAMED" if o == named else o) for o in opts]
            for rec in lines[:-1]:
                try:
                    check_utf8(rec)
                    utf8_turns[fmt] = utf8_turns.get(fmt, 0) + 1
                except Bad as e:
                    totals["failures"] += 1
                    print("FAIL: %s turn %d: %s" % (what, rec["turn"], e))
                if not rec["finished"]:
                    continue
                finished += 1
                try:
                    calls += len(check_turn(fmt, opts_named, named, tools, rec))
                except Bad as e:
                    totals["failures"] += 1
                    print("FAIL: %s turn %d: %s\n  %s" % (what, rec["turn"], e,
                                                          json.dumps(rec["parts"])[:600]))
            print("%-58s %4d turns, %4d finished, %4d calls, %6d tokens, %d dead ends" %
                  (what[:58], summary["turns"], finished, calls, summary["tokens"],
                   summary["dead_ends"]))
            # A forced call with a large argument schema finishes about half its turns
            # within 400 uniformly sampled tokens (89 of 160 for BFCL_parallel_multiple_27,
            # 19 of 40 in the sanitizer build's shorter run): a third still checks enough.
            if finished < summary["turns"] // 3:
                print("FAIL: %s: only %d of %d turns finished: the check checks little" %
                      (what, finished, summary["turns"]))
                totals["failures"] += 1
            if "none" not in opts and calls < finished // 4:
                print("FAIL: %s: only %d calls in %d turns" % (what, calls, finished))
                totals["failures"] += 1
            totals["turns"] += summary["turns"]
            totals["finished"] += finished
            totals["calls"] += calls
        # the control: with free text opted out to any bytes, the UTF-8 check must
        # find broken text (the sampler favours one-byte tokens), or it checks nothing
        set_name, tool_list, _ = sets[0]
        path = os.path.join(tmp, "control.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump([{"type": "function", "function": {"name": n, "parameters": p}}
                       for n, p in tool_list], f)
        p = subprocess.run([gen, "--tools", path, "--format", "qwen", "--tokenizer",
                            os.path.join(shared, "tokenizers", "qwen3"), "--seed", "99", "-n",
                            "40", "--max-tokens", "400", "--free-text-bytes"],
                           capture_output=True, text=True)
        broken = 0
        for x in p.stdout.split("\n"):
            rec = json.loads(x) if x else {}
            if "parts" in rec:
                try:
                    check_utf8(rec)
                except Bad:
                    broken += 1
        print("control: --free-text-bytes, qwen: %d of 40 turns not UTF-8" % broken)
        if broken == 0:
            print("FAIL: the UTF-8 check found nothing even where free text may be any bytes")
            totals["failures"] += 1
    for fmt in TOKENIZER:
        print("%-10s %5d turns strict UTF-8" % (fmt, utf8_turns.get(fmt, 0)))
        if utf8_turns.get(fmt, 0) < 200 and not sanitized:
            print("FAIL: %s: fewer than 200 turns checked for UTF-8" % fmt)
            totals["failures"] += 1
    print("dispatch generate: %(turns)d turns, %(finished)d finished, %(calls)d calls checked, "
          "%(failures)d failures" % totals)
    return 1 if totals["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
