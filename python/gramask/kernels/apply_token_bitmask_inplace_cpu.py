"""XGrammar's CPU kernel, under its module and function names: gramask's C
:func:`gramask.apply_token_bitmask_inplace`."""

from typing import Any, List, Optional, Union

from ..bitmask import apply_token_bitmask_inplace


def apply_token_bitmask_inplace_cpu(logits: Any, bitmask: Any, vocab_size: Optional[int] = None,
                                    indices: Optional[Union[List[int], Any]] = None) -> None:
    """Sets ``logits[i, t]`` to -inf for every token ``t`` whose bit is 0 in ``bitmask[i]``
    (see :func:`gramask.apply_token_bitmask_inplace`, which this is)."""
    if indices is not None and not isinstance(indices, list):
        indices = [int(i) for i in indices]
    apply_token_bitmask_inplace(logits, bitmask, vocab_size=vocab_size, indices=indices)
