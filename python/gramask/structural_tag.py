"""XGrammar's ``xgrammar.structural_tag`` format classes, as thin builders of the JSON
that :meth:`Grammar.from_structural_tag` takes.

Each class holds its keyword arguments and writes them as ``{"type": ..., **fields}``
(nested formats too). They check nothing themselves: the C structural-tag compiler reads
the JSON and rejects unknown types, unknown keys and wrong values with an error naming
the JSON pointer, so there is one definition of the format, not two.
"""

import json
from typing import Any, Dict, List, Union


def _plain(value: Any) -> Any:
    """A format, list or dict with formats inside, as plain JSON values."""
    if isinstance(value, (Format, StructuralTag)):
        return value.model_dump()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, type) and hasattr(value, "model_json_schema"):
        return value.model_json_schema()  # a pydantic model class as a JSON schema
    return value


class Format:
    """A structural tag format: ``type`` and the fields given as keyword arguments."""

    type = ""

    def __init__(self, **fields: Any) -> None:
        fields.pop("type", None)
        self.__dict__.update(fields)

    def model_dump(self, **_: Any) -> Dict[str, Any]:
        return {"type": self.type, **{k: _plain(v) for k, v in vars(self).items()}}

    def model_dump_json(self, **_: Any) -> str:
        return json.dumps(self.model_dump(), ensure_ascii=False)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Format) and self.model_dump() == other.model_dump()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


def _format(name: str, type_name: str, doc: str) -> type:
    return type(name, (Format,), {"type": type_name, "__doc__": doc})


ConstStringFormat = _format("ConstStringFormat", "const_string", "A constant string (value).")


class JSONSchemaFormat(Format):
    """JSON valid under json_schema; ``style`` (how it is written), ``any_order`` and
    ``max_whitespace_cnt`` read as in XGrammar, defaults not written to the JSON."""

    type = "json_schema"

    def __init__(self, **fields: Any) -> None:
        self.style = "json"
        self.any_order = False
        self.max_whitespace_cnt = None
        super().__init__(**fields)

    def model_dump(self, **_: Any) -> Dict[str, Any]:
        defaults = {"style": "json", "any_order": False, "max_whitespace_cnt": None}
        return {k: v for k, v in super().model_dump().items()
                if k not in defaults or v != defaults[k]}


QwenXMLParameterFormat = _format("QwenXMLParameterFormat", "qwen_xml_parameter",
                                 "Qwen's XML tool-call parameters of json_schema.")
AnyTextFormat = _format("AnyTextFormat", "any_text", "Any text (excludes, max_chars...).")
AnyTokensFormat = _format("AnyTokensFormat", "any_tokens", "Any tokens (exclude_tokens...).")
TokenFormat = _format("TokenFormat", "token", "One token, by id or text.")
ExcludeTokenFormat = _format("ExcludeTokenFormat", "exclude_token", "Tokens but some.")
RegexFormat = _format("RegexFormat", "regex", "Text matching a regex (pattern).")
GrammarFormat = _format("GrammarFormat", "grammar", "Text of an EBNF grammar.")
SequenceFormat = _format("SequenceFormat", "sequence", "The elements one after another.")
OrFormat = _format("OrFormat", "or", "One of the elements.")
TagFormat = _format("TagFormat", "tag", "begin, content, end.")
TriggeredTagsFormat = _format("TriggeredTagsFormat", "triggered_tags",
                              "Text with tags dispatched on triggers.")
TokenTriggeredTagsFormat = _format("TokenTriggeredTagsFormat", "token_triggered_tags",
                                   "Tokens with tags dispatched on trigger tokens.")
TagsWithSeparatorFormat = _format("TagsWithSeparatorFormat", "tags_with_separator",
                                  "Tags separated by a separator.")
DispatchFormat = _format("DispatchFormat", "dispatch", "Dispatch on texts.")
TokenDispatchFormat = _format("TokenDispatchFormat", "token_dispatch", "Dispatch on tokens.")
RepeatFormat = _format("RepeatFormat", "repeat", "A format repeated min..max times.")
StarFormat = _format("StarFormat", "star", "A format zero or more times.")
PlusFormat = _format("PlusFormat", "plus", "A format one or more times.")
OptionalFormat = _format("OptionalFormat", "optional", "A format or nothing.")


class StructuralTag:
    """A complete structural tag: ``{"type": "structural_tag", "format": ...}``."""

    def __init__(self, format: Any, type: str = "structural_tag", **fields: Any) -> None:
        self.type = type
        self.format = format
        self.fields = fields

    def model_dump(self, **_: Any) -> Dict[str, Any]:
        return {"type": self.type, "format": _plain(self.format),
                **{k: _plain(v) for k, v in self.fields.items()}}

    def model_dump_json(self, **_: Any) -> str:
        return json.dumps(self.model_dump(), ensure_ascii=False)

    @staticmethod
    def from_json(json_str: Union[str, Dict[str, Any]]) -> "StructuralTag":
        """A structural tag from its JSON text or dict (checked when compiled)."""
        doc = json.loads(json_str) if isinstance(json_str, str) else dict(json_str)
        if not isinstance(doc, dict) or "format" not in doc:
            raise ValueError("a structural tag is a JSON object with a \"format\"")
        return StructuralTag(**doc)

    @staticmethod
    def from_legacy_structural_tag(tags: List["StructuralTagItem"],
                                   triggers: List[str]) -> "StructuralTag":
        """XGrammar's first format (tags with begin, schema, end, and triggers)."""
        return StructuralTag(format=TriggeredTagsFormat(
            triggers=list(triggers),
            tags=[TagFormat(begin=t.begin, content=JSONSchemaFormat(json_schema=t.schema_json()),
                            end=t.end) for t in tags]))


class StructuralTagItem:
    """XGrammar's first structural tag format: ``begin``, a JSON ``schema`` (a dict, a
    JSON string or a pydantic model class), ``end``."""

    def __init__(self, begin: str, schema: Any, end: str) -> None:
        self.begin = begin
        self.schema = self.schema_ = schema
        self.end = end

    def schema_json(self) -> Any:
        if isinstance(self.schema, str):
            return json.loads(self.schema)
        return _plain(self.schema)
