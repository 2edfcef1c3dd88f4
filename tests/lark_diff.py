#!/usr/bin/env python3
"""gramask against Lark itself: the same grammars, the same inputs, the same terminals.

For each case (a grammar, a start rule, inputs), Lark 1.1.5 (Debian python3-lark)
parses every input with parser='lalr' and each of its lexers, and `gramask parse
--terminals --lark --lexer=...` does the same; the terminal streams must be equal,
position by position, up to the first error, and the error (if any) at the same
place:
  - Lark's UnexpectedToken at a token: gramask's "syntax error: unexpected T" with
    that terminal at that line and column;
  - Lark's UnexpectedCharacters at an offset (no terminal matches there): gramask's
    lexical error in a lexeme starting there (gramask reports the byte where the
    lexeme could not go on, so the check is that no terminal was produced at or
    after Lark's offset);
  - Lark's UnexpectedEOF / UnexpectedToken at $END: gramask's unexpected end of input;
  - with the contextual lexer, Lark's UnexpectedToken for a byte its state's lexer cannot
    lex (it names the basic lexer's token there): gramask's lexical error there;
  - the indenter's DedentError: gramask's indentation error.
The streams compared are what the parser gets after the indentation layer (Lark's
PythonIndenter, gramask's automatic layer for grammars that %declare _INDENT and
_DEDENT), without _INDENT and _DEDENT, whose positions the two place differently
(Lark borrows the line end's, gramask puts them where it ends); their order is
checked through the parse itself. Named terminals must have the same name;
anonymous ones (Lark: __ANON_0, LPAR..., gramask: "(" /x+/) must correspond one to
one through the whole case.

Grammars: Lark's own python.lark (on a deterministic sample of the Python standard
library of the machine, /usr/lib/python3.*) and lark.lark (on every .lark file at
hand), SynCode's three grammars on their programs, the bundled json grammar on the
corpus' JSON files, and the small grammars of tests/lark/*.lark, each written to hit
one tie rule or regex construct, on the inputs listed in its `// input:` lines.

Usage: lark_diff.py [--lexer basic|contextual] [--only SUBSTRING] [-v]
Environment: GM_BUILDDIR (gramask), GM_SRCDIR, GM_SHARED_DIR. Exit 77 (skip) when
lark cannot be imported.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

try:
    import lark
    from lark.indenter import Indenter
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken, UnexpectedEOF, UnexpectedInput
except ImportError:
    print("SKIP: python3-lark is not installed (Debian: apt-get install python3-lark)")
    sys.exit(77)

SRC = os.environ.get("GM_SRCDIR", ".")
BUILD = os.environ.get("GM_BUILDDIR", ".")
SHARED = os.environ.get("GM_SHARED_DIR", os.path.join(SRC, "..", "shared"))
GRAMASK = os.path.join(BUILD, "gramask")
LARK_GRAMMARS = os.path.join(os.path.dirname(lark.__file__), "grammars")
SYNCODE = os.path.join(SHARED, "benchmarks", "syncode-grammars")

STDLIB_SAMPLE = 24          # Python files of the standard library (every k-th, sorted)
STDLIB_MAX_BYTES = 40000    # skip bigger ones (time)


class GramaskIndenter(Indenter):
    """Lark's PythonIndenter, with the line-end terminal the grammar has."""
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def __init__(self, nl):
        self._nl = nl
        super().__init__()

    @property
    def NL_type(self):
        return self._nl


class Recorder:
    """A postlex that records what the parser gets (after an inner postlex)."""

    def __init__(self, inner):
        self.inner = inner
        self.tokens = []

    @property
    def always_accept(self):
        return self.inner.always_accept if self.inner else ()

    def process(self, stream):
        out = self.inner.process(stream) if self.inner else stream
        for t in out:
            self.tokens.append(t)
            yield t


def indenter_for(text):
    """The layer gramask gives the grammar: Lark's PythonIndenter when it %declares both."""
    decl = set()
    for m in re.finditer(r"^%declare\s+([^\n]*)", text, re.M):
        decl.update(m.group(1).split())
    if "_INDENT" in decl and "_DEDENT" in decl:
        nl = "_NEWLINE" if re.search(r"^_NEWLINE\s*:", text, re.M) else "_NL"
        return nl
    return None


