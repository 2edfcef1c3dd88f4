"""Where gramask's XGrammar front ends read a text as XGrammar documents it (issue 34,
branch xmlq), each checked beyond XGrammar's own suite:

- Lark terminals of XGrammar's Lark dialect (Grammar.from_lark without gramask's
  options) may use XGrammar's regex additions (\\cX, (?<name>...), \\e): compared with
  Python `re` on the same language written in Python's syntax, on every string of a
  small alphabet;
- a "..." literal with an escape that Lark and XGrammar read differently ("\\b" is two
  characters to Lark, a backspace to XGrammar) is XGrammar's: the grammar leaves the
  LALR engine, and the escape is the one character on every path;
- a leading (?i) in EBNF's Regex(...) is its flags="i": ASCII letters fold, no others
  (while from_regex keeps Python's Unicode folding);
- [] and [^] in XGrammar's regex dialect are refused (ECMAScript reads them as the empty
  class and any character, Python as the start of a class holding ']');
- a structural tag {"format": ...} without "type" is XGrammar's wrapper (its default).
"""

import itertools
import json
import re

import pytest

import gramask as xgr
from gramask.testing import _is_grammar_accept_string


def strings(alphabet, n):
    for k in range(n + 1):
        for t in itertools.product(alphabet, repeat=k):
            yield "".join(t)


# (Lark grammar in XGrammar's dialect, the same language in Python's re, alphabet, length)
LARK_REGEX_CASES = [
    (r"start: /x\cAy/", "x\x01y", "xy\x01a", 4),
    (r"start: /[\cA-\cC]+/", "[\x01-\x03]+", "\x01\x03\x04a", 3),
    (r"start: /(?<name>ab)+(?P<other>c)/", r"(?:ab)+c", "abc", 6),
    (r"start: /(?<n>a|b)c?/i", r"(?i:a|b)(?i:c)?", "abcAC", 3),
    (r"start: /\e\[[0-9]m/", "\x1b\\[[0-9]m", "\x1b[1m", 4),
    (r"start: A B" "\n" r"A: /a(?<x>b)?/" "\n" r"B: /\cJ/", "ab?\n", "ab\n", 4),
]


@pytest.mark.parametrize("lark, regex, alphabet, n", LARK_REGEX_CASES)
def test_lark_terminal_xgrammar_regex_additions(lark, regex, alphabet, n):
    g = xgr.Grammar.from_lark(lark)
    again = xgr.Grammar.deserialize_json(g.serialize_json())
    py = re.compile(regex)
    verdicts = set()
    for s in strings(alphabet, n):
        want = py.fullmatch(s) is not None
        verdicts.add(want)
        assert _is_grammar_accept_string(g, s) == want, (lark, s)
        assert _is_grammar_accept_string(again, s) == want, (lark, s)
    assert verdicts == {True, False}  # the comparison can fail either way


def test_lark_terminal_bad_control_escape_is_refused():
    # \c must be followed by an ASCII letter (ECMAScript); Python refuses \c altogether
    with pytest.raises(xgr.GrammarSyntaxError, match="Lark error at line 1"):
        xgr.Grammar.from_lark(r"start: /x\c1/")


# (escape, the character XGrammar reads)
XGR_ESCAPES = [("b", "\b"), ("/", "/"), ("'", "'"), ("0", "\0"), ("v", "\v"), ("a", "\a")]


@pytest.mark.parametrize("esc, ch", XGR_ESCAPES)
def test_literal_escape_is_xgrammars(esc, ch):
    g = xgr.Grammar.from_lark('start: "x\\%s" "y"' % esc)
    assert g.engine == "earley"
    assert _is_grammar_accept_string(g, "x" + ch + "y")
    assert not _is_grammar_accept_string(g, "x\\" + esc + "y")
    # in a terminal of its own and in a grammar with XGrammar's extensions: the same
    for text in ['start: T\nT: "x\\%s" "y"' % esc, 'start: "x\\%s" "y"{1}' % esc]:
        h = xgr.Grammar.from_lark(text)
        assert _is_grammar_accept_string(h, "x" + ch + "y"), text
        assert not _is_grammar_accept_string(h, "x\\" + esc + "y"), text


