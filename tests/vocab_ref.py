#!/usr/bin/env python3
"""Independent reference for gm_vocab_load and gm_trie_build.

Decodes each tokenizer.json in $GM_SHARED_DIR/tokenizers with its own code
(python3's json module, its own GPT-2 byte map and SentencePiece rules),
writes id -> hex bytes + flags in the plain format, and compares that with
`gramask vocab DIR --dump` line by line. Also counts the distinct non-empty
prefixes of the text tokens and compares with the trie's node count that
`gramask vocab DIR` prints.

Usage: vocab_ref.py [TOKENIZER_DIR...]   (default: the four shared tokenizers)
"""
import json
import os
import re
import subprocess
import sys


def gpt2_byte_map():
    """byte -> code point, as in GPT-2's bytes_to_unicode()."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + \
        list(range(0xAE, 0xFF + 1))
    out = {b: b for b in printable}
    extra = 0
    for b in range(256):
        if b not in out:
            out[b] = 256 + extra
            extra += 1
    return out


BYTE_OF_CHAR = {chr(cp): b for b, cp in gpt2_byte_map().items()}
BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def decoder_kind(dec):
    """('bytelevel', 0) or ('sentencepiece', strip) for the decoders we know."""
    if dec["type"] == "ByteLevel":
        return "bytelevel", 0
    if dec["type"] == "Sequence":
        types = [d["type"] for d in dec["decoders"]]
        if types == ["Replace", "ByteFallback", "Fuse", "Strip"]:
            rep, strip = dec["decoders"][0], dec["decoders"][3]
            assert rep["pattern"] == {"String": "\u2581"} and rep["content"] == " "
            assert strip["content"] == " " and strip["stop"] == 0
            return "sentencepiece", strip["start"]
    raise SystemExit("vocab_ref.py: decoder not known to the reference: %r" % dec)


def token_bytes(kind, text):
    if kind == "bytelevel":
        return bytes(BYTE_OF_CHAR[c] for c in text)
    m = BYTE_TOKEN.match(text)
    if m:
        return bytes([int(m.group(1), 16)])
    return text.replace("\u2581", " ").encode("utf-8")


def reference(tokdir):
    with open(os.path.join(tokdir, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    config = {}
    cpath = os.path.join(tokdir, "tokenizer_config.json")
    if os.path.exists(cpath):
        with open(cpath, encoding="utf-8") as f:
            config = json.load(f)
    kind, strip = decoder_kind(tj["decoder"])
    assert tj["model"]["type"] == "BPE"
    text = {}
    for tok, i in tj["model"]["vocab"].items():
        assert i not in text
        text[i] = tok
    added = {a["id"]: a for a in tj["added_tokens"]}
    size = max(list(text) + list(added)) + 1
    assert all(i in text or i in added for i in range(size))
    eos = config.get("eos_token")
    if isinstance(eos, dict):
        eos = eos["content"]
    eos_id = None
    if eos is not None:
        eos_id = next((i for i, a in added.items() if a["content"] == eos), None)
        if eos_id is None:
            eos_id = tj["model"]["vocab"][eos]
    lines = ["gramask-vocab 1" + (" strip-leading %d" % strip if strip else "")]
    toks = []
    for i in range(size):
        if i in added:
            b = added[i]["content"].encode("utf-8")
            special = added[i]["special"]
        else:
            b = token_bytes(kind, text[i])
            special = False
        line = b.hex() if b else "-"
        if special:
            line += " special"
        if i == eos_id:
            line += " eos"
        lines.append(line)
        if b and not special:
            toks.append(b)
    prefixes = set()
    for b in toks:
        for k in range(1, len(b) + 1):
            prefixes.add(b[:k])
    return lines, len(prefixes) + 1, len(toks)


def main():
    shared = os.environ.get("GM_SHARED_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "shared")
    build = os.environ.get("GM_BUILDDIR") or "."
    gramask = os.path.join(build, "gramask")
    dirs = sys.argv[1:] or [os.path.join(shared, "tokenizers", t)
                            for t in ("sp32k", "llama3", "qwen3", "gptoss")]
    failed = 0
    for d in dirs:
        want, nodes, ntoks = reference(d)
        got = subprocess.run([gramask, "vocab", d, "--dump"], check=True,
                             capture_output=True).stdout.decode("ascii").split("\n")
        if got and got[-1] == "":
            got.pop()
        diffs = [i for i in range(max(len(want), len(got)))
                 if i >= len(want) or i >= len(got) or want[i] != got[i]]
        info = subprocess.run([gramask, "vocab", d], check=True,
                              capture_output=True).stdout.decode("utf-8", "replace")
        m = re.search(r"trie:\s+(\d+) nodes, (\d+) tokens", info)
        trie_ok = m and int(m.group(1)) == nodes and int(m.group(2)) == ntoks
        if diffs:
            failed += 1
            for i in diffs[:10]:
                print("%s: line %d (id %d): reference %r, gramask %r" % (
                    d, i + 1, i - 1, want[i] if i < len(want) else None,
                    got[i] if i < len(got) else None))
        if not trie_ok:
            failed += 1
            print("%s: trie: reference %d nodes, %d tokens; gramask says %r" % (
                d, nodes, ntoks, m.group(0) if m else info))
        if not diffs and trie_ok:
            print("OK %s: %d ids identical, trie %d nodes" % (d, len(want) - 1, nodes))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
