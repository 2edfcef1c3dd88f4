"""Issue 32 through the Python package: a stop token listed without special ids (the way
code ported from XGrammar builds its TokenizerInfo) is never text, and is allowed exactly
where accept_token takes it; a Lark grammar whose language holds "" accepts ""."""

import pytest

import gramask as gm
from conftest import allowed


def agree(m, vocab_size):
    """Each token's mask bit equals whether a clone of m accepts it."""
    bitmask = gm.allocate_token_bitmask(1, vocab_size)
    m.fill_next_token_bitmask(bitmask)
    mask = allowed(bitmask[0])
    for t in range(vocab_size):
        assert (t in mask) == m.fork().accept_token(t), t
    return mask


@pytest.mark.parametrize("compile_,after_a", [
    (lambda c: c.compile_ebnf('root ::= "a" [^.]* "."'), {0, 2}),
    (lambda c: c.compile_gbnf('root ::= "a" [^.]* "."'), {0, 2}),
    (lambda c: c.compile_lark('start: "a" MID? "."\nMID: /[^.a]+/'), {2}),
])
def test_stop_token_without_special_ids(compile_, after_a):
    info = gm.TokenizerInfo([b"a", b"</s>", b"."], stop_token_ids=[1])
    m = gm.GrammarMatcher(compile_(gm.GrammarCompiler(info)))
    assert agree(m, 3) == {0}
    assert m.accept_token(0)
    assert agree(m, 3) == after_a  # "</s>" is not text for [^.]*
    assert not m.accept_token(1)
    assert m.accept_string("</s>")  # the same bytes as text are content
    assert m.accept_token(2)
    assert agree(m, 3) == {1}
    assert m.accept_token(1) and m.is_terminated()


def test_stop_token_in_json_string():
    vocab = [b"[", b"</s>", b'"', b"]"]
    info = gm.TokenizerInfo(vocab, stop_token_ids=[1])
    m = gm.GrammarMatcher(gm.GrammarCompiler(info).compile_builtin_json_grammar())
    assert m.accept_token(0) and m.accept_token(2)
    assert 1 not in agree(m, 4)
    assert m.accept_token(2) and m.accept_token(3)
    assert 1 in agree(m, 4)


@pytest.mark.parametrize("text", ["start:", "start: x\nx:", "start: ()"])
def test_lark_empty_language(text):
    info = gm.TokenizerInfo([b"a", b"</s>"], stop_token_ids=[1])
    m = gm.GrammarMatcher(gm.GrammarCompiler(info).compile_lark(text))
    assert m.is_accepting()
    assert m.accept_string("")
    assert m.accept_token(1) and m.is_terminated()
