"""gramask's vLLM backend (gramask.integrations.vllm) against vLLM's real interface file
(shared/engines/vllm, unchanged from vLLM), driven as vLLM's StructuredOutputManager drives
a backend; its masks are compared step by step with the native matcher's over MaskBench
dev schemas."""

import gzip
import inspect
import itertools
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace as NS

import pytest

torch = pytest.importorskip("torch")

import gramask as gm  # noqa: E402
from conftest import SHARED, allowed, shared  # noqa: E402

_ENGINES = os.path.join(SHARED, "engines", "vllm")
if _ENGINES not in sys.path:
    sys.path.insert(0, _ENGINES)

from vllm.v1.structured_output import backend_types as bt  # noqa: E402
from vllm.v1.structured_output.backend_types import StructuredOutputOptions as O  # noqa: E402

from gramask.integrations import vllm as gv  # noqa: E402

LLAMA3 = os.path.join(SHARED, "tokenizers", "llama3")


class HFTokenizerStandIn:
    """What vLLM's backends read of a transformers fast tokenizer, from a tokenizer.json
    and tokenizer_config.json: backend_tokenizer.to_str(), get_vocab(), eos_token_id,
    all_special_ids."""

    def __init__(self, directory: str) -> None:
        with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
            text = f.read()
        doc = json.loads(text)
        self.backend_tokenizer = NS(to_str=lambda: text)
        v = doc["model"]["vocab"]
        self._vocab = dict(v) if isinstance(v, dict) else {p[0]: i for i, p in enumerate(v)}
        for t in doc.get("added_tokens", []):
            self._vocab[t["content"]] = t["id"]
        with open(os.path.join(directory, "tokenizer_config.json"), encoding="utf-8") as f:
            cfg = json.load(f)
        eos = cfg.get("eos_token")
        eos = eos.get("content") if isinstance(eos, dict) else eos
        self.eos_token_id = self._vocab.get(eos)
        self.all_special_ids = sorted(t["id"] for t in doc.get("added_tokens", []) if t.get("special"))

    def get_vocab(self):
        return dict(self._vocab)


def vllm_config(*, no_ws=False, no_props=False, ws_pattern=None, spec_tokens=0, old=False,
                max_num_seqs=8):
    so = NS(backend="gramask", disable_any_whitespace=no_ws,
            disable_additional_properties=no_props, whitespace_pattern=ws_pattern)
    return NS(**{"decoding_config" if old else "structured_outputs_config": so},
              speculative_config=NS(num_speculative_tokens=spec_tokens) if spec_tokens else None,
              scheduler_config=NS(max_num_seqs=max_num_seqs),
              model_config=NS(get_vocab_size=lambda: 128256))


@pytest.fixture(scope="module")
def tokenizer():
    shared("tokenizers", "llama3")
    return HFTokenizerStandIn(LLAMA3)


@pytest.fixture(scope="module")
def backend(tokenizer):
    b = gv.GramaskBackend(vllm_config(spec_tokens=4), tokenizer=tokenizer, vocab_size=128256)
    yield b
    b.destroy()


def test_every_abstract_method_is_implemented():
    for ours, theirs in ((gv.GramaskBackend, bt.StructuredOutputBackend),
                         (gv.GramaskGrammar, bt.StructuredOutputGrammar)):
        assert issubclass(ours, theirs)
        assert theirs.__abstractmethods__, theirs  # the interface file has abstract methods
        assert not ours.__abstractmethods__, ours.__abstractmethods__
        for name in theirs.__abstractmethods__:
            mine = getattr(ours, name)
            assert mine is not getattr(theirs, name), name
            want = list(inspect.signature(getattr(theirs, name)).parameters)
            got = list(inspect.signature(mine).parameters)
            assert got[:len(want)] == want or len(got) >= len(want), (name, got, want)
            # The manager passes them by position: the extra ones must have defaults.
            extra = list(inspect.signature(mine).parameters.values())[len(want):]
            assert all(p.default is not inspect.Parameter.empty for p in extra), name
    # Constructed as vLLM does: the dataclass fields of the interface.
    assert [f for f in gv.GramaskBackend.__dataclass_fields__] == ["vllm_config", "tokenizer",
                                                                    "vocab_size"]


