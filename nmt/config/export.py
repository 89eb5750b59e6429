"""The `export` section of params.yaml: the ONNX package and its parity gate, the CTranslate2 model."""

from __future__ import annotations

from dataclasses import dataclass

from nmt.config.loader import require


@dataclass(frozen=True)
class ExportConfig:
    """The `export` section of params.yaml."""

    opset: int = 20  # ONNX opset (23 emits the Attention op that ORT's CPU provider rejects)
    quantize: bool = True  # also write int8 graphs (onnxruntime dynamic quantisation of the weights)
    parity_split: str = "val"  # validated split whose first sentences the gate decodes with both runtimes
    parity_sentences: int = 100  # how many of them
    logits_tolerance: float = 1e-3  # gate: largest abs(torch - ORT) of encoder outputs and step logits
    logits_steps: int = 8  # teacher-forced decoder steps whose logits are compared
    batch_size: int = 64  # sentences decoded together (as `nmt translate`)
    compare_split: str | None = "test_2016_flickr"  # split translated text to text by both (null: skip)
    compare_sentences: int | None = None  # first sentences of compare_split (null: all)
    max_int8_bleu_drop: float = 0.5  # gate, quantize only: int8 sacreBLEU may be this much below fp32
    ctranslate2: bool = True  # also write models/ct2, a CTranslate2 model (ctranslate2 stage)
    max_ct2_bleu_gap: float = 0.5  # gate, ctranslate2 stage: |CTranslate2 - torch| sacreBLEU on compare_split
    threads: int = 0  # ONNX Runtime intra-op threads during the gate (0: its default)

    def __post_init__(self) -> None:
        require(13 <= self.opset <= 22, "opset", "must be between 13 and 22 (20 is tested; 23 breaks ORT CPU)")
        require(self.parity_sentences >= 1, "parity_sentences", "must be >= 1")
        require(self.logits_tolerance >= 0 and self.logits_steps >= 1, "logits_tolerance",
                "tolerance must be >= 0 and logits_steps >= 1")
        require(self.batch_size >= 1 and self.threads >= 0, "batch_size", "must be >= 1 (threads >= 0)")
        require(self.compare_sentences is None or self.compare_sentences >= 1, "compare_sentences", "must be >= 1")
        require(self.max_int8_bleu_drop >= 0, "max_int8_bleu_drop", "must be >= 0")
        require(self.max_ct2_bleu_gap >= 0, "max_ct2_bleu_gap", "must be >= 0")
        require(not self.quantize or self.compare_split is not None, "compare_split",
                "quantize: true needs a compare_split to measure the int8 BLEU change on")
