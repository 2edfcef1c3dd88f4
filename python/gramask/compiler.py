"""Compiling grammars for a vocabulary, with a cache."""

import json
import os
import threading
from typing import Any, Dict, Hashable, List, Optional, Tuple, Union

from . import _core
from ._handle import HandleOwner
from .errors import DeserializeFormatError, UnsupportedError
from .grammar import (Grammar, JSONSchema, PathLike, deserialized_json, gramask_lark,
                      schema_text, serialized_json)
from .tokenizer import TokenizerInfo


class CompiledGrammar(HandleOwner):
    """A grammar compiled for a vocabulary: everything needed to produce masks.

    Immutable (its lazily built tables are thread-safe) and shared by every
    :class:`GrammarMatcher` and thread. Save it with :meth:`save` and load it without
    the grammar or tokenizer files with :meth:`load`.
    """

    _info: Optional[TokenizerInfo] = None

    def __init__(self, handle: "_core.Compiled", grammar: Optional[Grammar] = None) -> None:
        self._handle = handle
        self._grammar = grammar
        self._restopped: Dict[Tuple[int, ...], "CompiledGrammar"] = {}

    @staticmethod
    def load(path: PathLike, *, eager: bool = False) -> "CompiledGrammar":
        """Loads a ``.gmc`` file written by :meth:`save` (or ``gramask compile``).
        A truncated, corrupt or other-version file raises :class:`FormatError`."""
        return CompiledGrammar(_core.compiled_load(path, eager=eager))

    def save(self, path: PathLike) -> None:
        """Writes the compiled grammar (with the tables built so far) to a file."""
        self._handle.save(path)

    def to_bytes(self) -> bytes:
        """The bytes :meth:`save` writes (format, checks and all), in memory: to send the
        compiled grammar to another process, which loads it with :meth:`from_bytes`
        without the grammar or tokenizer files. Pickling uses them too."""
        return self._handle.to_bytes()

    @staticmethod
    def from_bytes(data: Union[bytes, bytearray, memoryview], *,
                   eager: bool = False) -> "CompiledGrammar":
        """The compiled grammar :meth:`to_bytes` (or :meth:`save`) wrote. Truncated,
        corrupt or other-version bytes raise :class:`FormatError` saying which."""
        return CompiledGrammar(_core.compiled_from_bytes(data, eager=eager))

    def __reduce__(self) -> Tuple[Any, ...]:
        # The compiled tables as bytes (the vocabulary is inside them); the grammar
        # when it can be rebuilt (override_stop_tokens needs it) and the vocabulary's
        # Python-side metadata (vocab_type...), not its tokens a second time.
        grammar = self._grammar if self._grammar is not None and \
            self._grammar._spec is not None else None
        info = None
        if self._info is not None:
            info = {k: v for k, v in self._info.__dict__.items() if k != "_handle"}
        return (_unpickle_compiled, (self.to_bytes(), grammar, info))

    @property
    def grammar(self) -> Optional[Grammar]:
        """The grammar it was compiled from (None when loaded from a file)."""
        return self._grammar

    @property
    def tokenizer_info(self) -> TokenizerInfo:
        """The vocabulary it was compiled for."""
        return self._info if self._info is not None else TokenizerInfo._wrap(self._handle.vocab())

    def serialize_json(self) -> str:
        """The compiled grammar as JSON text: its grammar's and vocabulary's serialized
        forms (:meth:`deserialize_json` compiles it again; the token tables are rebuilt,
        lazily, as after any compile; :meth:`save` keeps them)."""
        if self._grammar is None or self._grammar._spec is None:
            raise UnsupportedError("this compiled grammar cannot be serialized (it was loaded "
                                   "from a file or its grammar was not built from text)")
        return serialized_json("compiled_grammar", {
            "grammar": json.loads(self._grammar.serialize_json()),
            "tokenizer_info": json.loads(self.tokenizer_info.serialize_json())})

    @staticmethod
    def deserialize_json(json_string: str, tokenizer_info: TokenizerInfo) -> "CompiledGrammar":
        """The compiled grammar :meth:`serialize_json` wrote, for ``tokenizer_info`` (which
        must be the vocabulary it was compiled for: DeserializeFormatError otherwise)."""
        doc = deserialized_json(json_string, "compiled_grammar")
        try:
            grammar, vocab = doc["grammar"], doc["tokenizer_info"]
        except KeyError as e:
            raise DeserializeFormatError(f"a serialized compiled grammar lacks {e}") from None
        if vocab != json.loads(tokenizer_info.serialize_json()):
            raise DeserializeFormatError("the compiled grammar was serialized for another "
                                         "vocabulary than tokenizer_info")
        g = Grammar.deserialize_json(json.dumps(grammar))
        compiled = CompiledGrammar(_core.compile(g._handle, tokenizer_info._handle), g)
        compiled._info = tokenizer_info
        return compiled

    def _with_stop_tokens(self, stop_token_ids: List[int]) -> "CompiledGrammar":
        """This grammar compiled for the same vocabulary with other EOS ids
        (GrammarMatcher's override_stop_tokens), kept for the next matcher."""
        key = tuple(sorted(set(stop_token_ids)))
        if list(key) == self.tokenizer_info.stop_token_ids:
            return self
        hit = self._restopped.get(key)
        if hit is not None:
            return hit
        if self._grammar is None:
            raise UnsupportedError("override_stop_tokens needs the grammar (this compiled "
                                   "grammar was loaded from a file)")
        info = self.tokenizer_info._with_stop_tokens(list(key))
        compiled = CompiledGrammar(_core.compile(self._grammar._handle, info._handle),
                                   self._grammar)
        compiled._info = info
        return self._restopped.setdefault(key, compiled)

    @property
    def vocab_size(self) -> int:
        """Token ids: the width of a mask in bits."""
        return self._handle.vocab_size

    @property
    def mask_words(self) -> int:
        """int32 words of one bitmask row: ceil(vocab_size / 32)."""
        return self._handle.mask_words

    @property
    def stats(self) -> Dict[str, int]:
        """Sizes of the compiled tables (lexer and LR states, token classes, bytes)."""
        return self._handle.stats()

    @property
    def memory_size_bytes(self) -> int:
        """All memory held by the compiled grammar."""
        return self._handle.stats()["memory_bytes"]

    def __repr__(self) -> str:
        src = repr(self._grammar) if self._grammar else "loaded"
        try:
            return f"CompiledGrammar({src}, vocab_size={self.vocab_size})"
        except ValueError:
            return f"CompiledGrammar({src}, <closed>)"


