"""XGrammar's dynamic dispatch in its Lark dialect (python/gramask/lark_dispatch.py: a
[lazy] head of free text up to a trigger, at the start of a repeated rule, written as a
TagDispatch), differential: the language on every string of a small alphabet against the
definition, checked by a direct recursive reading:

    free text up to the first place where a trigger ends; there the trigger's rule goes on
    (its rest matches the next piece), then free text again; at the end, free text without
    a trigger (the tail)."""

import itertools
import re

import pytest

import gramask as gm


def _accepts(compiled, text):
    m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return m.accept_string(text) and m.is_accepting()


def _reference(tags, w):
    """tags: [(trigger, regex of the rest)]."""
    ends = [e for e in range(1, len(w) + 1) if any(w[:e].endswith(t) for t, _ in tags)]
    if not ends:
        return True
    e = ends[0]
    for t, rest in tags:
        if not w[:e].endswith(t):
            continue
        for k in range(e, len(w) + 1):
            if re.fullmatch(rest, w[e:k]) and _reference(tags, w[k:]):
                return True
    return False


GRAMMARS = [
    (r"""
start: (foo | bar)* tail
tail: TEXT
foo_head[lazy]: TEXT "@"
foo: foo_head /[0-9]/ ";"
bar_head[lazy]: /(\n|.)*#/
bar: bar_head "x"
TEXT: /(\n|.)*/
""", [("@", r"[0-9];"), ("#", r"x")], "@#0;x", 6),
    # a shared trigger: one alternative per rule
    (r"""
start: (foo | bar)* tail
tail: FREE
foo_head[lazy]: FREE "<"
foo: foo_head "a" ">"
bar_head[lazy]: FREE "<"
bar: bar_head "b"+ ">"
FREE: TEXT
TEXT: /.*/s
""", [("<", r"a>"), ("<", r"b+>")], "<ab>", 6),
    # a two-character trigger and a rest that may hold a trigger's first character
    (r"""
start: tool* tail
tail: TEXT
head[lazy]: TEXT "<t"
tool: head /[<x]*/ ">"
TEXT: /(\n|.)*/
""", [("<t", r"[<x]*>")], "<tx>", 6),
]


@pytest.mark.parametrize("lark, tags, alphabet, n", GRAMMARS)
def test_dispatch_language_matches_the_definition(lark, tags, alphabet, n):
    grammar = gm.Grammar.from_lark(lark)
    assert "TagDispatch" in str(grammar)
    compiled = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(grammar)
    yes = 0
    for k in range(n + 1):
        for t in itertools.product(alphabet, repeat=k):
            w = "".join(t)
            want = _reference(tags, w)
            assert _accepts(compiled, w) == want, (w, want)
            yes += want
    assert yes > 10


def test_standalone_head_is_text_up_to_its_first_trigger():
    grammar = gm.Grammar.from_lark('start: head\nhead[lazy]: TEXT "@"\nTEXT: /(\\n|.)*/')
    compiled = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(grammar)
    for k in range(5):
        for t in itertools.product("a@", repeat=k):
            w = "".join(t)
            assert _accepts(compiled, w) == ("@" not in w or w.index("@") == len(w) - 1), w


def test_a_consumed_rule_used_elsewhere_is_refused():
    lark = """
start: s other
s: tool* tail
other: tool
tail: TEXT
head[lazy]: TEXT "@"
tool: head "x"
TEXT: /(\\n|.)*/
"""
    with pytest.raises(gm.UnsupportedError, match="consumed by the dynamic dispatch of 's'"):
        gm.Grammar.from_lark(lark)
