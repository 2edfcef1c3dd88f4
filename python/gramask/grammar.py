"""Grammars: Lark text and files, bundled grammars, GBNF, EBNF, regexes, JSON Schema."""

import json
import os
from typing import Any, Dict, List, Optional, Tuple, Type, Union

from . import _core
from ._handle import HandleOwner
from .errors import FormatError, UnsupportedError
from .regex_text import strip_edge_anchors
from .xgr_schema import strict_schema_text

PathLike = Union[str, "os.PathLike[str]"]
JSONSchema = Union[str, Dict[str, Any], bool, Type[Any]]

_FORMATS = {
    None: _core.FORMAT_AUTO,
    "auto": _core.FORMAT_AUTO,
    "lark": _core.FORMAT_LARK,
    "gbnf": _core.FORMAT_GBNF,
    "ebnf": _core.FORMAT_EBNF,
    "regex": _core.FORMAT_REGEX,
}


_DRAFTS = {None: 0, "4": 4, "6": 6, "7": 7, "2019-09": 2019, "2020-12": 2020}


def _format(fmt: Optional[str]) -> int:
    try:
        return _FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown grammar format {fmt!r} (one of: lark, gbnf, ebnf, regex)") from None


def schema_text(schema: JSONSchema) -> str:
    """A JSON Schema as JSON text: from a dict (or bool), a JSON string, or a
    Pydantic-style class (its ``model_json_schema()``, or ``schema()`` for Pydantic 1)."""
    if isinstance(schema, str):
        return schema  # malformed JSON: the C library's GrammarSyntaxError, with line:column
    if isinstance(schema, (dict, bool)):
        return json.dumps(schema)
    for method in ("model_json_schema", "schema"):
        fn = getattr(schema, method, None)
        if callable(fn):
            return json.dumps(fn())
    raise TypeError("a JSON Schema must be a dict, a JSON string, or a class with "
                    f"model_json_schema(), not {type(schema).__name__}")


