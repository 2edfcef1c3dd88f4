"""gramask.integrations.sglang: the grammar backend SGLang's registry creates, driven as
SGLang's scheduler drives one, over Qwen3's real tokenizer.

SGLang is not installable here, so the test installs a minimal stand-in of the SGLang
modules the backend imports (``sglang.srt.constrained.base_grammar_backend``,
``sglang.srt.server_args``), written from SGLang's source: base_grammar_backend.py at commit
99e1c51617bf5de1f06ba286cb0d3a160b26eac2 (registry, create_grammar_backend, rollback and
is_terminated) and its later revision with maybe_init_reasoning, fill_vocab_mask_batched /
GrammarRow, reset_vocab_mask, cache_memory_bytes and InvalidGrammarObject;
xgrammar_backend.py at 65cf1ed0b8b1cec4c51690b3294f3d2367e09ef8 (the keys and the
jump-forward protocol); reasoner_grammar_backend.py at
787a422f17d52377434114fbc5dd589b528ef45a (the reasoning switch a registered backend must do
itself: create_grammar_backend returns a registered backend without that wrapper). Masks
are checked step by step against gramask's own GrammarMatcher.
"""

import json
import os
import sys
import types
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import numpy as np
import pytest

import gramask as gm

from conftest import shared

torch = pytest.importorskip("torch")  # SGLang itself runs on torch

# ---------------------------------------------------------------------------------------
# The methods of SGLang's base classes (from the source named above). Every one of
# BaseGrammarObject's must be the backend's own; of BaseGrammarBackend's, the dispatch_*
# methods and reset (the rest, the cache and the executor, the backend inherits).
GRAMMAR_OBJECT_METHODS = [
    "accept_token", "rollback", "is_terminated", "allocate_vocab_mask", "fill_vocab_mask",
    "fill_vocab_mask_batched", "reset_vocab_mask", "move_vocab_mask", "apply_vocab_mask",
    "copy", "maybe_init_reasoning", "cache_memory_bytes", "try_jump_forward",
    "jump_forward_str_state", "jump_and_retokenize"]
BACKEND_OVERRIDES = ["dispatch_json", "dispatch_regex", "dispatch_ebnf",
                     "dispatch_structural_tag", "reset"]
BACKEND_INHERITED = ["_init_value_dispatch", "get_cached_or_future_value", "set_cache",
                     "dispatch_fallback"]


# --- the stand-in of SGLang ------------------------------------------------------------

class GrammarStats:
    def __init__(self) -> None:
        self.compilation_time = None
        self.dispatch_type = None
        self.is_cache_hit = False


class GrammarRow(NamedTuple):
    row: int
    grammar: Any


class BaseGrammarObject:
    def __init__(self) -> None:
        self._finished = False
        self.grammar_stats = None
        self.current_token = None

    def maybe_init_reasoning(self, reasoning: bool) -> None:
        pass

    def accept_token(self, token: int) -> None:
        raise NotImplementedError()

    def rollback(self, k: int) -> None:
        raise NotImplementedError()

    def is_terminated(self) -> bool:
        return False

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
        raise NotImplementedError()

    def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
        raise NotImplementedError()

    @staticmethod
    def fill_vocab_mask_batched(entries: List[GrammarRow], vocab_mask: Any) -> None:
        for entry in entries:
            entry.grammar.fill_vocab_mask(vocab_mask, entry.row)

    @staticmethod
    def reset_vocab_mask(vocab_mask: Any) -> None:
        raise NotImplementedError()

    @staticmethod
    def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
        raise NotImplementedError()

    @staticmethod
    def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
        raise NotImplementedError()

    def copy(self) -> "BaseGrammarObject":
        return self

    def cache_memory_bytes(self) -> int:
        return 0

    @property
    def finished(self) -> bool:
        return self._finished

    @finished.setter
    def finished(self, finished: bool) -> None:
        self._finished = finished

    def try_jump_forward(self, tokenizer: Any) -> Optional[Tuple[List[int], str]]:
        raise NotImplementedError()

    def jump_forward_str_state(self, helper: Tuple[List[int], str]) -> Tuple[str, int]:
        raise NotImplementedError()

    def jump_and_retokenize(self, old_output_ids: List[int], new_output_ids: List[int],
                            next_state: int) -> None:
        raise NotImplementedError()


