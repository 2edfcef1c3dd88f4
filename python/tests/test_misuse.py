"""Every misuse of the API raises a clear exception (never a crash or a silent wrong
answer): wrong arrays, ids, states, closed objects, shared matchers, batch mistakes."""

import threading
import time

import numpy as np
import pytest

import gramask as gm


@pytest.fixture
def m(json_sp32k):
    return gm.GrammarMatcher(json_sp32k)


def test_bad_bitmasks(m):
    good = gm.allocate_token_bitmask(2, 32000)
    cases = [
        (np.zeros((1, 1000), np.float32), TypeError, "int32"),
        (np.zeros((1, 1000), np.int64), TypeError, "int32"),
        (np.zeros((1, 999), np.int32), ValueError, "1000"),
        (np.zeros((1, 2, 1000), np.int32), ValueError, "dimensions"),
        (np.zeros((1000, 2), np.int32).T, ValueError, "contiguous"),
        ([0] * 1000, TypeError, "numpy array"),
    ]
    ro = np.zeros((1, 1000), np.int32)
    ro.flags.writeable = False
    cases.append((ro, ValueError, "writable"))
    for arr, exc, words in cases:
        with pytest.raises(exc, match=words):
            m.fill_next_token_bitmask(arr)
    with pytest.raises(IndexError, match="out of range"):
        m.fill_next_token_bitmask(good, 2)
    with pytest.raises(IndexError, match="out of range"):
        m.fill_next_token_bitmask(good, -1)
    with pytest.raises(IndexError):
        m.fill_next_token_bitmask(good[0], 1)
    with pytest.raises(TypeError):
        m.fill_next_token_bitmask(good, index=0, extra=1)
    with pytest.raises(TypeError):
        m.fill_next_token_bitmask()
    assert m.fill_next_token_bitmask(good, index=1)


def test_bad_tokens(m):
    with pytest.raises(ValueError, match="token id"):
        m.accept_token(-1)
    with pytest.raises(gm.ArgumentError, match="out of range"):
        m.accept_token(32000)
    with pytest.raises(ValueError, match="out of range"):
        m.accept_token(2**40)
    with pytest.raises(TypeError):
        m.accept_token("a")
    with pytest.raises(TypeError):
        m.accept_token(1.5)
    assert m.accept_token(np.int64(29912)) in (True, False)  # numpy integers are ids
    with pytest.raises(TypeError):
        m.accept_string(42)
    with pytest.raises(ValueError):
        m.validate_tokens([1, -3])
    with pytest.raises(TypeError):
        m.validate_tokens(5)


def test_rollback_misuse(m):
    with pytest.raises(ValueError, match=">= 0"):
        m.rollback(-1)
    with pytest.raises(gm.ArgumentError, match="roll back"):
        m.rollback(1)
    with pytest.raises(TypeError):
        m.rollback(1, 2)


def test_after_eos(m, sp32k):
    bm = gm.allocate_token_bitmask(1, 32000)
    assert m.accept_string("[]") and m.accept_token(sp32k.stop_token_ids[0])
    with pytest.raises(gm.StateError, match="EOS"):
        m.fill_next_token_bitmask(bm)
    assert m.accept_token(5) is False and m.accept_string("x") is False  # as XGrammar
    assert (bm == 0).all()
    m.reset()
    assert m.fill_next_token_bitmask(bm)


def test_closed_objects(json_sp32k, sp32k):
    m = gm.GrammarMatcher(json_sp32k)
    m.close()
    m.close()  # idempotent
    bm = gm.allocate_token_bitmask(1, 32000)
    for call in (lambda: m.fill_next_token_bitmask(bm), lambda: m.accept_token(1),
                 lambda: m.accept_string("["), m.fork, m.reset, m.is_terminated,
                 m.find_jump_forward_string, lambda: m.rollback(0), lambda: m.compiled_grammar):
        with pytest.raises(ValueError, match="closed"):
            call()
    with gm.GrammarMatcher(json_sp32k) as m2:
        pass
    with pytest.raises(ValueError, match="closed"):
        m2.is_accepting()
    info = gm.TokenizerInfo.from_file(sp32k_path())
    info.close()
    with pytest.raises(ValueError, match="closed"):
        info.vocab_size
    with pytest.raises(ValueError, match="closed"):
        gm.GrammarCompiler(info).compile_bundled("json")
    c = gm.GrammarCompiler(sp32k, cache_enabled=False).compile_bundled("json")
    live = gm.GrammarMatcher(c)
    c.close()
    with pytest.raises(ValueError, match="closed"):
        gm.GrammarMatcher(c)
    assert live.accept_string("[1]")  # a live matcher keeps its compiled grammar


def sp32k_path():
    from conftest import shared
    return shared("tokenizers", "sp32k")


