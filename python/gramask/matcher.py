"""XGrammar's ``xgrammar.matcher`` module: :class:`GrammarMatcher` and
:class:`BatchGrammarMatcher` with XGrammar's arguments, and the bitmask helpers.

The classes derive from the C extension's types, so every per-step method
(``fill_next_token_bitmask``, ``accept_token``, ``rollback``...) is the C method itself:
the XGrammar-shaped API costs nothing per step (bench/bench_python.py measures it).
"""

import time
from typing import Any, List, Optional, Sequence, Union

from . import _core
from .bitmask import (allocate_token_bitmask, apply_token_bitmask_inplace, get_bitmask_shape,
                      reset_token_bitmask)
from .errors import ArgumentError


class GrammarMatcher(_core.GrammarMatcher):
    """The state of one sequence being decoded, as XGrammar's ``GrammarMatcher``.

    Args:
        compiled_grammar: a :class:`CompiledGrammar`.
        override_stop_tokens: end-of-sequence ids to use instead of the vocabulary's
            (the grammar is then compiled again for them, once per compiled grammar).
        terminate_without_stop_token: the matcher counts as terminated as soon as the
            output is complete, without an EOS token (for matching text).
        max_rollback_tokens: steps kept for :meth:`rollback`; -1 (XGrammar's default)
            or 0: unlimited.
    """

    def __init__(self, compiled_grammar: Any, *,
                 override_stop_tokens: Optional[Union[int, List[int]]] = None,
                 terminate_without_stop_token: bool = False,
                 max_rollback_tokens: int = -1) -> None:
        if override_stop_tokens is not None:
            if isinstance(override_stop_tokens, int):
                override_stop_tokens = [override_stop_tokens]
            compiled_grammar = compiled_grammar._with_stop_tokens(override_stop_tokens)
        super().__init__(compiled_grammar,
                         max_rollback_tokens=0 if max_rollback_tokens == -1 else max_rollback_tokens,
                         terminate_without_stop_token=bool(terminate_without_stop_token) or
                         getattr(getattr(compiled_grammar, "tokenizer_info", None),
                                 "_stop_tokens_chosen", False))
        self._terminate_without_stop = bool(terminate_without_stop_token)

    def is_terminated(self) -> bool:
        """Whether the stop token was accepted (with ``terminate_without_stop_token``:
        whether the output is complete)."""
        if self._terminate_without_stop and self.is_accepting():
            return True
        return super().is_terminated()

    def is_completed(self) -> bool:
        """Whether the output so far is a complete sentence of the grammar (or the stop
        token was accepted)."""
        return self.is_accepting() or super().is_terminated()

    def fork(self) -> "GrammarMatcher":
        """An independent copy in the same state."""
        copy = super().fork()
        copy._terminate_without_stop = self._terminate_without_stop
        return copy

    def __deepcopy__(self, memo: Any) -> "GrammarMatcher":
        return self.fork()

    def __copy__(self) -> "GrammarMatcher":
        return self.fork()

    def traverse_draft_tree(self, retrieve_next_token: Any, retrieve_next_sibling: Any,
                            draft_tokens: Any, bitmask: Any,
                            time_threshold: float = -1.0) -> bool:
        """Speculative decoding with a tree of draft tokens: fills ``bitmask[i]`` with
        the mask after the tokens on the path from the root (node 0, this matcher's
        state) to node i. ``retrieve_next_token[i]`` is node i's first child and
        ``retrieve_next_sibling[i]`` its next sibling (-1: none); ``draft_tokens[i]`` is
        node i's token. A node whose token is rejected (or whose parent was), and a node
        after which the matcher is terminated, gets an all-zero row. The matcher's state
        is unchanged. False when ``time_threshold`` seconds (> 0) ran out first."""
        arrays = {"retrieve_next_token": retrieve_next_token,
                  "retrieve_next_sibling": retrieve_next_sibling, "draft_tokens": draft_tokens}
        for name, arr in arrays.items():
            dtype = getattr(arr, "dtype", None)
            if dtype is not None and str(dtype) not in ("torch.int64", "int64"):
                raise ArgumentError(f"{name} must hold int64, not {dtype}")
        child = [int(x) for x in retrieve_next_token]
        sibling = [int(x) for x in retrieve_next_sibling]
        tokens = [int(x) for x in draft_tokens]
        n = len(child)
        if len(sibling) != n or len(tokens) != n:
            raise ArgumentError("retrieve_next_token, retrieve_next_sibling and draft_tokens "
                                f"must have the same length ({n}, {len(sibling)}, {len(tokens)})")
        if n and sibling[0] != -1:
            raise ArgumentError("the root (node 0) cannot have a sibling")
        shape = tuple(getattr(bitmask, "shape", ()))
        if len(shape) != 2 or shape[0] != n:
            raise ArgumentError(f"the bitmask must have one row per node: shape ({n}, words), "
                                f"not {shape}")
        for i in range(n):
            bitmask[i] = 0
        deadline = time.monotonic() + time_threshold if time_threshold > 0 else None
        stack = [(0, self.fork())] if n else []
        while stack:
            node, m = stack.pop()
            if node != 0 and deadline is not None and time.monotonic() > deadline:
                return False  # the root's mask is always filled
            if m.is_terminated():
                continue
            m.fill_next_token_bitmask(bitmask, node)
            c = child[node]
            while 0 <= c < n:
                fork = m.fork()
                vocab = self.vocab_size
                if 0 <= tokens[c] < vocab and fork.accept_token(tokens[c]):
                    stack.append((c, fork))
                c = sibling[c]
        return True

    def _debug_print_internal_state(self) -> str:
        """A short description of the state (gramask's state is not printable as
        XGrammar's Earley sets)."""
        return (f"GrammarMatcher(accepting={self.is_accepting()}, "
                f"terminated={super().is_terminated()}, "
                f"jump_forward={self.find_jump_forward_string()!r})")


