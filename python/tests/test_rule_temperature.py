"""XGrammar's rule attribute ``name[temperature=t]`` (note [rule temperatures] in
earley/temperature.c): it changes no mask; ``GrammarMatcher.temperature`` is that of the
innermost rule with one inside which the next token may be read, the largest where readings
disagree, else the grammar's or the default.

The reference: for a grammar whose rules are each a literal alternation, the temperature at a
prefix is computed from the explicit list of (string, per-character rule stacks) the grammar
derives; the matcher must agree on every prefix, and the masks must equal those of the same
grammar without the attributes."""

import itertools

import pytest

import gramask as gm
from conftest import allowed

VOCAB = ["a", "b", "x", "z", " ", "ab", "xz"]
INFO = gm.TokenizerInfo(VOCAB, vocab_size=len(VOCAB), stop_token_ids=[])


def compile_ebnf(src: str):
    return gm.GrammarCompiler(INFO, cache_enabled=False).compile_grammar(gm.Grammar.from_ebnf(src))


def test_enters_and_leaves_and_nests():
    m = gm.GrammarMatcher(compile_ebnf(
        'root ::= "a" outer "z"\nouter[temperature=0.6] ::= "x" inner "x"\n'
        'inner[temperature=0.25] ::= "b"+'), default_temperature=0.1)
    seen = []
    for s in ["", "a", "x", "b", "b", "x", "z"]:
        assert m.accept_string(s) if s else True
        seen.append(m.temperature)
    # after "a": outer's "x" next; after "x": inner's "b"; after "b": inner may go on or
    # outer's "x" follows (the largest: 0.6); after the second "x": root's "z"; after "z": done
    assert seen == pytest.approx([0.1, 0.6, 0.25, 0.6, 0.6, 0.1, 0.1])
    m.rollback(2)
    assert m.temperature == pytest.approx(0.6)
    m.reset()
    assert m.temperature == pytest.approx(0.1)


def test_ambiguous_prefix_takes_the_largest_and_reports_once(capfd):
    m = gm.GrammarMatcher(compile_ebnf(
        'root ::= left | right\nleft[temperature=0.2] ::= "a"+\n'
        'right[temperature=0.9] ::= "a" "b"'))
    assert m.rule_temperature() == pytest.approx((0.9, 0.2))
    assert m.temperature == pytest.approx(0.9)
    assert m.accept_string("a") and m.temperature == pytest.approx(0.9)
    assert m.accept_string("a") and m.temperature == pytest.approx(0.2)
    assert m.rule_temperature() == pytest.approx((0.2, 0.2))
    assert capfd.readouterr().err.count("Multiple active grammar paths") == 1


def test_left_recursion_terminates():
    m = gm.GrammarMatcher(compile_ebnf(
        'root ::= list "z"\nlist[temperature=0.3] ::= list "a" | item\n'
        'item[temperature=0.7] ::= "x"'), default_temperature=0.1)
    assert m.temperature == pytest.approx(0.7)
    assert m.accept_string("x") and m.temperature == pytest.approx(0.3)
    assert m.accept_string("aa") and m.temperature == pytest.approx(0.3)
    assert m.accept_string("z") and m.temperature == pytest.approx(0.1)


# Reference: root ::= A B with A and B literal alternations, each with or without a
# temperature. A string is a sequence of (character, rule) pairs; the temperature at a
# prefix is the largest over the strings extending it of the temperature of the rule that
# reads the next character (the default where that rule has none or nothing follows).
ALTS = [["a", "ab"], ["x", "xz", "b"]]


