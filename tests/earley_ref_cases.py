#!/usr/bin/env python3
"""Oracle cases for tests/test_earley_ref.c: grammars and strings with
the answers of an independent judge.

Output, one record per line (hex = UTF-8 bytes in hex):
  R <hex>            a regex (Python syntax) as a whole grammar
  G <hex>            a GBNF grammar
  X <hex>            an EBNF (XGrammar dialect) grammar
  S <hex> <v> <c>    a byte string for the grammar above: v = it is a prefix
                     of some sentence, c = it is a sentence (0/1)

The judges: Python's re for regexes (c = re.fullmatch; v = re.fullmatch of
the "prefix regex" built from the same random syntax tree, whose language
is the set of prefixes of the regex's language); for GBNF grammars an
equivalent Python regex, or a hand-written predicate for the non-regular
ones; for Until(...) the definition of ir/ebnf.h note [until].
Byte strings that end inside a UTF-8 character are judged exactly too:
viable iff some code point with those first bytes continues a viable
prefix (checked on one representative of each class of code points the
regex tells apart).
"""
import random
import re
import sys

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 15)
ALPHABET = ["a", "b", "c", "\u00e9", "\u20ac", "\U0001F600"]


def esc(ch):
    return re.escape(ch)


# ---- random regexes: (pattern, prefix pattern, sampler, boundary code points) ----

def gen(depth):
    r = rng.random()
    if depth <= 0 or r < 0.35:
        k = rng.random()
        if k < 0.55:
            ch = rng.choice(ALPHABET)
            return ("lit", ch)
        if k < 0.9:
            chars = sorted(set(rng.sample(ALPHABET, rng.randint(1, 3))))
            neg = rng.random() < 0.25
            return ("cls", chars, neg)
        return ("dot",)
    if r < 0.6:
        return ("cat", [gen(depth - 1) for _ in range(rng.randint(2, 3))])
    if r < 0.8:
        return ("alt", [gen(depth - 1) for _ in range(rng.randint(2, 3))])
    x = gen(depth - 1)
    q = rng.choice(["*", "+", "?", "m", "mn", "m,"])
    m = rng.randint(0, 3)
    n = m + rng.randint(0, 5)
    if q == "*":
        return ("rep", x, 0, None)
    if q == "+":
        return ("rep", x, 1, None)
    if q == "?":
        return ("rep", x, 0, 1)
    if q == "m":
        return ("rep", x, m, m)
    if q == "mn":
        return ("rep", x, m, n)
    return ("rep", x, m, None)


def cls_text(chars, neg):
    return "[" + ("^" if neg else "") + "".join(esc(c) for c in chars) + "]"


def pat(t):
    k = t[0]
    if k == "lit":
        return esc(t[1])
    if k == "cls":
        return cls_text(t[1], t[2])
    if k == "dot":
        return "."
    if k == "cat":
        return "".join("(?:" + pat(x) + ")" for x in t[1])
    if k == "alt":
        return "|".join("(?:" + pat(x) + ")" for x in t[1])
    x, m, n = t[1], t[2], t[3]
    q = "{%d,}" % m if n is None else "{%d,%d}" % (m, n)
    return "(?:" + pat(x) + ")" + q


def prefix_pat(t):
    """A regex for the prefixes of the strings of t (code point level)."""
    k = t[0]
    if k in ("lit", "cls", "dot"):
        return "(?:" + pat(t) + ")?"
    if k == "cat":
        alts = []
        for i, x in enumerate(t[1]):
            head = "".join("(?:" + pat(y) + ")" for y in t[1][:i])
            alts.append(head + "(?:" + prefix_pat(x) + ")")
        return "(?:" + "|".join(alts) + ")"
    if k == "alt":
        return "(?:" + "|".join("(?:" + prefix_pat(x) + ")" for x in t[1]) + ")"
    x, m, n = t[1], t[2], t[3]
    if n == 0:
        return "(?:)"
    q = "*" if n is None else "{0,%d}" % (n - 1)
    return "(?:(?:" + pat(x) + ")" + q + "(?:" + prefix_pat(x) + "))"


def sample(t, budget=8):
    k = t[0]
    if k == "lit":
        return t[1]
    if k == "cls":
        if not t[2]:
            return rng.choice(t[1])
        others = [c for c in ALPHABET if c not in t[1]] + ["x", "\u0100"]
        return rng.choice(others)
    if k == "dot":
        return rng.choice(ALPHABET + ["z"])
    if k == "cat":
        return "".join(sample(x, budget) for x in t[1])
    if k == "alt":
        return sample(rng.choice(t[1]), budget)
    x, m, n = t[1], t[2], t[3]
    hi = m + 3 if n is None else n
    return "".join(sample(x, budget) for _ in range(rng.randint(m, hi)))


