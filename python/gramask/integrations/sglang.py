"""gramask as an SGLang grammar backend (``--grammar-backend gramask``).

SGLang picks its grammar backend by name; a third-party one is added with
``sglang.srt.constrained.base_grammar_backend.register_grammar_backend(name, factory)``,
whose registry ``create_grammar_backend`` consults before its own backends, and the name
is added to the command line's choices with ``add_grammar_backend_choices``. Call
:func:`register` (it does both) in the process that parses the arguments and starts the
scheduler, before launching the server::

    import gramask.integrations.sglang
    gramask.integrations.sglang.register()          # the name "gramask"
    # then sglang's launch_server with --grammar-backend gramask

The backend answers every key SGLang dispatches: ``json`` (a JSON Schema, or ``$$ANY$$``
for any JSON), ``regex``, ``ebnf`` (XGrammar's EBNF) and ``structural_tag`` (XGrammar's
structural tag JSON, the ``structures``/``triggers`` form and the ``format`` form). A grammar
that does not compile gives SGLang's invalid-grammar object, so the request is aborted
with the error, as SGLang's own backends do.

SGLang wraps its built-in backends in ``ReasonerGrammarBackend`` when a reasoning parser
is on, but returns a registered backend as it is: this backend handles reasoning itself.
With ``--reasoning-parser`` and a tokenizer that has ``think_end_id`` (or a ``</think>``
token), each request's grammar leaves the tokens up to and including the think-end token
unconstrained (an all-ones mask) and constrains what follows; rollback across the
think-end token goes back to thinking. SGLang versions that say per request whether it
reasons (``maybe_init_reasoning``) are followed.

This module imports SGLang only when :func:`register` or :func:`create_backend` is called,
or when its classes are first used (``GramaskGrammar``, ``GramaskGrammarBackend``):
importing it costs nothing without SGLang. Written against SGLang's
``python/sglang/srt/constrained/`` (base_grammar_backend.py at commit 99e1c516 and the later
revision with ``maybe_init_reasoning`` / ``fill_vocab_mask_batched``; xgrammar_backend.py
at 65cf1ed0; reasoner_grammar_backend.py at 787a422f).
"""

import json
import logging
from typing import Any, Dict, List, Optional, Sequence, Tuple

import gramask as gm

logger = logging.getLogger(__name__)

DEFAULT_NAME = "gramask"
THINK_END_TOKEN = "</think>"

# What one accept_token call did, kept per call so rollback(k) can undo k calls exactly.
_IGNORED, _GRAMMAR, _THINK, _THINK_END = 0, 1, 2, 3

_classes: Dict[str, Any] = {}


def _base_module() -> Any:
    from sglang.srt.constrained import base_grammar_backend
    return base_grammar_backend


def _invalid_grammar(message: str) -> Any:
    """SGLang's marker of a grammar that failed to compile: ``InvalidGrammarObject(msg)``
    in newer versions, the ``INVALID_GRAMMAR_OBJ`` singleton before, else None."""
    base = _base_module()
    cls = getattr(base, "InvalidGrammarObject", None)
    if cls is not None:
        return cls(message)
    return getattr(base, "INVALID_GRAMMAR_OBJ", None)


def _fill_ones(vocab_mask: Any, idx: int) -> None:
    row = vocab_mask[idx]
    row.fill_(-1) if hasattr(row, "fill_") else row.fill(-1)


