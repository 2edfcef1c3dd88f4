"""Messages of issue 33 item 7 and the missing stop token of issue 32 item 5: no silent
all-zero masks, no C function names, misuse that raises rather than returns."""

import shutil

import numpy as np
import pytest

import gramask as gm
from conftest import allowed, shared


def test_no_stop_token_is_an_error_unless_asked(tmp_path):
    # A tokenizer.json alone (no tokenizer_config.json, no generation_config.json): no EOS.
    shutil.copy(shared("tokenizers", "sp32k", "tokenizer.json"), tmp_path / "tokenizer.json")
    info = gm.TokenizerInfo.from_file(str(tmp_path))
    assert list(info.stop_token_ids) == []
    compiled = gm.GrammarCompiler(info).compile_regex("[0-9]+")
    with pytest.raises(gm.ArgumentError, match="no stop token") as e:
        gm.GrammarMatcher(compiled)
    assert "terminate_without_stop_token" in str(e.value)
    m = gm.GrammarMatcher(compiled, terminate_without_stop_token=True)
    assert m.accept_string("12")
    assert m.is_accepting()
    mask = gm.allocate_token_bitmask(1, info.vocab_size)
    m.fill_next_token_bitmask(mask)
    assert allowed(mask[0])  # more digits still allowed


def test_generation_config_gives_the_stop_tokens(tmp_path):
    shutil.copy(shared("tokenizers", "sp32k", "tokenizer.json"), tmp_path / "tokenizer.json")
    (tmp_path / "generation_config.json").write_text('{"eos_token_id": [2, 1]}')
    info = gm.TokenizerInfo.from_file(str(tmp_path))
    assert sorted(info.stop_token_ids) == [1, 2]
    m = gm.GrammarMatcher(gm.GrammarCompiler(info).compile_regex("[0-9]+"))
    assert m.accept_string("7")
    mask = gm.allocate_token_bitmask(1, info.vocab_size)
    m.fill_next_token_bitmask(mask)
    assert {1, 2} <= allowed(mask[0])


def test_no_c_function_names(tmp_path):
    bad = tmp_path / "x.gmc"
    bad.write_bytes(b"not a compiled file")
    with pytest.raises(gm.GramaskError) as e:
        gm.CompiledGrammar.load(str(bad))
    assert "gm_" not in str(e.value), str(e.value)


def test_bitmask_longer_than_logits_raises(json_sp32k):
    mask = gm.allocate_token_bitmask(1, 32000)
    logits = np.zeros((1, 100), dtype=np.float32)
    with pytest.raises(ValueError, match="bitmask has"):
        gm.apply_token_bitmask_inplace(logits, mask)
    gm.apply_token_bitmask_inplace(logits, mask, vocab_size=100)  # said explicitly: fine


def test_validate_tokens_flags_a_bad_id(json_sp32k):
    m = gm.GrammarMatcher(json_sp32k)
    with pytest.raises(ValueError, match="out of range"):
        m.validate_tokens([10**6])
