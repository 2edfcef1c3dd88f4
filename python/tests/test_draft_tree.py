"""GrammarMatcher.traverse_draft_tree (one C call, gm_matcher_fill_draft_tree) against the
accept/fill/rollback loop engines run today, node by node, on random draft trees of 8, 32
and 64 nodes over Llama 3's vocabulary and real grammars (a JSON Schema, XGrammar EBNF,
the bundled Lark JSON grammar); malformed trees; the GIL released; and eos_after_end."""

import json
import random
import re
import threading

import numpy as np
import pytest

import gramask as gm
from gramask.errors import ArgumentError

SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 12},
                         "age": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"enum": ["a", "bc", "def"]}},
                         "ok": {"type": "boolean"}},
          "required": ["name", "age"]}

EBNF = """root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= [0-9]+ | "(" expr ")" | "x" | "-" factor
"""


@pytest.fixture(scope="module")
def grammars(llama3):
    compiler = gm.GrammarCompiler(llama3)
    return {"schema": compiler.compile_json_schema(json.dumps(SCHEMA)),
            "ebnf": compiler.compile_grammar(EBNF),
            "lark-json": compiler.compile_bundled("json")}


def allowed_ids(row):
    bits = np.unpackbits(np.ascontiguousarray(row).view(np.uint8), bitorder="little")
    return np.flatnonzero(bits)


def random_tree(matcher, n, rng, eos):
    """A random tree below matcher's state: each new node hangs under a random earlier
    node (7 in 8 one the grammar still continues from); its token is one the parent's mask allows (7 in 10), EOS (1 in 20) or any id.
    Node ids are shuffled (a child's id may be below its parent's)."""
    vocab = matcher.vocab_size
    mask = gm.allocate_token_bitmask(1, vocab)
    states = [matcher.fork()]
    parent, tokens = [-1], [0]
    for i in range(1, n):
        live = [j for j in range(i) if states[j] is not None and not states[j].is_terminated()]
        p = rng.choice(live) if live and rng.randrange(8) else rng.randrange(i)
        r = rng.randrange(20)
        token = rng.randrange(vocab)
        if r == 0:
            token = eos
        elif r < 15 and states[p] is not None and not states[p].is_terminated():
            states[p].fill_next_token_bitmask(mask)
            ids = allowed_ids(mask[0])
            if len(ids):
                token = int(rng.choice(ids))
        parent.append(p)
        tokens.append(token)
        child = states[p].fork() if states[p] is not None else None
        states.append(child if child is not None and child.accept_token(token) else None)
    ids = [0] + rng.sample(range(1, n), n - 1)
    next_token, next_sibling, draft = [-1] * n, [-1] * n, [0] * n
    last = {}
    for i in range(n):
        draft[ids[i]] = tokens[i]
        if i:
            p = parent[i]
            if p in last:
                next_sibling[last[p]] = ids[i]
            else:
                next_token[ids[p]] = ids[i]
            last[p] = ids[i]
    return (np.array(next_token, np.int64), np.array(next_sibling, np.int64),
            np.array(draft, np.int64))