def _build_classes() -> Dict[str, Any]:
    """Defines the classes on SGLang's base classes (imported here, on first use)."""
    base = _base_module()

    class GramaskGrammar(base.BaseGrammarObject):
        """One request's grammar state for SGLang: a gramask matcher, and the reasoning
        switch (unconstrained until the think-end token when ``think_end_id`` is set)."""

        def __init__(self, compiled: gm.CompiledGrammar, vocab_size: int, key_string: str = "",
                     think_end_id: Optional[int] = None, reasoning: bool = True) -> None:
            super().__init__()
            self.compiled = compiled
            self.vocab_size = vocab_size
            self.key_string = key_string
            # eos_after_end: SGLang verifying draft tokens may fill or accept past EOS
            self.matcher = gm.GrammarMatcher(compiled, eos_after_end=True)
            self.think_end_id = think_end_id
            self._reasoning = reasoning and think_end_id is not None
            self._thinking = self._reasoning
            self._steps: List[int] = []
            stats = getattr(base, "GrammarStats", None)
            self.grammar_stats = stats() if stats is not None else None

        # --- state -----------------------------------------------------------------

        def maybe_init_reasoning(self, reasoning: bool) -> None:
            """Whether this request starts in its reasoning part (newer SGLang says so per
            request); only before the first token."""
            if not self._steps:
                self._reasoning = bool(reasoning) and self.think_end_id is not None
                self._thinking = self._reasoning

        @property
        def is_in_reasoning(self) -> bool:
            return self._thinking

        def accept_token(self, token: int) -> None:
            """Advances by one sampled token; ValueError when the grammar rejects it (SGLang
            aborts the request). After the end of the output tokens are ignored, as
            SGLang's XGrammar backend does."""
            self.current_token = token
            if self._thinking:
                if token == self.think_end_id:
                    self._thinking = False
                    self._steps.append(_THINK_END)
                else:
                    self._steps.append(_THINK)
                return
            if self.matcher.is_terminated():
                self._steps.append(_IGNORED)
                return
            if not self.matcher.accept_token(token):
                raise ValueError(f"token {token} is not allowed by the grammar here "
                                 f"(key {self.key_string[:200]!r})")
            self._steps.append(_GRAMMAR)

        def rollback(self, k: int) -> None:
            """Undoes the last k accept_token calls (grammar tokens, thinking tokens, the
            think-end token: back to thinking)."""
            if k < 0 or k > len(self._steps):
                raise ValueError(f"cannot roll back {k} tokens, {len(self._steps)} accepted")
            undone = self._steps[len(self._steps) - k:]
            del self._steps[len(self._steps) - k:]
            grammar_steps = undone.count(_GRAMMAR)
            if grammar_steps:
                self.matcher.rollback(grammar_steps)
            if _THINK_END in undone:
                self._thinking = True

        def is_terminated(self) -> bool:
            return not self._thinking and self.matcher.is_terminated()

        def copy(self) -> "GramaskGrammar":
            """A fresh request on the same compiled grammar (SGLang keeps one prototype per
            key in its cache and copies it for each request)."""
            return GramaskGrammar(self.compiled, self.vocab_size, self.key_string,
                                  self.think_end_id, self._reasoning)

        def cache_memory_bytes(self) -> int:
            return int(self.compiled.memory_size_bytes)

        # --- masks -----------------------------------------------------------------

        def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> Any:
            """A CPU int32 bitmask, every token allowed (filled here, then moved)."""
            return gm.allocate_token_bitmask(batch_size, vocab_size)

        def fill_vocab_mask(self, vocab_mask: Any, idx: int) -> None:
            """Row idx: the grammar's mask; all ones while thinking; the EOS ids after the
            end (SGLang's draft verification fills past EOS)."""
            if self._thinking:
                _fill_ones(vocab_mask, idx)
            else:
                self.matcher.fill_next_token_bitmask(vocab_mask, idx)

        @staticmethod
        def fill_vocab_mask_batched(entries: Sequence[Any], vocab_mask: Any) -> None:
            """The rows of many requests at once (SGLang's GrammarRow entries: row,
            grammar): the constrained ones on gramask's thread pool, without the GIL; rows
            not listed are left as they are."""
            matchers, rows = [], []
            for entry in entries:
                grammar = entry.grammar
                if not isinstance(grammar, GramaskGrammar):
                    grammar.fill_vocab_mask(vocab_mask, entry.row)
                elif grammar._thinking:
                    _fill_ones(vocab_mask, entry.row)
                else:
                    matchers.append(grammar.matcher)
                    rows.append(int(entry.row))
            if matchers:
                _batch_pool().batch_fill_next_token_bitmask(matchers, vocab_mask, rows)

        @staticmethod
        def reset_vocab_mask(vocab_mask: Any) -> None:
            gm.reset_token_bitmask(vocab_mask)

        @staticmethod
        def move_vocab_mask(vocab_mask: Any, device: Any) -> Any:
            return vocab_mask.to(device, non_blocking=True)

        @staticmethod
        def apply_vocab_mask(logits: Any, vocab_mask: Any) -> None:
            """logits[i, t] = -inf where bit t of vocab_mask[i] is 0 (gramask's apply, which
            runs on the logits' device)."""
            gm.apply_token_bitmask_inplace(logits, vocab_mask)

        # --- jump-forward ----------------------------------------------------------

        def try_jump_forward(self, tokenizer: Any) -> Optional[Tuple[List[int], str]]:
            """The text every continuation starts with, as SGLang's helper ([], text), or
            None (nothing forced, or still thinking)."""
            if self._thinking or self.matcher.is_terminated():
                return None
            text = self.matcher.find_jump_forward_string()
            return ([], text) if text else None

        def jump_forward_str_state(self, helper: Tuple[List[int], str]) -> Tuple[str, int]:
            return helper[1], -1

        def jump_and_retokenize(self, old_output_ids: List[int], new_output_ids: List[int],
                                next_state: int) -> None:
            """SGLang retokenized the output with the jump-forward text appended: roll back
            to the longest common prefix of the old and new ids, accept the new rest."""
            k = 0
            for old, new in zip(old_output_ids, new_output_ids):
                if old != new:
                    break
                k += 1
            if k < len(old_output_ids):
                self.rollback(len(old_output_ids) - k)
            for token in new_output_ids[k:]:
                self.accept_token(token)

        def __repr__(self) -> str:
            return (f"GramaskGrammar(key={self.key_string[:60]!r}, thinking={self._thinking}, "
                    f"steps={len(self._steps)})")

    class GramaskGrammarBackend(base.BaseGrammarBackend):
        """SGLang's grammar backend over gramask: compiles each key once (SGLang caches the
        grammar objects; gramask's compiler caches the compiled grammars too)."""

        def __init__(self, tokenizer: Any, vocab_size: int,
                     eos_token_ids: Optional[Sequence[int]] = None, any_whitespace: bool = True,
                     think_end_id: Optional[int] = None) -> None:
            super().__init__()
            self.vocab_size = vocab_size
            self.tokenizer_info = gm.TokenizerInfo.from_huggingface(
                tokenizer, vocab_size=vocab_size,
                stop_token_ids=sorted(eos_token_ids) if eos_token_ids else None)
            self.compiler = gm.GrammarCompiler(self.tokenizer_info)
            self.any_whitespace = any_whitespace
            self.think_end_id = think_end_id

        def _grammar(self, kind: str, key_string: str, compile_fn: Any) -> Any:
            try:
                compiled = compile_fn()
            except (gm.errors.GramaskError, ValueError, TypeError, RuntimeError) as e:
                logger.error("gramask: invalid %s: %s (key %r)", kind, e, key_string[:200])
                return _invalid_grammar(f"invalid {kind}: {e}")
            grammar = GramaskGrammar(compiled, self.vocab_size, key_string, self.think_end_id)
            if grammar.grammar_stats is not None and hasattr(grammar.grammar_stats,
                                                             "dispatch_type"):
                grammar.grammar_stats.dispatch_type = kind
            return grammar

        def dispatch_json(self, key_string: str) -> Any:
            if key_string == "$$ANY$$":  # any JSON value (SGLang's json_object mode)
                return self._grammar("json", key_string,
                                     self.compiler.compile_builtin_json_grammar)
            return self._grammar("json", key_string, lambda: self.compiler.compile_json_schema(
                key_string, any_whitespace=self.any_whitespace))

        def dispatch_regex(self, key_string: str) -> Any:
            return self._grammar("regex", key_string,
                                 lambda: self.compiler.compile_regex(key_string))

        def dispatch_ebnf(self, key_string: str) -> Any:
            return self._grammar("ebnf", key_string,
                                 lambda: self.compiler.compile_grammar(key_string))

        def dispatch_structural_tag(self, key_string: str) -> Any:
            def compile_tag() -> gm.CompiledGrammar:
                tag = json.loads(key_string)
                if isinstance(tag, dict) and "structures" in tag:  # SGLang's legacy form
                    items = [gm.StructuralTagItem(begin=s["begin"],
                                                  schema=json.dumps(s.get("schema") or {}),
                                                  end=s["end"]) for s in tag["structures"]]
                    return self.compiler.compile_structural_tag(items, tag.get("triggers", []))
                return self.compiler.compile_structural_tag(tag)
            return self._grammar("structural_tag", key_string, compile_tag)

        def reset(self) -> None:
            super().reset()
            self.compiler.clear_cache()

    return {"GramaskGrammar": GramaskGrammar, "GramaskGrammarBackend": GramaskGrammarBackend}


