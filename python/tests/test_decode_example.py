"""examples/decode.py runs (llama3 tokenizer, a seeded random "model") and what it
generates parses: the JSON output with json.loads (and has the schema's shape), the
Python output with ast.parse."""

import ast
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import SRCDIR, shared


def sections(out: str) -> dict:
    return dict(re.findall(r"^=== (.+?) ===\n(.*?)\n=== end ===$", out, re.S | re.M))


@pytest.mark.parametrize("seed", [1, 2])
def test_decode_example(seed):
    r = subprocess.run([sys.executable, os.path.join(SRCDIR, "examples", "decode.py"),
                        "--tokenizer", shared("tokenizers", "llama3"), "--seed", str(seed)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = sections(r.stdout)
    assert len(out) == 2, r.stdout
    doc = json.loads(out["json schema"])
    assert set(doc) == {"name", "age", "tags", "active"}
    assert isinstance(doc["name"], str) and len(doc["name"]) <= 12
    assert isinstance(doc["age"], int) and 0 <= doc["age"] <= 120
    assert isinstance(doc["active"], bool)
    assert len(doc["tags"]) <= 3 and set(doc["tags"]) <= {"red", "green", "blue"}
    ast.parse(out["python"])
