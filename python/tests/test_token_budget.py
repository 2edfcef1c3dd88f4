"""any_text's max_tokens (issue 32 item 2) through the XGrammar-shaped API, against a
brute-force reference written from the definition alone:

  The region is the text of `PRE "<t>" any_text "</t>" POST`. A token counts for it when it
  was accepted with accept_token and overlaps the text (a token straddling into or out of it
  counts; accept_string input does not). At a token boundary inside the text where the
  region has held max_tokens tokens or more and the text can end there, it must end there.

The reference enumerates token sequences (depth-bounded: every completion the vocabulary
allows here is short) and checks each complete one against that definition; a token is
allowed iff some completion is valid. Every mask bit along random walks, with rollback and
fork, must agree with it, and with accept_token on a clone."""

import random

import pytest

import gramask as gm
from conftest import allowed, SANITIZERS

END = b"</t>"
VOCAB = [b"<t>", b"</t>", b"a", b"b", b"<", b"/", b"t", b">", b"t>", b"a</", b"</",
         b"<t>a", b"\xc3", b"\xa9", b"\xc3\xa9", b"a\xc3", b"\xa9</t>", b"ab", b"p", b"q",
         b"</t>q", b"<eos>"]
EOS = len(VOCAB) - 1


def utf8_prefix(b: bytes) -> bool:
    """Whether b is a prefix of valid UTF-8."""
    for cut in range(0, 4):
        try:
            (b + b"\xa9" * cut).decode("utf-8")
            return True
        except UnicodeDecodeError:
            pass
    return False


class Ref:
    def __init__(self, pre: bytes, post: bytes, max_tokens: int, excludes=()):
        self.pre, self.post, self.max = pre, post, max_tokens
        self.strings = [END] + list(excludes)
        self.a = len(pre) + 3

    def first_hit(self, w: bytes):
        """(end position, strings ending there) of the first occurrence of a string of L."""
        for e in range(1, len(w) + 1):
            hits = [s for s in self.strings if w[:e].endswith(s)]
            if hits:
                return e, hits
        return None, []

    def text_end(self, s: bytes):
        """b: where the text ends in the sentence-or-prefix s (None: not yet known)."""
        e, hits = self.first_hit(s[self.a:])
        return None if e is None else self.a + e - len(END)

    def can_end(self, text: bytes) -> bool:
        try:
            text.decode("utf-8")
        except UnicodeDecodeError:
            return False
        e, hits = self.first_hit(text + END)
        return e == len(text) + len(END) and END in hits

    def prefix_ok(self, s: bytes) -> bool:
        head = self.pre + b"<t>"
        if len(s) <= len(head):
            return head.startswith(s)
        if not s.startswith(head):
            return False
        e, hits = self.first_hit(s[self.a:])
        if e is None:
            return utf8_prefix(s[self.a:])
        text = s[self.a:self.a + e - len(END)]
        return END in hits and self.can_end(text) and self.post.startswith(s[self.a + e:])

    def sentence(self, s: bytes) -> bool:
        b = self.text_end(s)
        return (self.prefix_ok(s) and b is not None and s[b + len(END):] == self.post)

    def boundaries_ok(self, toks, b) -> bool:
        """The budget rule at every boundary strictly inside the text [a, b)."""
        p, count = 0, 0
        for t in toks:
            p += len(VOCAB[t])
            if p > self.a:
                count += 1
            if b is not None and p >= b:
                break
            s_text = b"".join(VOCAB[x] for x in toks)[self.a:p] if p >= self.a else None
            if p > self.a and count >= self.max and self.can_end(s_text):
                return False
        return True

    def open_at(self, s: bytes, p: int) -> bool:
        """Whether the text of every sentence starting with s goes on past p."""
        b = self.text_end(s)
        if b is not None:
            return b > p
        # not known yet: it may still end at q < p where s ends with part of the end
        return not any(END.startswith(s[q:]) for q in range(self.a, p))

    def early_violation(self, toks) -> bool:
        """A boundary where the region had to end but the output already goes on past it."""
        s = b"".join(VOCAB[t] for t in toks)
        p, count = 0, 0
        for t in toks:
            p += len(VOCAB[t])
            if p > self.a:
                count += 1
            if p > self.a and count >= self.max and self.can_end(s[self.a:p]):
                rest = s[p:]
                if self.open_at(s, p) and not (END.startswith(rest) or rest.startswith(END)):
                    return True
        return False

    def completes(self, toks, depth: int) -> bool:
        s = b"".join(VOCAB[t] for t in toks)
        if not self.prefix_ok(s) or self.early_violation(toks):
            return False
        if self.sentence(s) and self.boundaries_ok(toks, self.text_end(s)):
            return True
        if depth == 0:
            return False
        return any(self.completes(toks + [y], depth - 1) for y in range(EOS))

    def allowed(self, toks):
        out = {x for x in range(EOS) if self.completes(toks + [x], 4)}
        s = b"".join(VOCAB[t] for t in toks)
        if self.sentence(s) and self.boundaries_ok(toks, self.text_end(s)):
            out.add(EOS)
        return out


def compile_(ref: Ref, excludes):
    content = {"type": "any_text", "max_tokens": ref.max}
    if excludes:
        content["excludes"] = [e.decode() for e in excludes]
    elems = []
    if ref.pre:
        elems.append({"type": "const_string", "value": ref.pre.decode()})
    elems.append({"type": "tag", "begin": "<t>", "content": content, "end": "</t>"})
    if ref.post:
        elems.append({"type": "const_string", "value": ref.post.decode()})
    tag = {"type": "structural_tag", "format": {"type": "sequence", "elements": elems}}
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[EOS])
    return gm.GrammarCompiler(info, cache_enabled=False).compile_structural_tag(tag)


