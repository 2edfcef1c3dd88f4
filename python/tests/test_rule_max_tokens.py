"""XGrammar's rule attribute ``name[max_tokens=N]`` on a rule of EBNF (and of its Lark
dialect), against a brute-force reference written from the definition alone
(ir/ebnf.h note [token budgets]):

  The region is the text of r in `"<t>" r "</t>" "1"`. A token counts for it when it was
  accepted with accept_token and overlaps the text (one straddling into it included). At a
  token boundary inside the text where the region has held N tokens or more and the text
  can end there (it is a string of r), it must end there.

r's language is a Python regex that holds no '<', so where the text ends is where the first
'<' after "<t>" is. The reference decides each token sequence; a token is allowed after a
prefix iff some completion of at most DEPTH more tokens is valid (every vocabulary below can
finish any viable prefix within that). Every mask along every path of the prefix tree, up to
WALK tokens, must equal the reference's, and accept_token must agree with the mask."""

import re

import pytest

import gramask as gm
from conftest import allowed

VOCAB = [b"<t>", b"</t>", b"a", b"b ", b"ab", b" ", b"a b", b"</t>1", b"1", b" </t>", b"<t>a",
         b"<", b"t>", b"/t>1"]
PRE, END = b"<t>", b"</t>1"
DEPTH, WALK = 4, 4

# (EBNF body of r, the same language as a Python regex over bytes)
BODIES = [
    ('([a-z]* " ")+', rb"(?:[a-z]* )+"),
    ('[a-z]+ (" " [a-z]+)*', rb"[a-z]+(?: [a-z]+)*"),
]


class Ref:
    def __init__(self, regex: bytes, budget: int):
        self.r = re.compile(regex)
        self.n = budget
        self.a = len(PRE)

    def check(self, toks):
        """(prefix viable as far as its own text goes, complete and valid)."""
        s = b"".join(VOCAB[t] for t in toks)
        if len(s) <= self.a:
            return PRE.startswith(s), False
        if not s.startswith(PRE):
            return False, False
        e = s.find(b"<", self.a)
        region_end = e if e >= 0 else None
        if e >= 0:
            w = s[self.a:e]
            if not self.r.fullmatch(w) or not END.startswith(s[e:]):
                return False, False
        elif re.fullmatch(rb"[a-z ]*", s[self.a:]) is None:
            return False, False
        # the budget at each token boundary strictly inside the text
        ends, pos = [], 0
        for t in toks:
            st, pos = pos, pos + len(VOCAB[t])
            ends.append((st, pos))
        for _, b in ends:
            if b <= self.a or b >= len(s) or (region_end is not None and b >= region_end):
                continue
            count = sum(1 for st, en in ends if st < b and en > self.a)
            if count >= self.n and self.r.fullmatch(s[self.a:b]):
                return False, False
        return True, e >= 0 and s[e:] == END

    def viable(self, toks, depth, memo):
        key = (tuple(toks), depth)
        if key in memo:
            return memo[key]
        ok, done = self.check(toks)
        res = ok and (done or (depth > 0 and any(
            self.viable(toks + [t], depth - 1, memo) for t in range(len(VOCAB)))))
        memo[key] = res
        return res


def compile_(body: str, budget: int):
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[])
    g = gm.Grammar.from_ebnf(f'root ::= "<t>" r "</t>" "1"\nr[max_tokens={budget}] ::= {body}\n')
    return info, gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(g)


