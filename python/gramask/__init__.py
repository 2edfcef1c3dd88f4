"""gramask: grammar-constrained decoding masks for LLM inference.

The Python binding of the gramask C library, shaped like XGrammar's API so ports
are mechanical::

    import gramask as gm

    info = gm.TokenizerInfo.from_file("tokenizer.json")
    compiler = gm.GrammarCompiler(info)
    compiled = compiler.compile_bundled("json")        # or compile_lark(text), ...
    matcher = gm.GrammarMatcher(compiled)
    bitmask = gm.allocate_token_bitmask(1, info.vocab_size)
    while not matcher.is_terminated():
        logits = model(...)                              # (vocab,) float32
        matcher.fill_next_token_bitmask(bitmask)
        gm.apply_token_bitmask_inplace(logits, bitmask[0])
        token = sample(logits)
        matcher.accept_token(token)

See the README's "Python" section for installation.
"""

from . import errors
from . import _core
from ._core import BatchGrammarMatcher, GrammarMatcher
from .bitmask import (allocate_token_bitmask, apply_token_bitmask_inplace, bitmask_dtype,
                      get_bitmask_shape, reset_token_bitmask)
from .compiler import CompiledGrammar, GrammarCompiler
from .errors import (ArgumentError, FileError, FormatError, GramaskError, GrammarError,
                     GrammarSyntaxError, LimitError, OutOfMemoryError, RejectedError, StateError,
                     UnsupportedError)
from .grammar import Grammar
from .logits import LogitsProcessor
from .tokenizer import TokenizerInfo

__version__ = _core.version()

__all__ = [
    "ArgumentError", "BatchGrammarMatcher", "CompiledGrammar", "FileError", "FormatError",
    "GramaskError", "Grammar", "GrammarCompiler", "GrammarError", "GrammarMatcher",
    "GrammarSyntaxError", "LimitError", "LogitsProcessor", "OutOfMemoryError", "RejectedError",
    "StateError", "TokenizerInfo", "UnsupportedError", "allocate_token_bitmask",
    "apply_token_bitmask_inplace", "bitmask_dtype", "errors", "get_bitmask_shape",
    "reset_token_bitmask",
]
