"""Text in, text out with a model file: its tokenizer, the model, search, detokenization.

`Translator.from_file(path)` loads a model file written by the train stage (weights,
config, vocabularies, tokenizer settings, learned detokenizer). The line handling (empty
lines, overlong lines, length-sorted batches) is `nmt.decode.lines.LineTranslator`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from nmt.config.evaluate import Decoding
from nmt.decode import search
from nmt.decode.backend import TorchBackend, beam_search, greedy
from nmt.decode.hypotheses import Hypothesis
from nmt.decode.lines import LineTranslator, Tokenizer
from nmt.errors import DataError, NmtError
from nmt.model import checkpoint
from nmt.model.transformer import Transformer
from nmt.text.spm import text_detokenizer, text_tokenizer
from nmt.text.vocabularies import pad_batch


def decoding_of(beam_size: int | None, alpha: float | None) -> Decoding:
    """The decoding settings a model file is used with: the evaluate section's defaults, or those given."""
    given: dict[str, Any] = {"beam_size": beam_size, "alpha": alpha}
    return Decoding(**{k: v for k, v in given.items() if v is not None})


@dataclass(kw_only=True)
class Translator(LineTranslator):
    model: Transformer  # in eval mode
    text_settings: dict[str, Any] = field(default_factory=dict)  # the file's src_lang, lowercase (no detokenizer)

    @classmethod
    def from_file(cls, path: Path | str, decoding: Decoding = Decoding(), batch_size: int = 64,
                  device: str = "cpu", tokenize: Tokenizer | None = None, threads: int = 0) -> Translator:
        """Load a final model file (train stage output) to decode with `decoding` (default: the
        evaluate stage's tuned settings) on `device` (cpu, cuda, or auto: CUDA when torch has it).
        `tokenize`: lines -> (tokens, flags) instead of spaCy's tokenizer (pre-tokenized input).
        `threads` > 0 sets torch's intra-op threads (for the whole process)."""
        if threads:
            torch.set_num_threads(threads)
        state = checkpoint.load(path)
        if "text" not in state:
            raise DataError(f"{path}: a training checkpoint, not a final model file (train stage output, "
                            "e.g. models/model.pt), or written by an older version; re-run `dvc repro train`")
        vocabs = checkpoint.vocabs_of(state)
        model = Transformer(checkpoint.model_config_of(state), len(vocabs.src), len(vocabs.tgt))
        checkpoint.load_weights(model, state["model"], Path(path))
        model.to(_torch_device(device)).eval()
        text = state["text"]
        return cls(model=model, vocabs=vocabs,
                   tokenize=tokenize or text_tokenizer(vocabs.sp, text["src_lang"], text["lowercase"]),
                   detokenizer=text_detokenizer(vocabs.sp, text["detokenizer"]), beam_size=decoding.beam_size,
                   alpha=decoding.alpha, max_extra=decoding.max_extra, batch_size=batch_size,
                   text_settings={k: v for k, v in text.items() if k != "detokenizer"})

    @property
    def max_len(self) -> int:
        return self.model.cfg.max_len

    def decode_batch(self, sources: list[list[int]]) -> list[list[int]]:
        src = torch.from_numpy(pad_batch(sources)).to(self.model.pe.device)
        with torch.no_grad():
            if self.beam_size == 1:
                return greedy(self.model, src, self.max_extra)
            return beam_search(self.model, src, self.beam_size, self.alpha, self.max_extra)

    def decode_batch_n(self, sources: list[list[int]], n: int) -> list[list[Hypothesis]]:
        backend = TorchBackend(self.model)
        src = pad_batch(sources)
        with torch.no_grad():
            if self.beam_size == 1:
                return [[hyp] for hyp in search.greedy_scored(backend, src, self.max_extra)]
            return search.beam_search_n(backend, src, min(n, self.beam_size), self.beam_size, self.alpha,
                                        self.max_extra)


def _torch_device(device: str) -> torch.device:
    if device not in ("auto", "cpu", "cuda"):
        raise NmtError(f"device {device!r}: expected auto, cpu or cuda")
    if device == "cuda" and not torch.cuda.is_available():
        raise NmtError("device cuda: torch sees no CUDA device here (a CPU build of torch, or no GPU); "
                       "use --device cpu or auto")
    return torch.device("cuda" if device != "cpu" and torch.cuda.is_available() else "cpu")
