"""XGrammar's ``r[max_chars=n]`` on regular bodies of any shape (note [max_chars on regular
bodies] in ir/ebnf_max_chars_regular.c), against a brute-force reference written from the
definition alone (note [rule max_chars]):

  r's text w is a string of the body's language R none of whose proper prefixes of n
  characters or more is in R.

The grammar is `root ::= r ">"` (no body here holds '>'); every string up to N characters
over the alphabet must be a sentence iff the reference says so, and every prefix of a
reference sentence must be accepted as a prefix. Nested bounds: a bounded rule used in
another's body counts with its own bound first (XGrammar's nested budgets)."""

import itertools
import re

import pytest

import gramask as gm

ALPHABET = ["a", "b", "\u00e9", ">"]
N = 5


def strings():
    for k in range(N + 1):
        for t in itertools.product(ALPHABET, repeat=k):
            yield "".join(t)


def bounded(regex, n):
    body = re.compile(regex)

    def ok(w):
        return bool(body.fullmatch(w)) and not any(
            k >= n and body.fullmatch(w[:k]) for k in range(len(w)))
    return ok


# (rules after `root ::= r ">"`, the reference's test of r's text)
CASES = [
    # a repetition of a choice of strings (not of single characters)
    *[(f'r[max_chars={n}] ::= ("ab" | "b")*', bounded("(?:ab|b)*", n)) for n in (0, 1, 2, 3)],
    # a sequence holding another rule
    *[(f'r[max_chars={n}] ::= "a" t\nt ::= [b\u00e9]+ "a"?', bounded("a[b\u00e9]+a?", n))
      for n in (1, 2, 3)],
    # a finite language with strings longer than the bound
    *[(f'r[max_chars={n}] ::= "ab" | "abab" | "b" | "ba\u00e9"', bounded("ab|abab|b|ba\u00e9", n))
      for n in (1, 2, 3)],
    # nested: the inner rule's own bound first, then the outer one
    ('r[max_chars=3] ::= "a" t\nt[max_chars=2] ::= [b\u00e9]*',
     bounded("a(?:[b\u00e9]{0,2})", 3)),
    ('r[max_chars=2] ::= "a" t\nt[max_chars=3] ::= [b\u00e9]*',
     bounded("a(?:[b\u00e9]{0,3})", 2)),
]


@pytest.mark.parametrize("rules, ok", CASES, ids=[c[0].split("\n")[0] for c in CASES])
def test_regular_bodies_against_the_reference(rules, ok):
    text = 'root ::= r ">"\n' + rules
    compiled = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(
        gm.Grammar.from_ebnf(text))
    sentences = {x for x in strings() if x.endswith(">") and x.count(">") == 1 and ok(x[:-1])}
    assert sentences
    prefixes = {s[:k] for s in sentences for k in range(len(s) + 1)}
    for x in strings():
        m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
        prefix = m.accept_string(x)
        assert (prefix and m.is_terminated()) == (x in sentences), (text, x)
        assert prefix or x not in prefixes, (text, x)


def test_substring_body():
    # XGrammar's test_substring_macro_max_chars, with the bound's cut spelled out
    g = gm.Grammar.from_ebnf('root ::= s\ns[max_chars=2] ::= Substring("a", "b", "c")')
    compiled = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(g)
    for text, want in [("", True), ("a", True), ("ab", True), ("bc", True), ("abc", False)]:
        m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
        assert (m.accept_string(text) and m.is_terminated()) == want, text


def test_bodies_that_are_not_regular_are_refused():
    with pytest.raises(gm.UnsupportedError, match="max_chars is supported on a rule whose body is "
                                                  "a regular language"):
        gm.Grammar.from_ebnf('root ::= r ">"\nr[max_chars=2] ::= "a" r "b" | "c"')
