"""Tokenizer information: the vocabulary a grammar is compiled for."""

import os
import tempfile
from typing import Any, List, Optional, Sequence, Union

from . import _core
from ._handle import HandleOwner

PathLike = Union[str, "os.PathLike[str]"]


class TokenizerInfo(HandleOwner):
    """A tokenizer's vocabulary as gramask sees it: token id -> raw bytes, EOS ids, and
    which ids are special (never allowed as text).

    Build it from a Hugging Face ``tokenizer.json`` (:meth:`from_file`), from a
    transformers fast tokenizer object (:meth:`from_huggingface`), or from the engine's
    own table of token byte strings (the constructor). Immutable; share one between
    compilers and threads. Like XGrammar's ``TokenizerInfo``.
    """

    def __init__(self, encoded_vocab: Sequence[Union[bytes, str]], *,
                 stop_token_ids: Optional[Union[int, Sequence[int]]] = None,
                 special_token_ids: Optional[Sequence[int]] = None,
                 vocab_size: Optional[int] = None) -> None:
        """A vocabulary from the raw bytes of every token, in id order.

        Args:
            encoded_vocab: token i's bytes at index i (a ``str`` is taken as UTF-8).
            stop_token_ids: the end-of-sequence id(s); required (a mask allows them
                exactly when the output is complete).
            special_token_ids: ids never allowed as text (control tokens).
            vocab_size: the model's vocabulary size when larger than the tokenizer's
                (padding ids, never allowed).
        """
        if stop_token_ids is None:
            raise ValueError("TokenizerInfo needs stop_token_ids (the EOS id or ids)")
        if isinstance(stop_token_ids, int):
            stop_token_ids = [stop_token_ids]
        tokens = []
        for i, t in enumerate(encoded_vocab):
            if isinstance(t, str):
                t = t.encode("utf-8")
            elif isinstance(t, (bytearray, memoryview)):
                t = bytes(t)
            elif not isinstance(t, bytes):
                raise TypeError(f"token {i} is {type(t).__name__}, not bytes or str")
            tokens.append(t)
        special = None
        if special_token_ids is not None:
            special = [False] * len(tokens)
            for i in special_token_ids:
                if not 0 <= i < len(tokens):
                    raise ValueError(f"special token id {i} is out of range "
                                     f"(vocabulary of {len(tokens)} tokens)")
                special[i] = True
        self._handle = _core.vocab_from_tokens(tokens, list(stop_token_ids), special, vocab_size)

    @classmethod
    def _wrap(cls, handle: "_core.Vocab") -> "TokenizerInfo":
        self = cls.__new__(cls)
        self._handle = handle
        return self

    @classmethod
    def from_file(cls, path: PathLike, *, vocab_size: Optional[int] = None,
                  stop_token_ids: Optional[Sequence[int]] = None) -> "TokenizerInfo":
        """Loads a Hugging Face ``tokenizer.json``, or a directory holding one (its
        ``tokenizer_config.json`` gives the EOS token). ``stop_token_ids`` adds EOS ids;
        ``vocab_size`` pads to the model's vocabulary size. Raises :class:`FileError` or
        :class:`FormatError` naming the file and what is wrong."""
        return cls._wrap(_core.vocab_from_file(path, vocab_size, stop_token_ids))

    @classmethod
    def from_huggingface(cls, tokenizer: Any, *, vocab_size: Optional[int] = None,
                         stop_token_ids: Optional[Sequence[int]] = None) -> "TokenizerInfo":
        """From a transformers fast tokenizer (anything with
        ``backend_tokenizer.to_str()``, the tokenizer.json text), as XGrammar's
        ``TokenizerInfo.from_huggingface``. The EOS ids are ``stop_token_ids`` if given,
        else the tokenizer's ``eos_token_id``."""
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None or not hasattr(backend, "to_str"):
            raise TypeError("from_huggingface needs a fast tokenizer (with backend_tokenizer); "
                            "for others pass TokenizerInfo(encoded_vocab, stop_token_ids=...)")
        if stop_token_ids is None:
            eos = getattr(tokenizer, "eos_token_id", None)
            if eos is None:
                raise ValueError("the tokenizer has no eos_token_id: pass stop_token_ids")
            stop_token_ids = [eos] if isinstance(eos, int) else list(eos)
        with tempfile.TemporaryDirectory(prefix="gramask-") as d:
            path = os.path.join(d, "tokenizer.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(backend.to_str())
            return cls.from_file(path, vocab_size=vocab_size, stop_token_ids=stop_token_ids)

    @property
    def vocab_size(self) -> int:
        """Number of token ids: the width of a mask in bits."""
        return self._handle.size

    @property
    def stop_token_ids(self) -> List[int]:
        """The end-of-sequence ids, sorted."""
        return self._handle.eos_ids

    def token_bytes(self, token_id: int) -> bytes:
        """The raw bytes of one token (empty for padding ids)."""
        return self._handle.token(token_id)

    @property
    def decoded_vocab(self) -> List[bytes]:
        """Every token's raw bytes, in id order."""
        return [self._handle.token(i) for i in range(self._handle.size)]

    def decode(self, token_ids: Sequence[int]) -> bytes:
        """The raw bytes of a sequence of token ids, joined (what a grammar sees)."""
        return self._handle.decode(token_ids)

    def encode(self, text: Union[str, bytes], *, special_as_text: bool = False) -> List[int]:
        """Token ids of a text exactly as Hugging Face tokenizers encodes it with the
        tokenizer.json this was loaded from (added and special tokens, normalizer,
        pre-tokenizer, BPE; no BOS/EOS added). ``special_as_text``: the text of special
        tokens is encoded as plain text. Raises :class:`UnsupportedError` for tokenizers
        gramask cannot encode (and for vocabularies not loaded from a file)."""
        return self._handle.encode(text, special_as_text=special_as_text)

    def __repr__(self) -> str:
        try:
            return f"TokenizerInfo(vocab_size={self.vocab_size}, stop_token_ids={self.stop_token_ids})"
        except ValueError:
            return "TokenizerInfo(<closed>)"
