"""Grammars across processes: compiled grammars to and from bytes and pickle, loaded in
other processes (multiprocessing "spawn" workers, as engines start theirs), give the masks
of the original at every step; bad bytes are refused with FormatError saying why.

The reference is the original compiled grammar in this process: a copy must agree with it
bit for bit along program texts (LALR: the bundled Go, JSON and Python grammars under the
basic and the contextual lexer) and seeded random walks (Earley: EBNF, JSON Schema,
structural tag)."""

import multiprocessing
import pickle
import random
import struct

import numpy as np
import pytest

import gramask as gm

GO = ('package main\n\nimport "fmt"\n\nfunc main() {\n\tfor i := 0; i < 3; i++ {\n'
      '\t\tfmt.Println(i * 2)\n\t}\n}\n')
JSON = '{"a": [1, 2.5, null, true], "b": {"c": "d\\u00e9"}}'
PYTHON = ('def f(x, *args):\n    if x:\n        return [y for y in args if y]\n'
          '    return None\n\n\nprint(f(1, 2))\n')
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                           "n": {"type": "integer"}},
          "required": ["name"], "additionalProperties": False}
EBNF = 'root ::= item (", " item)* "."\nitem ::= [a-z]+ | [0-9]{1,3}\n'
TAG = {"type": "structural_tag", "format": {
    "type": "triggered_tags", "triggers": ["<f="], "tags": [
        {"begin": "<f=get>", "content": {"type": "json_schema", "json_schema": SCHEMA},
         "end": "</f>"}]}}


def masks_along(compiled, ids):
    """The mask before each token of ids and after the last, as bytes."""
    m = gm.GrammarMatcher(compiled)
    bm = gm.allocate_token_bitmask(1, compiled.vocab_size)
    out = []
    for t in ids:
        m.fill_next_token_bitmask(bm)
        out.append(np.asarray(bm).tobytes())
        assert m.accept_token(t), t
    m.fill_next_token_bitmask(bm)
    out.append(np.asarray(bm).tobytes())
    return out


def random_ids(compiled, seed, steps=60):
    """A seeded random walk over allowed tokens (EOS excluded until no other is left)."""
    rng = random.Random(seed)
    m = gm.GrammarMatcher(compiled)
    eos = set(compiled.tokenizer_info.stop_token_ids)
    bm = gm.allocate_token_bitmask(1, compiled.vocab_size)
    ids = []
    for _ in range(steps):
        m.fill_next_token_bitmask(bm)
        bits = np.unpackbits(np.asarray(bm)[0].view(np.uint8), bitorder="little")[:compiled.vocab_size]
        allowed = [int(t) for t in np.flatnonzero(bits) if int(t) not in eos]
        if not allowed:
            break
        t = rng.choice(allowed)
        assert m.accept_token(t)
        ids.append(t)
    return ids


def copies(compiled, tmp_path):
    """The compiled grammar through bytes, pickle, and a file."""
    path = tmp_path / "g.gmc"
    compiled.save(path)
    data = compiled.to_bytes()
    assert path.read_bytes() == data
    return {"bytes": gm.CompiledGrammar.from_bytes(data),
            "pickle": pickle.loads(pickle.dumps(compiled)),
            "file": gm.CompiledGrammar.load(path)}


@pytest.mark.parametrize("lexer", ["basic", "contextual"])
@pytest.mark.parametrize("name", ["go", "json", "python"])
def test_lalr_round_trips(sp32k, tmp_path, name, lexer):
    text = {"go": GO, "json": JSON, "python": PYTHON}[name]
    compiled = gm.GrammarCompiler(sp32k).compile_bundled(name, lexer=lexer)
    ids = sp32k.encode(text)
    want = masks_along(compiled, ids)
    for how, copy in copies(compiled, tmp_path).items():
        assert copy.stats["engine"] == "lalr"
        assert masks_along(copy, ids) == want, how
    walk = random_ids(compiled, seed=len(text))
    want = masks_along(compiled, walk)
    for how, copy in copies(compiled, tmp_path).items():
        assert masks_along(copy, walk) == want, how


def earley_grammars(comp):
    return {"ebnf": comp.compile_ebnf(EBNF), "json_schema": comp.compile_json_schema(SCHEMA),
            "structural_tag": comp.compile_structural_tag(TAG)}


