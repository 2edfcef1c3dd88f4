#!/usr/bin/env python3
"""The tree flows one way (DESIGN.md, "Layout"): no circle of files anywhere.

Checks, on every C source, header, Bison and re2c file of the stages and on
the objects the build made of them:
  1. a stage includes only itself and the stages below it, in STAGES order;
  2. no circle between modules, a module being one file name without its
     extension (profile.c and profile.h are the module spanner/profile). An
     arrow A -> B is either an `#include "..."` of B by A, or a call: A's
     object uses a global symbol that only B's object defines (`nm -P` on the
     built .o files; a symbol several objects define, like each test's
     main, makes no arrow). A circle through any chain of arrows fails.
Prints every offending arrow or circle (with the symbols of each call
arrow) and exits 1; exit 0 when clean.

Usage: include_graph.py [SRCDIR [BUILDDIR]] (default $GM_SRCDIR, $GM_BUILDDIR,
else the current directory). Before the tree it checks itself on a small
tree with a deliberate circle through calls and one through includes, which
must fail, and the same tree without them, which must pass
(--self-test runs only that). The objects need a build: with none found it
fails rather than pass on includes alone.
"""
import os
import re
import shutil
import subprocess
import sysconfig
import sys
import tempfile

# Bottom to top. include/ holds the public header every stage may use for the
# status codes and option structs; it includes nothing of the tree.
STAGES = ["include", "base", "vocab", "lexer", "parser", "spanner", "ir", "earley", "schema",
          "dispatch", "runtime", "grammars", "cli", "python", "tests", "bench"]
EXTS = (".c", ".h", ".y", ".re")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Data the build embeds: the bundled grammars' texts (grammars/bundled.c, made
# at build time) sit behind parser/bundled.h, so stages below call into them.
DATA = {"grammars"}
# The Python extension's objects are setup.py's (python/tmp), built only when
# its tests run: the check compiles its sources itself (python_objects), so
# the extension's call graph is checked whatever ran first.
NO_OBJECTS = {"python"}
# Made by the build; named here so the check does not depend on a build.
GENERATED = {"parser/lark_parse.h": "parser", "grammars/bundled.c": "grammars"}


def sources(top, stages=STAGES):
    for stage in stages:
        for dirpath, _, files in os.walk(os.path.join(top, stage)):
            for f in sorted(files):
                if f.endswith(EXTS):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, top)


def resolve(top, src, target, stages=STAGES):
    """The tree path an include names, or None for a system or build header."""
    if target == "gramask.h":
        return "include/gramask.h"
    for cand in (target, os.path.join(os.path.dirname(src), target)):
        cand = os.path.normpath(cand)
        if cand.split(os.sep)[0] not in stages:
            continue  # config.h and other files of the build
        if cand in GENERATED or os.path.exists(os.path.join(top, cand)):
            return cand
    return None  # config.h and friends


def module(path):
    # A generated parser header belongs to its grammar's module.
    return os.path.splitext(path)[0]


def find_cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def objects(top, build, stages):
    """(module, object path) for every object the build made of the stages' sources.

    Automake names an object of a program with per-program flags
    `prog-name.o` (cli/gramask-main.o, tests/test_vocab-test_vocab.o,
    tests/libgmtest_la-testutil.o): the module is the source it came from.
    libtool's PIC copies under .libs/ are the same code, read only when the
    plain object is missing.
    """
    srcs = {}
    for src in sources(top, stages):
        if src.endswith(".c"):
            srcs.setdefault(os.path.dirname(src), set()).add(os.path.basename(src)[:-2])
    out = {}
    for stage in stages:
        if stage in NO_OBJECTS:
            continue
        root = os.path.join(build, stage)
        for dirpath, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")) or d == ".libs")
            rel = os.path.relpath(dirpath, build)
            pic = os.path.basename(rel) == ".libs"
            if pic:
                rel = os.path.dirname(rel)
            names = srcs.get(rel, set())
            for f in sorted(files):
                if not f.endswith(".o"):
                    continue
                base = f[:-2]
                if base not in names and "-" in base and base.split("-", 1)[1] in names:
                    base = base.split("-", 1)[1]
                mod = os.path.join(rel, base)
                if not pic or mod not in out:
                    out[mod] = os.path.join(dirpath, f)
    return out