class InvalidGrammarObject(BaseGrammarObject):
    def __init__(self, error_message: str = "Unknown grammar error") -> None:
        super().__init__()
        self.error_message = error_message


class BaseGrammarBackend:
    def __init__(self) -> None:
        self.executor = ThreadPoolExecutor(max_workers=2)
        self.cache: Dict[Tuple[str, str], Any] = {}

    def dispatch_fallback(self, key_type: str, key_string: str) -> Any:
        raise ValueError(f"Invalid key_type: {key_type}={key_string}")

    def _not_supported(self, key_type: str, key_string: str) -> Any:
        return InvalidGrammarObject()

    def dispatch_json(self, key_string: str) -> Any:
        return self._not_supported("json", key_string)

    def dispatch_regex(self, key_string: str) -> Any:
        return self._not_supported("regex", key_string)

    def dispatch_ebnf(self, key_string: str) -> Any:
        return self._not_supported("ebnf", key_string)

    def dispatch_structural_tag(self, key_string: str) -> Any:
        return self._not_supported("structural_tag", key_string)

    def _init_value_dispatch(self, key: Tuple[str, str], require_reasoning: bool) -> Any:
        key_type, key_string = key
        dispatch = {"json": self.dispatch_json, "regex": self.dispatch_regex,
                    "ebnf": self.dispatch_ebnf, "structural_tag": self.dispatch_structural_tag}
        if key_type not in dispatch:
            return self.dispatch_fallback(key_type, key_string)
        return dispatch[key_type](key_string)

    def get_cached_or_future_value(self, key: Tuple[str, str],
                                   require_reasoning: bool) -> Tuple[Any, bool]:
        value = self.cache.get(key)
        if value is not None:
            copied = value.copy()
            copied.maybe_init_reasoning(require_reasoning)
            return copied, True
        fut: Future = Future()
        proto = self.executor.submit(self._init_value_dispatch, key, require_reasoning)

        def done(f: Future) -> None:
            grammar = f.result()
            self.set_cache(key, grammar)
            copied = grammar.copy()
            copied.maybe_init_reasoning(require_reasoning)
            fut.set_result(copied)

        proto.add_done_callback(done)
        return fut, False

    def set_cache(self, key: Tuple[str, str], value: Any) -> None:
        self.cache[key] = value

    def reset(self) -> None:
        self.cache.clear()


GRAMMAR_BACKEND_REGISTRY: Dict[str, Any] = {}
GRAMMAR_BACKEND_CHOICES = ["xgrammar", "outlines", "llguidance", "none"]


def register_grammar_backend(name: str, init_func: Any) -> None:
    GRAMMAR_BACKEND_REGISTRY[name] = init_func


def create_grammar_backend(server_args: Any, tokenizer: Any, vocab_size: int,
                           eos_token_ids: Optional[set] = None) -> Any:
    name = server_args.grammar_backend
    if name in GRAMMAR_BACKEND_REGISTRY:  # as SGLang: a registered backend, unwrapped
        return GRAMMAR_BACKEND_REGISTRY[name](server_args, tokenizer, vocab_size, eos_token_ids)
    raise ValueError(f"Invalid grammar backend: {name}")


