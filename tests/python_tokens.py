#!/usr/bin/env python3
"""The indentation layer against CPython's tokenizer.

For each Python file, `gramask parse python FILE --terminals` prints what the
parser gets after the lexer and the indentation layer (parser/postlex.h,
note [indentation]); python3's tokenize module is the independent
reference. The logical line ends (NEWLINE), INDENT and DEDENT tokens must
be the same, in the same order, on the same lines, and the file must parse.
tokenize's NL and COMMENT tokens are the blank lines, comments and line
ends inside brackets that the layer folds into one _NEWLINE or drops; at
the end of a file without a final line end tokenize adds a NEWLINE that
the grammar does without (note [end of input] in grammars/python.lark).

Files: the shared Python corpus, every 8th file of the CPython standard
library that python3 itself was installed with (when present), and small
cases written here.

Usage: python_tokens.py [FILE...]
"""
import io
import os
import subprocess
import sys
import tempfile
import tokenize

CASES = [
    "if a:\n    b\n",
    "if a:  # comment\n    b(1,\n  2)\n\n    if c:\n        d\ne\n",
    "def f():\n\tif x:\n\t\treturn [\n1,\n  2]\n\treturn 3",
    "class A:\n    def f(self):\n        pass\n    # a comment at width 4\n# and at 0\n\n    x = 1\n",
    "x = 1 + \\\n    2\nif a and \\\n   b:\n  c\n",
    "s = '''\n  not an indent\n'''\nif x:\n  y = (\n    1)\n  z\n",
    "if a:\n    b\n# last line is a comment",
    "x = {\n  'k': [\n    1,\n  ],\n}\n",
    "match x:\n    case 1:\n        pass\n    case _: pass\n",
    "\n\n# only comments\n\n",
]


def reference(text):
    """(kind, line) of tokenize's NEWLINE, INDENT, DEDENT tokens; DEDENTs at the end of the
    input have line "end"."""
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    last = toks[-1].start
    out = []
    for t in toks:
        if t.type == tokenize.NEWLINE:
            out.append(("NEWLINE", t.start[0]))
        elif t.type == tokenize.INDENT:
            out.append(("INDENT", t.end[0]))
        elif t.type == tokenize.DEDENT:
            out.append(("DEDENT", "end" if t.start == last else t.start[0]))
    if text and not text.endswith("\n"):
        # The last line has no line end: tokenize ends it with a NEWLINE the grammar does
        # without (note [end of input] in grammars/python.lark), and when that last line is
        # a comment, the line end before it is part of the ignored COMMENT_TAIL.
        k = len(out) - 1
        while k >= 0 and out[k] == ("DEDENT", "end"):
            k -= 1
        code_after = [t for t in toks if t.type not in (
            tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT, tokenize.DEDENT, tokenize.ENDMARKER)
            and t.start[0] > (out[k][1] if k >= 0 and out[k][0] == "NEWLINE" else 0)]
        if k >= 0 and out[k][0] == "NEWLINE" and not code_after:
            del out[k]
    return out


def ours(gramask, path, end):
    """The same from gramask's terminals (end: LINE:COLUMN of the end of the file), or None
    and the error. A line end before the first terminal of code (comments and blank lines
    at the top of the file) is one the grammar takes and tokenize has as NL."""
    r = subprocess.run([gramask, "parse", "python", path, "--terminals"], capture_output=True,
                       text=True, errors="replace")
    lines = r.stdout.splitlines()
    if r.returncode != 0 or not lines or not lines[-1].startswith("OK"):
        return None, (lines[-1] if lines else r.stderr.strip())
    out, code = [], False
    for line in lines[:-1]:
        pos, name = line.split(" ", 1)
        kind = {"_NEWLINE": "NEWLINE", "_INDENT": "INDENT", "_DEDENT": "DEDENT"}.get(name)
        if not kind:
            code = True
        elif kind == "DEDENT" and pos == end:
            out.append(("DEDENT", "end"))
        elif code:
            out.append((kind, int(pos.split(":")[0])))
    return out, None


def main():
    build = os.environ.get("GM_BUILDDIR", ".")
    gramask = os.path.join(build, "gramask")
    shared = os.environ.get("GM_SHARED_DIR", os.path.join(build, "..", "shared"))
    files = sys.argv[1:]
    if not files:
        corpus = os.path.join(shared, "corpus", "python")
        if os.path.isdir(corpus):
            files += sorted(os.path.join(corpus, n) for n in os.listdir(corpus) if n.endswith(".py"))
        stdlib = os.path.dirname(os.__file__)
        lib = []
        for dirpath, dirnames, filenames in os.walk(stdlib):
            rel = os.path.relpath(dirpath, stdlib)
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in ("test", "__pycache__", "site-packages", "dist-packages")
                                 and not (rel == "lib2to3" and d == "tests"))
            lib += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py")]
        files += lib[::8]
    tmp = tempfile.mkdtemp(prefix="gm_python_tokens_")
    for i, text in enumerate(CASES):
        p = os.path.join(tmp, "case%d.py" % i)
        with open(p, "w") as f:
            f.write(text)
        files.append(p)
    failures, checked, structure = 0, 0, 0
    for path in files:
        with open(path, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8")
            ref = reference(text)
        except (UnicodeDecodeError, SyntaxError, tokenize.TokenError, IndentationError):
            continue  # not UTF-8 Python that tokenize accepts: nothing to compare
        nl = text.count("\n")
        end = "%d:%d" % (nl + 1, len(raw) - (raw.rfind(b"\n") + 1) + 1)
        got, err = ours(gramask, path, end)
        checked += 1
        if got is None:
            print("FAIL %s: does not parse: %s" % (path, err))
            failures += 1
            continue
        a, b = ref, got
        structure += len(a)
        if a != b:
            k = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            print("FAIL %s: token %d: tokenize %s, gramask %s" % (
                path, k, a[k:k + 3], b[k:k + 3]))
            failures += 1
    for i in range(len(CASES)):
        os.unlink(os.path.join(tmp, "case%d.py" % i))
    os.rmdir(tmp)
    print("%d files, %d NEWLINE/INDENT/DEDENT tokens as CPython's tokenizer has them; %d failures"
          % (checked, structure, failures))
    if not sys.argv[1:] and checked < len(CASES) + 10:
        print("too few files checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
