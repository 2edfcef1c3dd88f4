"""XGrammar's ``xgrammar.openai_tool_call_schema``: the OpenAI Chat Completions shapes of
tools and ``tool_choice`` that :mod:`gramask.builtin_structural_tag` takes.

Plain classes (no pydantic): each is built from keyword arguments or, with
:func:`parse_tool` and :func:`parse_tool_choice`, from the dicts an engine receives; a
missing or mistyped field is a ``ValueError`` naming it (``function.name``,
``function.parameters``...).
"""

from typing import Any, Dict, List, Optional, Union


def _check_type(value: Any, types: Any, where: str, what: str) -> Any:
    if not isinstance(value, types):
        raise ValueError(f"{where} must be {what}, not {type(value).__name__}: {value!r}")
    return value


class _Model:
    """Fields as attributes; equality and dumps by fields."""

    _fields: tuple = ()

    def model_dump(self, **_: Any) -> Dict[str, Any]:
        out = {}
        for k in self._fields:
            v = getattr(self, k)
            out[k] = v.model_dump() if isinstance(v, _Model) else v
        return out

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and self.model_dump() == other.model_dump()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._fields)
        return f"{type(self).__name__}({args})"


class FunctionDefinition(_Model):
    """A function: ``name``, ``description``, ``parameters`` (a JSON Schema object, or
    None: unconstrained arguments), ``strict`` (False: the schema is not enforced)."""

    _fields = ("name", "description", "parameters", "strict")

    def __init__(self, name: Any = None, description: Optional[str] = None,
                 parameters: Optional[Dict[str, Any]] = None, strict: Optional[bool] = None,
                 **extra: Any) -> None:
        _check_type(name, str, "function.name", "a string")
        if parameters is not None:
            _check_type(parameters, dict, "function.parameters", "an object (a JSON Schema)")
        if strict is not None:
            _check_type(strict, bool, "function.strict", "a boolean")
        self.name = name
        self.description = description
        self.parameters = parameters
        self.strict = strict


class FunctionToolParam(_Model):
    """``{"type": "function", "function": {...}}``."""

    _fields = ("type", "function")

    def __init__(self, function: Any = None, type: str = "function", **extra: Any) -> None:
        if type != "function":
            raise ValueError(f"a function tool's type must be \"function\", not {type!r}")
        if isinstance(function, FunctionDefinition):
            self.function = function
        else:
            _check_type(function, dict, "tool.function", "an object")
            self.function = FunctionDefinition(**function)
        self.type = "function"


class BuiltinToolParam(_Model):
    """A provider's builtin tool: ``type`` (``"web_search_preview"``), ``name`` (the name
    the model writes, default ``type``), ``parameters`` (the arguments' JSON Schema)."""

    _fields = ("type", "name", "parameters")

    def __init__(self, type: Any = None, name: Optional[str] = None,
                 parameters: Optional[Dict[str, Any]] = None, **extra: Any) -> None:
        _check_type(type, str, "builtin tool type", "a string")
        if name is not None:
            _check_type(name, str, "builtin tool name", "a string")
        if parameters is not None:
            _check_type(parameters, dict, "builtin tool parameters", "an object (a JSON Schema)")
        self.type = type
        self.name = name
        self.parameters = parameters


ToolParam = Union[FunctionToolParam, BuiltinToolParam]


def parse_tool(tool: Any) -> ToolParam:
    """A tool from its dict: a function tool when ``type`` is ``"function"`` or absent
    and ``function`` is present, else a builtin tool."""
    if isinstance(tool, (FunctionToolParam, BuiltinToolParam)):
        return tool
    _check_type(tool, dict, "a tool", "an object")
    kind = tool.get("type", "function")
    if kind == "function":
        if "function" not in tool:
            raise ValueError("a function tool needs \"function\" (with function.name and "
                             "function.parameters)")
        return FunctionToolParam(**tool)
    return BuiltinToolParam(**tool)


