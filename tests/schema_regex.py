"""Judge for tests/test_schema_regex: JSON Schema `pattern` semantics by Python's re.

Reads FILE: lines "hex(pattern) hex(string)"; prints one line per input:
1 when re.search(pattern, string) finds a match, 0 when it does not, E when
Python cannot compile the pattern. The inputs are ASCII strings without
line breaks or control characters, where ECMA-262 and Python agree (\\d \\w
\\s and $ differ only on other characters); the ECMA-only group syntax
(?<name>...) is rewritten to Python's (?P<name>...).
"""
import re
import sys
import warnings

warnings.simplefilter("ignore")

cache = {}
out = []
for line in open(sys.argv[1]):
    p, s = line.split()
    pat = bytes.fromhex(p).decode("utf-8") if p != "-" else ""
    text = bytes.fromhex(s).decode("utf-8") if s != "-" else ""
    rx = cache.get(pat)
    if rx is None:
        try:
            rx = re.compile(re.sub(r"\(\?<(?![=!])", "(?P<", pat))
        except (re.error, OverflowError, RecursionError):
            rx = False
        cache[pat] = rx
    out.append("E" if rx is False else "1" if rx.search(text) else "0")
sys.stdout.write("\n".join(out) + "\n")
