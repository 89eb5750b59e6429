"""Text in, text out: the model file's tokenizer, the model, search, and detokenization.

`Translator.from_file(path)` loads a model file written by the train stage (weights,
config, vocabularies, tokenizer settings, learned detokenizer). `translate(lines)` keeps
line alignment: an empty line gives an empty line; a line longer than the model can take
is truncated with a warning naming it. Sentences are decoded in length-sorted batches.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch

from nmt import checkpoint
from nmt.batching import numericalize, pad
from nmt.build_vocab import Vocabularies
from nmt.decoding import beam_search, greedy
from nmt.detokenize import Detokenizer
from nmt.errors import DataError
from nmt.model import Transformer
from nmt.monitor import ids_to_tokens
from nmt.tokenization import make_tokenizer

log = logging.getLogger(__name__)


@dataclass
class Translator:
    model: Transformer
    vocabs: Vocabularies
    tokenize: Callable[[Iterable[str]], Iterable[tuple[list[str], str]]]
    detokenize: Detokenizer
    beam_size: int = 4  # 1: greedy
    alpha: float = 0.6  # GNMT length penalty
    max_extra: int = 50  # output may be this many symbols longer than the input
    batch_size: int = 64

    @classmethod
    def from_file(cls, path, **options) -> Translator:
        state = checkpoint.load(path)
        if "text" not in state:
            raise DataError(f"{path}: a training checkpoint, not a final model file (train stage output, "
                            "e.g. models/model.pt), or written by an older version; re-run `dvc repro train`")
        vocabs = checkpoint.vocabs_of(state)
        model = Transformer(checkpoint.model_config_of(state), len(vocabs.src), len(vocabs.tgt))
        model.load_state_dict(state["model"])
        model.eval()
        text = state["text"]
        return cls(model, vocabs, make_tokenizer(text["src_lang"], text["lowercase"]),
                   Detokenizer.from_dict(text["detokenizer"]), **options)

    @property
    def max_source(self) -> int:
        """Longest source in symbols (</s> included) whose output still fits the model."""
        return self.model.cfg.max_len - 1 - self.max_extra

    def search(self, lines: Sequence[str], progress: Callable[[int], None] | None = None
               ) -> list[tuple[list[int], list[int]] | None]:
        """(source ids, output ids) per input line; None for an empty line."""
        sources: dict[int, list[int]] = {}
        for i, (tokens, _) in enumerate(self.tokenize(lines)):
            if not tokens:
                continue
            ids = numericalize(self.vocabs, tokens)[0]
            if len(ids) > self.max_source:
                log.warning("line %d: %d symbols, more than the model takes (%d); translating the first %d",
                            i + 1, len(ids), self.max_source, self.max_source - 1)
                ids = ids[: self.max_source - 1] + ids[-1:]
            sources[i] = ids
        out: list[tuple[list[int], list[int]] | None] = [None] * len(lines)
        order = sorted(sources, key=lambda i: len(sources[i]))
        for start in range(0, len(order), self.batch_size):
            rows = order[start:start + self.batch_size]
            src = pad([sources[i] for i in rows])
            with torch.no_grad():
                hyps = (greedy(self.model, src, self.max_extra) if self.beam_size == 1
                        else beam_search(self.model, src, self.beam_size, self.alpha, self.max_extra))
            for i, hyp in zip(rows, hyps):
                out[i] = (sources[i], hyp)
            if progress is not None:
                progress(len(rows))
        return out

    def translate_tokens(self, lines: Sequence[str], progress: Callable[[int], None] | None = None
                         ) -> list[list[str]]:
        """Output tokens (words, BPE pieces merged) per input line; [] for an empty line."""
        return [[] if r is None else ids_to_tokens(self.vocabs, r[1]) for r in self.search(lines, progress)]

    def translate(self, lines: Sequence[str], progress: Callable[[int], None] | None = None) -> list[str]:
        """One output line per input line."""
        return [self.detokenize(t) if t else "" for t in self.translate_tokens(lines, progress)]
