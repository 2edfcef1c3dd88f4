"""XGrammar's suffix=, stop= and stop_capture= rule attributes (python/gramask/lark_sufstop.py),
differential against their definition written with Python's `re`, on every string of a
small alphabet:

    r[suffix=M]: B  (and stop=M) reads w  iff  re.fullmatch(B M, w) and no proper prefix
    of w fully matches B M (the committed-shortest rule of body and marker);

and its captures: the split of w is the first i where B matches w[:i] and M matches
w[i:] (the longest marker after a body); r's capture is w[:i], its stop_capture w[i:],
and an enclosing capture holds the marker with suffix= and not with stop=."""

import itertools
import re

import pytest

import gramask as gm

# (Lark marker, Python regex of the marker, Lark body regex, alphabet of w, longest w)
CASES = [
    ('"!"', r"!", r"[ab]*", "ab!", 5),
    ('"!"', r"!", r"[ab!]*", "a!", 5),
    ('"!!"', r"!!", r"[a!]*", "a!", 6),
    ("/!!+/", r"!!+", r"[ab]{1,3}", "ab!", 6),
    ("/b?a/", r"b?a", r"b|ab", "ab", 5),
    ("/x?/", r"x?", r"a+", "ax", 5),
    ('"ab"', r"ab", r"a*", "ab", 6),
    ('"AB"i', r"[aA][bB]", r"[a-z]*", "aAbB", 4),
]


def _lazy(regex, w):
    return re.fullmatch(regex, w) is not None and not any(
        re.fullmatch(regex, w[:k]) for k in range(len(w)))


def _split(body, marker, w):
    for i in range(len(w) + 1):
        if re.fullmatch(body, w[:i]) and re.fullmatch(marker, w[i:]):
            return i
    raise AssertionError(w)


def _matcher(grammar):
    compiled = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(
        grammar)
    return gm.GrammarMatcher(compiled, terminate_without_stop_token=True)


def _words(alphabet, n):
    for k in range(n + 1):
        for t in itertools.product(alphabet, repeat=k):
            yield "".join(t)


@pytest.mark.parametrize("attribute", ["suffix", "stop"])
@pytest.mark.parametrize("marker, mregex, body, alphabet, n", CASES)
def test_language_and_captures(attribute, marker, mregex, body, alphabet, n):
    grammar = gm.Grammar.from_lark(
        f'start[capture="outer"]: r "z"\n'
        f'r[capture="inner", {attribute}={marker}, stop_capture="mark"]: /{body}/')
    plain = gm.Grammar.from_lark(f'start: r "z"\nr[{attribute}={marker}]: /{body}/')
    whole = f"(?:{body})(?:{mregex})"
    seen = 0
    for w in _words(alphabet, n):
        want = _lazy(whole, w)
        m = _matcher(grammar)
        got = m.accept_string(w + "z") and m.is_terminated()
        assert got == want, (w, attribute)
        p = _matcher(plain)
        assert (p.accept_string(w + "z") and p.is_terminated()) == want, w
        if not want:
            continue
        seen += 1
        i = _split(body, mregex, w)
        outer = w if attribute == "suffix" else w[:i]
        assert m.get_captures() == [("mark", w[i:].encode()), ("inner", w[:i].encode()),
                                    ("outer", (outer + "z").encode())], w
        assert p.get_captures() == []
    assert seen > 0


@pytest.mark.parametrize("attribute", ["suffix", "stop"])
def test_repeated_occurrences_and_terminal_marker(attribute):
    # two occurrences, a marker that is a terminal; no capture on the rule itself
    grammar = gm.Grammar.from_lark(
        f'start[capture="outer"]: item item "z"\nitem[{attribute}=END]: /[ab]*/\n'
        'END: /!+/ | "??"')
    for w, ok in [("a!b??z", True), ("!!z", True), ("a!!b!z", False), ("??b!z", True),
                  ("a?b!z", False)]:
        m = _matcher(grammar)
        assert (m.accept_string(w) and m.is_terminated()) == ok, w
        if ok:
            want = w if attribute == "suffix" else re.sub(r"!|\?\?", "", w)
            assert m.get_captures() == [("outer", want.encode())], w


@pytest.mark.parametrize("attribute", ["suffix", "stop"])
def test_tokens_rollback_fork_and_serialization(attribute):
    info = gm.TokenizerInfo(["a", "b", "!", "z", "a!", "b!z", "</s>"])
    grammar = gm.Grammar.from_lark(
        f'start[capture="outer"]: r "z"\nr[capture="inner", {attribute}="!"]: /[ab]*/')
    grammar = gm.Grammar.deserialize_json(grammar.serialize_json())
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(grammar)
    m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
    assert m.accept_token(4)  # "a!" crosses the marker
    f = m.fork()
    m.rollback(1)
    assert m.get_captures() == []
    assert m.accept_token(5) and m.is_terminated()  # "b!z"
    assert m.get_captures() == [("inner", b"b"),
                                ("outer", b"b!z" if attribute == "suffix" else b"bz")]
    assert f.accept_token(3) and f.is_terminated()
    assert f.get_captures(deduplicate=False) == [
        ("inner", b"a"), ("outer", b"a!z" if attribute == "suffix" else b"az")]


@pytest.mark.parametrize("text, message", [
    ('start: r\nr[suffix="!"]: sub\nsub: /[a-z]*/', "terminal cannot reference rule"),
    ('start: r\nr[stop_capture="m"]: /a/', "stop_capture requires stop or suffix"),
    ('start: r\nr[suffix="!", stop="?"]: /a/', "stop cannot be combined with suffix"),
    ('start: r\nr[suffix=""]: /a/', "suffix must not be empty"),
    ('start: r\nr[stop=/a/i]: /a/', "flag 'i' is not supported"),
    ('start: r\nr[stop=END]: /a/', "unknown name 'END'"),
])
def test_errors(text, message):
    with pytest.raises(RuntimeError) as e:
        gm.Grammar.from_lark(text)
    assert message in str(e.value) and "Lark error at line" in str(e.value)


def test_budget_on_the_same_rule_is_refused():
    with pytest.raises(gm.UnsupportedError, match="max_tokens"):
        gm.Grammar.from_lark('start: r ">"\nr[max_tokens=2, stop="!"]: /[a-z]*/')
