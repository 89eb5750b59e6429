"""What the export gate measures: torch and ONNX Runtime side by side.

`parity()` runs a validation sample through both backends of the one search: the encoder
output and the decoder-step log-probabilities of a teacher-forced prefix (each side carrying
its own cache), then greedy and beam search on the same batches, which must give identical ids: the
engines' numbers, on raw search. `compare_texts()` translates a whole test set as `nmt translate`
does (`nmt.translate.local`: sentences, spans, the loop guard) with the model file (torch) and the
package (`OnnxTranslator`) and reports the share of identical lines and sacreBLEU of each (and of the
int8 graphs, if any): the gate scores what users get.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from nmt.decode.backend import TorchBackend, beam_search, greedy
from nmt.decode.translator import Translator
from nmt.model.transformer import Transformer
from nmt.runtime.session import OnnxModel
from nmt.runtime.translator import OnnxTranslator
from nmt.text.vocab import BOS_ID
from nmt.text.vocabularies import pad_batch
from nmt.translate.offline import translate_lines

log = logging.getLogger(__name__)


def source_batches(translator: OnnxTranslator, lines: Sequence[str], batch_size: int) -> list[np.ndarray]:
    """Non-empty lines as id batches, length-sorted as the translators batch them."""
    ids = [translator.source_ids(toks) for toks, _ in translator.tokenize(lines) if toks]
    ids.sort(key=len)
    return [pad_batch(ids[i:i + batch_size]) for i in range(0, len(ids), batch_size)]


def logit_diff(model: Transformer, onnx: OnnxModel, src: np.ndarray, steps: int) -> float:
    """Largest |torch - ORT| over the cross keys/values and `steps` decoder steps' best log-probs."""
    reference = TorchBackend(model)
    reference.encode(src)
    onnx.encode(src)
    worst = max(float(np.abs(got - expected.numpy()).max()) for got, expected in zip(onnx.cross, reference.cross))
    tokens = np.full((len(src), 1), BOS_ID, dtype=np.int64)
    rows = np.arange(len(src), dtype=np.int64)[:, None]
    for _ in range(steps):
        expected, ids = reference.step(tokens, rows)
        got, _ = onnx.step(tokens, rows)
        worst = max(worst, float(np.abs(got - expected).max()))
        tokens = ids[:, :, 0]  # teacher forcing with torch's choice
    return worst


def parity(torch_model: Transformer, onnx: OnnxTranslator, lines: Sequence[str], steps: int,
           batch_size: int) -> dict[str, Any]:
    """Logit difference and the share of identical greedy / beam outputs on `lines`."""
    batches = source_batches(onnx, lines, batch_size)
    if not batches:
        return {"sentences": 0, "max_logit_diff": 0.0, "greedy_identical": 0.0, "beam_identical": 0.0}
    worst = max(logit_diff(torch_model, onnx.model, src, steps) for src in batches)
    same = {"greedy": 0, "beam": 0}
    first_diff: dict[str, Any] = {}
    for src in batches:
        s = torch.from_numpy(src)
        pairs = {"greedy": (greedy(torch_model, s, onnx.max_extra), onnx.model.greedy(src, onnx.max_extra)),
                 "beam": (beam_search(torch_model, s, onnx.beam_size, onnx.alpha, onnx.max_extra),
                          onnx.model.beam_search(src, onnx.beam_size, onnx.alpha, onnx.max_extra))}
        for kind, (expected, got) in pairs.items():
            for row, (e, g) in enumerate(zip(expected, got)):
                if e == g:
                    same[kind] += 1
                elif kind not in first_diff:
                    first_diff[kind] = {"source": src[row].tolist(), "torch": e, "onnx": g}
    n = sum(len(b) for b in batches)
    return {"sentences": n, "max_logit_diff": worst, "greedy_identical": same["greedy"] / n,
            "beam_identical": same["beam"] / n, "first_difference": first_diff}


def sacrebleu_score(hypotheses: list[str], references: list[str]) -> float:
    import sacrebleu

    return round(float(sacrebleu.corpus_bleu(hypotheses, [references]).score), 2)


def compare_texts(torch_translator: Translator, onnx: OnnxTranslator, int8: OnnxTranslator | None,
                  sources: list[str], references: list[str]) -> dict[str, Any]:
    """Text-to-text on a test set, each as `nmt translate` writes it: identical lines, sacreBLEU of torch,
    ONNX fp32 (and int8)."""
    expected = list(translate_lines(torch_translator, sources))
    got = list(translate_lines(onnx, sources))
    out: dict[str, Any] = {"sentences": len(sources),
                           "identical_lines": sum(e == g for e, g in zip(expected, got)) / max(len(sources), 1),
                           "sacrebleu_torch": sacrebleu_score(expected, references),
                           "sacrebleu_onnx": sacrebleu_score(got, references)}
    if int8 is not None:
        quantized = list(translate_lines(int8, sources))
        out["sacrebleu_int8"] = sacrebleu_score(quantized, references)
        out["int8_bleu_change"] = round(out["sacrebleu_int8"] - out["sacrebleu_onnx"], 2)
        out["int8_identical_lines"] = sum(a == b for a, b in zip(got, quantized)) / max(len(sources), 1)
    return out
