"""XGrammar's ``xgrammar.testing`` helpers, for tests written against XGrammar.

The helpers that match text, build matchers and read bitmasks are implemented here.
Those that print XGrammar's internal forms (its normalized EBNF, rule automata, the EBNF
of a JSON Schema or a regex) have no counterpart in gramask, whose grammars compile to
other structures: they raise :class:`UnsupportedError` saying so.
"""

import json
import time
from typing import Any, List, Optional, Tuple, Union

from .compiler import CompiledGrammar, GrammarCompiler
from .errors import UnsupportedError
from .grammar import Grammar
from .matcher import GrammarMatcher
from .tokenizer import TokenizerInfo


def _no_printed_form(what: str) -> UnsupportedError:
    return UnsupportedError(f"{what}: gramask has no such printed form (it is XGrammar's "
                            "internal representation)")


_XML_STYLES = ("qwen_xml", "minimax_xml", "deepseek_xml", "glm_xml", "cohere_xml", "kimi_k3_xml")


def _json_schema_to_ebnf(schema: Any, *, json_format: str = "json", any_order: bool = False,
                         max_whitespace_cnt: Optional[int] = None, strict_mode: bool = True,
                         **options: Any) -> Any:
    """XGrammar prints the EBNF of a schema here. gramask has no such printed form; for the
    XML tool-call formats (``json_format`` other than "json") it returns the
    :class:`Grammar` of the structural tag's json_schema format with that style instead
    (what the tests pass on to :func:`_is_grammar_accept_string`); its ``str`` is the
    structural tag, not XGrammar's rules."""
    if json_format not in _XML_STYLES:
        raise _no_printed_form("_json_schema_to_ebnf")
    if not strict_mode:
        raise UnsupportedError("_json_schema_to_ebnf: an XML style with strict_mode=False "
                               "(extra properties and items) is not supported")
    if isinstance(schema, str):
        schema = json.loads(schema)
    elif isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        schema = schema.model_json_schema()
    fmt = {"type": "json_schema", "json_schema": schema, "style": json_format,
           "any_order": any_order}
    if max_whitespace_cnt is not None:
        fmt["max_whitespace_cnt"] = max_whitespace_cnt
    return Grammar.from_structural_tag({"type": "structural_tag", "format": fmt})


def _regex_to_ebnf(regex: str, with_rule_name: bool = True) -> str:
    raise _no_printed_form("_regex_to_ebnf")


def _print_grammar_fsms(grammar: Grammar) -> str:
    raise _no_printed_form("_print_grammar_fsms")


def _get_allow_empty_rule_ids(compiled_grammar: CompiledGrammar) -> List[int]:
    raise _no_printed_form("_get_allow_empty_rule_ids (XGrammar's rule numbering)")


def _is_rule_fsm_accept_string(*args: Any, **kwargs: Any) -> bool:
    raise _no_printed_form("_is_rule_fsm_accept_string (XGrammar's rule automata)")


def _qwen_xml_tool_calling_to_ebnf(schema: Any) -> str:
    raise _no_printed_form("_qwen_xml_tool_calling_to_ebnf")


def _minimax_xml_tool_calling_to_ebnf(schema: Any) -> str:
    raise _no_printed_form("_minimax_xml_tool_calling_to_ebnf")


def _deepseek_xml_tool_calling_to_ebnf(schema: Any) -> str:
    raise _no_printed_form("_deepseek_xml_tool_calling_to_ebnf")


def _ebnf_to_grammar_no_normalization(ebnf_string: str, root_rule_name: str = "root") -> Grammar:
    """The grammar of the EBNF text (gramask has no separate unnormalized form)."""
    return Grammar.from_ebnf(ebnf_string, root_rule_name=root_rule_name)


def _get_matcher_from_grammar_and_tokenizer_info(
        grammar: Union[Grammar, str], tokenizer_info: Optional[TokenizerInfo] = None,
        **kwargs: Any) -> GrammarMatcher:
    """A matcher of the grammar (a Grammar or EBNF text) for the vocabulary (default: an
    empty one, for matching text); kwargs go to GrammarMatcher."""
    if tokenizer_info is None:
        tokenizer_info = TokenizerInfo([])
    compiled = GrammarCompiler(tokenizer_info, cache_enabled=False).compile_grammar(grammar)
    return GrammarMatcher(compiled, **kwargs)


def _get_matcher_from_grammar(grammar: Union[Grammar, str], **kwargs: Any) -> GrammarMatcher:
    """A matcher of the grammar over an empty vocabulary, terminated once the text is
    complete: for accept_string."""
    return _get_matcher_from_grammar_and_tokenizer_info(
        grammar, None, terminate_without_stop_token=True, **kwargs)


def _is_grammar_accept_string(grammar: Union[Grammar, str], input_str: Union[str, bytes], *,
                              debug_print: bool = False, print_time: bool = False,
                              require_termination: bool = True) -> bool:
    """Whether the grammar (a Grammar or EBNF text) accepts the string: the whole of it
    when ``require_termination``, else a prefix of a sentence."""
    matcher = _get_matcher_from_grammar(grammar)
    start = time.monotonic_ns()
    accepted = matcher.accept_string(input_str)
    if print_time:
        print(f"Accepting {input_str!r}, result: {accepted}, "
              f"time: {(time.monotonic_ns() - start) / 1e3} us")
    if not accepted:
        return False
    return matcher.is_terminated() if require_termination else True