@pytest.fixture(scope="module")
def sglang_standin():
    saved = {k: v for k, v in sys.modules.items() if k == "sglang" or k.startswith("sglang.")}
    mods = {n: types.ModuleType(n) for n in ("sglang", "sglang.srt", "sglang.srt.constrained",
                                             "sglang.srt.constrained.base_grammar_backend",
                                             "sglang.srt.server_args")}
    base = mods["sglang.srt.constrained.base_grammar_backend"]
    for obj in (GrammarStats, GrammarRow, BaseGrammarObject, InvalidGrammarObject,
                BaseGrammarBackend, register_grammar_backend, create_grammar_backend):
        setattr(base, obj.__name__, obj)
    base.GRAMMAR_BACKEND_REGISTRY = GRAMMAR_BACKEND_REGISTRY
    args = mods["sglang.srt.server_args"]
    args.GRAMMAR_BACKEND_CHOICES = GRAMMAR_BACKEND_CHOICES
    args.add_grammar_backend_choices = GRAMMAR_BACKEND_CHOICES.extend
    mods["sglang"].srt = mods["sglang.srt"]
    mods["sglang.srt"].constrained = mods["sglang.srt.constrained"]
    mods["sglang.srt"].server_args = args
    mods["sglang.srt.constrained"].base_grammar_backend = base
    sys.modules.update(mods)
    yield base
    for n in mods:
        sys.modules.pop(n, None)
    sys.modules.update(saved)


# --- a Hugging Face tokenizer as SGLang hands it over: Qwen3's ---------------------------

class Tokenizer:
    """What SGLang's tokenizer object exposes that the backend and the test use."""

    def __init__(self, path: str) -> None:
        with open(os.path.join(path, "tokenizer.json"), encoding="utf-8") as f:
            self._json = f.read()
        data = json.loads(self._json)
        self._vocab = dict(data["model"]["vocab"])
        self._vocab.update({t["content"]: t["id"] for t in data["added_tokens"]})
        self.info = gm.TokenizerInfo.from_file(path)
        self.eos_token_id = self._vocab["<|im_end|>"]
        self.backend_tokenizer = types.SimpleNamespace(to_str=lambda: self._json)

    def get_vocab(self) -> Dict[str, int]:
        return dict(self._vocab)

    def encode(self, text: str) -> List[int]:
        return self.info.encode(text)

    def decode(self, ids: List[int]) -> str:
        return self.info.decode(ids).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer(shared("tokenizers", "qwen3"))


VOCAB = 151936  # Qwen3's model vocabulary (padded beyond the tokenizer's)


def server_args(**kw: Any) -> Any:
    args = dict(grammar_backend="gramask", reasoning_parser=None,
                constrained_json_disable_any_whitespace=False)
    args.update(kw)
    return types.SimpleNamespace(**args)


@pytest.fixture(scope="module")
def backend(sglang_standin, tokenizer):
    from gramask.integrations import sglang as gsg
    gsg.register()
    return create_grammar_backend(server_args(), tokenizer, VOCAB, {tokenizer.eos_token_id})


def get_grammar(backend: Any, key: Tuple[str, str], reasoning: bool = False) -> Any:
    value, cached = backend.get_cached_or_future_value(key, reasoning)
    return value if cached else value.result(timeout=60)


SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                           "n": {"type": "integer"}},
          "required": ["name", "n"]}
KEYS = [("json", json.dumps(SCHEMA)), ("json", "$$ANY$$"), ("regex", r"(ab|cd)[0-9]{2,4}z"),
        ("ebnf", 'root ::= "x" ("+" "x")* "."'),
        ("structural_tag", json.dumps({
            "structures": [{"begin": "<f>", "schema": SCHEMA, "end": "</f>"}],
            "triggers": ["<f>"]})),
        ("structural_tag", json.dumps({
            "type": "structural_tag",
            "format": {"type": "tag", "begin": "<a>", "content": {"type": "json_schema",
                                                                  "json_schema": SCHEMA},
                       "end": "</a>"}}))]


# --- the tests ---------------------------------------------------------------------------

def test_lazy_import():
    """Importing the module does not import SGLang (nor define the classes)."""
    sys.modules.pop("gramask.integrations.sglang", None)
    had = "sglang" in sys.modules
    import gramask.integrations.sglang  # noqa: F401
    assert ("sglang" in sys.modules) == had


