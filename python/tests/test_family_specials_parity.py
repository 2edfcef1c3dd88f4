"""The model-family presets in C (``Grammar.from_tools``, dispatch/tool_families.c) and in
Python (``get_model_structural_tag``) give the same masks on the real tokenizers of
../shared/tokenizers, special tokens included (issue 37 item 4): both declare the
family's delimiters as ``special_token_candidates``, which the C compiler resolves
against the vocabulary (note [special token candidates] in runtime/stag_source.c).

For every family and tokenizer, random walks through the C grammar (each token
drawn from its mask, a delimiter's id preferred when one is allowed, so the walks go
through calls) compare the two masks at every step and the end of the turn.
"""

import json
import os
import random
import re

import numpy as np
import pytest

import gramask as xgr
from gramask.builtin_structural_tag import get_model_structural_tag

from conftest import shared

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "parameters": {
        "type": "object", "properties": {"location": {"type": "string"},
                                         "days": {"type": "integer"}},
        "required": ["location"], "additionalProperties": False}}}]
TOKENIZERS = ["llama3", "qwen3", "gptoss", "deepseek_v3", "gemma3"]
# Python's name -> C's (XGrammar's "llama" is gramask's llama-json)
FAMILIES = {"llama": "llama-json", "qwen_3": "qwen_3", "qwen_3_5": "qwen_3_5",
            "qwen_3_coder": "qwen_3_coder", "kimi": "kimi", "kimi_k3": "kimi_k3",
            "kimi_k3_xml": "kimi_k3_xml", "deepseek_r1": "deepseek_r1",
            "deepseek_v3_1": "deepseek_v3_1", "deepseek_v3_2": "deepseek_v3_2",
            "deepseek_v4": "deepseek_v4", "glm_4_7": "glm_4_7", "minimax": "minimax",
            "cohere": "cohere", "exaone": "exaone"}
# one short walk in `make check`; `make check-family-parity` walks more (GM_PARITY_WALKS)
WALKS = int(os.environ.get("GM_PARITY_WALKS", "1"))
STEPS = 40

_infos = {}


def info_of(name):
    if name not in _infos:
        _infos[name] = xgr.TokenizerInfo.from_file(
            shared("tokenizers", name), stop_token_ids=[128009] if name == "llama3" else None)
    return _infos[name]


def allowed_ids(mask, n):
    bits = np.unpackbits(np.ascontiguousarray(mask[0]).view(np.uint8), bitorder="little")
    return np.flatnonzero(bits[:n])


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
@pytest.mark.parametrize("model", sorted(FAMILIES))
def test_c_and_python_masks_agree(model, tokenizer):
    info = info_of(tokenizer)
    compiler = xgr.GrammarCompiler(info, cache_enabled=False)
    stag = get_model_structural_tag(model, tools=TOOLS, tool_choice="auto", reasoning=True)
    py = compiler.compile_structural_tag(stag)
    c = compiler.compile_tools(TOOLS, FAMILIES[model], tool_choice="auto", reasoning="allowed")
    delims = set()
    for text in stag.special_token_candidates:
        ids = info.encode(text)
        if len(ids) == 1:
            delims.add(ids[0])
    rng = random.Random(f"{model}/{tokenizer}")
    n = info.vocab_size
    for _ in range(WALKS):
        mc = xgr.GrammarMatcher(c, terminate_without_stop_token=True)
        mp = xgr.GrammarMatcher(py, terminate_without_stop_token=True)
        bc = xgr.allocate_token_bitmask(1, n)
        bp = xgr.allocate_token_bitmask(1, n)
        for step in range(STEPS):
            if mc.is_terminated():
                break
            mc.fill_next_token_bitmask(bc)
            mp.fill_next_token_bitmask(bp)
            ids = allowed_ids(bc, n)
            if not np.array_equal(np.asarray(bc), np.asarray(bp)):
                only_c = set(ids.tolist()) - set(allowed_ids(bp, n).tolist())
                only_py = set(allowed_ids(bp, n).tolist()) - set(ids.tolist())
                pytest.fail(f"step {step}: masks differ: C only {sorted(only_c)[:8]}, "
                            f"Python only {sorted(only_py)[:8]}")
            assert len(ids), f"step {step}: no token allowed"
            special = [i for i in ids.tolist() if i in delims]
            tok = rng.choice(special) if special and rng.random() < 0.6 else \
                int(ids[rng.randrange(len(ids))])
            assert mc.accept_token(tok) and mp.accept_token(tok)


@pytest.mark.parametrize("value, where", [
    (5, "/special_token_candidates: expected an array"),
    ([1], "/special_token_candidates/0: expected a non-empty string"),
    ([""], "/special_token_candidates/0: expected a non-empty string"),
])
def test_bad_candidates_are_located_errors(value, where):
    doc = {"type": "structural_tag", "format": {"type": "const_string", "value": "a"},
           "special_token_candidates": value}
    with pytest.raises(xgr.FormatError, match=re.escape(where)):
        xgr.Grammar.from_structural_tag(json.dumps(doc))