@pytest.mark.parametrize("budget", [1, 2, 3])
@pytest.mark.parametrize("body,regex", BODIES)
def test_masks_match_reference(body, regex, budget):
    ref = Ref(regex, budget)
    info, compiled = compile_(body, budget)
    memo = {}
    checked = 0
    bitmask = gm.allocate_token_bitmask(1, len(VOCAB))

    def walk(toks, m):
        nonlocal checked
        want = {t for t in range(len(VOCAB)) if ref.viable(toks + [t], DEPTH, memo)}
        m.fill_next_token_bitmask(bitmask)
        got = allowed(bitmask[0])
        assert got == want, (toks, sorted(got), sorted(want))
        checked += 1
        _, done = ref.check(toks)
        assert m.is_terminated() == done or not done, toks
        if len(toks) >= WALK:
            return
        for t in sorted(want):
            c = m.fork()
            assert c.accept_token(t), (toks, t)
            walk(toks + [t], c)
        for t in set(range(len(VOCAB))) - want:
            c = m.fork()
            assert not c.accept_token(t), (toks, t)

    walk([], gm.GrammarMatcher(compiled, terminate_without_stop_token=True))
    assert checked > 50  # the walk went somewhere


def test_budget_changes_the_masks():
    """The attribute is read, not dropped: with a budget of 1 a word cannot follow a
    complete first one; without it, it can."""
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[])
    bitmask = gm.allocate_token_bitmask(1, len(VOCAB))
    for attr, want in (("[max_tokens=1]", False), ("", True)):
        g = gm.Grammar.from_ebnf(f'root ::= "<t>" r "</t>" "1"\nr{attr} ::= ([a-z]* " ")+\n')
        m = gm.GrammarMatcher(gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(g),
                              terminate_without_stop_token=True)
        assert m.accept_token(0) and m.accept_token(3)  # "<t>", "b "
        m.fill_next_token_bitmask(bitmask)
        assert (2 in allowed(bitmask[0])) == want


def test_printed_and_serialized_forms_carry_the_budget():
    src = 'root ::= "<t>" r "</t>" "1"\nr[max_tokens=2] ::= ([a-z]* " ")+\n'
    g = gm.Grammar.from_ebnf(src)
    assert "r[max_tokens=2] ::=" in str(g)
    assert str(gm.Grammar.from_ebnf(str(g))) == str(g)
    assert str(gm.Grammar.deserialize_json(g.serialize_json())) == str(g)
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[])
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(g)
    back = gm.CompiledGrammar.deserialize_json(compiled.serialize_json(), info)
    bitmask = gm.allocate_token_bitmask(1, len(VOCAB))
    for c in (compiled, back):
        m = gm.GrammarMatcher(c, terminate_without_stop_token=True)
        assert m.accept_token(0) and m.accept_token(3) and m.accept_token(3)
        m.fill_next_token_bitmask(bitmask)
        assert allowed(bitmask[0]) == {1, 7, 11}  # spent: only "</t>", "</t>1", "<"


@pytest.mark.parametrize("src,code,where", [
    ('root[max_tokens=0] ::= "a"', "max_tokens must be positive", ":1:17"),
    ('root[max_tokens=2, max_tokens=3] ::= "a"', "max_tokens is given twice", ":1:20"),
    ('root[max_tokens=2147483648] ::= "a"', "max_tokens above 2147483647", ":1:17"),
    ('root[foo=2] ::= "a"', "rule attribute foo of rule 'root' is not supported", ":1:6"),
    ('root[max_tokens=2 ::= "a"', "',' or ']'", ":1:19"),
])
def test_bad_attributes_are_errors_naming_the_place(src, code, where):
    with pytest.raises(Exception) as e:
        gm.Grammar.from_ebnf(src)
    assert code in str(e.value) and where in str(e.value), str(e.value)


def test_budget_on_a_rule_with_references_is_refused():
    """The engine counts a region as one item (note [counting regions]); a budgeted rule
    that keeps references (here to a callee whose smaller budget can bind: note [budgets
    over references]) is refused naming it, never compiled without its budget."""
    with pytest.raises(gm.UnsupportedError, match="rule a: a token budget"):
        gm.Grammar.from_ebnf('root ::= a "1"\na[max_tokens=9] ::= "x" b\n'
                             'b[max_tokens=3] ::= ([a-z]* " ")+\n')
