"""The vLLM plugin (gramask.integrations.vllm_plugin) on stand-ins of the three vLLM
places it hooks, written after vLLM's code (vllm/config/structured_outputs.py,
vllm/v1/engine/input_processor.py, vllm/v1/structured_output/__init__.py): their
backend selection from a fixed list, as vLLM's. vLLM itself is not installable here."""

import dataclasses
import json
import os
import sys
import types
import typing
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace as NS

import pytest

pytest.importorskip("torch")

from conftest import SHARED, SRCDIR, shared  # noqa: E402

_ENGINES = os.path.join(SHARED, "engines", "vllm")
if _ENGINES not in sys.path:
    sys.path.insert(0, _ENGINES)

import vllm.v1.structured_output as so_pkg  # noqa: E402  (the interface file's package)
from vllm.v1.structured_output.backend_types import StructuredOutputOptions as O  # noqa: E402

from test_vllm_backend import HFTokenizerStandIn, LLAMA3  # noqa: E402

Backends = typing.Literal["auto", "xgrammar", "guidance", "outlines", "lm-format-enforcer"]


def make_config_class():
    """vLLM's StructuredOutputsConfig: the backend a Literal checked at construction (by
    pydantic there; by the annotation here), and its validator."""

    @dataclasses.dataclass
    class StructuredOutputsConfig:
        backend: Backends = "auto"
        disable_any_whitespace: bool = False
        disable_additional_properties: bool = False

        def __post_init__(self):
            allowed = typing.get_args(type(self).__annotations__["backend"])
            if self.backend not in allowed:
                raise ValueError(f"backend: Input should be one of {allowed}")
            self._validate_structured_output_config()

        def _validate_structured_output_config(self):
            if self.disable_any_whitespace and self.backend not in ("xgrammar", "guidance"):
                raise ValueError("disable_any_whitespace is only supported for xgrammar and "
                                 "guidance backends.")
            if self.disable_additional_properties and self.backend != "guidance":
                raise ValueError("disable_additional_properties is only supported for the "
                                 "guidance backend.")
            return self

    # What the plugin's config hook finds on a pydantic dataclass.
    StructuredOutputsConfig.__pydantic_decorators__ = NS(model_validators={
        "_validate_structured_output_config":
            NS(func=StructuredOutputsConfig._validate_structured_output_config)})
    return StructuredOutputsConfig


class InputProcessor:
    """vLLM's front-end request validation: the backend named by the config, with the
    branches of vLLM's _validate_structured_output."""

    def __init__(self, vllm_config):
        self.vllm_config = vllm_config
        self.structured_outputs_config = vllm_config.structured_outputs_config

    def _validate_structured_output(self, params):
        so = params.structured_outputs
        if not so:
            return
        backend = self.structured_outputs_config.backend
        so._backend = so._backend or backend
        if backend.startswith("xgrammar"):
            so.validated_by = "xgrammar"
        elif backend == "auto":
            so._backend = "xgrammar"
            so._backend_was_auto = True
        else:
            raise ValueError(f"Unsupported structured output backend: {backend}")


class StructuredOutputManager:
    """vLLM's engine-core manager: backends from a fixed list, compiles on a pool."""

    def __init__(self, vllm_config, tokenizer):
        self.backend = None
        self.vllm_config = vllm_config
        self.tokenizer = tokenizer
        self.executor = ThreadPoolExecutor(max_workers=2)

    def grammar_init(self, request):
        if request.structured_output_request is None:
            return
        if self.backend is None:
            backend = request.sampling_params.structured_outputs._backend
            raise ValueError(f"Unsupported structured output backend: {backend}")
        request.structured_output_request.grammar = self.executor.submit(
            self.backend.compile_grammar, *request.structured_output_request.structured_output_key)


