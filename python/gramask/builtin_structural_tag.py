"""XGrammar's ``xgrammar.builtin_structural_tag``: the structural tag of a whole assistant
turn in a model family's own tool-call format, from OpenAI-style tools and
``tool_choice``.

``get_model_structural_tag(model, tools, tool_choice, reasoning, ...)`` takes the family
names XGrammar uses (:data:`MODELS`); ``get_<family>_structural_tag`` take the tools as
:func:`normalize_tool_choice` leaves them. The result is a
:class:`gramask.structural_tag.StructuralTag` of ``TagFormat``, ``TriggeredTagsFormat``...
objects (engines and XGrammar's tests read them); the C structural-tag compiler checks and
compiles it.

Each family is described once, as data (:class:`_Family`: its call tag, the section
around parallel calls, the trigger, the reasoning block, the special tokens): the three
tool choices are the same construction for every family (note [calls]).

gramask's additions, all keyword arguments that XGrammar does not have:
  parallel_tool_calls=False: at most one call per turn;
  response_format=SCHEMA: with no tools (or tool_choice "none"), the answer after the
      reasoning is JSON valid under SCHEMA instead of free text (Harmony: the final
      channel's message);
  thinking="forced": the reasoning block may not be empty; "forbidden": it is empty
      (the template's empty block, e.g. ``</think>\\n\\n``).
The returned tag also carries ``special_token_candidates``, the family's marker texts
that are special tokens in its tokenizer: :meth:`GrammarCompiler.compile_structural_tag`
makes those of them that are special tokens of its vocabulary produced only as their id.

note [calls]
  auto      free text with calls dispatched on the family's trigger (a section wrapper
            holding one or more calls where the family has one); no tools: free text.
  required  at least one call: the section right away where the family has one
            (after its fixed prefix, as XGrammar), else triggered calls with at least
            one, free text allowed before the first (the templates render the content
            before the calls; gramask's text_before_first) and after the calls (a
            greedy model must be able to stop).
  forced    exactly the one tool: its call (in its section).
Free text excludes the family's reasoning markers (exclude_special_tokens=True).
"""

from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .openai_tool_call_schema import (AllowedToolChoiceParam, BuiltinToolChoiceParam,
                                      BuiltinToolParam, FunctionDefinition, FunctionToolParam,
                                      NamedToolChoiceParam, ToolChoiceOptionParam, ToolParam,
                                      parse_tool, parse_tool_choice)
from .structural_tag import (AnyTextFormat, ConstStringFormat, JSONSchemaFormat, OptionalFormat,
                             RegexFormat, SequenceFormat, StructuralTag, TagFormat,
                             TagsWithSeparatorFormat, TriggeredTagsFormat)

THINK = ["<think>", "</think>"]