class Grammar(HandleOwner):
    """A grammar, ready to compile for any vocabulary. Immutable; reusable.

    Lark grammars (and the bundled ones) run on gramask's lexer + LALR(1) engine;
    GBNF, EBNF, regexes and JSON Schemas on its Earley engine (:attr:`engine`).
    Constructors mirror XGrammar's ``Grammar.from_*``. Errors raise
    :class:`GrammarSyntaxError`, :class:`GrammarError` (with ``file``, ``line``,
    ``column``), :class:`UnsupportedError` or :class:`FileError`.
    """

    def __init__(self, handle: "_core.Grammar", source: str,
                 spec: Optional[Dict[str, Any]] = None) -> None:
        self._handle = handle
        self._source = source
        # How to build it again (serialize_json): the constructor and its arguments.
        self._spec = spec

    @staticmethod
    def from_lark(lark_string: str, *, tokenizer_info: Any = None, start: Optional[str] = None,
                  name: Optional[str] = None, lark_conflicts: bool = False,
                  no_file_imports: bool = False, lexer: str = "basic",
                  named_grammars: Optional[Dict[str, Any]] = None) -> "Grammar":
        """A grammar from Lark EBNF text.

        Args:
            tokenizer_info: names the tokens of ``<|name|>`` references (XGrammar's
                dialect, below).
            named_grammars: XGrammar's ``@name`` references: names to :class:`Grammar`
                objects or Lark texts.
            start: the start rule (default ``start``).
            name: names the grammar in error messages and anchors relative imports.
            lark_conflicts: resolve LALR conflicts as Lark does (each one is reported in
                :attr:`warnings`) instead of failing.
            no_file_imports: refuse ``%import`` of files (only bundled grammars), for
                untrusted text.
            lexer: Lark's ``lexer=`` option: ``"basic"`` (the default: one lexer of every
                terminal) or ``"contextual"`` (Lark's default for LALR: each lexeme is lexed
                with the terminals the parser's state accepts); masks are exact under either.

        Without gramask's own options (``start``, ``name``, ``lark_conflicts``,
        ``no_file_imports``, ``lexer``) the text is XGrammar's Lark dialect
        (``lark_xgr.py``): checked as XGrammar checks it (its located errors), kept on
        the LALR engine when it is plain Lark that engine takes and Lark reads as XGrammar
        does (no ``%ignore``, no literal escape such as ``"\\b"`` that Lark reads as two
        characters), otherwise read as XGrammar reads it, character by character, on the
        Earley engine. :meth:`GrammarCompiler.compile_lark` keeps Lark's reading.
        """
        text = lark_string
        gramask_options = (start is not None or name is not None or lark_conflicts
                           or no_file_imports or lexer != "basic")
        if not gramask_options:
            from .lark_xgr import from_xgrammar_lark
            g = from_xgrammar_lark(text, tokenizer_info, named_grammars)
            if g is not None:
                return g
        return Grammar(_core.grammar_create(text, name, format=_core.FORMAT_LARK, start=start,
                                            lark_conflicts=lark_conflicts,
                                            no_file_imports=no_file_imports, lexer=lexer),
                       f"lark:{name or '<text>'}",
                       {"from": "lark", "text": text, "start": start, "name": name,
                        "lark_conflicts": lark_conflicts, "no_file_imports": no_file_imports,
                        "lexer": lexer})

    @staticmethod
    def from_file(path: PathLike, *, format: Optional[str] = None, start: Optional[str] = None,
                  lark_conflicts: bool = False, no_file_imports: bool = False,
                  lexer: str = "basic") -> "Grammar":
        """A grammar from a file; the format comes from the extension (``.gbnf``,
        ``.ebnf``, ``.regex``; anything else is Lark) unless ``format`` says. ``lexer``
        as in :meth:`from_lark` (Lark grammars only)."""
        return Grammar(_core.grammar_from_file(path, format=_format(format), start=start,
                                               lark_conflicts=lark_conflicts,
                                               no_file_imports=no_file_imports, lexer=lexer),
                       f"file:{os.fspath(path)}")

    @staticmethod
    def bundled(name: str, *, start: Optional[str] = None, lexer: str = "basic") -> "Grammar":
        """A grammar bundled with gramask: ``json``, ``json_bounded``, ``go``, ``java``,
        ``python``; ``lexer`` as in :meth:`from_lark`."""
        return Grammar(_core.grammar_bundled(name, start=start, lexer=lexer), f"bundled:{name}",
                       {"from": "bundled", "name": name, "start": start, "lexer": lexer})

    @staticmethod
    def builtin_json_grammar() -> "Grammar":
        """The bundled JSON grammar (any JSON value), as XGrammar's."""
        return Grammar.bundled("json")

    @staticmethod
    def from_gbnf(text: str, *, root_rule_name: str = "root") -> "Grammar":
        """A grammar from llama.cpp's GBNF text (Earley engine)."""
        return Grammar(_core.grammar_create(text, None, format=_core.FORMAT_GBNF, start=root_rule_name),
                       "gbnf", {"from": "gbnf", "text": text, "root_rule_name": root_rule_name})

    @staticmethod
    def from_ebnf(ebnf_string: str, *, root_rule_name: str = "root") -> "Grammar":
        """A grammar from XGrammar's EBNF dialect (Earley engine)."""
        return Grammar(_core.grammar_create(ebnf_string, None, format=_core.FORMAT_EBNF,
                                            start=root_rule_name),
                       "ebnf", {"from": "ebnf", "text": ebnf_string, "root_rule_name": root_rule_name})

    @staticmethod
    def from_regex(regex_string: str, *, print_converted_ebnf: bool = False) -> "Grammar":
        """A grammar whose language is one regex (Python ``re`` syntax), matched in full
        (``^`` starting and ``$`` ending a top-level alternative are accepted: they assert
        nothing there). ``print_converted_ebnf`` is XGrammar's debugging option and is
        ignored."""
        return Grammar(_core.grammar_create(strip_edge_anchors(regex_string), None,
                                            format=_core.FORMAT_REGEX), "regex",
                       {"from": "regex", "text": regex_string})

    @staticmethod
    def from_json_schema(schema: JSONSchema, *, any_whitespace: bool = True,
                         indent: Optional[int] = None,
                         separators: Optional[Tuple[str, str]] = None,
                         strict_mode: bool = True,
                         max_whitespace_cnt: Optional[int] = None,
                         print_converted_ebnf: bool = False,
                         max_whitespace_run: Optional[int] = None,
                         any_order: bool = False, lenient: bool = False,
                         draft: Optional[str] = None) -> "Grammar":
        """A grammar for the JSON texts that are valid instances of a JSON Schema (a
        dict, a JSON string, or a Pydantic-style class), on the Earley engine. The
        arguments and defaults are XGrammar's, then gramask's own.

        Args:
            any_whitespace: JSON's whitespace around every token, at most
                ``max_whitespace_cnt`` characters in a row (default 32); False: the
                layout of ``json.dumps(indent=indent, separators=separators)``.
            indent: with ``any_whitespace=False``, the layout of
                ``json.dumps(indent=indent)`` (one member or item per line).
            separators: with ``any_whitespace=False``, the item and key separators, as
                ``json.dumps``'s (default ``(", ", ": ")``, or ``(",", ": ")`` with an
                indent); each is the comma or colon with spaces around it.
            strict_mode: XGrammar's default: no properties or items beyond those the
                schema names (as if every object and array schema said
                ``unevaluatedProperties: false`` / ``unevaluatedItems: false``). False:
                as the JSON Schema specification says (additional ones are allowed
                unless the schema forbids them).
            max_whitespace_cnt: longest whitespace run with ``any_whitespace``
                (``max_whitespace_run`` is gramask's name for it).
            print_converted_ebnf: XGrammar's debugging option; ignored.
            any_order: properties in any order (default: as the schema lists them).
            lenient: a keyword a grammar cannot enforce exactly (``uniqueItems``,
                ``not``...) is relaxed to a superset and reported in :attr:`warnings`,
                instead of an :class:`UnsupportedError` naming it and its JSON pointer.
            draft: how to read a schema without ``$schema``: "4", "6", "7", "2019-09"
                or "2020-12" (the default).
        """
        text = schema_text(schema)
        if draft not in _DRAFTS:
            raise ValueError(f"unknown JSON Schema draft {draft!r} (one of 4, 6, 7, 2019-09, 2020-12)")
        if max_whitespace_cnt is not None:
            if max_whitespace_cnt <= 0:
                raise ValueError("max_whitespace_cnt must be a positive integer")
            max_whitespace_run = max_whitespace_cnt
        spec = {"from": "json_schema", "schema": text, "any_whitespace": any_whitespace,
                "indent": indent, "separators": list(separators) if separators else None,
                "strict_mode": strict_mode, "max_whitespace_run": max_whitespace_run,
                "any_order": any_order, "lenient": lenient, "draft": draft}
        if strict_mode:
            text = strict_schema_text(text)
        if any_whitespace:
            layout, indent_n, seps = 0, 0, None
        elif indent is not None:
            layout, indent_n = 2, indent
            seps = separators or (",", ": ")
        else:
            layout, indent_n = 1, 0
            seps = separators or (", ", ": ")
        return Grammar(_core.grammar_from_json_schema(
            text, whitespace=layout, indent=indent_n, max_ws_run=max_whitespace_run or 0,
            any_order=any_order, lenient=lenient, draft=_DRAFTS[draft],
            item_separator=seps[0] if seps else None, key_separator=seps[1] if seps else None),
            "json_schema", spec)

    @staticmethod
    def from_structural_tag(tag: Any, triggers: Optional[List[str]] = None) -> "Grammar":
        """A grammar from a structural tag (XGrammar's ``structural_tag`` response format):
        a dict or a JSON string ``{"type": "structural_tag", "format": {...}}`` (or a bare
        format), or, as XGrammar's first version, a list of tags ``{"begin", "schema",
        "end"}`` (dicts, or objects with those attributes) with the ``triggers``.

        gramask's additions (README, tool calls and structural tags): a top-level
        ``"special_tokens"`` list (texts that stand for special tokens, produced only by
        their ids), ``excluded_str`` and ``text_before_first`` on ``triggered_tags``.
        """
        if triggers is not None:
            structures = []
            for t in tag:
                d = t if isinstance(t, dict) else {"begin": t.begin, "schema": t.schema,
                                                    "end": t.end}
                schema = d.get("schema")
                if not isinstance(schema, (dict, bool)):
                    schema = json.loads(schema_text(schema))
                structures.append({"begin": d["begin"], "schema": schema, "end": d["end"]})
            tag = {"type": "structural_tag", "structures": structures, "triggers": list(triggers)}
        if hasattr(tag, "model_dump_json"):  # xgrammar.structural_tag's pydantic classes
            tag = tag.model_dump_json()
        text = tag if isinstance(tag, str) else json.dumps(tag)
        try:
            handle = _core.grammar_from_structural_tag(text)
        except FormatError as e:
            # XGrammar's InvalidStructuralTagError begins so; engines match on it
            e.message = "Invalid structural tag error: " + e.message
            e.args = (e.message,)
            raise
        return Grammar(handle, "structural_tag", {"from": "structural_tag", "text": text})

    @staticmethod
    def from_tools(tools: Any, format: str, *, tool_choice: Any = None,
                   parallel_tool_calls: Optional[bool] = None,
                   reasoning: str = "allowed") -> "Grammar":
        """The grammar of one assistant turn in a model's tool-calling format.

        Args:
            tools: OpenAI-style tools (a list of ``{"type": "function", "function":
                {"name", "description", "parameters"}}``), or a dict with ``tools``,
                ``tool_choice`` and ``parallel_tool_calls``, or its JSON text.
            format: ``"llama"`` (``<function=NAME>{args}</function>``), ``"llama-json"``
                (``{"name": ..., "parameters": ...}``), ``"qwen"`` (``<tool_call>``
                blocks after an optional ``<think>``) or ``"harmony"`` (gpt-oss).
            tool_choice: ``"auto"``, ``"required"``, ``"none"``, a tool's name, or
                ``{"type": "function", "function": {"name": ...}}``; None: as ``tools``
                says, else auto.
            parallel_tool_calls: False for at most one call per turn; None: as ``tools``
                says, else True.
            reasoning: ``"allowed"``, ``"forced"`` or ``"forbidden"`` (Qwen's
                ``<think>`` block, Harmony's analysis channel).
        """
        formats = {"llama": 1, "llama-json": 2, "qwen": 3, "harmony": 4}
        # the model families (gramask tools --help; builtin_structural_tag has them too)
        formats.update({f: 5 + k for k, f in enumerate((
            "qwen_3", "qwen_3_5", "qwen_3_coder", "kimi", "deepseek_r1", "deepseek_v3_1",
            "deepseek_v3_2", "deepseek_v4", "glm_4_7", "minimax", "cohere", "exaone", "kimi_k3",
            "kimi_k3_xml"))})
        reasonings = {"allowed": 0, "forced": 1, "forbidden": 2}
        if format not in formats:
            raise ValueError(f"unknown tool format {format!r} (one of: {', '.join(formats)})")
        if reasoning not in reasonings:
            raise ValueError(f"unknown reasoning {reasoning!r} (allowed, forced or forbidden)")
        choice, name = 0, None
        if isinstance(tool_choice, dict):
            choice, name = 4, tool_choice.get("function", {}).get("name")
        elif tool_choice in ("auto", "required", "none"):
            choice = {"auto": 1, "required": 2, "none": 3}[tool_choice]
        elif isinstance(tool_choice, str):
            choice, name = 4, tool_choice
        elif tool_choice is not None:
            raise TypeError("tool_choice must be a string, a dict or None")
        text = tools if isinstance(tools, str) else json.dumps(tools)
        parallel = -1 if parallel_tool_calls is None else int(bool(parallel_tool_calls))
        return Grammar(_core.grammar_from_tools(text, formats[format], tool_choice=choice,
                                                tool_name=name, parallel=parallel,
                                                reasoning=reasonings[reasoning]),
                       f"tools:{format}")

    @staticmethod
    def union(*grammars: "Grammar") -> "Grammar":
        """XGrammar's ``Grammar.union``: a grammar matching what any of ``grammars``
        matches. Their rules are copied under fresh names (in C, as one grammar IR); each
        must run on the Earley engine (EBNF, GBNF, regex, JSON Schema, structural tag,
        XGrammar's Lark: a :meth:`from_lark` grammar on the LALR engine is read as XGrammar
        reads it there); gramask's own Lark (its options, ``compile_lark``) raises
        :class:`UnsupportedError`."""
        return Grammar._combine(grammars, False)

    @staticmethod
    def concat(*grammars: "Grammar") -> "Grammar":
        """XGrammar's ``Grammar.concat``: a grammar matching what ``grammars`` match, one
        after the other in order (see :meth:`union` for which grammars)."""
        return Grammar._combine(grammars, True)

    @staticmethod
    def _combine(grammars: Any, concat: bool) -> "Grammar":
        if len(grammars) == 1 and isinstance(grammars[0], (list, tuple)):
            grammars = tuple(grammars[0])
        if not grammars or not all(isinstance(g, Grammar) for g in grammars):
            raise TypeError(f"Grammar.{'concat' if concat else 'union'} takes one or more "
                            "Grammar objects")
        kind = "concat" if concat else "union"
        specs = [g._spec for g in grammars]
        spec = {"from": kind, "grammars": specs} if all(specs) else None
        from .lark_xgr import as_earley
        parts = [as_earley(g) for g in grammars]  # kept alive while combined
        return Grammar(_core.grammar_combine([g._handle for g in parts], concat), kind, spec)

    def serialize_json(self) -> str:
        """The grammar as JSON text: how it was built (its source text or schema and
        the options), which :meth:`deserialize_json` builds again. Grammars made by
        :meth:`union` / :meth:`concat` of such grammars serialize too."""
        if self._spec is None:
            raise UnsupportedError(f"{self!r} cannot be serialized (it was not built from text)")
        return serialized_json("grammar", {"spec": self._spec})

    def __reduce__(self) -> Tuple[Any, ...]:
        # Pickled as its serialized form (built again on unpickling); a grammar not built
        # from text (a file, tools) raises UnsupportedError as serialize_json does.
        return (Grammar.deserialize_json, (self.serialize_json(),))

    @staticmethod
    def deserialize_json(json_string: str) -> "Grammar":
        """The grammar :meth:`serialize_json` wrote. Raises :class:`InvalidJSONError`,
        :class:`DeserializeVersionError` or :class:`DeserializeFormatError`."""
        return grammar_from_spec(deserialized_json(json_string, "grammar"))

    def __str__(self) -> str:
        """The text the grammar was built from (EBNF, Lark, regex, schema), else its repr."""
        spec = self._spec or {}
        text = spec.get("text", spec.get("schema"))
        return text if isinstance(text, str) else repr(self)

    @property
    def engine(self) -> str:
        """``"lalr"`` or ``"earley"``: which engine produces this grammar's masks."""
        return self._handle.engine

    @property
    def warnings(self) -> List[str]:
        """What building the grammar reported (resolved conflicts, unused rules...)."""
        return self._handle.warnings

    def __repr__(self) -> str:
        return f"Grammar({self._source})"


