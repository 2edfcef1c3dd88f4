"""The Python API end to end: tokenizers, grammars, the compiler cache, matcher
operations, bitmask application (checked against numpy's unpackbits), the logits
processor, compiled files, errors with their C message and location."""

import copy
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gramask as gm
from conftest import allowed, shared

TOY_VOCAB = [b"a", b"b", b"ab", b"ba", b"c", b"<eos>", b"<ctl>"]


@pytest.fixture
def toy():
    info = gm.TokenizerInfo(TOY_VOCAB, stop_token_ids=[5], special_token_ids=[6])
    grammar = gm.Grammar.from_lark('start: "a"+ "b"')
    return info, gm.GrammarCompiler(info).compile_grammar(grammar)  # a Grammar of any format


def brute_force(prefix: bytes, vocab, lang) -> set:
    """Tokens t such that prefix + t is a prefix of some sentence of lang (a regex)."""
    out = set()
    for t, b in enumerate(vocab):
        s = (prefix + b).decode()
        if b.startswith(b"<"):
            continue
        # a+b: a string is a viable prefix when it is a*  or a+b.
        if re.fullmatch(lang + "|a*", s):
            out.add(t)
    return out


def test_toy_masks_brute_force(toy):
    info, compiled = toy
    assert info.vocab_size == 7 and info.stop_token_ids == [5]
    bitmask = gm.allocate_token_bitmask(1, info.vocab_size)
    assert tuple(bitmask.shape) == (1, 1) and np.asarray(bitmask).dtype == np.int32
    m = gm.GrammarMatcher(compiled)
    prefix = b""
    for token in [0, 0, 2]:  # "a" "a" "ab"
        assert m.fill_next_token_bitmask(bitmask) is True
        want = brute_force(prefix, TOY_VOCAB, "a+b")
        if re.fullmatch(b"a+b", prefix):
            want.add(5)
        assert allowed(bitmask[0]) == want, prefix
        assert m.accept_token(token)
        prefix += TOY_VOCAB[token]
    m.fill_next_token_bitmask(bitmask)
    assert allowed(bitmask[0]) == {5}
    assert not m.accept_token(0)  # rejected: state unchanged
    assert m.is_accepting() and not m.is_terminated()
    assert m.accept_token(5) and m.is_terminated()


def test_tokenizer_info(sp32k, llama3):
    assert sp32k.vocab_size == 32000 and sp32k.stop_token_ids == [2]
    assert llama3.vocab_size == 128256
    assert sp32k.token_bytes(272) == b" the"
    assert sp32k.decode([272, 272]) == b" the the"
    assert len(sp32k.decoded_vocab) == 32000
    padded = gm.TokenizerInfo.from_file(shared("tokenizers", "sp32k"), vocab_size=32064,
                                        stop_token_ids=[1])
    assert padded.vocab_size == 32064 and padded.stop_token_ids == [1, 2]
    assert padded.token_bytes(32063) == b""
    with pytest.raises(IndexError):
        sp32k.token_bytes(32000)


def test_from_huggingface_duck_typed():
    path = os.path.join(shared("tokenizers", "sp32k"), "tokenizer.json")

    class Backend:
        def to_str(self):
            with open(path, encoding="utf-8") as f:
                return f.read()

    class FastTokenizer:
        backend_tokenizer = Backend()
        eos_token_id = 2

    info = gm.TokenizerInfo.from_huggingface(FastTokenizer())
    assert info.vocab_size == 32000 and info.stop_token_ids == [2]
    # the encoder reads tokenizer.json on first use, after from_huggingface returned
    assert info.encode("Hello world") == gm.TokenizerInfo.from_file(path).encode("Hello world")
    with pytest.raises(TypeError, match="fast tokenizer"):
        gm.TokenizerInfo.from_huggingface(object())


def test_grammar_error_location():
    with pytest.raises(gm.GrammarError) as e:
        gm.Grammar.from_lark('start: "a" b\n')
    assert isinstance(e.value, ValueError)
    assert (e.value.line, e.value.column) == (1, 12)
    # from_lark reads XGrammar's Lark dialect and reports as XGrammar does
    assert "Lark error at line 1, column 12: unknown name 'b'" in str(e.value)
    assert "^" in str(e.value)
    assert e.value.status == "grammar error"
    with pytest.raises(gm.GrammarSyntaxError) as e:
        gm.Grammar.from_lark('start: "a" |\nb: (\n', name="broken.lark")
    assert e.value.line == 2 and "broken.lark:2:" in str(e.value)
    with pytest.raises(gm.GramaskError) as e:
        gm.Grammar.from_gbnf('root ::= "a" x\nx ::= [a-\n')
    assert isinstance(e.value, ValueError) and e.value.line == 2, str(e.value)


