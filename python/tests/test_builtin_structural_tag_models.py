"""gramask.builtin_structural_tag against the models' own chat templates and tokenizers.

The reference for each family is what its chat template renders for an assistant turn:
the rendering (from the model's tokenizer_config.json in ../shared/tokenizers, through
Jinja2) is encoded with the real tokenizer and fed token by token; every token must be
allowed, and the turn's end token (EOS) after it. Turns with a wrong tool name, invalid
arguments or a broken delimiter must be rejected. Where no template is at hand (Harmony:
gpt-oss ships its template separately; Llama 3.1), the turn is the format's documented
text, still checked token by token with that model's tokenizer. Families whose arguments
are XML parameters need the json_schema XML styles and are checked only structurally.
"""

import json

import pytest

import gramask as xgr
from gramask.builtin_structural_tag import (MODELS, get_model_structural_tag,
                                            normalize_tool_choice, special_tokens_of)
from gramask.testing import _is_grammar_accept_string

from conftest import shared

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"}},
        "required": ["location"], "additionalProperties": False}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "parameters": {
        "type": "object", "properties": {"timezone": {"type": "string"}},
        "required": ["timezone"], "additionalProperties": False}}}
TOOLS = [WEATHER, TIME]
CALLS = [("get_weather", {"location": "Beijing"}), ("get_time", {"timezone": "UTC"})]

_vocabs = {}


def vocab(name):
    path = shared("tokenizers", name)
    if name not in _vocabs:
        # Llama 3.1 ends a turn with <|eot_id|> (128009); the config names <|end_of_text|>.
        _vocabs[name] = xgr.TokenizerInfo.from_file(
            path, stop_token_ids=[128009] if name == "llama3" else None)
    return _vocabs[name]


def template(name):
    jinja2 = pytest.importorskip("jinja2")  # Debian python3-jinja2 (./bootstrap installs it)
    with open(shared("tokenizers", name, "tokenizer_config.json"), encoding="utf-8") as f:
        return jinja2.Environment().from_string(json.load(f)["chat_template"])


