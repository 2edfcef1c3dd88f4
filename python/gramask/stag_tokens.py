"""Token texts in a structural tag's token-level formats, resolved to ids.

XGrammar's token-level formats (``exclude_token``, ``any_tokens``,
``token_triggered_tags``, ``token_dispatch``) name tokens by id or by text; a
text is the first token of the vocabulary whose decoded text it is, so it
needs the tokenizer. The C compiler has no vocabulary (it takes ids, note
[token formats] in dispatch/stag_token.c): ``compile_structural_tag``
resolves the texts here first, as XGrammar's compiler does. Without a
token-level format a ``{"type": "token"}`` keeps its text (gramask's special
token reference, resolved when the grammar meets the vocabulary)."""
import json
from typing import Any, Dict, Optional

from .errors import FormatError

_LEVEL = ("exclude_token", "any_tokens", "token_triggered_tags", "token_dispatch")
_LISTS = ("exclude_tokens", "trigger_tokens")


def _has_token_level(node: Any) -> bool:
    if isinstance(node, dict):
        if node.get("type") in _LEVEL:
            return True
        return any(_has_token_level(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_token_level(v) for v in node)
    return False


class _Vocab:
    """Text -> first id, built on first use (a large vocabulary costs one pass)."""

    def __init__(self, info: Any) -> None:
        self._info = info
        self._ids: Optional[Dict[bytes, int]] = None

    def id(self, text: str) -> int:
        if self._ids is None:
            self._ids = {}
            for i, b in enumerate(self._info.decoded_vocab if self._info is not None else []):
                self._ids.setdefault(bytes(b), i)
        got = self._ids.get(text.encode("utf-8"))
        if got is None:
            raise FormatError(f'Invalid structural tag error: Token string "{text}" not found '
                              "in vocabulary")
        return got


def _resolve(node: Any, vocab: _Vocab) -> Any:
    if isinstance(node, list):
        return [_resolve(v, vocab) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k in _LISTS and isinstance(v, list):
            out[k] = [vocab.id(x) if isinstance(x, str) and x else x for x in v]
        elif k == "token" and node.get("type") == "token" and isinstance(v, str) and v:
            out[k] = vocab.id(v)
        elif k == "rules" and node.get("type") == "token_dispatch" and isinstance(v, list):
            out[k] = [[vocab.id(r[0]), _resolve(r[1], vocab)]
                      if isinstance(r, list) and len(r) == 2 and isinstance(r[0], str) and r[0]
                      else _resolve(r, vocab) for r in v]
        else:
            out[k] = _resolve(v, vocab)
    return out


def resolve_token_texts(tag: Any, tokenizer_info: Any) -> Any:
    """The structural tag (a dict or JSON text) with the token texts of its token-level
    formats as the ids of tokenizer_info's vocabulary; unchanged without such formats."""
    doc = tag
    if isinstance(tag, str):
        try:
            doc = json.loads(tag)
        except ValueError:
            return tag  # the C parser reports where the JSON is wrong
    if not _has_token_level(doc):
        return tag
    return _resolve(doc, _Vocab(tokenizer_info))