class LarkRun:
    def __init__(self, path, start, lexer):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.nl = indenter_for(text)
        self.rec = Recorder(GramaskIndenter(self.nl) if self.nl else None)
        self.parser = lark.Lark(text, parser="lalr", lexer=lexer, start=start or "start", postlex=self.rec,
                                import_paths=[os.path.dirname(os.path.abspath(path)), LARK_GRAMMARS],
                                maybe_placeholders=False)
        self.declared = {"_INDENT", "_DEDENT"} if self.nl else set()

    def run(self, data):
        """(tokens [(char offset, name)], error) with error None, or (kind, char offset, name)."""
        self.rec.tokens = []
        err = None
        try:
            self.parser.parse(data)
        except UnexpectedCharacters as e:
            err = ("lexical", e.pos_in_stream, None)
        except UnexpectedToken as e:
            t = e.token
            if t.type == "$END":
                err = ("eof", len(data), None)
            else:
                err = ("syntax", t.start_pos, t.type)
        except UnexpectedEOF:
            err = ("eof", len(data), None)
        except lark.indenter.DedentError:
            err = ("indent", None, None)
        except AssertionError:
            # the indenter's paren_level went below zero: a closing bracket too many
            err = ("indent", None, None)
        toks = [(t.start_pos, t.type) for t in self.rec.tokens if t.type not in self.declared]
        if err and err[0] == "syntax" and toks and toks[-1][0] == err[1]:
            toks.pop()  # the rejected one: gramask names it in the error instead
        return toks, err


def byte_offsets(data):
    """char offset -> byte offset, and byte offset -> (line, column) (columns in bytes)."""
    b = data.encode("utf-8")
    char_to_byte = [0] * (len(data) + 1)
    k = 0
    for i, ch in enumerate(data):
        char_to_byte[i] = k
        k += len(ch.encode("utf-8"))
    char_to_byte[len(data)] = k
    return b, char_to_byte


def line_col(b, off):
    line = b.count(b"\n", 0, off) + 1
    start = b.rfind(b"\n", 0, off) + 1
    return line, off - start + 1


def gramask_terminal_names(grammar, start, lexer):
    out = subprocess.run([GRAMASK, "grammar", grammar, "--lark", "--report"] + lexer_args(lexer) +
                         (["--start=" + start] if start else []),
                         capture_output=True, text=True)
    names, declared, section = set(), set(), False
    for line in out.stdout.splitlines():
        if line == "Terminals":
            section = True
        elif section and line and not line.startswith(" "):
            break
        elif section:
            m = re.match(r"\s+\d+ (.*?)( \((ignored|declared)\))?$", line)
            if m:
                names.add(m.group(1))
                if m.group(3) == "declared":
                    declared.add(m.group(1))
    return names, declared


def lexer_args(lexer):
    """gramask's lexer option (basic is what it has without one)."""
    return [] if lexer == "basic" else ["--lexer=" + lexer]


TERM_LINE = re.compile(r"^(\d+):(\d+) (.*)$")
ERR_LINE = re.compile(r"^.*?:(\d+):(\d+): (syntax error: unexpected (end of input|(\S+?)(?=; |\s|$))|lexical error|indentation error)")


def gramask_run(grammar, start, lexer, path, declared):
    args = [GRAMASK, "parse", grammar, path, "--terminals", "--lark"] + lexer_args(lexer)
    if start:
        args.append("--start=" + start)
    out = subprocess.run(args, capture_output=True, text=True, errors="replace")
    toks, err = [], None
    for line in out.stdout.splitlines():
        m = TERM_LINE.match(line)
        if m:
            if m.group(3) not in declared:
                toks.append(((int(m.group(1)), int(m.group(2))), m.group(3)))
            continue
        m = ERR_LINE.match(line)
        if m:
            pos = (int(m.group(1)), int(m.group(2)))
            if m.group(4) == "end of input":
                err = ("eof", pos, None)
            elif m.group(5):
                err = ("syntax", pos, m.group(5))
            elif m.group(3).startswith("lexical"):
                err = ("lexical", pos, None)
            else:
                err = ("indent", pos, None)
        elif line.startswith("OK") or line.endswith("OK"):
            pass
    if out.returncode not in (0, 1) or (out.returncode == 1 and not err):
        err = ("gramask failed", None, out.stderr.strip()[-400:] or out.stdout.strip()[-400:])
    return toks, err


