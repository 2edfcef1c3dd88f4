"""gramask: grammar-constrained decoding masks for LLM inference.

The Python binding of the gramask C library, with XGrammar's Python API (names,
arguments and defaults), so ``import gramask as xgr`` runs code written for XGrammar
(README, "Python"); gramask's own names and options are kept beside XGrammar's::

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
from .bitmask import (allocate_token_bitmask, apply_token_bitmask_inplace, bitmask_dtype,
                      get_bitmask_shape, reset_token_bitmask)
from .compiler import CompiledGrammar, GrammarCompiler
from .config import (get_max_recursion_depth, get_serialization_version, max_recursion_depth,
                     set_max_recursion_depth)
from .errors import (ArgumentError, DeserializeFormatError, DeserializeVersionError, FileError,
                     FormatError, GramaskError, GrammarError, GrammarSyntaxError,
                     InvalidJSONError, InvalidStructuralTagError, LimitError, OutOfMemoryError,
                     RejectedError, StateError, UnsupportedError)
from .grammar import Grammar
from .logits import LogitsProcessor
from .matcher import BatchGrammarMatcher, GrammarMatcher
from .tokenizer import TokenizerInfo
from .tokenizer_info import VocabType
from .structural_tag import StructuralTag, StructuralTagItem
# XGrammar's module names, imported so that `import xgrammar` resolving to gramask finds
# them as submodules of one package.
from . import config, kernels, matcher, structural_tag, testing, tokenizer_info  # noqa: E402
from . import builtin_structural_tag, openai_tool_call_schema  # noqa: E402

__version__ = _core.version()

__all__ = [
    "ArgumentError", "BatchGrammarMatcher", "CompiledGrammar", "DeserializeFormatError",
    "DeserializeVersionError", "FileError", "FormatError", "GramaskError", "Grammar",
    "GrammarCompiler", "GrammarError", "GrammarMatcher", "GrammarSyntaxError",
    "InvalidJSONError", "InvalidStructuralTagError", "LimitError", "LogitsProcessor",
    "OutOfMemoryError", "RejectedError", "StateError", "StructuralTag", "StructuralTagItem",
    "TokenizerInfo", "UnsupportedError",
    "VocabType", "allocate_token_bitmask", "apply_token_bitmask_inplace", "bitmask_dtype",
    "errors", "get_bitmask_shape", "get_max_recursion_depth", "get_serialization_version",
    "max_recursion_depth", "reset_token_bitmask", "set_max_recursion_depth",
]
