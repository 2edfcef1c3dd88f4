#!/usr/bin/env python3
"""Constrained decoding with gramask's Python API: a JSON Schema and the Python grammar.

A decoding loop as an inference engine runs it, with a real tokenizer (Llama 3's) and,
since no model weights can be downloaded here, a seeded random source of logits in the
place of the model. At every step the grammar's mask sets the logits of every token
that would break the grammar to -inf before sampling, so whatever the "model" says,
the output is a JSON document valid under the schema, or a Python program.

    python3 examples/decode.py [--tokenizer DIR] [--seed N] [--json-only | --python-only]

Prints each output between "=== <kind> ===" and "=== end ===" lines (the test suite
parses them with json.loads and ast.parse).
"""

import argparse
import os
import sys
import time

import numpy as np

import gramask as gm

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age", "tags", "active"],
    "additionalProperties": False,
}

class RandomModel:
    """Stands in for a language model: logits for the next token, here seeded noise.

    Two biases play the part of what a model knows: short ASCII tokens are preferred
    (so the text is readable), and after `budget` tokens EOS and tokens made only of
    closing characters (quotes, brackets, newlines) are raised, so outputs end. A real
    model needs none of this; the grammar's mask is what keeps the output valid.
    """

    def __init__(self, info: gm.TokenizerInfo, seed: int, budget: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.vocab_size = info.vocab_size
        self.budget = budget
        self.eos = info.stop_token_ids
        closers = set(b")]}\"'")
        vocab = info.decoded_vocab
        self.closing = np.array([bool(b) and all(c in closers for c in b) for b in vocab])
        self.newline = np.array([b == b"\n" for b in vocab])
        self.prior = np.array([3.0 if b and len(b) <= 6 and all(32 <= c < 127 for c in b) else 0.0
                               for b in vocab], dtype=np.float32)

    def logits(self, input_ids: list, step: int) -> np.ndarray:
        # A real model goes here:  logits = model(input_ids).logits[0, -1]  (float32, (V,))
        logits = self.rng.standard_normal(self.vocab_size).astype(np.float32) * 2.0 + self.prior
        if step >= self.budget:
            logits[self.closing] += 8.0
            logits[self.newline] += 4.0
            logits[self.eos] += 12.0
        return logits


def sample(logits: np.ndarray, rng: np.random.Generator, temperature: float = 1.0) -> int:
    """Softmax sampling; masked tokens have logit -inf, hence probability 0."""
    z = logits / temperature
    z = np.exp(z - z.max())
    return int(rng.choice(len(z), p=z / z.sum()))


def generate(compiled: gm.CompiledGrammar, info: gm.TokenizerInfo, model: RandomModel,
             max_tokens: int) -> str:
    matcher = gm.GrammarMatcher(compiled)
    bitmask = gm.allocate_token_bitmask(1, info.vocab_size)
    ids = []
    mask_us = []
    while not matcher.is_terminated():
        if len(ids) >= max_tokens:
            raise RuntimeError(f"no end after {max_tokens} tokens: {info.decode(ids)[-300:]!r}")
        logits = model.logits(ids, len(ids))
        t0 = time.perf_counter()
        matcher.fill_next_token_bitmask(bitmask)
        mask_us.append((time.perf_counter() - t0) * 1e6)
        gm.apply_token_bitmask_inplace(logits, bitmask[0])
        token = sample(logits, model.rng)
        if not matcher.accept_token(token):  # cannot happen: the token was allowed
            raise RuntimeError(f"token {token} was rejected")
        ids.append(token)
    text = info.decode([t for t in ids if t not in info.stop_token_ids]).decode("utf-8")
    print(f"  {len(ids)} tokens, mask fill mean {np.mean(mask_us):.1f} us "
          f"(p50 {np.median(mask_us):.1f} us)", file=sys.stderr)
    return text


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", default=os.path.join(here, "..", "..", "shared", "tokenizers",
                                                        "llama3"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json-only", action="store_true")
    ap.add_argument("--python-only", action="store_true")
    args = ap.parse_args()

    info = gm.TokenizerInfo.from_file(args.tokenizer)
    compiler = gm.GrammarCompiler(info)

    if not args.python_only:
        # indent=2: the layout of json.dumps(indent=2) (default: JSON's free whitespace)
        compiled = compiler.compile_json_schema(SCHEMA, indent=2)
        model = RandomModel(info, args.seed, budget=40)
        print("=== json schema ===")
        print(generate(compiled, info, model, max_tokens=400))
        print("=== end ===")

    if not args.json_only:
        compiled = compiler.compile_bundled("python")
        model = RandomModel(info, args.seed + 1, budget=30)
        print("=== python ===")
        print(generate(compiled, info, model, max_tokens=600))
        print("=== end ===")
    return 0


if __name__ == "__main__":
    sys.exit(main())