def _unpickle_compiled(data: bytes, grammar: Optional[Grammar],
                       info: Optional[Dict[str, Any]]) -> CompiledGrammar:
    """A pickled :class:`CompiledGrammar` (its ``__reduce__``)."""
    compiled = CompiledGrammar(_core.compiled_from_bytes(data), grammar)
    if info is not None:
        tok = TokenizerInfo._wrap(compiled._handle.vocab())
        tok.__dict__.update(info)
        compiled._info = tok
    return compiled


class GrammarCompiler:
    """Compiles grammars for one vocabulary, caching the results.

    The compile methods release the GIL, so threads can compile in parallel. The
    cache maps each source (text, file, bundled name, schema, with the options) to its
    :class:`CompiledGrammar`; compiling the same source again returns the cached
    object. Like XGrammar's ``GrammarCompiler``.
    """

    def __init__(self, tokenizer_info: TokenizerInfo, *, max_threads: int = 8,
                 cache_enabled: bool = True, cache_limit_bytes: int = -1,
                 eager: bool = False) -> None:
        """
        Args:
            tokenizer_info: the vocabulary to compile for.
            max_threads: XGrammar's compile thread count; gramask compiles on the
                calling thread (compile methods release the GIL: threads compile in
                parallel), so it is checked and otherwise unused.
            cache_enabled: keep compiled grammars for reuse.
            cache_limit_bytes: when the cached grammars hold more memory than this, the
                least recently compiled ones are dropped (-1: no limit).
            eager: build every token table at compile time (slower compile, steady
                mask times from the first step) instead of on first use.
        """
        if not isinstance(tokenizer_info, TokenizerInfo):
            raise TypeError("GrammarCompiler needs a gramask.TokenizerInfo")
        if not isinstance(max_threads, int) or max_threads < 1:
            raise ValueError(f"max_threads must be a positive integer, not {max_threads!r}")
        self._info = tokenizer_info
        self._cache_enabled = cache_enabled
        self._cache_limit = cache_limit_bytes
        self._eager = eager
        self._cache: Dict[Hashable, CompiledGrammar] = {}
        self._lock = threading.Lock()

    @property
    def tokenizer_info(self) -> TokenizerInfo:
        return self._info

    def _compiled(self, key: Hashable, make_grammar: Any) -> CompiledGrammar:
        if self._cache_enabled:
            with self._lock:
                hit = self._cache.get(key)
            if hit is not None:
                return hit
        grammar = make_grammar()
        compiled = CompiledGrammar(_core.compile(grammar._handle, self._info._handle,
                                                 eager=self._eager), grammar)
        compiled._info = self._info
        if self._cache_enabled:
            with self._lock:
                compiled = self._cache.setdefault(key, compiled)
                self._evict()
        return compiled

    def _evict(self) -> None:
        """Drops the oldest entries past cache_limit_bytes (the lock is held)."""
        if self._cache_limit < 0:
            return
        sizes = [(k, c.memory_size_bytes) for k, c in self._cache.items()]
        total = sum(n for _, n in sizes)
        for k, n in sizes:
            if total <= self._cache_limit:
                break
            del self._cache[k]
            total -= n

    def compile_grammar(self, grammar: Union[Grammar, str], *,
                        root_rule_name: str = "root") -> CompiledGrammar:
        """Compiles a :class:`Grammar`, or XGrammar's EBNF text with its root rule (as
        XGrammar; Lark text goes to :meth:`compile_lark`)."""
        if isinstance(grammar, Grammar):
            # A Grammar object is its own cache key (by identity): it is immutable.
            return self._compiled(("grammar", grammar), lambda: grammar)
        if not isinstance(grammar, str):
            raise TypeError(f"compile_grammar takes a Grammar or EBNF text, not {type(grammar).__name__}")
        return self.compile_ebnf(grammar, root_rule_name=root_rule_name)

    def compile_lark(self, text: str, **options: Any) -> CompiledGrammar:
        """Compiles Lark text (options of :meth:`Grammar.from_lark`)."""
        key = ("lark", text, options.get("start"), bool(options.get("lark_conflicts")),
               options.get("name"), bool(options.get("no_file_imports")),
               options.get("lexer", "basic"))
        return self._compiled(key, lambda: gramask_lark(text, **options))

    def compile_file(self, path: PathLike, **options: Any) -> CompiledGrammar:
        """Compiles a grammar file (options of :meth:`Grammar.from_file`). Cached by path
        and modification time."""
        st = os.stat(path)
        key = ("file", os.path.abspath(os.fspath(path)), st.st_mtime_ns, st.st_size,
               tuple(sorted(options.items())))
        return self._compiled(key, lambda: Grammar.from_file(path, **options))

    def compile_bundled(self, name: str, *, start: Optional[str] = None,
                        lexer: str = "basic") -> CompiledGrammar:
        """Compiles a bundled grammar (``json``, ``python``, ``go``, ``java``...); ``lexer``
        as in :meth:`Grammar.from_lark`."""
        return self._compiled(("bundled", name, start, lexer),
                              lambda: Grammar.bundled(name, start=start, lexer=lexer))

    def compile_builtin_json_grammar(self) -> CompiledGrammar:
        """Compiles the bundled JSON grammar, as XGrammar's."""
        return self.compile_bundled("json")

    def compile_gbnf(self, text: str, *, root_rule_name: str = "root") -> CompiledGrammar:
        """Compiles GBNF text."""
        return self._compiled(("gbnf", text, root_rule_name),
                              lambda: Grammar.from_gbnf(text, root_rule_name=root_rule_name))

    def compile_ebnf(self, text: str, *, root_rule_name: str = "root") -> CompiledGrammar:
        """Compiles XGrammar-style EBNF text."""
        return self._compiled(("ebnf", text, root_rule_name),
                              lambda: Grammar.from_ebnf(text, root_rule_name=root_rule_name))

    def compile_regex(self, regex: str) -> CompiledGrammar:
        """Compiles one regex as the whole grammar."""
        return self._compiled(("regex", regex), lambda: Grammar.from_regex(regex))

    def compile_json_schema(self, schema: JSONSchema, *, any_whitespace: bool = True,
                            indent: Optional[int] = None,
                            separators: Optional[Tuple[str, str]] = None,
                            strict_mode: bool = True,
                            max_whitespace_cnt: Optional[int] = None,
                            **options: Any) -> CompiledGrammar:
        """Compiles a JSON Schema (a dict, a JSON string, or a Pydantic-style class) with
        XGrammar's arguments and defaults and gramask's (the options of
        :meth:`Grammar.from_json_schema`)."""
        text = schema_text(schema)
        options.update(any_whitespace=any_whitespace, indent=indent,
                       separators=tuple(separators) if separators else None,
                       strict_mode=strict_mode, max_whitespace_cnt=max_whitespace_cnt)
        options.pop("print_converted_ebnf", None)
        return self._compiled(("json_schema", text, tuple(sorted(options.items()))),
                              lambda: Grammar.from_json_schema(text, **options))

    def compile_structural_tag(self, structural_tag: Any,
                               triggers: Optional[List[str]] = None) -> CompiledGrammar:
        """Compiles a structural tag (see :meth:`Grammar.from_structural_tag`)."""
        tag = structural_tag
        if hasattr(tag, "model_dump_json"):
            tag = json.loads(tag.model_dump_json())
            # builtin_structural_tag's marker texts that are special tokens here
            from .builtin_structural_tag import with_special_tokens
            tag = with_special_tokens(structural_tag, tag, self._info)
        if triggers is None:
            # token-level formats name tokens by id: their texts resolved here (stag_tokens.py)
            from .stag_tokens import resolve_token_texts
            tag = resolve_token_texts(tag, self._info)
        key = ("structural_tag", json.dumps(tag, sort_keys=True, default=str),
               None if triggers is None else tuple(triggers))
        return self._compiled(key, lambda: Grammar.from_structural_tag(tag, triggers))

    def compile_tools(self, tools: Any, format: str, **options: Any) -> CompiledGrammar:
        """Compiles the grammar of an assistant turn calling tools (the options of
        :meth:`Grammar.from_tools`). Compiling another tool set for the same tokenizer
        reuses the token masks of what the sets share (the cross-grammar cache)."""
        key = ("tools", json.dumps(tools, sort_keys=True) if not isinstance(tools, str) else tools,
               format, json.dumps(options, sort_keys=True, default=str))
        return self._compiled(key, lambda: Grammar.from_tools(tools, format, **options))

    def clear_cache(self) -> None:
        """Forgets every cached compiled grammar (those in use stay valid)."""
        with self._lock:
            self._cache.clear()

    @property
    def cache_size(self) -> int:
        """Number of cached compiled grammars."""
        with self._lock:
            return len(self._cache)

    def get_cache_size_bytes(self) -> int:
        """Memory held by the cached compiled grammars."""
        with self._lock:
            entries = list(self._cache.values())
        return sum(c.memory_size_bytes for c in entries)