class NamedToolChoiceFunction(_Model):
    _fields = ("name",)

    def __init__(self, name: Any = None, **extra: Any) -> None:
        self.name = _check_type(name, str, "tool_choice.function.name", "a string")


class NamedToolChoiceParam(_Model):
    """``{"type": "function", "function": {"name": ...}}`` (or the Responses API's flat
    ``{"type": "function", "name": ...}``)."""

    _fields = ("type", "function")

    def __init__(self, function: Any = None, type: str = "function", name: Any = None,
                 **extra: Any) -> None:
        if function is None and name is not None:
            function = {"name": name}
        _check_type(function, (dict, NamedToolChoiceFunction), "tool_choice.function",
                    "an object")
        self.type = "function"
        self.function = function if isinstance(function, NamedToolChoiceFunction) \
            else NamedToolChoiceFunction(**function)


class BuiltinToolChoiceParam(_Model):
    """``{"type": <builtin type>}``: that builtin tool."""

    _fields = ("type", "name")

    def __init__(self, type: Any = None, name: Optional[str] = None, **extra: Any) -> None:
        self.type = _check_type(type, str, "tool_choice.type", "a string")
        self.name = name


class AllowedToolRef(_Model):
    _fields = ("type", "function")

    def __init__(self, type: Any = None, function: Any = None, name: Any = None,
                 **extra: Any) -> None:
        self.type = _check_type(type, str, "allowed_tools.tools[].type", "a string")
        if function is None and name is not None and type == "function":
            function = {"name": name}
        self.function = None if function is None else (
            function if isinstance(function, NamedToolChoiceFunction)
            else NamedToolChoiceFunction(**_check_type(function, dict,
                                                       "allowed_tools.tools[].function",
                                                       "an object")))


class AllowedTools(_Model):
    _fields = ("mode", "tools")

    def __init__(self, mode: Any = "auto", tools: Any = None, **extra: Any) -> None:
        if mode not in ("auto", "required"):
            raise ValueError(f"allowed_tools.mode must be \"auto\" or \"required\", not {mode!r}")
        _check_type(tools, list, "allowed_tools.tools", "a list")
        self.mode = mode
        self.tools: List[AllowedToolRef] = [
            t if isinstance(t, AllowedToolRef) else AllowedToolRef(**_check_type(
                t, dict, "allowed_tools.tools[]", "an object")) for t in tools]


class AllowedToolChoiceParam(_Model):
    """``{"type": "allowed_tools", "allowed_tools": {"mode": ..., "tools": [...]}}``."""

    _fields = ("type", "allowed_tools")

    def __init__(self, allowed_tools: Any = None, type: str = "allowed_tools",
                 **extra: Any) -> None:
        self.type = "allowed_tools"
        self.allowed_tools = allowed_tools if isinstance(allowed_tools, AllowedTools) \
            else AllowedTools(**_check_type(allowed_tools, dict, "tool_choice.allowed_tools",
                                            "an object"))


ToolChoiceOptionParam = Union[str, NamedToolChoiceParam, BuiltinToolChoiceParam,
                              AllowedToolChoiceParam]


def parse_tool_choice(choice: Any) -> ToolChoiceOptionParam:
    """``tool_choice`` from its JSON form (None is ``"auto"``)."""
    if choice is None:
        return "auto"
    if isinstance(choice, (NamedToolChoiceParam, BuiltinToolChoiceParam,
                           AllowedToolChoiceParam)):
        return choice
    if isinstance(choice, str):
        if choice not in ("auto", "none", "required"):
            raise ValueError(f"tool_choice must be \"auto\", \"none\", \"required\" or an "
                             f"object, not {choice!r}")
        return choice
    _check_type(choice, dict, "tool_choice", "a string or an object")
    kind = choice.get("type")
    if kind == "function":
        return NamedToolChoiceParam(**choice)
    if kind == "allowed_tools":
        return AllowedToolChoiceParam(**choice)
    return BuiltinToolChoiceParam(**choice)