@pytest.mark.parametrize("temps", list(itertools.product([None, 0.5], [None, 1.5])))
def test_against_reference(temps):
    names = ["p", "q"]
    heads = [f"{n}[temperature={t}]" if t is not None else n for n, t in zip(names, temps)]
    body = lambda alts: " | ".join(f'"{a}"' for a in alts)
    src = f"root ::= p q\n{heads[0]} ::= {body(ALTS[0])}\n{heads[1]} ::= {body(ALTS[1])}\n"
    plain = f"root ::= p q\np ::= {body(ALTS[0])}\nq ::= {body(ALTS[1])}\n"
    strings = []
    for a, b in itertools.product(*ALTS):
        strings.append([(c, temps[0]) for c in a] + [(c, temps[1]) for c in b])
    with_t, without = compile_ebnf(src), compile_ebnf(plain)
    bm = gm.allocate_token_bitmask(1, len(VOCAB))
    prefixes = {"".join(c for c, _ in s[:k]) for s in strings for k in range(len(s) + 1)}
    for prefix in sorted(prefixes):
        want = [t for s in strings if "".join(c for c, _ in s).startswith(prefix)
                and len(s) > len(prefix) for t in [s[len(prefix)][1]] if t is not None]
        m = gm.GrammarMatcher(with_t, default_temperature=0.05,
                              terminate_without_stop_token=True)
        assert m.accept_string(prefix) if prefix else True
        assert m.temperature == pytest.approx(max(want) if want else 0.05), prefix
        m.fill_next_token_bitmask(bm)
        got = allowed(bm[0])
        p = gm.GrammarMatcher(without, terminate_without_stop_token=True)
        assert p.accept_string(prefix) if prefix else True
        p.fill_next_token_bitmask(bm)
        assert got == allowed(bm[0]), prefix


def test_printed_serialized_and_compiled_file_forms_carry_it(tmp_path):
    src = 'root ::= "a" v "z"\nv[max_tokens=3, temperature=0.6] ::= "x"+\n'
    g = gm.Grammar.from_ebnf(src)
    assert "v[max_tokens=3, temperature=0.6] ::=" in str(g)
    assert str(gm.Grammar.from_ebnf(str(g))) == str(g)
    assert str(gm.Grammar.deserialize_json(g.serialize_json())) == str(g)
    compiled = gm.GrammarCompiler(INFO, cache_enabled=True).compile_grammar(g)
    path = tmp_path / "t.gmc"
    compiled.save(path)
    for c in (compiled, gm.CompiledGrammar.load(path),
              gm.CompiledGrammar.from_bytes(compiled.to_bytes()),
              gm.CompiledGrammar.deserialize_json(compiled.serialize_json(), INFO)):
        m = gm.GrammarMatcher(c, default_temperature=0.1, terminate_without_stop_token=True)
        assert m.temperature == pytest.approx(0.1)
        assert m.accept_string("a") and m.temperature == pytest.approx(0.6)


@pytest.mark.parametrize("src,msg", [
    ('root[temperature=-0.1] ::= "a"', "temperature must be a finite non-negative number"),
    ('root[temperature=1e999] ::= "a"', "temperature must be a finite non-negative number"),
    ('root[temperature=abc] ::= "a"', "expected a number after temperature="),
    ('root[temperature=1, temperature=2] ::= "a"', "temperature is given twice"),
])
def test_bad_temperatures_are_errors(src, msg):
    with pytest.raises(gm.GrammarSyntaxError, match=msg):
        gm.Grammar.from_ebnf(src)


def test_ignored_text_after_a_hot_lexeme_is_outside_it():
    """A Lark rule with a temperature whose body is one lexeme: %ignore'd text after it is
    read at the temperature around it (XGrammar's test_temperature_works_with_ignored_tokens),
    and the language is the same as with the ignore inside the rule."""
    for body, text in (('"x"', "x"), ('/ab/ | "q"', "ab")):
        g = gm.Grammar.from_lark(f'%import common.WS\n%ignore WS\nstart: hot "z"\n'
                                 f'hot[temperature=0.6]: {body}')
        c = gm.GrammarCompiler(gm.TokenizerInfo([]), cache_enabled=False).compile_grammar(g)
        m = gm.GrammarMatcher(c, default_temperature=0.1, terminate_without_stop_token=True)
        assert m.temperature == pytest.approx(0.6)
        assert m.accept_string(text) and m.temperature == pytest.approx(0.1)
        assert m.accept_string(" \n ") and m.temperature == pytest.approx(0.1)
        assert m.accept_string("z") and m.is_terminated()
        for s, ok in ((text + "z", True), (text + " z ", True), (" " + text + "z", False),
                      (text + "zz", False)):
            m = gm.GrammarMatcher(c, terminate_without_stop_token=True)
            assert (m.accept_string(s) and m.is_terminated()) == ok, s