def normalize_tool_choice(
        tools: Optional[List[Union[ToolParam, dict]]] = None,
        tool_choice: Any = "auto") -> Tuple[List[FunctionToolParam], List[BuiltinToolParam], str]:
    """(function tools, builtin tools, "auto" | "required" | "forced") for the tools and
    the OpenAI ``tool_choice``: a named function or builtin keeps that tool only
    ("forced"), ``allowed_tools`` keeps the listed ones (its mode), ``"none"`` keeps none
    ("auto", text only). ValueError for a bad list, a missing tool, a required choice
    without tools."""
    if tools is None:
        tools = []
    if not isinstance(tools, list):
        raise ValueError("The 'tools' argument must be a list.")
    parsed = [parse_tool(t) for t in tools]
    functions = [t for t in parsed if isinstance(t, FunctionToolParam)]
    builtins = [t for t in parsed if isinstance(t, BuiltinToolParam)]
    choice = parse_tool_choice(tool_choice)
    if isinstance(choice, AllowedToolChoiceParam):
        names = {r.function.name for r in choice.allowed_tools.tools
                 if r.type == "function" and r.function is not None}
        if any(r.type == "function" and r.function is None for r in choice.allowed_tools.tools):
            raise ValueError("Allowed function tool references must include 'function'.")
        kinds = {r.type for r in choice.allowed_tools.tools if r.type != "function"}
        missing = names - {t.function.name for t in functions}
        if missing:
            raise ValueError(f"Allowed function tools are not found in the tools list: "
                             f"{sorted(missing)}.")
        builtins = [t for t in builtins if t.type in kinds]
        missing = kinds - {t.type for t in builtins}
        if missing:
            raise ValueError(f"Allowed builtin tools are not found in the tools list: "
                             f"{sorted(missing)}.")
        functions = [t for t in functions if t.function.name in names]
        simple = choice.allowed_tools.mode
    elif isinstance(choice, NamedToolChoiceParam):
        name = choice.function.name
        functions = [t for t in functions if t.function.name == name]
        if not functions:
            raise ValueError(f"The tool with name '{name}' is not found in the tools list.")
        builtins = []
        simple = "forced"
    elif isinstance(choice, BuiltinToolChoiceParam):
        functions = []
        builtins = [t for t in builtins if t.type == choice.type]
        if len(builtins) != 1:
            raise ValueError(f"Builtin tool choice {choice.type!r} must match exactly one "
                             f"builtin tool, got {len(builtins)} matches.")
        simple = "forced"
    elif choice == "none":
        functions, builtins, simple = [], [], "auto"
    else:
        simple = choice
    if simple == "required" and not functions and not builtins:
        raise ValueError("The 'tools' list is empty, which is not allowed when 'tool_choice' "
                         "is 'required'.")
    if simple == "forced" and len(functions) + len(builtins) != 1:
        raise ValueError("Forced tool choice must resolve to exactly one tool.")
    return functions, builtins, simple


def _parameters(tool: Union[FunctionDefinition, BuiltinToolParam]) -> Any:
    """The arguments' schema: True (any JSON) for none or a non-strict function."""
    if isinstance(tool, FunctionDefinition) and tool.strict is False:
        return True
    return True if tool.parameters is None else tool.parameters


class _Options:
    """The keyword options every family reads."""

    def __init__(self, any_order: bool = False, exclude_special_tokens: bool = True,
                 max_whitespace_cnt: Optional[int] = None, parallel_tool_calls: bool = True,
                 response_format: Any = None, thinking: Optional[str] = None,
                 **_: Any) -> None:
        if thinking not in (None, "forced", "forbidden"):
            raise ValueError(f"thinking must be \"forced\" or \"forbidden\", not {thinking!r}")
        self.any_order = any_order
        self.exclude = exclude_special_tokens
        self.ws = max_whitespace_cnt
        self.parallel = parallel_tool_calls
        self.response_format = response_format
        self.thinking = thinking

    def schema(self, schema: Any, style: str = "json") -> Any:
        return JSONSchemaFormat(json_schema=schema, style=style, any_order=self.any_order,
                                max_whitespace_cnt=self.ws)

    def excludes(self, tokens: List[str]) -> List[str]:
        return list(tokens) if self.exclude else []


