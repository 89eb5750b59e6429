"""Text in, text out with a model file: its tokenizer, the model, search, detokenization.

`Translator.from_file(path)` loads a model file written by the train stage (weights,
config, vocabularies, tokenizer settings, learned detokenizer). The line handling (empty
lines, overlong lines, length-sorted batches) is `nmt.text_input.LineTranslator`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from nmt import checkpoint
from nmt.batching import numericalize, pad
from nmt.build_vocab import Vocabularies
from nmt.decoding import beam_search, greedy
from nmt.detokenize import Detokenizer
from nmt.errors import DataError
from nmt.model import Transformer
from nmt.monitor import ids_to_tokens
from nmt.text_input import LineTranslator
from nmt.tokenization import make_tokenizer


@dataclass(kw_only=True)
class Translator(LineTranslator):
    model: Transformer  # in eval mode
    vocabs: Vocabularies

    @classmethod
    def from_file(cls, path: Path | str, **options) -> Translator:
        """Load a final model file; `options`: beam_size, alpha, max_extra, batch_size."""
        state = checkpoint.load(path)
        if "text" not in state:
            raise DataError(f"{path}: a training checkpoint, not a final model file (train stage output, "
                            "e.g. models/model.pt), or written by an older version; re-run `dvc repro train`")
        vocabs = checkpoint.vocabs_of(state)
        model = Transformer(checkpoint.model_config_of(state), len(vocabs.src), len(vocabs.tgt))
        model.load_state_dict(state["model"])
        model.eval()
        text = state["text"]
        return cls(model=model, vocabs=vocabs, tokenize=make_tokenizer(text["src_lang"], text["lowercase"]),
                   detokenize=Detokenizer.from_dict(text["detokenizer"]), **options)

    @property
    def max_len(self) -> int:
        return self.model.cfg.max_len

    def encode_source(self, tokens: list[str]) -> list[int]:
        return numericalize(self.vocabs, tokens)[0]

    def output_tokens(self, ids: list[int]) -> list[str]:
        return ids_to_tokens(self.vocabs, ids)

    def decode_batch(self, sources: list[list[int]]) -> list[list[int]]:
        src = pad(sources)
        with torch.no_grad():
            if self.beam_size == 1:
                return greedy(self.model, src, self.max_extra)
            return beam_search(self.model, src, self.beam_size, self.alpha, self.max_extra)
