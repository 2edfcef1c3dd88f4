"""A logits processor for batch decoding loops, with Hugging Face's call signature."""

from typing import Any, List, Optional, Sequence, Union

from . import _core
from .bitmask import allocate_token_bitmask, apply_token_bitmask_inplace
from .compiler import CompiledGrammar
from .errors import RejectedError

GrammarMatcher = _core.GrammarMatcher
BatchGrammarMatcher = _core.BatchGrammarMatcher


class LogitsProcessor:
    """Constrains a batch decoding loop: ``scores = processor(input_ids, scores)``.

    The signature of Hugging Face's ``LogitsProcessor`` (so it can go in a
    ``LogitsProcessorList`` as is; transformers is not needed). ``input_ids`` has shape
    ``(batch, seq_len)`` (prompt included); ``scores`` has shape ``(batch, V)`` and is
    masked in place and returned. The first call sees the prompts; every later call
    first accepts the token each row sampled last. A row whose grammar accepted EOS is
    left unmasked (the decoder pads finished rows). Scores columns beyond the
    grammar's vocabulary (model padding) are set to -inf. numpy arrays and torch
    tensors on any device work: on a GPU the masks are filled on the host into a pinned
    bitmask and applied on the device (gramask.bitmask_torch), the scores never copied.
    """

    def __init__(self, compiled_grammars: Union[CompiledGrammar, Sequence[CompiledGrammar]], *,
                 max_threads: int = -1, max_rollback_tokens: int = 0) -> None:
        """
        Args:
            compiled_grammars: one grammar for every row, or one per row.
            max_threads: threads of the batch mask fill (-1: one per CPU); 1 fills rows
                one after another on the calling thread.
        """
        if isinstance(compiled_grammars, CompiledGrammar):
            self._grammars: Optional[List[CompiledGrammar]] = None
            self._single: Optional[CompiledGrammar] = compiled_grammars
        else:
            self._grammars = list(compiled_grammars)
            self._single = None
            if not self._grammars:
                raise ValueError("LogitsProcessor needs at least one compiled grammar")
        self._max_threads = max_threads
        self._max_rollback = max_rollback_tokens
        self._batch: Optional[BatchGrammarMatcher] = None
        self.matchers: List[GrammarMatcher] = []
        self._bitmask: Any = None
        self._vocab = 0

    def _start(self, batch: int, on_device: bool = False) -> None:
        grammars = self._grammars if self._grammars is not None else [self._single] * batch
        if len(grammars) != batch:
            raise ValueError(f"{len(grammars)} compiled grammars for a batch of {batch} rows")
        sizes = {g.vocab_size for g in grammars}
        if len(sizes) != 1:
            raise ValueError("the compiled grammars are for vocabularies of different sizes")
        self._vocab = sizes.pop()
        self.matchers = [GrammarMatcher(g, max_rollback_tokens=self._max_rollback) for g in grammars]
        if on_device:
            from .bitmask_torch import allocate_pinned_token_bitmask
            self._bitmask = allocate_pinned_token_bitmask(batch, self._vocab)
        else:
            self._bitmask = allocate_token_bitmask(batch, self._vocab)
        if batch > 1 and self._max_threads != 1 and self._batch is None:
            self._batch = BatchGrammarMatcher(self._max_threads)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        batch = len(input_ids)
        if not self.matchers:
            dev = getattr(scores, "device", None)
            self._start(batch, dev is not None and getattr(dev, "type", "cpu") != "cpu")
        else:
            if batch != len(self.matchers):
                raise ValueError(f"the batch changed from {len(self.matchers)} to {batch} rows; "
                                 "call reset() between batches")
            # The last column in one transfer (input_ids may be on a GPU).
            last = input_ids[:, -1].tolist() if hasattr(input_ids, "tolist") and \
                getattr(input_ids, "ndim", 0) == 2 else [row[-1] for row in input_ids]
            for i, m in enumerate(self.matchers):
                if not m.is_terminated():
                    token = int(last[i])
                    if not m.accept_token(token):
                        raise RejectedError(f"row {i}: the sampled token {token} is not allowed by "
                                            "the grammar (were the scores masked?)", 9)
        active = [i for i, m in enumerate(self.matchers) if not m.is_terminated()]
        if self._batch is not None:
            self._batch.batch_fill_next_token_bitmask([self.matchers[i] for i in active],
                                                      self._bitmask, active)
        else:
            for i in active:
                self.matchers[i].fill_next_token_bitmask(self._bitmask, i)
        apply_token_bitmask_inplace(scores, self._bitmask, vocab_size=min(self._vocab, scores.shape[-1]),
                                    indices=active)
        if scores.shape[-1] > self._vocab:
            for i in active:
                scores[i, self._vocab:] = float("-inf")
        return scores

    def is_terminated(self) -> bool:
        """Whether every row's grammar has accepted EOS."""
        return bool(self.matchers) and all(m.is_terminated() for m in self.matchers)

    def reset(self) -> None:
        """Forgets the current batch: the next call starts new sequences."""
        for m in self.matchers:
            m.close()
        self.matchers = []

    def close(self) -> None:
        """Releases the matchers and the thread pool."""
        self.reset()
        if self._batch is not None:
            self._batch.close()
            self._batch = None
