"""Token-level structural-tag formats (XGrammar's token, exclude_token, any_tokens,
token_triggered_tags, token_dispatch; note [token formats] in dispatch/stag_token.c)
against a brute-force reference written from XGrammar's documentation alone.

Each case's language is a Python `re` pattern over token sequences, one character per
token id (a text such as const_string "AB" is every tokenization of it). The reference
calls a token allowed after a prefix iff some completion of at most DEPTH more tokens
matches (every case here completes within DEPTH from any viable prefix), and the stop
token iff the prefix itself matches. Every mask along random walks, with rollback, must
equal it. On real tokenizers (qwen3, deepseek_v3) the masks are checked against the
definition directly: every token but the excluded ones, the stop ids and padding."""

import itertools
import random

import pytest

import gramask as xgr
from conftest import allowed, shared

VOCAB = ["<b>", "x", "y", "<e>", "<eos>", "A", "B", "AB", "<t1>", "<t2>", "</t>"]
EOS = 4
B, X, Y, E, A_, B_, AB, T1, T2, ET = 0, 1, 2, 3, 5, 6, 7, 8, 9, 10
DEPTH = 3
ALL = [i for i in range(len(VOCAB)) if i != EOS]


def ch(*ids):
    return "".join(chr(0x100 + i) for i in ids)


def but(*ids):
    """Any one token except ids and the stop token."""
    return "[" + ch(*[i for i in ALL if i not in ids]) + "]"


CONST_AB = f"(?:{ch(A_, B_)}|{ch(AB)})"

# (structural tag format, reference pattern over token characters)
CASES = [
    ({"type": "token", "token": X}, ch(X)),
    ({"type": "exclude_token", "exclude_tokens": [X, Y]}, but(X, Y)),
    ({"type": "any_tokens", "exclude_tokens": [X]}, f"{but(X)}*"),
    ({"type": "any_tokens", "max_tokens": 2}, f"{but()}{{0,2}}"),
    ({"type": "any_tokens", "max_tokens": 0}, ""),
    # the enclosing tag's token end is excluded (end detection)
    ({"type": "tag", "begin": {"type": "token", "token": B},
      "content": {"type": "any_tokens", "max_tokens": 3}, "end": {"type": "token", "token": E}},
     f"{ch(B)}{but(E)}{{0,3}}{ch(E)}"),
    ({"type": "tag", "begin": {"type": "token", "token": B},
      "content": {"type": "exclude_token", "exclude_tokens": [X]},
      "end": {"type": "token", "token": E}},
     f"{ch(B)}{but(E, X)}{ch(E)}"),
    # a text end detects nothing: the region may hold any token
    ({"type": "tag", "begin": {"type": "token", "token": B},
      "content": {"type": "any_tokens", "max_tokens": 1}, "end": "AB"},
     f"{ch(B)}{but()}?{CONST_AB}"),
    # token_triggered_tags: loop, stop_after_first, at_least_one, both
    ({"type": "token_triggered_tags", "trigger_tokens": [T1, T2], "exclude_tokens": [Y],
      "tags": [{"type": "tag", "begin": {"type": "token", "token": T1},
                "content": {"type": "const_string", "value": "AB"},
                "end": {"type": "token", "token": ET}},
               {"type": "tag", "begin": {"type": "token", "token": T2},
                "content": {"type": "any_tokens", "max_tokens": 1},
                "end": {"type": "token", "token": ET}}]},
     f"(?:{but(T1, T2, Y)}|{ch(T1)}{CONST_AB}{ch(ET)}|{ch(T2)}{but(ET)}?{ch(ET)})*"),
    ({"type": "token_triggered_tags", "trigger_tokens": [T1], "stop_after_first": True,
      "tags": [{"type": "tag", "begin": {"type": "token", "token": T1},
                "content": {"type": "const_string", "value": "AB"},
                "end": {"type": "token", "token": ET}}]},
     f"{but(T1)}*(?:{ch(T1)}{CONST_AB}{ch(ET)})?"),
    ({"type": "token_triggered_tags", "trigger_tokens": [T1], "at_least_one": True,
      "tags": [{"type": "tag", "begin": {"type": "token", "token": T1},
                "content": {"type": "const_string", "value": "AB"},
                "end": {"type": "token", "token": ET}}]},
     f"{ch(T1)}{CONST_AB}{ch(ET)}(?:{but(T1)}|{ch(T1)}{CONST_AB}{ch(ET)})*"),
    ({"type": "token_triggered_tags", "trigger_tokens": [T1, T2], "at_least_one": True,
      "stop_after_first": True,
      "tags": [{"type": "tag", "begin": {"type": "token", "token": T1},
                "content": {"type": "const_string", "value": "AB"},
                "end": {"type": "token", "token": ET}}]},
     f"{ch(T1)}{CONST_AB}{ch(ET)}"),
    # inside a tag with a token end: the end leaves free text and ends the tag
    ({"type": "tag", "begin": {"type": "token", "token": B}, "end": {"type": "token", "token": E},
      "content": {"type": "token_triggered_tags", "trigger_tokens": [T1],
                  "tags": [{"type": "tag", "begin": {"type": "token", "token": T1},
                            "content": {"type": "const_string", "value": "AB"},
                            "end": {"type": "token", "token": ET}}]}},
     f"{ch(B)}(?:{but(T1, E)}|{ch(T1)}{CONST_AB}{ch(ET)})*{ch(E)}"),
    # token_dispatch, looping and not
    ({"type": "token_dispatch", "exclude_tokens": [Y],
      "rules": [[T1, {"type": "const_string", "value": "AB"}],
                [T2, {"type": "token", "token": X}]]},
     f"(?:{but(T1, T2, Y)}|{ch(T1)}{CONST_AB}|{ch(T2, X)})*"),
    ({"type": "token_dispatch", "loop": False,
      "rules": [[T1, {"type": "const_string", "value": "AB"}]]},
     f"{but(T1)}*(?:{ch(T1)}{CONST_AB})?"),
]


