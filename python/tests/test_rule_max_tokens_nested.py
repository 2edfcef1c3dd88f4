"""XGrammar's ``name[max_tokens=N]`` on a rule whose body holds references (note [budgets
over references] in earley/fsm_build.c): a callee that is not recursive and needs no items
of its own is built inside the budgeted rule, and a budgeted callee where its budget can
never bind (it ends the rule and its budget is at least the rule's: XGrammar's nested
budgets). The language is then the budgeted rule's with its body flattened, so the masks
must equal those of test_rule_max_tokens.py's brute-force reference for the flattened
body's regex, on every path of the prefix tree; a callee whose budget can bind stays
refused."""

import pytest

import gramask as gm
from conftest import allowed
from test_rule_max_tokens import DEPTH, VOCAB, WALK, Ref

# (rules, with r's budget as {n}; the flattened language of r as a Python regex over bytes)
CASES = [
    ('r[max_tokens={n}] ::= w ws\nw ::= [a-z]+\nws ::= (" " [a-z]+)*',
     rb"[a-z]+(?: [a-z]+)*"),
    ('r[max_tokens={n}] ::= [a-z]* " " inner\ninner[max_tokens={m}] ::= ([a-z]* " ")*',
     rb"(?:[a-z]* )+"),
]


@pytest.mark.parametrize("budget", [1, 2])
@pytest.mark.parametrize("rules,regex", CASES)
def test_nested_masks_match_reference(rules, regex, budget):
    ref = Ref(regex, budget)
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[])
    text = 'root ::= "<t>" r "</t>" "1"\n' + rules.format(n=budget, m=budget + 1) + "\n"
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(
        gm.Grammar.from_ebnf(text))
    memo = {}
    bitmask = gm.allocate_token_bitmask(1, len(VOCAB))
    checked = 0

    def walk(toks, m):
        nonlocal checked
        want = {t for t in range(len(VOCAB)) if ref.viable(toks + [t], DEPTH, memo)}
        m.fill_next_token_bitmask(bitmask)
        assert allowed(bitmask[0]) == want, (text, toks)
        checked += 1
        if len(toks) >= WALK - 1:
            return
        for t in sorted(want):
            c = m.fork()
            assert c.accept_token(t), (toks, t)
            walk(toks + [t], c)

    walk([], gm.GrammarMatcher(compiled, terminate_without_stop_token=True))
    assert checked > 20


@pytest.mark.parametrize("rules", [
    # the callee's budget is smaller: it can bind
    'r[max_tokens=3] ::= [a-z]* " " inner\ninner[max_tokens=1] ::= ([a-z]* " ")*',
    # the callee does not end the rule: it may have to end where the rule cannot
    'r[max_tokens=1] ::= inner "x"\ninner[max_tokens=2] ::= ([a-z]* " ")*',
])
def test_binding_nested_budgets_are_refused(rules):
    with pytest.raises(gm.UnsupportedError, match="token budget"):
        gm.GrammarCompiler(gm.TokenizerInfo(VOCAB, stop_token_ids=[]), cache_enabled=False) \
            .compile_grammar(gm.Grammar.from_ebnf('root ::= "<t>" r "</t>" "1"\n' + rules + "\n"))