class Case:
    def __init__(self, label, grammar, start, inputs):
        self.label, self.grammar, self.start, self.inputs = label, grammar, start, inputs


def compare(case, lexer, verbose):
    """Number of inputs whose streams differ (each reported)."""
    try:
        lr = LarkRun(case.grammar, case.start, lexer)
    except Exception as e:  # Lark cannot load it: nothing to compare with
        print("FAIL: %s: Lark cannot load %s: %s" % (case.label, case.grammar, str(e)[:300]))
        return 1
    names, declared = gramask_terminal_names(case.grammar, case.start, lexer)
    if not names:
        out = subprocess.run([GRAMASK, "grammar", case.grammar, "--lark"] + lexer_args(lexer) +
                             (["--start=" + case.start] if case.start else []),
                             capture_output=True, text=True)
        print("FAIL: %s: gramask cannot build %s:\n%s" % (case.label, case.grammar, out.stderr[-600:]))
        return 1
    anon = {}      # Lark anonymous name -> gramask name (one to one)
    anon_rev = {}
    bad = 0
    ok_inputs = 0
    for path in case.inputs:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            data = f.read()
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            continue  # not UTF-8: Lark reads text, gramask bytes
        ltoks, lerr = lr.run(data)
        b, c2b = byte_offsets(data)
        gtoks, gerr = gramask_run(case.grammar, case.start, lexer, path, declared)
        why = None
        if lerr and gerr and lerr[0] == gerr[0] == "lexical" and len(ltoks) == len(gtoks) + 1:
            # gramask hands on a lexeme only once the byte after it is lexed: the one
            # before an unlexable byte is not printed (Lark's is)
            ltoks = ltoks[:-1]
        for i in range(max(len(ltoks), len(gtoks))):
            if i >= len(ltoks) or i >= len(gtoks):
                extra = ltoks[i] if i < len(ltoks) else None
                why = "token %d: Lark %s, gramask %s" % (
                    i, "%s at %d:%d" % ((extra[1],) + line_col(b, c2b[extra[0]])) if extra else "nothing more",
                    "%s at %d:%d" % ((gtoks[i][1],) + gtoks[i][0]) if i < len(gtoks) else "nothing more")
                break
            (lo, lname), (gpos, gname) = ltoks[i], gtoks[i]
            lpos = line_col(b, c2b[lo])
            if lname in names:
                same_name = lname == gname
            else:
                same_name = anon.setdefault(lname, gname) == gname and anon_rev.setdefault(gname, lname) == lname
            if lpos != gpos or not same_name:
                why = "token %d: Lark %s at %d:%d, gramask %s at %d:%d" % ((i, lname) + lpos + (gname,) + gpos)
                break
        if not why and (lerr is None) != (gerr is None):
            why = "Lark: %s, gramask: %s" % (lerr or "OK", gerr or "OK")
        elif not why and lerr:
            kind, lo, lname = lerr
            gkind, gpos, gname = gerr
            if kind == "syntax" and gkind == "lexical" and lexer == "contextual":
                # Lark's contextual lexer reports a byte its state's lexer cannot lex as the
                # basic lexer's token there (UnexpectedToken); gramask as a lexical error
                if gpos < line_col(b, c2b[lo]):
                    why = "Lark: unexpected %s at %d:%d; gramask: lexical error at %d:%d" % (
                        (lname,) + line_col(b, c2b[lo]) + gpos)
            elif kind != gkind:
                why = "Lark %s error, gramask %s error (%s)" % (kind, gkind, gerr)
            elif kind == "syntax":
                lpos = line_col(b, c2b[lo])
                same = lname == gname if lname in names else anon.get(lname, gname) == gname
                if lpos != gpos or not same:
                    why = "Lark: unexpected %s at %d:%d; gramask: unexpected %s at %d:%d" % (
                        (lname,) + lpos + (gname,) + gpos)
            elif kind == "lexical":
                lpos = line_col(b, c2b[lo])
                if gpos < lpos:
                    why = "Lark: lexical error at %d:%d; gramask: at %d:%d" % (lpos + gpos)
            elif kind == "eof" and gpos != line_col(b, len(b)):
                why = "unexpected end of input at %d:%d, Lark at the end" % gpos
        if why:
            bad += 1
            print("FAIL: %s [%s] %s: %s" % (case.label, lexer, path, why))
        else:
            ok_inputs += 1
            if verbose:
                print("ok: %s [%s] %s (%d terminals%s)" % (case.label, lexer, path, len(ltoks),
                                                         ", %s error" % lerr[0] if lerr else ""))
    print("%s: %s [%s]: %d of %d inputs agree" % ("ok" if not bad else "FAIL", case.label, lexer,
                                                  ok_inputs, ok_inputs + bad))
    return bad