def test_construction_reads_vllm_config(tokenizer):
    b = gv.GramaskBackend(vllm_config(no_ws=True, old=True), tokenizer=tokenizer, vocab_size=128256)
    assert b.options.any_whitespace is False  # from decoding_config (older vLLM)
    assert b.tokenizer_info.vocab_size == 128256
    assert b.tokenizer_info.stop_token_ids == [tokenizer.eos_token_id]
    bm = b.allocate_token_bitmask(5)
    assert bm.dtype == torch.int32 and bm.device.type == "cpu" and tuple(bm.shape) == (5, 4008)
    assert int(bm.eq(-1).all()) == 1
    # Padded model vocabulary: ids past the tokenizer are never allowed.
    wide = gv.GramaskBackend(vllm_config(), tokenizer=tokenizer, vocab_size=128256 + 64)
    g = wide.compile_grammar(O.JSON_OBJECT, "")
    bm = wide.allocate_token_bitmask(1)
    g.fill_bitmask(bm, 0)
    assert max(allowed(bm[0].numpy())) < 128256
    with pytest.raises(ValueError, match="whitespace_pattern"):
        gv.GramaskBackend(vllm_config(ws_pattern=r"[\n ]*"), tokenizer=tokenizer, vocab_size=128256)
    assert gv.GramaskBackend(vllm_config(ws_pattern=""), tokenizer=tokenizer,
                             vocab_size=128256).options.any_whitespace is False
    with pytest.raises(TypeError, match="fast tokenizer"):
        gv.GramaskBackend(vllm_config(), tokenizer=object(), vocab_size=128256)


def _accepts(grammar, ids) -> bool:
    """Whether the grammar accepts every id (checked on a fresh state, then reset)."""
    grammar.reset()
    ok = grammar.accept_tokens("r", ids)
    grammar.reset()
    return ok


def _ids(text: str):
    return gm.TokenizerInfo.from_file(LLAMA3).encode(text)


def test_request_types(backend):
    enc = gm.TokenizerInfo.from_file(LLAMA3)
    eos = backend.tokenizer_info.stop_token_ids[0]

    def check(kind, spec, good, bad):
        g = backend.compile_grammar(kind, spec)
        for text in good:
            assert _accepts(g, enc.encode(text) + [eos]), (kind, spec, text)
        for text in bad:
            assert not _accepts(g, enc.encode(text) + [eos]), (kind, spec, text)
        return g

    check(O.JSON, '{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}',
          ['{"a": 1}', '{ "a" : 12 }'], ['{"a": "x"}', '{}', '{"a": 1, "b": 2}'])
    check(O.JSON_OBJECT, "", ['{"k": [1, 2]}', "{}"], ["[1]", '"s"'])
    check(O.REGEX, r"[a-c]{2}\d", ["ab1", "cc9"], ["ab", "abc1"])
    ebnf = 'root ::= "x" [0-9]+'
    check(O.GRAMMAR, ebnf, ["x12"], ["x"])
    check(O.GRAMMAR, "start: \"x\" DIGITS\nDIGITS: /[0-9]+/\n", ["x12"], ["x"])  # Lark, detected
    check(O.GRAMMAR, "%gramask gbnf\n" + "root ::= \"y\" [a-z]", ["yq"], ["y"])  # named
    check(O.GRAMMAR, "%gramask regex\nab+", ["abbb"], ["a"])
    check(O.GRAMMAR, "# a comment with ::= in it\nstart: \"q\"\n", ["q"], ["x"])  # Lark
    tricky = ["yes", 'say "hi"', "back\\slash", "tab\there", "naïve ✓"]
    check(O.CHOICE, json.dumps(tricky), tricky, ["ye", "yesno", "say hi"])
    tags = {"structures": [{"begin": "<f>", "schema": {"type": "integer"}, "end": "</f>"}],
            "triggers": ["<f>"]}
    check(O.STRUCTURAL_TAG, json.dumps(tags), ["text <f>12</f> more", "plain"], ["<f>x</f>"])
    st = {"type": "structural_tag", "format": {"type": "const_string", "value": "OK"}}
    check(O.STRUCTURAL_TAG, json.dumps(st), ["OK"], ["NO"])


def test_request_errors(backend):
    for kind, spec, msg in ((O.GRAMMAR, "root ::= (", "GRAMMAR"),
                            (O.GRAMMAR, "   ", "empty"),
                            (O.GRAMMAR, "%gramask yacc\nx", "unknown grammar format"),
                            (O.CHOICE, "[]", "non-empty"),
                            (O.CHOICE, "[1]", "not a string"),
                            (O.JSON, "{not json", "JSON"),
                            (O.REGEX, "(", "REGEX")):
        with pytest.raises(ValueError, match=msg):
            backend.compile_grammar(kind, spec)