# ---- serialization (serialize_json / deserialize_json of grammars, tokenizer infos and
# compiled grammars): JSON of how to build the object again, with a version.

SERIALIZATION_VERSION = "gramask-1"


def serialized_json(kind: str, body: Dict[str, Any]) -> str:
    return json.dumps({"kind": kind, **body, "__VERSION__": SERIALIZATION_VERSION},
                      ensure_ascii=False, separators=(",", ":"))


# The members each serialized object may have (issue 32: an unknown key is an error
# naming it, never dropped): the envelope of each kind, and each grammar spec's by "from".
_ENVELOPE_KEYS = {
    "grammar": {"kind", "spec", "__VERSION__"},
    "tokenizer_info": {"kind", "decoded_vocab", "vocab_type", "add_prefix_space",
                       "stop_token_ids", "special_token_ids", "vocab_size", "__VERSION__"},
    "compiled_grammar": {"kind", "grammar", "tokenizer_info", "__VERSION__"},
}
_SPEC_KEYS = {
    "lark": {"text", "start", "name", "lark_conflicts", "no_file_imports", "lexer",
             "lark_reading"},
    "lark_xgr": {"text", "lark", "parts", "temperature"},
    "bundled": {"name", "start", "lexer"},
    "gbnf": {"text", "root_rule_name"},
    "ebnf": {"text", "root_rule_name"},
    "regex": {"text"},
    "structural_tag": {"text"},
    "union": {"grammars"},
    "concat": {"grammars"},
    "json_schema": {"schema", "any_whitespace", "indent", "separators", "strict_mode",
                    "max_whitespace_run", "any_order", "lenient", "draft"},
}


