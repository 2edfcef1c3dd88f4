"""Masks through Python equal the C library's (`gramask trace --dump-masks`) on real
tokenizations of real files (../shared/corpus), for several grammars and tokenizers.
The first steps of each file are compared (the dumps of whole files run to gigabytes);
every step also checks that the true next token is allowed."""

import json
import os

import numpy as np
import pytest

import gramask as gm
from conftest import SANITIZERS, allowed, dumped_ids, run_gramask, shared

STEPS = 40 if SANITIZERS else 80

CASES = [
    ("json", "sp32k", 3),
    ("gbnf:json.gbnf", "llama3", 2),  # llama.cpp's JSON grammar on the Earley engine
    ("json", "llama3", 2),
    ("python", "llama3", 2),
    ("go", "sp32k", 2),
    ("java", "qwen3", 1),
]


@pytest.mark.parametrize("grammar,tokenizer,nfiles", CASES)
def test_masks_equal_cli_dump(tmp_path, grammar, tokenizer, nfiles):
    lang = "json" if grammar.startswith("gbnf:") else grammar
    with open(shared("corpus", lang, f"ids.{tokenizer}.json")) as f:
        entries = json.load(f)[:nfiles]
    for e in entries:
        e["ids"] = e["ids"][:STEPS]
    ids_path = tmp_path / "ids.json"
    ids_path.write_text(json.dumps(entries))
    dump = tmp_path / "masks.jsonl"
    tok_dir = shared("tokenizers", tokenizer)
    if grammar.startswith("gbnf:"):
        grammar = shared("grammars", "gbnf", grammar[5:])
    r = run_gramask("trace", grammar, "--tokenizer", tok_dir, "--ids", str(ids_path),
                    "--dump-masks", str(dump), cwd=str(tmp_path))
    # Exit status 1 is expected: the cut files do not end where EOS is allowed.
    assert r.returncode in (0, 1), r.stderr
    with open(dump) as f:
        reference = [json.loads(line) for line in f]

    info = gm.TokenizerInfo.from_file(tok_dir)
    compiler = gm.GrammarCompiler(info)
    compiled = (compiler.compile_file(grammar) if os.path.isabs(grammar)
                else compiler.compile_bundled(grammar))
    bitmask = gm.allocate_token_bitmask(2, info.vocab_size)
    steps = 0
    for e in entries:
        rows = [x for x in reference if x["file"] == e["file"]]
        assert len(rows) == len(e["ids"]) + 1
        with gm.GrammarMatcher(compiled) as m:
            for step, row in enumerate(rows):
                # Row 1 of a two-row bitmask: the index is honoured.
                bitmask[1] = 0
                m.fill_next_token_bitmask(bitmask, 1)
                got = allowed(bitmask[1])
                eos = got & set(info.stop_token_ids)  # the dump lists EOS apart
                assert got - eos == dumped_ids(row), f"{e['file']} step {step}"
                assert bool(eos) == row["eos"], f"{e['file']} step {step}"
                assert row["step"] == step
                if step < len(e["ids"]):
                    assert e["ids"][step] in got
                    assert m.accept_token(e["ids"][step])
                steps += 1
    assert steps > nfiles * 10