def _bitmask_row(bitmask: Any, index: int) -> Any:
    """One row of a bitmask as a numpy int32 array (sharing memory)."""
    import numpy as np
    arr = bitmask.numpy() if hasattr(bitmask, "numpy") and not isinstance(bitmask, np.ndarray) \
        else np.asarray(bitmask)
    if arr.dtype != np.int32:
        raise ValueError(f"the bitmask must be int32, not {arr.dtype}")
    return arr[index] if arr.ndim == 2 else arr


def _allowed_ids(bitmask: Any, vocab_size: int, index: int = 0) -> Any:
    import numpy as np
    row = np.ascontiguousarray(_bitmask_row(bitmask, index))
    bits = np.unpackbits(row.view(np.uint8), bitorder="little")[:vocab_size]
    return bits


def _get_masked_tokens_from_bitmask(bitmask: Any, vocab_size: int, index: int = 0) -> List[int]:
    """The ids below vocab_size whose bit is 0 in row ``index`` (the rejected tokens)."""
    import numpy as np
    return np.flatnonzero(_allowed_ids(bitmask, vocab_size, index) == 0).tolist()


def _is_single_token_bitmask(bitmask: Any, vocab_size: int, index: int = 0) -> Tuple[bool, int]:
    """(True, id) when exactly one token is allowed in row ``index``, else (False, -1)."""
    import numpy as np
    allowed = np.flatnonzero(_allowed_ids(bitmask, vocab_size, index))
    return (True, int(allowed[0])) if len(allowed) == 1 else (False, -1)


def bool_mask_to_bitmask(bool_mask: Any) -> Any:
    """A (batch, V) bool mask (True = allowed) as an int32 bitmask of (batch, ceil(V/32))
    words; the bits past V are 1. A torch tensor in, a torch tensor out."""
    import numpy as np
    is_torch = not isinstance(bool_mask, np.ndarray) and hasattr(bool_mask, "numpy")
    b = np.asarray(bool_mask.cpu().numpy() if is_torch else bool_mask, dtype=bool)
    pad = (-b.shape[1]) % 32
    if pad:
        b = np.concatenate([b, np.ones((b.shape[0], pad), dtype=bool)], axis=1)
    words = np.packbits(b, axis=1, bitorder="little").view(np.int32)
    if is_torch:
        import torch
        return torch.from_numpy(words.copy()).to(bool_mask.device)
    return words


def bitmask_to_bool_mask(bit_mask: Any, vocab_size: Optional[int] = None) -> Any:
    """An int32 bitmask as a (batch, vocab_size) bool mask (True = allowed)."""
    import numpy as np
    is_torch = not isinstance(bit_mask, np.ndarray) and hasattr(bit_mask, "numpy")
    arr = np.ascontiguousarray(bit_mask.cpu().numpy() if is_torch else bit_mask)
    if arr.dtype != np.int32:
        raise ValueError("bit_mask should be of type int32")
    if vocab_size is None:
        vocab_size = arr.shape[1] * 32
    if vocab_size > arr.shape[1] * 32:
        raise ValueError("vocab_size should be less than or equal to the size represented "
                         "by bit_mask")
    bits = np.unpackbits(arr.view(np.uint8), axis=1, bitorder="little")[:, :vocab_size]
    out = bits.astype(bool)
    if is_torch:
        import torch
        return torch.from_numpy(out)
    return out


def _traverse_draft_tree(retrieve_next_token: Any, retrieve_next_sibling: Any,
                         draft_tokens: Any, matcher: GrammarMatcher, bitmask: Any,
                         time_threshold: float = -1.0) -> bool:
    """:meth:`GrammarMatcher.traverse_draft_tree` as a function."""
    return matcher.traverse_draft_tree(retrieve_next_token, retrieve_next_sibling, draft_tokens,
                                       bitmask, time_threshold=time_threshold)


class GrammarFunctor:
    """XGrammar's grammar transformations print its internal forms; gramask's grammars
    have none of them, so each raises :class:`UnsupportedError`."""

    @staticmethod
    def _unsupported(grammar: Grammar) -> Grammar:
        raise _no_printed_form("GrammarFunctor")

    structure_normalizer = rule_inliner = byte_string_fuser = dead_code_eliminator = \
        lookahead_assertion_analyzer = grammar_optimizer = repetition_normalizer = _unsupported


def _generate_range_regex(start: Optional[int] = None, end: Optional[int] = None) -> str:
    raise _no_printed_form("_generate_range_regex (the regex XGrammar writes for an integer range)")


def _generate_float_regex(start: Optional[float] = None, end: Optional[float] = None) -> str:
    raise _no_printed_form("_generate_float_regex (the regex XGrammar writes for a number range)")
