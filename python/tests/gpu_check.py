#!/usr/bin/env python3
"""Masks on a GPU: checks gramask's apply_token_bitmask_inplace on CUDA tensors bit for
bit against the CPU reference (the C implementation, and the layout read in Python), and
times the apply.

    PYTHONPATH=python/lib python3 python/tests/gpu_check.py [--device cuda|cpu]
        [--tokenizer DIR] [--batch N] [--repeat N]

Without CUDA it says so and exits 0 (skipped) unless --device cpu is given: then the same
code path (gramask.bitmask_torch, the torch operations a GPU runs) is checked on CPU
tensors. The masks are real: a JSON Schema grammar's over a tokenizer of shared/tokenizers
(default: a random bitmask of the Llama-3 vocabulary size when no tokenizer is found).
Not a member of `make check` (no GPU there); run it wherever a GPU is at hand.
"""

import argparse
import os
import sys
import time


def _shared() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("GM_SHARED_DIR") or os.path.join(here, "..", "..", "..", "shared")


def real_bitmask(tokenizer: str, batch: int):
    """batch mask rows of a JSON Schema grammar along one instance (every row a real
    state); vocab size."""
    import gramask as gm
    info = gm.TokenizerInfo.from_file(tokenizer)
    schema = ('{"type": "object", "properties": {"name": {"type": "string"}, '
              '"tags": {"type": "array", "items": {"type": "integer"}}}}')
    matcher = gm.GrammarMatcher(gm.GrammarCompiler(info).compile_json_schema(schema))
    bitmask = gm.allocate_token_bitmask(batch, info.vocab_size)
    steps = info.encode('{"name": "gpu check", "tags": [1, 22, 333, 4444]}')
    for r in range(batch):
        matcher.fill_next_token_bitmask(bitmask, r)
        if r < len(steps):
            matcher.accept_token(steps[r])
    return bitmask, info.vocab_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--tokenizer", default=os.path.join(_shared(), "tokenizers", "llama3"))
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("SKIP: torch is not installed")
        return 0
    import gramask as gm
    from gramask.bitmask_torch import (allocate_pinned_token_bitmask, apply_token_bitmask_torch,
                                       reference_mask)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("SKIP: no CUDA device (torch.cuda.is_available() is False); "
              "run with --device cpu to check the same code path on CPU tensors")
        return 0
    device = torch.device(args.device)
    if os.path.exists(os.path.join(args.tokenizer, "tokenizer.json")):
        host_mask, vocab = real_bitmask(args.tokenizer, args.batch)
        source = f"JSON Schema masks, {os.path.basename(args.tokenizer)}"
    else:
        vocab = 128256
        host_mask = torch.randint(-2**31, 2**31 - 1, (args.batch, (vocab + 31) // 32),
                                  dtype=torch.int32, generator=torch.Generator().manual_seed(0))
        source = "random masks"
    # On a GPU gramask.apply_token_bitmask_inplace dispatches to the torch path; on CPU
    # tensors it would run the C one, so --device cpu calls the torch path itself.
    device_apply = apply_token_bitmask_torch if device.type == "cpu" else gm.apply_token_bitmask_inplace
    pinned = allocate_pinned_token_bitmask(args.batch, vocab)
    pinned.copy_(host_mask)
    width = vocab + 128  # model padding past the tokenizer: left as is
    failures = 0
    gen = torch.Generator().manual_seed(1)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        logits_host = torch.randn(args.batch, width, generator=gen).to(dtype)
        want = logits_host.clone()
        if dtype == torch.bfloat16:  # the C implementation's dtypes: check bf16 by layout
            apply_token_bitmask_torch(want, host_mask, vocab_size=vocab)
        else:
            gm.apply_token_bitmask_inplace(want, host_mask, vocab_size=vocab)
        logits = logits_host.to(device)
        device_apply(logits, pinned, vocab_size=vocab)  # the device path
        got = logits.cpu()
        if not torch.equal(got, want):
            failures += 1
            print(f"FAIL {dtype}: the device result differs from the CPU reference")
        for r in (0, args.batch - 1):
            ref = reference_mask(host_mask[r].tolist(), vocab)
            bits = tuple(x != float("-inf") for x in got[r, :vocab].tolist())
            if bits != ref:
                failures += 1
                print(f"FAIL {dtype} row {r}: allowed tokens differ from the bitmask layout")
        # Rows by index.
        logits = logits_host.to(device)
        rows = list(range(0, args.batch, 3))
        device_apply(logits, pinned, vocab_size=vocab, indices=rows)
        want = logits_host.clone()
        apply_token_bitmask_torch(want, host_mask, vocab_size=vocab, indices=rows)
        if not torch.equal(logits.cpu(), want):
            failures += 1
            print(f"FAIL {dtype}: rows by index differ")
    # Timing: the apply from the pinned host bitmask (copy + unpack + fill) and from a
    # bitmask already on the device.
    logits = torch.randn(args.batch, width, device=device)
    on_device = pinned.to(device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for label, bm in (("host pinned bitmask", pinned), ("device bitmask", on_device)):
        for _ in range(10):
            device_apply(logits, bm, vocab_size=vocab)
        sync()
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            device_apply(logits, bm, vocab_size=vocab)
        sync()
        us = (time.perf_counter() - t0) / args.repeat * 1e6
        print(f"apply {args.batch} x {vocab} float32 on {device} from a {label}: {us:.1f} us")
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"{'FAIL' if failures else 'PASS'}: {source}, {args.batch} rows, vocab {vocab}, "
          f"device {device} ({name}), torch {torch.__version__}: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
