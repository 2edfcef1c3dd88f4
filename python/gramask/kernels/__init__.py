"""XGrammar's ``xgrammar.kernels``: the implementations of applying a token bitmask to
logits. gramask has one, in C, for CPU arrays and tensors (numpy or torch):
``apply_token_bitmask_inplace_cpu``. XGrammar's CUDA, Triton, torch.compile and MLX
kernels are not provided (README, "Python"): move GPU logits to the CPU, or apply the
bitmask with the engine's own kernel (the layout is the same).
"""

from . import apply_token_bitmask_inplace_cpu  # noqa: F401

__all__ = ["apply_token_bitmask_inplace_cpu"]
