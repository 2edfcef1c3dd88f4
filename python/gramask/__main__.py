"""``python -m gramask``: the CLI's demo (``gramask demo``) through the Python binding.

Compiles the bundled JSON grammar for a tokenizer (the bundled SentencePiece 32K one
unless ``--tokenizer`` says otherwise), tokenizes a bundled sample by greedy longest
match over the vocabulary, then decodes it token by token as an inference engine
would: fill the mask, check the token, accept it.
"""

import argparse
import os
import statistics
import sys
import time
from typing import List, Optional, Sequence

import numpy as np

import gramask as gm

from . import _core


def _data_path(rel: str) -> Optional[str]:
    for d in _core.DATA_DIRS.split(os.pathsep):
        if d and os.path.exists(os.path.join(d, rel)):
            return os.path.join(d, rel)
    return None


def _tokenize(info: gm.TokenizerInfo, text: bytes) -> List[int]:
    """Greedy longest match over the non-special tokens (any tokenization is a valid
    input to the matcher; real tokenizers produce others)."""
    eos = set(info.stop_token_ids)
    best = {}
    for t, b in enumerate(info.decoded_vocab):
        if not b or t in eos or (len(b) > 2 and b[:1] == b"<" and b[-1:] == b">"):
            continue
        best.setdefault(b, t)
    longest = max(len(b) for b in best)
    ids, pos = [], 0
    while pos < len(text):
        for n in range(min(longest, len(text) - pos), 0, -1):
            t = best.get(text[pos:pos + n])
            if t is not None:
                ids.append(t)
                pos += n
                break
        else:
            return []
    return ids


def _show(b: bytes) -> str:
    s = b[:16].decode("utf-8", "replace").replace("\n", "\\n").replace('"', '\\"')
    return f'"{s}"'


def _latency(ns: Sequence[int]) -> str:
    us = sorted(x / 1e3 for x in ns)
    p99 = us[min(len(us) - 1, int(0.99 * len(us)))]
    return (f"mean {statistics.fmean(us):.2f} us, p50 {us[len(us) // 2]:.2f} us, "
            f"p99 {p99:.2f} us, max {us[-1]:.2f} us")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m gramask", description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokenizer", help="tokenizer.json or a directory holding one")
    ap.add_argument("--grammar", default="json", help="a bundled grammar name (default json)")
    ap.add_argument("--sample", help="the text to decode (default: the bundled JSON sample)")
    ap.add_argument("--steps", type=int, default=12, help="steps to print")
    args = ap.parse_args(argv)
    tokenizer = args.tokenizer or _data_path("sp32k/tokenizer.json")
    sample = args.sample or _data_path("demo/sample.json")
    if not tokenizer or not sample:
        print(f"python -m gramask: the bundled data is missing (looked in {_core.DATA_DIRS!r}); "
              "give --tokenizer and --sample", file=sys.stderr)
        return 1
    print(f"gramask {gm.__version__} demo (Python): grammar '{args.grammar}', tokenizer {tokenizer}\n")
    try:
        t0 = time.perf_counter()
        info = gm.TokenizerInfo.from_file(tokenizer)
        t1 = time.perf_counter()
        compiler = gm.GrammarCompiler(info, cache_enabled=False)
        compiled = compiler.compile_bundled(args.grammar)
        t2 = time.perf_counter()
    except gm.GramaskError as e:
        print(f"python -m gramask: {e}", file=sys.stderr)
        return 1
    st = compiled.stats
    print(f"  tokenizer loaded         {1e3 * (t1 - t0):8.1f} ms  ({info.vocab_size} token ids)")
    print(f"  grammar compiled (lazy)  {1e3 * (t2 - t1):8.1f} ms  ({st['terminals']} terminals, "
          f"{st['lexer_states']} lexer states, {st['lr_states']} LALR states)")
    with open(sample, "rb") as f:
        raw = f.read()
    # A SentencePiece decoder drops the first space, so such vocabularies tokenize the
    # sample with one in front; keep whichever tokenization the grammar accepts in full.
    ids: List[int] = []
    for text in (b" " + raw, raw):
        ids = _tokenize(info, text)
        with gm.GrammarMatcher(compiled) as probe:
            if ids and probe.validate_tokens(ids) == len(ids):
                break
        ids = []
    if not ids:
        print("python -m gramask: the sample cannot be tokenized into tokens the grammar accepts",
              file=sys.stderr)
        return 1
    print(f"  sample                   {len(raw)} bytes, {len(ids)} tokens (greedy longest match)\n")

    bitmask = gm.allocate_token_bitmask(1, info.vocab_size)
    bits = np.asarray(bitmask).view(np.uint32)  # a torch tensor shares its memory
    eos = info.stop_token_ids
    ns: List[int] = []
    ok = eos_ok = True
    print("  step  next token        allowed tokens   mask time")
    with gm.GrammarMatcher(compiled) as m:
        for i in range(len(ids) + 1):
            t0 = time.perf_counter_ns()
            m.fill_next_token_bitmask(bitmask)
            ns.append(time.perf_counter_ns() - t0)
            allowed = int(sum(bin(int(w)).count("1") for w in bits[0]))
            if i == len(ids):
                eos_ok = any((bits[0][e // 32] >> (e % 32)) & 1 for e in eos)
                print(f"  {i:4d}  {'<end>':16s} {allowed:8d} / {info.vocab_size}  "
                      f"{ns[-1] / 1e3:7.1f} us   EOS {'allowed' if eos_ok else 'NOT allowed'}")
                break
            t = ids[i]
            if i < args.steps:
                print(f"  {i:4d}  {_show(info.token_bytes(t)):16s} {allowed:8d} / {info.vocab_size}  "
                      f"{ns[-1] / 1e3:7.1f} us")
            elif i == args.steps:
                print("   ...")
            if not (bits[0][t // 32] >> (t % 32)) & 1 or not m.accept_token(t):
                print(f"  step {i}: token {t} was not allowed")
                ok = False
                break
    print(f"\n  every sample token allowed: {'yes' if ok else 'NO'}; "
          f"EOS allowed at the end: {'yes' if eos_ok else 'NO'}")
    print(f"  mask time through Python (lazy tables: first uses build them): {_latency(ns)}")
    return 0 if ok and eos_ok else 1


if __name__ == "__main__":
    sys.exit(main())
