"""Stage 8, ctranslate2: the final model as a CTranslate2 model, gated on BLEU against torch.

For services that serve with CTranslate2: `models/ct2/` gets CTranslate2's model directory
(`model.bin`, its vocabularies, `config.json`; `nmt.export.ctranslate2`), our tokenizer side
(vocabularies, BPE merges, `tokenizer.json`, as in the ONNX package) and a `model.json` card
in the ONNX card's style. The gate translates `export.compare_split` as `nmt translate` does
(`nmt.translate.local`) with the model file and with this folder and requires their sacreBLEU
within `export.max_ct2_bleu_gap` (CTranslate2's length penalty differs from ours, so beam outputs
may differ in a few lines).
A failed gate leaves the previous `models/ct2/` untouched. `export.ctranslate2: false` writes
an empty folder with a note instead (nothing to install).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from nmt import ranking
from nmt.command import arg, stage_main
from nmt.config.evaluate import Decoding, EvaluateConfig
from nmt.config.export import ExportConfig
from nmt.decode.translator import Translator
from nmt.export.checks import sacrebleu_score
from nmt.export.ctranslate2 import convert
from nmt.export.package import TOKENIZER, source_commit, write_text_files
from nmt.files.atomic import atomic_write_text, staged_dir
from nmt.files.digest import sha256_file
from nmt.files.lines import read_lines, split_file
from nmt.gates.gate import Gate
from nmt.model import checkpoint
from nmt.runtime.ct2 import FORMAT, FORMAT_VERSION, Ct2Translator
from nmt.runtime.package import CARD, write_card
from nmt.text.vocab import SPECIALS
from nmt.translate.offline import translate_lines

log = logging.getLogger(__name__)

REPORT_NAME = "ctranslate2"
USAGE = """import ctranslate2  # tokens: our tokenizer + BPE pieces, then "</s>" (see tokenizer.json)
translator = ctranslate2.Translator("models/ct2/ctranslate2")
best = translator.translate_batch([tokens], beam_size=4, length_penalty=1.0)[0].hypotheses[0]"""


@dataclass(frozen=True)
class Ct2Params:
    """The params.yaml sections the ctranslate2 stage reads (only these: nmt.config.loader.load_sections)."""

    export: ExportConfig  # the CTranslate2 model and its gate
    evaluate: EvaluateConfig  # the decoding settings it is compared with


@dataclass(frozen=True)
class Ct2Paths:
    model: Path = arg("final model file (models/model.pt)")
    data: Path = arg("validated corpus: the compare split (data/validated)")
    out: Path = arg("folder to replace (models/ct2)")
    reports: Path = arg("directory for gate reports (reports/validation)")
    metrics: Path = arg("metrics to write: BLEU of torch and CTranslate2, identical lines (reports/ctranslate2.json)")


def _card(translator: Translator, decoding: Decoding, model_path: Path, out: Path, metrics: dict[str, Any]
          ) -> dict[str, Any]:
    mcfg, vocabs = translator.model.cfg, translator.vocabs
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "nmt_version": version("nmt"),
        "languages": {"src": vocabs.src_lang, "tgt": vocabs.tgt_lang},
        "source": {**source_commit(), "model_file": str(model_path), "model_sha256": sha256_file(model_path)},
        "exported_with": {"ctranslate2": version("ctranslate2"), "torch": version("torch")},
        "model": {"dir": "ctranslate2", "n_layers": mcfg.n_layers, "d_model": mcfg.d_model, "heads": mcfg.n_heads,
                  "pre_norm": mcfg.norm_first, "max_len": mcfg.max_len},
        "special_tokens": {name: i for i, name in enumerate(SPECIALS)},
        "decoding": {"beam_size": decoding.beam_size, "length_penalty": decoding.alpha,
                     "max_decoding_length": f"source symbols with </s> + {decoding.max_extra}, "
                                            f"at most {mcfg.max_len - 1}",
                     "length_penalty_formula": "CTranslate2: log P(Y) / |Y| ** length_penalty; the torch model and "
                                               "the ONNX package use GNMT's log P(Y) / ((5 + |Y|) / 6) ** alpha"},
        "source_tokens": "our tokenizer and BPE pieces (tokenizer.json, src.vocab, bpe.merges), then </s>; "
                         "CTranslate2 adds no token itself",
        "tokenizer": TOKENIZER,
        "usage": USAGE,
        "validation": metrics,
        "files": {str(p.relative_to(out)): sha256_file(p) for p in sorted(out.rglob("*"))
                  if p.is_file() and p.name != CARD},
    }


def ct2_stage(cfg: ExportConfig, decoding: Decoding, paths: Ct2Paths) -> Gate:
    """Convert, gate, then (only if the gate passed) replace `paths.out` and write the metrics."""
    gate = Gate(REPORT_NAME)
    if not cfg.ctranslate2:
        with staged_dir(paths.out) as tmp:
            atomic_write_text(tmp / "README.md", "export.ctranslate2 is false in params.yaml: no CTranslate2 model.\n")
            gate.check("enabled", True, "export.ctranslate2 (optional target)", "false: skipped")
            gate.finish(paths.reports)
        atomic_write_text(paths.metrics, json.dumps({"enabled": False}) + "\n")
        return gate
    translator = Translator.from_file(paths.model, decoding, cfg.batch_size)
    state = checkpoint.load(paths.model)
    split = cfg.compare_split or cfg.parity_split
    sources = read_lines(split_file(paths.data, split, translator.vocabs.src_lang))[:cfg.compare_sentences]
    refs = read_lines(split_file(paths.data, split, translator.vocabs.tgt_lang))[:cfg.compare_sentences]
    with staged_dir(paths.out) as tmp:
        convert(translator.model, translator.vocabs.src, translator.vocabs.tgt, tmp / "ctranslate2")
        write_text_files(translator, state["text"]["lowercase"], tmp)
        ct2 = Ct2Translator.open(tmp / "ctranslate2", translator, translator.max_len, "float32", cfg.threads)
        log.info("translating %d %s sentences with torch and CTranslate2", len(sources), split)
        # each as `nmt translate` writes it with the model file and with this folder (sentences, spans, guard)
        expected = list(translate_lines(translator, sources))
        got = list(translate_lines(ct2, sources))
        metrics = {split: {"sentences": len(sources),
                           "identical_lines": sum(a == b for a, b in zip(expected, got)) / max(len(sources), 1),
                           "sacrebleu_torch": sacrebleu_score(expected, refs),
                           "sacrebleu_ctranslate2": sacrebleu_score(got, refs)}}
        m = metrics[split]
        gate.check("BLEU", ranking.within(abs(m["sacrebleu_ctranslate2"] - m["sacrebleu_torch"]), cfg.max_ct2_bleu_gap),
                   f"|CTranslate2 - torch| <= {cfg.max_ct2_bleu_gap:g} sacreBLEU on {split}",
                   f"torch {m['sacrebleu_torch']}, CTranslate2 {m['sacrebleu_ctranslate2']}, "
                   f"{m['identical_lines']:.1%} lines identical", "export.max_ct2_bleu_gap")
        write_card(tmp, _card(translator, decoding, paths.model, tmp, metrics))
        gate.stats.update(metrics)
        gate.finish(paths.reports)
    atomic_write_text(paths.metrics, json.dumps(metrics, indent=2) + "\n")
    log.info("CTranslate2 model written to %s", paths.out)
    return gate


def run(params: Ct2Params, paths: Ct2Paths) -> Gate:
    return ct2_stage(params.export, params.evaluate.decoding, paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("ctranslate2", __doc__.split("\n\n")[0], Ct2Paths, Ct2Params, run, argv)


if __name__ == "__main__":
    sys.exit(main())