class _Family:
    """A family's format as data.

    call(name, args_format) -> the TagFormat of one call; style: the arguments' JSON
    style; trigger: what starts a call (or the section) in free text; section: (begin,
    end) around one or more calls, or None; separator between calls; required_prefix:
    text before the section when a call is required (the template's "\\n\\n");
    think_end: the end of the reasoning block the prompt opened, think_suffix: the fixed
    text after it; text_excludes: what free text may not hold; specials: marker texts
    that are special tokens in the family's tokenizer.
    """

    def __init__(self, call: Callable[[str, Any], Any], trigger: str, style: str = "json",
                 section: Optional[Tuple[str, str]] = None, separator: str = "",
                 required_prefix: str = "", think_end: Optional[str] = "</think>",
                 think_suffix: str = "", think_empty: str = "",
                 text_excludes: Optional[List[str]] = None,
                 reasoning_excludes: Optional[List[str]] = None,
                 specials: Optional[List[str]] = None) -> None:
        self.call = call
        self.trigger = trigger
        self.style = style
        self.section = section
        self.separator = separator
        self.required_prefix = required_prefix
        self.think_end = think_end
        self.think_suffix = think_suffix
        self.think_empty = think_empty
        self.text_excludes = THINK if text_excludes is None else text_excludes
        self.reasoning_excludes = reasoning_excludes
        self.specials = specials or []

    def calls(self, tags: List[Any], choice: str, o: _Options) -> Any:
        """The part after the reasoning (note [calls])."""
        excludes = o.excludes(self.text_excludes)
        if not tags:
            if o.response_format is not None:
                return o.schema(o.response_format)
            return AnyTextFormat(excludes=o.excludes(self.reasoning_excludes or
                                                     self.text_excludes))
        one = not o.parallel or choice == "forced"
        if self.section is None:
            if choice == "forced":
                return tags[0]
            if choice == "required":  # the templates put the content before the calls
                return TriggeredTagsFormat(triggers=[self.trigger], tags=tags,
                                           excludes=excludes, at_least_one=True,
                                           stop_after_first=one, text_before_first=True)
            return TriggeredTagsFormat(triggers=[self.trigger], tags=tags, excludes=excludes,
                                       stop_after_first=one)
        begin, end = self.section
        inner = TagsWithSeparatorFormat(tags=tags, separator=self.separator, at_least_one=True,
                                        stop_after_first=one)
        if choice == "auto":
            return TriggeredTagsFormat(triggers=[self.trigger],
                                       tags=[TagFormat(begin=begin, content=inner, end=end)],
                                       excludes=excludes)
        return SequenceFormat(elements=[ConstStringFormat(value=self.required_prefix + begin),
                                        tags[0] if choice == "forced" else inner,
                                        ConstStringFormat(value=end)])

    def reasoning(self, reasoning: bool, o: _Options) -> List[Any]:
        """The reasoning block's end (the prompt opened it), as elements before the rest."""
        if self.think_end is None:
            return []
        if not reasoning or o.thinking == "forbidden":
            return [ConstStringFormat(value=self.think_empty)] if self.think_empty else []
        content = AnyTextFormat() if self.reasoning_excludes is None else \
            AnyTextFormat(excludes=o.excludes(self.reasoning_excludes))
        if o.thinking == "forced":  # at least one character before the end
            content = SequenceFormat(elements=[RegexFormat(pattern=r"[\s\S]"), content])
        out = [TagFormat(begin="", content=content, end=self.think_end)]
        if self.think_suffix:
            out.append(ConstStringFormat(value=self.think_suffix))
        return out

    def build(self, tools: Optional[List[FunctionToolParam]], choice: str, reasoning: bool,
              o: _Options) -> StructuralTag:
        tags = [self.call(t.function.name, o.schema(_parameters(t.function), self.style))
                for t in tools or []]
        if choice in ("required", "forced") and not tags:
            raise ValueError("Forced tool choice must resolve to exactly one tool." if
                             choice == "forced" else "'required' needs at least one tool.")
        rest = self.calls(tags, choice, o)
        head = self.reasoning(reasoning, o)
        fmt = SequenceFormat(elements=head + [rest]) if head else rest
        return _tag(fmt, self.specials)


def _tag(fmt: Any, specials: List[str]) -> StructuralTag:
    tag = StructuralTag(format=fmt)
    tag.special_token_candidates = list(specials)
    return tag


def _simple(begin_prefix: str, begin_suffix: str, end: str) -> Callable[[str, Any], Any]:
    return lambda name, args: TagFormat(begin=begin_prefix + name + begin_suffix, content=args,
                                        end=end)


def _indexed(begin_prefix: str, after_name: str, after_index: str,
             end: str) -> Callable[[str, Any], Any]:
    """A call whose begin holds the name then a decimal index (Kimi's ``:0``)."""
    return lambda name, args: TagFormat(
        begin=begin_prefix + name + after_name,
        content=SequenceFormat(elements=[RegexFormat(pattern=r"[0-9]+"),
                                         ConstStringFormat(value=after_index), args]),
        end=end)


# ---- the families ------------------------------------------------------------------

_KIMI_CALL = "<|tool_call_begin|>"
_DS_CALLS = ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>")
_DS_SPECIALS = ["<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
                "<｜tool▁call▁end｜>", "<｜tool▁sep｜>", "<think>", "</think>"]