class Ref:
    def __init__(self, pattern: str):
        import re
        self.re = re.compile(pattern)
        self.memo = {}

    def complete(self, seq) -> bool:
        return self.re.fullmatch(ch(*seq)) is not None

    def viable(self, seq) -> bool:
        key = tuple(seq)
        if key not in self.memo:
            self.memo[key] = any(self.complete(list(seq) + list(tail))
                                 for n in range(DEPTH + 1)
                                 for tail in itertools.product(ALL, repeat=n))
        return self.memo[key]

    def allowed(self, seq) -> set:
        ok = {t for t in ALL if self.viable(list(seq) + [t])}
        if self.complete(seq):
            ok.add(EOS)
        return ok


@pytest.fixture(scope="module")
def compiler():
    info = xgr.TokenizerInfo(VOCAB, stop_token_ids=[EOS])
    return xgr.GrammarCompiler(info, cache_enabled=False)


def mask_of(matcher) -> set:
    bitmask = xgr.allocate_token_bitmask(1, len(VOCAB))
    matcher.fill_next_token_bitmask(bitmask)
    return allowed(bitmask[0]) & set(range(len(VOCAB)))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_masks_against_brute_force(compiler, case):
    fmt, pattern = CASES[case]
    ref = Ref(pattern)
    compiled = compiler.compile_structural_tag({"type": "structural_tag", "format": fmt})
    rng = random.Random(case)
    walks = 0
    for walk in range(6):
        matcher = xgr.GrammarMatcher(compiled)
        seq = []
        for _ in range(8):
            want = ref.allowed(seq)
            assert mask_of(matcher) == want, (fmt, [VOCAB[t] for t in seq])
            # accept_token agrees with the mask on every token (a clone per token)
            for t in ALL:
                probe = matcher.fork()
                assert probe.accept_token(t) == (t in want), (fmt, seq, VOCAB[t])
            choices = sorted(want - {EOS})
            if not choices:
                break
            t = rng.choice(choices)
            assert matcher.accept_token(t)
            seq.append(t)
            if len(seq) >= 2 and rng.random() < 0.2:
                matcher.rollback(1)
                seq.pop()
        walks += 1
    assert walks == 6


def test_texts_resolve_with_a_tokenizer(compiler):
    """A token given by text is the first token with that decoded text (XGrammar)."""
    fmt = {"type": "tag", "begin": {"type": "token", "token": "<b>"},
           "content": {"type": "any_tokens", "exclude_tokens": ["x"]},
           "end": {"type": "token", "token": "<e>"}}
    m = xgr.GrammarMatcher(compiler.compile_structural_tag(
        {"type": "structural_tag", "format": fmt}))
    assert m.accept_token(B)
    assert mask_of(m) == set(ALL) - {X}
    with pytest.raises(Exception, match="not found in vocabulary"):
        compiler.compile_structural_tag({"type": "structural_tag", "format": {
            "type": "any_tokens", "exclude_tokens": ["<nope>"]}})