def python_objects(top, tmp):
    """(module, object path) for the Python extension's sources, compiled into tmp."""
    cc = os.environ.get("CC", "cc")
    src_dir = os.path.join(top, "python", "src")
    if not os.path.isdir(src_dir):
        return {}
    out = {}
    for f in sorted(os.listdir(src_dir)):
        if not f.endswith(".c"):
            continue
        obj = os.path.join(tmp, f[:-2] + ".o")
        subprocess.run([cc, "-std=c11", "-c", "-I", os.path.join(top, "include"),
                        "-I", sysconfig.get_paths()["include"], os.path.join(src_dir, f),
                        "-o", obj], check=True)
        out[os.path.join("python", "src", f[:-2])] = obj
    return out


def symbols(objs):
    """{module: (defined, undefined)} of global symbols, from `nm -P -A`."""
    nm = os.environ.get("NM", "nm")
    by_path = {path: mod for mod, path in objs.items()}
    table = {mod: (set(), set()) for mod in objs}
    paths = sorted(by_path)
    for i in range(0, len(paths), 200):
        res = subprocess.run([nm, "-P", "-A"] + paths[i:i + 200], capture_output=True,
                             text=True)
        if res.returncode != 0:
            raise RuntimeError(f"{nm} failed: {res.stderr.strip()}")
        for line in res.stdout.splitlines():
            # "path.o: symbol T value size" (a member of an archive would add [..])
            path, _, rest = line.partition(": ")
            parts = rest.split()
            if len(parts) < 2 or path not in by_path:
                continue
            sym, kind = parts[0], parts[1]
            defined, undefined = table[by_path[path]]
            if kind == "U":
                undefined.add(sym)
            elif kind.isupper():
                defined.add(sym)
    return table


def check(top, build, stages=STAGES, need_objects=True):
    """The problems of the tree at top built in build (a list of lines)."""
    rank = {s: i for i, s in enumerate(stages)}
    problems = []
    graph = {}   # module -> {module: set of symbols; empty for an include}
    for src in sources(top, stages):
        with open(os.path.join(top, src), encoding="utf-8", errors="replace") as f:
            text = f.read()
        stage = src.split(os.sep)[0]
        for target in INCLUDE.findall(text):
            dest = resolve(top, src, target, stages)
            if dest is None:
                continue
            dstage = dest.split(os.sep)[0]
            if rank[dstage] > rank[stage]:
                problems.append(f"{src} includes {dest}: stage {stage} may not include "
                                f"{dstage}, which is above it")
            a, b = module(src), module(dest)
            if a != b:
                graph.setdefault(a, {}).setdefault(b, set())
    for comp in find_cycles({a: set(bs) for a, bs in graph.items()}):
        problems.append("include circle between modules: " + " <-> ".join(comp))
    objs = objects(top, build, stages)
    if "python" in stages:
        tmp = tempfile.mkdtemp(prefix="include_graph_py.")
        objs.update(python_objects(top, tmp))
    if not objs and need_objects:
        problems.append(f"no built objects under {build}: the call graph needs a build "
                        f"(run make first)")
    table = symbols(objs)
    if "python" in stages:
        shutil.rmtree(tmp, ignore_errors=True)
    owner = {}
    for mod, (defined, _) in table.items():
        for sym in defined:
            owner.setdefault(sym, set()).add(mod)
    calls = {}   # module -> {module: set of symbols}
    for mod, (_, undefined) in table.items():
        for sym in undefined:
            defs = owner.get(sym, ())
            if len(defs) == 1:
                dest = next(iter(defs))
                if dest != mod:
                    calls.setdefault(mod, {}).setdefault(dest, set()).add(sym)
    for a in sorted(calls):
        for b in sorted(calls[a]):
            sa, sb = a.split(os.sep)[0], b.split(os.sep)[0]
            if rank[sb] > rank[sa] and sb not in DATA:
                problems.append(f"{a} calls {', '.join(sorted(calls[a][b]))} of {b}: stage {sa} "
                                f"may not call {sb}, which is above it")
    for comp in find_cycles({a: set(bs) for a, bs in calls.items()}):
        members = set(comp)
        arrows = []
        for a in comp:
            for b in sorted(calls.get(a, {})):
                if b in members:
                    syms = sorted(calls[a][b])
                    arrows.append(f"    {a} -> {b}: calls " + ", ".join(syms[:3]) +
                                  (" ..." if len(syms) > 3 else ""))
        problems.append("circle of files: " + " <-> ".join(comp) + "\n" + "\n".join(arrows))
    summary = (f"{len(graph)} modules, {sum(len(v) for v in graph.values())} include arrows; "
               f"{len(objs)} objects, {sum(len(v) for v in calls.values())} call arrows")
    return problems, summary


