"""Token bitmasks: allocation and application to logits.

A bitmask row holds ceil(vocab_size / 32) int32 words; bit ``t % 32`` of word
``t // 32`` is 1 when token ``t`` is allowed (the layout of XGrammar, vLLM and
SGLang; int32 because old torch versions have no uint32).
"""

import math
import warnings
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from . import _core

bitmask_dtype = np.int32
"""The dtype of a bitmask: int32."""


def get_bitmask_shape(batch_size: int, vocab_size: int) -> Tuple[int, int]:
    """The shape of a bitmask: ``(batch_size, ceil(vocab_size / 32))``."""
    if batch_size < 0 or vocab_size < 0:
        raise ValueError("batch_size and vocab_size must be >= 0")
    return (batch_size, math.ceil(vocab_size / 32))


def _torch() -> Any:
    """torch if it is importable (imported on first use: it takes a second), else None."""
    global _TORCH
    if _TORCH is False:
        try:
            import torch
            _TORCH = torch
        except ImportError:
            _TORCH = None
    return _TORCH


_TORCH: Any = False


def token_bitmask_dtype() -> Any:
    """The dtype of what :func:`allocate_token_bitmask` returns: torch.int32 when torch
    is importable, else numpy's int32."""
    torch = _torch()
    return torch.int32 if torch is not None else bitmask_dtype


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> Any:
    """A bitmask of ``batch_size`` rows for ``vocab_size`` tokens, every token allowed,
    of shape ``(batch_size, ceil(vocab_size / 32))`` and dtype int32: a torch CPU tensor
    when torch is importable (as XGrammar), else a numpy array. Either works with every
    gramask call; ``tensor.numpy()`` and ``torch.from_numpy(array)`` share the memory."""
    shape = get_bitmask_shape(batch_size, vocab_size)
    torch = _torch()
    if torch is not None:
        return torch.full(shape, -1, dtype=torch.int32)
    return np.full(shape, -1, dtype=bitmask_dtype)


def reset_token_bitmask(bitmask: Any) -> None:
    """Sets every bit (every token allowed)."""
    bitmask.fill(-1) if hasattr(bitmask, "fill") else bitmask.fill_(-1)


def apply_token_bitmask_inplace(logits: Any, bitmask: Any, *, vocab_size: Optional[int] = None,
                                indices: Optional[Sequence[int]] = None) -> None:
    """Sets ``logits[i, t]`` to -inf for every token ``t`` whose bit is 0 in ``bitmask[i]``.

    ``logits``: a numpy array or torch CPU tensor of shape ``(batch, V)`` or ``(V,)``,
    float32, float64, float16 (or bfloat16, torch); ``bitmask``: int32 of shape
    ``(batch, ceil(V / 32))`` or ``(ceil(V / 32),)``. Only the first ``vocab_size``
    columns are touched (default ``min(V, 32 * bitmask words)``), so padded logits keep
    their values as in XGrammar. ``indices``: the rows to mask (default all; then logits
    and bitmask must have as many rows). Runs in C without the GIL; both arrays must be
    contiguous in their last dimension; rows may be strided (a view such as
    ``logits[:, :V]``: masked through a contiguous copy, then copied back). Logits on a
    GPU (any torch device but the CPU) are masked there, with torch operations
    (:func:`gramask.bitmask_torch.apply_token_bitmask_torch`: the bitmask is copied to
    the device, never the logits to the host).

    As XGrammar, warns (UserWarning) when ``vocab_size`` is not given and the bitmask
    covers fewer tokens than the logits have: the logits past ``32 * words`` are left
    unmasked, and tokens there (padding ids) could be sampled.
    """
    width, words = _last_dim(logits), _last_dim(bitmask)
    if vocab_size is None and width is not None and words is not None and words * 32 < width:
        warnings.warn(f"apply_token_bitmask_inplace: the bitmask covers {words * 32} tokens "
                      f"and the logits have {width}: logits [{words * 32}, {width}) are left "
                      "unmasked; pass vocab_size, or allocate the bitmask for the logits' width",
                      UserWarning, stacklevel=2)
    dev = getattr(logits, "device", None)
    if dev is not None and getattr(dev, "type", "cpu") != "cpu":
        from .bitmask_torch import apply_token_bitmask_torch
        apply_token_bitmask_torch(logits, bitmask, vocab_size=vocab_size, indices=indices)
        return
    torch = _torch() if type(logits).__module__.startswith("torch") else None
    if torch is not None and isinstance(logits, torch.Tensor) and not logits.is_contiguous():
        dense = logits.contiguous()
        _core.apply_token_bitmask_inplace(dense, bitmask, vocab_size=vocab_size, indices=indices)
        logits.copy_(dense)
        return
    if isinstance(logits, np.ndarray) and not logits.flags.c_contiguous:
        dense = np.ascontiguousarray(logits)
        _core.apply_token_bitmask_inplace(dense, bitmask, vocab_size=vocab_size, indices=indices)
        logits[...] = dense
        return
    _core.apply_token_bitmask_inplace(logits, bitmask, vocab_size=vocab_size, indices=indices)


def _last_dim(a: Any) -> Optional[int]:
    shape = getattr(a, "shape", None)
    return int(shape[-1]) if shape is not None and len(shape) else None
