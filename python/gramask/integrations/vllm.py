"""A structured-output backend for vLLM's v1 engine.

``GramaskBackend`` and ``GramaskGrammar`` subclass vLLM's ``StructuredOutputBackend`` and
``StructuredOutputGrammar`` (``vllm/v1/structured_output/backend_types.py``), so importing
this module imports vLLM (``import gramask`` does not). vLLM's ``StructuredOutputManager``
builds the backend once, as ``GramaskBackend(vllm_config, tokenizer=..., vocab_size=...)``,
compiles each request's grammar on its thread pool (``compile_grammar``), allocates one
bitmask for the whole batch (``allocate_token_bitmask``), fills a row per request
(``fill_bitmask``, without the GIL: it fills rows on a thread pool above 128 requests),
and advances, validates and rolls back drafted tokens (speculative decoding).

Every request type of ``StructuredOutputOptions``: JSON (a schema), JSON_OBJECT, REGEX,
GRAMMAR (XGrammar EBNF, GBNF or Lark: detected, or named by a first line
``%gramask FORMAT``), CHOICE (a JSON list of strings) and STRUCTURAL_TAG. The engine
options come from ``vllm_config.structured_outputs_config`` (older vLLM:
``decoding_config``): ``disable_any_whitespace``, ``disable_additional_properties`` and
``whitespace_pattern``; one that cannot be honoured is refused when the backend is built.
The plugin that makes vLLM pick this backend is :mod:`gramask.integrations.vllm_plugin`.
"""

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from vllm.v1.structured_output.backend_types import (StructuredOutputBackend,
                                                     StructuredOutputGrammar,
                                                     StructuredOutputOptions)

from ..compiler import CompiledGrammar, GrammarCompiler
from ..errors import GramaskError, GrammarSyntaxError
from ..grammar import Grammar
from ..matcher import GrammarMatcher
from ..tokenizer import TokenizerInfo

__all__ = ["GramaskBackend", "GramaskGrammar", "grammar_format", "choice_ebnf",
           "grammar_for_request", "BACKEND_NAME"]

BACKEND_NAME = "gramask"
"""The name vLLM's ``structured_outputs_config.backend`` takes for this backend."""

_NAMED = re.compile(r"[ \t]*%gramask[ \t]+([A-Za-z]+)[ \t]*(?:\r?\n|$)")
_FORMATS = ("lark", "gbnf", "ebnf", "regex")


def grammar_format(spec: str) -> Tuple[str, str]:
    """The format of a GRAMMAR request and the grammar text: ``(format, text)``.

    A first line ``%gramask FORMAT`` (``lark``, ``gbnf``, ``ebnf`` or ``regex``) names it
    (the line is dropped from the text). Otherwise a grammar with a ``::=`` rule outside
    comments is EBNF (XGrammar's dialect; GBNF if that fails to parse: see
    :func:`grammar_for_request`), and anything else is Lark, as vLLM's own detection.
    """
    m = _NAMED.match(spec)
    if m:
        fmt = m.group(1).lower()
        if fmt not in _FORMATS:
            raise ValueError(f"gramask: unknown grammar format {m.group(1)!r} in the first line "
                             f"'%gramask {m.group(1)}' (one of: {', '.join(_FORMATS)})")
        return fmt, spec[m.end():]
    for line in spec.splitlines():
        code = line.split("#", 1)[0]
        if "::=" in code:
            return "ebnf", spec
    return "lark", spec