_pool: List[Any] = []


def _batch_pool() -> Any:
    """One thread pool for batched fills, made on first use (SGLang fills from one thread)."""
    if not _pool:
        _pool.append(gm.BatchGrammarMatcher())
    return _pool[0]


def _class(name: str) -> Any:
    if not _classes:
        _classes.update(_build_classes())
    return _classes[name]


def __getattr__(name: str) -> Any:
    if name in ("GramaskGrammar", "GramaskGrammarBackend"):
        return _class(name)
    raise AttributeError(name)


def think_end_id_of(tokenizer: Any) -> Optional[int]:
    """The think-end token id: the tokenizer's ``think_end_id`` (SGLang sets it when a
    reasoning parser is on), else the id of a ``</think>`` token in its vocabulary."""
    tid = getattr(tokenizer, "think_end_id", None)
    if tid is not None:
        return int(tid)
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    tid = vocab.get(THINK_END_TOKEN)
    return int(tid) if tid is not None else None


def create_backend(server_args: Any, tokenizer: Any, vocab_size: int,
                   eos_token_ids: Optional[Sequence[int]] = None, *args: Any,
                   **kwargs: Any) -> Any:
    """The factory SGLang's ``create_grammar_backend`` calls for a registered name:
    ``(server_args, tokenizer, vocab_size, eos_token_ids)``. Options from ``server_args``:
    ``constrained_json_disable_any_whitespace``, and ``reasoning_parser`` (turns the
    reasoning switch on, with :func:`think_end_id_of` the tokenizer)."""
    think_end = None
    if getattr(server_args, "reasoning_parser", None):
        think_end = think_end_id_of(tokenizer)
        if think_end is None:
            logger.warning("gramask: a reasoning parser is on but the tokenizer has no "
                           "think_end_id or %s token: grammars constrain from the start",
                           THINK_END_TOKEN)
    any_ws = not getattr(server_args, "constrained_json_disable_any_whitespace", False)
    return _class("GramaskGrammarBackend")(tokenizer, vocab_size, eos_token_ids,
                                           any_whitespace=any_ws, think_end_id=think_end)


def register(name: str = DEFAULT_NAME) -> None:
    """Registers the backend with SGLang under ``name`` (``--grammar-backend NAME``): in
    its registry, and in the command line's choices where SGLang has
    ``add_grammar_backend_choices``."""
    _base_module().register_grammar_backend(name, create_backend)
    for module in ("sglang.srt.server_args", "sglang.srt.arg_groups.choices"):
        try:
            mod = __import__(module, fromlist=["add_grammar_backend_choices"])
        except ImportError:
            continue
        add = getattr(mod, "add_grammar_backend_choices", None)
        choices = getattr(mod, "GRAMMAR_BACKEND_CHOICES", None)
        if add is not None and (choices is None or name not in choices):
            add([name])
            break


__all__ = ["DEFAULT_NAME", "GramaskGrammar", "GramaskGrammarBackend", "create_backend",
           "register", "think_end_id_of"]
