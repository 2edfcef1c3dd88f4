#!/usr/bin/env python3
"""Benchmarks of the Python binding (issue 18), run by `make bench`:

1. overhead: a decoding loop (fill the mask, accept the true next token) over real
   tokenizations (../shared/corpus, llama3), through the Python API and in C (the same
   loop in the extension, gramask._core._bench_steps): the difference per step is what
   the binding costs. Target <= 3 us.
2. apply: apply_token_bitmask_inplace on one 128,256-token float32 row (llama3), with
   real masks (a JSON structural state: few tokens allowed; inside a string: almost
   all). Target <= 30 us.
3. batch: BatchGrammarMatcher filling 64 rows (64 matchers walking JSON files) per step,
   on 1 thread and on 2; target >= 1.8x.
4. why a CPython extension: the same loop through cffi's ABI mode (python3-cffi, when
   installed), calling libgramask.so directly, as a cffi binding would.
5. the XGrammar-shaped API (issue 34): fill_next_token_bitmask, accept_token and rollback
   per call through gramask.GrammarMatcher (XGrammar's arguments: a subclass of the C type)
   on allocate_token_bitmask's torch tensor, against the C type itself on a numpy array;
   target: within 10 %.

Timings take the best of several repeats (the machine is shared: the load average is
printed with the figures).

    PYTHONPATH=python/lib python3 bench/bench_python.py [--shared DIR] [--out FILE.md] [--quick]
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import gramask as gm
from gramask import _core


def corpus(shared, grammar, n):
    with open(os.path.join(shared, "corpus", grammar, "ids.llama3.json")) as f:
        return [e["ids"] for e in json.load(f)[:n]]


def bench_overhead(compiled, seqs, repeats):
    m = gm.GrammarMatcher(compiled)
    bm = gm.allocate_token_bitmask(1, compiled.vocab_size)
    fill, accept = m.fill_next_token_bitmask, m.accept_token

    def python_loop(ids):
        t0 = time.perf_counter_ns()
        m.reset()
        for t in ids:
            fill(bm)
            accept(t)
        return time.perf_counter_ns() - t0

    steps = sum(len(s) for s in seqs)
    for ids in seqs:  # warm: every table the loop needs is built
        python_loop(ids)
        _core._bench_steps(m, bm, ids)
    c_best, py_best = [], []
    for ids in seqs:
        c = min(_core._bench_steps(m, bm, ids) for _ in range(repeats))
        py = min(python_loop(ids) for _ in range(repeats))
        c_best.append(c)
        py_best.append(py)
    c_us = sum(c_best) / steps / 1e3
    py_us = sum(py_best) / steps / 1e3
    return steps, c_us, py_us


CFFI_DECLS = """
typedef struct gm_vocab gm_vocab; typedef struct gm_grammar gm_grammar;
typedef struct gm_compiled gm_compiled; typedef struct gm_matcher gm_matcher;
typedef struct { int code; char message[1024]; char file[256]; uint32_t line; uint32_t column; } gm_error;
int gm_vocab_create_from_file(const char *, const void *, gm_vocab **, gm_error *);
int gm_grammar_create_bundled(const char *, const void *, gm_grammar **, gm_error *);
int gm_compiled_create(gm_grammar *, gm_vocab *, const void *, gm_compiled **, gm_error *);
size_t gm_compiled_mask_words(const gm_compiled *);
int gm_matcher_create(gm_compiled *, const void *, gm_matcher **, gm_error *);
void gm_matcher_reset(gm_matcher *);
int gm_matcher_fill_mask(gm_matcher *, uint32_t *, size_t, gm_error *);
int gm_matcher_accept_token(gm_matcher *, uint32_t, gm_error *);
"""


def bench_cffi(shared, compiled, seqs, repeats):
    """Per-step time of the loop through cffi's ABI mode, or None without cffi."""
    try:
        import cffi
    except ImportError:
        return None
    ffi = cffi.FFI()
    ffi.cdef(CFFI_DECLS)
    with open("/proc/self/maps") as f:  # the very library the extension loaded
        path = next(line.split()[-1] for line in f if "libgramask.so" in line)
    lib = ffi.dlopen(path)
    err = ffi.new("gm_error *")
    v, g, c, m = (ffi.new(t) for t in ("gm_vocab **", "gm_grammar **", "gm_compiled **",
                                        "gm_matcher **"))
    tok = os.path.join(shared, "tokenizers", "llama3").encode()
    assert lib.gm_vocab_create_from_file(tok, ffi.NULL, v, err) == 0
    assert lib.gm_grammar_create_bundled(b"json", ffi.NULL, g, err) == 0
    assert lib.gm_compiled_create(g[0], v[0], ffi.NULL, c, err) == 0
    assert lib.gm_matcher_create(c[0], ffi.NULL, m, err) == 0
    words = lib.gm_compiled_mask_words(c[0])
    bm = gm.allocate_token_bitmask(1, compiled.vocab_size)
    fill, accept, reset, from_buffer = (lib.gm_matcher_fill_mask, lib.gm_matcher_accept_token,
                                        lib.gm_matcher_reset, ffi.from_buffer)
    mp = m[0]

    def loop(ids):
        t0 = time.perf_counter_ns()
        reset(mp)
        for t in ids:
            fill(mp, from_buffer("uint32_t[]", bm), words, err)  # a binding takes any array
            accept(mp, t, err)
        return time.perf_counter_ns() - t0

    for ids in seqs:
        loop(ids)
    return sum(min(loop(ids) for _ in range(repeats)) for ids in seqs) / sum(map(len, seqs)) / 1e3


