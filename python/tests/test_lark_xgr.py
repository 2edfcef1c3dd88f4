"""XGrammar's Lark dialect (Grammar.from_lark, python/gramask/lark_xgr.py): the
language of each grammar compared with Python's `re` on every string of a small
alphabet, the parts linked in by gm_grammar_link (%json, @name), and the located
errors."""

import itertools
import re

import pytest

import gramask as gm


def accepts(grammar, text):
    compiled = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(grammar)
    m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
    return m.accept_string(text) and m.is_terminated()


def strings(alphabet, n):
    for k in range(n + 1):
        for t in itertools.product(alphabet, repeat=k):
            yield "".join(t)


CASES = [
    ('start: "a"{2,3} ("b" | "c")?', r"a{2,3}[bc]?", "abc", 5),
    ('start: item{,2} "c"\nitem: "a" | "b"', r"[ab]{0,2}c", "abc", 4),
    ('%ignore " "\nstart: "a" B\nB: "b"{1,}', r"a *b+ *", "ab ", 5),
    ('%grammar_options {"allow_initial_skip": true}\n%ignore " "\nstart: "a" "b"', r" *a *b *", "ab ", 5),
    ('start: %regex {"substring_chunks":["ab","c"]}', r"|ab|c|abc", "abc", 4),
    ('start: "x" %json {"type": "integer"}', r"x-?(0|[1-9][0-9]*)", "x-01", 4),
    ('start: "a" %lark { start: B\nB: "b" } "a"', r"aba", "ab", 4),
    ('start: "A"i /[b-c]+/i{1}', r"[aA][b-cB-C]+", "aAbC", 3),
]


@pytest.mark.parametrize("lark, regex, alphabet, n", CASES)
def test_language_matches_python_re(lark, regex, alphabet, n):
    g = gm.Grammar.from_lark(lark)
    assert g.engine == "earley"  # each uses an extension of XGrammar's dialect
    again = gm.Grammar.deserialize_json(g.serialize_json())
    for s in strings(alphabet, n):
        want = re.fullmatch(regex, s) is not None
        assert accepts(g, s) == want, (lark, s)
        assert accepts(again, s) == want, (lark, s)


def test_plain_lalr_grammar_keeps_the_lalr_engine():
    assert gm.Grammar.from_lark('start: "a" "b"').engine == "lalr"


# Plain Lark that stays on the LALR engine reads as Lark's LALR parser reads by default
# (the contextual lexer), compared with Lark itself on every short string.
LALR_CASES = [
    ('start: /.../ "abc" /.../', "abc", 9),  # `/.../` lexes "abc" where "abc" cannot follow
    ("start: \"'foo'\" /a+/ | STRING /b+/\nSTRING: /'[^']*'/", "'fob", 7),
    ('start: A B\nA: /a+/\nB: /a*b/', "ab", 5),
]


@pytest.mark.parametrize("text, alphabet, n", LALR_CASES)
def test_lalr_reading_is_larks_default(text, alphabet, n):
    lark = pytest.importorskip("lark")
    g = gm.Grammar.from_lark(text)
    assert g.engine == "lalr"
    again = gm.Grammar.deserialize_json(g.serialize_json())
    parser = lark.Lark(text, parser="lalr")
    for s in strings(alphabet, n):
        try:
            parser.parse(s)
            want = True
        except lark.exceptions.LarkError:
            want = False
        assert accepts(g, s) == want, (text, s)
        assert accepts(again, s) == want, (text, s)


def test_named_grammars():
    item = gm.Grammar.from_regex("[0-9]+")
    g = gm.Grammar.from_lark('start: "[" @item ("," @item)* "]"', named_grammars={"item": item})
    for s in ["[]", "[1]", "[1,22]", "[1,]", "[a]"]:
        assert accepts(g, s) == (re.fullmatch(r"\[[0-9]+(,[0-9]+)*\]", s) is not None), s
    with pytest.raises(gm.GrammarError, match="circular named grammar reference"):
        gm.Grammar.from_lark("start: @a", named_grammars={"a": "start: @b", "b": "start: @a"})


def test_token_sets():
    info = gm.TokenizerInfo(["a", "<|t|>", "b", "</s>"], stop_token_ids=[3])
    g = gm.Grammar.from_lark("start: <[0]> <|t|>", tokenizer_info=info)
    compiled = gm.GrammarCompiler(info).compile_grammar(g)
    m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
    assert m.accept_token(0) and not m.accept_token(2) and m.accept_token(1) and m.is_terminated()


@pytest.mark.parametrize("lark, message, where", [
    ('start: "a"\nitem missing', "expected ':' after rule name", (2, 6)),
    ('start: "a"{3,2}', "repetition end must be greater", (1, 11)),
    ("start: <[3-1]>", "invalid numeric special-token range", (1, 8)),
    ('start: head\nhead[budget=1]: "a"', "attribute 'budget' is not supported", (2, 6)),
])
def test_errors_are_located(lark, message, where):
    with pytest.raises(gm.GramaskError) as e:
        gm.Grammar.from_lark(lark)
    assert isinstance(e.value, RuntimeError)
    assert message in str(e.value)
    assert (e.value.line, e.value.column) == where
    assert f"Lark error at line {where[0]}, column {where[1]}: " in str(e.value)
    assert str(e.value).endswith(" " * (where[1] - 1) + "^")


def test_unimplemented_attributes_are_refused_not_ignored():
    with pytest.raises(gm.UnsupportedError, match="max_chars"):
        gm.Grammar.from_lark('start: r\nr[max_chars=3]: "a" r "b" | "c"')  # not regular


def test_start_rule_temperature_is_the_grammars():
    info = gm.TokenizerInfo(["a", "b", "</s>"], stop_token_ids=[2])
    compiler = gm.GrammarCompiler(info)
    hot = compiler.compile_grammar(gm.Grammar.from_lark('start[temperature=0.25]: "a"+'))
    plain = compiler.compile_grammar(gm.Grammar.from_lark('start: "a"{1,}'))
    m = gm.GrammarMatcher(hot, default_temperature=0.5)
    assert m.temperature == 0.25 and m.accept_token(0) and m.temperature == 0.25
    assert m.fork().temperature == 0.25
    assert gm.GrammarMatcher(plain).temperature is None
    assert gm.GrammarMatcher(plain, default_temperature=0.5).temperature == 0.5
    with pytest.raises(gm.ArgumentError, match="finite non-negative"):
        gm.GrammarMatcher(plain, default_temperature=-1.0)
    again = gm.Grammar.deserialize_json(hot._grammar.serialize_json())
    assert gm.GrammarMatcher(compiler.compile_grammar(again)).temperature == 0.25
    # elsewhere than the start rule it holds inside the rule (test_rule_temperature.py)
    inner = gm.GrammarMatcher(compiler.compile_grammar(
        gm.Grammar.from_lark('start: "a" v\nv[temperature=0.5]: "b"')), default_temperature=0.1)
    assert inner.temperature == 0.1 and inner.accept_token(0) and inner.temperature == 0.5