def loop_masks(matcher, tree, eos_after_end):
    """What engines do today: accept each node's token, fill, recurse, roll back."""
    next_token, next_sibling, draft = tree
    rows = np.zeros((len(draft), (matcher.vocab_size + 31) // 32), np.int32)

    def visit(node, root):
        if not root:
            tok = int(draft[node])
            if not (0 <= tok < matcher.vocab_size and matcher.accept_token(tok)):
                return
        if not matcher.is_terminated() or eos_after_end:
            matcher.fill_next_token_bitmask(rows, node)
            c = int(next_token[node])
            while c != -1:
                visit(c, False)
                c = int(next_sibling[c])
        if not root:
            matcher.rollback(1)

    visit(0, True)
    return rows


@pytest.mark.parametrize("eos_after_end", [False, True])
@pytest.mark.parametrize("name", ["schema", "ebnf", "lark-json"])
def test_tree_equals_loop(grammars, llama3, name, eos_after_end):
    rng = random.Random(f"{name}-{eos_after_end}")
    eos = llama3.stop_token_ids[0]
    matcher = gm.GrammarMatcher(grammars[name], eos_after_end=eos_after_end)
    mask = gm.allocate_token_bitmask(1, matcher.vocab_size)
    filled = nodes = 0
    for n in (8, 32, 64) * 3:
        matcher.reset()
        for _ in range(rng.randrange(4)):  # the root a few tokens into the output
            matcher.fill_next_token_bitmask(mask)
            ids = [t for t in allowed_ids(mask[0]) if t != eos]
            if not ids:
                break
            assert matcher.accept_token(int(rng.choice(ids)))
        tree = random_tree(matcher, n, rng, eos)
        want = loop_masks(matcher, tree, eos_after_end)
        before = gm.allocate_token_bitmask(1, matcher.vocab_size)
        matcher.fill_next_token_bitmask(before)
        got = gm.allocate_token_bitmask(n, matcher.vocab_size)  # all ones: every row written
        assert matcher.traverse_draft_tree(*tree, got) is True
        for i in range(n):
            assert np.array_equal(np.asarray(got[i]), want[i]), f"{n}-node tree, node {i}"
        filled += int(np.count_nonzero(want.any(axis=1)))
        nodes += n
        after = gm.allocate_token_bitmask(1, matcher.vocab_size)
        matcher.fill_next_token_bitmask(after)
        assert np.array_equal(np.asarray(before), np.asarray(after))  # state unchanged
    assert filled * 2 > nodes  # the trees went deep: most nodes got a mask


def test_malformed_trees(grammars):
    matcher = gm.GrammarMatcher(grammars["ebnf"])
    bitmask = gm.allocate_token_bitmask(4, matcher.vocab_size)
    tokens = np.zeros(4, np.int64)
    cases = [([1, 2, 0, -1], [-1, -1, -1, -1], "links to the root"),
             ([1, 2, -1, -1], [-1, -1, 1, -1], "node 1 is linked from two places"),
             ([1, -1, 3, -1], [-1, -1, -1, 2], "node 2 lies on a cycle"),
             ([1, 9, -1, -1], [-1, -1, -1, -1], "next_token[1] is 9"),
             ([1, -1, -1, -1], [3, -1, -1, -1], "the root (node 0) has a sibling")]
    for nt, ns, message in cases:
        with pytest.raises(ArgumentError, match=re.escape(message)):
            matcher.traverse_draft_tree(np.array(nt, np.int64), np.array(ns, np.int64), tokens,
                                        bitmask)
    # XGrammar's checks raise RuntimeError (ArgumentError is one)
    nt = np.array([1, -1, -1, -1], np.int64)
    with pytest.raises(RuntimeError):
        matcher.traverse_draft_tree(nt, np.full(4, -1, np.int32), tokens, bitmask)
    with pytest.raises(RuntimeError):
        matcher.traverse_draft_tree(nt, np.full(3, -1, np.int64), tokens, bitmask)
    with pytest.raises(RuntimeError):
        matcher.traverse_draft_tree(nt, np.full(4, -1, np.int64), tokens, bitmask[:2])
    # plain lists work too
    assert matcher.traverse_draft_tree([1, -1, -1, -1], [-1] * 4, [0] * 4, bitmask)


def test_gil_released(grammars):
    """Another thread runs while a long chain is walked: the call does not hold the GIL."""
    compiled = gm.GrammarCompiler(grammars["ebnf"].tokenizer_info).compile_grammar(
        'root ::= "1"+')
    one = compiled.tokenizer_info.encode("1")
    assert len(one) == 1
    n = 20000
    nt = np.arange(1, n + 1, dtype=np.int64)
    nt[-1] = -1
    matcher = gm.GrammarMatcher(compiled)
    bitmask = gm.allocate_token_bitmask(n, matcher.vocab_size)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)

    t = threading.Thread(target=tick)
    t.start()
    try:
        matcher.traverse_draft_tree(nt, np.full(n, -1, np.int64), np.full(n, one[0], np.int64),
                                    bitmask)
        during = len(ticks)
    finally:
        done.set()
        t.join()
    assert during > 1000
    assert bitmask[n - 1].any()


def test_eos_after_end(llama3):
    compiled = gm.GrammarCompiler(llama3).compile_grammar('root ::= "ab"')
    ab = llama3.encode("ab")
    assert len(ab) == 1
    eos = llama3.stop_token_ids
    for mode in (False, True):
        m = gm.GrammarMatcher(compiled, eos_after_end=mode)
        assert m.accept_token(ab[0]) and m.accept_token(eos[0]) and m.is_terminated()
        mask = gm.allocate_token_bitmask(1, m.vocab_size)
        assert not m.accept_token(ab[0])
        if not mode:
            with pytest.raises(gm.errors.StateError):
                m.fill_next_token_bitmask(mask)
            assert not m.accept_token(eos[0])
        else:
            m.fill_next_token_bitmask(mask)
            assert sorted(allowed_ids(mask[0]).tolist()) == sorted(eos)
            assert m.accept_token(eos[0]) and m.is_terminated()
            assert m.fork().fill_next_token_bitmask(mask) is True  # a fork keeps the mode
            m.rollback(2)
            assert not m.is_terminated() and m.is_accepting()
