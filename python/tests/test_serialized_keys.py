"""Serialized grammars, tokenizer infos, compiled grammars and tokenizer metadata refuse a
key they do not have (issue 32 item 2: an unknown key is an error naming it, never
dropped), at the top and inside a grammar's spec, and still read back what they wrote."""
import json

import pytest

import gramask as xgr


def info():
    return xgr.TokenizerInfo(["a", "b", "</s>"], stop_token_ids=[2])


GRAMMARS = [
    lambda: xgr.Grammar.from_ebnf('root ::= "a" "b"*'),
    lambda: xgr.Grammar.from_regex("ab*"),
    lambda: xgr.Grammar.from_json_schema('{"type": "integer"}'),
    lambda: xgr.Grammar.union(xgr.Grammar.from_ebnf('root ::= "a"'),
                              xgr.Grammar.from_regex("b")),
]


@pytest.mark.parametrize("make", GRAMMARS)
def test_grammar_round_trip_and_unknown_keys(make):
    g = make()
    text = g.serialize_json()
    assert xgr.Grammar.deserialize_json(text).serialize_json() == text
    doc = json.loads(text)
    doc["bogus"] = 1
    with pytest.raises(xgr.DeserializeFormatError, match="/bogus: unknown key"):
        xgr.Grammar.deserialize_json(json.dumps(doc))
    doc = json.loads(text)
    doc["spec"]["valeu"] = 1
    with pytest.raises(xgr.DeserializeFormatError, match="/spec/valeu: unknown key"):
        xgr.Grammar.deserialize_json(json.dumps(doc))


def test_tokenizer_info_unknown_key():
    text = info().serialize_json()
    assert xgr.TokenizerInfo.deserialize_json(text).serialize_json() == text
    doc = json.loads(text)
    doc["bogus"] = 1
    with pytest.raises(xgr.DeserializeFormatError, match="/bogus: unknown key"):
        xgr.TokenizerInfo.deserialize_json(json.dumps(doc))


def test_compiled_grammar_unknown_key():
    ti = info()
    c = xgr.GrammarCompiler(ti).compile_grammar('root ::= "a" "b"*')
    text = c.serialize_json()
    back = xgr.CompiledGrammar.deserialize_json(text, ti)
    m = xgr.GrammarMatcher(back)
    assert m.accept_token(0) and m.accept_token(1)
    doc = json.loads(text)
    doc["bogus"] = 1
    with pytest.raises(xgr.DeserializeFormatError, match="/bogus: unknown key"):
        xgr.CompiledGrammar.deserialize_json(json.dumps(doc), ti)


def test_metadata_unknown_key():
    ti = info()
    meta = json.loads(ti.dump_metadata())
    back = xgr.TokenizerInfo.from_vocab_and_metadata(["a", "b", "</s>"], json.dumps(meta))
    assert back.stop_token_ids == [2]
    meta["stop_tokens_ids"] = [2]
    with pytest.raises(ValueError, match="stop_tokens_ids"):
        xgr.TokenizerInfo.from_vocab_and_metadata(["a", "b", "</s>"], json.dumps(meta))


def test_metadata_older_prefix_space_name():
    # XGrammar's earlier dump_metadata wrote prepend_space_in_tokenization
    # (its tests still do): the same meaning as add_prefix_space
    meta = {"vocab_type": 0, "vocab_size": 3, "prepend_space_in_tokenization": True,
            "stop_token_ids": [2]}
    back = xgr.TokenizerInfo.from_vocab_and_metadata(["a", "b", "</s>"], json.dumps(meta))
    assert back.add_prefix_space is True
    meta["add_prefix_space"] = False
    with pytest.raises(ValueError, match="disagree"):
        xgr.TokenizerInfo.from_vocab_and_metadata(["a", "b", "</s>"], json.dumps(meta))