def test_grammar_files_and_warnings(tmp_path):
    p = tmp_path / "g.lark"
    p.write_text('start: x\nx: "x"\nunused: "u"\n')
    g = gm.Grammar.from_file(p)
    assert g.engine == "lalr"
    assert any("unused" in w for w in g.warnings), g.warnings
    with pytest.raises(gm.FileError) as e:
        gm.Grammar.from_file(tmp_path / "missing.lark")
    assert isinstance(e.value, OSError) and "missing.lark" in str(e.value)
    with pytest.raises(gm.ArgumentError, match="no bundled grammar"):
        gm.Grammar.bundled("nope")


def test_json_schema_inputs():
    from gramask.grammar import schema_text

    class Model:
        @classmethod
        def model_json_schema(cls):
            return {"type": "object", "properties": {"x": {"type": "integer"}}}

    assert json.loads(schema_text(Model)) == Model.model_json_schema()
    assert json.loads(schema_text({"type": "string"})) == {"type": "string"}
    assert schema_text('{"type": "string"}') == '{"type": "string"}'
    with pytest.raises(TypeError):
        schema_text(42)


def test_compiler_cache(sp32k):
    c = gm.GrammarCompiler(sp32k)
    a = c.compile_lark('start: "x"+')
    assert c.compile_lark('start: "x"+') is a
    assert c.compile_grammar('root ::= "x"+') is c.compile_ebnf('root ::= "x"+')  # XGrammar's EBNF
    assert c.compile_bundled("json") is c.compile_builtin_json_grammar()
    assert c.cache_size == 3 and c.get_cache_size_bytes() > 0
    c.clear_cache()
    assert c.cache_size == 0
    assert c.compile_lark('start: "x"+') is not a
    nc = gm.GrammarCompiler(sp32k, cache_enabled=False)
    assert nc.compile_bundled("json") is not nc.compile_bundled("json")
    assert a.vocab_size == 32000 and a.mask_words == 1000
    assert a.stats["lr_states"] > 0 and a.tokenizer_info.vocab_size == 32000


def test_matcher_operations(json_sp32k, sp32k):
    m = gm.GrammarMatcher(json_sp32k)
    bm = gm.allocate_token_bitmask(1, sp32k.vocab_size)
    assert m.accept_string('{"a": [1, tr')
    assert m.find_jump_forward_string() == "ue"
    assert m.find_jump_forward_bytes() == b"ue"
    m.fill_next_token_bitmask(bm)
    before = allowed(bm[0])
    fork = m.fork()
    assert fork.accept_string("ue]}")
    assert fork.is_accepting() and not m.is_accepting()
    m.fill_next_token_bitmask(bm)
    assert allowed(bm[0]) == before  # the fork did not move m
    assert not m.accept_string("x")   # rejected, state unchanged
    assert m.accept_string(b"ue")
    m.rollback()
    m.fill_next_token_bitmask(bm)
    assert allowed(bm[0]) == before
    assert copy.copy(m).accept_string("ue") and copy.deepcopy(m).accept_string("ue")
    vocab = sp32k.decoded_vocab
    ids = [vocab.index(b"ue"), vocab.index(b"]"), vocab.index(b"]")]
    assert m.validate_tokens(ids) == 2
    m.reset()
    assert m.accept_string("[]") and m.is_accepting()
    assert m.compiled_grammar is json_sp32k
    assert m.stop_token_ids == [2] and m.vocab_size == 32000
    with gm.GrammarMatcher(json_sp32k, max_rollback_tokens=2) as m2:
        assert m2.max_rollback_tokens == 2
        for s in ["[", "1", ",", "2"]:
            assert m2.accept_string(s)
        m2.rollback(2)
        with pytest.raises(gm.ArgumentError):
            m2.rollback(1)
    assert m2.closed


