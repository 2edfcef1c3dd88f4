"""Captures of a rule with a token budget (`r[max_tokens=N, capture]`; note [budgets in the
replay] in earley/capture.c), differential on every token sequence of a small vocabulary
against the definition: the occurrence of r that starts the output can complete at every
position j where the tokens overlapping output[:j] are at most N (its region ends at the
end of its N-th token), so its raw events are output[:j] for those j up to the output's
length, in order, and the deduplicated capture is the longest."""

import itertools

import pytest

import gramask as gm

WORDS = ["x", "<", "xx", "x<", "<x", "</s>"]
EOS = 5


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_budgeted_capture_against_the_definition(budget):
    info = gm.TokenizerInfo(WORDS, stop_token_ids=[EOS])
    grammar = gm.Grammar.from_lark(
        f'start: r "<" t\nr[max_tokens={budget}, capture="r"]: TEXT\nt: /[x<]*/\n'
        'TEXT: /(\\n|.)*/', tokenizer_info=info)
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(grammar)
    checked = 0
    for n in range(1, 5):
        for seq in itertools.product(range(EOS), repeat=n):
            m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
            if not all(m.accept_token(i) for i in seq):
                continue
            out = "".join(WORDS[i] for i in seq).encode()
            ends = list(itertools.accumulate(len(WORDS[i]) for i in seq))
            last = ends[budget - 1] if len(seq) >= budget else len(out)
            raw = [("r", out[:j]) for j in range(1, min(last, len(out)) + 1)]
            assert m.get_captures(deduplicate=False) == raw, seq
            assert m.get_captures() == raw[-1:], seq
            # rollback and fork carry the budgets: replay the last token again
            f = m.fork()
            m.rollback(1)
            assert m.accept_token(seq[-1])
            assert m.get_captures(deduplicate=False) == raw == f.get_captures(False), seq
            checked += 1
    assert checked > 20