SELF_TEST = {
    # a.c calls b() and b.c calls a(): a circle only the objects show
    "base/a.h": "int a(int);\n",
    "base/b.h": "int b(int);\n",
    "base/a.c": '#include "base/a.h"\n#include "base/b.h"\nint a(int x) { return x ? b(x - 1) : 0; }\n',
    "base/b.c": '#include "base/b.h"\nint a(int);\nint b(int x) { return a(x); }\n',
    # two headers that include each other: a circle the includes show
    "base/c.h": '#include "base/d.h"\n',
    "base/d.h": '#include "base/c.h"\n',
}
SELF_TEST_FIXED = {
    "base/b.c": '#include "base/b.h"\nint b(int x) { return x; }\n',
    "base/d.h": "\n",
}


def self_test():
    """Fails on the deliberate circles of SELF_TEST, passes once they are gone."""
    cc = os.environ.get("CC", "cc")
    tmp = tempfile.mkdtemp(prefix="include_graph.")
    try:
        results = []
        for files in (SELF_TEST, dict(SELF_TEST, **SELF_TEST_FIXED)):
            for path, text in files.items():
                os.makedirs(os.path.join(tmp, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(tmp, path), "w", encoding="utf-8") as f:
                    f.write(text)
            for path in files:
                if path.endswith(".c"):
                    subprocess.run([cc, "-c", "-I", tmp, os.path.join(tmp, path), "-o",
                                    os.path.join(tmp, path[:-2] + ".o")], check=True)
            results.append(check(tmp, tmp, ["base"])[0])
        bad, good = results
        calls = [p for p in bad if p.startswith("circle of files: base/a <-> base/b")]
        incs = [p for p in bad if p.startswith("include circle between modules: base/c <-> base/d")]
        ok = len(bad) == 2 and calls and "calls b" in calls[0] and incs and not good
        print("include_graph self-test: the deliberate circles give")
        for p in bad:
            print("  " + p.replace("\n", "\n  "))
        print("  and without them: " + ("no problem" if not good else "; ".join(good)))
        print("include_graph self-test: " + ("ok" if ok else "FAILED"))
        return ok
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return 0 if self_test() else 1
    top = args[0] if args else os.environ.get("GM_SRCDIR", ".")
    build = args[1] if len(args) > 1 else os.environ.get("GM_BUILDDIR", top)
    if not self_test():
        return 1
    problems, summary = check(top, build)
    for p in problems:
        print(p)
    if problems:
        print(f"include_graph: {len(problems)} problem(s) ({summary})")
        return 1
    print(f"include_graph: one-way, no circle of files ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