def decode_ok(stag, info, text, eos_text=None):
    """Whether the turn's tokens are each allowed (checked against the bitmask, not only
    accept_token) and, with eos_text, the EOS token after them."""
    compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_structural_tag(stag)
    m = xgr.GrammarMatcher(compiled, terminate_without_stop_token=eos_text is None)
    mask = xgr.allocate_token_bitmask(1, info.vocab_size)
    ids = info.encode(text) + (info.encode(eos_text) if eos_text else [])
    for i in ids:
        m.fill_next_token_bitmask(mask)
        allowed = bool((int(mask[0][i // 32]) >> (i % 32)) & 1)
        if allowed != m.accept_token(i):
            raise AssertionError(f"bitmask and accept_token disagree on token {i}")
        if not allowed:
            return False
    return m.is_terminated()


# ---- DeepSeek V3 (the deepseek_r1 / deepseek_v3 tool format) ------------------------


def deepseek_turn(calls, content=None):
    """The assistant turn the DeepSeek V3 template renders, less the prompt before it."""
    msgs = [{"role": "user", "content": "What is the weather in Beijing?"},
            {"role": "assistant", "content": content, "tool_calls": [
                {"type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for n, a in calls]}]
    text = template("deepseek_v3").render(messages=msgs, bos_token="", add_generation_prompt=False)
    prompt = "<｜User｜>What is the weather in Beijing?<｜Assistant｜>"
    assert text.startswith(prompt)
    turn = text[len(prompt):]
    assert turn.endswith("<｜end▁of▁sentence｜>")
    return turn[:-len("<｜end▁of▁sentence｜>")]


def test_deepseek_v3_template_turns_decode():
    info = vocab("deepseek_v3")
    eos = "<｜end▁of▁sentence｜>"
    # The template closes the calls section only after a second call (a single call is
    # rendered without <｜tool▁calls▁end｜>): two calls is its complete form.
    two = deepseek_turn(CALLS)
    assert two.count("<｜tool▁call▁begin｜>") == 2
    answer = deepseek_turn([], content="The answer is 42.")
    for choice in ("auto", "required"):
        stag = get_model_structural_tag("deepseek_r1", tools=TOOLS, tool_choice=choice,
                                        reasoning=False)
        assert decode_ok(stag, info, two, eos), choice
    stag = get_model_structural_tag("deepseek_r1", tools=TOOLS, reasoning=False)
    assert decode_ok(stag, info, answer, eos)
    assert decode_ok(stag, info, "Let me look. " + two, eos)  # text before the calls
    # The R1 prompt opens <think>: the output starts inside it.
    r1 = get_model_structural_tag("deepseek_r1", tools=TOOLS, reasoning=True)
    assert decode_ok(r1, info, "The user wants the weather.\n</think>\n\n" + two, eos)
    # Rejected where they break.
    assert not decode_ok(stag, info, two.replace("get_time", "get_date"), eos)
    assert not decode_ok(stag, info, two.replace('"UTC"', "UTC"), eos)
    assert not decode_ok(stag, info, two.replace('{"location": "Beijing"}', '{"city": "x"}'), eos)
    assert not decode_ok(stag, info, two.replace("```json", "```jsn"), eos)
    forced = get_model_structural_tag("deepseek_r1", tools=TOOLS, reasoning=False,
                                      tool_choice={"type": "function",
                                                   "function": {"name": "get_time"}})
    assert not decode_ok(forced, info, answer, eos)
    assert not decode_ok(forced, info, two, eos)  # get_weather is not allowed


def test_deepseek_added_tokens_are_special():
    """DeepSeek V3's tool markers are added tokens ("special": false in its
    tokenizer.json), which the tokenizer reads as one id each: the preset produces each
    only as that id and refuses its spelling as text (issue 37 item 4)."""
    info = vocab("deepseek_v3")
    stag = get_model_structural_tag("deepseek_r1", tools=TOOLS, tool_choice="required",
                                    reasoning=False)
    assert special_tokens_of(stag.special_token_candidates, info) == [
        "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>", "<｜tool▁call▁begin｜>",
        "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"]  # V3 has no <think> token
    compiled = xgr.GrammarCompiler(info).compile_structural_tag(stag)
    assert xgr.GrammarMatcher(compiled).accept_token(info.encode("<｜tool▁calls▁begin｜>")[0])
    assert not xgr.GrammarMatcher(compiled).accept_string("<｜tool▁calls▁begin｜>")
    assert not xgr.GrammarMatcher(compiled).accept_string("<")


# ---- Qwen 3 (Hermes <tool_call> JSON) -----------------------------------------------


def qwen_turn(calls, content="", reasoning=None):
    msgs = [{"role": "user", "content": "What is the weather in Beijing?"},
            {"role": "assistant", "content": content, "tool_calls": [
                {"type": "function", "function": {"name": n, "arguments": a}}
                for n, a in calls]}]
    if reasoning is not None:
        msgs[1]["reasoning_content"] = reasoning
    text = template("qwen3").render(messages=msgs, tools=TOOLS, add_generation_prompt=False)
    turn = text.split("<|im_start|>assistant\n")[-1]
    assert turn.endswith("<|im_end|>\n")
    return turn[:-len("<|im_end|>\n")]


def test_qwen3_template_turns_decode():
    info = vocab("qwen3")
    eos = "<|im_end|>"
    # Without reasoning the template writes an empty block, which the prompt of
    # enable_thinking=False already holds ("<think>\n\n</think>\n\n"): the output follows it.
    empty = "<think>\n\n</think>\n\n"
    one, two = qwen_turn(CALLS[:1]), qwen_turn(CALLS)
    assert one.startswith(empty) and two.startswith(empty)
    one, two = one[len(empty):], two[len(empty):]
    assert two.count("<tool_call>") == 2
    # The template writes the reasoning block of the last turn: "<think>\n...\n</think>\n\n";
    # a Thinking-2507 prompt opens it, so the output is what follows "<think>".
    thought = qwen_turn(CALLS, content="Checking.", reasoning="The user asks.")
    assert thought.startswith("<think>\n")
    inside = thought[len("<think>"):]
    for choice in ("auto", "required"):
        plain = get_model_structural_tag("qwen_3", tools=TOOLS, tool_choice=choice,
                                         reasoning=False)
        assert decode_ok(plain, info, one, eos) and decode_ok(plain, info, two, eos)
        think = get_model_structural_tag("qwen_3", tools=TOOLS, tool_choice=choice)
        assert decode_ok(think, info, inside, eos)
    plain = get_model_structural_tag("qwen_3", tools=TOOLS, reasoning=False)
    assert decode_ok(plain, info, "The answer is 42.", eos)
    assert not decode_ok(plain, info, two.replace("get_time", "get_tme"), eos)
    assert not decode_ok(plain, info, two.replace('"timezone"', '"tz"'), eos)
    assert not decode_ok(plain, info, one.replace("\n</tool_call>", "</tool_call>"), eos)
    single = get_model_structural_tag("qwen_3", tools=TOOLS, reasoning=False,
                                      parallel_tool_calls=False)
    assert decode_ok(single, info, one, eos)
    assert not decode_ok(single, info, two, eos)
    # forced and forbidden thinking
    forced = get_model_structural_tag("qwen_3", tools=TOOLS, thinking="forced")
    assert not decode_ok(forced, info, "</think>\n\n" + one, eos)
    assert decode_ok(forced, info, "x</think>\n\n" + one, eos)
    none = get_model_structural_tag("qwen_3", tools=TOOLS, thinking="forbidden")
    assert decode_ok(none, info, one, eos)
    assert not decode_ok(none, info, "x</think>\n\n" + one, eos)


def test_reasoning_then_json_answer():
    """reasoning + structured output: free reasoning up to </think>, then JSON only."""
    info = vocab("qwen3")
    schema = {"type": "object", "properties": {"city": {"type": "string"}},
              "required": ["city"], "additionalProperties": False}
    stag = get_model_structural_tag("qwen_3", tools=[], response_format=schema)
    assert decode_ok(stag, info, 'Think {"city": 1}.</think>\n\n{"city": "Paris"}', "<|im_end|>")
    assert not decode_ok(stag, info, "Think.</think>\n\nParis", "<|im_end|>")
    assert not decode_ok(stag, info, 'Think.</think>\n\n{"city": 1}', "<|im_end|>")


# ---- Harmony (gpt-oss) and Llama 3.1: the documented format --------------------------


def test_harmony_turns_decode_with_special_tokens():
    info = vocab("gptoss")
    stag = get_model_structural_tag("harmony", tools=TOOLS)
    call = ("<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant"
            "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>"
            '{"location": "Beijing"}<|call|>')
    final = ("<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant"
             "<|channel|>final<|message|>42<|return|>")
    assert decode_ok(stag, info, call) and decode_ok(stag, info, final)
    assert not decode_ok(stag, info, call.replace("get_weather", "get_wether"))
    assert not decode_ok(stag, info, call.replace('"Beijing"', "Beijing"))
    assert not decode_ok(stag, info, call.replace("<|constrain|>json", "<|constrain|>jsn"))
    specials = special_tokens_of(stag.special_token_candidates, info)
    assert {"<|channel|>", "<|message|>", "<|call|>", "<|end|>"} <= set(specials)
    compiled = xgr.GrammarCompiler(info).compile_structural_tag(stag)
    assert not xgr.GrammarMatcher(compiled).accept_string("<|channel|>")  # text, not the id
    # no analysis channel without reasoning; a response_format on the final channel
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    answer = get_model_structural_tag("harmony", tools=[], reasoning=False,
                                      response_format=schema)
    assert decode_ok(answer, info, '<|channel|>final<|message|>{"n": 42}<|return|>')
    assert not decode_ok(answer, info, "<|channel|>final<|message|>42<|return|>")
    assert not decode_ok(answer, info, final)


def test_llama_json_calls_decode():
    info = vocab("llama3")
    stag = get_model_structural_tag("llama", tools=TOOLS, tool_choice="required")
    call = '{"name": "get_time", "parameters": {"timezone": "UTC"}}'
    assert decode_ok(stag, info, call, "<|eot_id|>")
    assert not decode_ok(stag, info, "It is noon.", "<|eot_id|>")
    assert not decode_ok(stag, info, call.replace("get_time", "get_tim"), "<|eot_id|>")


# ---- every family: the XGrammar names, tool_choice, structure -----------------------


JSON_FAMILIES = ["llama", "qwen_3", "kimi", "deepseek_r1", "deepseek_v3_1", "harmony",
                 "exaone"]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("choice", ["auto", "required", "none", "named", "allowed"])
def test_every_family_builds(model, choice):
    tool_choice = {"named": {"type": "function", "function": {"name": "get_time"}},
                   "allowed": {"type": "allowed_tools", "allowed_tools": {
                       "mode": "required",
                       "tools": [{"type": "function", "function": {"name": "get_time"}}]}},
                   }.get(choice, choice)
    stag = get_model_structural_tag(model, tools=TOOLS, tool_choice=tool_choice)
    dump = stag.model_dump_json()
    if choice == "none":
        assert "get_time" not in dump and "get_weather" not in dump
    elif choice in ("named", "allowed"):
        assert "get_time" in dump and "get_weather" not in dump
    else:
        assert "get_time" in dump and "get_weather" in dump
    if model in JSON_FAMILIES:
        assert xgr.Grammar.from_structural_tag(stag) is not None


def test_normalize_tool_choice_errors():
    with pytest.raises(ValueError, match="must be a list"):
        normalize_tool_choice({"function": {}})
    with pytest.raises(ValueError, match="not found"):
        normalize_tool_choice(TOOLS, {"type": "function", "function": {"name": "nope"}})
    with pytest.raises(ValueError, match="required"):
        normalize_tool_choice([], "required")
    with pytest.raises(ValueError, match="tool_choice"):
        normalize_tool_choice(TOOLS, "sometimes")
    with pytest.raises(ValueError, match="Unknown format type"):
        get_model_structural_tag("llama4", tools=TOOLS)
    with pytest.raises(ValueError, match="thinking"):
        get_model_structural_tag("qwen_3", tools=TOOLS, thinking="maybe")


@pytest.mark.parametrize("model,turn,ok", [
    ("kimi", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_time:0"
             '<|tool_call_argument_begin|>{"timezone": "UTC"}<|tool_call_end|>'
             "<|tool_calls_section_end|>", True),
    ("kimi", '<|tool_call_begin|>functions.get_time:0<|tool_call_argument_begin|>'
             '{"timezone": "UTC"}<|tool_call_end|>', False),
    ("deepseek_v3_1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>"
                      '{"timezone": "UTC"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>', True),
    ("deepseek_v3_1", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>"
                      '{"timezone": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>', False),
    ("exaone", '<tool_call>{"name": "get_time", "arguments": {"timezone": "UTC"}}</tool_call>',
     True),
    ("exaone", '<tool_call>{"name": "get_time", "arguments": {"timezone": "UTC"}}', False),
])
def test_json_family_texts(model, turn, ok):
    """By text (no tokenizer of these models here): the format and its breakages."""
    stag = get_model_structural_tag(model, tools=TOOLS, reasoning=False)
    assert _is_grammar_accept_string(xgr.Grammar.from_structural_tag(stag), turn) == ok


# XML-argument families: strings raw, other types JSON, as their templates render them.
XML_TURNS = {
    "qwen_3_coder": ("<tool_call>\n<function=get_time>\n<parameter=timezone>\nUTC\n</parameter>\n"
                     "</function>\n</tool_call>"),
    "glm_4_7": "<tool_call>get_time<arg_key>timezone</arg_key><arg_value>UTC</arg_value></tool_call>",
    "minimax": ('\n</think>\n\n\n\n<minimax:tool_call>\n<invoke name="get_time">\n'
                '<parameter name="timezone">UTC</parameter>\n</invoke>\n</minimax:tool_call>'),
    "deepseek_v3_2": ('\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_time">\n'
                      '<｜DSML｜parameter name="timezone" string="true">UTC</｜DSML｜parameter>\n'
                      '</｜DSML｜invoke>\n</｜DSML｜function_calls>'),
}


@pytest.mark.parametrize("model", sorted(XML_TURNS))
def test_xml_family_texts(model):
    # auto: the trigger commits to a call, so a broken call is not free text either
    turn = XML_TURNS[model]
    stag = get_model_structural_tag(model, tools=TOOLS, reasoning=False)
    grammar = xgr.Grammar.from_structural_tag(stag)
    assert _is_grammar_accept_string(grammar, turn)
    assert not _is_grammar_accept_string(grammar, turn.replace("get_time", "get_tim"))
    assert not _is_grammar_accept_string(grammar, turn.replace("timezone", "tz"))


# The C presets (gramask tools --format FAMILY) and the Python builder agree on turns.
C_TURNS = {
    "qwen_3": ['<tool_call>\n{"name": "get_time", "arguments": {"timezone": "UTC"}}\n</tool_call>',
               'Hi.<tool_call>\n{"name": "get_time", "arguments": {"timezone": 1}}\n</tool_call>',
               "plain answer"],
    "deepseek_v3_1": ["<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>"
                      '{"timezone": "UTC"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>', "text",
                      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}"
                      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"],
    "glm_4_7": [XML_TURNS["glm_4_7"], "text", XML_TURNS["glm_4_7"].replace("UTC<", "<")],
    # reasoning off: the prompt opened Kimi K3's response block
    **{k3: ["Hi.<|close|>response<|sep|><|close|>message<|sep|>",
            '<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_time" index="1"'
            '<|sep|><|open|>argument key="timezone" type="string"<|sep|>UTC<|close|>argument'
            '<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>',
            '<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_time" index="1"'
            '<|sep|><|open|>argument key="timezone" type="number"<|sep|>1<|close|>argument'
            '<|sep|><|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>',
            "<|open|>response<|sep|>Hi.<|close|>response<|sep|><|close|>message<|sep|>"]
       for k3 in ("kimi_k3", "kimi_k3_xml")},
}


@pytest.mark.parametrize("model", sorted(C_TURNS))
@pytest.mark.parametrize("choice", ["auto", "required"])
def test_c_presets_agree_with_python(model, choice):
    py = xgr.Grammar.from_structural_tag(get_model_structural_tag(
        model, tools=TOOLS, tool_choice=choice, reasoning=False))
    c = xgr.Grammar.from_tools(TOOLS, model, tool_choice=choice, reasoning="forbidden")
    for turn in C_TURNS[model]:
        assert _is_grammar_accept_string(py, turn) == _is_grammar_accept_string(c, turn), turn


# Harmony's builtin tools in C (gramask tools --format harmony) and Python: a call is
# `<|channel|>commentary to=NAME code<|message|>ARGS<|call|>`, not on analysis.
BROWSER = {"type": "web_search_preview", "name": "browser.search",
           "parameters": {"type": "object", "properties": {"query": {"type": "string"}},
                          "required": ["query"]}}
HARMONY_BUILTIN_TURNS = [
    ('<|channel|>commentary to=browser.search code<|message|>{"query": "weather"}<|call|>', True),
    ('<|channel|>commentary to=browser.search code<|message|>{"q": "weather"}<|call|>', False),
    ('<|channel|>analysis to=browser.search<|message|>{"query": "weather"}<|call|>', False),
    ('<|channel|>commentary to=browser.open code<|message|>{"query": "weather"}<|call|>', False),
]


@pytest.mark.parametrize("turn,ok", HARMONY_BUILTIN_TURNS)
def test_harmony_builtin_tools_c_and_python(turn, ok):
    """Token by token with gpt-oss's tokenizer (the markers are its special tokens)."""
    info = vocab("gptoss")
    stag = get_model_structural_tag("harmony", tools=[BROWSER], reasoning=False)
    assert decode_ok(stag, info, turn) == ok
    compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_tools(
        [BROWSER], "harmony", reasoning="forbidden")
    m = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)
    mask = xgr.allocate_token_bitmask(1, info.vocab_size)
    accepted = True
    for i in info.encode(turn):
        m.fill_next_token_bitmask(mask)
        allowed = bool((int(mask[0][i // 32]) >> (i % 32)) & 1)
        assert allowed == m.accept_token(i)
        if not allowed:
            accepted = False
            break
    assert (accepted and m.is_terminated()) == ok
