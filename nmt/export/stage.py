"""Stage 7, export: the final model as an ONNX package for consumers, gated on parity.

`models/onnx/` gets the graphs, vocabularies, tokenizer settings and the `model.json` card
(`nmt.export.package`). The package is built in a temporary folder and loaded back through
`nmt.runtime`, as a consumer would. The gate then requires torch and ONNX Runtime to agree on
a validation sample (logits within `export.logits_tolerance`, identical greedy and beam
outputs; `nmt.export.checks`) and, with quantisation, int8 BLEU within
`export.max_int8_bleu_drop` of fp32. Only then does the folder replace `models/onnx/`; a
failed gate leaves the previous package untouched. Metrics (parity, identical test lines,
BLEU, sizes) go to `reports/export.json`.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nmt import ranking
from nmt.command import arg, stage_main
from nmt.config.data import TokenizeConfig, VocabConfig
from nmt.config.evaluate import Decoding, EvaluateConfig
from nmt.config.export import ExportConfig
from nmt.config.train import TrainConfig
from nmt.decode.translator import Translator
from nmt.errors import DataError
from nmt.export import checks as export_checks
from nmt.export.package import build_card, write_package
from nmt.files.atomic import atomic_write_text, staged_dir
from nmt.files.killpoints import kill_point
from nmt.files.lines import read_lines, split_file
from nmt.gates.gate import Gate
from nmt.model import checkpoint
from nmt.runtime.package import write_card
from nmt.runtime.translator import OnnxTranslator

log = logging.getLogger(__name__)

REPORT_NAME = "export"
CARD_PARAMS = ("tokenize", "vocab", "train", "evaluate")  # params sections the card records besides model/export


def read_evaluation(path: Path) -> dict[str, Any]:
    """The evaluate stage's metrics (BLEU per test set) for the card."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: not found; run the evaluate stage first (`dvc repro evaluate`): the model "
                        "card records its BLEU") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read ({exc}); re-run the evaluate stage") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object of metrics per test set; re-run the evaluate stage")
    return data


def _read_split(data_dir: Path, key: str, split: str, lang: str, limit: int | None) -> list[str]:
    path = split_file(data_dir, split, lang)
    if not path.is_file():
        raise DataError(f"{path}: not found; export.{key} must name a split of the validated corpus "
                        f"({data_dir}): run `dvc repro validate` or fix params.yaml")
    return read_lines(path)[:limit]


def corpus_card(report: Path) -> dict[str, Any]:
    """What the card says of the training data, from the validate stage's report: the corpus (or
    mix), each corpus's licence and file hashes, and, for a mix, each source's counts and the
    training pairs dropped for overlapping each dev or test set."""
    try:
        stats = json.loads(Path(report).read_text(encoding="utf-8"))["stats"]
    except (OSError, ValueError, KeyError) as exc:
        raise DataError(f"{report}: cannot read the validate stage's report ({exc}); "
                        "run `dvc repro validate`") from None
    keys = ("corpus", "provenance", "sources", "decontamination", "splits")
    return {"file": str(report), **{k: stats[k] for k in keys if k in stats}}


def check_decoding(gate: Gate, decoding: Decoding, evaluation: dict[str, Any], metrics_path: Path) -> None:
    """The card's BLEU must describe its decoding defaults (a stale metrics file would not)."""
    for split, scores in evaluation.items():
        used = scores.get("decoding") if isinstance(scores, dict) else None
        if isinstance(used, dict):
            keys = [k for k in ("beam_size", "alpha", "max_extra") if k in used]
            ours, theirs = {k: getattr(decoding, k) for k in keys}, {k: used[k] for k in keys}
            gate.check(f"decoding defaults = evaluate's ({split})", ours == theirs,
                       f"export {ours} (the settings of the BLEU in {metrics_path.name})", f"evaluate {theirs}")


@dataclass(frozen=True)
class ExportParams:
    """The params.yaml sections the export stage reads (only these: nmt.config.loader.load_sections)."""

    export: ExportConfig  # the ONNX package and its gate
    evaluate: EvaluateConfig  # the decoding settings the package's card records
    tokenize: TokenizeConfig  # recorded in the card (CARD_PARAMS)
    vocab: VocabConfig  # recorded in the card
    train: TrainConfig  # recorded in the card


@dataclass(frozen=True)
class ExportPaths:
    model: Path = arg("final model file (models/model.pt)")
    data: Path = arg("validated corpus: parity and compare splits (data/validated)")
    metrics: Path = arg("the evaluate stage's metrics, recorded in the card (reports/metrics.json)")
    out: Path = arg("package folder to replace (models/onnx)")
    reports: Path = arg("directory for gate reports (reports/validation)")
    export_metrics: Path = arg("metrics to write: parity, identical test lines, BLEU, sizes (reports/export.json)")
    corpus_report: Path | None = arg("the validate stage's report (reports/validation/raw.json): the corpora, their "
                                     "licences and file hashes, per-source and decontamination counts, for the card",
                                     default=None)