def bench_apply(compiled, shared, repeats):
    info = compiled.tokenizer_info
    bm = gm.allocate_token_bitmask(1, info.vocab_size)
    m = gm.GrammarMatcher(compiled)
    out = []
    m.accept_string('{"key": [1, {')
    m.fill_next_token_bitmask(bm)
    structural = np.asarray(bm)[0].copy()  # a torch tensor when torch is importable
    m.accept_string('"some text')
    m.fill_next_token_bitmask(bm)
    in_string = np.asarray(bm)[0].copy()
    rng = np.random.default_rng(0)
    logits0 = rng.standard_normal(info.vocab_size).astype(np.float32)
    logits = logits0.copy()
    for name, mask in [("JSON structural state", structural), ("inside a JSON string", in_string)]:
        allowed = int(np.unpackbits(mask.view(np.uint8)).sum())
        times = []
        for _ in range(repeats):
            logits[:] = logits0
            t0 = time.perf_counter_ns()
            gm.apply_token_bitmask_inplace(logits, mask)
            times.append(time.perf_counter_ns() - t0)
        out.append((name, allowed, min(times) / 1e3, statistics.median(times) / 1e3))
    return out


def bench_xgr_api(compiled, seqs, repeats):
    """Per-call microseconds of fill_next_token_bitmask, accept_token and rollback(1) along
    the corpus walks: (XGrammar-shaped, native, XGrammar-shaped on a torch bitmask).
    XGrammar-shaped: gramask.GrammarMatcher built with XGrammar's arguments; native: the C
    type gramask._core.GrammarMatcher; both on a numpy array. The third is what an XGrammar
    port runs: the bitmask allocate_token_bitmask returns (a torch tensor when torch is
    importable)."""
    import gc

    def walk(m, bm, ids):
        fill, accept, rollback, clock = (m.fill_next_token_bitmask, m.accept_token, m.rollback,
                                         time.perf_counter_ns)
        tf = ta = tr = 0
        m.reset()
        for t in ids:
            t0 = clock()
            fill(bm)
            t1 = clock()
            accept(t)
            t2 = clock()
            rollback(1)
            t3 = clock()
            accept(t)
            tf += t1 - t0
            ta += t2 - t1
            tr += t3 - t2
        return tf, ta, tr

    numpy_mask = np.full((1, compiled.mask_words), -1, dtype=np.int32)
    apis = {
        "xgrammar": (gm.GrammarMatcher(compiled, terminate_without_stop_token=False,
                                       max_rollback_tokens=-1), numpy_mask),
        "native": (_core.GrammarMatcher(compiled), numpy_mask.copy()),
        "torch": (gm.GrammarMatcher(compiled), gm.allocate_token_bitmask(1, compiled.vocab_size)),
    }
    steps = sum(len(s) for s in seqs)
    best = {name: [float("inf")] * 3 for name in apis}
    for name, (m, bm) in apis.items():  # warm
        for ids in seqs:
            walk(m, bm, ids)
    gc.disable()
    try:
        for _ in range(repeats):
            for name, (m, bm) in apis.items():  # interleaved: load changes hit both alike
                totals = [0, 0, 0]
                for ids in seqs:
                    for k, v in enumerate(walk(m, bm, ids)):
                        totals[k] += v
                best[name] = [min(b, t / steps / 1e3) for b, t in zip(best[name], totals)]
    finally:
        gc.enable()
    return steps, best["xgrammar"], best["native"], best["torch"], type(apis["torch"][1]).__module__