@pytest.mark.parametrize("fmt, message", [
    ({"type": "any_tokens", "exclude_tokens": ["x"]}, "requires tokenizer_info"),
    ({"type": "any_tokens", "exclude_tokens": "bad"}, "must be an array"),
    ({"type": "exclude_token", "exclude_tokens": [1.5]}, "must be an integer"),
    ({"type": "exclude_token", "exclude_tokens": [-1]}, "non-negative"),
    ({"type": "any_tokens", "max_tokens": -1}, "non-negative 32-bit integer"),
    ({"type": "any_tokens", "bogus": 1}, "unknown key"),
    ({"type": "token_triggered_tags", "trigger_tokens": [1], "tags": [
        {"type": "tag", "begin": {"type": "token", "token": 2}, "content": {"type": "any_text"},
         "end": "x"}]}, "does not match any trigger"),
    ({"type": "token_dispatch", "rules": [[1, {"type": "any_text"}]], "exclude_tokens": [1]},
     "both a rule's trigger and excluded"),
])
def test_errors_name_the_pointer(fmt, message):
    with pytest.raises(Exception, match=message) as e:
        xgr.Grammar.from_structural_tag({"type": "structural_tag", "format": fmt})
    assert "structural tag /format" in str(e.value)


def test_token_past_the_vocabulary(compiler):
    with pytest.raises(Exception, match="past the vocabulary"):
        compiler.compile_structural_tag({"type": "structural_tag", "format": {
            "type": "token", "token": 1000}})


@pytest.mark.parametrize("name, begin, end", [
    ("qwen3", "<think>", "</think>"),
    ("deepseek_v3", "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"),
])
def test_real_tokenizers(name, begin, end):
    """any_tokens between special tokens on a real vocabulary: every token but the end,
    the stop ids and padding; the end by its id only; a JSON tag's masks equal those of
    a json_schema format's own until its end token."""
    info = xgr.TokenizerInfo.from_file(shared("tokenizers", name))
    comp = xgr.GrammarCompiler(info, cache_enabled=False)
    vocab = info.decoded_vocab
    bid = vocab.index(begin.encode())
    eid = vocab.index(end.encode())
    stop = set(info.stop_token_ids)
    size = info.vocab_size
    words = (size + 31) // 32
    fmt = {"type": "tag", "begin": {"type": "token", "token": begin},
           "content": {"type": "any_tokens"}, "end": {"type": "token", "token": end}}
    m = xgr.GrammarMatcher(comp.compile_structural_tag({"type": "structural_tag", "format": fmt}))
    bm = xgr.allocate_token_bitmask(1, size)
    m.fill_next_token_bitmask(bm)
    assert allowed(bm[0]) & set(range(size)) == {bid}
    assert m.accept_token(bid)
    m.fill_next_token_bitmask(bm)
    got = allowed(bm[0]) & set(range(size))
    want = set(range(len(vocab))) - stop - {eid}
    assert got == want | {eid}
    assert m.accept_token(eid)
    m.fill_next_token_bitmask(bm)
    assert allowed(bm[0]) & set(range(size)) == stop & set(range(size))

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    tagged = comp.compile_structural_tag({"type": "structural_tag", "format": {
        "type": "token_triggered_tags", "trigger_tokens": [begin], "at_least_one": True,
        "stop_after_first": True,
        "tags": [{"type": "tag", "begin": {"type": "token", "token": begin},
                  "content": {"type": "json_schema", "json_schema": schema},
                  "end": {"type": "token", "token": end}}]}})
    plain = comp.compile_structural_tag({"type": "structural_tag", "format": {
        "type": "json_schema", "json_schema": schema}})
    mt, mp = xgr.GrammarMatcher(tagged), xgr.GrammarMatcher(plain)
    assert mt.accept_token(bid)
    bt, bp = xgr.allocate_token_bitmask(1, size), xgr.allocate_token_bitmask(1, size)
    for piece in ['{"a"', ': ', '12', '}']:
        mt.fill_next_token_bitmask(bt)
        mp.fill_next_token_bitmask(bp)
        assert allowed(bt[0]) == allowed(bp[0]) - stop
        assert mt.accept_string(piece) and mp.accept_string(piece)
    mt.fill_next_token_bitmask(bt)
    assert allowed(bt[0]) & set(range(size)) == {eid}
    assert words == bt.shape[1]
