"""Dynamic dispatch on a special-token trigger in XGrammar's Lark dialect
(`tool: TEXT <|tool|> rest` repeated before a free-text tail; python/gramask/lark_dispatch.py):
XGrammar's TokenTagDispatch, whose free text is any token but a trigger. Every mask after
every token sequence of a small vocabulary, against a reference written from that definition:
free text takes any token but the trigger; the trigger token starts `rest`, which must be
spelled exactly by the next tokens (none of them a trigger); EOS only in free text."""

import itertools

import pytest

import gramask as gm

WORDS = ["a", "<|tool|>", "x", "</t>", "<", "x</t>", "ax", "/t>", "</s>"]
TRIGGER, EOS = 1, 8
REST = "x</t>"


def _spellable(k):
    """Whether REST[k:] can be spelled by tokens that are neither the trigger nor EOS."""
    if k == len(REST):
        return True
    return any(i not in (TRIGGER, EOS) and REST.startswith(w, k) and _spellable(k + len(w))
               for i, w in enumerate(WORDS))


def _step(state, i):
    """The reference: state None is free text, k is REST[:k] read; None... 'dead' on failure."""
    if state == "dead":
        return "dead"
    if state is None:
        return 0 if i == TRIGGER else (None if i != EOS else "dead")
    if i in (TRIGGER, EOS) or not REST.startswith(WORDS[i], state):
        return "dead"
    k = state + len(WORDS[i])
    if not _spellable(k):
        return "dead"
    return None if k == len(REST) else k


def _allowed(state):
    want = [i for i in range(len(WORDS)) if i != EOS and _step(state, i) != "dead"]
    return sorted(want + [EOS] if state is None else want)


@pytest.mark.parametrize("form", ["direct", "lazy-head"])
def test_masks_against_the_definition(form):
    info = gm.TokenizerInfo(WORDS, stop_token_ids=[EOS])
    if form == "direct":
        tool = 'tool: TEXT <|tool|> "x" "</t>"'
    else:
        tool = 'head[lazy]: TEXT <|tool|>\ntool: head "x" "</t>"'
    grammar = gm.Grammar.from_lark(f"start: tool* tail\ntail: TEXT\n{tool}\nTEXT: /(\\n|.)*/",
                                   tokenizer_info=info)
    assert "TokenTagDispatch" in str(grammar)
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(grammar)
    checked = 0
    for n in range(4):
        for seq in itertools.product([i for i in range(len(WORDS)) if i != EOS], repeat=n):
            state = None
            for i in seq:
                state = _step(state, i)
            if state == "dead":
                continue
            m = gm.GrammarMatcher(compiled)
            assert all(m.accept_token(i) for i in seq), seq
            mask = gm.allocate_token_bitmask(1, len(WORDS))
            m.fill_next_token_bitmask(mask)
            got = [i for i in range(len(WORDS)) if (int(mask[0, i // 32]) >> (i % 32)) & 1]
            assert got == _allowed(state), (seq, got)
            checked += 1
    assert checked > 100
    # the trigger alone is never free text: it must be followed by its rest
    m = gm.GrammarMatcher(compiled)
    assert m.accept_token(TRIGGER) and not m.accept_token(EOS)


def test_trigger_errors():
    info = gm.TokenizerInfo(["<|bar|>", "x", "</s>"], stop_token_ids=[2])
    with pytest.raises(RuntimeError, match="cannot mix string and token triggers"):
        gm.Grammar.from_lark('start: (foo | bar)* tail\ntail: TEXT\nfoo_head[lazy]: TEXT "<foo>"\n'
                             'foo: foo_head "x"\nbar: TEXT <|bar|> "x"\nTEXT: /(\\n|.)*/',
                             tokenizer_info=info)
    with pytest.raises(RuntimeError, match="dynamic special-token trigger cannot be negated"):
        gm.Grammar.from_lark('start: tool* tail\ntail: TEXT\ntool: TEXT <[^1]> "x"\n'
                             'TEXT: /(\\n|.)*/', tokenizer_info=info)
    with pytest.raises(RuntimeError, match="lazy special-token trigger cannot be negated"):
        gm.Grammar.from_lark("start: head\nhead[lazy]: TEXT <[^1]>\nTEXT: /(\\n|.)*/",
                             tokenizer_info=info)
