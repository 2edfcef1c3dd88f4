#!/usr/bin/env python3
"""Writes texts.json: the texts of tests/test_encode.c's reference comparison.

Run: python3 tests/data/encode/make_texts.py > tests/data/encode/texts.json
Then the reference ids (Hugging Face tokenizers 0.22.2, through the npm package
@anush008/tokenizers, which wraps the Rust crate):
    npm install @anush008/tokenizers
    for t in sp32k llama3 qwen3 gptoss; do
      node tests/data/encode/reference.js ../shared/tokenizers/$t \
           tests/data/encode/texts.json > tests/data/encode/ids.$t.json
    done
Deterministic (fixed seed). Three kinds of text: Harmony-format chat texts
(gpt-oss special tokens: <|start|>, <|channel|>, <|message|>, <|end|>, ...),
chat texts of the other tokenizers' special tokens, and random mixtures of
pieces chosen to exercise the pre-tokenizer regexes, NFC, byte fallback and
the added-token matcher (whitespace runs, contractions, Unicode letters and
marks, digits, emoji, lone special-token fragments).
"""
import json
import random
import unicodedata

HARMONY = [
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
    "Knowledge cutoff: 2024-06\nCurrent date: 2025-08-05\n\nReasoning: medium\n\n"
    "# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>",
    "<|start|>user<|message|>What is 2 + 2?<|end|><|start|>assistant<|channel|>analysis<|message|>"
    "User asks a simple arithmetic question. The answer is 4.<|end|><|start|>assistant<|channel|>final"
    "<|message|>2 + 2 = 4.<|return|>",
    "<|start|>developer<|message|># Instructions\n\nAlways answer in riddles.\n\n# Tools\n\n## functions\n\n"
    "namespace functions {\n\n// Gets the current weather in the provided location.\ntype get_current_weather = (_: {\n"
    "// The city and state, e.g. San Francisco, CA\nlocation: string,\nformat?: \"celsius\" | \"fahrenheit\", // default: celsius\n"
    "}) => any;\n\n} // namespace functions<|end|>",
    "<|start|>assistant<|channel|>commentary to=functions.get_current_weather <|constrain|>json<|message|>"
    "{\"location\":\"San Francisco\"}<|call|>",
    "<|start|>functions.get_current_weather to=assistant<|channel|>commentary<|message|>"
    "{\"sunny\": true, \"temperature\": 20}<|end|>",
    "<|start|>assistant<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    "{\"location\": \"Tokyo\", \"unit\": \"celsius\"}<|call|>",
    "<|start|>assistant<|channel|>final<|message|>```python\ndef f(x):\n    return x * 2\n```\n<|return|>",
    "<|start|>user<|message|>Écris un haïku sur l'été — s'il te plaît.<|end|><|start|>assistant<|channel|>final<|message|>"
    "Chaleur de juillet\nles cigales chantent fort\nl'ombre est un trésor<|end|>",
    "<|startoftext|><|start|>user<|message|>日本語で答えてください。<|end|><|endofprompt|>",
    "text with a broken <|start tag and <|end|> pieces: <|message|><|message|>  <|channel|>\n\n<|end|>",
]

CHAT = [
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\nCall the tool.<|im_end|>\n<|im_start|>assistant\n"
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>",
    "<s>[INST] What is the capital of France? [/INST] Paris.</s><s>[INST] And Spain? [/INST]",
    "<|fim_prefix|>def add(a, b):\n<|fim_suffix|>\n    return c<|fim_middle|>    c = a + b<|endoftext|>",
]

PIECES = [
    "the", "The", "HELLO", "x", "foo_bar", "fooBar", "camelCaseWord", "123", "4567890", "3.14",
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n ", "\n  ", "'s", "'S", "'\u017f", "'re", "'LL",
    "'d", "n't", "\u00e9", "e\u0301", "\u00c5", "A\u030a", "\u00df", "na\u00efve", "\u03a9\u03bc\u03ad\u03b3\u03b1",
    "\u043f\u0440\u0438\u0432\u0435\u0442", "\u65e5\u672c\u8a9e", "\ud55c\uad6d\uc5b4", "\u1100\u1161\u11a8",
    "\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f1eb\U0001f1f7", "\u00a0", "\u2003", "\u3000", "\u0085",
    "\ufeff", "\u200b", "\u2028", "\u00bf", "\u2014", "\u2026", "\u20ac", "\u00bd", "\u00b2", "\u0663",
    "\u216b", "\u2460", "{", "}", "(", ")", "[", "]", ";", ":", ",", ".", "!", "?", "\"", "'", "`", "/",
    "//", "/*", "*/", "#", "$", "%", "^", "&", "*", "-", "+", "=", "<", ">", "|", "\\", "~", "@", "_",
    "<|endoftext|>", "<|im_start|>", "<tool_call>", "<|eot_id|>", "<s>", "</s>", "<unk>", "<|start|>",
    "<|channel|>", "<|message|>", "<|end|>", "<|", "|>", "<|im", "\u01c5", "\u02b0", "\ufb01", "\u0130",
    "\u0131", "\u212a", "\u0300", "\u0345", "x\u0301y", "http://example.com/path?q=1", "a/b/c", "////",
    "\n/", "\r", "\x0b", "\x0c", "\x1f", "\x7f", "\u00ad", "\U000f88cc", "\u1f4d",
]


def main():
    rnd = random.Random(20)
    texts = [{"name": "harmony%02d" % i, "text": t} for i, t in enumerate(HARMONY)]
    texts += [{"name": "chat%02d" % i, "text": t} for i, t in enumerate(CHAT)]
    for i in range(160):
        s = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 40)))
        texts.append({"name": "mix%03d" % i, "text": s})
    for i in range(60):
        cs = []
        for _ in range(rnd.randint(1, 50)):
            r = rnd.random()
            if r < 0.4:
                cs.append(chr(rnd.randint(0x20, 0x7e)))
            elif r < 0.5:
                cs.append(rnd.choice(" \t\n\r\x0b\x0c"))
            elif r < 0.8:
                cs.append(chr(rnd.randint(0x80, 0x2fff)))
            else:
                c = rnd.randint(0x3000, 0x10ffff)
                cs.append(chr(c if not 0xd800 <= c <= 0xdfff else 0x4e00))
            # tokenizers' Oniguruma has Unicode 16 data, utf8proc 15: keep to characters
            # whose category both agree on (assigned by Unicode 14, Python's, or private use)
            if unicodedata.category(cs[-1]) == "Cn":
                cs[-1] = "?"
        texts.append({"name": "uni%03d" % i, "text": "".join(cs)})
    print(json.dumps(texts, ensure_ascii=True, indent=0))


main()