def export_stage(cfg: ExportConfig, decoding: Decoding, paths: ExportPaths,
                 recorded: Mapping[str, Any] | None = None) -> Gate:
    """Export, gate, then (only if the gate passed) replace `paths.out` and write the metrics.
    `recorded`: params sections the card records (tokenize, vocab, train, evaluate)."""
    evaluation = read_evaluation(paths.metrics)
    translator = Translator.from_file(paths.model, decoding, cfg.batch_size)
    state = checkpoint.load(paths.model)  # for the card: training summary and tokenizer settings
    src_lang, tgt_lang = translator.vocabs.src_lang, translator.vocabs.tgt_lang
    parity_lines = _read_split(paths.data, "parity_split", cfg.parity_split, src_lang, cfg.parity_sentences)
    if cfg.compare_split is not None:
        sources = _read_split(paths.data, "compare_split", cfg.compare_split, src_lang, cfg.compare_sentences)
        refs = _read_split(paths.data, "compare_split", cfg.compare_split, tgt_lang, cfg.compare_sentences)
    gate = Gate(REPORT_NAME)
    with staged_dir(paths.out) as tmp:
        graphs = write_package(translator, state["text"]["lowercase"], cfg, tmp)
        kill_point("export-graphs")
        card = build_card(translator, state, cfg, decoding, graphs, tmp, paths.model, evaluation, paths.metrics,
                          recorded or {})
        if paths.corpus_report is not None:
            card["data"] = corpus_card(paths.corpus_report)
        write_card(tmp, card)
        opts: dict[str, Any] = {"device": "cpu", "threads": cfg.threads, "batch_size": cfg.batch_size}
        onnx = OnnxTranslator.from_dir(tmp, **opts)  # as a consumer loads it: files verified
        log.info("parity on %d %s sentences", len(parity_lines), cfg.parity_split)
        par = export_checks.parity(translator.model, onnx, parity_lines, cfg.logits_steps, cfg.batch_size)
        gate.check("logits", par["max_logit_diff"] <= cfg.logits_tolerance,
                   f"max abs(torch - ORT) <= {cfg.logits_tolerance:g}", f"{par['max_logit_diff']:.3g}",
                   "export.logits_tolerance")
        for kind in ("greedy", "beam"):
            share = par[f"{kind}_identical"]
            gate.check(f"{kind} outputs", share == 1.0 and par["sentences"] > 0,
                       f"identical on all {cfg.parity_split} sample sentences",
                       f"{share:.2%} of {par['sentences']} identical" +
                       (f"; first difference {par['first_difference'][kind]}"
                        if kind in par["first_difference"] else ""))
        check_decoding(gate, decoding, evaluation, paths.metrics)
        metrics: dict[str, Any] = {"parity": {k: v for k, v in par.items() if k != "first_difference"}}
        metrics["size_mb"] = {v: round(sum(g["bytes"] for g in files.values()) / 1e6, 2) for v, files in graphs.items()}
        if cfg.compare_split is not None:
            int8 = OnnxTranslator.from_dir(tmp, int8=True, **opts) if cfg.quantize else None
            log.info("translating %d %s sentences with torch and ONNX Runtime", len(sources), cfg.compare_split)
            cmp = export_checks.compare_texts(translator, onnx, int8, sources, refs)
            metrics[cfg.compare_split] = cmp
            if int8 is not None:
                gate.check("int8 BLEU", ranking.within(-cmp["int8_bleu_change"], cfg.max_int8_bleu_drop),
                           f"drop <= {cfg.max_int8_bleu_drop:g} sacreBLEU on {cfg.compare_split}",
                           f"{cmp['sacrebleu_onnx']} -> {cmp['sacrebleu_int8']} ({cmp['int8_bleu_change']:+.2f})",
                           "export.max_int8_bleu_drop")
        card["validation"] = metrics
        write_card(tmp, card)
        gate.stats.update(metrics)
        gate.finish(paths.reports)
    atomic_write_text(paths.export_metrics, json.dumps(metrics, indent=2) + "\n")
    log.info("ONNX package written to %s", paths.out)
    return gate


def run(params: ExportParams, paths: ExportPaths) -> Gate:
    recorded = {name: asdict(getattr(params, name)) for name in CARD_PARAMS}
    return export_stage(params.export, params.evaluate.decoding, paths, recorded)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("export", __doc__.split("\n\n")[0], ExportPaths, ExportParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
