"""Pieces of XGrammar's API that its suite reaches (python/tests/xgrammar_suite.sh):
``xgrammar.kernels``' CPU kernel, bitmask application to strided logits and its
undersized-bitmask warning, and XGrammar's token macros in EBNF grammars, checked
against numpy and against masks computed token by token."""

import warnings

import numpy as np
import pytest

import gramask as gm
from gramask.kernels.apply_token_bitmask_inplace_cpu import apply_token_bitmask_inplace_cpu


def unpack(bitmask, vocab):
    return np.unpackbits(np.ascontiguousarray(bitmask).view(np.uint8), axis=-1,
                         bitorder="little")[..., :vocab].astype(bool)


def random_case(rows, vocab, seed=3):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((rows, vocab)).astype(np.float32)
    words = (vocab + 31) // 32
    bitmask = rng.integers(-2**31, 2**31, size=(rows, words), dtype=np.int64).astype(np.int32)
    return logits, bitmask


def test_cpu_kernel_is_the_c_one():
    logits, bitmask = random_case(3, 100)
    want = np.where(unpack(bitmask, 100), logits, -np.inf).astype(np.float32)
    got = logits.copy()
    apply_token_bitmask_inplace_cpu(got, bitmask)
    assert np.array_equal(got, want)
    got = logits.copy()
    apply_token_bitmask_inplace_cpu(got, bitmask, vocab_size=50, indices=np.array([2]))
    assert np.array_equal(got[:2], logits[:2])
    assert np.array_equal(got[2, :50], want[2, :50])
    assert np.array_equal(got[2, 50:], logits[2, 50:])


def test_strided_rows_numpy():
    logits, bitmask = random_case(2, 100)
    wide = np.zeros((2, 101), dtype=np.float32)
    wide[:, :100] = logits
    wide[:, 100] = 7.0
    view = wide[:, :100]
    assert not view.flags.c_contiguous
    gm.apply_token_bitmask_inplace(view, bitmask)
    assert np.array_equal(wide[:, :100], np.where(unpack(bitmask, 100), logits, -np.inf))
    assert (wide[:, 100] == 7.0).all()  # the column past the view is untouched


def test_strided_rows_torch():
    torch = pytest.importorskip("torch")
    logits, bitmask = random_case(2, 100)
    wide = torch.zeros(2, 101)
    wide[:, :100] = torch.from_numpy(logits)
    view = wide[:, :100]
    gm.apply_token_bitmask_inplace(view, torch.from_numpy(bitmask))
    want = np.where(unpack(bitmask, 100), logits, -np.inf)
    assert np.array_equal(wide[:, :100].numpy(), want)
    assert (wide[:, 100] == 0).all()


def test_undersized_bitmask_warns():
    logits = np.ones((1, 70), dtype=np.float32)
    bitmask = np.zeros((1, 2), dtype=np.int32)  # 64 tokens
    with pytest.warns(UserWarning, match="left unmasked"):
        gm.apply_token_bitmask_inplace(logits, bitmask)
    assert np.isinf(logits[0, :64]).all() and np.isfinite(logits[0, 64:]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gm.apply_token_bitmask_inplace(np.ones((1, 70), np.float32), bitmask, vocab_size=40)
        gm.apply_token_bitmask_inplace(np.ones((1, 64), np.float32), bitmask)


VOCAB = ["<s>", "</s>", "aa", "bb", "cc", "dd"]


def allowed(matcher, n):
    bitmask = gm.allocate_token_bitmask(1, n)
    matcher.fill_next_token_bitmask(bitmask)
    return {t for t in range(n) if unpack(np.asarray(bitmask), n)[0, t]}


@pytest.mark.parametrize("grammar, steps", [
    # (token accepted, then the allowed set); None: the start
    ('root ::= Token(2) | "bb"', [(None, {2, 3}), (2, {1})]),
    ('root ::= Token(2) "bb"', [(None, {2}), (2, {3}), (3, {1})]),
    ('root ::= "aa" Token(2)*', [(None, {2}), (2, {1, 2}), (2, {1, 2})]),
    ('root ::= TokenTagDispatch(excludes=(4, 5))', [(None, {0, 1, 2, 3}), (0, {0, 1, 2, 3})]),
    ('b ::= Token(5)\nroot ::= TokenTagDispatch((3, b))',
     [(None, {0, 1, 2, 3, 4, 5}), (3, {5}), (5, {0, 1, 2, 3, 4, 5})]),
    ('b ::= "cc"\nroot ::= TagDispatch(("aa", b), excludes=("dd",))',
     [(None, {0, 1, 2, 3, 4}), (2, {4}), (4, {0, 1, 2, 3, 4})]),
])
def test_token_macros(grammar, steps):
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[1])
    matcher = gm.GrammarMatcher(gm.GrammarCompiler(info).compile_grammar(grammar))
    for token, want in steps:
        if token is not None:
            assert matcher.accept_token(token)
        assert allowed(matcher, len(VOCAB)) == want
        # every allowed token is accepted, every other refused (the mask and the step agree)
        for t in range(len(VOCAB)):
            probe = matcher.fork() if hasattr(matcher, "fork") else None
            if probe is None:
                break
            assert probe.accept_token(t) == (t in want), (grammar, token, t)


def test_union_concat():
    from gramask.testing import _is_grammar_accept_string as accepts
    a = gm.Grammar.from_ebnf('root ::= r | ""\nr ::= "a"')
    b = gm.Grammar.from_regex("(bc|d)")
    c = gm.Grammar.from_json_schema({"type": "integer"})
    u = gm.Grammar.union(a, b, c)
    for s in ["", "a", "bc", "d", "12"]:
        assert accepts(u, s)
    for s in ["ab", "bcd", "a1"]:
        assert not accepts(u, s)
    cat = gm.Grammar.concat(a, b, c)
    for s in ["bc1", "ad-3"]:
        assert accepts(cat, s)
    for s in ["", "a", "bc", "abc"]:
        assert not accepts(cat, s)
    again = gm.Grammar.deserialize_json(cat.serialize_json())
    assert accepts(again, "ad0") and not accepts(again, "ad")
    with pytest.raises(gm.UnsupportedError, match="Lark grammar"):
        gm.Grammar.union(gm.Grammar.from_lark('start: "a"', start="start"), a)
    with pytest.raises(TypeError):
        gm.Grammar.concat()
