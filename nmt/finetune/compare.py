"""Fine-tune stage 3, compare: the fine-tuned model beside its parent on every test set, gated on the
general ones (params: finetune, data).

Both models were scored by the evaluate stage on the fine-tune's test sets (the parent into
`--parent-reports`, the fine-tune into `--reports`). The gate fails a fine-tune that loses more than
`finetune.max_general_drop` sacreBLEU on a set of `finetune.general_sets` (what the parent could do
and the fine-tune must keep); every set's before and after is reported. The page (`finetune.md`, and
`compare.json` for the publish stage and the registry) shows sacreBLEU and chrF per set with the
change, the training curves, and the sentences whose translation changed most (sentence BLEU against
the reference, both ways). Written only when the gate passed (a failed gate leaves the previous page).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.command import arg, stage_main
from nmt.config.data import DataConfig
from nmt.config.finetune import FinetuneConfig
from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text, staged_dir
from nmt.files.lines import read_lines, split_file
from nmt.gates.gate import Gate

log = logging.getLogger(__name__)

REPORT_NAME = "finetune-compare"
CHANGED = 5  # sentences shown each way (most improved, most worsened) per test set


@dataclass(frozen=True)
class CompareParams:
    finetune: FinetuneConfig  # general_sets, max_general_drop
    data: DataConfig  # the direction: which side of the test sets is the reference


@dataclass(frozen=True)
class ComparePaths:
    parent_reports: Path = arg("the evaluate stage's output for the parent on the fine-tune's test sets")
    reports: Path = arg("the evaluate stage's output for the fine-tuned model")
    data: Path = arg("the fine-tune's validated corpus (the references)")
    curves: Path = arg("the fine-tune's training curves (its train reports' curves.png)")
    out: Path = arg("folder to write: finetune.md, compare.json, curves.png")
    gates: Path = arg("directory for the gate report")


def read_metrics(reports: Path) -> dict[str, dict[str, Any]]:
    path = Path(reports) / "metrics.json"
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
        return {name: m for name, m in metrics.items() if isinstance(m, dict) and "sacrebleu" in m}
    except (OSError, ValueError, AttributeError) as exc:
        raise DataError(f"{path}: cannot read the evaluate stage's metrics ({exc}); run its evaluate stage") from None


def changed_sentences(sources: list[str], refs: list[str], before: list[str], after: list[str],
                      most: int = CHANGED) -> dict[str, Any]:
    """The `most` sentences whose sentence BLEU against the reference rose most, and fell most."""
    from sacrebleu.metrics import BLEU

    bleu = BLEU(effective_order=True)
    rows: list[dict[str, Any]] = []
    for i, (src, ref, old, new) in enumerate(zip(sources, refs, before, after, strict=True)):
        if old != new:
            old_s, new_s = bleu.sentence_score(old, [ref]).score, bleu.sentence_score(new, [ref]).score
            rows.append({"line": i + 1, "source": src, "reference": ref, "parent": old, "finetuned": new,
                         "parent_bleu": round(old_s, 1), "finetuned_bleu": round(new_s, 1),
                         "change": round(new_s - old_s, 1)})
    rows.sort(key=lambda r: (-r["change"], r["line"]))
    worse = sorted((r for r in rows if r["change"] < 0), key=lambda r: (r["change"], r["line"]))
    return {"improved": [r for r in rows if r["change"] > 0][:most], "worsened": worse[:most],
            "changed": len(rows), "sentences": len(sources)}


def compare(parent: dict[str, dict[str, Any]], child: dict[str, dict[str, Any]], ft: FinetuneConfig,
            gate: Gate) -> list[dict[str, Any]]:
    """One row per test set both were scored on; the general sets gated (a set neither was scored on is
    another direction's: `evaluate.test_set_directions`)."""
    one_sided = [s for s in ft.general_sets if (s in child) != (s in parent)]
    gate.check("general sets scored", not one_sided, "each general set scored for both models or neither",
               f"scored for one only: {one_sided}" if one_sided else "both")
    gate.stats["general_sets_of_the_other_direction"] = [s for s in ft.general_sets if s not in child | parent]
    rows = []
    for name in sorted(set(parent) & set(child)):
        row = {"set": name, "general": name in ft.general_sets,
               **{f"{who}_{k}": m[k] for who, m in (("parent", parent[name]), ("finetuned", child[name]))
                  for k in ("sacrebleu", "chrf")},
               "change": round(child[name]["sacrebleu"] - parent[name]["sacrebleu"], 2)}
        rows.append(row)
        if row["general"]:
            gate.check(f"{name}: sacreBLEU kept", row["change"] >= -ft.max_general_drop,
                       f">= parent - {ft.max_general_drop:g} ({parent[name]['sacrebleu'] - ft.max_general_drop:.2f})",
                       f"{child[name]['sacrebleu']:.2f} ({row['change']:+.2f})", "finetune.max_general_drop")
    return rows


def markdown(rows: list[dict[str, Any]], changes: dict[str, dict[str, Any]], ft: FinetuneConfig) -> str:
    lines = ["# Fine-tune beside its parent", "",
             f"sacreBLEU and chrF (detokenized, cased) on every test set; general sets (kept within "
             f"{ft.max_general_drop:g} sacreBLEU of the parent, or the gate fails): "
             f"{', '.join(ft.general_sets) or 'none'}.", "",
             "| test set | general | parent sacreBLEU | fine-tuned sacreBLEU | change | parent chrF "
             "| fine-tuned chrF |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['set']} | {'yes' if r['general'] else 'no'} | {r['parent_sacrebleu']:.2f} | "
              f"{r['finetuned_sacrebleu']:.2f} | {r['change']:+.2f} | {r['parent_chrf']:.2f} | "
              f"{r['finetuned_chrf']:.2f} |" for r in rows]
    lines += ["", "![training curves](curves.png)", ""]
    for name, change in changes.items():
        lines += [f"## {name}: the sentences that changed most", "",
                  f"{change['changed']} of {change['sentences']} translations changed.", ""]
        for kind in ("improved", "worsened"):
            lines += [f"**{kind}** (sentence BLEU against the reference, parent -> fine-tuned):", ""]
            lines += [f"- line {r['line']}, {r['parent_bleu']} -> {r['finetuned_bleu']}: `{_cell(r['source'])}`  \n"
                      f"  parent: {_cell(r['parent'])}  \n  fine-tuned: {_cell(r['finetuned'])}  \n"
                      f"  reference: {_cell(r['reference'])}" for r in change[kind]] or ["- none"]
            lines.append("")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def compare_stage(ft: FinetuneConfig, data: DataConfig, paths: ComparePaths) -> Gate:
    src, tgt = data.direction.split("-")
    parent, child = read_metrics(paths.parent_reports), read_metrics(paths.reports)
    gate = Gate(REPORT_NAME)
    rows = compare(parent, child, ft, gate)
    changes = {}
    for row in rows:
        name = row["set"]
        read = [read_lines(p) for p in (split_file(paths.data, name, src), split_file(paths.data, name, tgt),
                                        Path(paths.parent_reports) / "translations" / f"{name}.txt",
                                        Path(paths.reports) / "translations" / f"{name}.txt")]
        if len({len(r) for r in read}) != 1:
            raise DataError(f"{name}: {len(read[0])} sources, {len(read[1])} references, {len(read[2])} and "
                            f"{len(read[3])} translations; re-run both evaluate stages")
        changes[name] = changed_sentences(read[0], read[1], read[2], read[3])
    gate.stats.update(sets=rows)
    gate.finish(paths.gates)
    with staged_dir(paths.out) as tmp:
        atomic_write_text(tmp / "compare.json", json.dumps({"sets": rows, "changed": changes}, indent=2) + "\n")
        atomic_write_text(tmp / "finetune.md", markdown(rows, changes, ft))
        (tmp / "curves.png").write_bytes(Path(paths.curves).read_bytes())
    log.info("fine-tune beside its parent: %s", ", ".join(f"{r['set']} {r['change']:+.2f}" for r in rows))
    return gate


def run(params: CompareParams, paths: ComparePaths) -> Gate:
    return compare_stage(params.finetune, params.data, paths)


def main(argv: Sequence[str] | None = None) -> int:
    return stage_main("finetune-compare", __doc__.split("\n\n")[0], ComparePaths, CompareParams, run, argv)


if __name__ == "__main__":
    sys.exit(main())
