"""XGrammar's ``xgrammar.matcher`` module: :class:`GrammarMatcher` and
:class:`BatchGrammarMatcher` with XGrammar's arguments, and the bitmask helpers.

The classes derive from the C extension's types, so every per-step method
(``fill_next_token_bitmask``, ``accept_token``, ``rollback``...) is the C method itself:
the XGrammar-shaped API costs nothing per step (bench/bench_python.py measures it).
"""

import array
import sys
from typing import Any, List, Optional, Sequence, Union

import numpy as np

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
        eos_after_end: after EOS was accepted, :meth:`fill_next_token_bitmask` writes a
            mask of the EOS ids only and :meth:`accept_token` takes another EOS and returns
            False for any other token, where by default filling raises ``StateError``:
            engines verifying draft tokens step past the end of a sequence (gramask's
            option; XGrammar has none, ``gm_matcher_options.eos_after_end`` in C).
    """

    def __init__(self, compiled_grammar: Any, *,
                 override_stop_tokens: Optional[Union[int, List[int]]] = None,
                 terminate_without_stop_token: bool = False,
                 max_rollback_tokens: int = -1,
                 eos_after_end: bool = False,
                 default_temperature: Optional[float] = None) -> None:
        if default_temperature is not None:
            t = float(default_temperature)
            if not (t >= 0 and t != float("inf")):
                from .errors import ArgumentError
                raise ArgumentError(f"default_temperature must be a finite non-negative "
                                    f"number, not {default_temperature!r}")
            default_temperature = t
        if override_stop_tokens is not None:
            if isinstance(override_stop_tokens, int):
                override_stop_tokens = [override_stop_tokens]
            compiled_grammar = compiled_grammar._with_stop_tokens(override_stop_tokens)
        super().__init__(compiled_grammar,
                         max_rollback_tokens=0 if max_rollback_tokens == -1 else max_rollback_tokens,
                         terminate_without_stop_token=bool(terminate_without_stop_token) or
                         getattr(getattr(compiled_grammar, "tokenizer_info", None),
                                 "_stop_tokens_chosen", False),
                         eos_after_end=bool(eos_after_end))
        self._terminate_without_stop = bool(terminate_without_stop_token)
        grammar = getattr(compiled_grammar, "_grammar", None)
        grammar_temperature = getattr(grammar, "_temperature", None)
        self._temperature = (grammar_temperature if grammar_temperature is not None
                             else default_temperature)
        self._sufstop: Any = None  # lark_sufstop's splitter, made on first use

    def get_captures(self, deduplicate: bool = True) -> List[Any]:
        """XGrammar's captures: [(label, bytes)] of the rules with ``capture`` that
        completed in the accepted output (deduplicated: each occurrence once, its longest
        completion); with the rules of XGrammar's ``suffix=`` / ``stop=`` attributes, their
        ``stop_capture`` and without a stop marker in the enclosing captures."""
        got = super().get_captures(deduplicate)
        from .lark_sufstop import LABEL_PREFIX, captures, splitter
        if not any(label.startswith(LABEL_PREFIX) for label, _ in got):
            return got
        if self._sufstop is None:
            self._sufstop = splitter()
        return captures(self._capture_spans(bool(deduplicate)), self._sufstop)

    @property
    def temperature(self) -> Optional[float]:
        """XGrammar's sampling temperature at this point of the output: that of the
        innermost rule with a ``[temperature=t]`` inside which the next token may be read
        (the largest where readings of the output disagree, which is reported once on
        stderr, as XGrammar does), else the grammar's (``start[temperature=t]`` in its Lark
        dialect), else ``default_temperature``, else None."""
        rule = self.rule_temperature()
        if rule is None:
            return self._temperature
        # the rule's number as written: the shortest decimal of the C library's float
        hi, lo = (float(str(np.float32(x))) for x in rule)
        if hi != lo and not getattr(self, "_temperature_warned", False):
            self._temperature_warned = True
            sys.stderr.write("Multiple active grammar paths specify different temperatures "
                             f"({lo:g} to {hi:g}); using the maximum, {hi:g}\n")
            sys.stderr.flush()
        return hi

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
        copy._temperature = self._temperature
        copy._sufstop = self._sufstop
        return copy

    def __deepcopy__(self, memo: Any) -> "GrammarMatcher":
        return self.fork()

    def __copy__(self) -> "GrammarMatcher":
        return self.fork()

    def traverse_draft_tree(self, retrieve_next_token: Any, retrieve_next_sibling: Any,
                            draft_tokens: Any, token_bitmask: Any,
                            time_threshold: float = -1.0,
                            temperatures: Any = None) -> bool:
        """Speculative decoding with a tree of draft tokens, as XGrammar's: fills
        ``token_bitmask[i]`` with the mask after the tokens on the path from the root (node
        0, this matcher's state) to node i, in one C call with the GIL released
        (``gm_matcher_fill_draft_tree``). ``retrieve_next_token[i]`` is node i's first child
        and ``retrieve_next_sibling[i]`` its next sibling (-1: none); ``draft_tokens[i]`` is
        node i's token (1-D int64 tensors or arrays). A node whose token its parent's mask
        does not allow, the nodes below it, and a node after which the matcher is
        terminated get an all-zero row (with ``eos_after_end``, a node after EOS gets the
        EOS-only mask). The matcher's state is unchanged. A malformed tree (a cycle, a node
        linked twice, an index out of range, the root with a sibling) raises
        :class:`ArgumentError` naming the node. Returns False when ``time_threshold``
        seconds (> 0) ran out first (the root's row is always filled). ``temperatures``, if
        given (a 1-D float32 tensor or array, one entry per node), gets each node's
        :attr:`temperature`, or -1 for a node whose path was refused or where there is
        none."""
        completed = super()._fill_draft_tree(
            _int64_vector(retrieve_next_token, "retrieve_next_token"),
            _int64_vector(retrieve_next_sibling, "retrieve_next_sibling"),
            _int64_vector(draft_tokens, "draft_tokens"), token_bitmask,
            float(time_threshold), self._terminate_without_stop)
        if temperatures is not None:
            _fill_draft_temperatures(temperatures, self, retrieve_next_token,
                                     retrieve_next_sibling, draft_tokens, token_bitmask)
        return completed

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


def _int64_vector(x: Any, name: str) -> Any:
    """x as a C-contiguous int64 buffer for the C call: XGrammar takes 1-D int64 tensors
    only (other dtypes raise); numpy arrays and plain sequences are accepted too."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return array.array("q", [int(v) for v in x])
    if str(dtype) not in ("torch.int64", "int64"):
        raise ArgumentError(f"{name} must be a 1-D int64 tensor, not {dtype}")
    if hasattr(x, "detach"):
        if x.device.type != "cpu":
            raise ArgumentError(f"{name} must be on the CPU, not {x.device}")
        x = x.detach().contiguous().numpy()
    if not x.flags["C_CONTIGUOUS"]:
        x = x.copy()
    return x


def _check_batch(matchers: Sequence[Any], items: Sequence[Any], what: str) -> None:
    if len(matchers) != len(items):
        raise RuntimeError(f"{len(matchers)} matchers but {len(items)} {what}")


def _batch_accept_token(matchers: Sequence[GrammarMatcher], tokens: Sequence[int],
                        debug_print: bool = False) -> List[bool]:
    """Each matcher accepts its token; whether each was accepted."""
    _check_batch(matchers, tokens, "tokens")
    return [m.accept_token(t) for m, t in zip(matchers, tokens)]


def _check_temperatures(temperatures: Any, n: Optional[int]) -> None:
    dtype = str(getattr(temperatures, "dtype", ""))
    shape = tuple(getattr(temperatures, "shape", ()))
    if not dtype.endswith("float32") or len(shape) != 1 or (n is not None and shape[0] != n):
        from .errors import ArgumentError
        raise ArgumentError("the temperatures tensor must be a 1-D float32 tensor"
                            + (f" of {n} entries" if n is not None else "")
                            + f", not {dtype or type(temperatures).__name__} of shape {shape}")


def _fill_draft_temperatures(temperatures: Any, root: "GrammarMatcher",
                             next_token: Any, next_sibling: Any, draft_tokens: Any,
                             bitmask: Any) -> None:
    """Each node's temperature: the matcher's :attr:`temperature` after the path to it
    where that path was accepted (its parent's row of the filled bitmask allows its
    token), -1 elsewhere. Rule temperatures (``name[temperature=t]``) differ from node to
    node, so each accepted node is stepped to on a fork of its parent."""
    nexts = [int(x) for x in next_token]
    sibs = [int(x) for x in next_sibling]
    toks = [int(x) for x in draft_tokens]
    n = len(toks)
    _check_temperatures(temperatures, n)

    def value(m: "GrammarMatcher") -> float:
        t = m.temperature
        return -1.0 if t is None else t

    values = [-1.0] * n
    if n:
        values[0] = value(root)
        stack = [(0, root)]
        seen = {0}
        while stack:
            i, m = stack.pop()
            c = nexts[i]
            while 0 <= c < n and c not in seen:
                seen.add(c)
                word = int(bitmask[i][toks[c] // 32]) & 0xFFFFFFFF
                child = None
                if m is not None and (word >> (toks[c] % 32)) & 1:
                    child = m.fork()
                    if child.accept_token(toks[c]):
                        values[c] = value(child)
                    else:
                        child = None
                stack.append((c, child))
                c = sibs[c]
    for i, v in enumerate(values):
        temperatures[i] = v


def _batch_fill_temperature(matchers: Sequence[GrammarMatcher], temperatures: Any,
                            indices: Optional[Sequence[int]] = None) -> None:
    """XGrammar's: temperatures[indices[k]] (or [k]) gets matcher k's temperature, -1
    where it has none."""
    _check_temperatures(temperatures, None)
    size = int(temperatures.shape[0])
    from .errors import ArgumentError
    if indices is None:
        indices = list(range(len(matchers)))
    elif len(indices) != len(matchers):
        raise ArgumentError(f"the indices size ({len(indices)}) differs from the number of "
                            f"matchers ({len(matchers)})")
    for m, i in zip(matchers, indices):
        if not 0 <= int(i) < size:
            raise ArgumentError(f"index {i} is out of bounds of the temperatures tensor "
                                f"({size} entries)")
        t = m.temperature
        temperatures[int(i)] = -1.0 if t is None else t


class BatchGrammarMatcher(_core.BatchGrammarMatcher):
    """Many matchers at once, as XGrammar's ``BatchGrammarMatcher``: a pool of
    ``max_threads`` threads (``"auto"``: one per CPU) filling masks in parallel."""

    def __init__(self, max_threads: Union[int, str] = "auto") -> None:
        super().__init__(-1 if max_threads == "auto" else int(max_threads))

    batch_accept_token = _ClassOrInstance(_batch_accept_token, "batch_accept_token")
    batch_fill_temperature = staticmethod(_batch_fill_temperature)

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
