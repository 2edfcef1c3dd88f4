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


def _dispatch_reference(w, attribute):
    """`start[capture="o"]: tool* tail` with `tool: head "x"` and
    `head[capture="h", X="<t>", stop_capture="m"]: TEXT`: the free text in which each "<t>"
    is followed by "x"; each tool's head is the text since the previous one's "x"."""
    parts = w.split("<t>")
    caps = []
    for k, seg in enumerate(parts[:-1]):
        text = seg[1:] if k else seg
        if k and not seg.startswith("x"):
            return None
        caps += [("m", b"<t>"), ("h", text.encode())]
    if len(parts) > 1 and not parts[-1].startswith("x"):
        return None
    outer = w if attribute == "suffix" else w.replace("<t>", "")
    return caps + [("o", outer.encode())]


@pytest.mark.parametrize("attribute", ["suffix", "stop"])
def test_dispatch_heads_captures(attribute):
    grammar = gm.Grammar.from_lark(
        f'start[capture="o"]: tool* tail\ntail: TEXT\n'
        f'head[capture="h", {attribute}="<t>", stop_capture="m"]: TEXT\ntool: head "x"\n'
        'TEXT: /(\\n|.)*/')
    again = [gm.Grammar.from_ebnf(str(grammar)),
             gm.Grammar.deserialize_json(grammar.serialize_json()),
             gm.Grammar.concat(gm.Grammar.from_ebnf('root ::= ""'), grammar)]
    seen = 0
    for n in range(1, 5):
        for t in itertools.product(["a", "x", "<t>"], repeat=n):
            w = "".join(t)
            want = _dispatch_reference(w, attribute)
            for g in [grammar] + again:
                m = _matcher(g)
                got = m.accept_string(w) and m.is_terminated()
                assert got == (want is not None), w
                if got:
                    assert m.get_captures() == want, w
            seen += want is not None and "<t>" in w
    assert seen > 5


@pytest.mark.parametrize("attribute", ["suffix", "stop"])
def test_dispatch_root_head_captures(attribute):
    # `start: r` with an any-text body: free text without the marker, or up to its first one
    grammar = gm.Grammar.from_lark(
        f'start[capture="o"]: r\nr[capture="h", {attribute}="<e>", stop_capture="m"]: TEXT\n'
        'TEXT: /(\\n|.)*/')
    for w in ["ab", "a<e", "<e>", "ab<e>"]:
        m = _matcher(grammar)
        assert m.accept_string(w) and m.is_terminated(), w
        if w.endswith("<e>"):
            outer = w if attribute == "suffix" else w[:-3]
            want = [("m", b"<e>"), ("h", w[:-3].encode()), ("o", outer.encode())]
        else:
            want = [("h", w.encode()), ("o", w.encode())]
        assert m.get_captures() == want, w
    for w in ["<e>a", "a<e><e>"]:
        m = _matcher(grammar)
        assert not (m.accept_string(w) and m.is_terminated()), w


def test_stop_marker_is_cut_only_from_captures_that_can_hold_it():
    # b's occurrence over "x!" is in the dead branch a; c cannot reach b: c keeps its "!"
    grammar = gm.Grammar.from_lark('start: a | c\na[capture="a"]: b "q"\nb[stop="!"]: "x"\n'
                                   'c[capture="c"]: "x!" "y"')
    m = _matcher(grammar)
    assert m.accept_string("x!y") and m.is_terminated()
    assert m.get_captures() == [("c", b"x!y")]
    # an enclosing grammar's capture holds a named grammar's stop rule
    grammar = gm.Grammar.from_lark('start[capture="o"]: @g "y"',
                                   named_grammars={"g": 'start: b\nb[stop="!"]: "x"'})
    m = _matcher(grammar)
    assert m.accept_string("x!y") and m.is_terminated()
    assert m.get_captures() == [("o", b"xy")]