def _ebnf_literal(text: str) -> str:
    """An EBNF string literal for text: backslash, quote and control characters escaped."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def choice_ebnf(spec: str) -> str:
    """The EBNF grammar of a CHOICE request (a JSON list of strings): exactly one of
    them. A malformed or empty list, or a choice that is not a string, is a ValueError."""
    try:
        choices = json.loads(spec)
    except json.JSONDecodeError as e:
        raise ValueError(f"gramask: a CHOICE request must be a JSON list of strings: {e}") from None
    if not isinstance(choices, list) or not choices:
        raise ValueError("gramask: a CHOICE request must be a non-empty JSON list of strings, "
                         f"not {spec[:80]!r}")
    for i, c in enumerate(choices):
        if not isinstance(c, str):
            raise ValueError(f"gramask: choice {i} is a {type(c).__name__}, not a string")
    return "root ::= " + " | ".join(_ebnf_literal(c) for c in choices)


@dataclass(frozen=True)
class _Options:
    """The engine-level options vLLM passes, as gramask compile arguments."""
    any_whitespace: bool = True
    strict_mode: bool = True

    def json_kwargs(self) -> Dict[str, Any]:
        kw: Dict[str, Any] = {"any_whitespace": self.any_whitespace, "strict_mode": self.strict_mode}
        if not self.any_whitespace:
            kw["separators"] = (",", ":")  # no whitespace at all, as the option says
        return kw


# Whitespace patterns (outlines' option) that gramask's JSON layouts express exactly.
_NO_WHITESPACE = ("", "()", "(?:)")


def options_from_config(vllm_config: Any) -> _Options:
    """The options of ``vllm_config.structured_outputs_config`` (older vLLM:
    ``decoding_config``); a ValueError for one gramask cannot honour."""
    cfg = getattr(vllm_config, "structured_outputs_config", None)
    if cfg is None:
        cfg = getattr(vllm_config, "decoding_config", None)
    no_ws = bool(getattr(cfg, "disable_any_whitespace", False))
    pattern = getattr(cfg, "whitespace_pattern", None)
    if pattern is not None:
        if pattern in _NO_WHITESPACE:
            no_ws = True
        else:
            raise ValueError(f"gramask: whitespace_pattern {pattern!r} cannot be honoured: gramask's "
                             "JSON grammars allow JSON's whitespace (at most 32 characters in a "
                             "row) or none; use disable_any_whitespace, or whitespace_pattern ''")
    # XGrammar's strict mode is gramask's default (no properties a schema does not name);
    # disable_additional_properties asks for exactly that, so both settings are honoured.
    return _Options(any_whitespace=not no_ws, strict_mode=True)


def grammar_for_request(request_type: Any, spec: str, options: _Options = _Options()) -> Grammar:
    """The gramask Grammar of a vLLM request (type, spec), without a vocabulary: what the
    backend compiles, and what the plugin's request validation parses."""
    kind = getattr(request_type, "name", request_type)
    if kind == "JSON":
        return Grammar.from_json_schema(spec, **options.json_kwargs())
    if kind == "JSON_OBJECT":
        return Grammar.from_json_schema('{"type": "object"}', **options.json_kwargs())
    if kind == "REGEX":
        return Grammar.from_regex(spec)
    if kind == "CHOICE":
        return Grammar.from_ebnf(choice_ebnf(spec))
    if kind == "STRUCTURAL_TAG":
        tag = json.loads(spec)
        if isinstance(tag, dict) and "structures" in tag and "triggers" in tag:
            return Grammar.from_structural_tag(tag["structures"], tag["triggers"])
        return Grammar.from_structural_tag(tag)
    if kind == "GRAMMAR":
        if not spec.strip():
            raise ValueError("gramask: the grammar is empty")
        fmt, text = grammar_format(spec)
        if fmt == "lark":
            return Grammar.from_lark(text, no_file_imports=True)
        if fmt == "gbnf":
            return Grammar.from_gbnf(text)
        if fmt == "regex":
            return Grammar.from_regex(text)
        try:
            return Grammar.from_ebnf(text)
        except GrammarSyntaxError as ebnf_error:
            if _NAMED.match(spec):
                raise
            try:  # detected, not named: llama.cpp's GBNF shares the ::= rules
                return Grammar.from_gbnf(text)
            except GramaskError:
                raise ebnf_error from None
    raise ValueError(f"gramask: unsupported structured output request type {request_type!r}")


def _stop_ids(tokenizer: Any) -> Optional[List[int]]:
    eos = getattr(tokenizer, "eos_token_id", None)
    if eos is None:
        return None
    return [eos] if isinstance(eos, int) else [int(x) for x in eos]


def tokenizer_info_for(tokenizer: Any, vocab_size: int) -> TokenizerInfo:
    """gramask's vocabulary of a Hugging Face fast tokenizer (``backend_tokenizer.to_str()``,
    ``get_vocab()``, ``eos_token_id``), padded to the model's ``vocab_size``."""
    if not hasattr(getattr(tokenizer, "backend_tokenizer", None), "to_str"):
        raise TypeError("gramask's vLLM backend needs a Hugging Face fast tokenizer (one with "
                        f"backend_tokenizer.to_str()), not {type(tokenizer).__name__}; "
                        "use tokenizer_mode='hf'")
    info = TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size,
                                          stop_token_ids=_stop_ids(tokenizer))
    if info.vocab_size != vocab_size:
        raise ValueError(f"gramask: the tokenizer has {info.vocab_size} ids but the model's "
                         f"vocabulary {vocab_size}")
    return info


