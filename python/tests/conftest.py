"""Fixtures of the gramask Python tests: the shared data (tokenizers, corpus), the
build tree's gramask command, and compiled grammars reused across tests."""

import os
import subprocess

import pytest

import gramask as gm

SHARED = os.environ.get("GM_SHARED_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                         "shared")
SRCDIR = os.environ.get("GM_SRCDIR") or os.path.join(os.path.dirname(__file__), "..", "..")
BUILDDIR = os.environ.get("GM_BUILDDIR") or SRCDIR
# The sanitizer build (pytest.sh sets it) runs several times slower: shorter loops there.
SANITIZERS = bool(os.environ.get("GRAMASK_SANITIZERS"))


def shared(*parts: str) -> str:
    path = os.path.join(SHARED, *parts)
    if not os.path.exists(path):
        pytest.fail(f"shared data missing: {path} (set GM_SHARED_DIR)")
    return path


def run_gramask(*args: str, cwd: str) -> subprocess.CompletedProcess:
    """Runs the build tree's gramask command in cwd (not the source tree, whose python/
    directory would shadow the bundled grammar of that name)."""
    return subprocess.run([os.path.abspath(os.path.join(BUILDDIR, "gramask")), *args],
                          capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="session")
def sp32k() -> gm.TokenizerInfo:
    return gm.TokenizerInfo.from_file(shared("tokenizers", "sp32k"))


@pytest.fixture(scope="session")
def llama3() -> gm.TokenizerInfo:
    return gm.TokenizerInfo.from_file(shared("tokenizers", "llama3"))


@pytest.fixture(scope="session")
def json_sp32k(sp32k: gm.TokenizerInfo) -> gm.CompiledGrammar:
    return gm.GrammarCompiler(sp32k).compile_bundled("json")


@pytest.fixture(scope="session")
def json_llama3(llama3: gm.TokenizerInfo) -> gm.CompiledGrammar:
    return gm.GrammarCompiler(llama3).compile_bundled("json")


def dumped_ids(row) -> set:
    """The allowed ids of one `gramask trace --dump-masks` line (EOS apart): its "ranges",
    or every id of 0..vocab-1 but its "except"; an entry is an id or an [a, b] run."""
    ids = set()
    for r in row.get("ranges", row.get("except", [])):
        ids.update(range(r[0], r[1] + 1) if isinstance(r, list) else (r,))
    if "except" in row:
        ids = set(range(row["vocab"])) - ids
    assert len(ids) == row["count"], row["step"]
    return ids


def allowed(bitmask_row) -> set:
    """The token ids whose bit is set in one bitmask row."""
    import numpy as np
    bits = np.unpackbits(np.ascontiguousarray(bitmask_row).view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits).tolist())