def deserialized_json(text: str, kind: str) -> Dict[str, Any]:
    from .errors import DeserializeFormatError, DeserializeVersionError, InvalidJSONError
    try:
        doc = json.loads(text)
    except (TypeError, ValueError) as e:
        raise InvalidJSONError(f"not valid JSON: {e}") from None
    if not isinstance(doc, dict):
        raise DeserializeFormatError(f"a serialized {kind} is a JSON object, not {type(doc).__name__}")
    version = doc.get("__VERSION__")
    if version != SERIALIZATION_VERSION:
        raise DeserializeVersionError(f"serialized by version {version!r}; this gramask reads "
                                      f"{SERIALIZATION_VERSION!r}")
    if doc.get("kind") != kind:
        raise DeserializeFormatError(f"not a serialized {kind} (kind {doc.get('kind')!r})")
    for k in doc:
        if k not in _ENVELOPE_KEYS[kind]:
            raise DeserializeFormatError(f"/{k}: unknown key {k!r} in a serialized {kind}")
    return doc


_SPEC_BUILDERS = {
    "lark": lambda d: gramask_lark(d["text"]) if d.get("lark_reading") else (
        Grammar.from_lark(d["text"], start=d.get("start"), name=d.get("name"),
                                        lark_conflicts=d.get("lark_conflicts", False),
                                        no_file_imports=d.get("no_file_imports", False),
                                        lexer=d.get("lexer", "basic"))),
    "lark_xgr": lambda d: _lark_xgr_from_spec(d),
    "bundled": lambda d: Grammar.bundled(d["name"], start=d.get("start"),
                                         lexer=d.get("lexer", "basic")),
    "gbnf": lambda d: Grammar.from_gbnf(d["text"], root_rule_name=d.get("root_rule_name", "root")),
    "ebnf": lambda d: Grammar.from_ebnf(d["text"], root_rule_name=d.get("root_rule_name", "root")),
    "regex": lambda d: Grammar.from_regex(d["text"]),
    "structural_tag": lambda d: Grammar.from_structural_tag(d["text"]),
    "union": lambda d: Grammar.union(*[grammar_from_spec(g) for g in d["grammars"]]),
    "concat": lambda d: Grammar.concat(*[grammar_from_spec(g) for g in d["grammars"]]),
    "json_schema": lambda d: Grammar.from_json_schema(
        d["schema"], any_whitespace=d["any_whitespace"], indent=d.get("indent"),
        separators=tuple(d["separators"]) if d.get("separators") else None,
        strict_mode=d.get("strict_mode", True), max_whitespace_run=d.get("max_whitespace_run"),
        any_order=d.get("any_order", False), lenient=d.get("lenient", False),
        draft=d.get("draft")),
}