def test_literal_escapes_lark_and_xgrammar_share_keep_lalr():
    g = xgr.Grammar.from_lark('start: "x\\n\\t\\"\\\\" "\\x41\\u0042"')
    assert g.engine == "lalr"
    assert _is_grammar_accept_string(g, 'x\n\t"\\AB')
    # gramask's own Lark front end (any of its options) stays Lark's: "\b" is two characters
    lark = xgr.Grammar.from_lark('start: "x\\b"', start="start")
    assert _is_grammar_accept_string(lark, "x\\b")
    assert not _is_grammar_accept_string(lark, "x\b")


# (pattern, string, accepted): (?i) folds ASCII letters only, as flags="i"
INLINE_FOLD = [
    ("(?i)abc", "aBC", True),
    ("(?i)Σ", "Σ", True),
    ("(?i)Σ", "σ", False),
    ("(?i)[à-ö]+", "àö", True),
    ("(?i)[à-ö]+", "ÀÖ", False),
    ("(?i)k", "\u212a", False),  # the Kelvin sign folds to k in Python, not here
    ("(?i)[^k]", "K", False),
    ("(?i)[^k]", "\u212a", True),
    ("(?iu)Σ", "σ", True),  # a type flag chosen in the pattern is Python's
]


@pytest.mark.parametrize("pattern, s, accepted", INLINE_FOLD)
def test_regex_macro_inline_ignorecase_is_ascii(pattern, s, accepted):
    g = xgr.Grammar.from_ebnf('root ::= Regex("%s")' % pattern)
    assert _is_grammar_accept_string(g, s) == accepted
    # the same as flags="i" (where the pattern names no type flag)
    if "u)" not in pattern:
        h = xgr.Grammar.from_ebnf('root ::= Regex("%s", flags="i")' % pattern[4:])
        assert _is_grammar_accept_string(h, s) == accepted


def test_from_regex_inline_ignorecase_stays_python():
    g = xgr.Grammar.from_regex("(?i)Σ")
    for s in ["Σ", "σ", "ς", "s"]:
        assert _is_grammar_accept_string(g, s) == (re.fullmatch("(?i)Σ", s) is not None), s


@pytest.mark.parametrize("pattern", ["[]", "[^]", "[]a]", "x[^]y]"])
def test_empty_class_refused_in_xgrammar_dialect(pattern):
    with pytest.raises(xgr.GrammarSyntaxError, match="Empty character class"):
        xgr.Grammar.from_ebnf('root ::= Regex("%s")' % pattern)
    with pytest.raises(xgr.GrammarSyntaxError, match="Empty character class"):
        xgr.Grammar.from_regex(pattern)


def test_escaped_bracket_in_class_is_fine():
    g = xgr.Grammar.from_ebnf(r'root ::= Regex("[\\]a]+")')
    for s in ["]", "a]a", "b", ""]:
        assert _is_grammar_accept_string(g, s) == (re.fullmatch(r"[\]a]+", s) is not None), s


def test_structural_tag_type_defaults_to_structural_tag():
    fmt = {"type": "sequence", "elements": [
        {"type": "tag", "begin": "<a>", "content": {"type": "const_string", "value": "x"},
         "end": "</a>"},
        {"type": "any_text"}]}
    bare = xgr.Grammar.from_structural_tag(json.dumps({"format": fmt}))
    wrapped = xgr.Grammar.from_structural_tag({"type": "structural_tag", "format": fmt})
    for s in ["<a>x</a>", "<a>x</a>tail", "<a>y</a>", "x"]:
        assert _is_grammar_accept_string(bare, s) == _is_grammar_accept_string(wrapped, s), s
    assert _is_grammar_accept_string(bare, "<a>x</a>tail")
    assert not _is_grammar_accept_string(bare, "<a>y</a>")
    # a type that is present must still be "structural_tag"
    with pytest.raises(xgr.FormatError, match="/type"):
        xgr.Grammar.from_structural_tag({"type": "tag", "format": fmt})
    # and the wrapper's other keys are still checked
    with pytest.raises(xgr.FormatError, match="formt|unknown"):
        xgr.Grammar.from_structural_tag({"format": fmt, "formt": 1})


