#!/usr/bin/env python3
"""Python's re.match as the oracle for gramask's terminals (lexer/ordered.h, note [ordered matching]).

Reads terminal patterns, one per line, from the file named by the first argument:

    <flags or -> <pattern as hex UTF-8> <name>

and prints, for each, the pattern line followed by generated inputs with the length
of Python's re.match(pattern, input) (what Lark's lexer takes for that terminal),
-1 when it does not match:

    P <flags or -> <pattern as hex UTF-8> <name>
    T <length in bytes or -1> <input as hex UTF-8>

Inputs are built from the pattern's own characters, the characters the idioms are
about (quotes, backslashes, newlines, string prefixes) and a few others: random
strings, and strings shaped like what the terminals match (a prefix, an opening
delimiter, a body, a closing delimiter, a tail), so that every idiom is exercised
with escapes, doubled delimiters, line ends and unterminated bodies. Deterministic
(fixed seed).
"""
import random
import re
import sys

SEED = 20241122
PER_PATTERN = 600

BASE = list("\"'`\\\n\r\t #*/-<>ab fruUBFRx0_.é") + ["\"\"", "\"\"\"", "'''", "\\\\", "\\\"", "*/", "\n  "]
PREFIXES = ["", "", "", "b", "r", "f", "u", "br", "rb", "fr", "R", "B", "x", "#"]
OPEN = ["\"", "'", "`", "\"\"\"", "'''", "/*", "<", "#", "//", "\"\"", "''"]
BODY = list("ab \t\n\\\"'`*/x#é") + ["\\\\", "\\\"", "\\'", "\"\"", "''", "*/", "\"\"\"", "'''"]
WORDS = ["abc", "x_1", "_", "for", "0", "12", "0x1F", "0o17", "0b101", "1.5", ".5e-3", "3e10", "1e", "1.",
         "// c", "# c\n  ", "\n\t \n", "\r\n", "\\\n", "\\ \n", " ", "\t", "\n", "\n    ", "é9", "'a'", "'\\n'"]


def flag_bits(flags):
    f = 0
    for c in flags:
        f |= {"i": re.I, "s": re.S, "m": re.M, "x": re.X, "u": re.U, "a": re.A}[c]
    return f


def inputs(pattern, rng):
    own = [c for c in pattern if c not in "()[]{}?*+|^$\\"] or ["a"]
    pool = BASE + own
    # the pattern's own delimiters, singly and tripled, with the two-character comment ones
    delims = [c for c in "\"'`#<[" if c in pattern] + [c * 3 for c in "\"'" if c * 3 in pattern]
    delims += [d for d in ("/*", "<!--", "//") if re.escape(d) in pattern or d in pattern]
    delims = delims or ["\""]
    out = set()
    while len(out) < PER_PATTERN:
        k = rng.random()
        if k < 0.15:
            s = "".join(rng.choice(pool) for _ in range(rng.randint(0, 8)))
        elif k < 0.3:
            s = "".join(rng.choice(WORDS + pool) for _ in range(rng.randint(1, 4)))
        else:
            o = rng.choice(OPEN + delims * 12)
            close = o if rng.random() < 0.8 else rng.choice(OPEN + delims)
            body = "".join(rng.choice(BODY + own) for _ in range(rng.randint(0, 6)))
            tail = "".join(rng.choice(pool) for _ in range(rng.randint(0, 4)))
            s = (rng.choice(PREFIXES) if rng.random() < 0.4 else "") + o + body + (close if rng.random() < 0.85 else "") + tail
        out.add(s)
    return sorted(out)


def main():
    rng = random.Random(SEED)
    w = sys.stdout.write
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()]
    for line in lines:
        flags, hexpat, name = line.split(" ", 2)
        flags = "" if flags == "-" else flags
        pattern = bytes.fromhex(hexpat).decode("utf-8")
        rx = re.compile(pattern, flag_bits(flags))
        w("P %s %s %s\n" % (flags or "-", hexpat, name))
        for s in inputs(pattern, rng):
            m = rx.match(s)
            n = len(m.group(0).encode("utf-8")) if m else -1
            w("T %d %s\n" % (n, s.encode("utf-8").hex()))


if __name__ == "__main__":
    main()
