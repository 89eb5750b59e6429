"""Which output words translate a span of the input: alignment by leaving the span out.

The model reads the source twice, once as it is and once with the span's symbols replaced by
<unk>, and scores the same output both times (teacher forcing, one `Backend` step per output
symbol, every variant of a sentence in one batch). The output symbols whose log-probability drops
most when the span is unreadable are the ones it translates: the output word with the largest
drop, grown to its neighbours whose drop is at least `GROW` of it (a name of two words, a
compound), `MAX_WORDS` words at most. Leave-one-out attribution of this kind (Li et al. 2016,
"Understanding neural networks through representation erasure") needs nothing but the graphs the
search already runs, so the exported package is unchanged; measured on bench/markup.py's tagged
set it puts the tag on the expected word where the translation has it more often than the
placeholder mechanism does (docs/serving.md).

A step returns the 2K best next symbols per row, not the whole distribution: an output symbol
outside a row's best two is scored at the second best's log-probability, an upper bound. The
output is the model's own, so its symbols are nearly always among the unmasked row's best two
(scored exactly), and a drop is then never overstated.
"""

from __future__ import annotations

import copy
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from nmt.decode.search import Backend
from nmt.text.tokenizer import make_tokenizer
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID, UNK_ID

GROW = 0.5  # a neighbouring word joins when its drop is at least this share of the best word's
MAX_WORDS = 3  # words an aligned span grows to at most
MIN_DROP = 0.1  # nats: a best word dropping less than this aligns nothing


def forced_log_probs(backend: Backend, sources: Sequence[Sequence[int]], target: Sequence[int]) -> np.ndarray:
    """(len(sources), len(target)) log-probabilities of `target`'s symbols (</s> included if given)
    after <s> and the symbols before them, given each source (ids ending in </s>); a symbol
    outside a row's best two gets the second best's log-probability (an upper bound)."""
    width = max(map(len, sources))
    src = np.full((len(sources), width), PAD_ID, dtype=np.int64)
    for i, row in enumerate(sources):
        src[i, :len(row)] = row
    backend.encode(src)
    b = len(sources)
    out = np.zeros((b, len(target)), dtype=np.float64)
    tokens, rows = np.full((b, 1), BOS_ID, dtype=np.int64), np.arange(b, dtype=np.int64)[:, None]
    for t, y in enumerate(target):
        log_probs, ids = backend.step(tokens, rows)  # (b, 1, 2)
        log_probs, ids = log_probs[:, 0], ids[:, 0]
        hit = ids == y
        out[:, t] = np.where(hit.any(axis=1), np.where(hit, log_probs, 0.0).sum(axis=1), log_probs[:, -1])
        tokens = np.full((b, 1), y, dtype=np.int64)
    return out