def test_jump_forward_cut_to_whole_characters(llama3):
    g = gm.GrammarCompiler(llama3).compile_lark('start: "é" "x"')
    m = gm.GrammarMatcher(g)
    assert m.find_jump_forward_string() == "éx"
    assert m.accept_string(b"\xc3")
    assert m.find_jump_forward_bytes() == b"\xa9x"
    assert m.find_jump_forward_string() == ""


def unpack(bitmask, vocab):
    return np.unpackbits(np.ascontiguousarray(bitmask).view(np.uint8), axis=-1,
                         bitorder="little")[..., :vocab].astype(bool)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_apply_token_bitmask_matches_numpy(dtype):
    rng = np.random.default_rng(7)
    vocab = 1000
    logits = rng.standard_normal((4, vocab)).astype(dtype)
    bitmask = rng.integers(-2**31, 2**31, size=(4, 32), dtype=np.int64).astype(np.int32)
    bitmask[1] = 0
    bitmask[2] = -1
    want = np.where(unpack(bitmask, vocab), logits, -np.inf).astype(dtype)
    got = logits.copy()
    gm.apply_token_bitmask_inplace(got, bitmask)
    assert np.array_equal(got, want)
    # indices: only those rows; vocab_size: only the first columns
    got = logits.copy()
    gm.apply_token_bitmask_inplace(got, bitmask, indices=[3, 1], vocab_size=500)
    assert np.array_equal(got[[0, 2]], logits[[0, 2]])
    assert np.array_equal(got[[1, 3], :500], want[[1, 3], :500])
    assert np.array_equal(got[:, 500:], logits[:, 500:])
    # one row
    row = logits[0].copy()
    gm.apply_token_bitmask_inplace(row, bitmask[0])
    assert np.array_equal(row, want[0])