def test_disable_any_whitespace(tokenizer):
    enc = gm.TokenizerInfo.from_file(LLAMA3)
    eos = tokenizer.eos_token_id
    schema = '{"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}'
    tight = gv.GramaskBackend(vllm_config(no_ws=True), tokenizer=tokenizer, vocab_size=128256)
    loose = gv.GramaskBackend(vllm_config(), tokenizer=tokenizer, vocab_size=128256)
    gt, gl = tight.compile_grammar(O.JSON, schema), loose.compile_grammar(O.JSON, schema)
    assert _accepts(gt, enc.encode('{"a":[1,2]}') + [eos])
    assert not _accepts(gt, enc.encode('{"a": [1, 2]}') + [eos])
    assert _accepts(gl, enc.encode('{"a": [1, 2]}') + [eos])
    # No token holding whitespace is allowed anywhere on the compact path.
    bm = tight.allocate_token_bitmask(1)
    space_ids = {i for i in range(128000) if any(c in enc.token_bytes(i) for c in b" \n\t\r")}
    for t in enc.encode('{"a":[1,2]}'):
        gt.fill_bitmask(bm, 0)
        assert not (allowed(bm[0].numpy()) & space_ids)
        assert gt.accept_tokens("r", [t])


def _maskbench_sample(n: int):
    """n MaskBench dev schemas with a valid instance: every 97th line, in file order."""
    out = []
    with gzip.open(shared("maskbench", "dev.jsonl.gz"), "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % 97:
                continue
            doc = json.loads(line)
            valid = [t for t in doc["tests"] if t["valid"]]
            if valid:
                out.append((doc["name"], json.dumps(doc["schema"]), valid[0]["ids"]))
            if len(out) == n:
                break
    return out


def test_manager_lifecycle_equals_native_matcher(backend):
    """Drives the backend as StructuredOutputManager does (compile on a thread pool,
    allocate one bitmask for the batch, fill a row per request, accept, validate drafted
    tokens, roll back the rejected ones, reset) and checks every mask against the native
    gramask matcher on the same schema, step by step."""
    sample = _maskbench_sample(16)
    assert len(sample) == 16
    native = gm.GrammarCompiler(backend.tokenizer_info)
    eos = backend.tokenizer_info.stop_token_ids[0]
    spec_tokens = backend.num_speculative_tokens
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(backend.compile_grammar, O.JSON, schema) for _, schema, _ in sample]
        results = []
        for f in futures:
            try:
                results.append(f.result())
            except ValueError as e:  # a schema gramask refuses: the native compile must too
                results.append(e)
    requests = []
    for (name, schema, ids), g in zip(sample, results):
        try:
            ref = gm.GrammarMatcher(native.compile_json_schema(schema, any_whitespace=True))
        except gm.GramaskError:
            assert isinstance(g, ValueError), name
            continue
        assert isinstance(g, gv.GramaskGrammar), (name, g)
        ids = ids[:48] + ([eos] if len(ids) <= 48 else [])
        # What the native matcher accepts (strict mode refuses properties a schema does
        # not name, as XGrammar): the backend is compared with it on that prefix.
        ids = ids[:ref.validate_tokens(ids)]
        if len(ids) >= 2:
            requests.append((name, g, ref, ids))
    assert len(requests) >= 12
    rows = len(requests) * (1 + spec_tokens)
    bitmask = backend.allocate_token_bitmask(rows)
    ref_mask = gm.allocate_token_bitmask(1, backend.vocab_size)
    steps = 0
    for pos in itertools.count():
        live = [(r, req) for r, req in enumerate(requests) if pos < len(req[3])]
        if not live:
            break
        # The spec-decode fill of vLLM's manager: for request r, rows r*(1+k)+j hold the
        # masks after j drafted tokens, filled by accept + rollback around them.
        for r, (name, g, ref, ids) in live:
            base = r * (1 + spec_tokens)
            drafts = ids[pos:pos + spec_tokens]
            advanced = 0
            for j, tok in enumerate(drafts + [None]):
                g.fill_bitmask(bitmask, base + j)
                if tok is not None and not g.is_terminated():
                    assert g.accept_tokens(name, [tok]), (name, pos + j)
                    advanced += 1
            if advanced:
                g.rollback(advanced)
        # Verification: a draft with a wrong token at its second place; validate_tokens
        # gives the accepted prefix, which is accepted, the rest rolled back.
        for r, (name, g, ref, ids) in live:
            base = r * (1 + spec_tokens)
            assert not ref.is_terminated()
            ref.fill_next_token_bitmask(ref_mask, 0)
            assert torch.equal(bitmask[base], ref_mask[0]), (name, pos)
            steps += 1
            probe = ref.fork()
            for j, tok in enumerate(ids[pos:pos + spec_tokens]):
                if probe.is_terminated():
                    break
                probe.fill_next_token_bitmask(ref_mask, 0)
                assert torch.equal(bitmask[base + j], ref_mask[0]), (name, pos, j)
                assert probe.accept_token(tok)
            good = ids[pos:pos + 2]
            wrong = next(t for t in range(128000) if not (int(ref_mask[0][t >> 5]) >> (t & 31)) & 1) \
                if len(good) == 2 and not probe.is_terminated() else None
            drafted = good[:1] + ([wrong] if wrong is not None else good[1:])
            ok = g.validate_tokens(drafted)
            assert ok == drafted[:len(ok)] and len(ok) >= 1, (name, pos, ok, drafted)
            assert g.num_processed_tokens == pos  # validate does not move the state
            # vLLM accepts what the target model sampled: the valid token.
            assert g.accept_tokens(name, good[:1])
            assert ref.accept_token(good[0])
            assert g.is_terminated() == ref.is_terminated()
    assert steps > 300
    # Rollback and reset bring back the masks of earlier states.
    name, g, ref, ids = requests[0]
    g.reset()
    assert g.num_processed_tokens == 0 and not g.is_terminated()
    schema = next(s for n, s, _ in sample if n == name)
    fresh = gm.GrammarMatcher(native.compile_json_schema(schema, any_whitespace=True))
    fresh.fill_next_token_bitmask(ref_mask, 0)
    g.fill_bitmask(bitmask, 0)
    assert torch.equal(bitmask[0], ref_mask[0])
    assert g.accept_tokens(name, ids[:1])
    g.fill_bitmask(bitmask, 1)
    assert not torch.equal(bitmask[1], ref_mask[0])
    assert g.accept_tokens(name, ids[1:spec_tokens])
    g.rollback(spec_tokens)  # as many steps as vLLM drafts are kept
    g.fill_bitmask(bitmask, 1)
    assert torch.equal(bitmask[1], ref_mask[0])
    assert g.accept_tokens(name, ids[:spec_tokens + 1])
    with pytest.raises(gm.GramaskError, match="roll back"):
        g.rollback(spec_tokens + 1)


