"""Captures (`rule[capture]`, note [captures] in earley/capture.c), differential: the
raw events of GrammarMatcher.get_captures(deduplicate=False) after every prefix of
every string of a small alphabet, against a reference built from the definition
alone with separate grammars:

    (label, i, j) is an event of w  iff  R derives w[i:j]  and  some derivation of the
    root reads w[0:i] and then R (R is predicted at i: Earley's completion of R)

checked as: the grammar with root R matches w[i:j] in full, and w[0:i] + "\\x01" is a
prefix of the grammar where R gets a second alternative "\\x01" (a byte no string here
holds). The deduplicated list must keep, per (label, start), the longest span."""

import itertools

import pytest

import gramask as gm

MARK = "\x01"


def _compile(ebnf, root="root"):
    g = gm.Grammar.from_ebnf(ebnf, root_rule_name=root)
    return gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(g)


def _matcher(compiled):
    return gm.GrammarMatcher(compiled, terminate_without_stop_token=True)


def _prefix(compiled, text):
    return _matcher(compiled).accept_string(text)


def _full(compiled, text):
    m = _matcher(compiled)
    return m.accept_string(text) and m.is_accepting()


# (grammar, {rule: label}, alphabet, longest string)
CASES = [
    ('root ::= (item ",")* item\nitem[capture] ::= [0-9]+', {"item": "item"}, "1,", 5),
    ('root ::= lst\nlst[capture] ::= [0-9] "," lst | [0-9]', {"lst": "lst"}, "1,", 5),
    ('root ::= o\no[capture="o"] ::= "x" i "!"\ni[capture="i"] ::= [a-z]+',
     {"o": "o", "i": "i"}, "xa!", 5),
    ('root ::= "a" v "b"\nv[capture] ::= [0-9]*', {"v": "v"}, "a1b", 5),
    ('root ::= a+\na[capture] ::= "x" | "xx"', {"a": "a"}, "x", 5),
    ('root ::= a "y"? a\na[capture="a"] ::= "x"+ | "x" "y"', {"a": "a"}, "xy", 5),
    ('root ::= (p | q)+\np[capture="t"] ::= "ab"\nq[capture="t"] ::= "a" [bc]', {"p": "t", "q": "t"},
     "abc", 5),
]


def _bodies(ebnf, rule):
    """The grammar with root `rule` (for R derives w[i:j]) and the one where rule may also
    be MARK (for R is predicted at i)."""
    lines = ebnf.split("\n")
    alone = f"root ::= {rule}\n" + ebnf.replace("root ::=", "root_orig ::=", 1)
    marked = []
    for line in lines:
        head, sep, body = line.partition(" ::= ")
        if head.split("[")[0] == rule:
            line = f"{head} ::= \"\\x01\" | {body}"
        marked.append(line)
    return alone, "\n".join(marked)


def _reference(ebnf, labels, text, refs):
    out = set()
    for rule, label in labels.items():
        alone, marked = refs[rule]
        for i in range(len(text) + 1):
            if not _prefix(marked, text[:i] + MARK):
                continue
            for j in range(i, len(text) + 1):
                if _full(alone, text[i:j]):
                    out.add((label, i, j))
    return out


@pytest.mark.parametrize("ebnf, labels, alphabet, n", CASES)
def test_raw_events_match_the_definition(ebnf, labels, alphabet, n):
    compiled = _compile(ebnf)
    refs = {}
    for rule in labels:
        alone, marked = _bodies(ebnf, rule)
        refs[rule] = (_compile(alone), _compile(marked))
    checked = 0
    for k in range(n + 1):
        for t in itertools.product(alphabet, repeat=k):
            text = "".join(t)
            m = _matcher(compiled)
            if not m.accept_string(text):
                continue
            raw = m.get_captures(deduplicate=False)
            got = set()
            # positions: an event ending at j appears once the prefix of length j is read
            prev = []
            for j in range(len(text) + 1):
                mj = _matcher(compiled)
                assert mj.accept_string(text[:j])
                evs = mj.get_captures(deduplicate=False)
                assert evs[:len(prev)] == prev, (text, j)
                for label, span in evs[len(prev):]:
                    got.add((label, j - len(span), j))
                    assert text[j - len(span):j].encode() == span
                prev = evs
            assert prev == raw
            want = _reference(ebnf, labels, text, refs)
            assert got == want, (ebnf, text, sorted(got ^ want))
            # deduplicated: per (label, start) the longest, nothing else
            dedup = m.get_captures()
            longest = {}
            for label, i, j in want:
                longest[(label, i)] = max(longest.get((label, i), -1), j)
            assert sorted(dedup) == sorted((lab, text[i:j].encode())
                                           for (lab, i), j in longest.items()), (ebnf, text)
            checked += 1
    assert checked > 3


def test_token_steps_rollback_and_fork_agree_with_strings():
    ebnf = 'root ::= (item ",")* item\nitem[capture] ::= [0-9]+'
    info = gm.TokenizerInfo(["1", ",", "12", "2,", ",1", "</s>"], stop_token_ids=[5])
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(
        gm.Grammar.from_ebnf(ebnf))
    m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
    for tok in [2, 1, 3]:             # "12" "," "2,"
        assert m.accept_token(tok)
    assert not m.accept_token(4)      # ",1" after "2,": ",," is not allowed
    text = "12,2,"
    s = _matcher(compiled)
    assert s.accept_string(text)
    assert m.get_captures(deduplicate=False) == s.get_captures(deduplicate=False)
    f = m.fork()
    m.rollback(2)
    assert m.get_captures() == [("item", b"12")]
    assert f.get_captures() == [("item", b"12"), ("item", b"2")]
    m.reset()
    assert m.get_captures() == []


def test_capture_round_trips_through_ebnf_and_serialization():
    g = gm.Grammar.from_ebnf('root ::= "a" v "b"\nv[capture="num"] ::= [0-9]+')
    assert 'v[capture="num"] ::=' in str(g)
    again = gm.Grammar.from_ebnf(str(g))
    info = gm.TokenizerInfo([])
    compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_grammar(again)
    # the JSON form, and the native compiled bytes (rule automata carry the labels)
    for loaded in (gm.CompiledGrammar.deserialize_json(compiled.serialize_json(), info),
                   gm.CompiledGrammar.from_bytes(compiled.to_bytes())):
        m = gm.GrammarMatcher(loaded, terminate_without_stop_token=True)
        assert m.accept_string("a42b")
        assert m.get_captures() == [("num", b"42")]


@pytest.mark.parametrize("ebnf, message", [
    ('root ::= v\nv[capture=""] ::= "a"', "capture name must not be empty"),
    ('root ::= v\nv[capture="a b"] ::= "a"', "capture name must only contain"),
    ('root ::= v\nv[capture, capture] ::= "a"', "specified more than once"),
    ('root ::= v\nv[stop] ::= "a"', "rule attribute stop of rule 'v' is not supported"),
])
def test_capture_attribute_errors(ebnf, message):
    with pytest.raises(Exception, match=message):
        gm.Grammar.from_ebnf(ebnf)
