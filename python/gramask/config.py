"""XGrammar's ``xgrammar.config`` settings, for code written against XGrammar.

``max_recursion_depth`` bounds the recursion of XGrammar's matcher. gramask's matchers do
not recurse (the Earley engine's work lists and the LALR engine's stacks are explicit and
bounded by gramask's limits), so the value is kept and checked, and changes nothing.
"""

import contextlib
from typing import Iterator

_DEFAULT_DEPTH = 10000
_MAX_DEPTH = 1000000
_depth = _DEFAULT_DEPTH


def get_max_recursion_depth() -> int:
    """The recursion depth setting (default 10000, as XGrammar's)."""
    return _depth


def set_max_recursion_depth(max_recursion_depth: int) -> None:
    """Sets the recursion depth setting: 1 to 1,000,000 (RuntimeError otherwise)."""
    global _depth
    if not isinstance(max_recursion_depth, int) or not 1 <= max_recursion_depth <= _MAX_DEPTH:
        raise RuntimeError(f"max_recursion_depth must be 1 to {_MAX_DEPTH}, "
                           f"not {max_recursion_depth!r}")
    _depth = max_recursion_depth


@contextlib.contextmanager
def max_recursion_depth(max_recursion_depth: int) -> Iterator[None]:
    """Sets the recursion depth setting for the duration of a ``with`` block."""
    old = get_max_recursion_depth()
    set_max_recursion_depth(max_recursion_depth)
    try:
        yield
    finally:
        set_max_recursion_depth(old)


def get_serialization_version() -> str:
    """The version written into serialize_json's output (gramask's own format)."""
    from .grammar import SERIALIZATION_VERSION
    return SERIALIZATION_VERSION