def leave_out_drops(backend: Backend, source: Sequence[int], target: Sequence[int],
                    spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """(len(spans), len(target)): how much each target symbol's log-probability drops when source
    symbols [start, end) of a span read <unk>. `source` ends in </s>; `target` without <s>."""
    variants = [list(source)]
    for start, end in spans:
        variants.append([*source[:start], *([UNK_ID] * (end - start)), *source[end:]])
    scores = forced_log_probs(backend, variants, [*target, EOS_ID] if not target or target[-1] != EOS_ID else target)
    return (scores[0] - scores[1:])[:, :len(target)]


def aligned_words(drops: np.ndarray, word_of: Sequence[int]) -> tuple[int, int] | None:
    """The output words [first, last] a span aligns to, from its per-symbol `drops` and the word
    index of each output symbol (`word_of`, non-decreasing); None when nothing drops."""
    if not len(word_of):
        return None
    words = word_of[-1] + 1
    score = np.full(words, -np.inf)
    for k, w in enumerate(word_of):
        score[w] = max(score[w], drops[k])
    best = int(np.argmax(score))
    if score[best] < MIN_DROP:
        return None
    lo = hi = best
    while hi - lo + 1 < MAX_WORDS:
        left = score[lo - 1] if lo > 0 else -np.inf
        right = score[hi + 1] if hi + 1 < words else -np.inf
        if max(left, right) < GROW * score[best]:
            break
        if left >= right:
            lo -= 1
        else:
            hi += 1
    return lo, hi


def _offsets(text: str, tokens: Sequence[str]) -> list[tuple[int, int]]:
    """Each token's characters in `text`, found left to right (a token the tokenizer normalised,
    and so not found as it is, gets an empty range where the search stands)."""
    out, at = [], 0
    for token in tokens:
        found = text.find(token, at)
        if found < 0:
            out.append((at, at))
            continue
        out.append((found, found + len(token)))
        at = found + len(token)
    return out


class SentenceAligner:
    """Character ranges of a source sentence aligned to its translation's words with an ONNX
    translator's graphs (`OnnxTranslator`: its tokenizer, vocabularies and model). Holds its own
    search state and target tokenizer: one per thread."""

    def __init__(self, translator: Any, tgt_lang: str) -> None:
        self.translator = translator
        self.backend = copy.copy(translator.model)  # the sessions shared (thread-safe), the state its own
        self.tokenize_target = make_tokenizer(tgt_lang, bool(translator.package.tokenizer.get("lowercase")))

    def _pieces(self, tokens: list[str], vocab: Any) -> list[list[int]]:
        vocabs = self.translator.vocabs
        return [vocab.encode(vocabs.pieces([token], vocab)) for token in tokens]

    def align(self, source: str, target: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int] | None]:
        """For each source character range, the target's characters [start, end) of the words it
        translates (whole words; `MAX_WORDS` at most), or None where nothing aligns."""
        if not spans or not source.strip() or not target.strip():
            return [None] * len(spans)
        vocabs = self.translator.vocabs
        (src_tokens, _), = self.translator.tokenize([source])
        (tgt_tokens, _), = self.tokenize_target([target])
        src_pieces, tgt_pieces = self._pieces(src_tokens, vocabs.src), self._pieces(tgt_tokens, vocabs.tgt)
        src_ids = [i for p in src_pieces for i in p] + [EOS_ID]
        tgt_ids = [i for p in tgt_pieces for i in p]
        if len(src_ids) > self.translator.max_source or len(tgt_ids) + 2 > self.backend.max_len:
            return [None] * len(spans)
        src_at, tgt_at = _offsets(source, src_tokens), _offsets(target, tgt_tokens)
        starts = np.cumsum([0] + [len(p) for p in src_pieces])
        piece_spans: list[tuple[int, int]] = []
        rows: list[int | None] = []  # per span, its row of drops (None: it covers no source token)
        for a, b in spans:
            inside = [t for t, (s, e) in enumerate(src_at) if s < b and e > a]
            rows.append(len(piece_spans) if inside else None)
            if inside:
                piece_spans.append((int(starts[inside[0]]), int(starts[inside[-1] + 1])))
        if not piece_spans:
            return [None] * len(spans)
        drops = leave_out_drops(self.backend, src_ids, tgt_ids, piece_spans)
        word_of = [w for w, p in enumerate(tgt_pieces) for _ in p]
        out: list[tuple[int, int] | None] = []
        for row in rows:
            words = None if row is None else aligned_words(drops[row], word_of)
            out.append(None if words is None else (tgt_at[words[0]][0], tgt_at[words[1]][1]))
        return out


_threads = threading.local()


def thread_aligner(model: Any) -> SentenceAligner | None:
    """This thread's aligner for a served model (`nmt.translate.models.Model`); None for a CTranslate2
    folder, whose graphs are not ours to step through. An aligner goes with its model: once a
    reload has dropped the model, the next call here drops its aligner."""
    if not model.aligns:
        return None
    held: dict[int, tuple[weakref.ref, SentenceAligner]] = getattr(_threads, "held", None) or {}
    _threads.held = held = {k: v for k, v in held.items() if v[0]() is not None}
    if id(model) not in held or held[id(model)][0]() is not model:
        held[id(model)] = (weakref.ref(model), SentenceAligner(model.translator, model.languages[1]))
    return held[id(model)][1]