class SamplingParams:
    """Newest vLLM: the request validation is SamplingParams._validate_structured_outputs."""

    def __init__(self, structured_outputs):
        self.structured_outputs = structured_outputs

    def _validate_structured_outputs(self, model_config, structured_outputs_config, tokenizer):
        if structured_outputs_config is None or self.structured_outputs is None:
            return
        backend = structured_outputs_config.backend
        if backend not in ("auto", "xgrammar", "guidance", "outlines", "lm-format-enforcer"):
            raise ValueError(f"Unsupported structured output backend: {backend}")
        self.structured_outputs._backend = backend


def params(**kw):
    fields = dict(json=None, json_object=None, regex=None, choice=None, grammar=None,
                  structural_tag=None, whitespace_pattern=None, _backend=None,
                  _backend_was_auto=False)
    fields.update(kw)
    return NS(structured_outputs=NS(**fields))


@pytest.fixture()
def fake_vllm(monkeypatch):
    cls = make_config_class()
    mods = {"vllm.config": types.ModuleType("vllm.config"),
            "vllm.config.structured_outputs": types.ModuleType("vllm.config.structured_outputs"),
            "vllm.v1.engine": types.ModuleType("vllm.v1.engine"),
            "vllm.v1.engine.input_processor": types.ModuleType("vllm.v1.engine.input_processor"),
            "vllm.sampling_params": types.ModuleType("vllm.sampling_params")}
    mods["vllm.sampling_params"].SamplingParams = type("SamplingParams", (SamplingParams,), {})
    mods["vllm.config.structured_outputs"].StructuredOutputsConfig = cls
    mods["vllm.v1.engine.input_processor"].InputProcessor = type(
        "InputProcessor", (InputProcessor,), {})
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    manager = type("StructuredOutputManager", (StructuredOutputManager,), {})
    monkeypatch.setattr(so_pkg, "StructuredOutputManager", manager, raising=False)
    return NS(config=cls, processor=mods["vllm.v1.engine.input_processor"].InputProcessor,
              manager=manager, sampling_params=mods["vllm.sampling_params"].SamplingParams)


def test_entry_point_is_declared():
    import tomllib
    with open(os.path.join(SRCDIR, "python", "pyproject.toml"), "rb") as f:
        doc = tomllib.load(f)
    target = doc["project"]["entry-points"]["vllm.general_plugins"]["gramask"]
    module, func = target.split(":")
    assert module == "gramask.integrations.vllm_plugin"
    assert callable(getattr(__import__(module, fromlist=["_"]), func))
    assert "gramask.integrations" in doc["tool"]["setuptools"]["packages"]


def test_register_makes_vllm_pick_gramask(fake_vllm):
    from gramask.integrations import vllm_plugin
    with pytest.raises(ValueError, match="one of"):
        fake_vllm.config(backend="gramask")  # before the plugin: refused, as in vLLM
    assert vllm_plugin.register() == ["config", "validation", "manager"]
    assert vllm_plugin.register() == ["config", "validation", "manager"]  # loaded twice: once
    assert "gramask" in typing.get_args(fake_vllm.config.__annotations__["backend"])
    cfg = fake_vllm.config(backend="gramask", disable_any_whitespace=True,
                           disable_additional_properties=True)
    assert cfg.backend == "gramask"
    with pytest.raises(ValueError, match="disable_any_whitespace"):
        fake_vllm.config(backend="outlines", disable_any_whitespace=True)  # others unchanged

    shared("tokenizers", "llama3")
    vllm_config = NS(structured_outputs_config=cfg, speculative_config=None,
                     model_config=NS(get_vocab_size=lambda: 128256))
    processor = fake_vllm.processor(vllm_config)
    p = params(json=json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))
    processor._validate_structured_output(p)
    assert p.structured_outputs._backend == "gramask"
    for bad, msg in ((params(grammar="root ::= ("), "GRAMMAR"), (params(choice=[]), "empty"),
                     (params(regex="("), "REGEX"), (params(grammar=" "), "empty"),
                     (params(json="{}", whitespace_pattern=" *"), "whitespace_pattern"),
                     (params(json="{}", _backend="guidance"), "Request-level")):
        with pytest.raises(ValueError, match=msg):
            processor._validate_structured_output(bad)

    manager = fake_vllm.manager(vllm_config, HFTokenizerStandIn(LLAMA3))
    request = NS(sampling_params=p, structured_output_request=NS(
        structured_output_key=(O.JSON, p.structured_outputs.json), grammar=None))
    manager.grammar_init(request)
    from gramask.integrations.vllm import GramaskBackend, GramaskGrammar
    assert isinstance(manager.backend, GramaskBackend)
    assert manager.backend.options.any_whitespace is False  # from the config
    grammar = request.structured_output_request.grammar.result()
    assert isinstance(grammar, GramaskGrammar)
    bm = manager.backend.allocate_token_bitmask(2)
    grammar.fill_bitmask(bm, 1)
    assert int(bm[1].eq(-1).all()) == 0 and int(bm[0].eq(-1).all()) == 1
    manager.executor.shutdown()