class _ClassOrInstance:
    """A method that runs ``on_class`` when called on the class (XGrammar's static batch
    methods) and the C method when called on an instance (gramask's threaded one)."""

    def __init__(self, on_class: Any, name: str) -> None:
        self._on_class = on_class
        self._name = name
        self.__doc__ = on_class.__doc__

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self._on_class
        return getattr(super(BatchGrammarMatcher, obj), self._name)


def _check_batch(matchers: Sequence[Any], items: Sequence[Any], what: str) -> None:
    if len(matchers) != len(items):
        raise RuntimeError(f"{len(matchers)} matchers but {len(items)} {what}")


def _batch_accept_token(matchers: Sequence[GrammarMatcher], tokens: Sequence[int],
                        debug_print: bool = False) -> List[bool]:
    """Each matcher accepts its token; whether each was accepted."""
    _check_batch(matchers, tokens, "tokens")
    return [m.accept_token(t) for m, t in zip(matchers, tokens)]


class BatchGrammarMatcher(_core.BatchGrammarMatcher):
    """Many matchers at once, as XGrammar's ``BatchGrammarMatcher``: a pool of
    ``max_threads`` threads (``"auto"``: one per CPU) filling masks in parallel."""

    def __init__(self, max_threads: Union[int, str] = "auto") -> None:
        super().__init__(-1 if max_threads == "auto" else int(max_threads))

    batch_accept_token = _ClassOrInstance(_batch_accept_token, "batch_accept_token")

    @staticmethod
    def batch_accept_string(matchers: Sequence[GrammarMatcher],
                            strings: Sequence[Union[str, bytes]],
                            debug_print: bool = False) -> List[bool]:
        """Each matcher accepts its string; whether each was accepted."""
        _check_batch(matchers, strings, "strings")
        return [m.accept_string(s) for m, s in zip(matchers, strings)]

    @staticmethod
    def batch_rollback(matchers: Sequence[GrammarMatcher], num_tokens: Sequence[int]) -> None:
        """Each matcher rolls back its number of steps."""
        _check_batch(matchers, num_tokens, "rollback lengths")
        for m, n in zip(matchers, num_tokens):
            if n:
                m.rollback(n)


def __getattr__(name: str) -> Any:
    if name == "bitmask_dtype":
        from .bitmask import token_bitmask_dtype
        return token_bitmask_dtype()
    raise AttributeError(name)


__all__ = ["BatchGrammarMatcher", "GrammarMatcher", "allocate_token_bitmask",
           "apply_token_bitmask_inplace", "get_bitmask_shape", "reset_token_bitmask"]