def test_constructor_misuse(json_sp32k):
    with pytest.raises(TypeError, match="CompiledGrammar"):
        gm.GrammarMatcher("json")
    with pytest.raises(ValueError, match="max_rollback_tokens"):
        gm.GrammarMatcher(json_sp32k, max_rollback_tokens=-2)  # -1: unlimited, as XGrammar
    with pytest.raises(TypeError, match="TokenizerInfo"):
        gm.GrammarCompiler("tokenizer.json")
    # No stop_token_ids: the common end tokens, else none (XGrammar's rule).
    assert gm.TokenizerInfo([b"a"]).stop_token_ids == []
    assert gm.TokenizerInfo(["a", "</s>"]).stop_token_ids == [1]
    with pytest.raises(ValueError, match="special token id"):
        gm.TokenizerInfo([b"a"], stop_token_ids=[0], special_token_ids=[3])
    with pytest.raises(gm.ArgumentError):
        gm.TokenizerInfo([b"a"], stop_token_ids=[7])
    with pytest.raises(TypeError, match="bytes"):
        gm.TokenizerInfo([b"a", 3], stop_token_ids=[0])
    with pytest.raises(ValueError, match="format"):
        gm.Grammar.from_file("x.lark", format="yaml")
    with pytest.raises(gm.FormatError, match="expected at least one tag"):
        gm.Grammar.from_structural_tag([], ["<f="])
    with pytest.raises(gm.FormatError, match="/rules: TokenTagDispatch format must have a rules"):
        gm.Grammar.from_structural_tag({"type": "token_dispatch", "rules": []})
    with pytest.raises(ValueError, match="unknown tool format"):
        gm.Grammar.from_tools([], "mistral")
    with pytest.raises(gm.ArgumentError, match="not one of the tools"):
        gm.Grammar.from_tools([{"name": "a"}], "qwen", tool_choice="b")
    with pytest.raises(ValueError, match="max_threads"):
        gm.BatchGrammarMatcher(0)


def test_apply_misuse():
    logits = np.zeros((2, 64), np.float32)
    mask = np.zeros((2, 2), np.int32)
    with pytest.raises(TypeError, match="float"):
        gm.apply_token_bitmask_inplace(np.zeros((2, 64), np.int32), mask)
    with pytest.raises(TypeError, match="int32"):
        gm.apply_token_bitmask_inplace(logits, mask.astype(np.int64))
    with pytest.raises(ValueError, match="vocab_size"):
        gm.apply_token_bitmask_inplace(logits, mask, vocab_size=65)
    with pytest.raises(ValueError, match="rows"):
        gm.apply_token_bitmask_inplace(logits, mask[:1])
    with pytest.raises(IndexError, match="out of range"):
        gm.apply_token_bitmask_inplace(logits, mask, indices=[2])
    with pytest.raises(ValueError, match="writable"):
        ro = np.zeros((2, 64), np.float32)
        ro.flags.writeable = False
        gm.apply_token_bitmask_inplace(ro, mask)
    assert np.isfinite(logits).all()  # nothing was written by the failed calls


def test_batch_misuse(json_sp32k, sp32k):
    bm = gm.allocate_token_bitmask(4, 32000)
    a, b = gm.GrammarMatcher(json_sp32k), gm.GrammarMatcher(json_sp32k)
    with gm.BatchGrammarMatcher(2) as batch:
        with pytest.raises(RuntimeError, match="twice"):
            batch.batch_fill_next_token_bitmask([a, a], bm)
        assert a.accept_string("[")  # a was released after the failed call
        with pytest.raises(TypeError, match="GrammarMatcher"):
            batch.batch_fill_next_token_bitmask([a, "b"], bm)
        with pytest.raises(ValueError, match="indices"):
            batch.batch_fill_next_token_bitmask([a, b], bm, [0])
        with pytest.raises(ValueError, match="both"):
            batch.batch_fill_next_token_bitmask([a, b], bm, [1, 1])
        with pytest.raises(IndexError, match="out of range"):
            batch.batch_fill_next_token_bitmask([a, b], bm, [0, 4])
        with pytest.raises(ValueError, match="rows"):
            batch.batch_fill_next_token_bitmask([a, b], bm[:1])
        toy = gm.TokenizerInfo([b"a", b"b"], stop_token_ids=[1])
        other = gm.GrammarMatcher(gm.GrammarCompiler(toy).compile_lark('start: "a"'))
        with pytest.raises(ValueError, match="words"):
            batch.batch_fill_next_token_bitmask([a, other], bm)
        with pytest.raises(ValueError, match="2 token ids for 1"):
            batch.batch_accept_token([a], [1, 2])
        batch.batch_fill_next_token_bitmask([a, b], bm, [3, 1])
    with pytest.raises(ValueError, match="closed"):
        batch.batch_fill_next_token_bitmask([a], bm)


def test_logits_processor_misuse(json_sp32k):
    proc = gm.LogitsProcessor(json_sp32k, max_threads=1)
    ids = np.zeros((2, 3), np.int64)
    scores = np.zeros((2, 32000), np.float32)
    proc(ids, scores)
    with pytest.raises(ValueError, match="batch changed"):
        proc(np.zeros((3, 4), np.int64), np.zeros((3, 32000), np.float32))
    # token 0 (<unk>) was masked: sampling it is a bug in the loop, reported as such
    with pytest.raises(gm.RejectedError, match="not allowed"):
        proc(np.zeros((2, 4), np.int64), scores)
    with pytest.raises(ValueError, match="2 compiled grammars"):
        gm.LogitsProcessor([json_sp32k, json_sp32k], max_threads=1)(np.zeros((3, 1)), np.zeros((3, 32000), np.float32))


def test_one_matcher_two_threads(json_llama3):
    """A matcher filled on one thread while another uses it: RuntimeError, no race."""
    m = gm.GrammarMatcher(json_llama3)
    # numpy: a torch tensor's DLPack export holds the GIL longer, narrowing the window
    bm = np.asarray(gm.allocate_token_bitmask(1, json_llama3.vocab_size))
    stop = threading.Event()
    errors = []

    def filler():
        while not stop.is_set():
            m.fill_next_token_bitmask(bm)

    t = threading.Thread(target=filler)
    t.start()
    # until the two meet (a loaded machine may take a while: bounded by time, not by a
    # count of tries, which a busy CI host ran out of once)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            try:
                m.accept_string("")
            except RuntimeError as e:
                errors.append(e)
                break
    finally:
        stop.set()
        t.join()
    assert errors and "another thread" in str(errors[0])
