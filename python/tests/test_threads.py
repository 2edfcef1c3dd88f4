"""Threads: separate matchers of one compiled grammar used concurrently from Python
threads (fills release the GIL) give the same masks as one thread alone; the batch
fill on the C thread pool gives the same rows as single fills."""

import hashlib
import json
import threading

import numpy as np

import gramask as gm
from conftest import shared


def corpus(grammar, tokenizer, n, steps):
    with open(shared("corpus", grammar, f"ids.{tokenizer}.json")) as f:
        return [e["ids"][:steps] for e in json.load(f)[:n]]


def mask_digests(compiled, ids):
    """sha1 of each step's mask along a token sequence."""
    m = gm.GrammarMatcher(compiled)
    bm = gm.allocate_token_bitmask(1, compiled.vocab_size)
    out = []
    for t in ids:
        m.fill_next_token_bitmask(bm)
        out.append(hashlib.sha1(np.asarray(bm).tobytes()).hexdigest())
        assert m.accept_token(t)
    return out


def test_threads_share_one_compiled_grammar(llama3):
    # A fresh compiled grammar: its lazy tables are built by the threads, concurrently.
    compiled = gm.GrammarCompiler(llama3, cache_enabled=False).compile_bundled("python")
    seqs = corpus("python", "llama3", 4, 150)
    results = [None] * len(seqs)
    errors = []

    def work(i):
        try:
            results[i] = mask_digests(compiled, seqs[i])
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(seqs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    fresh = gm.GrammarCompiler(llama3, cache_enabled=False).compile_bundled("python")
    for i, ids in enumerate(seqs):
        assert results[i] == mask_digests(fresh, ids), f"sequence {i}"


def test_batch_fill_equals_single_fills(json_llama3):
    seqs = corpus("json", "llama3", 8, 120)
    n = 16
    # matcher i walks sequence i % 8 from offset 5 * (i // 8): all at different states
    walks = [seqs[i % 8][5 * (i // 8):] for i in range(n)]
    matchers = [gm.GrammarMatcher(json_llama3) for _ in range(n)]
    for m, i in zip(matchers, range(n)):
        assert m.validate_tokens(seqs[i % 8][:5 * (i // 8)]) == 5 * (i // 8)
        assert all(m.accept_token(t) for t in seqs[i % 8][:5 * (i // 8)])
    single = gm.allocate_token_bitmask(1, json_llama3.vocab_size)
    batch_mask = gm.allocate_token_bitmask(n + 2, json_llama3.vocab_size)
    rows = list(range(n + 1, 1, -1))  # scattered, reversed rows: the scratch path
    with gm.BatchGrammarMatcher(2) as batch:
        for step in range(100):
            indices = None if step % 2 else rows
            batch_mask[:] = 0
            batch.batch_fill_next_token_bitmask(matchers, batch_mask, indices)
            for i, m in enumerate(matchers):
                m.fill_next_token_bitmask(single)
                row = batch_mask[i if indices is None else indices[i]]
                assert np.array_equal(row, single[0]), (step, i)
            assert all(batch.batch_accept_token(matchers, [w[step] for w in walks]))
