"""Stage 6, evaluate: translate the test sets, score them, gate on a BLEU floor, write the reports.

Per test set (params `evaluate.test_sets`): the validated source file is translated exactly as
`nmt translate` translates it (`nmt.translate.local`: each line cut into sentences, spans kept, the
loop guard) with the tuned beam search, and that output is scored against the raw references
(sacreBLEU + signature, chrF) and its spaCy tokens against the reference's (NLTK corpus BLEU): the
gates and the README judge what users get, not a raw decode of pre-split lines. Outputs, all
written only after the gate passed: `reports/metrics.json` (DVC metrics),
`reports/translations/<set>.txt`, `reports/bleu.md`, `reports/index.html`, `reports/attention/`
(one page and heatmaps per sample) and `reports/assets/` (the pages' stylesheet and script).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from nmt import ranking
from nmt.command import arg, stage_main
from nmt.config.evaluate import EvaluateConfig
from nmt.decode.lines import Tokenizer
from nmt.decode.translator import Translator
from nmt.errors import DataError
from nmt.evaluate.attention import capture, plot_all
from nmt.evaluate.report import attention_page, bleu_markdown, index_page, report_gates, write_assets
from nmt.evaluate.scoring import bleu_by_length, corpus_scores, sentence_bleu
from nmt.files.atomic import atomic_write_text, staged_dir
from nmt.files.killpoints import kill_point
from nmt.files.lines import read_lines, split_file
from nmt.gates.gate import Gate
from nmt.text.tokenizer import SUFFIX, make_tokenizer, read_tokenized
from nmt.text.vocab import UNK
from nmt.translate.offline import translate_lines

log = logging.getLogger(__name__)
REPORT_NAME = "evaluate"


@dataclass(frozen=True)
class EvaluateParams:
    """The params.yaml sections the evaluate stage reads (only these: nmt.config.loader.load_sections)."""

    evaluate: EvaluateConfig  # test sets, decoding, BLEU floor


@dataclass(frozen=True)
class EvaluatePaths:
    model: Path = arg("final model file (models/model.pt)")
    data: Path = arg("validated corpus: sources and raw references (data/validated)")
    tokens: Path = arg("tokenized corpus: spaCy tokens for NLTK BLEU (data/tokens)")
    reports: Path = arg("report directory (reports)")
    gates: Path = arg("gate reports directory (reports/validation)")
    curves: Path | None = arg("training curves PNG to show in the report (reports/train/curves.png)", default=None)


def _read(path: Path, what: str) -> list[str]:
    if not path.is_file():
        raise DataError(f"{path}: {what} not found; is the test set listed under data.corpora.<corpus>.splits "
                        "in params.yaml, and have the data stages run (`dvc repro tokenize`)?")
    return read_lines(path)


def output_tokens(tokenize: Tokenizer, texts: Sequence[str]) -> list[list[str]]:
    """The spaCy tokens of each output text (as the tokenize stage cut the references), each `<unk>`
    the model wrote kept as one token (spaCy would cut it into three)."""
    parts = [text.split(UNK) for text in texts]
    pieces = iter(tokens for tokens, _ in tokenize([p for line in parts for p in line]))
    return [[t for k, _ in enumerate(line) for t in ([UNK] if k else []) + next(pieces)] for line in parts]


def translate_test_set(translator: Translator, cfg: EvaluateConfig, name: str, data_dir: Path,
                       tokens_dir: Path) -> dict[str, Any]:
    """Translate (`nmt translate`'s path, with `translator`'s settings) and score one test set; everything
    the reports need, nothing written."""
    src_lang, tgt_lang = translator.vocabs.src_lang, translator.vocabs.tgt_lang
    sources = _read(split_file(data_dir, name, src_lang), "source file")
    references = _read(split_file(data_dir, name, tgt_lang), "reference file")
    ref_tokens = [t for t, _ in read_tokenized(_read_path(split_file(tokens_dir, name, tgt_lang, SUFFIX)))]
    src_tokens = [t for t, _ in read_tokenized(_read_path(split_file(tokens_dir, name, src_lang, SUFFIX)))]
    if not (len(sources) == len(references) == len(ref_tokens) == len(src_tokens)):
        raise DataError(f"test set {name}: {len(sources)} source lines, {len(references)} reference lines, "
                        f"{len(src_tokens)}/{len(ref_tokens)} tokenized lines in {tokens_dir}; re-run the data stages")
    with tqdm(total=len(sources), unit="sent", desc=f"translate {name}", disable=None) as bar:
        hypotheses = list(translate_lines(translator, sources, bar.update))
    hyp_tokens = output_tokens(make_tokenizer(tgt_lang, bool(translator.text_settings.get("lowercase"))), hypotheses)
    scores = corpus_scores(hypotheses, references, hyp_tokens, ref_tokens)
    sent = sentence_bleu(hypotheses, references)
    rows: list[dict[str, Any]] = [
        {"test_set": name, "line": i + 1, "bleu": b, "source": s, "reference": r, "hypothesis": h}
        for i, (b, s, r, h) in enumerate(zip(sent, sources, references, hypotheses))]

    metrics = {"sacrebleu": scores.sacrebleu, "chrf": scores.chrf, "nltk_bleu": scores.nltk_bleu,
               "sentences": scores.sentences, "length_ratio": scores.length_ratio, "unk_rate": scores.unk_rate,
               "unk_sentences": scores.unk_sentences, "sacrebleu_signature": scores.sacrebleu_signature,
               "chrf_signature": scores.chrf_signature,
               "decoding": {"beam_size": cfg.beam_size, "alpha": cfg.alpha, "max_extra": cfg.max_extra}}
    detail = {"best": ranking.ranked(rows, lambda x: x["bleu"])[:cfg.samples],  # a tie: the earlier line
              "worst": ranking.ranked(rows, lambda x: x["bleu"], higher=False)[:cfg.samples],
              "buckets": bleu_by_length(hypotheses, references, [len(t) for t in src_tokens])}
    attention = _attention_samples(translator, cfg, sources, src_tokens, hypotheses, rows)
    log.info("%s: sacreBLEU %.2f, chrF %.2f, NLTK BLEU %.2f (%d sentences)", name, scores.sacrebleu, scores.chrf,
             scores.nltk_bleu, scores.sentences)
    return {"metrics": metrics, "detail": detail, "hypotheses": hypotheses, "attention": attention}


def _attention_samples(translator: Translator, cfg: EvaluateConfig, sources: list[str], src_tokens: list[list[str]],
                       hypotheses: list[str], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Up to `attention_samples` short lines, evenly spaced, with the ids of the model's own search (the
    heatmaps read the model's attention over them): only lines whose search writes the published output."""
    picks = [i for i, t in enumerate(src_tokens) if 0 < len(t) <= cfg.attention_max_tokens]
    step = max(1, len(picks) // max(1, cfg.attention_samples))
    picks = picks[::step][:2 * cfg.attention_samples]
    searched = translator.search([sources[i] for i in picks])
    same = [(i, r) for i, r in zip(picks, searched)
            if r is not None and translator.detokenizer(translator.vocabs.output_tokens(r[1])) == hypotheses[i]]
    return [dict(rows[i], ids=r) for i, r in same[:cfg.attention_samples]]


def _read_path(path: Path) -> Path:
    if not path.is_file():
        raise DataError(f"{path}: tokenized file not found; run the tokenize stage (`dvc repro tokenize`) with the "
                        "test set listed under data.corpora.<corpus>.splits")
    return path


def _relative(path: Path, start: Path) -> str:
    """`path` as a link from a page in `start` (POSIX separators)."""
    return Path(os.path.relpath(Path(path).resolve(), Path(start).resolve())).as_posix()


def evaluate_stage(cfg: EvaluateConfig, paths: EvaluatePaths) -> Gate:
    """Translate, score and gate every test set; write metrics, translations and report pages."""
    translator = Translator.from_file(paths.model, cfg.decoding, cfg.batch_size)
    sets = cfg.test_sets_for(translator.vocabs.direction)
    results = {name: translate_test_set(translator, cfg, name, paths.data, paths.tokens) for name in sets}
    gate = Gate(REPORT_NAME)
    for name, r in results.items():
        m = r["metrics"]
        gate.check(f"{name}: sacreBLEU floor", m["sacrebleu"] >= cfg.floor(name), f">= {cfg.floor(name):g}",
                   f"{m['sacrebleu']:.2f}",
                   f"evaluate.min_bleu_by_set.{name}" if name in cfg.min_bleu_by_set else "evaluate.min_bleu")
        gate.check(f"{name}: <unk> rate", m["unk_rate"] <= cfg.max_unk_rate,
                   f"<= {cfg.max_unk_rate:g} of output tokens",
                   f"{m['unk_rate']:.4f} ({m['unk_sentences']} of {m['sentences']} sentences contain <unk>)",
                   "evaluate.max_unk_rate")
    metrics = {name: r["metrics"] for name, r in results.items()}
    gate.stats.update(metrics=metrics, model=str(paths.model),
                      empty_translations={n: sum(1 for h in r["hypotheses"] if not h) for n, r in results.items()})
    reports_dir, gate_dir, curves = Path(paths.reports), Path(paths.gates), paths.curves
    samples = [s for r in results.values() for s in r["attention"]]
    details = {name: r["detail"] for name, r in results.items()}
    curves_rel = _relative(curves, reports_dir) if curves is not None and Path(curves).is_file() else None
    # Everything is rendered into staged directories first; a failure (or a failed gate)
    # discards them, so the previous report stays whole.
    with staged_dir(reports_dir / "attention") as att, staged_dir(reports_dir / "translations") as trans, \
            staged_dir(reports_dir / "assets") as assets:
        write_assets(assets)
        for name, r in results.items():
            (trans / f"{name}.txt").write_text("".join(h + "\n" for h in r["hypotheses"]), encoding="utf-8")
        for k, s in enumerate(tqdm(samples, desc="attention plots", unit="sent", disable=None), start=1):
            src_ids, out_ids = s.pop("ids")
            maps = capture(translator.model, src_ids, out_ids, translator.vocabs.src, translator.vocabs.tgt)
            s["page"] = f"sample-{k}.html"
            files = plot_all(maps, att / f"sample-{k}")
            (att / s["page"]).write_text(attention_page(s, files, f"sample-{k}"), encoding="utf-8")
        kill_point("evaluate-plots")
        gate.finish(gate_dir)  # raises GateError: the staged outputs are discarded
        index = index_page(metrics, details, report_gates(gate_dir), _relative(gate_dir, reports_dir),
                           curves_rel, samples)
    atomic_write_text(reports_dir / "bleu.md", bleu_markdown(metrics, details))
    atomic_write_text(reports_dir / "index.html", index)
    atomic_write_text(reports_dir / "metrics.json", json.dumps(metrics, indent=2, ensure_ascii=False) + "\n")
    log.info("report: %s", reports_dir / "index.html")
    return gate


def run(params: EvaluateParams, paths: EvaluatePaths) -> Gate:
    return evaluate_stage(params.evaluate, paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("evaluate", __doc__.split("\n\n")[0], EvaluatePaths, EvaluateParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
