"""Translation with the exported ONNX package: numpy + ONNX Runtime, no torch.

`OnnxTranslator.from_dir("models/onnx")` reads the package written by the export stage
(`nmt.runtime.package`: every file checked against its card), opens the two graphs
(`nmt.runtime.session`) and translates text to text exactly as `nmt translate` does with the
model file: spaCy tokenization with the recorded settings, vocabulary (and BPE) lookup,
greedy or beam search (`nmt.decode.search`, the one shared with torch), detokenization. Empty lines stay empty; lines
longer than the model takes are truncated with a warning naming the line. Installable
without torch: `pip install "nmt[runtime]"`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nmt.config.evaluate import Decoding
from nmt.config.loader import from_dict
from nmt.decode.hypotheses import Hypothesis
from nmt.decode.lines import LineTranslator
from nmt.errors import NmtError
from nmt.files.cores import available_cores
from nmt.runtime.package import Package, load_package
from nmt.runtime.pool import DecoderPool, Settings
from nmt.runtime.session import OnnxModel
from nmt.text.spm import text_detokenizer, text_tokenizer
from nmt.text.vocabularies import pad_batch

log = logging.getLogger(__name__)

# `workers=0` (auto) starts decoder processes, one per core, the first time a call brings at least
# this many sentences; fewer are decoded in this process. Starting them took 0.7 s here (2 spawned
# processes loading the package side by side); with the 2-core rates of bench/decode_peers.py they
# pay for it from 1,100 (beam 16 int8) to 4,000 (greedy fp32) sentences on (bench/decode_peers.py), and a wrong
# side of the threshold costs at most about that start.
AUTO_SENTENCES = 2000


@dataclass(kw_only=True)
class OnnxTranslator(LineTranslator):
    """Text in, text out, like `nmt.decode.translator.Translator`, on ONNX Runtime."""

    package: Package
    model: OnnxModel
    pool: DecoderPool | None = None  # decoder processes side by side (`workers` != 1; auto: started when worth it)

    @classmethod
    def from_dir(cls, path: Path, *, device: str = "auto", threads: int = 0, int8: bool = False,
                 beam_size: int | None = None, alpha: float | None = None, max_extra: int | None = None,
                 batch_size: int = 64, workers: int = 1) -> OnnxTranslator:
        """Load a verified package; decoding options default to the card's. `workers` > 1 decodes
        batches in that many processes side by side (`nmt.runtime.pool`), each with `threads`
        intra-op threads (0: the cores shared out); 0 (auto) starts one per core the first time a
        call brings `AUTO_SENTENCES` or more; 1: this process decodes. The output is the same."""
        if workers < 0:
            raise NmtError(f"workers={workers}: expected 0 (auto: one decoder process per core when the input is "
                           "large enough), 1 (this process decodes) or more decoder processes")
        package = load_package(path)
        model = OnnxModel(package.graph("encoder", int8), package.graph("decoder_step", int8),
                          package.card["model"]["max_len"], device, threads)
        given = {"beam_size": beam_size, "alpha": alpha, "max_extra": max_extra}
        decoding = from_dict(Decoding, asdict(package.decoding) | {k: v for k, v in given.items() if v is not None},
                             key="decoding", source="OnnxTranslator.from_dir")
        tok = package.tokenizer
        tokenize = text_tokenizer(package.vocabs.sp, tok["src_lang"], tok["lowercase"])
        detokenizer = text_detokenizer(package.vocabs.sp, tok["detokenizer"])
        count = workers or available_cores()
        options = {"device": device, "threads": threads or max(1, available_cores() // count), "int8": int8,
                   "beam_size": decoding.beam_size, "alpha": decoding.alpha, "max_extra": decoding.max_extra,
                   "batch_size": batch_size}

        pool = None
        if count > 1 and workers != 1:  # auto (0): started the first time a call brings AUTO_SENTENCES
            pool = DecoderPool(cls.from_dir, path, count, options, start_at=AUTO_SENTENCES if workers == 0 else 0)
        return cls(package=package, model=model, vocabs=package.vocabs,
                   tokenize=tokenize, detokenizer=detokenizer,
                   beam_size=decoding.beam_size, alpha=decoding.alpha, max_extra=decoding.max_extra,
                   batch_size=batch_size, pool=pool)

    @property
    def max_len(self) -> int:
        return self.model.max_len

    def decode_batch(self, sources: list[list[int]]) -> list[list[int]]:
        src = pad_batch(sources)
        if self.beam_size == 1:
            return self.model.greedy(src, self.max_extra)
        return self.model.beam_search(src, self.beam_size, self.alpha, self.max_extra)

    def map_batches(self, batches: list[list[list[int]]], n: int | None = None) -> Iterable[list[Any]]:
        """With decoder processes, the batches are decoded in them, side by side, outputs in order,
        with this translator's settings (a copy with beam size 1 shares the processes and decodes
        greedy there). Auto: they start the first time the batches bring `AUTO_SENTENCES` or more."""
        sentences = sum(map(len, batches))
        if self.pool is not None and self.pool.takes(sentences):
            if not self.pool.started:
                log.info("%d sentences: starting decoder processes", sentences)
            return self.pool.map(batches, Settings(self.beam_size, self.alpha, self.max_extra), n)
        return super().map_batches(batches, n)

    def close(self) -> None:
        """Stop the decoder processes, if any (they also stop when this process exits); a later call
        starts them again."""
        if self.pool is not None:
            self.pool.close()

    def decode_batch_n(self, sources: list[list[int]], n: int) -> list[list[Hypothesis]]:
        if self.beam_size == 1:
            return [[hyp] for hyp in self.model.greedy_scored(pad_batch(sources), self.max_extra)]
        return self.model.beam_search_n(pad_batch(sources), min(n, self.beam_size), self.beam_size, self.alpha,
                                        self.max_extra)
