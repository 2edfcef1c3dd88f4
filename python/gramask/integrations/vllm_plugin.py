"""vLLM's ``vllm.general_plugins`` entry point: makes vLLM's v1 engine use gramask for
structured outputs when ``structured_outputs_config.backend`` is ``"gramask"``.

vLLM picks its backend from a fixed list in three places; :func:`register` (run by vLLM's
``load_general_plugins()`` in every process it starts, possibly more than once) hooks
each, leaving every other backend as it was:

1. the config: the ``backend`` field of ``vllm.config.structured_outputs.StructuredOutputsConfig``
   (older vLLM: ``backend`` of ``vllm.config.DecodingConfig``) is a pydantic ``Literal``;
   "gramask" is added to it and the dataclass rebuilt, and its validator, which allows
   ``disable_any_whitespace`` / ``disable_additional_properties`` only for xgrammar /
   guidance, lets gramask have both (gramask honours them);
2. the request validation in the front end: ``vllm.sampling_params.SamplingParams.
   _validate_structured_outputs`` (newest vLLM), and ``_validate_structured_output`` of
   ``vllm.v1.engine.input_processor.InputProcessor`` (older: ``vllm.v1.engine.processor.Processor``):
   with the gramask backend it marks the request for gramask and parses its grammar
   (without a vocabulary), so a bad grammar is a ValueError at the request, not a failure
   in the engine;
3. the engine core: ``vllm.v1.structured_output.StructuredOutputManager.grammar_init``
   builds :class:`~gramask.integrations.vllm.GramaskBackend` for a request marked gramask,
   as it builds its own backends (``Backend(vllm_config, tokenizer=..., vocab_size=...)``).

When the config cannot be patched (a vLLM whose config is not a pydantic dataclass of
that shape), set ``GRAMASK_VLLM_AS_XGRAMMAR=1`` and ``backend="xgrammar"``: hooks 2 and 3
then treat "xgrammar" as gramask. Each hook that cannot find its target is reported
with :mod:`logging` (logger ``gramask.vllm``) and skipped.
"""

import functools
import inspect
import json
import logging
import os
import typing
from types import SimpleNamespace as NS
from typing import Any, Callable, List, Optional, Tuple

logger = logging.getLogger("gramask.vllm")

NAME = "gramask"
_MARK = "_gramask_hooked"


def _as_xgrammar() -> bool:
    return os.environ.get("GRAMASK_VLLM_AS_XGRAMMAR", "") not in ("", "0")


def _is_gramask(name: Any) -> bool:
    return name == NAME or (name == "xgrammar" and _as_xgrammar())


def _import(module: str) -> Optional[Any]:
    try:
        return __import__(module, fromlist=["_"])
    except Exception as e:  # an absent module, or one that fails to import
        logger.debug("gramask: no %s (%s)", module, e)
        return None


# ------------------------------------------------------------------ 1. the config


def _with_gramask(annotation: Any) -> Optional[Any]:
    """annotation (a Literal of backend names) with "gramask" added; None if it is not one."""
    if typing.get_origin(annotation) is not typing.Literal:
        return None
    names = typing.get_args(annotation)
    if NAME in names:
        return annotation
    return typing.Literal[names + (NAME,)]  # type: ignore[valid-type]


def _wrap_config_validator(cls: Any) -> None:
    """The config's validator allows the whitespace and additional-properties options for
    xgrammar and guidance only: it runs with the backend read as "guidance" (which it
    allows both for) when the backend is gramask."""
    decorators = getattr(cls, "__pydantic_decorators__", None)
    validators = getattr(decorators, "model_validators", {}) if decorators is not None else {}
    for name, dec in list(validators.items()):
        original = dec.func
        if getattr(original, _MARK, False):
            continue

        @functools.wraps(original)
        def validator(self: Any, *args: Any, __original: Callable = original, **kw: Any) -> Any:
            if getattr(self, "backend", None) != NAME:
                return __original(self, *args, **kw)
            object.__setattr__(self, "backend", "guidance")
            try:
                __original(self, *args, **kw)
            finally:
                object.__setattr__(self, "backend", NAME)
            return self

        setattr(validator, _MARK, True)
        dec.func = validator
        setattr(cls, name, validator)


