"""The general configuration's baseline stage: another model on the same test sets, side by side.

The Multi30k model (the default pipeline's `models/model.pt`) translates the test sets of its
direction listed in general/params.yaml (`evaluate.test_sets`, `test_set_directions`), decoded
as the general model is (`evaluate.beam_size`, `alpha`, `max_extra`) and scored as the evaluate
stage scores (sacreBLEU and chrF with signatures, NLTK BLEU). No gate: a caption model is
expected to fail out of its domain; this stage measures by how much. Outputs:
`<reports>/metrics.json`, `<reports>/translations/<set>.txt` and `<reports>/index.html`, a page
setting both models' scores side by side per test set, with evenly spaced lines of each set
(source, reference, both translations; not picked by score).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

from nmt.command import arg, stage_main
from nmt.config.evaluate import EvaluateConfig
from nmt.decode.translator import Translator
from nmt.errors import DataError
from nmt.evaluate.report import page, table, write_assets
from nmt.evaluate.stage import EvaluateParams, translate_test_set
from nmt.files.atomic import atomic_write_text, staged_dir
from nmt.files.lines import read_lines, split_file

log = logging.getLogger(__name__)
LINES_SHOWN = 6  # lines of each test set on the page, evenly spaced


@dataclass(frozen=True)
class BaselinePaths:
    model: Path = arg("the model to compare with (models/model.pt: the Multi30k model)")
    data: Path = arg("validated corpus: sources and raw references (data/general/validated)")
    tokens: Path = arg("tokenized corpus: spaCy tokens for NLTK BLEU (data/general/tokens)")
    against: Path = arg("the general model's evaluate reports of the same direction (reports/general/de-en)")
    reports: Path = arg("where this stage writes (reports/general/baseline)")


def _against(folder: Path, name: str) -> tuple[dict[str, Any], list[str]]:
    """The general model's scores and translations of one test set."""
    try:
        metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{folder / 'metrics.json'}: cannot read ({exc}); run that direction's evaluate stage "
                        "first (`dvc repro general/dvc.yaml:evaluate@de-en`)") from None
    if name not in metrics:
        raise DataError(f"{folder / 'metrics.json'}: no scores for {name}; the general model was scored on "
                        f"{', '.join(metrics)}: re-run its evaluate stage")
    return metrics[name], read_lines(folder / "translations" / f"{name}.txt")


def comparison_page(direction: str, rows: list[dict[str, Any]], assets: str) -> str:
    """The side-by-side page: scores per test set, then a few lines of each set."""
    header = ["test set", "sentences", "general: sacreBLEU", "Multi30k: sacreBLEU", "general: chrF", "Multi30k: chrF"]
    scores = [[escape(r["name"]), r["ours"]["sentences"], f"{r['ours']['sacrebleu']:.2f}",
               f"{r['theirs']['sacrebleu']:.2f}", f"{r['ours']['chrf']:.2f}", f"{r['theirs']['chrf']:.2f}"]
              for r in rows]
    first = rows[0]["ours"]
    body = [f"<p>Both models translate the same {escape(direction)} sources with beam "
            f"{first['decoding']['beam_size']} and length penalty {first['decoding']['alpha']}; sacreBLEU "
            f"<span class=\"sig\">{escape(first['sacrebleu_signature'])}</span>, chrF "
            f"<span class=\"sig\">{escape(first['chrf_signature'])}</span>.</p>",
            table(header, scores, {1, 2, 3, 4, 5})]
    for r in rows:
        lines = [[n, escape(s), escape(ref), escape(o), escape(t)] for n, s, ref, o, t in r["lines"]]
        body += [f"<h2>{escape(r['name'])}</h2>",
                 table(["line", "source", "reference", "general model", "Multi30k model"], lines, {0})]
    return page(f"General model vs the Multi30k model, {direction}", "\n".join(body), assets)


def baseline_stage(cfg: EvaluateConfig, paths: BaselinePaths) -> dict[str, Any]:
    translator = Translator.from_file(paths.model, cfg.decoding, cfg.batch_size)
    direction = translator.vocabs.direction
    results, rows = {}, []
    for name in cfg.test_sets_for(direction):
        ours, our_lines = _against(Path(paths.against), name)
        theirs = translate_test_set(translator, cfg, name, paths.data, paths.tokens)
        results[name] = theirs
        sources = read_lines(split_file(paths.data, name, translator.vocabs.src_lang))
        refs = read_lines(split_file(paths.data, name, translator.vocabs.tgt_lang))
        if not len(sources) == len(our_lines) == len(theirs["hypotheses"]):
            raise DataError(f"{paths.against}/translations/{name}.txt: {len(our_lines)} lines for {len(sources)} "
                            "sources; re-run that direction's evaluate stage")
        step = max(1, len(sources) // LINES_SHOWN)
        shown = [(i + 1, sources[i], refs[i], our_lines[i], theirs["hypotheses"][i])
                 for i in range(step // 2, len(sources), step)][:LINES_SHOWN]
        rows.append({"name": name, "ours": ours, "theirs": theirs["metrics"], "lines": shown})
        log.info("%s: general %.2f, this model %.2f sacreBLEU", name, ours["sacrebleu"],
                 theirs["metrics"]["sacrebleu"])
    if not rows:
        raise DataError(f"{paths.model} translates {direction}: "
                        "general/params.yaml lists no test set of that direction")
    reports = Path(paths.reports)
    reports.mkdir(parents=True, exist_ok=True)
    with staged_dir(reports / "translations") as trans, staged_dir(reports / "assets") as assets:
        write_assets(assets)
        for name, r in results.items():
            (trans / f"{name}.txt").write_text("".join(h + "\n" for h in r["hypotheses"]), encoding="utf-8")
    metrics = {name: r["metrics"] for name, r in results.items()}
    atomic_write_text(reports / "index.html", comparison_page(direction, rows, "assets"))
    atomic_write_text(reports / "metrics.json", json.dumps(metrics, indent=2, ensure_ascii=False) + "\n")
    return metrics


def run(params: EvaluateParams, paths: BaselinePaths) -> dict[str, Any]:
    return baseline_stage(params.evaluate, paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("baseline", __doc__.split("\n\n")[0], BaselinePaths, EvaluateParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