def test_terminated_grammar(backend):
    eos = backend.tokenizer_info.stop_token_ids[0]
    g = backend.compile_grammar(O.CHOICE, '["ok"]')
    ids = _ids("ok")
    assert g.validate_tokens(ids + [eos, 5]) == ids + [eos]  # stops at the end
    assert g.accept_tokens("r", ids + [eos, 77])  # tokens after the end are ignored
    assert g.is_terminated() and g.num_processed_tokens == len(ids) + 1
    assert g.validate_tokens([1, 2]) == []
    bm = backend.allocate_token_bitmask(2)
    bm[1] = 0
    g.fill_bitmask(bm, 1)
    assert int(bm[1].eq(-1).all()) == 1  # a finished row allows everything, as vLLM's manager
    g.rollback(1)
    assert not g.is_terminated()
    assert g.accept_tokens("r", [eos]) and g.is_terminated()
    assert not backend.compile_grammar(O.CHOICE, '["ok"]').accept_tokens("r", [5])


def test_parallel_fill_releases_the_gil(backend):
    """vLLM fills rows on a thread pool above 128 requests: rows filled by 4 threads into
    one torch bitmask equal rows filled one by one, and a fill lets other Python threads
    run (the GIL is released while a row is computed)."""
    sample = _maskbench_sample(6)
    grammars = [backend.compile_grammar(O.JSON, s) for _, s, _ in sample]
    for g, (_, _, ids) in zip(grammars, sample):
        g.accept_tokens("r", ids[:3])
    serial = backend.allocate_token_bitmask(len(grammars) * 8)
    for i in range(serial.shape[0]):
        grammars[i % len(grammars)].fill_bitmask(serial, i)
    parallel = backend.allocate_token_bitmask(serial.shape[0])
    batches = [list(range(i, min(i + 4, serial.shape[0]))) for i in range(0, serial.shape[0], 4)]

    def fill(rows):
        for i in rows:
            # one grammar per thread at a time: the batches of vLLM's manager are disjoint
            with locks[i % len(grammars)]:
                grammars[i % len(grammars)].fill_bitmask(parallel, i)

    locks = [threading.Lock() for _ in grammars]
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(fill, batches))
    assert torch.equal(serial, parallel)
    # GIL: with a long switch interval no thread is made to give up the GIL, so this
    # thread runs while another one is inside fill_bitmask only if the fill released it.
    compiler = gm.GrammarCompiler(backend.tokenizer_info, cache_enabled=False)
    matchers = [gm.GrammarMatcher(compiler.compile_bundled(n)) for n in ("go", "java", "python")]
    matchers += [gm.GrammarMatcher(g.compiled) for g in grammars for _ in range(5)]
    bm = backend.allocate_token_bitmask(1)
    state = {"inside": False, "seen": 0}

    def fills():
        for m in matchers:
            state["inside"] = True
            m.fill_next_token_bitmask(bm, 0)
            state["inside"] = False

    old = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    try:
        t = threading.Thread(target=fills)
        t.start()
        while t.is_alive():
            if state["inside"]:
                state["seen"] += 1
            time.sleep(0)  # gives the GIL back at every turn
        t.join()
    finally:
        sys.setswitchinterval(old)
    assert state["seen"] > 0
