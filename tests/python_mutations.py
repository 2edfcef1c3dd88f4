#!/usr/bin/env python3
"""The Python grammar against CPython on mutated standard library files.

Each case takes a file of the standard library python3 was installed with,
mutates one token (deletes it, doubles it, replaces it by another token of
the file, or indents its line) and compares `gramask parse python` with
CPython's own parser (`ast.parse`). A program CPython accepts must parse:
otherwise a constrained decoder would mask a true token. The other way
round the grammar is a documented superset (grammars/python.lark, its
header: assignment targets are expressions, an indented first line, ...),
so those cases are only counted. The mutants of the few constructs the
grammar knowingly rejects (same header) are skipped.

Usage: python_mutations.py [CASES [SEED]]   (default 300 cases, seed 1)
"""
import ast
import io
import os
import random
import re
import subprocess
import sys
import tempfile
import tokenize
import warnings

KNOWN_REJECTED = [
    re.compile(r"^[ \t]*match[ \t]+(not\b|\[)", re.M),   # match not x: / match [..]:
    re.compile(r"\n[ \t\f]+\Z"),                          # a last line of only spaces
    re.compile(r"\r(?!\n)"),                              # lone \r line ends
]


def stdlib_files():
    root = os.path.dirname(os.__file__)
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames
                             if d not in ("test", "__pycache__", "site-packages", "dist-packages")
                             and not (rel == "lib2to3" and d == "tests"))
        out += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py")]
    return out


def mutate(rng, text):
    toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type not in (tokenize.ENDMARKER, tokenize.DEDENT)]
    if not toks:
        return None
    offs = [0]
    for line in text.splitlines(keepends=True):
        offs.append(offs[-1] + len(line))

    def at(pos):
        return offs[pos[0] - 1] + pos[1]

    t = rng.choice(toks)
    a, b = at(t.start), at(t.end)
    kind = rng.randrange(4)
    if kind == 0:
        return text[:a] + text[b:]
    if kind == 1:
        return text[:b] + " " + text[a:b] + text[b:]
    if kind == 2:
        u = rng.choice(toks)
        return text[:a] + text[at(u.start):at(u.end)] + text[b:]
    s = offs[t.start[0] - 1]
    return text[:s] + rng.choice([" ", "  ", "    ", "\t"]) + text[s:]


def main():
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    gramask = os.path.join(os.environ.get("GM_BUILDDIR", "."), "gramask")
    files = stdlib_files()
    if len(files) < 100:
        print("only %d standard library files under %s" % (len(files), os.path.dirname(os.__file__)))
        return 1
    warnings.simplefilter("ignore")
    fd, path = tempfile.mkstemp(prefix="gm_mutant_", suffix=".py")
    os.close(fd)
    counts = {"agree": 0, "superset": 0, "skipped": 0}
    failures = []
    try:
        done = 0
        while done < cases:
            with open(rng.choice(files), encoding="utf-8") as f:
                text = f.read()
            try:
                new = mutate(rng, text)
            except (tokenize.TokenError, SyntaxError):
                continue
            if new is None or new == text:
                continue
            done += 1
            if any(p.search(new) for p in KNOWN_REJECTED):
                counts["skipped"] += 1
                continue
            try:
                ast.parse(new)
                cpython = True
            except (SyntaxError, ValueError):
                cpython = False
            except RecursionError:
                counts["skipped"] += 1
                continue
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            r = subprocess.run([gramask, "parse", "python", path], capture_output=True, text=True,
                               errors="replace")
            ours = r.returncode == 0
            if ours == cpython:
                counts["agree"] += 1
            elif ours:
                counts["superset"] += 1
            else:
                failures.append((new, r.stdout.strip()))
    finally:
        os.unlink(path)
    for new, why in failures[:5]:
        print("FAIL: CPython accepts, gramask says: %s\n--- mutant (last 400 chars)\n%s\n---"
              % (why, new[-400:]))
    print("%d mutants: %d verdicts as CPython's, %d accepted by the grammar's documented superset, "
          "%d skipped (known rejections), %d valid programs rejected"
          % (cases, counts["agree"], counts["superset"], counts["skipped"], len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