@dataclass
class GramaskBackend(StructuredOutputBackend):
    """vLLM's engine-level backend: one per engine, compiling every request's grammar."""

    def __post_init__(self) -> None:
        self.options = options_from_config(self.vllm_config)
        self.tokenizer_info = tokenizer_info_for(self.tokenizer, self.vocab_size)
        # vLLM compiles on its own thread pool; the compile releases the GIL, and the
        # cache (one per engine) is locked.
        self.compiler = GrammarCompiler(self.tokenizer_info, cache_enabled=True)
        spec = getattr(self.vllm_config, "speculative_config", None)
        self.num_speculative_tokens = int(getattr(spec, "num_speculative_tokens", 0) or 0)

    def compile_grammar(self, request_type: StructuredOutputOptions, grammar_spec: str,
                        stop_token_ids: Optional[Iterable[int]] = None) -> "GramaskGrammar":
        """The per-request grammar of (request_type, grammar_spec); ``stop_token_ids``
        (newer vLLM) replaces the tokenizer's EOS ids for this request."""
        key = ("vllm", getattr(request_type, "name", str(request_type)), grammar_spec)
        try:
            compiled = self.compiler._compiled(
                key, lambda: grammar_for_request(request_type, grammar_spec, self.options))
        except GramaskError as e:
            raise ValueError(f"gramask: cannot compile the {getattr(request_type, 'name', request_type)} "
                             f"request: {e}") from e
        stops = sorted(set(int(t) for t in stop_token_ids)) if stop_token_ids else None
        return GramaskGrammar(compiled, vocab_size=self.vocab_size,
                              max_rollback_tokens=self.num_speculative_tokens,
                              stop_token_ids=stops)

    def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
        """The batch bitmask vLLM fills: a CPU torch tensor of int32, ``max_num_seqs`` rows
        of ``ceil(vocab_size / 32)`` words, every token allowed."""
        import torch
        return torch.full((max_num_seqs, (self.vocab_size + 31) // 32), -1, dtype=torch.int32)

    def destroy(self) -> None:
        """Drops the compiled grammars the cache holds (those in use stay valid)."""
        self.compiler.clear_cache()


class GramaskGrammar(StructuredOutputGrammar):
    """vLLM's per-request grammar: a gramask matcher and the count of accepted tokens."""

    def __init__(self, compiled: CompiledGrammar, *, vocab_size: int, max_rollback_tokens: int = 0,
                 stop_token_ids: Optional[List[int]] = None) -> None:
        self.compiled = compiled
        self.vocab_size = vocab_size
        # 0 keeps every step (gramask's "unlimited"); vLLM rolls back at most the drafts.
        self.matcher = GrammarMatcher(compiled, override_stop_tokens=stop_token_ids,
                                      max_rollback_tokens=max(0, max_rollback_tokens))
        self.num_processed_tokens = 0
        self._terminated = False

    def accept_tokens(self, request_id: str, tokens: List[int]) -> bool:
        """Advances by the tokens; False at the first one the grammar rejects (those
        before it stay accepted). Tokens after the end (EOS) are ignored, as vLLM's."""
        if self._terminated:
            return True
        for token in tokens:
            if not self.matcher.accept_token(int(token)):
                return False
            self.num_processed_tokens += 1
            if self.matcher.is_terminated():
                self._terminated = True
                break
        return True

    def validate_tokens(self, tokens: List[int]) -> List[int]:
        """The longest prefix of the (drafted) tokens the grammar accepts, ending at EOS;
        the state does not move."""
        if self._terminated or not tokens:
            return []
        ids = [int(t) for t in tokens]
        if any(t < 0 or t >= self.matcher.vocab_size for t in ids):
            # A draft id past the tokenizer (model padding) is simply not accepted.
            ids = ids[:next(i for i, t in enumerate(ids) if t < 0 or t >= self.matcher.vocab_size)]
        n = self.matcher.validate_tokens(ids)
        return list(tokens[:n])

    def rollback(self, num_tokens: int) -> None:
        """Undoes the last ``num_tokens`` accepted tokens."""
        if num_tokens <= 0:
            return
        self.matcher.rollback(num_tokens)
        self.num_processed_tokens -= num_tokens
        self._terminated = self.matcher.is_terminated()

    def fill_bitmask(self, bitmask: Any, batch_index: int) -> None:
        """Writes the allowed next tokens into row ``batch_index`` (the GIL is released
        while the row is computed). After the end every token is allowed, as vLLM's
        manager itself fills finished rows."""
        if self._terminated:
            bitmask[batch_index].fill_(-1) if hasattr(bitmask[batch_index], "fill_") \
                else bitmask[batch_index].fill(-1)
            return
        self.matcher.fill_next_token_bitmask(bitmask, batch_index)

    def is_terminated(self) -> bool:
        return self._terminated

    def reset(self) -> None:
        """Back to the start of the output."""
        self.matcher.reset()
        self.num_processed_tokens = 0
        self._terminated = False