@pytest.mark.parametrize("kind", ["ebnf", "json_schema", "structural_tag"])
def test_earley_round_trips(sp32k, tmp_path, kind):
    compiled = earley_grammars(gm.GrammarCompiler(sp32k))[kind]
    for seed in range(3):
        walk = random_ids(compiled, seed=seed)
        assert len(walk) >= 3
        want = masks_along(compiled, walk)
        for how, copy in copies(compiled, tmp_path).items():
            assert copy.stats["engine"] == "earley"
            assert masks_along(copy, walk) == want, (how, seed)


def test_pickle_keeps_what_the_matcher_needs(sp32k, tmp_path):
    """A pickled compiled grammar keeps its grammar (override_stop_tokens compiles it
    again) and its vocabulary's metadata; TokenizerInfo and Grammar pickle on their own."""
    compiled = gm.GrammarCompiler(sp32k).compile_json_schema(SCHEMA)
    copy = pickle.loads(pickle.dumps(compiled))
    assert copy.grammar is not None and str(copy.grammar) == str(compiled.grammar)
    assert copy.tokenizer_info.stop_token_ids == sp32k.stop_token_ids
    assert copy.tokenizer_info.vocab_type == sp32k.vocab_type
    other = [t for t in range(10, 20) if t not in sp32k.stop_token_ids][0]
    m = gm.GrammarMatcher(copy, override_stop_tokens=[other])
    assert m.accept_string('{"name": "x"}') and m.accept_token(other) and m.is_terminated()

    info = pickle.loads(pickle.dumps(sp32k))
    assert info.vocab_size == sp32k.vocab_size
    assert info.decoded_vocab == sp32k.decoded_vocab
    assert info.stop_token_ids == sp32k.stop_token_ids
    assert info.special_token_ids == sp32k.special_token_ids
    # Special tokens stay special (never text): a grammar compiled for the copy is the
    # same compiled file as for the original.
    g = gm.Grammar.from_regex("[a-z<|>/ ]+")
    assert (gm.GrammarCompiler(info).compile_grammar(g).to_bytes()
            == gm.GrammarCompiler(sp32k).compile_grammar(g).to_bytes())
    g2 = pickle.loads(pickle.dumps(g))
    assert g2.serialize_json() == g.serialize_json()
    (tmp_path / "r.regex").write_text("[a-z]+")
    with pytest.raises(gm.UnsupportedError):  # built from a file, not from text
        pickle.dumps(gm.Grammar.from_file(tmp_path / "r.regex"))


def _worker_masks(job):
    """In a spawned process: unpickle the compiled grammar and walk it."""
    blob, ids = job
    compiled = pickle.loads(blob)
    return masks_along(compiled, ids)


def test_spawn_workers(sp32k):
    """Pickled compiled grammars sent to multiprocessing "spawn" workers (fresh
    interpreters, as vLLM's and SGLang's workers are) give the parent's masks."""
    comp = gm.GrammarCompiler(sp32k)
    jobs, want = [], []
    for compiled, ids in [
            (comp.compile_bundled("json", lexer="contextual"), sp32k.encode(JSON)),
            (comp.compile_bundled("go"), sp32k.encode(GO)),
            (comp.compile_json_schema(SCHEMA), None),
            (comp.compile_structural_tag(TAG), None)]:
        if ids is None:
            ids = random_ids(compiled, seed=7)
        jobs.append((pickle.dumps(compiled), ids))
        want.append(masks_along(compiled, ids))
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        got = pool.map(_worker_masks, jobs, chunksize=1)
    assert got == want


def test_bad_bytes(json_sp32k):
    data = json_sp32k.to_bytes()
    cases = {
        b"": "not a gramask compiled file",
        b"GRAMASK": "not a gramask compiled file",
        b"X" + data[1:]: "not a gramask compiled file",
        data[:-1]: "truncated",
        data[:len(data) // 2]: "truncated",
        data[:8] + struct.pack("<I", 7) + data[12:]: "recompile",
        data[:-5] + bytes([data[-5] ^ 0x20]) + data[-4:]: "checksum",
    }
    for bad, why in cases.items():
        with pytest.raises(gm.FormatError, match=why):
            gm.CompiledGrammar.from_bytes(bad)
    with pytest.raises(TypeError):
        gm.CompiledGrammar.from_bytes("not bytes")
    # Memory views and bytearrays are bytes too.
    assert gm.CompiledGrammar.from_bytes(memoryview(bytearray(data))).vocab_size == \
        json_sp32k.vocab_size
