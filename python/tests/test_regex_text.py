"""Whole-string regexes with edge anchors (gramask/regex_text.py): Grammar.from_regex and
testing._regex_to_ebnf against Python's re.fullmatch, the reference for the dialect."""

import random
import re

import pytest

import gramask as gm
from gramask.regex_text import ebnf_string_literal, strip_edge_anchors
from gramask.testing import _is_grammar_accept_string, _regex_to_ebnf

REGEXES = [
    r"^abc$", r"^a|b$", r"^$|^https://x\.com/", r"a|^b$|c", r"^(a|b)+$", r"[\]^$]+$", r"a\$",
    r"a\\$", r"^[$^]*$", r"^\^\$$", r"(a|b)c$", r"^x(?:y|z)*", r"^$",
    r"^([\w!#$%&'*+/=?^_`{|}~-]+(\.[\w!#$%&'*+/=?^_`{|}~-]+)*)@([a-z0-9]+\.)+[a-z]+$",
]
ALPHABET = "abcxyz$^.\\@_-/:hpst"


def strings(regex: str, rng: random.Random):
    """Short random strings, and mutations of strings the regex matches."""
    out = ["", "abc", "a", "b", "c", "ac", "bc", "$", "^", "^$", "a$", "a\\", "https://x.com/",
           "u.v@w.com"]
    out += ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(6))) for _ in range(150)]
    for s in list(out):
        if re.fullmatch(regex, s):
            for _ in range(5):
                i = rng.randrange(len(s) + 1)
                out.append(s[:i] + rng.choice(ALPHABET) + s[i:])
                if s:
                    out.append(s[:i] + s[i + 1:])
    return out


@pytest.mark.parametrize("regex", REGEXES)
def test_edge_anchors_match_fullmatch(regex):
    rng = random.Random(regex)
    grammar = gm.Grammar.from_regex(regex)
    ebnf = _regex_to_ebnf(regex)
    assert ebnf.startswith("root ::= Regex(")
    assert gm.Grammar.from_ebnf(ebnf) is not None
    checked = matched = 0
    for s in strings(regex, rng):
        want = re.fullmatch(regex, s) is not None
        assert _is_grammar_accept_string(grammar, s) == want, (regex, s)
        assert _is_grammar_accept_string(ebnf, s) == want, (regex, s, ebnf)
        checked += 1
        matched += want
    assert checked > 100 and matched > 0


def test_inner_anchors_are_refused():
    # an anchor that is not at the edge of a top-level alternative asserts something
    for regex in ["a^b", "(a|$)", "a$b", "(^a)b"]:
        with pytest.raises(gm.UnsupportedError, match="anchor"):
            gm.Grammar.from_regex(regex)
        with pytest.raises(gm.UnsupportedError, match="anchor"):
            _regex_to_ebnf(regex)


def test_strip_and_literal():
    assert strip_edge_anchors(r"^a\$") == r"a\$"
    assert strip_edge_anchors(r"^a\\$") == "a\\\\"
    assert strip_edge_anchors(r"[|^]|^b") == r"[|^]|b"
    assert strip_edge_anchors(r"(^a|b$)") == r"(^a|b$)"
    assert ebnf_string_literal('a"\\\n\x01') == '"a\\"\\\\\\n\\x01"'
    assert _regex_to_ebnf("ab", with_rule_name=False) == 'Regex("ab")'