def allow_backend_name(cls: Any, field: str = "backend") -> bool:
    """Adds "gramask" to the Literal of ``cls.field`` (a pydantic dataclass) and rebuilds
    it; whether the config now accepts it."""
    ann = getattr(cls, "__annotations__", {}).get(field)
    new = _with_gramask(ann)
    if new is None:
        return False
    if new is ann and getattr(cls, _MARK, False):
        return True
    cls.__annotations__[field] = new
    dc_field = getattr(cls, "__dataclass_fields__", {}).get(field)
    if dc_field is not None:
        dc_field.type = new
    pyd_field = getattr(cls, "__pydantic_fields__", {}).get(field)
    if pyd_field is not None:
        pyd_field.annotation = new
    _wrap_config_validator(cls)
    try:
        from pydantic.dataclasses import rebuild_dataclass
        rebuild_dataclass(cls, force=True)
    except ImportError:
        pass  # not a pydantic v2 dataclass: the annotation is what is checked
    setattr(cls, _MARK, True)
    return True


def _hook_config() -> bool:
    for module, cls_name in (("vllm.config.structured_outputs", "StructuredOutputsConfig"),
                             ("vllm.config", "StructuredOutputsConfig"),
                             ("vllm.config", "DecodingConfig")):
        mod = _import(module)
        cls = getattr(mod, cls_name, None) if mod is not None else None
        if cls is not None:
            try:
                if allow_backend_name(cls):
                    return True
            except Exception as e:
                logger.warning("gramask: cannot add 'gramask' to %s.%s.backend (%s); set "
                               "GRAMASK_VLLM_AS_XGRAMMAR=1 and backend='xgrammar' instead",
                               module, cls_name, e)
                return False
    logger.warning("gramask: vLLM's structured-output config class was not found; set "
                   "GRAMASK_VLLM_AS_XGRAMMAR=1 and backend='xgrammar' to use gramask")
    return False


# ------------------------------------------------------- 2. the request validation


def request_key(params: Any) -> Optional[Tuple[str, str]]:
    """(request type name, spec) of a request's structured-output parameters, as vLLM's
    ``StructuredOutputRequest.structured_output_key`` computes it; None if none is set."""
    if params.json is not None:
        spec = params.json if isinstance(params.json, str) else json.dumps(params.json)
        return "JSON", spec
    if getattr(params, "json_object", None):
        return "JSON_OBJECT", ""
    if params.regex is not None:
        return "REGEX", params.regex
    if params.choice is not None:
        spec = params.choice if isinstance(params.choice, str) else json.dumps(params.choice)
        return "CHOICE", spec
    if params.grammar is not None:
        return "GRAMMAR", params.grammar
    if getattr(params, "structural_tag", None) is not None:
        return "STRUCTURAL_TAG", params.structural_tag
    return None


def _so_config(processor: Any) -> Any:
    """The structured-output config a front-end processor holds (or its vllm_config)."""
    for name in ("structured_outputs_config", "decoding_config"):
        cfg = getattr(processor, name, None)
        if cfg is None:
            cfg = getattr(getattr(processor, "vllm_config", None), name, None)
        if cfg is not None:
            return cfg
    return None


def _engine_backend(processor: Any) -> Any:
    return getattr(_so_config(processor), "backend", None)


def validate_request(sampling_params: Any, engine: Any, so_config: Any) -> None:
    """vLLM's request validation for the gramask backend (``engine`` is the configured
    backend name, ``so_config`` the structured-output config holding the options): marks
    the request for gramask and checks that its grammar parses; a ValueError names what
    is wrong."""
    from .vllm import grammar_for_request, options_from_config, _NO_WHITESPACE
    so = getattr(sampling_params, "structured_outputs", None)
    new_api = so is not None
    if so is None:
        so = getattr(sampling_params, "guided_decoding", None)
    if so is None:
        return
    asked = getattr(so, "_backend", None) if new_api else getattr(so, "backend", None)
    if asked and asked != engine and not (new_api and getattr(so, "_backend_was_auto", False)):
        raise ValueError(f"Request-level structured output backend selection is not supported: "
                         f"the request asks for {asked!r}, vLLM runs {engine!r}")
    if new_api:
        so._backend = engine
    else:
        so.backend = engine
    pattern = getattr(so, "whitespace_pattern", None)
    if pattern is not None and pattern not in _NO_WHITESPACE:
        raise ValueError(f"gramask: whitespace_pattern {pattern!r} cannot be honoured (JSON's "
                         "whitespace, or none: '')")
    if isinstance(so.choice, list) and not so.choice:
        raise ValueError("structured_outputs.choice cannot be an empty list")
    key = request_key(so)
    if key is None:
        return
    kind, spec = key
    if kind == "GRAMMAR" and not spec.strip():
        raise ValueError("structured_outputs.grammar cannot be an empty string")
    try:
        grammar_for_request(kind, spec, options_from_config(NS(structured_outputs_config=so_config)))
    except Exception as e:
        if isinstance(e, ValueError) and str(e).startswith("gramask:"):
            raise
        raise ValueError(f"gramask: invalid {kind} request: {e}") from e


