#!/usr/bin/env python3
"""Python's view of the Unicode data behind re, for tests/test_uclass.c.

Prints, from Python's own re engine and unicodedata (Unicode 14 in 3.11):
    U <version>
    W lo hi        ranges of code points that re's \\w matches
    D lo hi        ranges that \\d matches
    S cp           code points that \\s matches
    N lo hi        ranges unassigned in Python's Unicode (category Cn)
    K cp key       case key (note [case folding] in lexer/uclass.h) when key != cp
The key is computed the way re matches case-insensitively: the simple
lowercase (_sre.unicode_tolower) mapped through re._casefix's extra cases.
"""
import re
import sys
import unicodedata

import _sre
import re._casefix as casefix


def ranges(pred):
    out, start = [], None
    for cp in range(sys.maxunicode + 2):
        p = cp <= sys.maxunicode and pred(cp)
        if p and start is None:
            start = cp
        elif not p and start is not None:
            out.append((start, cp - 1))
            start = None
    return out


def main():
    w = re.compile(r"\w")
    d = re.compile(r"\d")
    s = re.compile(r"\s")
    out = ["U %s" % unicodedata.unidata_version]
    out += ["W %x %x" % r for r in ranges(lambda cp: w.match(chr(cp)) is not None)]
    out += ["D %x %x" % r for r in ranges(lambda cp: d.match(chr(cp)) is not None)]
    out += ["S %x" % cp for cp in range(sys.maxunicode + 1) if s.match(chr(cp))]
    out += ["N %x %x" % r for r in ranges(lambda cp: unicodedata.category(chr(cp)) == "Cn")]
    extra = casefix._EXTRA_CASES
    for cp in range(sys.maxunicode + 1):
        low = _sre.unicode_tolower(cp)
        key = min((low,) + tuple(extra.get(low, ())))
        if key != cp:
            out.append("K %x %x" % (cp, key))
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
