"""XGrammar's regex dialect (lexer/regex_parse.c note [xgrammar regex]) against Python `re`:
each pattern in the dialect is paired with the same language written in Python's syntax
(\\u{h} as \\U0000000h, \\cX as the control character, (?<n>...) as (?P<n>...), \\e as \\x1b,
edge anchors kept: re.fullmatch gives them the same meaning). Every string of a random
sample, and every prefix of it, must get the same verdict from Regex(...) in EBNF, from
Grammar.from_regex and from re.fullmatch."""

import random
import re

import pytest

import gramask as xgr
from gramask.testing import _is_grammar_accept_string

# (XGrammar's pattern, Python's pattern, alphabet of the sample, strings it must accept)
PAIRS = [
    (r"\u{41}\u0042\u{0043}", r"ABC", "ABCD", ["ABC"]),
    (r"[\u{61}-\u{63}]+\u{1F600}?", "[a-c]+\U0001F600?", "abcd\U0001F600\U0001F601", ["a\U0001F600"]),
    (r"x\cAy|\cj", "x\x01y|\n", "xy\x01\n\x0a", ["x\x01y"]),
    (r"(?<first>ab)+(?<second>c|d)*", r"(?P<first>ab)+(?P<second>c|d)*", "abcd", ["abcd"]),
    (r"^[0-9]+(\.[0-9]*)?$", r"^[0-9]+(\.[0-9]*)?$", "01.9a", ["1.9"]),
    (r"a\$", r"a\$", "a$", ["a$"]),
    (r"\e\[[0-9]{1,2}m", "\x1b\\[[0-9]{1,2}m", "\x1b[019m", ["\x1b[1m", "\x1b[10m"]),
    (r"(?i)\u{61}b(?<x>c)", r"(?i)\U00000061b(?P<x>c)", "abcABC", ["abc", "AbC"]),
]


def sample(alphabet: str, rng: random.Random):
    out = {""}
    for _ in range(120):
        out.add("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))))
    return sorted(out)


@pytest.mark.parametrize("case", range(len(PAIRS)))
def test_dialect_against_python_re(case):
    ours, theirs, alphabet, positives = PAIRS[case]
    py = re.compile(theirs)
    grammars = [xgr.Grammar.from_ebnf('root ::= Regex("' + ours.replace("\\", "\\\\") + '")'),
                xgr.Grammar.from_regex(ours)]
    rng = random.Random(case)
    accepted = 0
    for s in sample(alphabet, rng) + positives:
        want = py.fullmatch(s) is not None
        accepted += want
        for g in grammars:
            assert _is_grammar_accept_string(g, s) == want, (ours, s)
    # the sample reaches both verdicts, so the comparison can fail either way
    assert 0 < accepted < len(sample(alphabet, random.Random(case))) + len(positives)


@pytest.mark.parametrize("pattern, message", [
    (r"\u{110000}", "beyond the Unicode range"),
    (r"\u{}", "must be followed by hexadecimal digits"),
    (r"\uZZ", "must be followed by four hexadecimal digits"),
    (r"\x4", "must be followed by two hexadecimal digits"),
    (r"\c1", "must be followed by an ASCII letter"),
    (r"\p{L}", "Unicode property escape"),
    (r"(?<n>a)\k<n>", "Backreference"),
    (r"a\b", "Word boundary assertion"),
    (r"a^b", "anchor"),
])
def test_dialect_errors(pattern, message):
    with pytest.raises(RuntimeError, match=re.escape(message)):
        xgr.Grammar.from_regex(pattern)


def test_lark_terminals_stay_python():
    """Terminals of gramask's own Lark front end (any of its options chooses it: here
    ``start``) are Python's re, so the dialect's additions are errors there; XGrammar's
    Lark dialect (``from_lark`` without them, lark_xgr.py) reads its regexes as XGrammar
    does, where \\u{41} is "A"."""
    text = 'start: A\nA: /\\u{41}/\n'
    with pytest.raises(Exception, match=r"bad escape|incomplete escape"):
        xgr.Grammar.from_lark(text, start="start")
    g = xgr.Grammar.from_lark(text)
    assert _is_grammar_accept_string(g, "A")
    assert not _is_grammar_accept_string(g, "u{41}")


def test_large_counts_against_python_re():
    """A count above the lexer's default limit (1000) is read in Regex(...): the engine keeps
    it as a counter. Python `re` decides the same strings."""
    pattern = r"(ab){2,5000}c"
    g = xgr.Grammar.from_ebnf('root ::= Regex("' + pattern + '")')
    py = re.compile(pattern)
    for n in (0, 1, 2, 3, 999, 1000, 1001, 4999, 5000, 5001):
        for s in ("ab" * n + "c", "ab" * n):
            assert _is_grammar_accept_string(g, s) == (py.fullmatch(s) is not None), (n, s[-4:])