def test_method_set(sglang_standin, backend):
    from gramask.integrations.sglang import GramaskGrammar, GramaskGrammarBackend
    base = sglang_standin
    assert issubclass(GramaskGrammar, base.BaseGrammarObject)
    assert issubclass(GramaskGrammarBackend, base.BaseGrammarBackend)
    assert isinstance(backend, GramaskGrammarBackend)
    # the stand-in has every method listed, and the backend's classes their own of each
    public = {n for n, v in vars(base.BaseGrammarObject).items()
              if callable(v) or isinstance(v, staticmethod)} - {"__init__"}
    assert public == set(GRAMMAR_OBJECT_METHODS)
    for name in GRAMMAR_OBJECT_METHODS:
        assert name in vars(GramaskGrammar), f"GramaskGrammar lacks its own {name}"
    for name in BACKEND_OVERRIDES:
        assert name in vars(GramaskGrammarBackend), f"GramaskGrammarBackend lacks {name}"
    for name in BACKEND_INHERITED:
        assert hasattr(GramaskGrammarBackend, name)


def test_registration(sglang_standin, backend):
    assert "gramask" in GRAMMAR_BACKEND_REGISTRY
    assert "gramask" in GRAMMAR_BACKEND_CHOICES
    from gramask.integrations import sglang as gsg
    gsg.register()  # again: the choice is not added twice
    assert GRAMMAR_BACKEND_CHOICES.count("gramask") == 1


