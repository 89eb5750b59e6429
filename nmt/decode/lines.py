"""User text to translations, whatever runs the model (torch or ONNX Runtime).

`LineTranslator` is the text side shared by `nmt.decode.translator.Translator` (a model file,
torch) and `nmt.runtime.translator.OnnxTranslator` (an ONNX package, no torch): tokenize each line, cut
sources the model cannot take (with a warning naming the line), decode in length-sorted
batches, detokenize, and keep line alignment (an empty line gives an empty line).
Subclasses say how a batch of source ids is decoded. Decoding settings default to
`nmt.config.evaluate.Decoding()`'s (params.yaml's tuned evaluate settings). Torch-free.
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from nmt.config.evaluate import DEFAULT_DECODING
from nmt.decode.hypotheses import Hypothesis
from nmt.text.detokenizer import Detokenizer
from nmt.text.vocabularies import Vocabularies

log = logging.getLogger(__name__)

Tokenizer = Callable[[Iterable[str]], Iterable[tuple[list[str], str]]]
Progress = Callable[[int], None]


class Scored(NamedTuple):
    """One input line's translations, scored."""

    hyps: list[tuple[str, float]]  # (translation, confidence 0-1 or NaN), best first; [] for an empty line
    source: list[int]  # the source ids the model read (</s> included; cut to the model), [] for an empty line


@dataclass(kw_only=True)
class LineTranslator(ABC):
    vocabs: Vocabularies  # tokens <-> ids
    tokenize: Tokenizer  # source-language tokenizer: lines -> (tokens, whitespace flags)
    detokenizer: Detokenizer  # output tokens -> text
    beam_size: int = DEFAULT_DECODING.beam_size  # 1: greedy
    alpha: float = DEFAULT_DECODING.alpha  # GNMT length penalty
    max_extra: int = DEFAULT_DECODING.max_extra  # output may be this many symbols longer than the input
    batch_size: int = 64  # sentences decoded together

    def __post_init__(self) -> None:
        widest = max(1, len(self.vocabs.tgt) // 2)  # a beam step ranks the 2K best next tokens of each row
        if self.beam_size > widest:
            log.warning("beam size %d needs %d next-token candidates per step, more than the %d-symbol target "
                        "vocabulary has; decoding with beam size %d", self.beam_size, 2 * self.beam_size,
                        len(self.vocabs.tgt), widest)
            self.beam_size = widest

    @property
    @abstractmethod
    def max_len(self) -> int:
        """Longest sequence the model takes (its positional table)."""

    @abstractmethod
    def decode_batch(self, sources: list[list[int]]) -> list[list[int]]:
        """Greedy (beam_size 1) or beam search over a batch of source id lists."""

    @property
    def max_source(self) -> int:
        """Longest source in symbols (</s> included) whose output still fits the model."""
        return self.max_len - 1 - self.max_extra

    def source_ids(self, tokens: list[str], line: int | None = None) -> list[int]:
        """Source ids (</s> included), cut to `max_source` with a warning naming `line` (1-based) if longer."""
        ids = self.vocabs.source_ids(tokens)
        if len(ids) > self.max_source:
            if line is not None:
                log.warning("line %d: %d symbols, more than the model takes (%d); translating the first %d",
                            line, len(ids), self.max_source, self.max_source - 1)
            ids = ids[: self.max_source - 1] + ids[-1:]
        return ids

    def decode_batch_n(self, sources: list[list[int]], n: int) -> list[list[Hypothesis]]:
        """Up to `n` outputs per source, best first, with their log-probabilities. Here the one
        `decode_batch` finds, unscored (NaN confidence); a translator whose search keeps its beam's
        n-best list and scores returns those (`nmt.runtime.translator.OnnxTranslator`, `Translator`)."""
        return [[Hypothesis(ids, math.nan, 0)] for ids in self.decode_batch(sources)]

    def search(self, lines: Sequence[str], progress: Progress | None = None, first_line: int = 1
               ) -> list[tuple[list[int], list[int]] | None]:
        """(source ids, output ids) per input line; None for an empty line. `first_line`: the
        number of `lines[0]` in the input, for warnings."""
        return self._searched(lines, None, progress, first_line)

    def _searched(self, lines: Sequence[str], n: int | None, progress: Progress | None,
                  first_line: int) -> list[tuple[list[int], Any] | None]:
        """(source ids, their decoding) per input line, None for an empty line: lines tokenized, cut
        to the model, sorted by length and decoded `batch_size` at a time (`map_batches(batches, n)`)."""
        sources = {i: self.source_ids(tokens, line=first_line + i)
                   for i, (tokens, _) in enumerate(self.tokenize(lines)) if tokens}
        out: list[tuple[list[int], Any] | None] = [None] * len(lines)
        order = sorted(sources, key=lambda i: len(sources[i]))
        batches = [order[start:start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        decoded = self.map_batches([[sources[i] for i in rows] for rows in batches], n)
        for rows, hyps in zip(batches, decoded):
            for i, hyp in zip(rows, hyps):
                out[i] = (sources[i], hyp)
            if progress is not None:
                progress(len(rows))
        return out

    def map_batches(self, batches: list[list[list[int]]], n: int | None = None) -> Iterable[list[Any]]:
        """Each batch of source ids decoded, in order: `decode_batch` (n None) or `decode_batch_n(batch, n)`;
        here one batch after another; the ONNX runtime with decoder processes (`OnnxTranslator`, `workers`)
        decodes them side by side."""
        return (self.decode_batch(b) if n is None else self.decode_batch_n(b, n) for b in batches)

    def translate_n(self, lines: Sequence[str], n: int, first_line: int = 1) -> list[list[str]]:
        """Up to `n` distinct translations per input line, best first, the first being `translate`'s
        (the n-best list of the beam; one with greedy search); [] for an empty line."""
        return [[text for text, _ in line.hyps] for line in self.translate_scored(lines, n, first_line)]

    def translate_scored(self, lines: Sequence[str], n: int, first_line: int = 1) -> list[Scored]:
        """`translate_n` with each translation's confidence (`Hypothesis.confidence`: the geometric
        mean of the model's probabilities of its tokens, 0-1; NaN where the search keeps no scores)
        and the source ids the model read. Hypotheses that detokenize to the same text count once,
        with the better one's confidence."""
        searched = self._searched(lines, n, None, first_line)
        out: list[Scored] = []
        for r in searched:
            texts: dict[str, float] = {}
            for hyp in [] if r is None else r[1]:
                texts.setdefault(self.detokenizer(self.vocabs.output_tokens(hyp.ids)), hyp.confidence)
            out.append(Scored(list(texts.items()), [] if r is None else r[0]))
        return out

    def translate_tokens(self, lines: Sequence[str], progress: Progress | None = None,
                         first_line: int = 1) -> list[list[str]]:
        """Output tokens per input line; [] for an empty line."""
        searched = self.search(lines, progress, first_line)
        return [[] if r is None else self.vocabs.output_tokens(r[1]) for r in searched]

    def translate(self, lines: Sequence[str], progress: Progress | None = None, first_line: int = 1) -> list[str]:
        """One output line per input line."""
        return [self.detokenizer(t) if t else "" for t in self.translate_tokens(lines, progress, first_line)]

    def translate_stream(self, lines: Sequence[str], window: int = 2048, progress: Progress | None = None
                         ) -> Iterator[str]:
        """`translate`, `window` lines at a time, in input order, so output can be written as it
        is made. Lines are length-sorted into batches within a window only: with a window as
        long as the input this is exactly `translate`."""
        for start in range(0, len(lines), window):
            yield from self.translate(lines[start:start + window], progress, first_line=start + 1)