_QWEN_SPECIALS = ["<tool_call>", "</tool_call>", "<think>", "</think>"]
_GLM_ARGS = ["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"]
_COHERE_THINK = ["<|START_THINKING|>", "<|END_THINKING|>"]


def _dsml(block: str) -> _Family:
    """DeepSeek V3.2 (function_calls) and V4 (tool_calls): DSML invokes, joined by one
    newline (the invoke's own), after "\\n\\n" when a call is required."""
    return _Family(call=_simple('<｜DSML｜invoke name="', '">\n', "</｜DSML｜invoke>\n"),
                   trigger=f"<｜DSML｜{block}>", style="deepseek_xml",
                   section=(f"<｜DSML｜{block}>\n", f"</｜DSML｜{block}>"), required_prefix="\n\n",
                   specials=["<think>", "</think>"])


_FAMILIES: Dict[str, _Family] = {
    # Llama 3.1/3.2 JSON tool calling: no reasoning block.
    "llama": _Family(call=_simple('{"name": "', '", "parameters": ', "}"),
                     trigger='{"name": ', think_end=None),
    # Kimi K2: calls inside the tool-calls section, ids functions.NAME:N.
    "kimi": _Family(call=_indexed(_KIMI_CALL + "functions.", ":", "<|tool_call_argument_begin|>",
                                  "<|tool_call_end|>"),
                    trigger="<|tool_calls_section_begin|>",
                    section=("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
                    text_excludes=THINK + [_KIMI_CALL],
                    specials=["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                              _KIMI_CALL, "<|tool_call_argument_begin|>", "<|tool_call_end|>",
                              "<think>", "</think>"]),
    "deepseek_r1": _Family(call=_simple("<｜tool▁call▁begin｜>function<｜tool▁sep｜>", "\n```json\n",
                                        "\n```<｜tool▁call▁end｜>"),
                           trigger=_DS_CALLS[0], section=_DS_CALLS, separator="\n",
                           specials=_DS_SPECIALS),
    "deepseek_v3_1": _Family(call=_simple("<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
                                          "<｜tool▁call▁end｜>"),
                             trigger=_DS_CALLS[0], section=_DS_CALLS, specials=_DS_SPECIALS),
    # Qwen 3 (Hermes): reasoning ends "</think>\n\n".
    "qwen_3": _Family(call=_simple('<tool_call>\n{"name": "', '", "arguments": ',
                                   "}\n</tool_call>"),
                      trigger="<tool_call>", think_suffix="\n\n", specials=_QWEN_SPECIALS),
    # Qwen 3.5 / 3.6 and Qwen3-Coder: XML parameters.
    "qwen_3_5": _Family(call=_simple("<tool_call>\n<function=", ">\n", "\n</function>\n</tool_call>"),
                        trigger="<tool_call>\n<function=", style="qwen_xml", think_suffix="\n\n",
                        specials=_QWEN_SPECIALS),
    "exaone": _Family(call=_simple('<tool_call>{"name": "', '", "arguments": ', "}</tool_call>"),
                      trigger="<tool_call>", think_suffix="\n\n",
                      specials=["<tool_call>", "</tool_call>", "<think>", "</think>"]),
    "deepseek_v3_2": _dsml("function_calls"),
    "deepseek_v4": _dsml("tool_calls"),
    # MiniMax M2: the reasoning block always closes ("\n</think>\n\n" when empty).
    "minimax": _Family(call=_simple('<invoke name="', '">\n', "</invoke>\n"),
                       trigger="<minimax:tool_call>", style="minimax_xml",
                       section=("<minimax:tool_call>\n", "</minimax:tool_call>"),
                       required_prefix="\n", think_suffix="\n\n",
                       think_empty="\n</think>\n\n\n\n",
                       specials=["<think>", "</think>", "<minimax:tool_call>",
                                 "</minimax:tool_call>"]),
    # GLM 4.7: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>.
    "glm_4_7": _Family(call=_simple("<tool_call>", "", "</tool_call>"), trigger="<tool_call>",
                       style="glm_xml", text_excludes=THINK + ["</tool_call>"] + _GLM_ARGS,
                       reasoning_excludes=THINK + ["<tool_call>", "</tool_call>"] + _GLM_ARGS,
                       specials=THINK + ["<tool_call>", "</tool_call>"] + _GLM_ARGS),
    # Cohere Command A (CMD5 "cofl" XML), reasoning ends at <|END_THINKING|>.
    "cohere": _Family(call=lambda name, args: TagFormat(
                          begin='<cofl:tool_call id="',
                          content=SequenceFormat(elements=[
                              RegexFormat(pattern=r"[0-9]+"),
                              ConstStringFormat(value=f'" name="{name}">'), args]),
                          end="</cofl:tool_call>"),
                      trigger="<cofl:tool_calls>", style="cohere_xml",
                      section=("<cofl:tool_calls>", "</cofl:tool_calls>"),
                      think_end="<|END_THINKING|>", text_excludes=_COHERE_THINK,
                      specials=_COHERE_THINK),
}


def _kimi_k3(tools: List[FunctionToolParam], builtins: List[BuiltinToolParam], choice: str,
             reasoning: bool, o: _Options) -> StructuralTag:
    """Kimi K3: <|open|>NAME<|sep|>...<|close|>NAME<|sep|> blocks. The prompt opened the
    first block (think when reasoning, else response): the output starts inside it."""
    open_, close, sep = "<|open|>", "<|close|>", "<|sep|>"
    excludes = o.excludes([open_, close])
    tags = [TagFormat(begin=f'{open_}call tool="{t.function.name}" index="',
                      content=SequenceFormat(elements=[
                          RegexFormat(pattern=r"[0-9]+"), ConstStringFormat(value=f'"{sep}'),
                          o.schema(_parameters(t.function), "kimi_k3_xml")]),
                      end=f"{close}call{sep}") for t in tools]
    if choice in ("required", "forced") and not tags:
        raise ValueError("Forced tool choice must resolve to exactly one tool.")
    elements: List[Any] = []
    if reasoning and o.thinking != "forbidden":
        content: Any = AnyTextFormat(excludes=excludes)
        if o.thinking == "forced":
            content = SequenceFormat(elements=[RegexFormat(pattern=r"[\s\S]"), content])
        elements.append(TagFormat(begin="", content=content, end=f"{close}think{sep}"))
    elif reasoning:
        elements.append(ConstStringFormat(value=f"{close}think{sep}"))
    answer = o.schema(o.response_format) if o.response_format is not None and not tags \
        else AnyTextFormat(excludes=excludes)
    elements.append(TagFormat(begin=f"{open_}response{sep}" if reasoning else "",
                              content=answer, end=f"{close}response{sep}"))
    if tags:
        calls = TagsWithSeparatorFormat(tags=tags, separator="", at_least_one=True,
                                        stop_after_first=not o.parallel or choice == "forced")
        section = (f"{open_}tools{sep}", f"{close}tools{sep}")
        if choice == "auto":
            elements.append(OptionalFormat(content=TagFormat(begin=section[0], content=calls,
                                                             end=section[1])))
        else:
            elements.append(SequenceFormat(elements=[
                ConstStringFormat(value=section[0]), tags[0] if choice == "forced" else calls,
                ConstStringFormat(value=section[1])]))
    elements.append(ConstStringFormat(value=f"{close}message{sep}"))
    return _tag(SequenceFormat(elements=elements), [open_, close, sep])


_HARMONY_SPECIALS = ["<|start|>", "<|end|>", "<|message|>", "<|channel|>", "<|constrain|>",
                     "<|return|>", "<|call|>"]


def _harmony(tools: List[FunctionToolParam], builtins: List[BuiltinToolParam], choice: str,
             reasoning: bool, o: _Options) -> StructuralTag:
    """OpenAI Harmony (gpt-oss): messages on channels, separated by <|start|>assistant;
    function calls on commentary to=functions.NAME (json), builtin tools to=NAME (code),
    the answer on the final channel (a response_format's JSON there), reasoning on the
    analysis channel. The recipient may come before or after the channel."""
    call_end, ends = "<|call|>", ["<|end|>", "<|return|>"]

    def function_tags(name: str, schema: Any) -> List[Any]:
        args = o.schema(schema)
        return [TagFormat(begin=b, content=args, end=call_end) for b in (
            f"<|channel|>commentary to=functions.{name}<|constrain|>json<|message|>",
            f" to=functions.{name}<|channel|>commentary <|constrain|>json<|message|>",
            f" to=functions.{name}<|channel|>commentary json<|message|>")]

    def builtin_tags(tool: BuiltinToolParam) -> List[Any]:
        name, args = tool.name or tool.type, o.schema(_parameters(tool))
        return [TagFormat(begin=b, content=args, end=call_end) for b in (
            f"<|channel|>commentary to={name} code<|message|>",
            f" to={name}<|channel|>commentary code<|message|>")]

    tags: List[Any] = []
    if choice == "forced":
        if len(tools) + len(builtins) != 1:
            raise ValueError("Forced tool choice must resolve to exactly one tool.")
    for t in builtins:
        tags += builtin_tags(t)
    for t in tools:
        tags += function_tags(t.function.name, _parameters(t.function))
    if choice == "required" and not tags:
        raise ValueError("'required' needs at least one tool.")
    if choice == "auto":
        final = o.schema(o.response_format) if o.response_format is not None else AnyTextFormat()
        tags.append(TagFormat(begin="<|channel|>final<|message|>", content=final, end=ends))
    if reasoning and o.thinking != "forbidden":
        tags.append(TagFormat(begin="<|channel|>analysis<|message|>", content=AnyTextFormat(),
                              end=ends))
    fmt = TagsWithSeparatorFormat(tags=tags, separator="<|start|>assistant",
                                  stop_after_first=not o.parallel and choice != "auto")
    return _tag(fmt, _HARMONY_SPECIALS)


def _family_builder(model: str) -> Callable[..., StructuralTag]:
    family = _FAMILIES.get(model)

    def build(tools: Optional[List[FunctionToolParam]], builtins: Optional[List[BuiltinToolParam]],
              choice: str, reasoning: bool, o: _Options) -> StructuralTag:
        return family.build(tools, choice, reasoning, o)  # type: ignore[union-attr]
    return {"kimi_k3": _kimi_k3, "harmony": _harmony}.get(model, build)


MODELS = ["llama", "qwen_3", "qwen_3_5", "qwen_3_coder", "kimi", "kimi_k3", "kimi_k3_xml",
          "deepseek_r1", "deepseek_v3_1", "deepseek_v3_2", "deepseek_v4", "glm_4_7", "minimax",
          "harmony", "cohere", "exaone"]
# Families that are the same format under another name.
_ALIASES = {"qwen_3_coder": "qwen_3_5", "kimi_k3_xml": "kimi_k3"}


def _specific(model: str) -> Callable[..., StructuralTag]:
    builder = _family_builder(_ALIASES.get(model, model))

    def get(tools: Optional[List[Any]] = None, builtin_tools: Optional[List[Any]] = None,
            tool_choice: str = "auto", reasoning: bool = True, any_order: bool = False,
            exclude_special_tokens: bool = True, max_whitespace_cnt: Optional[int] = None,
            **kwargs: Any) -> StructuralTag:
        if tool_choice not in ("auto", "required", "forced"):
            raise ValueError(f"tool_choice must be \"auto\", \"required\" or \"forced\" here "
                             f"(normalize_tool_choice makes it), not {tool_choice!r}")
        functions = [t if isinstance(t, FunctionToolParam) else parse_tool(t)
                     for t in tools or []]
        builtins = [t if isinstance(t, BuiltinToolParam) else parse_tool(t)
                    for t in builtin_tools or []]
        o = _Options(any_order=any_order, exclude_special_tokens=exclude_special_tokens,
                     max_whitespace_cnt=max_whitespace_cnt, **kwargs)
        return builder(functions, builtins, tool_choice, bool(reasoning), o)
    get.__name__ = f"get_{model}_structural_tag"
    get.__doc__ = f"The structural tag of a {model} assistant turn (module docstring)."
    return get


get_llama_structural_tag = _specific("llama")
get_qwen_3_structural_tag = _specific("qwen_3")
get_qwen_3_5_structural_tag = _specific("qwen_3_5")
get_qwen_3_coder_structural_tag = _specific("qwen_3_coder")
get_kimi_structural_tag = _specific("kimi")
get_kimi_k3_structural_tag = _specific("kimi_k3")
get_kimi_k3_xml_structural_tag = _specific("kimi_k3_xml")
get_deepseek_r1_structural_tag = _specific("deepseek_r1")
get_deepseek_v3_1_structural_tag = _specific("deepseek_v3_1")
get_deepseek_v3_2_structural_tag = _specific("deepseek_v3_2")
get_deepseek_v4_structural_tag = _specific("deepseek_v4")
get_glm_4_7_structural_tag = _specific("glm_4_7")
get_minimax_structural_tag = _specific("minimax")
get_harmony_structural_tag = _specific("harmony")
get_cohere_structural_tag = _specific("cohere")
get_exaone_structural_tag = _specific("exaone")

_REGISTRY: Dict[str, Callable[..., StructuralTag]] = {
    m: globals()[f"get_{m}_structural_tag"] for m in MODELS}


def register_model_structural_tag(name: str) -> Callable[[Callable], Callable]:
    """Decorator: registers a builder under ``name`` for get_model_structural_tag."""
    def decorator(func: Callable) -> Callable:
        _REGISTRY[name] = func
        return func
    return decorator


def get_model_structural_tag(model: str, tools: Optional[List[Any]] = None,
                             tool_choice: Any = "auto", reasoning: bool = True,
                             force_reasoning: bool = False, any_order: bool = False,
                             exclude_special_tokens: bool = True,
                             max_whitespace_cnt: Optional[int] = None,
                             **kwargs: Any) -> StructuralTag:
    """The structural tag of an assistant turn of ``model`` (one of :data:`MODELS`) with
    these tools and tool_choice (see the module docstring and XGrammar's documentation);
    ``force_reasoning`` is accepted and ignored, as in XGrammar. gramask's keyword
    additions: parallel_tool_calls, response_format, thinking."""
    func = _REGISTRY.get(model)
    if func is None:
        raise ValueError(f"Unknown format type: {model}, supported types: {list(_REGISTRY)}")
    functions, builtins, choice = normalize_tool_choice(tools, tool_choice)
    return func(functions, builtins, choice, reasoning, any_order=any_order,
                exclude_special_tokens=exclude_special_tokens,
                max_whitespace_cnt=max_whitespace_cnt, **kwargs)


get_builtin_structural_tag = get_model_structural_tag


def special_tokens_of(texts: List[str], tokenizer_info: Any) -> List[str]:
    """Those of the texts that the tokenizer encodes as one id: the delimiters the C
    compiler makes special for this vocabulary (it takes those that are an added token,
    special or not, of exactly that text: note [special token candidates] in
    runtime/stag_source.c; a text that is one ordinary BPE token counts here only)."""
    out = []
    for text in texts:
        try:
            if len(tokenizer_info.encode(text)) == 1:
                out.append(text)
        except Exception:  # a vocabulary without a tokenizer.json cannot encode: no specials
            return []
    return out


def with_special_tokens(tag: Any, doc: Dict[str, Any], tokenizer_info: Any) -> Dict[str, Any]:
    """The structural tag's JSON doc with the tag's ``special_token_candidates`` (the
    family's delimiters): the C compiler makes those the vocabulary has as a token of
    exactly that text special (produced only as their ids; their text refused as free
    text), and leaves the others text (note [special token candidates]). So the Python
    presets and the C ones (``Grammar.from_tools``) resolve them the same way.
    tokenizer_info is not needed any more (the compiled grammar's vocabulary decides)."""
    del tokenizer_info
    candidates = getattr(tag, "special_token_candidates", None)
    if not candidates or "special_tokens" in doc or "special_token_candidates" in doc:
        return doc
    doc = dict(doc)
    doc["special_token_candidates"] = list(candidates)
    return doc