# (Lark grammar with %ignore, its language under XGrammar's reading in Python's re)
IGNORE_CASES = [
    ('%ignore " "\nstart: "a" B\nB: "b"+', r"a *b+ *"),
    ('%ignore /[ _]+/\nstart: "a" "b"', r"a[ _]*b[ _]*"),
    ('%ignore " "\nstart: item+\nitem: "a" | "b"', r"(?:[ab] *)+"),
]


@pytest.mark.parametrize("lark, regex", IGNORE_CASES)
def test_ignore_is_xgrammars_no_initial_skip(lark, regex):
    """XGrammar inserts %ignore after each lexeme, never before the first (unless
    allow_initial_skip); Lark also skips it at the start. from_lark is XGrammar's."""
    g = xgr.Grammar.from_lark(lark)
    assert g.engine == "earley"
    py = re.compile(regex)
    verdicts = set()
    for s in strings("ab _", 4):
        want = py.fullmatch(s) is not None
        verdicts.add(want)
        assert _is_grammar_accept_string(g, s) == want, (lark, s)
    assert verdicts == {True, False}
    # gramask's own Lark front end (any of its options) is Lark's: the start may skip
    own = xgr.Grammar.from_lark(lark, start="start")
    assert own.engine == "lalr"
    assert _is_grammar_accept_string(own, " ab")
    assert not _is_grammar_accept_string(g, " ab")


def test_compile_lark_keeps_larks_reading():
    """GrammarCompiler.compile_lark is gramask's own Lark: plain Lark stays on the LALR
    engine with Lark's reading (%ignore also before the first lexeme, "\\b" two
    characters), through serialization too; from_lark is XGrammar's."""
    comp = xgr.GrammarCompiler(xgr.TokenizerInfo([]), cache_enabled=False)
    for text, lark_only, xgr_only in [('%ignore " "\nstart: "a" "b"', " ab", None),
                                      ('start: "x\\b"', "x\\b", "x\b")]:
        own = comp.compile_lark(text)
        assert own.grammar.engine == "lalr"
        again = xgr.Grammar.deserialize_json(own.grammar.serialize_json())
        theirs = xgr.Grammar.from_lark(text)
        for g, accepts in [(own.grammar, True), (again, True), (theirs, False)]:
            assert _is_grammar_accept_string(g, lark_only) == accepts, (text, g)
            if xgr_only is not None:
                assert _is_grammar_accept_string(g, xgr_only) == (not accepts), (text, g)


def test_union_concat_of_from_lark_grammars():
    """Grammar.union/concat combine Earley grammars: a from_lark grammar that stayed on
    the LALR engine joins as XGrammar reads it (compared with Python re; serialized too)."""
    left = xgr.Grammar.from_lark('start: "a" | "b"')
    right = xgr.Grammar.from_lark("start: /[0-9]+/")
    assert left.engine == "lalr" and right.engine == "lalr"
    ebnf = xgr.Grammar.from_ebnf('root ::= "x"')
    for g, regex in [(xgr.Grammar.union(left, right, ebnf), r"a|b|[0-9]+|x"),
                     (xgr.Grammar.concat(left, right), r"[ab][0-9]+"),
                     (xgr.Grammar.concat(ebnf, left), r"x[ab]")]:
        again = xgr.Grammar.deserialize_json(g.serialize_json())
        verdicts = set()
        for s in strings("ab1x", 3):
            want = re.fullmatch(regex, s) is not None
            verdicts.add(want)
            assert _is_grammar_accept_string(g, s) == want, (regex, s)
            assert _is_grammar_accept_string(again, s) == want, (regex, s)
        assert verdicts == {True, False}
    # gramask's own Lark (its options, compile_lark) has Lark's reading: not combined
    with pytest.raises(xgr.UnsupportedError, match="Lark grammar"):
        xgr.Grammar.union(xgr.Grammar.from_lark('start: "a"', start="start"), ebnf)
