"""Draft trees from Python (issue 35 item 6): GrammarMatcher.traverse_draft_tree (one C call)
against the loop engines run in Python today (SGLang's traverse_tree over XGrammar: per node,
check the parent's mask bit, accept_token, fill_next_token_bitmask, recurse, rollback), on
random trees of 8, 32 and 64 nodes over Llama 3's vocabulary, a JSON Schema and an EBNF
grammar. Masks of both are compared (a difference exits 1). Time per tree: the best of RUNS
passes over TREES trees (process CPU time), after a warm-up pass.

usage: bench_draft_tree.py --shared DIR [--out FILE]
"""

import argparse
import json
import os
import random
import sys
import time

import numpy as np

import gramask as gm

RUNS, TREES = 5, 20
SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 40},
                         "age": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"enum": ["a", "bc", "def"]}},
                         "ok": {"type": "boolean"}},
          "required": ["name", "age"]}
EBNF = """root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= [0-9]+ | "(" expr ")" | [a-z]+ | "-" factor
"""


def allowed_ids(row):
    return np.flatnonzero(np.unpackbits(np.ascontiguousarray(row).view(np.uint8),
                                        bitorder="little"))


def random_tree(matcher, n, rng, eos):
    mask = gm.allocate_token_bitmask(1, matcher.vocab_size)
    states, parent, tokens = [matcher.fork()], [-1], [0]
    for i in range(1, n):
        live = [j for j in range(i) if states[j] is not None and not states[j].is_terminated()]
        p = rng.choice(live) if live and rng.randrange(8) else rng.randrange(i)
        r, token = rng.randrange(20), rng.randrange(matcher.vocab_size)
        if r == 0:
            token = eos
        elif r < 15 and states[p] is not None and not states[p].is_terminated():
            states[p].fill_next_token_bitmask(mask)
            ids = allowed_ids(mask[0])
            if len(ids):
                token = int(rng.choice(ids))
        parent.append(p)
        tokens.append(token)
        child = states[p].fork() if states[p] is not None else None
        states.append(child if child is not None and child.accept_token(token) else None)
    nt, ns, last = [-1] * n, [-1] * n, {}
    for i in range(1, n):
        p = parent[i]
        if p in last:
            ns[last[p]] = i
        else:
            nt[p] = i
        last[p] = i
    return (np.array(nt, np.int64), np.array(ns, np.int64), np.array(tokens, np.int64))


def loop(matcher, tree, rows):
    """SGLang's traverse_tree shape: the parent's bit, accept, fill, children, rollback."""
    nt, ns, draft = tree[0].tolist(), tree[1].tolist(), tree[2].tolist()
    rows.fill_(0) if hasattr(rows, "fill_") else rows.fill(0)

    def visit(node, parent):
        if parent >= 0:
            tok = draft[node]
            if not (int(rows[parent][tok // 32]) >> (tok % 32)) & 1 or \
                    not matcher.accept_token(tok):
                return
        if not matcher.is_terminated():
            matcher.fill_next_token_bitmask(rows, node)
            c = nt[node]
            while c != -1:
                visit(c, node)
                c = ns[c]
        if parent >= 0:
            matcher.rollback(1)

    visit(0, -1)


def bench(name, compiled, eos):
    matcher = gm.GrammarMatcher(compiled)
    out = []
    for n in (8, 32, 64):
        rng = random.Random(f"{name}{n}")
        trees = [random_tree(matcher, n, rng, eos) for _ in range(TREES)]
        want = gm.allocate_token_bitmask(n, matcher.vocab_size)
        got = gm.allocate_token_bitmask(n, matcher.vocab_size)
        for tree in trees:
            loop(matcher, tree, want)
            matcher.traverse_draft_tree(*tree, got)
            if not np.array_equal(np.asarray(want), np.asarray(got)):
                print(f"{name}, {n} nodes: masks differ from the loop's", file=sys.stderr)
                sys.exit(1)
        best_loop = best_call = float("inf")
        for _ in range(RUNS + 1):
            t0 = time.process_time()
            for tree in trees:
                loop(matcher, tree, want)
            t1 = time.process_time()
            for tree in trees:
                matcher.traverse_draft_tree(*tree, got)
            t2 = time.process_time()
            best_loop, best_call = min(best_loop, t1 - t0), min(best_call, t2 - t1)
        out.append((name, n, best_loop / TREES * 1e6, best_call / TREES * 1e6))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", required=True)
    ap.add_argument("--out")
    args = ap.parse_args()
    info = gm.TokenizerInfo.from_file(os.path.join(args.shared, "tokenizers", "llama3"))
    compiler = gm.GrammarCompiler(info)
    eos = info.stop_token_ids[0]
    rows = bench("JSON Schema", compiler.compile_json_schema(json.dumps(SCHEMA)), eos)
    rows += bench("EBNF (expressions)", compiler.compile_grammar(EBNF), eos)
    text = ("# Draft trees from Python: traverse_draft_tree against the Python loop\n\n"
            "`make bench` (bench/bench_draft_tree.py): random draft trees over the Llama 3 "
            f"vocabulary, {TREES} trees per size, process CPU time per tree, best of {RUNS} "
            "passes after a warm-up pass; masks of both identical (checked). The loop is the "
            "one engines run in Python today (SGLang's traverse_tree: the parent's mask bit, "
            "accept_token, fill_next_token_bitmask, the children, rollback).\n\n"
            "| grammar | nodes | Python loop (us/tree) | traverse_draft_tree (us/tree) | "
            "speed-up |\n|---|---:|---:|---:|---:|\n")
    for name, n, lp, call in rows:
        text += f"| {name} | {n} | {lp:.1f} | {call:.1f} | {lp / call:.1f}x |\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
