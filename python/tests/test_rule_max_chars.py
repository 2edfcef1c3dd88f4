"""XGrammar's rule attribute ``name[max_chars=n]`` (note [rule max_chars] in
ir/ebnf_max_chars.c), against a brute-force reference written from the definition alone:

  An occurrence of r ends at the first place where its text has n characters (code points)
  or more and r could end there; before that it may end wherever r can. So the text w of r
  in `r ">"` is a string of r's body none of whose proper prefixes of n characters or more
  is one.

r's body never holds '>', so r's text is what precedes the first '>'. A token is allowed
after a prefix iff some completion of at most DEPTH tokens makes a valid sentence (the
vocabulary has every character alone, so that is the language's own prefix test). Every
mask along every path up to WALK tokens must equal the reference's, and accept_token must
agree with the mask."""

import re

import pytest

import gramask as gm
from conftest import allowed

VOCAB = [b"a", b"b", b"ab", b"abc", b"a>", b"ab>", b">", b"\xc3\xa9", b"\xc3", b"\xa9",
         b"\xc3\xa9>", b"c"]
DEPTH, WALK = 3, 3

# (EBNF body of r, the same language as a Python regex over text)
CASES = [(body, regex, n) for body, regex in [
    ("[a-c\u00e9]*", "[a-c\u00e9]*"),
    ("[a-c\u00e9]{2,4}", "[a-c\u00e9]{2,4}"),
    ('Regex("(\\\\n|.)*")', "(?:\n|.)*"),
] for n in (0, 1, 2, 3)] + [('("ab" | "c")?', "(?:ab|c)?", n) for n in (2, 3)]


def valid(text: bytes, body: re.Pattern, n: int) -> bool:
    try:
        s = text.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if not s.endswith(">") or s.count(">") != 1:
        return False
    w = s[:-1]
    if not body.fullmatch(w):
        return False
    return not any(k >= n and body.fullmatch(w[:k]) for k in range(len(w)))


class Ref:
    def __init__(self, regex: str, n: int):
        self.body = re.compile(regex, re.S)
        self.n = n
        self.memo = {}

    def viable(self, text: bytes, depth: int) -> bool:
        key = (text, depth)
        if key not in self.memo:
            if b">" in text:
                ok = valid(text, self.body, self.n)
            else:
                ok = depth > 0 and any(self.viable(text + t, depth - 1) for t in VOCAB)
            self.memo[key] = ok
        return self.memo[key]


@pytest.mark.parametrize("body,regex,n", CASES)
def test_masks_match_reference(body, regex, n):
    ref = Ref(regex, n)
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[])
    g = gm.Grammar.from_ebnf(f'root ::= r ">"\nr[max_chars={n}] ::= {body}\n')
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(g)
    bitmask = gm.allocate_token_bitmask(1, len(VOCAB))
    checked = 0

    def walk(text, m, depth):
        nonlocal checked
        want = {i for i, t in enumerate(VOCAB) if ref.viable(text + t, DEPTH)}
        assert m.is_terminated() == (b">" in text), text
        if b">" in text:
            return
        m.fill_next_token_bitmask(bitmask)
        assert allowed(bitmask[0]) == want, (text, n)
        checked += 1
        if depth == WALK or b">" in text:
            return
        for i in range(len(VOCAB)):
            c = m.fork()
            assert c.accept_token(i) == (i in want), (text, i)
            if i in want:
                walk(text + VOCAB[i], c, depth + 1)

    walk(b"", gm.GrammarMatcher(compiled, terminate_without_stop_token=True), 0)
    assert checked >= 1


def test_the_bound_changes_the_masks():
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[])
    bitmask = gm.allocate_token_bitmask(1, len(VOCAB))
    for attr, want in (("[max_chars=2]", False), ("", True)):
        g = gm.Grammar.from_ebnf(f'root ::= r ">"\nr{attr} ::= [a-c]*\n')
        m = gm.GrammarMatcher(gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(g),
                              terminate_without_stop_token=True)
        m.fill_next_token_bitmask(bitmask)
        assert (3 in allowed(bitmask[0])) == want  # "abc": three characters


def test_printed_form_parses_back_to_itself():
    g = gm.Grammar.from_ebnf('root ::= r ">"\nr[max_chars=2] ::= t\nt ::= [a-z]*\n')
    assert "r[max_chars=2] ::=" in str(g)  # the rewritten body: tests/test_ebnf_parse.c
    assert str(gm.Grammar.from_ebnf(str(g))) == str(g)
    assert str(gm.Grammar.deserialize_json(g.serialize_json())) == str(g)


@pytest.mark.parametrize("src,cls,msg", [
    ('root ::= r ">"\nr[max_chars=3] ::= "x" r "y" | "z"', gm.UnsupportedError,
     "rule 'r': max_chars is supported on a rule whose body is a regular language"),
    ('root[max_chars=2147483648] ::= "a"', gm.LimitError, "max_chars above 2147483647"),
    ('root[max_chars=1, max_chars=2] ::= "a"', gm.GrammarSyntaxError, "max_chars is given twice"),
    ('root[max_chars=2000000] ::= [a]*', gm.LimitError, "at most 1000000"),
])
def test_refusals_name_the_rule(src, cls, msg):
    with pytest.raises(cls, match=re.escape(msg)):
        gm.Grammar.from_ebnf(src)