def boundaries(t, out):
    k = t[0]
    if k in ("lit", "cls"):
        for c in (t[1] if k == "cls" else [t[1]]):
            v = ord(c)
            out.update([v - 1, v, v + 1])
    elif k in ("cat", "alt"):
        for x in t[1]:
            boundaries(x, out)
    elif k == "rep":
        boundaries(t[1], out)


def mid_char_viable(prefix_re, s_text, partial, reps):
    """Whether s_text + some character whose UTF-8 starts with partial is a viable prefix."""
    for cp in reps:
        if cp < 0 or cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
            continue
        if chr(cp).encode("utf-8")[: len(partial)] != partial or len(chr(cp).encode()) <= len(partial):
            continue
        if prefix_re.fullmatch(s_text + chr(cp)):
            return True
    return False


def cps_with_prefix(partial, bounds):
    """Representative code points starting with the bytes partial: the ends of the
    range they form, and every boundary point of the regex inside it."""
    need = 2 if partial[0] < 0xE0 else 3 if partial[0] < 0xF0 else 4
    lo = partial + bytes([0x80] * (need - len(partial)))
    hi = partial + bytes([0xBF] * (need - len(partial)))
    ends = []
    for x in (lo, hi):
        v = x[0] & (0x7F >> need)
        for byte in x[1:]:
            v = v << 6 | (byte & 0x3F)
        ends.append(v)
    a, b = ends
    minv = {2: 0x80, 3: 0x800, 4: 0x10000}[need]
    a = max(a, minv)
    b = min(b, 0x10FFFF)
    reps = {a, b, 0xD7FF, 0xE000}
    reps.update(v for v in bounds if a <= v <= b)
    return [v for v in reps if a <= v <= b]


def emit_strings(full_re, prefix_re, strings, bounds):
    seen = set()
    for s in strings:
        if s in seen:
            continue
        seen.add(s)
        v = 1 if prefix_re.fullmatch(s) else 0
        c = 1 if full_re.fullmatch(s) else 0
        assert not c or v, (full_re.pattern, s)
        print("S %s %d %d" % (s.encode().hex(), v, c))
        # the same string followed by the first bytes of a multi-byte character
        for ch in ("\u00e9", "\u20ac", "\U0001F600"):
            enc = ch.encode()
            for cut in range(1, len(enc)):
                part = enc[:cut]
                if rng.random() < 0.5:
                    continue
                mv = mid_char_viable(prefix_re, s, part, cps_with_prefix(part, bounds))
                print("S %s %d 0" % ((s.encode() + part).hex(), 1 if mv else 0))


def regex_cases(n):
    for _ in range(n):
        t = gen(rng.randint(1, 3))
        p = pat(t)
        pp = prefix_pat(t)
        full_re = re.compile(p)
        prefix_re = re.compile(pp)
        print("R " + p.encode().hex())
        strings = [""]
        for _ in range(12):
            s = sample(t)
            strings.append(s)
            for i in range(len(s)):
                strings.append(s[:i])
            if s:
                i = rng.randrange(len(s))
                strings.append(s[:i] + rng.choice(ALPHABET + ["z"]) + s[i + 1:])
                strings.append(s + rng.choice(ALPHABET))
        for _ in range(20):
            strings.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6))))
        bounds = set([0x0A, 0x7A, 0x7B, 0x78, 0x100])
        boundaries(t, bounds)
        emit_strings(full_re, prefix_re, strings, bounds)


# ---- GBNF grammars with an equivalent Python regex ----

GBNF_REGULAR = [  # (grammar, equivalent regex, the characters that matter + an outsider)
    # left recursion
    ('root ::= root "a" | "b"', "ba*", "abz"),
    # nullable rules everywhere
    ('root ::= x y x\nx ::= "a"? | ""\ny ::= ("b" | "")*', "a?b*a?", "abz"),
    # ambiguity: a* three ways
    ('root ::= root root | "a" | ""', "a*", "az"),
    ('root ::= (("a" | "a" "a")*)*', "a*", "az"),
    # mutual recursion with exits
    ('root ::= "(" p ")"\np ::= "x" | q\nq ::= "y" p', r"\((?:y)*x\)", "()xyz"),
    # deep nesting
    ('root ::= ' + "(" * 150 + '"a" | "b"' + ")" * 150 + ' "c"', "[ab]c", "abcz"),
    # bounded and large repetitions
    ('root ::= [a-c]{2,4} "!"{0,3}', "[a-c]{2,4}!{0,3}", "ac!z"),
    ('root ::= "ab"{0,65536} "c"', "(?:ab)*c", "abcz"),  # the same on short strings
    ('root ::= ([a-z] [0-9]?){3}', "(?:[a-z][0-9]?){3}", "a0!"),
    ('root ::= ("ab" | "c"){2,9}', "(?:ab|c){2,9}", "abcz"),
    ('root ::= "x"{5,13} "y" | "x"{20,}', "x{5,13}y|x{20,}", "xyz", "x*|x{5,13}y"),
    # code points: classes, negation, any
    ('root ::= [^a\\u00e9] . [\\u20ac-\\U0001F600]', "[^a\u00e9][\\s\\S][\u20ac-\U0001F600]",
     "a\u00e9\u20ac\U0001F600\nz"),
    # empty-language parts propagate
    ('root ::= "a" nothing | "b"\nnothing ::= [] "c"', "b", "abcz"),
]


