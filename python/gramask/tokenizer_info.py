"""XGrammar's ``xgrammar.tokenizer_info`` module: :class:`VocabType` and how a vocabulary
of token strings is decoded into the raw bytes gramask matches.

A tokenizer's vocabulary lists tokens as strings in one of three encodings:

- ``RAW``: the string is the token's text (UTF-8), e.g. tiktoken-style vocabularies.
- ``BYTE_FALLBACK``: SentencePiece; ``"▁"`` stands for a space and ``"<0x0A>"`` for one
  byte (Llama 2, Gemma...).
- ``BYTE_LEVEL``: GPT-2's byte-to-character table; every byte is one printable character
  (``"Ġ"`` is a space; Llama 3, Qwen...).
"""

import enum
import json
import re
from typing import Dict, List, Optional, Sequence, Union


class VocabType(enum.IntEnum):
    """How a vocabulary's token strings encode bytes (values as XGrammar's)."""
    RAW = 0
    BYTE_FALLBACK = 1
    BYTE_LEVEL = 2


def _byte_level_table() -> Dict[str, int]:
    """GPT-2's byte-level alphabet: character -> byte. Printable Latin-1 characters stand
    for themselves; the other 68 bytes take the code points from U+0100 on, in order."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    table, shifted = {}, 0
    for b in range(256):
        if b in printable:
            table[chr(b)] = b
        else:
            table[chr(256 + shifted)] = b
            shifted += 1
    return table


_BYTE_LEVEL_TABLE = _byte_level_table()
_BYTE_LEVEL_CHARSET = frozenset(_BYTE_LEVEL_TABLE)
_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")

# Token texts taken as end-of-sequence when a vocabulary is given without stop_token_ids
# (the end tokens of common model families).
_STOP_TOKEN_TEXTS = ("</s>", "<|end_of_text|>", "<|eot_id|>", "<|endoftext|>", "<eos>",
                     "<|eos|>", "<end_of_turn>", "<|end▁of▁sentence|>", "<|im_end|>", "<|end|>",
                     "<|return|>", "<|eom_id|>")


def decode_token(token: Union[str, bytes], vocab_type: VocabType) -> bytes:
    """The raw bytes of one vocabulary entry under ``vocab_type``. Bytes are taken as
    they are for RAW, and as UTF-8 text of the encoding otherwise."""
    if isinstance(token, (bytes, bytearray, memoryview)):
        if vocab_type == VocabType.RAW:
            return bytes(token)
        token = bytes(token).decode("utf-8", errors="surrogateescape")
    if not isinstance(token, str):
        raise TypeError(f"a token is {type(token).__name__}, not str or bytes")
    if vocab_type == VocabType.BYTE_FALLBACK:
        m = _BYTE_PIECE.match(token)
        if m:
            return bytes([int(m.group(1), 16)])
        return token.replace("▁", " ").encode("utf-8", errors="surrogateescape")
    if vocab_type == VocabType.BYTE_LEVEL:
        try:
            return bytes(_BYTE_LEVEL_TABLE[c] for c in token)
        except KeyError:
            pass  # not byte-level text (an added token such as "<|im_start|> "): as written
    return token.encode("utf-8", errors="surrogateescape")


def detect_vocab_type(vocab: Dict[str, int]) -> Optional[VocabType]:
    """BYTE_FALLBACK when the vocabulary has all 256 ``<0xXX>`` pieces (they win over a
    byte-level alphabet a large multilingual vocabulary may also hold), BYTE_LEVEL when it
    has every character of GPT-2's byte alphabet, else None."""
    if all(f"<0x{b:02X}>" in vocab for b in range(256)):
        return VocabType.BYTE_FALLBACK
    if all(c in vocab for c in _BYTE_LEVEL_CHARSET):
        return VocabType.BYTE_LEVEL
    return None


def detect_stop_token_ids(encoded_vocab: Sequence[Union[str, bytes]]) -> List[int]:
    """The ids of tokens whose text is a known end-of-sequence token."""
    texts = set(_STOP_TOKEN_TEXTS) | {t.encode() for t in _STOP_TOKEN_TEXTS}
    return [i for i, t in enumerate(encoded_vocab) if isinstance(t, (str, bytes)) and t in texts]


def metadata_json(vocab_type: VocabType, vocab_size: int, add_prefix_space: bool,
                  stop_token_ids: Sequence[int]) -> str:
    """XGrammar's metadata string (``TokenizerInfo.dump_metadata``)."""
    return json.dumps({"vocab_type": int(vocab_type), "vocab_size": vocab_size,
                       "add_prefix_space": bool(add_prefix_space),
                       "stop_token_ids": list(stop_token_ids)}, separators=(",", ":"))




def __getattr__(name: str):
    # TokenizerInfo lives in .tokenizer, which imports this module.
    if name == "TokenizerInfo":
        from .tokenizer import TokenizerInfo
        return TokenizerInfo
    raise AttributeError(name)


__all__ = ["TokenizerInfo", "VocabType"]
