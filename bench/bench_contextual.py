#!/usr/bin/env python3
"""The contextual lexer against the basic one (issue 19), run by `make bench`.

For the bundled Go, Java and Python grammars (the corpus files' llama3 ids) and Lark's own
python.lark (Debian python3-lark; 16 files of this machine's Python standard library,
encoded by `gramask trace --text`), each lexer in turn, one `gramask trace` process each:

- grammar: the grammar build (text -> lexer, LALR tables; the contextual lexer's sets);
- compile: the lazy compile against the vocabulary (the vocabulary's load is not counted);
- masks: every mask of the trace, first-use builds (profiles, lexers, spanners) included;
- memory: what the grammar, the compiled tables and the vocabulary hold after the trace
  (gm_compiled_get_stats.memory_bytes), and the process's peak RSS;
- eager (Go, Java, Python, unless --no-eager): the compile that builds every table first
  (`trace --eager` on one file), its CPU time and memory.

Times are wall clock of one run with the process's user CPU time beside them (the machine
is shared). The ratio columns are contextual / basic.

    python3 bench/bench_contextual.py [--gramask ./gramask] [--shared DIR] [--out FILE.md]
                                      [--no-eager] [--lark-python PYTHON_WITH_LARK]
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time


def run_trace(gramask, args):
    """One `gramask trace --json` process: its output, wall seconds and resource usage."""
    t0 = time.monotonic()
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([gramask, "trace", *args, "--json", "--quiet"],
                             stdout=subprocess.PIPE, stderr=err)
        out = p.stdout.read()
        p.stdout.close()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        err.seek(0)
        try:
            return json.loads(out), wall, ru
        except ValueError:
            sys.exit("bench_contextual: gramask trace %s failed (status %d):\n%s"
                     % (" ".join(args), status, err.read().decode(errors="replace")))


def python_lark(py):
    """Lark's python.lark and 16 standard-library files of python `py`, or None without lark."""
    try:
        out = subprocess.run([py, "-c", "import lark, os, sysconfig; "
                              "print(os.path.join(os.path.dirname(lark.__file__), 'grammars', "
                              "'python.lark')); print(sysconfig.get_paths()['stdlib'])"],
                             capture_output=True, text=True, check=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return None
    grammar, lib = out[0], out[1]
    files = sorted(f for f in glob.glob(os.path.join(lib, "*.py")) +
                   glob.glob(os.path.join(lib, "*", "*.py")) if os.path.getsize(f) < 20000)
    return grammar, [f for i, f in enumerate(files, 1) if i % 20 == 7][:16]


def cases(shared, srcdir, lark_python):
    tok = os.path.join(shared, "tokenizers", "llama3")
    for lang, grammar in (("go", "go"), ("java", "java"),
                          ("python", os.path.join(srcdir, "grammars", "python.lark"))):
        ids = os.path.join(shared, "corpus", lang, "ids.llama3.json")
        yield lang, [grammar, "--tokenizer", tok, "--ids", ids], True
    found = python_lark(lark_python) if lark_python else None
    if not found:
        print("bench_contextual: no python3 with lark (--lark-python; Debian python3-lark), "
              "python.lark skipped", file=sys.stderr)
        return
    grammar, files = found
    yield "python.lark", [grammar, "--lark", "--start=file_input", "--tokenizer", tok,
                          "--text", *files], False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gramask", default="./gramask")
    ap.add_argument("--shared", default=os.environ.get("GM_SHARED_DIR", "../shared"))
    ap.add_argument("--srcdir", default=os.environ.get("GM_SRCDIR", "."))
    ap.add_argument("--out")
    ap.add_argument("--no-eager", action="store_true")
    ap.add_argument("--lark-python", default=os.environ.get("LARK_PYTHON") or "/usr/bin/python3")
    a = ap.parse_args()

    rows = []
    for name, args, eager in cases(a.shared, a.srcdir, a.lark_python):
        r = {"grammar": name}
        for lexer in ("basic", "contextual"):
            doc, wall, ru = run_trace(a.gramask, args + ["--lexer=" + lexer])
            s = doc["summary"]
            r[lexer] = {
                "grammar_ms": s["grammar_ms"], "compile_ms": doc["compile_ms"],
                "masks": s["steps"], "failures": s["failures"], "mask_us": s["mask_us"],
                "memory_mb": s["memory_bytes"] / 1e6, "tables_mb": s["table_bytes"] / 1e6,
                "rss_mb": ru.ru_maxrss / 1024, "wall_s": wall, "user_s": ru.ru_utime,
            }
            if eager and not a.no_eager:
                with open(args[args.index("--ids") + 1]) as f:
                    only = json.load(f)[0]["file"]
                eargs = args + ["--lexer=" + lexer, "--eager", "--only", only]
                doc, wall, ru = run_trace(a.gramask, eargs)
                r[lexer]["eager"] = {"compile_ms": doc["compile_ms"], "user_s": ru.ru_utime,
                                     "memory_mb": doc["summary"]["memory_bytes"] / 1e6,
                                     "rss_mb": ru.ru_maxrss / 1024}
            print(name, lexer, json.dumps(r[lexer]), flush=True)
        rows.append(r)

    load = os.getloadavg()[0]
    lines = ["# The contextual lexer against the basic one (issue 19)", "",
             "`python3 bench/bench_contextual.py` (`make bench`), llama3, load %.1f at the start "
             "of the table. Lazy compile (the default): grammar build + compile, then every mask "
             "of the trace with first-use builds inside; memory after the trace "
             "(gm_compiled_get_stats, vocabulary included) and peak RSS. Ratio: contextual / "
             "basic." % load, "",
             "| grammar | lexer | grammar + compile ms | masks | mean / p50 / p99 us | memory MB | RSS MB | user s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for lexer in ("basic", "contextual"):
            x = r[lexer]
            m = x["mask_us"]
            lines.append("| %s | %s | %.1f + %.1f | %d%s | %.1f / %.1f / %.0f | %.1f | %.0f | %.2f |" % (
                r["grammar"], lexer, x["grammar_ms"], x["compile_ms"], x["masks"],
                " (%d files failing)" % x["failures"] if x["failures"] else "",
                m["mean"], m["p50"], m["p99"], x["memory_mb"], x["rss_mb"], x["user_s"]))
        b, c = r["basic"], r["contextual"]
        lines.append("| %s | **ratio** | %.2fx | | %.1fx / %.1fx / %.1fx | **%.2fx** | %.2fx | %.1fx |" % (
            r["grammar"], (c["grammar_ms"] + c["compile_ms"]) / (b["grammar_ms"] + b["compile_ms"]),
            c["mask_us"]["mean"] / b["mask_us"]["mean"], c["mask_us"]["p50"] / b["mask_us"]["p50"],
            c["mask_us"]["p99"] / b["mask_us"]["p99"], c["memory_mb"] / b["memory_mb"],
            c["rss_mb"] / b["rss_mb"], c["user_s"] / b["user_s"]))
    eager_rows = [r for r in rows if "eager" in r["basic"]]
    if eager_rows:
        lines += ["", "Eager compile (`trace --eager`, every profile of every lexer built before "
                  "the first mask), one file traced:", "",
                  "| grammar | basic ms (user s) | contextual ms (user s) | ratio | basic / contextual memory MB |",
                  "|---|---|---|---|---|"]
        for r in eager_rows:
            b, c = r["basic"]["eager"], r["contextual"]["eager"]
            lines.append("| %s | %.0f (%.1f) | %.0f (%.1f) | %.1fx | %.1f / %.1f |" % (
                r["grammar"], b["compile_ms"], b["user_s"], c["compile_ms"], c["user_s"],
                c["compile_ms"] / b["compile_ms"], b["memory_mb"], c["memory_mb"]))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