def test_plugin_entry_point(sglang_standin):
    """pyproject.toml declares register() in SGLang's plugin group (sglang.srt.plugins,
    loaded in every SGLang process), and the named function resolves."""
    import importlib
    from conftest import SRCDIR
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    with open(os.path.join(SRCDIR, "python", "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    target = project["entry-points"]["sglang.srt.plugins"]["gramask"]
    module, func = target.split(":")
    register = getattr(importlib.import_module(module), func)
    register()
    assert GRAMMAR_BACKEND_REGISTRY["gramask"].__name__ == "create_backend"


def native(backend: Any, key: Tuple[str, str]) -> Any:
    return gm.GrammarMatcher(get_grammar(backend, key).compiled)


def row_equal(mask: Any, i: int, ref: Any) -> bool:
    want = gm.allocate_token_bitmask(1, VOCAB)
    ref.fill_next_token_bitmask(want)
    return np.array_equal(np.asarray(mask[i]), np.asarray(want[0]))


@pytest.mark.parametrize("key", KEYS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(KEYS)])
def test_decode_lifecycle(backend, key):
    """Two requests of one key in one batch, as the scheduler runs them: allocate, fill
    (batched and by row), move, apply, sample, accept; rollback; copy; the end."""
    reqs = [get_grammar(backend, key), get_grammar(backend, key)]  # the second from the cache
    assert key in backend.cache
    refs = [native(backend, key), native(backend, key)]
    g0 = reqs[0]
    rng = np.random.default_rng(35)
    accepted: List[List[int]] = [[], []]
    for step in range(60):
        live = [i for i in range(2) if not reqs[i].is_terminated()]
        if not live:
            break
        mask = g0.allocate_vocab_mask(VOCAB, 2, "cpu")
        if step % 2:
            g0.fill_vocab_mask_batched([GrammarRow(i, reqs[i]) for i in live], mask)
        else:
            for i in live:
                reqs[i].fill_vocab_mask(mask, i)
        for i in live:
            assert row_equal(mask, i, refs[i]), (key, step, i)
        mask = g0.move_vocab_mask(mask, "cpu")
        logits = torch.from_numpy(rng.standard_normal((2, VOCAB)).astype(np.float32))
        g0.apply_vocab_mask(logits, mask)
        for i in live:
            token = int(torch.argmax(logits[i]))
            bits = np.asarray(mask[i])
            assert bits[token // 32] >> (token % 32) & 1
            reqs[i].accept_token(token)
            assert refs[i].accept_token(token)
            accepted[i].append(token)
    for i in range(2):
        # rollback: 3 steps back, the masks agree again
        k = min(3, len(accepted[i]))
        reqs[i].rollback(k)
        refs[i].rollback(k)
        mask = g0.allocate_vocab_mask(VOCAB, 2, "cpu")
        reqs[i].fill_vocab_mask(mask, i)
        assert row_equal(mask, i, refs[i])
    # a rejected token raises (SGLang aborts the request)
    fresh = reqs[0].copy()
    mask = g0.allocate_vocab_mask(VOCAB, 1, "cpu")
    fresh.fill_vocab_mask(mask, 0)
    banned = int(np.flatnonzero(np.unpackbits(
        (~np.asarray(mask[0])).view(np.uint8), bitorder="little"))[0])
    with pytest.raises(ValueError):
        fresh.accept_token(banned)
    assert row_equal(mask, 0, native(backend, key))  # copy() is a fresh request
    g0.reset_vocab_mask(mask)
    assert (np.asarray(mask) == -1).all()
    assert fresh.cache_memory_bytes() > 0


def test_end_and_past_it(backend, tokenizer):
    """After EOS: terminated, an EOS-only mask (draft verification fills past the end),
    tokens ignored as SGLang's XGrammar backend does, rollback undoes them exactly."""
    g = get_grammar(backend, ("regex", "ab"))
    for t in tokenizer.encode("ab"):
        g.accept_token(t)
    g.accept_token(tokenizer.eos_token_id)
    assert g.is_terminated()
    mask = g.allocate_vocab_mask(VOCAB, 1, "cpu")
    g.fill_vocab_mask(mask, 0)
    allowed = np.flatnonzero(np.unpackbits(np.asarray(mask[0]).view(np.uint8),
                                           bitorder="little"))
    assert sorted(allowed.tolist()) == sorted(backend.tokenizer_info.stop_token_ids)
    g.accept_token(tokenizer.encode("a")[0])  # ignored
    g.rollback(2)  # the ignored token and EOS
    assert not g.is_terminated()
    g.fill_vocab_mask(mask, 0)
    assert mask[0][tokenizer.eos_token_id // 32] >> (tokenizer.eos_token_id % 32) & 1


def test_invalid_keys(backend):
    for key in [("json", "{not json"), ("regex", "(ab"), ("ebnf", "root ::= undefined_rule"),
                ("structural_tag", "[1, 2")]:
        g = get_grammar(backend, key)
        assert isinstance(g, InvalidGrammarObject), key
        assert g.error_message
    with pytest.raises(ValueError):
        backend._init_value_dispatch(("nonsense", "x"), False)


def jump(g: Any, tokenizer: Any, old_ids: List[int]) -> List[int]:
    """SGLang's jump-forward step: the helper, the string and state, the output
    retokenized with the string appended, jump_and_retokenize. The new ids."""
    helper = g.try_jump_forward(tokenizer)
    assert helper is not None
    text, state = g.jump_forward_str_state(helper)
    new_ids = tokenizer.encode(tokenizer.decode(old_ids) + text)
    g.jump_and_retokenize(old_ids, new_ids, state)
    return new_ids


def test_jump_forward(backend, tokenizer):
    """Jump-forward as SGLang runs it; the masks stay those of a native matcher that
    decoded the retokenized output."""
    # the start of a JSON object is forced
    key = ("json", json.dumps(SCHEMA))
    g = get_grammar(backend, key)
    assert g.jump_forward_str_state(g.try_jump_forward(tokenizer))[0] == '{'  # then whitespace
    new_ids = jump(g, tokenizer, [])
    ref = native(backend, key)
    assert all(ref.accept_token(t) for t in new_ids)
    mask = g.allocate_vocab_mask(VOCAB, 1, "cpu")
    g.fill_vocab_mask(mask, 0)
    assert row_equal(mask, 0, ref)
    # the model wrote "hel": "lo world " is forced, and retokenizing merges the tokens
    key = ("regex", "hello world [0-9]+")
    g = get_grammar(backend, key)
    old_ids = tokenizer.encode("hel")
    for t in old_ids:
        g.accept_token(t)
    assert g.jump_forward_str_state(g.try_jump_forward(tokenizer))[0] == "lo world "
    new_ids = jump(g, tokenizer, old_ids)
    assert new_ids[:len(old_ids)] != old_ids  # a real retokenization: rollback, then accept
    ref = native(backend, key)
    assert all(ref.accept_token(t) for t in new_ids)
    g.fill_vocab_mask(mask, 0)
    assert row_equal(mask, 0, ref)
    assert g.try_jump_forward(tokenizer) is None  # a digit or more: nothing forced
    for t in tokenizer.encode("42"):
        g.accept_token(t)
    g.accept_token(tokenizer.eos_token_id)
    assert g.is_terminated()


def test_reasoning_switch(sglang_standin, tokenizer):
    """--reasoning-parser: unconstrained up to and including the think-end token, the
    grammar after it; rollback across it; a request that does not reason."""
    think_end = tokenizer.get_vocab()["</think>"]
    tok = Tokenizer.__new__(Tokenizer)
    tok.__dict__.update(tokenizer.__dict__)
    tok.think_end_id = think_end
    rb = create_grammar_backend(server_args(reasoning_parser="qwen3"), tok, VOCAB,
                                {tokenizer.eos_token_id})
    assert rb.think_end_id == think_end
    key = ("json", json.dumps(SCHEMA))
    g = get_grammar(rb, key, reasoning=True)
    ref = gm.GrammarMatcher(g.compiled)
    mask = g.allocate_vocab_mask(VOCAB, 1, "cpu")
    g.fill_vocab_mask(mask, 0)
    assert (np.asarray(mask[0]) == -1).all()  # thinking: every token
    assert g.try_jump_forward(tokenizer) is None
    thought = tokenizer.encode("Let me think: a name and a number {}")
    for t in thought:
        g.accept_token(t)  # not the grammar's business
    assert not g.is_terminated()
    g.accept_token(think_end)
    g.fill_vocab_mask(mask, 0)
    assert row_equal(mask, 0, ref)  # the grammar from its start
    answer = tokenizer.encode('{"name": "ab", "n": 7}')
    for t in answer[:3]:
        g.accept_token(t)
        assert ref.accept_token(t)
    g.fill_vocab_mask(mask, 0)
    assert row_equal(mask, 0, ref)
    g.rollback(3)
    ref.rollback(3)
    g.fill_vocab_mask(mask, 0)
    assert row_equal(mask, 0, ref)
    g.rollback(2)  # the think-end token and one thought token: thinking again
    g.fill_vocab_mask(mask, 0)
    assert (np.asarray(mask[0]) == -1).all()
    g.accept_token(thought[-1])
    g.accept_token(think_end)
    for t in answer:
        g.accept_token(t)
    g.accept_token(tokenizer.eos_token_id)
    assert g.is_terminated()
    # the same key for a request that does not reason: constrained from the first token
    plain = get_grammar(rb, key, reasoning=False)
    plain.fill_vocab_mask(mask, 0)
    assert row_equal(mask, 0, gm.GrammarMatcher(g.compiled))
    # the batched fill mixes thinking and constrained rows
    thinking = get_grammar(rb, key, reasoning=True)
    mask2 = g.allocate_vocab_mask(VOCAB, 2, "cpu")
    mask2.fill_(0)
    g.fill_vocab_mask_batched([GrammarRow(0, thinking), GrammarRow(1, plain)], mask2)
    assert (np.asarray(mask2[0]) == -1).all()
    assert row_equal(mask2, 1, gm.GrammarMatcher(g.compiled))