def _hook_sampling_params() -> bool:
    """Newer vLLM validates in ``SamplingParams._validate_structured_outputs(self,
    [model_config,] structured_outputs_config, tokenizer)`` (vllm/sampling_params.py)."""
    mod = _import("vllm.sampling_params")
    cls = getattr(mod, "SamplingParams", None) if mod is not None else None
    original = getattr(cls, "_validate_structured_outputs", None) if cls is not None else None
    if original is None:
        return False
    if getattr(original, _MARK, False):
        return True
    signature = inspect.signature(original)

    @functools.wraps(original)
    def _validate_structured_outputs(self: Any, *args: Any, __original: Callable = original,
                                     **kw: Any) -> Any:
        bound = signature.bind_partial(self, *args, **kw).arguments
        cfg = bound.get("structured_outputs_config")
        if cfg is None or getattr(self, "structured_outputs", None) is None \
                or not _is_gramask(getattr(cfg, "backend", None)):
            return __original(self, *args, **kw)
        if "tokenizer" in bound and bound["tokenizer"] is None:
            raise ValueError("Structured outputs requires a tokenizer so it can't be used with "
                             "'skip_tokenizer_init'")
        return validate_request(self, cfg.backend, cfg)

    setattr(_validate_structured_outputs, _MARK, True)
    cls._validate_structured_outputs = _validate_structured_outputs
    return True


def _hook_validation() -> bool:
    found = _hook_sampling_params()
    for module, cls_name in (("vllm.v1.engine.input_processor", "InputProcessor"),
                             ("vllm.v1.engine.processor", "Processor")):
        mod = _import(module)
        cls = getattr(mod, cls_name, None) if mod is not None else None
        original = getattr(cls, "_validate_structured_output", None) if cls is not None else None
        if original is None:
            continue
        if getattr(original, _MARK, False):
            return True

        @functools.wraps(original)
        def _validate_structured_output(self: Any, params: Any, *args: Any,
                                        __original: Callable = original, **kw: Any) -> Any:
            if (getattr(params, "structured_outputs", None) is None
                    and getattr(params, "guided_decoding", None) is None) \
                    or not _is_gramask(_engine_backend(self)):
                return __original(self, params, *args, **kw)
            return validate_request(params, _engine_backend(self), _so_config(self))

        setattr(_validate_structured_output, _MARK, True)
        cls._validate_structured_output = _validate_structured_output
        return True
    if not found:
        logger.warning("gramask: vLLM's request validation (SamplingParams._validate_structured_"
                       "outputs, InputProcessor/Processor._validate_structured_output) was not "
                       "found: gramask requests are not hooked")
    return found


# ------------------------------------------------------------ 3. the engine core


def _request_backend(request: Any) -> Any:
    sp = getattr(request, "sampling_params", None)
    so = getattr(sp, "structured_outputs", None)
    if so is not None:
        return getattr(so, "_backend", None)
    gd = getattr(sp, "guided_decoding", None)
    if gd is not None:
        return getattr(gd, "backend", None) or getattr(gd, "backend_name", None)
    return None


def make_backend(manager: Any) -> Any:
    """The backend vLLM's StructuredOutputManager gets for gramask."""
    from .vllm import GramaskBackend
    config = manager.vllm_config
    return GramaskBackend(config, tokenizer=manager.tokenizer,
                          vocab_size=config.model_config.get_vocab_size())


def _hook_manager() -> bool:
    mod = _import("vllm.v1.structured_output")
    cls = getattr(mod, "StructuredOutputManager", None) if mod is not None else None
    original = getattr(cls, "grammar_init", None) if cls is not None else None
    if original is None:
        logger.warning("gramask: vllm.v1.structured_output.StructuredOutputManager.grammar_init "
                       "was not found: vLLM cannot build the gramask backend")
        return False
    if getattr(original, _MARK, False):
        return True

    @functools.wraps(original)
    def grammar_init(self: Any, request: Any, *args: Any, __original: Callable = original,
                     **kw: Any) -> Any:
        if (self.backend is None and getattr(request, "structured_output_request", None) is not None
                and _is_gramask(_request_backend(request))):
            self.backend = make_backend(self)
        return __original(self, request, *args, **kw)

    setattr(grammar_init, _MARK, True)
    cls.grammar_init = grammar_init
    return True


def register() -> List[str]:
    """The plugin function: hooks what it finds (idempotent); the names of the hooks
    made, of "config", "validation", "manager"."""
    done = []
    for name, hook in (("config", _hook_config), ("validation", _hook_validation),
                       ("manager", _hook_manager)):
        try:
            if hook():
                done.append(name)
        except Exception:
            logger.exception("gramask: the vLLM %s hook failed", name)
    logger.info("gramask: vLLM structured-output hooks: %s", ", ".join(done) or "none")
    return done
