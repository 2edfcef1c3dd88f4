#!/usr/bin/env python3
"""make check-corpus: coverage of the bundled grammars over real sources.

For every language of LANGUAGES: installs the Debian packages that hold
its sources when they are missing (apt-get, as root), selects the files,
runs `gramask parse GRAMMAR FILE...` over them (batches in parallel), prints the
coverage, the failing files with their first error, and fails (exit 1)
when a language is below its target.

Adding a language is one entry of LANGUAGES: a name, the grammar file in
grammars/, the Debian packages, a function selecting the files (it gets
the Ctx and returns sorted paths plus a sentence saying how it chose
them) and the target percentage.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile


class Ctx:
    """What file selectors may use."""

    def __init__(self, args):
        self.shared = args.shared
        self.srcdir = args.srcdir
        self.workdir = args.workdir   # scratch space (extracted archives); selectors create it
        self.cache = {}


class Language:
    def __init__(self, name, grammar, packages, select, target, parse_args=()):
        self.name = name
        self.parse_args = list(parse_args)  # extra `gramask parse` options (--lexer=contextual)
        self.grammar = grammar        # file name in grammars/
        self.packages = packages      # Debian packages holding the sources
        self.select = select          # Ctx -> (sorted paths, description)
        self.target = target          # minimum percentage of files that parse


# ---------------------------------------------------------------------------
# JSON: the shared corpus plus the JSON files of this machine

JSON_ROOTS = ["/usr/share", "/usr/lib", "/usr/local/share", "/usr/local/lib", "/etc", "/opt"]
JSON_MAX_BYTES = 4 << 20
JSON_MIN_MACHINE_FILES = 1000


def _reject_constant(name):
    raise ValueError("not JSON: " + name)


def is_rfc_json(path):
    """python3's json module accepts it: UTF-8 without BOM, no NaN/Infinity."""
    try:
        with open(path, "rb") as f:
            data = f.read(JSON_MAX_BYTES + 1)
        if len(data) > JSON_MAX_BYTES or data.startswith(b"\xef\xbb\xbf"):
            return False
        json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
        return True
    except (OSError, ValueError, RecursionError):
        return False


def json_files(ctx):
    if "json" in ctx.cache:
        return ctx.cache["json"]
    corpus = os.path.join(ctx.shared, "corpus", "json")
    shared = sorted(os.path.join(corpus, n) for n in os.listdir(corpus) if n.endswith(".json"))
    skip = [os.path.realpath(p) for p in (ctx.shared, ctx.srcdir, ctx.workdir)]
    found, accepted = 0, []
    for root in JSON_ROOTS:
        for dirpath, dirnames, filenames in os.walk(root):
            real = os.path.realpath(dirpath)
            if any(real == s or real.startswith(s + os.sep) for s in skip):
                dirnames[:] = []
                continue
            dirnames.sort()
            for n in sorted(filenames):
                p = os.path.join(dirpath, n)
                if not n.endswith(".json") or os.path.islink(p) or not os.path.isfile(p):
                    continue
                found += 1
                if is_rfc_json(p):
                    accepted.append(p)
    if len(accepted) < JSON_MIN_MACHINE_FILES:
        sys.exit("check-corpus: only %d JSON files that python3 accepts under %s (need %d)"
                 % (len(accepted), ", ".join(JSON_ROOTS), JSON_MIN_MACHINE_FILES))
    desc = ("every *.json of %s (%d) and the *.json files under %s (no symlinks, at most %d "
            "bytes) that python3's json module accepts as UTF-8 without BOM and without "
            "NaN/Infinity: %d of %d found"
            % (corpus, len(shared), " ".join(JSON_ROOTS), JSON_MAX_BYTES, len(accepted), found))
    ctx.cache["json"] = (shared + accepted, desc)
    return ctx.cache["json"]


# ---------------------------------------------------------------------------
# Go: the standard library of golang-1.19-src

