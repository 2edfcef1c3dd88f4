#!/usr/bin/env python3
"""Memory of N worker processes loading one compiled file (issue 35, item 5), run by
`make bench`.

Engines load one compiled grammar in every worker (tensor-parallel ranks, replicas on one
host). This compiles a large grammar eagerly (default: the bundled Go grammar for llama3,
`gramask compile --eager`), starts N processes that each import gramask, load the .gmc
(CompiledGrammar.load) and fill one mask, and sums their proportional set size
(/proc/PID/smaps_rollup Pss: a page shared by k processes counts 1/k in each), their
private and shared pages and the time CompiledGrammar.load takes, against N processes that
only import gramask and numpy. The difference, per process, is what one loaded
grammar costs each worker; with tables shared between processes (a read-only mapping of
the file) it would fall towards the file's size divided by N.

    python3 bench/bench_shared_load.py [--gramask ./gramask] [--pythonpath python/lib]
        [--grammar go] [--tokenizer llama3] [--workers 8] [--out FILE.md]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys
import time
import numpy as np
import gramask as gm
path = sys.argv[1]
if path != "-":
    t = time.perf_counter()
    if sys.argv[2] == "map":
        c = gm.CompiledGrammar.load(path)  # maps the file: its tables are shared
    else:
        with open(path, "rb") as f:
            c = gm.CompiledGrammar.from_bytes(f.read())  # copies every table
        del f
    load_s = time.perf_counter() - t
    m = gm.GrammarMatcher(c)
    bm = np.zeros((1, c.mask_words), dtype=np.int32)  # not torch: its import would dwarf it
    m.fill_next_token_bitmask(bm)
    print(c.memory_size_bytes, load_s, flush=True)
else:
    print(0, 0.0, flush=True)
sys.stdin.read()
"""


def rollup(pid):
    """smaps_rollup fields in kB."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and parts[-1] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    return out


def measure(path, n, env, mode="map"):
    """Starts n children loading path ("-": none) mapped or copied (mode), waits until all
    are ready, and returns the sums over them of Pss, Rss, private and shared kB (dict), the
    grammar's memory_bytes and the median load time in seconds."""
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, path, mode], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env, text=True) for _ in range(n)]
    try:
        lines = [p.stdout.readline().split() for p in procs]
        mem = [int(x[0]) for x in lines]
        load = sorted(float(x[1]) for x in lines)
        sums = {"Pss": 0, "Rss": 0, "Private": 0, "Shared": 0}
        for p in procs:
            r = rollup(p.pid)
            sums["Pss"] += r.get("Pss", 0)
            sums["Rss"] += r.get("Rss", 0)
            sums["Private"] += r.get("Private_Clean", 0) + r.get("Private_Dirty", 0)
            sums["Shared"] += r.get("Shared_Clean", 0) + r.get("Shared_Dirty", 0)
        return sums, mem[0], load[len(load) // 2]
    finally:
        for p in procs:
            p.stdin.close()
        for p in procs:
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gramask", default="./gramask")
    ap.add_argument("--pythonpath", default="python/lib")
    ap.add_argument("--grammar", default="go")
    ap.add_argument("--tokenizer", default="llama3")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--out")
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.abspath(a.pythonpath), PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory(prefix="gm-shared-") as d:
        gmc = os.path.join(d, "g.gmc")
        t = time.time()
        subprocess.run([a.gramask, "compile", a.grammar, "--tokenizer", a.tokenizer, "--eager",
                        "--quiet", "-o", gmc], check=True, capture_output=True)
        compile_s = time.time() - t
        size = os.path.getsize(gmc)
        base, _, _ = measure("-", a.workers, env)
        mapped, mem, load_map = measure(gmc, a.workers, env, "map")
        copied, cmem, load_copy = measure(gmc, a.workers, env, "copy")
    n = a.workers

    def row(name, s, minus=None):
        def f(k):
            return (s[k] - (minus[k] if minus else 0)) / 1024
        return (f"| {name} | {f('Pss'):.1f} | {f('Rss'):.1f} | {f('Pss') / n:.1f} | "
                f"{f('Private') / n:.1f} | {f('Shared') / n:.1f} |")
    rows = [
        f"# {n} processes loading one compiled file",
        "",
        f"`python3 bench/bench_shared_load.py` (`make bench`): the bundled `{a.grammar}` grammar "
        f"compiled eagerly for `{a.tokenizer}` ({compile_s:.1f} s), a {size / 1e6:.1f} MB .gmc; "
        f"{n} processes each import gramask and numpy, load it and fill one mask; the same "
        "number only import them. Loaded with CompiledGrammar.load, which maps the file "
        "(note [mapped compiled files]: the vocabulary, parse tables and token tables "
        "point into the shared pages), or with CompiledGrammar.from_bytes of the file's "
        "bytes, which copies them. Sums of /proc/PID/smaps_rollup over the processes.",
        "",
        "| | Pss sum (MB) | Rss sum (MB) | per process, Pss (MB) | per process, private (MB) "
        "| per process, shared (MB) |",
        "|---|---:|---:|---:|---:|---:|",
        row("import only", base),
        row("import + load, copied", copied),
        row("import + load, mapped", mapped),
        row("the grammar's share, copied", copied, base),
        row("the grammar's share, mapped", mapped, base),
        "",
        "Private: Private_Clean + Private_Dirty (pages only this process maps); shared: "
        "Shared_Clean + Shared_Dirty (pages other processes map too). Load time (median over "
        f"the processes, CompiledGrammar.load or from_bytes alone): {load_map * 1e3:.1f} ms "
        f"mapped, {load_copy * 1e3:.1f} ms copied.",
        "",
        f"The loaded grammar reports {cmem / 1e6:.1f} MB copied, {mem / 1e6:.1f} MB mapped "
        "(gm_compiled_get_stats.memory_bytes: what the process allocated; the mapped "
        "arrays are not counted). The vocabulary trie, the LR unit chains, the lexers' "
        "16-bit rows and the first-byte filters are the file's since format 9 (checked at "
        "load, used in place); what stays per process when mapped: a record per token class "
        "of the profiles and per distinct token set in the pool's index (the sets themselves "
        "are mapped), and the mask's own work.",
    ]
    text = "\n".join(rows) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
