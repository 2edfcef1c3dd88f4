"""Lazy rules (`rule[lazy]`, note [lazy rules] in earley/fsm_build.c), differential:
the language of `root ::= "<" r ">"` with r lazy, on every string of a small alphabet,
against the definition with Python's `re`:

    "<" w ">" is a sentence  iff  re.fullmatch(R, w) and no proper prefix of w fully
    matches R (each occurrence ends at its first possible end)

and, where that language is finite, every mask after every prefix of every sentence
against the sentences themselves (a token is allowed iff some sentence continues the
prefix with its bytes; EOS iff the prefix is a sentence)."""

import itertools
import re

import pytest

import gramask as gm

# (EBNF body of r, Python regex of r, alphabet of w, longest w)
CASES = [
    ('[a-z]+', r"[a-z]+", "ab", 4),
    ('[a-z]*', r"[a-z]*", "ab", 3),
    ('"ab" | "abc"', r"ab|abc", "abc", 4),
    ('"aa" | "bb" | "a" "b"*', r"aa|bb|ab*", "ab", 4),
    ('("a" | "b")* "<e>"', r"[ab]*<e>", "a<e>", 5),
    ('[ab] [ab] | "b"', r"[ab][ab]|b", "ab", 4),
    ('"x" ("y" "z")? "y"?', r"x(yz)?y?", "xyz", 4),
]


def _compile(ebnf, words=()):
    info = gm.TokenizerInfo(list(words))
    return gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(gm.Grammar.from_ebnf(ebnf))


def _lazy_ok(regex, w):
    return re.fullmatch(regex, w) is not None and not any(
        re.fullmatch(regex, w[:k]) for k in range(len(w)))


@pytest.mark.parametrize("body, regex, alphabet, n", CASES)
def test_language_is_the_shortest_matches(body, regex, alphabet, n):
    compiled = _compile(f'root ::= "<" r ">"\nr[lazy] ::= {body}')
    greedy = _compile(f'root ::= "<" r ">"\nr ::= {body}')
    seen = 0
    for k in range(n + 1):
        for t in itertools.product(alphabet, repeat=k):
            w = "".join(t)
            m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
            got = m.accept_string(f"<{w}>") and m.is_accepting()
            assert got == _lazy_ok(regex, w), (body, w)
            g = gm.GrammarMatcher(greedy, terminate_without_stop_token=True)
            assert (g.accept_string(f"<{w}>") and g.is_accepting()) == bool(
                re.fullmatch(regex, w)), (body, w)
            seen += got
    assert seen > 0


FINITE = [('[a-z]+', r"[a-z]+"), ('"ab" | "abb"', r"ab|abb"), ('[ab] [ab] | "b"', r"[ab][ab]|b"),
          ('[a-z]*', r"[a-z]*")]
WORDS = ["<", ">", "a", "b", "ab", "a>", "ab>", "b>", "bb", "abb", "<a", "</s>"]


@pytest.mark.parametrize("body, regex", FINITE)
def test_masks_against_the_sentences(body, regex):
    # the lazy languages here are finite: every word has at most 3 letters of "ab"
    words = ["".join(t) for k in range(5) for t in itertools.product("ab", repeat=k)
             if _lazy_ok(regex, "".join(t))]
    assert words and max(map(len, words)) <= 3
    sentences = [f"<{w}>" for w in words]
    compiled = _compile(f'root ::= "<" r ">"\nr[lazy] ::= {body}', WORDS)
    eos = WORDS.index("</s>")
    prefixes = {s[:k] for s in sentences for k in range(len(s) + 1)}
    for p in sorted(prefixes):
        m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
        assert m.accept_string(p)
        mask = gm.allocate_token_bitmask(1, len(WORDS))
        m.fill_next_token_bitmask(mask)
        got = [i for i in range(len(WORDS)) if (int(mask[0, i // 32]) >> (i % 32)) & 1]
        want = [i for i, tok in enumerate(WORDS) if i != eos and
                any(s.startswith(p + tok) for s in sentences)]
        if p in sentences:
            want.append(eos)
        assert sorted(got) == sorted(want), (body, p, got, want)


def test_lazy_is_printed_read_back_and_kept_apart_from_the_greedy_rule():
    g = gm.Grammar.from_ebnf('root ::= "<" r ">" s\nr[lazy] ::= [a-z]+\ns ::= [a-z]+')
    assert "r[lazy] ::=" in str(g)
    # r and s have equal bodies: neither merged nor sharing an automaton
    for grammar in (g, gm.Grammar.from_ebnf(str(g))):
        compiled = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=True).compile_grammar(grammar)
        m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
        assert m.accept_string("<a>bc") and m.is_accepting()
        assert not gm.GrammarMatcher(compiled, terminate_without_stop_token=True).accept_string("<ab>")
    combined = gm.Grammar.from_ebnf('root ::= r[lazy]\nr[capture="c", lazy] ::= [a-z]+'
                                    .replace("root ::= r[lazy]", "root ::= r"))
    assert 'r[capture="c", lazy] ::=' in str(combined)


def test_a_body_that_reads_rules_is_refused():
    with pytest.raises(gm.GrammarError, match=r"rule r\[lazy\]: its body is not terminal-like"):
        gm.Grammar.from_ebnf('root ::= "<" r ">"\nr[lazy] ::= sub\nsub ::= sub [a-z] | [a-z]')