def small_cases(tmp):
    """tests/lark/*.lark: a grammar each, its inputs in `// input: TEXT` lines (Python escapes)."""
    cases = []
    for g in sorted(glob.glob(os.path.join(SRC, "tests", "lark", "*.lark"))):
        with open(g, encoding="utf-8") as f:
            text = f.read()
        start = None
        m = re.search(r"^// start: (\S+)", text, re.M)
        if m:
            start = m.group(1)
        inputs = []
        for k, m in enumerate(re.finditer(r"^// input: (.*)$", text, re.M)):
            p = os.path.join(tmp, "%s.%d.txt" % (os.path.basename(g), k))
            with open(p, "w", encoding="utf-8", newline="") as f:
                f.write(m.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape"))
            inputs.append(p)
        cases.append(Case(os.path.basename(g), g, start, inputs))
    return cases


def stdlib_sample():
    libs = sorted(glob.glob("/usr/lib/python3.*/"))
    if not libs:
        return []
    files = sorted(f for f in glob.glob(os.path.join(libs[-1], "*.py")) if os.path.getsize(f) <= STDLIB_MAX_BYTES)
    step = max(1, len(files) // STDLIB_SAMPLE)
    return files[::step][:STDLIB_SAMPLE]


def cases(tmp):
    out = small_cases(tmp)
    out.append(Case("lark.lark", os.path.join(LARK_GRAMMARS, "lark.lark"), None,
                    sorted(glob.glob(os.path.join(LARK_GRAMMARS, "*.lark")) +
                           glob.glob(os.path.join(SRC, "grammars", "*.lark")) +
                           glob.glob(os.path.join(SYNCODE, "*.lark")) +
                           glob.glob(os.path.join(SRC, "tests", "lark", "*.lark")))))
    out.append(Case("python.lark", os.path.join(LARK_GRAMMARS, "python.lark"), "file_input", stdlib_sample()))
    for lang, ext in (("go", "go"), ("java", "java"), ("python", "py")):
        g = os.path.join(SYNCODE, "%s_grammar.lark" % lang)
        if os.path.exists(g):
            out.append(Case("syncode " + lang, g, None, sorted(glob.glob(os.path.join(SYNCODE, "programs", "*." + ext)))))
    js = sorted(glob.glob(os.path.join(SHARED, "corpus", "json", "*.json")))[:20]
    if js:
        out.append(Case("json", os.path.join(SRC, "grammars", "json.lark"), None, js))
    return out


def main():
    lexers = ["basic", "contextual"]
    only, verbose = None, False
    args = sys.argv[1:]
    while args:
        a = args.pop(0)
        if a == "--lexer":
            lexers = [args.pop(0)]
        elif a == "--only":
            only = args.pop(0)
        elif a == "-v":
            verbose = True
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases(tmp):
            if only and only not in case.label:
                continue
            for lexer in lexers:
                bad += compare(case, lexer, verbose)
    print("%d failure(s)" % bad if bad else "all agree")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
