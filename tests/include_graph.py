#!/usr/bin/env python3
"""The include graph of the tree flows one way (DESIGN.md, "Layout").

Two checks, both on the `#include "..."` lines of every C source, header,
Bison and re2c file:
  1. a stage includes only itself and the stages below it, in STAGES order;
  2. no cycle between modules, a module being one file name without its
     extension (profile.c and profile.h are the module spanner/profile).
Prints every offending arrow or cycle and exits 1; exit 0 when clean.
"""
import os
import re
import sys

# Bottom to top. include/ holds the public header every stage may use for the
# status codes and option structs; it includes nothing of the tree.
STAGES = ["include", "base", "vocab", "lexer", "parser", "spanner", "ir", "earley", "schema",
          "dispatch", "runtime", "grammars", "cli", "python", "tests", "bench"]
EXTS = (".c", ".h", ".y", ".re")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Made by the build; named here so the check does not depend on a build.
GENERATED = {"parser/lark_parse.h": "parser", "grammars/bundled.c": "grammars"}


def sources(top):
    for stage in STAGES:
        for dirpath, _, files in os.walk(os.path.join(top, stage)):
            for f in sorted(files):
                if f.endswith(EXTS):
                    path = os.path.join(dirpath, f)
                    yield os.path.relpath(path, top)


def resolve(top, src, target):
    """The tree path an include names, or None for a system or build header."""
    if target == "gramask.h":
        return "include/gramask.h"
    for cand in (target, os.path.join(os.path.dirname(src), target)):
        cand = os.path.normpath(cand)
        if cand.split(os.sep)[0] not in STAGES:
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


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("GM_SRCDIR", ".")
    rank = {s: i for i, s in enumerate(STAGES)}
    problems = []
    graph = {}
    for src in sources(top):
        with open(os.path.join(top, src), encoding="utf-8", errors="replace") as f:
            text = f.read()
        stage = src.split(os.sep)[0]
        for target in INCLUDE.findall(text):
            dest = resolve(top, src, target)
            if dest is None:
                continue
            dstage = dest.split(os.sep)[0]
            if rank[dstage] > rank[stage]:
                problems.append(f"{src} includes {dest}: stage {stage} may not include "
                                f"{dstage}, which is above it")
            a, b = module(src), module(dest)
            if a != b:
                graph.setdefault(a, set()).add(b)
    for comp in find_cycles(graph):
        problems.append("include cycle between modules: " + " <-> ".join(comp))
    for p in problems:
        print(p)
    if problems:
        print(f"include_graph: {len(problems)} problem(s)")
        return 1
    print(f"include_graph: {len(graph)} modules, one-way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