def test_other_backends_are_left_alone(fake_vllm, monkeypatch):
    from gramask.integrations import vllm_plugin
    vllm_plugin.register()
    processor = fake_vllm.processor(NS(structured_outputs_config=fake_vllm.config(backend="xgrammar")))
    p = params(grammar="root ::= (")  # vLLM's own validation runs, not gramask's
    processor._validate_structured_output(p)
    assert p.structured_outputs.validated_by == "xgrammar"
    manager = fake_vllm.manager(NS(), None)
    request = NS(sampling_params=p, structured_output_request=NS(structured_output_key=None))
    with pytest.raises(ValueError, match="Unsupported structured output backend: xgrammar"):
        manager.grammar_init(request)
    # GRAMASK_VLLM_AS_XGRAMMAR=1: "xgrammar" means gramask (for a config that cannot be patched).
    monkeypatch.setenv("GRAMASK_VLLM_AS_XGRAMMAR", "1")
    with pytest.raises(ValueError, match="GRAMMAR"):
        processor._validate_structured_output(params(grammar="root ::= ("))


def test_hooks_missing_are_reported(monkeypatch, caplog):
    from gramask.integrations import vllm_plugin
    monkeypatch.setattr(so_pkg, "StructuredOutputManager", None, raising=False)
    for name in ("vllm.config", "vllm.config.structured_outputs", "vllm.v1.engine", "vllm.sampling_params",
                 "vllm.v1.engine.input_processor", "vllm.v1.engine.processor"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    with caplog.at_level("WARNING", logger="gramask.vllm"):
        assert vllm_plugin.register() == []
    text = caplog.text
    assert "GRAMASK_VLLM_AS_XGRAMMAR" in text and "grammar_init" in text and "validation" in text


def test_newest_vllm_validates_in_sampling_params(fake_vllm):
    from gramask.integrations import vllm_plugin
    vllm_plugin.register()
    cfg = fake_vllm.config(backend="gramask")
    sp = fake_vllm.sampling_params(params(regex=r"[0-9]+").structured_outputs)
    sp._validate_structured_outputs(None, cfg, tokenizer=object())
    assert sp.structured_outputs._backend == "gramask"
    bad = fake_vllm.sampling_params(params(regex="(").structured_outputs)
    with pytest.raises(ValueError, match="REGEX"):
        bad._validate_structured_outputs(None, structured_outputs_config=cfg, tokenizer=object())
    with pytest.raises(ValueError, match="tokenizer"):
        sp._validate_structured_outputs(None, cfg, None)
    other = fake_vllm.sampling_params(params(regex="(").structured_outputs)
    other._validate_structured_outputs(None, fake_vllm.config(backend="guidance"), object())
    assert other.structured_outputs._backend == "guidance"  # vLLM's own path