def ext_viable(full_re, s, alphabet, depth):
    if full_re.fullmatch(s):
        return True
    frontier = [s]
    for _ in range(depth):
        nxt = []
        for p in frontier:
            for ch in alphabet:
                q = p + ch
                if full_re.fullmatch(q):
                    return True
                nxt.append(q)
        frontier = nxt
    return False


def gbnf_cases():
    alphabet = ["a", "b", "c", "x", "y", "(", ")", "!", "0", "\u00e9", "\u20ac", "z", "\n"]
    for text, rx, chars, *prefix in GBNF_REGULAR:
        full_re = re.compile(rx)
        # the prefix judge: a hand-written prefix regex, or extensions of up to 4 characters
        if prefix:
            prefix_re = re.compile(prefix[0])
            def viable(s):
                return prefix_re.fullmatch(s) is not None
        else:
            def viable(s):
                return ext_viable(full_re, s, chars, 4)
        print("G " + text.encode().hex())
        strings = set([""])
        for _ in range(150):
            strings.add("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5))))
        # strings that stay viable as they grow
        for _ in range(30):
            s = ""
            for _ in range(rng.randint(0, 24)):
                opts = [ch for ch in chars if viable(s + ch)]
                if not opts:
                    break
                s += rng.choice(opts)
            strings.add(s)
        for s in sorted(strings):
            v = viable(s)
            c = 1 if full_re.fullmatch(s) else 0
            print("S %s %d %d" % (s.encode().hex(), 1 if v else 0, c))


# ---- non-regular grammars with hand-written judges ----

def dyck_judge(s):
    depth = 0
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return 0, 0
        else:
            return 0, 0
    return 1, 1 if depth == 0 else 0


def anbn_judge(s):
    m = re.fullmatch("(a*)(b*)", s)
    if not m:
        return 0, 0
    a, b = len(m.group(1)), len(m.group(2))
    if b > a:
        return 0, 0
    return 1, 1 if a == b and a > 0 else 0


def pal_judge(s):
    # root ::= "a" root "a" | "b" root "b" | "c" : every string over {a,b} then c then the mirror
    if any(ch not in "abc" for ch in s):
        return 0, 0
    if "c" not in s:
        return 1, 0
    i = s.index("c")
    left, right = s[:i], s[i + 1:]
    if "c" in right or len(right) > len(left):
        return 0, 0
    if right != left[::-1][: len(right)]:
        return 0, 0
    return 1, 1 if len(right) == len(left) else 0


NONREGULAR = [
    ('root ::= "(" root ")" root | ""', dyck_judge, "()x"),
    ('root ::= "a" root "b" | "a" "b"', anbn_judge, "abx"),
    ('root ::= "a" root "a" | "b" root "b" | "c"', pal_judge, "abcx"),
]


def nonregular_cases():
    for text, judge, alphabet in NONREGULAR:
        print("G " + text.encode().hex())
        strings = set([""])
        for _ in range(300):
            strings.add("".join(rng.choice(alphabet[:-1]) for _ in range(rng.randint(0, 10))))
        for _ in range(30):
            strings.add("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))))
        for s in sorted(strings):
            v, c = judge(s)
            print("S %s %d %d" % (s.encode().hex(), v, c))


# ---- Until(...) by its definition ----

def occurs_before_end(w, L):
    """Whether some string of L occurs in w ending before w's last byte."""
    for x in L:
        start = w.find(x)
        while start != -1:
            if start + len(x) < len(w):
                return True
            start = w.find(x, start + 1)
    return False


def utf8_chars(b):
    """The characters of b when it is valid UTF-8, else None."""
    try:
        return len(b.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def until_complete(w, L, which, max_chars=None, raw=False):
    if occurs_before_end(w, L):
        return False
    if which is None:
        if any(x in w for x in L):
            return False
        text = w
    else:
        if not w.endswith(L[which]):
            return False
        text = w[:len(w) - len(L[which])]
    if raw:
        return True
    # UTF-8 mode: the whole of w valid; the text at most max_chars characters
    if utf8_chars(w) is None:
        return False
    return max_chars is None or utf8_chars(text) <= max_chars


def utf8_completions(w):
    """w itself when it ends on a character boundary of valid UTF-8; else the ways to
    finish its last character (every second byte, then 0x80 or 0xBF)."""
    for k in range(0, 4):
        if k == 0:
            if utf8_chars(w) is not None:
                return [w]
            continue
        out = []
        for first in range(0x80, 0xC0):
            for rest in (0x80, 0xBF):
                t = w + bytes([first]) + bytes([rest]) * (k - 1)
                if utf8_chars(t) is not None:
                    out.append(t)
        if out:
            return out
    return []


def until_viable(w, L, which, max_chars=None, raw=False):
    if occurs_before_end(w, L):
        return False
    ends = [x for x in L if w.endswith(x)]
    if ends:
        return which is not None and until_complete(w, L, which, max_chars, raw)
    for w2 in ([w] if raw else utf8_completions(w)):
        if occurs_before_end(w2, L):
            continue
        if which is None:
            if until_complete(w2, L, which, max_chars, raw):
                return True
            continue
        target = L[which]
        fresh = b"\x01"
        cands = [target[k:] for k in range(len(target) + 1)] + [fresh + target]
        if any(until_complete(w2 + t, L, which, max_chars, raw) for t in cands):
            return True
    return False


E = "\u00e9".encode()          # two bytes
EURO = "\u20ac".encode()       # three bytes
UNTILS = [
    ([b"</a>"], None, None, True),
    ([b"</a>"], 0, None, True),
    ([b"ab", b"b"], 0, None, True),
    ([b"ab", b"b"], 1, None, True),
    ([b"a", b"ab"], 1, None, True),       # empty language when alone: used after an alternative
    ([b"aab", b"ab", b"<x>"], 2, None, True),
    ([b"\xff\x00", b"aa"], 0, None, True),
    ([b"abab", b"bab"], None, None, True),
    # UTF-8 free text (the default), with and without a character bound
    ([b"</a>"], None, None, False),
    ([b"</a>"], 0, None, False),
    ([b"</a>", E + b"b"], 0, None, False),
    ([b"ab", EURO], 1, None, False),
    ([b"\xff\x00", b"aa"], 1, None, False),
    ([b"\xa9"], None, None, False),      # a continuation byte excluded: no \xc3\xa9 either
    ([b"</a>"], 0, 2, False),
    ([b"</a>"], None, 3, False),
    ([E + b"<", b"b"], 0, 1, False),
    ([b"ab", b"b"], None, 0, False),
]


def bytes_lit(b):
    if all(0x20 <= x < 0x7F and x not in b'"\\' for x in b):
        return '"' + b.decode() + '"'
    return '%"' + "".join("\\x%02X" % x for x in b) + '"'


def until_cases():
    for L, which, max_chars, raw in UNTILS:
        args = ", ".join(bytes_lit(x) for x in L)
        if which is not None:
            args += ", end=%d" % which
        if raw:
            args += ", bytes=1"
        if max_chars is not None:
            args += ", max_chars=%d" % max_chars
        empty = which is not None and not until_viable(b"", L, which, max_chars, raw)
        text = "root ::= Until(%s)%s" % (args, ' | "Q"' if empty else "")
        print("X " + text.encode().hex())
        alphabet = sorted(set(b"".join(L))) + [ord("z")]
        if not raw:
            alphabet += list(E) + list(EURO) + [0xFF]
        strings = set([b""])
        for _ in range(400):
            strings.add(bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 8))))
        for _ in range(200 if not raw else 0):
            parts = [b"z", E, EURO, b"<", b"/", b"a", b">", b"b"] + L
            strings.add(b"".join(rng.choice(parts) for _ in range(rng.randint(0, 5))))
        for x in L:
            strings.add(x)
            strings.add(b"zz" + x)
            strings.add(E + x)
            strings.add(E[:1] + x)
        for w in sorted(strings):
            v = until_viable(w, L, which, max_chars, raw)
            c = until_complete(w, L, which, max_chars, raw)
            if empty:  # the alternative "Q"
                v = v or w in (b"", b"Q")
                c = c or w == b"Q"
            print("S %s %d %d" % (w.hex(), 1 if v else 0, 1 if c else 0))


regex_cases(int(sys.argv[2]) if len(sys.argv) > 2 else 120)
gbnf_cases()
nonregular_cases()
until_cases()
