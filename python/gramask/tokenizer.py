"""Tokenizer information: the vocabulary a grammar is compiled for."""

import json
import os
import tempfile
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _core
from ._handle import HandleOwner
from .tokenizer_info import (VocabType, decode_token, detect_stop_token_ids, detect_vocab_type,
                             metadata_json)

PathLike = Union[str, "os.PathLike[str]"]


class TokenizerInfo(HandleOwner):
    """A tokenizer's vocabulary as gramask sees it: token id -> raw bytes, EOS ids, and
    which ids are special (never allowed as text).

    Build it from a Hugging Face ``tokenizer.json`` (:meth:`from_file`), from a
    transformers fast tokenizer object (:meth:`from_huggingface`), or from the engine's
    own table of token byte strings (the constructor). Immutable; share one between
    compilers and threads. Like XGrammar's ``TokenizerInfo``.
    """

    def __init__(self, encoded_vocab: Sequence[Union[bytes, str]],
                 vocab_type: "VocabType" = VocabType.RAW, *,
                 vocab_size: Optional[int] = None,
                 stop_token_ids: Optional[Union[int, Sequence[int]]] = None,
                 add_prefix_space: bool = False,
                 special_token_ids: Optional[Sequence[int]] = None) -> None:
        """A vocabulary from every token's string or bytes, in id order (XGrammar's
        constructor).

        Args:
            encoded_vocab: token i at index i, as the tokenizer's vocabulary lists it;
                decoded to raw bytes as ``vocab_type`` says (RAW: a ``str`` is its UTF-8
                text and ``bytes`` are taken as they are). May be empty: a vocabulary for
                matching text only (``accept_string``).
            vocab_type: :class:`VocabType` of the strings.
            vocab_size: the model's vocabulary size when larger than the tokenizer's
                (padding ids, never allowed).
            stop_token_ids: the end-of-sequence id(s); default: the tokens whose text
                is a common end token (``</s>``, ``<|endoftext|>``, ``<|eot_id|>``...).
            add_prefix_space: whether the tokenizer prepends a space (kept as metadata).
            special_token_ids: ids never allowed as text (control tokens); default: the
                tokens whose bytes are empty, as XGrammar.
        """
        vocab_type = VocabType(vocab_type)
        if stop_token_ids is None:
            stop_token_ids = detect_stop_token_ids(encoded_vocab)
            if not stop_token_ids and len(encoded_vocab):
                warnings.warn("TokenizerInfo: no stop token given and none of the common end "
                              "tokens (</s>, <|endoftext|>, <|eot_id|>...) is in the vocabulary: "
                              "no output can end with a token; pass stop_token_ids",
                              stacklevel=2)
        elif isinstance(stop_token_ids, int):
            stop_token_ids = [stop_token_ids]
        tokens = []
        for i, t in enumerate(encoded_vocab):
            if not isinstance(t, (str, bytes, bytearray, memoryview)):
                raise TypeError(f"token {i} is {type(t).__name__}, not bytes or str")
            tokens.append(decode_token(t, vocab_type))
        if special_token_ids is None:
            special_token_ids = [i for i, t in enumerate(tokens) if not t]
        special = [False] * len(tokens)
        for i in special_token_ids:
            if not 0 <= i < len(tokens):
                raise ValueError(f"special token id {i} is out of range "
                                 f"(vocabulary of {len(tokens)} tokens)")
            special[i] = True
        self._vocab_type = vocab_type
        self._special_ids = sorted(set(special_token_ids))
        self._add_prefix_space = bool(add_prefix_space)
        self._empty = not tokens and not vocab_size
        if self._empty:
            # The C library needs one id: an empty token that is never allowed stands in,
            # and vocab_size says 0.
            tokens, special = [b""], [True]
        # The caller chose the stop ids (given, or XGrammar's detection, which warns above):
        # none is then a vocabulary for matching text, as in XGrammar, not a silent loss of
        # EOS as in a tokenizer.json read without its configs (from_file).
        self._stop_tokens_chosen = True
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
        :class:`FormatError` naming the file and what is wrong. Every object of
        ``tokenizer.json`` takes exactly the keys Hugging Face's tokenizers writes for its
        type: an unknown key is a :class:`FormatError` naming its path.
        ``tokenizer_config.json`` and ``generation_config.json`` are free-form (models
        add their own keys, which are ignored); the keys read there (``eos_token``,
        ``added_tokens_decoder``, ``eos_token_id``) are type-checked."""
        return cls._wrap(_core.vocab_from_file(path, vocab_size, stop_token_ids))

    @classmethod
    def from_huggingface(cls, tokenizer: Any, *, vocab_size: Optional[int] = None,
                         stop_token_ids: Optional[Union[int, Sequence[int]]] = None
                         ) -> "TokenizerInfo":
        """From a transformers fast tokenizer (anything with
        ``backend_tokenizer.to_str()``, the tokenizer.json text), as XGrammar's
        ``TokenizerInfo.from_huggingface``. The EOS ids are ``stop_token_ids`` if given,
        else the tokenizer's ``eos_token_id``, else the ids of common end tokens in its
        vocabulary. :attr:`vocab_type` comes from ``get_vocab()`` and
        :attr:`add_prefix_space` from the tokenizer's normalizer and pre-tokenizer."""
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is None or not hasattr(backend, "to_str"):
            raise TypeError("from_huggingface needs a fast tokenizer (with backend_tokenizer); "
                            "for others pass TokenizerInfo(encoded_vocab, stop_token_ids=...)")
        text = backend.to_str()
        vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
        if isinstance(stop_token_ids, int):
            stop_token_ids = [stop_token_ids]
        if stop_token_ids is None:
            eos = getattr(tokenizer, "eos_token_id", None)
            if eos is not None:
                stop_token_ids = [eos] if isinstance(eos, int) else list(eos)
            else:
                by_id = sorted(vocab.items(), key=lambda kv: kv[1])
                found = detect_stop_token_ids([t for t, _ in by_id])
                stop_token_ids = [by_id[i][1] for i in found]
            if not stop_token_ids:
                raise ValueError("the tokenizer has no eos_token_id and no known end token: "
                                 "pass stop_token_ids")
        # The vocabulary reads the rest of tokenizer.json (merges, normalizer) on its first
        # encode(): the file lives as long as the TokenizerInfo (removed with it).
        tmp = tempfile.TemporaryDirectory(prefix="gramask-")
        path = os.path.join(tmp.name, "tokenizer.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            info = cls.from_file(path, vocab_size=vocab_size, stop_token_ids=stop_token_ids)
        except BaseException:
            tmp.cleanup()
            raise
        info._tokenizer_dir = tmp
        info._vocab_type = detect_vocab_type(vocab) or VocabType.RAW
        info._add_prefix_space = _adds_prefix_space(text)
        return info

    @property
    def vocab_size(self) -> int:
        """Number of token ids: the width of a mask in bits."""
        return 0 if self._empty else self._handle.size

    _vocab_type = VocabType.RAW
    _add_prefix_space = False
    _empty = False
    _special_ids: Sequence[int] = ()

    @property
    def vocab_type(self) -> VocabType:
        """How the vocabulary's strings encode bytes (RAW for vocabularies loaded from
        a file or built from bytes)."""
        return self._vocab_type

    @property
    def add_prefix_space(self) -> bool:
        """Whether the tokenizer prepends a space to the text it encodes."""
        return self._add_prefix_space

    prepend_space_in_tokenization = add_prefix_space

    @property
    def special_token_ids(self) -> List[int]:
        """Ids never allowed as text."""
        return list(self._special_ids)

    def dump_metadata(self) -> str:
        """XGrammar's metadata JSON: vocab_type, vocab_size, add_prefix_space,
        stop_token_ids; :meth:`from_vocab_and_metadata` reads it back."""
        return metadata_json(self.vocab_type, self.vocab_size, self.add_prefix_space,
                             self.stop_token_ids)

    @staticmethod
    def from_vocab_and_metadata(encoded_vocab: Sequence[Union[bytes, str]],
                                metadata: str) -> "TokenizerInfo":
        """A vocabulary from its strings and :meth:`dump_metadata`'s JSON."""
        meta = json.loads(metadata)
        # prepend_space_in_tokenization: XGrammar's older name of add_prefix_space, which
        # metadata written by its earlier versions (and its own tests) still carry
        known = ("vocab_type", "vocab_size", "add_prefix_space", "stop_token_ids",
                 "prepend_space_in_tokenization")
        unknown = [k for k in meta if k not in known]
        if unknown:
            raise ValueError(f"/{unknown[0]}: unknown key {unknown[0]!r} in the tokenizer "
                             "metadata (dump_metadata writes vocab_type, vocab_size, "
                             "add_prefix_space, stop_token_ids)")
        old = meta.get("prepend_space_in_tokenization")
        prefix = meta.get("add_prefix_space", old if old is not None else False)
        if old is not None and bool(old) != bool(prefix):
            raise ValueError("the tokenizer metadata's add_prefix_space and its older name "
                             "prepend_space_in_tokenization disagree")
        return TokenizerInfo(encoded_vocab, VocabType(meta["vocab_type"]),
                             vocab_size=meta.get("vocab_size"),
                             stop_token_ids=meta.get("stop_token_ids"),
                             add_prefix_space=prefix)

    def serialize_json(self) -> str:
        """The vocabulary as JSON text (every token's bytes and the metadata), which
        :meth:`deserialize_json` reads back."""
        from .grammar import serialized_json
        return serialized_json("tokenizer_info", {
            "decoded_vocab": [t.hex() for t in self.decoded_vocab] if not self._empty else [],
            "vocab_type": int(self.vocab_type), "add_prefix_space": self.add_prefix_space,
            "stop_token_ids": self.stop_token_ids, "special_token_ids": self.special_token_ids,
            "vocab_size": self.vocab_size})

    @staticmethod
    def deserialize_json(json_string: str) -> "TokenizerInfo":
        """The vocabulary :meth:`serialize_json` wrote."""
        from .errors import DeserializeFormatError
        from .grammar import deserialized_json
        doc = deserialized_json(json_string, "tokenizer_info")
        try:
            tokens = [bytes.fromhex(t) for t in doc["decoded_vocab"]]
            info = TokenizerInfo(tokens, stop_token_ids=doc["stop_token_ids"],
                                 special_token_ids=doc["special_token_ids"],
                                 vocab_size=doc["vocab_size"] or None)
            info._vocab_type = VocabType(doc["vocab_type"])
            info._add_prefix_space = bool(doc["add_prefix_space"])
        except (KeyError, TypeError, ValueError) as e:
            raise DeserializeFormatError(f"a serialized tokenizer info lacks or mistypes {e}") from None
        return info

    def __getstate__(self) -> Dict[str, Any]:
        """Pickling: the vocabulary exactly as the C library holds it (token bytes,
        special flags, EOS ids, padding), as bytes, with the Python-side metadata. An
        unpickled vocabulary has no tokenizer file: :meth:`encode` needs the original."""
        state = dict(self.__dict__)
        state["_handle"] = self._handle.to_bytes()
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state = dict(state)
        handle = _core.vocab_from_bytes(state.pop("_handle"))
        self.__dict__.update(state)
        self._handle = handle

    def _with_stop_tokens(self, stop_token_ids: List[int]) -> "TokenizerInfo":
        """The same vocabulary with other EOS ids."""
        info = TokenizerInfo(self.decoded_vocab if not self._empty else [],
                             stop_token_ids=stop_token_ids,
                             special_token_ids=self.special_token_ids,
                             vocab_size=self.vocab_size or None)
        info._vocab_type = self._vocab_type
        info._add_prefix_space = self._add_prefix_space
        return info

    @staticmethod
    def _detect_vocab_type_from_vocab(vocab: Dict[str, int]) -> Optional[VocabType]:
        """BYTE_FALLBACK, BYTE_LEVEL or None (a plain-text vocabulary), from the token
        strings of a Hugging Face ``get_vocab()``."""
        return detect_vocab_type(vocab)

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


def _adds_prefix_space(tokenizer_json: str) -> bool:
    """Whether a tokenizer.json prepends a space to the text: a normalizer that prepends
    "▁" (Llama 2) or a Metaspace / ByteLevel pre-tokenizer with add_prefix_space."""
    try:
        doc = json.loads(tokenizer_json)
    except ValueError:
        return False

    def steps(node: Any) -> List[Dict[str, Any]]:
        if not isinstance(node, dict):
            return []
        inner = node.get("normalizers") or node.get("pretokenizers")
        return [s for n in inner for s in steps(n)] if isinstance(inner, list) else [node]

    for step in steps(doc.get("normalizer")):
        if step.get("type") == "Prepend" and step.get("prepend") in ("▁", " "):
            return True
    for step in steps(doc.get("pre_tokenizer")):
        if step.get("type") == "Metaspace" and (step.get("add_prefix_space")
                                                or step.get("prepend_scheme") in ("always", "first")):
            return True
        if step.get("type") == "ByteLevel" and step.get("add_prefix_space"):
            return True
    return False
