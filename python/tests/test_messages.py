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
        gm.GrammarMatcher(compiled)  # a tokenizer.json whose EOS is unknown: not silent
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
    # every id allowed: ids 100.. have no column, so it is another vocabulary's mask
    with pytest.raises(ValueError, match="allows token 100 but the logits have only 100"):
        gm.apply_token_bitmask_inplace(logits, mask)
    gm.apply_token_bitmask_inplace(logits, mask, vocab_size=100)  # said explicitly: fine
    # a wider bitmask whose tail allows nothing (XGrammar's usual case) masks the columns
    mask[:] = 0
    mask[0, 0] = 0b101
    logits[:] = 1.0
    gm.apply_token_bitmask_inplace(logits, mask)
    assert np.isfinite(logits[0]).nonzero()[0].tolist() == [0, 2]
    mask[0, 999] = 1 << 5  # id 31973 allowed
    with pytest.raises(ValueError, match="allows token 31973"):
        gm.apply_token_bitmask_inplace(logits, mask)


def test_validate_tokens_flags_a_bad_id(json_sp32k):
    m = gm.GrammarMatcher(json_sp32k)
    with pytest.raises(ValueError, match="out of range"):
        m.validate_tokens([10**6])


def test_stop_tokens_chosen_by_the_caller():
    # XGrammar's constructor: stop_token_ids=[] is the caller's choice (matching text), so
    # matchers are made; no stop id given and none detected warns.
    info = gm.TokenizerInfo(["a", "b"], stop_token_ids=[])
    m = gm.GrammarMatcher(gm.GrammarCompiler(info).compile_regex("ab"))
    assert m.accept_string("ab") and m.is_accepting() and not m.is_terminated()
    with pytest.warns(UserWarning, match="no stop token given"):
        info = gm.TokenizerInfo(["a", "b"])
    assert list(info.stop_token_ids) == []
    with pytest.warns(UserWarning, match="no stop token given"):
        gm.TokenizerInfo(["x"])
    assert list(gm.TokenizerInfo(["a", "</s>"]).stop_token_ids) == [1]
