"""Token bitmasks applied with torch operations, on the logits' own device.

On a CUDA (or any non-CPU) tensor :func:`gramask.apply_token_bitmask_inplace` runs
:func:`apply_token_bitmask_torch`: the int32 bitmask is copied to the device (a
non-blocking copy, asynchronous from a pinned host bitmask: :func:`allocate_pinned_token_bitmask`),
unpacked there into one boolean per token, and the disallowed logits set to -inf with
``masked_fill_``. The logits never leave the device. On CPU tensors the same function
is what the tests check bit for bit against the C implementation and the layout
(bit ``t % 32`` of word ``t // 32``); ``python/tests/gpu_check.py`` checks it on a GPU.
"""

from typing import Any, Dict, Optional, Sequence, Tuple

_BITS: Dict[Any, Any] = {}  # device -> the 32 one-bit int32 words, made once per device


def _torch() -> Any:
    import torch
    return torch


def _bits(device: Any) -> Any:
    b = _BITS.get(device)
    if b is None:
        torch = _torch()
        words = [1 << k for k in range(31)] + [-(1 << 31)]  # bit 31 is int32's sign bit
        b = _BITS.setdefault(device, torch.tensor(words, dtype=torch.int32, device=device))
    return b


def allocate_pinned_token_bitmask(batch_size: int, vocab_size: int) -> Any:
    """A bitmask as :func:`gramask.allocate_token_bitmask` (a CPU int32 tensor, every
    token allowed), in pinned (page-locked) memory when CUDA is available, so that its copy
    to the GPU is asynchronous (``non_blocking=True``). Without CUDA it is ordinary memory."""
    torch = _torch()
    if batch_size < 0 or vocab_size < 0:
        raise ValueError("batch_size and vocab_size must be >= 0")
    pin = bool(torch.cuda.is_available())
    return torch.full((batch_size, (vocab_size + 31) // 32), -1, dtype=torch.int32,
                      pin_memory=pin)


def unpack_token_bitmask(bitmask: Any, vocab_size: int) -> Any:
    """The allowed-token booleans of an int32 bitmask, on the bitmask's device: shape
    ``(..., vocab_size)``, True where bit ``t % 32`` of word ``t // 32`` is 1."""
    torch = _torch()
    if bitmask.dtype != torch.int32:
        raise TypeError(f"a token bitmask must be int32, not {bitmask.dtype}")
    words = bitmask.shape[-1]
    if vocab_size > 32 * words:
        raise ValueError(f"vocab_size {vocab_size} needs {(vocab_size + 31) // 32} bitmask words, "
                         f"the bitmask has {words}")
    # Each word against the 32 one-bit words: (..., words, 32) booleans, token order.
    bits = (bitmask.unsqueeze(-1) & _bits(bitmask.device)) != 0
    return bits.reshape(*bitmask.shape[:-1], words * 32)[..., :vocab_size]


def _to_device(bitmask: Any, device: Any) -> Any:
    if bitmask.device == device:
        return bitmask
    return bitmask.to(device, non_blocking=True)


def apply_token_bitmask_torch(logits: Any, bitmask: Any, *, vocab_size: Optional[int] = None,
                              indices: Optional[Sequence[int]] = None) -> None:
    """Sets ``logits[i, t]`` to -inf for every token ``t`` whose bit is 0 in
    ``bitmask[i]``, with torch operations on ``logits.device`` (the arguments and
    defaults of :func:`gramask.apply_token_bitmask_inplace`). ``bitmask`` may be on the
    host (copied without blocking) or already on the device."""
    torch = _torch()
    if not isinstance(logits, torch.Tensor) or not isinstance(bitmask, torch.Tensor):
        raise TypeError("apply_token_bitmask_torch takes torch tensors")
    if logits.dim() not in (1, 2) or bitmask.dim() not in (1, 2):
        raise ValueError(f"logits and bitmask must have 1 or 2 dimensions, not {logits.dim()} "
                         f"and {bitmask.dim()}")
    one_row = logits.dim() == 1
    lg = logits.unsqueeze(0) if one_row else logits
    bm = bitmask.unsqueeze(0) if bitmask.dim() == 1 else bitmask
    width = lg.shape[-1]
    vocab = min(width, 32 * bm.shape[-1]) if vocab_size is None else vocab_size
    if vocab < 0 or vocab > width or vocab > 32 * bm.shape[-1]:
        raise ValueError(f"vocab_size {vocab} exceeds the logits ({width} columns) or the "
                         f"bitmask ({bm.shape[-1]} words)")
    bm = _to_device(bm, lg.device)
    if indices is None:
        if lg.shape[0] != bm.shape[0]:
            raise ValueError(f"logits have {lg.shape[0]} rows but the bitmask {bm.shape[0]}; "
                             "pass indices to mask some rows")
        allowed = unpack_token_bitmask(bm, vocab)
        lg[:, :vocab].masked_fill_(~allowed, float("-inf"))
        return
    rows = [int(i) for i in indices]
    if not rows:
        return
    for i in rows:
        if not (0 <= i < lg.shape[0] and i < bm.shape[0]):
            raise IndexError(f"row index {i} is out of range (logits {lg.shape[0]} rows, "
                             f"bitmask {bm.shape[0]})")
    idx = torch.tensor(rows, dtype=torch.long, device=lg.device)
    allowed = unpack_token_bitmask(bm.index_select(0, idx), vocab)
    view = lg[:, :vocab]
    sub = view.index_select(0, idx)
    sub.masked_fill_(~allowed, float("-inf"))
    view.index_copy_(0, idx, sub)


def is_device_tensor(x: Any) -> bool:
    """Whether x is a torch tensor on a device other than the CPU."""
    dev = getattr(x, "device", None)
    return dev is not None and getattr(dev, "type", "cpu") != "cpu"


def reference_mask(bitmask_row: Sequence[int], vocab_size: int) -> Tuple[bool, ...]:
    """The allowed tokens of one bitmask row, read bit by bit in Python (the layout's
    definition, for tests): bit ``t % 32`` of word ``t // 32``."""
    return tuple(bool((int(bitmask_row[t >> 5]) >> (t & 31)) & 1) for t in range(vocab_size))