class DLPackOnly:
    """An array offering only __dlpack__ (as torch tensors do), to test that path
    without torch."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_dlpack_path():
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((2, 100)).astype(np.float32)
    bitmask = rng.integers(-2**31, 2**31, size=(2, 4), dtype=np.int64).astype(np.int32)
    want = np.where(unpack(bitmask, 100), logits, -np.inf)
    gm.apply_token_bitmask_inplace(DLPackOnly(logits), DLPackOnly(bitmask))
    assert np.array_equal(logits, want)
    # a DLPack bitmask for a matcher too
    info = gm.TokenizerInfo(TOY_VOCAB, stop_token_ids=[5])
    m = gm.GrammarMatcher(gm.GrammarCompiler(info).compile_lark('start: "ab"'))
    bm = np.zeros((1, 1), dtype=np.int32)
    m.fill_next_token_bitmask(DLPackOnly(bm))
    assert allowed(bm[0]) == {0, 2}


def test_torch_tensors(json_sp32k):
    torch = pytest.importorskip("torch")
    m = gm.GrammarMatcher(json_sp32k)
    bitmask = torch.as_tensor(gm.allocate_token_bitmask(2, json_sp32k.vocab_size))
    m.fill_next_token_bitmask(bitmask, 1)
    want = allowed(bitmask[1].numpy())
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        logits = torch.randn(2, json_sp32k.vocab_size).to(dtype)
        gm.apply_token_bitmask_inplace(logits, bitmask, indices=[1])
        assert set(torch.nonzero(torch.isfinite(logits[1])).flatten().tolist()) == want
        assert torch.isfinite(logits[0]).all()


def test_logits_processor_numpy(llama3):
    """A batch of 3 decoded with seeded random logits under a bounded grammar: every
    output matches the grammar's language (checked with Python's re)."""
    grammar = 'start: WORD ("," WORD)~0..3\nWORD: /[a-z]{1,6}/\n'
    compiled = gm.GrammarCompiler(llama3).compile_lark(grammar)
    eos = llama3.stop_token_ids[0]
    proc = gm.LogitsProcessor(compiled, max_threads=2)
    rng = np.random.default_rng(3)
    batch, prompt = 3, 4
    input_ids = np.ones((batch, prompt), dtype=np.int64)
    for _ in range(100):
        scores = rng.standard_normal((batch, 128300)).astype(np.float32)  # padded model vocab
        scores[:, eos] += 3.0  # lean towards EOS once it is allowed
        out = proc(input_ids, scores)
        assert out is scores
        for i, m in enumerate(proc.matchers):
            if not m.is_terminated():  # finished rows are left alone
                assert np.isneginf(scores[i, 128256:]).all()
        nxt = scores.argmax(axis=1)
        input_ids = np.concatenate([input_ids, nxt[:, None]], axis=1)
        if proc.is_terminated():
            break
    assert proc.is_terminated()
    for row in input_ids:
        ids = [int(t) for t in row[prompt:]]
        end = ids.index(eos)
        text = llama3.decode(ids[:end]).decode()
        assert re.fullmatch(r"[a-z]{1,6}(,[a-z]{1,6}){0,3}", text), text
    proc.close()


def test_save_load(tmp_path, json_sp32k, sp32k):
    path = tmp_path / "json.gmc"
    json_sp32k.save(path)
    loaded = gm.CompiledGrammar.load(path)
    assert loaded.vocab_size == 32000 and loaded.grammar is None
    a, b = gm.GrammarMatcher(json_sp32k), gm.GrammarMatcher(loaded)
    ba, bb = gm.allocate_token_bitmask(1, 32000), gm.allocate_token_bitmask(1, 32000)
    for s in ["{", '"k"', ":", " [", "1"]:
        a.fill_next_token_bitmask(ba)
        b.fill_next_token_bitmask(bb)
        assert np.array_equal(ba, bb)
        assert a.accept_string(s) and b.accept_string(s)
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(gm.FormatError):
        gm.CompiledGrammar.load(path)


def test_bad_tokenizer_file(tmp_path):
    p = tmp_path / "tokenizer.json"
    p.write_text('{"model": {"type": "BPE", "vocab": [1, 2]}}')
    with pytest.raises(gm.FormatError) as e:
        gm.TokenizerInfo.from_file(p)
    assert "tokenizer.json" in str(e.value)


def test_python_m_gramask():
    r = subprocess.run([sys.executable, "-m", "gramask"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "every sample token allowed: yes; EOS allowed at the end: yes" in r.stdout


def test_encode_matches_reference_tokenization(llama3):
    """TokenizerInfo.encode gives the ids of ../shared/corpus (a Hugging Face-compatible
    reference encoder's), and decode gives the file back."""
    with open(shared("corpus", "python", "ids.llama3.json")) as f:
        entry = json.load(f)[0]
    with open(shared("corpus", "python", entry["file"]), "rb") as f:
        text = f.read()
    assert llama3.encode(text) == entry["ids"]
    assert llama3.decode(entry["ids"]) == text
    assert llama3.encode("<|eot_id|>") == [128009]
    assert llama3.encode("<|eot_id|>", special_as_text=True) != [128009]
    toy = gm.TokenizerInfo([b"a"], stop_token_ids=[0])
    with pytest.raises(gm.UnsupportedError):
        toy.encode("a")


def test_logits_processor_torch(llama3):
    """The Hugging Face shapes and types: input_ids a LongTensor, scores a FloatTensor."""
    torch = pytest.importorskip("torch")
    compiled = gm.GrammarCompiler(llama3).compile_lark('start: ("a" | "b")~1..3 "!"')
    proc = gm.LogitsProcessor(compiled)
    eos = llama3.stop_token_ids[0]
    gen = torch.Generator().manual_seed(5)
    input_ids = torch.zeros((2, 3), dtype=torch.long)
    while not proc.is_terminated():
        scores = torch.randn((2, llama3.vocab_size), generator=gen)
        scores[:, eos] += 3.0
        scores = proc(input_ids, scores)
        input_ids = torch.cat([input_ids, scores.argmax(dim=1, keepdim=True)], dim=1)
        assert input_ids.shape[1] < 20
    for row in input_ids.tolist():
        ids = row[3:row.index(eos)]
        assert re.fullmatch(r"[ab]{1,3}!", llama3.decode(ids).decode())


EARLEY_VOCAB = [b"a", b"b", b"c", b"x", b"y", b"z", b"ab", b"yz", b"cx", b"bb", b"ca", b"<eos>"]
# One finite language, [a-c]{1,3}(x|yz)?, in the three Earley formats.
EARLEY_FORMS = [
    ("regex", lambda c: c.compile_regex("[a-c]{1,3}(x|yz)?")),
    ("gbnf", lambda c: c.compile_gbnf('root ::= [a-c] [a-c]? [a-c]? ("x" | "yz")?')),
    ("ebnf", lambda c: c.compile_ebnf('root ::= [a-c] [a-c]? [a-c]? ("x" | "yz")?')),
]


@pytest.mark.parametrize("name,make", EARLEY_FORMS)
def test_earley_formats_brute_force(name, make):
    """Masks of GBNF, EBNF and regex grammars equal a brute force over the language's
    sentences (enumerated with Python's re), along random walks."""
    import itertools
    import random
    info = gm.TokenizerInfo(EARLEY_VOCAB, stop_token_ids=[11])
    compiled = make(gm.GrammarCompiler(info))
    assert compiled.stats["engine"] == "earley"
    sentences = {"".join(p) + tail for n in (1, 2, 3) for p in itertools.product("abc", repeat=n)
                 for tail in ("", "x", "yz")}
    assert all(re.fullmatch("[a-c]{1,3}(x|yz)?", s) for s in sentences)
    rng = random.Random(11)
    bm = gm.allocate_token_bitmask(1, info.vocab_size)
    for _ in range(40):
        m = gm.GrammarMatcher(compiled)
        prefix = ""
        while True:
            m.fill_next_token_bitmask(bm)
            want = {t for t, b in enumerate(EARLEY_VOCAB[:11])
                    if any(s.startswith(prefix + b.decode()) for s in sentences)}
            if prefix in sentences:
                want.add(11)
            assert allowed(bm[0]) == want, (name, prefix)
            t = rng.choice(sorted(want))
            assert m.accept_token(t)
            if t == 11:
                assert m.is_terminated()
                break
            prefix += EARLEY_VOCAB[t].decode()


def test_json_schema(llama3):
    class Item:  # Pydantic-style: a class with model_json_schema()
        @classmethod
        def model_json_schema(cls):
            return {"type": "object", "additionalProperties": False, "required": ["a", "b"],
                    "properties": {"a": {"type": "integer"},
                                   "b": {"type": "array", "items": {"enum": ["x", "y"]},
                                         "maxItems": 2}}}

    compiler = gm.GrammarCompiler(llama3)
    doc = {"a": 1, "b": ["x"]}
    texts = {"spaces": json.dumps(doc), "compact": json.dumps(doc, separators=(",", ":")),
             "indent": json.dumps(doc, indent=2)}
    layouts = {"flexible": ({}, {"spaces", "compact", "indent"}),
               "dumps": ({"any_whitespace": False}, {"spaces"}),  # json.dumps' separators
               "compact": ({"any_whitespace": False, "separators": (",", ":")}, {"compact"}),
               "indent": ({"indent": 2, "any_whitespace": False}, {"indent"})}
    for layout, (options, accepted) in layouts.items():
        compiled = compiler.compile_json_schema(Item, **options)
        assert compiled is compiler.compile_json_schema(Item.model_json_schema(), **options)
        assert compiled.stats["engine"] == "earley"
        for name, text in texts.items():
            m = gm.GrammarMatcher(compiled)
            assert (m.accept_string(text) and m.is_accepting()) == (name in accepted), (layout, name)
    m = gm.GrammarMatcher(compiler.compile_json_schema(Item))
    assert not m.accept_string('{"a": 1, "c"')  # additionalProperties: false
    assert not m.accept_string('{"a": "1"')     # a is an integer
    with pytest.raises(gm.UnsupportedError, match="uniqueItems"):
        gm.Grammar.from_json_schema({"type": "array", "uniqueItems": True})
    g = gm.Grammar.from_json_schema({"type": "array", "uniqueItems": True}, lenient=True)
    assert any("uniqueItems" in w for w in g.warnings)
    with pytest.raises(gm.GrammarSyntaxError) as e:
        gm.Grammar.from_json_schema('{"type": "object",\n "x": }')
    assert e.value.line == 2
    # exclusiveMaximum: a boolean in draft 4, a number since draft 6
    for draft, schema in [("4", {"type": "integer", "maximum": 5, "exclusiveMaximum": True}),
                          ("2020-12", {"type": "integer", "exclusiveMaximum": 5})]:
        compiled = compiler.compile_json_schema(schema, draft=draft)
        for text, ok in [("4", True), ("5", False)]:
            m = gm.GrammarMatcher(compiled)
            assert (m.accept_string(text) and m.is_accepting()) == ok, (draft, text)
    with pytest.raises(ValueError, match="draft"):
        gm.Grammar.from_json_schema({}, draft="3")


def test_tools_and_structural_tags(llama3):
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"], "additionalProperties": False}}}]
    compiler = gm.GrammarCompiler(llama3)
    turn = 'Let me check.<function=get_weather>{"city": "Oslo"}</function>'
    compiled = compiler.compile_tools(tools, "llama")
    assert compiled is compiler.compile_tools(tools, "llama")
    m = gm.GrammarMatcher(compiled)
    assert m.accept_string(turn) and m.is_accepting()
    m = gm.GrammarMatcher(compiled)
    assert not m.accept_string('<function=get_weather>{"town"')
    required = compiler.compile_tools({"tools": tools, "tool_choice": "required"}, "llama")
    m = gm.GrammarMatcher(required)
    assert m.accept_string("No call.") and not m.is_accepting()
    qwen = gm.Grammar.from_tools(tools, "qwen", reasoning="forced", parallel_tool_calls=False)
    assert qwen.engine == "earley"
    m = gm.GrammarMatcher(compiler.compile_grammar(qwen))
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
    assert not m.accept_string(call)
    assert m.accept_string("<think>hm</think>" + call) and m.is_accepting()
    assert not m.accept_string(call)  # one call only
    # XGrammar's first version: tags with schemas and triggers
    tag = {"begin": "<f>", "schema": {"type": "integer"}, "end": "</f>"}
    m = gm.GrammarMatcher(compiler.compile_structural_tag([tag], ["<f>"]))
    assert m.accept_string("x <f>12</f> y") and m.is_accepting()
    st = {"type": "structural_tag", "format": {"type": "tag", "begin": "<a>",
                                               "content": {"type": "any_text"}, "end": "</a>"}}
    m = gm.GrammarMatcher(compiler.compile_structural_tag(st))
    assert m.accept_string("<a>anything</a>") and m.is_accepting()


LET_GRAMMAR = r'''
start: "let" NAME "=" NAME
NAME: /[a-z]+/
%ignore " "
'''


def test_lexer_option(tmp_path, sp32k):
    """lexer="contextual" is Lark's contextual lexer: after "let" only NAME is lexed, so a
    second "let" is a name there; the basic lexer makes it the keyword and rejects it.
    Masks agree token by token with accepting each token (the C suite checks the contextual
    masks against a plain contextual lexer on full vocabularies: tests/test_ctxmask)."""
    comp = gm.GrammarCompiler(sp32k)
    basic = comp.compile_lark(LET_GRAMMAR)
    ctx = comp.compile_lark(LET_GRAMMAR, lexer="contextual")
    assert ctx is not basic and comp.compile_lark(LET_GRAMMAR, lexer="contextual") is ctx
    assert not gm.GrammarMatcher(basic).accept_string("let let = a")
    m = gm.GrammarMatcher(ctx)
    assert m.accept_string("let let = let") and m.is_accepting()
    vocab = sp32k.decoded_vocab
    bitmask = gm.allocate_token_bitmask(1, sp32k.vocab_size)
    masks = {}
    for name, compiled in (("basic", basic), ("contextual", ctx)):
        m = gm.GrammarMatcher(compiled)
        assert m.accept_string("let let")  # both: the lexeme may still become "lets"
        m.fill_next_token_bitmask(bitmask)
        got = allowed(bitmask[0])
        # Tokens made of the grammar's bytes, checked one by one against accepting them.
        for t, b in enumerate(vocab):
            if b and all(c in b" =abcdefghijklmnopqrstuvwxyz" for c in b):
                assert (t in got) == m.fork().accept_token(t), (name, b)
        masks[name] = got
    eq = [t for t, b in enumerate(vocab) if b in (b"=", b" =")]
    assert eq and all(t in masks["contextual"] and t not in masks["basic"] for t in eq)
    assert masks["basic"] < masks["contextual"]
    bundled = gm.Grammar.bundled("json", lexer="contextual")
    assert gm.GrammarMatcher(comp.compile_grammar(bundled)).accept_string('{"a": 1}')
    with pytest.raises(ValueError, match="lexer must be"):
        gm.Grammar.from_lark(LET_GRAMMAR, lexer="lalr")
    # Saved with its contextual lexers: "let" after "let" is still a name when loaded.
    ctx.save(tmp_path / "ctx.gmc")
    loaded = gm.CompiledGrammar.load(tmp_path / "ctx.gmc")
    assert gm.GrammarMatcher(loaded).accept_string("let let = let")
    assert not gm.GrammarMatcher(gm.CompiledGrammar.from_bytes(basic.to_bytes())) \
        .accept_string("let let = a")
