"""No leaks under a long loop: creating, using, forking and dropping matchers, compiled
grammars, batches and failing calls thousands of times keeps both the Python heap
(tracemalloc) and the process's resident memory (C allocations) flat."""

import gc
import os
import tracemalloc

import pytest

import gramask as gm
from conftest import SANITIZERS

WARM, LOOP = (300, 1500) if SANITIZERS else (1500, 6000)


def rss_kb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def churn(compiler, compiled, bitmask, i):
    with gm.GrammarMatcher(compiled, max_rollback_tokens=8) as m:
        m.accept_string('{"k": [1, 2')
        f = m.fork()
        f.fill_next_token_bitmask(bitmask)
        f.accept_string(", 3]}")
        m.rollback(1)
        m.find_jump_forward_string()
        m.validate_tokens([1, 2, 3])
    g = gm.GrammarMatcher(compiled)  # dropped without close: the GC frees it
    g.accept_string("[")
    try:
        g.accept_token(10**6)
    except gm.ArgumentError:
        pass
    try:
        gm.Grammar.from_lark('start: "a" b')
    except gm.GrammarError:
        pass
    if i % 10 == 0:
        text = 'start: "x" NUM*\nNUM: /[0-9]+/\n%ignore " "\n'
        c = compiler.compile_lark(text + f"// {i}\n")  # a new grammar each time
        gm.GrammarMatcher(c).accept_string("x 12 3")
        compiler.clear_cache()
    if i % 50 == 0:
        with gm.BatchGrammarMatcher(2) as b:
            b.batch_fill_next_token_bitmask([gm.GrammarMatcher(compiled)], bitmask)


def test_long_loop_is_flat(json_sp32k, sp32k):
    compiler = gm.GrammarCompiler(sp32k)
    bitmask = gm.allocate_token_bitmask(1, 32000)
    # Traced from before the warm-up: objects that Python's free lists keep (tuples,
    # floats...) are then counted in py0 already. Started after it, the free lists
    # refilling with traced objects during the loop read as growth (about 25 KB with
    # the whole suite run before this test), which is no leak.
    tracemalloc.start()
    for i in range(WARM):  # warm up: lazy tables, allocator pools, caches
        churn(compiler, json_sp32k, bitmask, i)
    gc.collect()
    py0 = tracemalloc.get_traced_memory()[0]
    rss0 = rss_kb()
    for i in range(LOOP):
        churn(compiler, json_sp32k, bitmask, i)
    gc.collect()
    py1 = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    rss1 = rss_kb()
    assert py1 - py0 < 64 * 1024, f"Python heap grew by {py1 - py0} bytes"
    if not SANITIZERS:  # ASan's quarantine grows by design
        assert rss1 - rss0 < 4 * 1024, f"RSS grew by {rss1 - rss0} KB over {LOOP} iterations"
