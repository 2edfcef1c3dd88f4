#!/usr/bin/env python3
"""Memory of N worker processes loading one compiled file (issue 35, item 5), run by
`make bench`.

Engines load one compiled grammar in every worker (tensor-parallel ranks, replicas on one
host). This compiles a large grammar eagerly (default: the bundled Go grammar for llama3,
`gramask compile --eager`), starts N processes that each import gramask, load the .gmc
(CompiledGrammar.load) and fill one mask, and sums their proportional set size
(/proc/PID/smaps_rollup Pss: a page shared by k processes counts 1/k in each), against
N processes that only import gramask and numpy. The difference, per process, is what one loaded
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
import numpy as np
import gramask as gm
path = sys.argv[1]
if path != "-":
    if sys.argv[2] == "map":
        c = gm.CompiledGrammar.load(path)  # maps the file: its tables are shared
    else:
        with open(path, "rb") as f:
            c = gm.CompiledGrammar.from_bytes(f.read())  # copies every table
        del f
    m = gm.GrammarMatcher(c)
    bm = np.zeros((1, c.mask_words), dtype=np.int32)  # not torch: its import would dwarf it
    m.fill_next_token_bitmask(bm)
    print(c.memory_size_bytes, flush=True)
else:
    print(0, flush=True)
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
    are ready, and returns (sum of Pss kB, sum of Rss kB, the grammar's memory_bytes)."""
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, path, mode], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=env, text=True) for _ in range(n)]
    try:
        mem = [int(p.stdout.readline()) for p in procs]
        pss = rss = 0
        for p in procs:
            r = rollup(p.pid)
            pss += r.get("Pss", 0)
            rss += r.get("Rss", 0)
        return pss, rss, mem[0]
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
        base_pss, base_rss, _ = measure("-", a.workers, env)
        pss, rss, mem = measure(gmc, a.workers, env, "map")
        cpss, crss, cmem = measure(gmc, a.workers, env, "copy")
    n = a.workers
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
        "| | Pss sum (MB) | Rss sum (MB) | per process, Pss (MB) |",
        "|---|---:|---:|---:|",
        f"| import only | {base_pss / 1024:.1f} | {base_rss / 1024:.1f} | {base_pss / 1024 / n:.1f} |",
        f"| import + load, copied | {cpss / 1024:.1f} | {crss / 1024:.1f} | {cpss / 1024 / n:.1f} |",
        f"| import + load, mapped | {pss / 1024:.1f} | {rss / 1024:.1f} | {pss / 1024 / n:.1f} |",
        f"| the grammar's share, copied | {(cpss - base_pss) / 1024:.1f} | "
        f"{(crss - base_rss) / 1024:.1f} | {(cpss - base_pss) / 1024 / n:.1f} |",
        f"| the grammar's share, mapped | {(pss - base_pss) / 1024:.1f} | "
        f"{(rss - base_rss) / 1024:.1f} | {(pss - base_pss) / 1024 / n:.1f} |",
        "",
        f"The loaded grammar reports {cmem / 1e6:.1f} MB copied, {mem / 1e6:.1f} MB mapped "
        "(gm_compiled_get_stats.memory_bytes: what the process allocated; the mapped "
        "arrays are not counted). What stays per process when mapped: the vocabulary trie "
        "and the first-byte filters (rebuilt at load), the lexer's 16-bit transitions, the "
        "token-set pool's index, and the mask's own work.",
    ]
    text = "\n".join(rows) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