def gramask_lark(text: str, **options: Any) -> Grammar:
    """GrammarCompiler.compile_lark's grammar, gramask's own Lark: as Grammar.from_lark,
    except that plain Lark that the LALR engine takes keeps Lark's reading where XGrammar's
    differs (%ignore before the first lexeme, a literal's "\\b": lark_xgr._lark_reads_it_so),
    as compile_lark read it before from_lark became XGrammar's."""
    if (any(options.get(k) for k in ("start", "name", "lark_conflicts", "no_file_imports"))
            or options.get("lexer", "basic") != "basic"):
        return Grammar.from_lark(text, **options)
    from .lark_xgr import from_xgrammar_lark
    g = from_xgrammar_lark(text, options.get("tokenizer_info"), options.get("named_grammars"),
                           exact=False)
    if g is not None:
        return g
    return Grammar(_core.grammar_create(text, None, format=_core.FORMAT_LARK), "lark:<text>",
                   {"from": "lark", "text": text, "lark_reading": True})


def _lark_xgr_from_spec(d: Dict[str, Any]) -> Grammar:
    from .lark_xgr import from_spec
    return from_spec(d)


def grammar_from_spec(doc: Dict[str, Any]) -> Grammar:
    from .errors import DeserializeFormatError
    spec = doc.get("spec") if "spec" in doc else doc
    if isinstance(spec, dict) and spec.get("from") in _SPEC_KEYS:
        for k in spec:
            if k != "from" and k not in _SPEC_KEYS[spec["from"]]:
                raise DeserializeFormatError(f"/spec/{k}: unknown key {k!r} in a serialized "
                                             f"{spec['from']} grammar")
    try:
        return _SPEC_BUILDERS[spec["from"]](spec)
    except (KeyError, TypeError) as e:
        raise DeserializeFormatError(f"a serialized grammar lacks or mistypes {e}") from None