def bench_batch(compiled, seqs, rows, steps, repeats):
    """Seconds per batch fill, best of repeats, for 1 and 2 threads."""
    walks = [seqs[i % len(seqs)][3 * (i // len(seqs)):] for i in range(rows)]
    steps = min(steps, min(len(w) for w in walks))
    bm = gm.allocate_token_bitmask(rows, compiled.vocab_size)
    result = {}
    pools = {1: gm.BatchGrammarMatcher(1), 2: gm.BatchGrammarMatcher(2)}
    for _ in range(repeats):
        for threads, pool in pools.items():
            ms = [gm.GrammarMatcher(compiled) for _ in range(rows)]
            total = 0
            for s in range(steps):
                t0 = time.perf_counter_ns()
                pool.batch_fill_next_token_bitmask(ms, bm)
                total += time.perf_counter_ns() - t0
                pool.batch_accept_token(ms, [w[s] for w in walks])
            per = total / steps / 1e3
            result[threads] = min(result.get(threads, per), per)
    for pool in pools.values():
        pool.close()
    return steps, result


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=os.environ.get("GM_SHARED_DIR",
                                                       os.path.join(here, "..", "..", "shared")))
    ap.add_argument("--out", help="also write the table to this Markdown file")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    reps = 3 if args.quick else 15
    info = gm.TokenizerInfo.from_file(os.path.join(args.shared, "tokenizers", "llama3"))
    compiler = gm.GrammarCompiler(info, eager=True)
    lines = [f"gramask {gm.__version__} Python binding, llama3 (128,256 ids), eager tables; "
             f"load average before: {os.getloadavg()[0]:.2f} (2 cores, shared machine)", ""]

    lines += ["| fill + accept per step | steps | C loop | through Python | overhead |",
              "|---|---:|---:|---:|---:|"]
    for grammar, n in [("json", 4), ("python", 2)]:
        compiled = compiler.compile_bundled(grammar)
        seqs = [s[:400] for s in corpus(args.shared, grammar, n)]
        steps, c_us, py_us = bench_overhead(compiled, seqs, reps)
        lines.append(f"| {grammar} (corpus files) | {steps} | {c_us:.2f} us | {py_us:.2f} us | "
                     f"{py_us - c_us:.2f} us |")
        if grammar == "json":
            cffi_us = bench_cffi(args.shared, compiled, seqs, reps)
            json_steps, json_c_us = steps, c_us
    if cffi_us is not None:
        lines.append(f"| json, through cffi ABI mode instead (not shipped) | {json_steps} | "
                     f"{json_c_us:.2f} us | {cffi_us:.2f} us | {cffi_us - json_c_us:.2f} us |")

    compiled = compiler.compile_bundled("json")
    steps, xgr_us, native_us, torch_us, bm_kind = bench_xgr_api(
        compiled, [s[:400] for s in corpus(args.shared, "json", 4)], reps)
    kind = "torch" if bm_kind.startswith("torch") else "numpy"
    lines += ["", f"| per call, json corpus ({steps} steps) | native (C type) | XGrammar-shaped "
              f"API | difference | XGrammar-shaped, {kind} bitmask |", "|---|---:|---:|---:|---:|"]
    ops = ["fill_next_token_bitmask", "accept_token", "rollback(1)", "one step (the three)"]
    for k, op in enumerate(ops):
        x, n, t = ((sum(v) if k == 3 else v[k]) for v in (xgr_us, native_us, torch_us))
        lines.append(f"| {op} | {n:.2f} us | {x:.2f} us | {(x / n - 1) * 100:+.1f} % | {t:.2f} us |")

    lines += ["", "| apply_token_bitmask_inplace, one float32 row of 128,256 | allowed | best | median |",
              "|---|---:|---:|---:|"]
    for name, allowed, best, med in bench_apply(compiler.compile_bundled("json"), args.shared,
                                                200 if args.quick else 2000):
        lines.append(f"| {name} | {allowed} | {best:.1f} us | {med:.1f} us |")

    compiled = compiler.compile_bundled("json")
    steps, per = bench_batch(compiled, corpus(args.shared, "json", 16), 64, 60 if args.quick else 200,
                             2 if args.quick else 15)
    lines += ["", "| batch fill, 64 JSON matchers | steps | 1 thread | 2 threads | speed-up |",
              "|---|---:|---:|---:|---:|",
              f"| BatchGrammarMatcher | {steps} | {per[1]:.1f} us | {per[2]:.1f} us | "
              f"{per[1] / per[2]:.2f}x |"]
    lines += ["", f"load average after: {os.getloadavg()[0]:.2f}"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write("# Python binding benchmark (bench/bench_python.py, `make bench`)\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