GO_ROOTS = ["/usr/share/go-1.19/src", "/usr/lib/go-1.19/src"]
_go_token = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|`[^`]*`|\w+|.', re.S)


def go_uses_cgo(text):
    """Whether the file's import declarations import the pseudo-package "C"."""
    toks = [t for t in _go_token.findall(text) if not t.isspace() and not t.startswith(("//", "/*"))]
    i = 2 if toks[:1] == ["package"] else 0          # package NAME
    while i < len(toks) and toks[i] in ("import", ";"):
        if toks[i] == ";":
            i += 1
            continue
        i += 1
        end = i + 1
        if i < len(toks) and toks[i] == "(":
            end = toks.index(")", i) if ")" in toks[i:] else len(toks)
        elif i + 1 < len(toks) and not toks[i].startswith('"'):
            end = i + 2                                # import name "path"
        if '"C"' in toks[i:end]:
            return True
        i = end + (1 if end < len(toks) and toks[end] == ")" else 0)
    return False


def go_files(ctx):
    root = next((r for r in GO_ROOTS if os.path.isdir(r)), None)
    if not root:
        sys.exit("check-corpus: no Go 1.19 sources in %s" % " or ".join(GO_ROOTS))
    files, cgo = [], 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "testdata")
        for n in sorted(filenames):
            if not n.endswith(".go") or n.endswith("_test.go"):
                continue
            p = os.path.join(dirpath, n)
            with open(p, encoding="utf-8", errors="replace") as f:
                if go_uses_cgo(f.read()):
                    cgo += 1
                    continue
            files.append(p)
    desc = ("the *.go files under %s except *_test.go, files below a testdata directory and "
            "files importing \"C\" (%d); build constraints are not evaluated (every "
            "GOOS/GOARCH file counts)" % (root, cgo))
    return sorted(files), desc


# ---------------------------------------------------------------------------
# Python: the CPython 3.11 standard library as Debian installs it

PY_ROOT = "/usr/lib/python3.11"


def python_files(ctx):
    if not os.path.isdir(PY_ROOT):
        sys.exit("check-corpus: no CPython 3.11 standard library in %s" % PY_ROOT)
    files = []
    for dirpath, dirnames, filenames in os.walk(PY_ROOT):
        rel = os.path.relpath(dirpath, PY_ROOT)
        dirnames[:] = sorted(
            d for d in dirnames
            if d not in ("__pycache__", "site-packages", "dist-packages")
            and not (rel == "." and d == "test")
            and not (rel == os.path.join("lib2to3", "tests") and d == "data"))
        files += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py")]
    desc = ("the *.py files under %s (libpython3.11-stdlib, libpython3.11-minimal) except the "
            "test/ and lib2to3/tests/data trees and site-packages/dist-packages" % PY_ROOT)
    return sorted(files), desc


# ---------------------------------------------------------------------------
# Java: the java.base module of openjdk-17-source (lib/src.zip)

JAVA_ZIP = "/usr/lib/jvm/openjdk-17/lib/src.zip"
JAVA_MODULE = "java.base/"


def java_files(ctx):
    """Extracts java.base's .java files once (the zip's size and time are the stamp)."""
    if not os.path.isfile(JAVA_ZIP):
        sys.exit("check-corpus: %s is missing (Debian package openjdk-17-source)" % JAVA_ZIP)
    dest = os.path.join(ctx.workdir, "java")
    st = os.stat(JAVA_ZIP)
    stamp_path, stamp = os.path.join(dest, ".stamp"), "%d %d\n" % (st.st_size, int(st.st_mtime))
    try:
        with open(stamp_path) as f:
            fresh = f.read() == stamp
    except OSError:
        fresh = False
    files = []
    with zipfile.ZipFile(JAVA_ZIP) as z:
        for info in z.infolist():
            n = info.filename
            if not n.startswith(JAVA_MODULE) or not n.endswith(".java") or info.is_dir():
                continue
            if os.path.isabs(n) or ".." in n.split("/"):
                continue
            if not fresh:
                z.extract(info, dest)
            files.append(os.path.join(dest, n))
    if not fresh:
        with open(stamp_path, "w") as f:
            f.write(stamp)
    desc = "every *.java file of %s in %s (%s)" % (JAVA_MODULE.rstrip("/"), JAVA_ZIP, dest)
    return sorted(files), desc


# ---------------------------------------------------------------------------
# C: binutils 2.40 (binutils-source), preprocessed by gcc, checked by gcc

C_TARBALL = "/usr/src/binutils/binutils-2.40.tar.xz"
C_TOP = "binutils-2.40"
C_SUFFIXES = (".c", ".h", ".def", ".inc")
C_EVERY = 4          # every 4th .c file (sorted): the check stays under a minute on 2 cores


def _c_preprocess(src, top, out):
    """The file as `gcc -E -P -std=gnu11` emits it, when gcc accepts the result; else None."""
    incs = ["-I" + os.path.dirname(src), "-I" + os.path.join(top, "include"),
            "-I" + os.path.join(top, "bfd")]
    r = subprocess.run(["gcc", "-E", "-P", "-std=gnu11", "-w"] + incs + [src, "-o", out],
                       capture_output=True)
    if r.returncode != 0:
        return "preprocessor"
    r = subprocess.run(["gcc", "-fsyntax-only", "-std=gnu11", "-w", out], capture_output=True)
    if r.returncode != 0:
        return "gcc -fsyntax-only"
    return None


def c_files(ctx):
    """Extracts the tarball's C sources once (its size and time are the stamp), then
    preprocesses every C_EVERY-th .c file; the corpus is the files gcc accepts."""
    if not os.path.isfile(C_TARBALL):
        sys.exit("check-corpus: %s is missing (Debian package binutils-source)" % C_TARBALL)
    dest = os.path.join(ctx.workdir, "c")
    src_root, pp_root = os.path.join(dest, "src"), os.path.join(dest, "pp")
    st = os.stat(C_TARBALL)
    stamp_path = os.path.join(dest, ".stamp")
    stamp = "%d %d %d\n" % (st.st_size, int(st.st_mtime), C_EVERY)
    try:
        with open(stamp_path) as f:
            fresh = f.read() == stamp
    except OSError:
        fresh = False
    sources = []
    if not fresh:
        os.makedirs(pp_root, exist_ok=True)
        with tarfile.open(C_TARBALL) as t:
            members = [m for m in t.getmembers()
                       if m.isfile() and m.name.endswith(C_SUFFIXES)
                       and not os.path.isabs(m.name) and ".." not in m.name.split("/")]
            t.extractall(src_root, members=members)
    for dirpath, dirnames, filenames in os.walk(os.path.join(src_root, C_TOP)):
        dirnames.sort()
        sources += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".c")]
    sources = sorted(sources)[::C_EVERY]
    top = os.path.join(src_root, C_TOP)
    outs = [os.path.join(pp_root, os.path.relpath(s, top).replace("/", "_") + ".i") for s in sources]
    if not fresh:
        with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            why = list(pool.map(lambda so: _c_preprocess(so[0], top, so[1]), zip(sources, outs)))
        for o, w in zip(outs, why):
            if w and os.path.exists(o):
                os.unlink(o)
        with open(stamp_path, "w") as f:
            f.write(stamp)
    files = [o for o in outs if os.path.exists(o)]
    desc = ("every %dth *.c file (sorted) of %s in %s, preprocessed by `gcc -E -P -std=gnu11` "
            "(-I the file's folder, include/, bfd/); of %d, the %d that preprocess and that "
            "`gcc -fsyntax-only -std=gnu11` accepts (%s)"
            % (C_EVERY, C_TOP, C_TARBALL, len(sources), len(files), pp_root))
    return sorted(files), desc


# ---------------------------------------------------------------------------
# Rust: crate sources of Debian's librust-*-dev packages, filtered by rustc

RUST_REGISTRY = "/usr/share/cargo/registry"
RUST_PACKAGES = ["rustc", "librust-serde-dev", "librust-regex-syntax-dev", "librust-syn-dev",
                 "librust-memchr-dev", "librust-regex-dev", "librust-itertools-dev",
                 "librust-nom-dev"]
RUSTC = "/usr/bin/rustc"       # Debian's rustc (1.63), never a rustup one on PATH
# Every RUST_STEP-th file (sorted by path) keeps the oracle's cost (about 0.3 s
# a file) within the check's budget; GM_RUST_CORPUS_STEP=1 takes every file.
RUST_STEP = int(os.environ.get("GM_RUST_CORPUS_STEP", "3"))


def rustc_parses(path):
    """Debian's rustc in parse-only mode (no expansion, no name resolution)
    accepts the file as Rust 2021."""
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    r = subprocess.run([RUSTC, "--edition", "2021", "-Z", "parse-only", path], env=env,
                       capture_output=True, timeout=120)
    return r.returncode == 0


def rust_files(ctx):
    """The sampled *.rs files the oracle accepts; its verdicts are cached in
    the work directory (path, size and mtime are the key)."""
    if not os.path.isdir(RUST_REGISTRY):
        sys.exit("check-corpus: no crate sources in %s" % RUST_REGISTRY)
    found = []
    for dirpath, dirnames, filenames in os.walk(RUST_REGISTRY):
        dirnames.sort()
        found += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".rs")]
    found.sort()
    sample = found[::max(1, RUST_STEP)]
    os.makedirs(ctx.workdir, exist_ok=True)
    cache_path = os.path.join(ctx.workdir, "rust_oracle.json")
    try:
        with open(cache_path) as f:
            cache = json.load(f)
    except (OSError, ValueError):
        cache = {}

    def key(p):
        st = os.stat(p)
        return "%s %d %d" % (p, st.st_size, int(st.st_mtime))

    todo = [p for p in sample if key(p) not in cache]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        for p, ok in zip(todo, pool.map(rustc_parses, todo)):
            cache[key(p)] = ok
    with open(cache_path, "w") as f:
        json.dump(cache, f, indent=0, sort_keys=True)
    accepted = [p for p in sample if cache[key(p)]]
    crates = sorted({os.path.relpath(p, RUST_REGISTRY).split(os.sep)[0] for p in found})
    desc = ("%s the *.rs files (sorted by path) under %s (%s), %d of %d, of which "
            "`RUSTC_BOOTSTRAP=1 %s --edition 2021 -Z parse-only` accepts %d (verdicts cached in "
            "%s; GM_RUST_CORPUS_STEP=1 takes every file)"
            % ("one in %d of" % RUST_STEP if RUST_STEP > 1 else "all", RUST_REGISTRY, " ".join(crates),
               len(sample), len(found), RUSTC, len(accepted), cache_path))
    return accepted, desc


# ---------------------------------------------------------------------------
# JavaScript: the npm CLI and its bundled dependencies as the nodejs package
# installs them (npm packages' own sources, nobody here wrote them), every
# JS_SAMPLE-th *.js file in path order (to keep `make check-corpus` within its
# time budget), kept only when the oracle `node --check` accepts it.

JS_ROOT = "/usr/lib/node_modules/npm"
JS_SAMPLE = 10


def node_accepts(path):
    r = subprocess.run(["node", "--check", path], capture_output=True)
    return r.returncode == 0


def js_files(ctx):
    if not os.path.isdir(JS_ROOT):
        sys.exit("check-corpus: no npm sources in %s (Debian package nodejs)" % JS_ROOT)
    files = []
    for dirpath, dirnames, filenames in os.walk(JS_ROOT):
        dirnames.sort()
        files += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".js")]
    files = sorted(files)
    sample = files[JS_SAMPLE - 1::JS_SAMPLE]
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        keep = list(pool.map(node_accepts, sample))
    chosen = [f for f, k in zip(sample, keep) if k]
    desc = ("every %dth of the %d *.js files under %s (npm and its bundled dependencies, Debian "
            "package nodejs) in path order, %d of those %d that `node --check` accepts"
            % (JS_SAMPLE, len(files), JS_ROOT, len(chosen), len(sample)))
    return chosen, desc


# ---------------------------------------------------------------------------
# TypeScript: npm packages that ship their .ts sources, installed with the npm
# client (Debian package nodejs) into the scratch directory at pinned
# versions: rxjs (its src/ and dist/types/ .ts and .d.ts), type-fest (type-level
# .d.ts) and typescript itself (lib/*.d.ts, and its parser, the oracle:
# corpus/ts_oracle.js keeps a file when ts.createSourceFile reports no parse
# diagnostic). Every TS_SAMPLE-th file in path order (the check's time budget).

TS_PACKAGES = ["typescript@5.9.3", "rxjs@7.8.2", "type-fest@4.41.0"]
TS_SAMPLE = int(os.environ.get("GM_TS_CORPUS_STEP", "2"))


def ts_files(ctx):
    root = os.path.join(ctx.workdir, "ts")
    modules = os.path.join(root, "node_modules")
    stamp = os.path.join(root, "installed")
    want = " ".join(TS_PACKAGES)
    if not os.path.isfile(stamp) or open(stamp).read() != want:
        os.makedirs(root, exist_ok=True)
        print("check-corpus: npm install %s into %s" % (want, root), flush=True)
        r = subprocess.run(["npm", "install", "--prefix", root, "--no-audit", "--no-fund", "--ignore-scripts",
                            "--no-save"] + TS_PACKAGES, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("check-corpus: npm could not install %s:\n%s" % (want, r.stderr[-2000:]))
        with open(stamp, "w") as f:
            f.write(want)
    files = []
    for dirpath, dirnames, filenames in os.walk(modules):
        dirnames.sort()
        files += [os.path.join(dirpath, n) for n in sorted(filenames)
                  if n.endswith(".ts") and not n.endswith((".d.mts", ".d.cts"))]
    files = sorted(files)
    sample = files[TS_SAMPLE - 1::TS_SAMPLE]
    oracle = os.path.join(ctx.srcdir, "corpus", "ts_oracle.js")
    r = subprocess.run(["node", oracle, os.path.abspath(os.path.join(modules, "typescript"))] + sample,
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("check-corpus: %s failed:\n%s" % (oracle, r.stderr[-2000:]))
    accepted = {line[3:] for line in r.stdout.splitlines() if line.startswith("OK ")}
    chosen = [f for f in sample if f in accepted]
    desc = ("every %dth of the %d *.ts files under %s (npm packages %s) in path order, %d of those %d that "
            "TypeScript's parser accepts (ts.createSourceFile, no parse diagnostic; GM_TS_CORPUS_STEP=1 "
            "takes every file)" % (TS_SAMPLE, len(files), modules, want, len(chosen), len(sample)))
    return chosen, desc


# ---------------------------------------------------------------------------

LANGUAGES = [
    Language("json", "json.lark", [], json_files, 100.0),
    Language("json_bounded", "json_bounded.lark", [], json_files, 99.5),
    Language("go", "go.lark", ["golang-1.19-src"], go_files, 98.0),
    Language("python", "python.lark", ["libpython3.11-stdlib"], python_files, 98.0),
    Language("java", "java.lark", ["openjdk-17-source"], java_files, 95.0),
    Language("c", "c.lark", ["binutils-source", "gcc"], c_files, 99.0),
    Language("rust", "rust.lark", RUST_PACKAGES, rust_files, 99.0),
    Language("javascript", "javascript.lark", ["nodejs"], js_files, 99.0,
             parse_args=["--lexer=contextual"]),
    Language("typescript", "typescript.lark", ["nodejs"], ts_files, 99.0,
             parse_args=["--lexer=contextual"]),
]


def installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return r.returncode == 0 and "ok installed" in r.stdout


def ensure_packages(pkgs, allow):
    missing = [p for p in pkgs if not installed(p)]
    if not missing:
        return
    if not allow:
        sys.exit("check-corpus: missing Debian packages: %s" % " ".join(missing))
    if os.geteuid() != 0:
        sys.exit("check-corpus: missing Debian packages %s: run as root, or "
                 "apt-get install them first" % " ".join(missing))
    print("check-corpus: installing %s" % " ".join(missing), flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing
    if subprocess.run(cmd, env=env, capture_output=True).returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("check-corpus: apt-get could not install %s:\n%s" % (" ".join(missing), r.stderr))


def parse_one(gramask, grammar, path, extra=()):
    """(ok, first error line) of one file."""
    try:
        r = subprocess.run([gramask, "parse", grammar, path] + list(extra), capture_output=True, text=True,
                           errors="replace", timeout=120)
    except subprocess.TimeoutExpired:
        return False, "%s: timeout (120 s)" % path
    if r.returncode == 0:
        return True, ""
    lines = (r.stdout.strip() or r.stderr.strip() or "no output").splitlines()
    what = lines[0]
    if r.returncode < 0:
        what = "gramask killed by signal %d: %s" % (-r.returncode, what)
    elif r.returncode != 1:
        what = "gramask exit status %d: %s" % (r.returncode, what)
    return False, what


def parse_batch(gramask, grammar, paths, extra=()):
    """[(ok, first error line)] of several files, through one gramask parse (the grammar is
    built once); files without a result line of their own (a crash) are redone one by one."""
    try:
        r = subprocess.run([gramask, "parse", grammar] + paths + list(extra), capture_output=True, text=True,
                           errors="replace", timeout=600)
        lines = r.stdout.splitlines() if r.returncode in (0, 1) else []
    except subprocess.TimeoutExpired:
        lines = []
    results, k = [], 0
    for p in paths:
        while k < len(lines) and not lines[k].startswith(p + ":"):
            k += 1
        if k == len(lines):
            results.append(parse_one(gramask, grammar, p, extra))
            k = 0
            continue
        line = lines[k]
        k += 1
        results.append((True, "") if line.startswith(p + ": OK") else (False, line))
    return results


BATCH = 64


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gramask", required=True, help="the gramask binary")
    ap.add_argument("--srcdir", required=True, help="top of the source tree (grammars/)")
    ap.add_argument("--shared", required=True, help="the shared data directory")
    ap.add_argument("--workdir", default="_corpus", help="scratch directory")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--only", action="append", help="check only this language (repeatable)")
    ap.add_argument("--no-install", action="store_true", help="never run apt-get")
    ap.add_argument("--list", action="store_true", help="print the selected files")
    args = ap.parse_args()
    ctx = Ctx(args)
    langs = [l for l in LANGUAGES if not args.only or l.name in args.only]
    if args.only and len(langs) != len(args.only):
        sys.exit("check-corpus: unknown language in --only (have: %s)"
                 % ", ".join(l.name for l in LANGUAGES))
    summary, below = [], []
    for lang in langs:
        ensure_packages(lang.packages, not args.no_install)
        files, desc = lang.select(ctx)
        grammar = os.path.join(args.srcdir, "grammars", lang.grammar)
        print("== %s (grammars/%s): %s" % (lang.name, lang.grammar, desc), flush=True)
        if args.list:
            for f in files:
                print("   %s" % f)
        batches = [files[i:i + BATCH] for i in range(0, len(files), BATCH)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = [res for b in pool.map(lambda b: parse_batch(args.gramask, grammar, b, lang.parse_args),
                                           batches)
                       for res in b]
        failing = [(f, why) for f, (ok, why) in zip(files, results) if not ok]
        good = len(files) - len(failing)
        pct = 100.0 * good / len(files) if files else 0.0
        for f, why in failing:
            print("   FAIL %s\n        %s" % (f, why))
        ok = bool(files) and pct >= lang.target
        line = "%-14s %5d/%-5d files parse  %7.3f%%  (target %g%%)  %s" % (
            lang.name, good, len(files), pct, lang.target, "ok" if ok else "BELOW TARGET")
        print(line, flush=True)
        summary.append(line)
        if not ok:
            below.append(lang.name)
    print("== coverage")
    for line in summary:
        print(line)
    if below:
        print("check-corpus: below target: %s" % ", ".join(below))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
