#!/usr/bin/env python3
"""Agent turns with tool calls under each preset (issue 17's evidence).

Builds turns from MaskBench's BFCL tools (tests/tool_traces.py), encodes
them with gramask's own encoder (special tokens parsed, for Harmony) and
decodes them with `gramask trace --tools`: every true token of a valid turn
must be allowed and EOS allowed at its end; a turn with invalid arguments
must be rejected somewhere. Skips when the shared data is absent.
"""
import json
import os
import subprocess
import sys
import tempfile

TOKENIZER = {"llama": "llama3", "llama-json": "llama3", "qwen": "qwen3", "harmony": "gptoss"}


def main():
    shared = os.environ.get("GM_SHARED_DIR", "../shared")
    src = os.environ.get("GM_SRCDIR", ".")
    gramask = os.path.join(os.environ.get("GM_BUILDDIR", "."), "gramask")
    bench = os.path.join(shared, "maskbench", "dev.jsonl.gz")
    if not os.path.exists(bench):
        print("SKIP: no MaskBench data at", bench)
        return 77
    sets = int(os.environ.get("GM_TOOL_SETS", "12"))
    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(src, "tests", "tool_traces.py"), bench, tmp,
                        "--sets", str(sets)], check=True)
        for fmt, tok in TOKENIZER.items():
            d = os.path.join(tmp, fmt)
            for tools in sorted(f for f in os.listdir(d) if f.endswith(".tools.json")):
                stem = tools[:-len(".tools.json")]
                texts = [os.path.join(d, stem + s) for s in (".good.txt", ".bad.txt")
                         if os.path.exists(os.path.join(d, stem + s))]
                cmd = [gramask, "trace", "--tools", os.path.join(d, tools), "--format", fmt,
                       "--tokenizer", os.path.join(shared, "tokenizers", tok), "--json",
                       "--text"] + texts
                p = subprocess.run(cmd, capture_output=True, text=True)
                try:
                    report = json.loads(p.stdout)
                except ValueError:
                    print(f"FAIL: {fmt} {stem}: no report (exit {p.returncode})\n{p.stderr}")
                    failures += 1
                    continue
                for f in report["files"]:
                    good = f["file"].endswith(".good.txt")
                    ok = f["all_allowed"] and f["eos_at_end"]
                    checked += 1
                    if ok != good:
                        failures += 1
                        print(f"FAIL: {fmt} {os.path.basename(f['file'])}: all_allowed "
                              f"{f['all_allowed']}, eos {f['eos_at_end']}\n{p.stderr}")
    print(f"tool traces: {checked} turns checked, {failures} failures")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
