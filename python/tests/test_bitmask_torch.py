"""Masks applied with torch operations on the logits' device (gramask.bitmask_torch),
on CPU tensors: bit-exact against the layout (bit t % 32 of word t // 32, read in
Python) and the C implementation; on torch's "meta" device, which holds no data, the
path for GPUs runs without ever reading the logits on the host. The Hugging Face
LogitsProcessor on any batch size and on the device path."""

import pytest

torch = pytest.importorskip("torch")

import gramask as gm  # noqa: E402
from gramask.bitmask_torch import (allocate_pinned_token_bitmask, apply_token_bitmask_torch,  # noqa: E402
                                   reference_mask, unpack_token_bitmask)

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


def random_bitmask(rows, vocab, gen):
    return torch.randint(-2**31, 2**31 - 1, (rows, (vocab + 31) // 32), dtype=torch.int32,
                         generator=gen)


@pytest.mark.parametrize("vocab", [1, 31, 32, 33, 1000, 4099])
@pytest.mark.parametrize("dtype", DTYPES)
def test_apply_is_bit_exact_against_the_layout(vocab, dtype):
    gen = torch.Generator().manual_seed(vocab)
    bm = random_bitmask(3, vocab, gen)
    bm[0] = 0
    bm[1] = -1
    logits = torch.randn(3, vocab + 7, generator=gen).to(dtype)  # 7 padded columns
    ours = logits.clone()
    apply_token_bitmask_torch(ours, bm, vocab_size=vocab)
    for r in range(3):
        want = reference_mask(bm[r].tolist(), vocab)
        got = tuple(x != float("-inf") for x in ours[r, :vocab].tolist())
        assert got == want, r
        kept = torch.tensor(want)
        assert torch.equal(ours[r, :vocab][kept], logits[r, :vocab][kept])
        assert torch.equal(ours[r, vocab:], logits[r, vocab:])  # padding untouched
    c = logits.clone()
    gm.apply_token_bitmask_inplace(c, bm, vocab_size=vocab)  # the C implementation
    assert torch.equal(c, ours)
    # Rows by index, and one row.
    for indices in ([2, 0], [1], []):
        a, b = logits.clone(), logits.clone()
        apply_token_bitmask_torch(a, bm, vocab_size=vocab, indices=indices)
        gm.apply_token_bitmask_inplace(b, bm, vocab_size=vocab, indices=indices)
        assert torch.equal(a, b), indices
    a, b = logits[2].clone(), logits[2].clone()
    apply_token_bitmask_torch(a, bm[2], vocab_size=vocab)
    gm.apply_token_bitmask_inplace(b, bm[2], vocab_size=vocab)
    assert torch.equal(a, b)


def test_unpack_and_errors():
    bm = torch.tensor([[0b101, -2**31]], dtype=torch.int32)
    bits = unpack_token_bitmask(bm, 64)
    assert bits[0].nonzero().flatten().tolist() == [0, 2, 63]
    with pytest.raises(ValueError, match="needs 3 bitmask words"):
        unpack_token_bitmask(bm, 65)
    with pytest.raises(TypeError, match="int32"):
        unpack_token_bitmask(bm.to(torch.int64), 64)
    with pytest.raises(ValueError, match="rows"):
        apply_token_bitmask_torch(torch.zeros(2, 64), bm)
    with pytest.raises(IndexError, match="out of range"):
        apply_token_bitmask_torch(torch.zeros(2, 64), bm, indices=[1])
    with pytest.raises(ValueError, match="exceeds"):
        apply_token_bitmask_torch(torch.zeros(1, 64), bm, vocab_size=65)


def test_device_path_never_reads_logits_on_the_host():
    """torch's meta device has shapes but no data: any copy of the logits to the host, or
    the C path, fails there. gramask.apply_token_bitmask_inplace takes the torch path."""
    logits = torch.empty(4, 100, device="meta")
    bm = gm.allocate_token_bitmask(4, 100)  # on the host: copied to the device
    gm.apply_token_bitmask_inplace(logits, bm)
    gm.apply_token_bitmask_inplace(logits, bm, indices=[1, 3])
    with pytest.raises(Exception):
        logits.cpu().numpy()  # (what the device path must not do)


def test_pinned_bitmask_without_cuda():
    bm = allocate_pinned_token_bitmask(3, 70)
    assert bm.dtype == torch.int32 and tuple(bm.shape) == (3, 3) and int(bm.eq(-1).all()) == 1
    assert bm.is_pinned() == torch.cuda.is_available()


def _decode_batch(compiled, info, batch, device=None, pad=64, steps=40, seed=0):
    """Greedy decoding through LogitsProcessor with random scores (a 'model' that knows
    nothing of the grammar) and 64 padded columns scored highest; the text of each row."""
    proc = gm.LogitsProcessor(compiled, max_threads=1 if batch < 3 else 2)
    gen = torch.Generator().manual_seed(seed)
    ids = torch.zeros(batch, 1, dtype=torch.long)
    out = [[] for _ in range(batch)]
    for _ in range(steps):
        if proc.is_terminated():
            break
        scores = torch.randn(batch, info.vocab_size + pad, generator=gen)
        scores[:, info.vocab_size:] = 100.0  # model padding: must be masked
        if device is not None:
            scores = scores.to(device)
        scores = proc(ids, scores)
        live = [not m.is_terminated() for m in proc.matchers]  # after the last token's accept
        nxt = scores.argmax(dim=-1).cpu()
        for r in range(batch):
            if live[r]:
                out[r].append(int(nxt[r]))
        ids = torch.cat([ids, nxt.view(-1, 1)], dim=1)
    # The last sampled token of each row is accepted by one more call.
    proc(ids, torch.zeros(batch, info.vocab_size + pad))
    assert proc.is_terminated()
    eos = set(info.stop_token_ids)
    return [info.decode([t for t in row if t not in eos]).decode() for row in out]


@pytest.mark.parametrize("batch", [1, 3, 8])
def test_logits_processor_any_batch(batch, sp32k):
    import re
    regex = r"(yes|no|maybe)[0-9]{1,3}"
    compiled = gm.GrammarCompiler(sp32k).compile_regex(regex)
    texts = _decode_batch(compiled, sp32k, batch, seed=batch)
    assert len(texts) == batch
    for t in texts:
        assert re.fullmatch(regex, t), t


def test_logits_processor_masks_what_the_grammar_forbids(sp32k):
    """The 'model' prefers a token the grammar forbids: the mask makes the grammar win."""
    compiled = gm.GrammarCompiler(sp32k).compile_regex(r"[0-9]+")
    proc = gm.LogitsProcessor(compiled, max_threads=1)
    scores = torch.zeros(2, sp32k.vocab_size)
    scores[:, sp32k.encode("abc")[0]] = 100.0
    masked = proc(torch.zeros(2, 1, dtype=torch.long), scores)
    for r in range(2):
        assert torch.isinf(masked[r, sp32k.encode("abc")[0]])
        assert set(sp32k.decode([int(masked[r].argmax())])) <= set(b"0123456789")


def test_gpu_check_script_runs_on_cpu():
    """python/tests/gpu_check.py (run by hand where a GPU is) on CPU tensors: the same
    torch path, checked against the C implementation and the layout."""
    import os
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "gpu_check.py")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([sys.executable, script, "--device", "cpu", "--batch", "5", "--repeat", "2"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS: JSON Schema masks" in r.stdout and "0 failures" in r.stdout, r.stdout