def mask_of(m):
    bitmask = gm.allocate_token_bitmask(1, len(VOCAB))
    m.fill_next_token_bitmask(bitmask)
    return allowed(bitmask[0])


CASES = [(b"", b"", 1, ()), (b"", b"", 2, ()), (b"p", b"", 3, ()), (b"", b"q", 2, ()),
         (b"", b"", 2, (b"ab",)), (b"p", b"q", 1, (b"b<",))]


@pytest.mark.parametrize("pre,post,max_tokens,excludes", CASES)
def test_budget_masks_match_reference(pre, post, max_tokens, excludes):
    ref = Ref(pre, post, max_tokens, excludes)
    compiled = compile_(ref, excludes)
    rng = random.Random(hash((pre, post, max_tokens)) & 0xffff)
    walks = 8 if SANITIZERS else 30
    checked = 0
    for _ in range(walks):
        m = gm.GrammarMatcher(compiled)
        toks = []
        while len(toks) < 9:
            want = ref.allowed(toks)
            got = mask_of(m)
            assert got == want, (toks, sorted(got - want), sorted(want - got))
            for t in range(len(VOCAB)):  # mask and accept agree
                assert (t in got) == m.fork().accept_token(t), (toks, t)
            checked += 1
            if not want or EOS in want and rng.random() < 0.3:
                break
            if toks and rng.random() < 0.2:
                n = rng.randint(1, len(toks))
                m.rollback(n)
                del toks[-n:]
                continue
            t = rng.choice(sorted(want - {EOS}) or [EOS])
            if t == EOS:
                break
            assert m.accept_token(t)
            toks.append(t)
    assert checked >= walks


def test_accept_string_is_not_counted():
    ref = Ref(b"", b"", 1)
    compiled = compile_(ref, ())
    m = gm.GrammarMatcher(compiled)
    assert m.accept_token(0) and m.accept_string("ab")  # text as a string: no tokens
    assert VOCAB.index(b"a") in mask_of(m)
    assert m.accept_token(VOCAB.index(b"a"))  # one token: the budget is spent
    assert mask_of(m) == {VOCAB.index(b"</t>"), VOCAB.index(b"</"), VOCAB.index(b"<")}


def test_reset_fork_and_serialization_keep_counts():
    ref = Ref(b"", b"", 2)
    compiled = compile_(ref, ())
    a, b_ = VOCAB.index(b"a"), VOCAB.index(b"b")
    m = gm.GrammarMatcher(compiled)
    assert m.accept_token(0) and m.accept_token(a)
    f = m.fork()
    assert m.accept_token(b_) and a not in mask_of(m)
    assert a in mask_of(f)  # the fork has its own count
    m.reset()
    assert m.accept_token(0) and m.accept_token(a) and a in mask_of(m)
    info = gm.TokenizerInfo(VOCAB, stop_token_ids=[EOS])
    back = gm.CompiledGrammar.deserialize_json(compiled.serialize_json(), info)
    r = gm.GrammarMatcher(back)
    for t in (0, a, b_):
        assert r.accept_token(t)
    assert mask_of(r) == ref.allowed([0, a, b_]) and a not in mask_of(r)


def test_relaxed_inside_a_character():
    """A spent region that cannot end (inside a character) goes on until it can."""
    ref = Ref(b"", b"", 1)
    compiled = compile_(ref, ())
    m = gm.GrammarMatcher(compiled)
    assert m.accept_token(0) and m.accept_token(VOCAB.index(b"\xc3"))
    got = mask_of(m)
    assert got == ref.allowed([0, VOCAB.index(b"\xc3")])
    assert VOCAB.index(b"\xa9") in got and VOCAB.index(b"\xa9</t>") in got
    assert m.accept_token(VOCAB.index(b"\xa9"))
    assert mask_of(m) == {VOCAB.index(b"</t>"), VOCAB.index(b"</"), VOCAB.index(b"<")}


def test_each_occurrence_counts_alone():
    """A token that ends one tagged text and begins the next: the next counts from 1."""
    vocab = [b"<t>", b"</t>", b"a", b"b", b"</t><t>a", b"<eos>"]
    info = gm.TokenizerInfo(vocab, stop_token_ids=[5])
    tag = {"type": "tag", "begin": "<t>", "content": {"type": "any_text", "max_tokens": 2},
           "end": "</t>"}
    for fmt in ({"type": "plus", "content": tag}, {"type": "star", "content": tag},
                {"type": "sequence", "elements": [tag, tag]}):
        compiled = gm.GrammarCompiler(info, cache_enabled=False).compile_structural_tag(
            {"type": "structural_tag", "format": fmt})
        m = gm.GrammarMatcher(compiled)
        for t in (0, 2, 3):
            assert m.accept_token(t)
        assert 2 not in mask_of_v(m, vocab) and 4 in mask_of_v(m, vocab)
        assert m.accept_token(4)  # ends the first, one token into the second
        assert 3 in mask_of_v(m, vocab), fmt
        assert m.accept_token(3)
        assert mask_of_v(m, vocab) == ({1} if fmt["type"] == "sequence" else {1, 4}), fmt


def mask_of_v(m, vocab):
    bitmask = gm.allocate_token_bitmask(1, len(vocab))
    m.fill_next_token_bitmask(bitmask)
    return allowed(bitmask[0])
