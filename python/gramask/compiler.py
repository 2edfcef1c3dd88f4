"""Compiling grammars for a vocabulary, with a cache."""

import json
import os
import threading
from typing import Any, Dict, Hashable, List, Optional, Tuple, Union

from . import _core
from ._handle import HandleOwner
from .grammar import Grammar, JSONSchema, PathLike, schema_text
from .tokenizer import TokenizerInfo


class CompiledGrammar(HandleOwner):
    """A grammar compiled for a vocabulary: everything needed to produce masks.

    Immutable (its lazily built tables are thread-safe) and shared by every
    :class:`GrammarMatcher` and thread. Save it with :meth:`save` and load it without
    the grammar or tokenizer files with :meth:`load`.
    """

    def __init__(self, handle: "_core.Compiled", grammar: Optional[Grammar] = None) -> None:
        self._handle = handle
        self._grammar = grammar

    @staticmethod
    def load(path: PathLike, *, eager: bool = False) -> "CompiledGrammar":
        """Loads a ``.gmc`` file written by :meth:`save` (or ``gramask compile``).
        A truncated, corrupt or other-version file raises :class:`FormatError`."""
        return CompiledGrammar(_core.compiled_load(path, eager=eager))

    def save(self, path: PathLike) -> None:
        """Writes the compiled grammar (with the tables built so far) to a file."""
        self._handle.save(path)

    @property
    def grammar(self) -> Optional[Grammar]:
        """The grammar it was compiled from (None when loaded from a file)."""
        return self._grammar

    @property
    def tokenizer_info(self) -> TokenizerInfo:
        """The vocabulary it was compiled for."""
        return TokenizerInfo._wrap(self._handle.vocab())

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


class GrammarCompiler:
    """Compiles grammars for one vocabulary, caching the results.

    The compile methods release the GIL, so threads can compile in parallel. The
    cache maps each source (text, file, bundled name, schema, with the options) to its
    :class:`CompiledGrammar`; compiling the same source again returns the cached
    object. Like XGrammar's ``GrammarCompiler``.
    """

    def __init__(self, tokenizer_info: TokenizerInfo, *, cache_enabled: bool = True,
                 eager: bool = False) -> None:
        """
        Args:
            tokenizer_info: the vocabulary to compile for.
            cache_enabled: keep compiled grammars for reuse.
            eager: build every token table at compile time (slower compile, steady
                mask times from the first step) instead of on first use.
        """
        if not isinstance(tokenizer_info, TokenizerInfo):
            raise TypeError("GrammarCompiler needs a gramask.TokenizerInfo")
        self._info = tokenizer_info
        self._cache_enabled = cache_enabled
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
        if self._cache_enabled:
            with self._lock:
                compiled = self._cache.setdefault(key, compiled)
        return compiled

    def compile_grammar(self, grammar: Union[Grammar, str], *, start: Optional[str] = None,
                        lark_conflicts: bool = False, lexer: str = "basic") -> CompiledGrammar:
        """Compiles a :class:`Grammar`, or Lark text (with ``start``, ``lark_conflicts``
        and ``lexer`` as in :meth:`Grammar.from_lark`)."""
        if isinstance(grammar, Grammar):
            # A Grammar object is its own cache key (by identity): it is immutable.
            return self._compiled(("grammar", grammar), lambda: grammar)
        if not isinstance(grammar, str):
            raise TypeError(f"compile_grammar takes a Grammar or Lark text, not {type(grammar).__name__}")
        return self._compiled(("lark", grammar, start, lark_conflicts, lexer),
                              lambda: Grammar.from_lark(grammar, start=start,
                                                        lark_conflicts=lark_conflicts,
                                                        lexer=lexer))

    def compile_lark(self, text: str, **options: Any) -> CompiledGrammar:
        """Compiles Lark text (options of :meth:`Grammar.from_lark`)."""
        key = ("lark", text, options.get("start"), bool(options.get("lark_conflicts")),
               options.get("name"), bool(options.get("no_file_imports")),
               options.get("lexer", "basic"))
        return self._compiled(key, lambda: Grammar.from_lark(text, **options))

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

    def compile_regex(self, pattern: str) -> CompiledGrammar:
        """Compiles one regex as the whole grammar."""
        return self._compiled(("regex", pattern), lambda: Grammar.from_regex(pattern))

    def compile_json_schema(self, schema: JSONSchema, **options: Any) -> CompiledGrammar:
        """Compiles a JSON Schema (a dict, a JSON string, or a Pydantic-style class), with
        the options of :meth:`Grammar.from_json_schema`."""
        text = schema_text(schema)
        return self._compiled(("json_schema", text, tuple(sorted(options.items()))),
                              lambda: Grammar.from_json_schema(text, **options))

    def compile_structural_tag(self, tag: Any, triggers: Optional[List[str]] = None
                               ) -> CompiledGrammar:
        """Compiles a structural tag (see :meth:`Grammar.from_structural_tag`)."""
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
