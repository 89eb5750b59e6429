"""The sweep's table: DVC experiments (`dvc exp show --json`) -> a markdown table in reports/.

A sweep is queued with `dvc exp run --queue -n NAME -S key=value ... evaluate` and run with
`dvc queue start`. This module turns its experiments into one table: a row per experiment
with the params it changed against its baseline commit, the scores of one split of
`reports/metrics.json` (val: tuning never looks at a test set) and the training progress.
Settings that every experiment of the table changed alike (the proxy budget) are listed once
above it instead of in every row. The table goes between `<!-- experiments:ID -->` and
`<!-- /experiments:ID -->` in the output file, so the prose around it survives regeneration.

    python -m flows.experiments --id proxy --match 'p3-*' --split val --out reports/experiments.md
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.tools import ToolMissing, dvc_command, tool_env
from nmt import ranking
from nmt.files.atomic import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
SCORES = (("sacrebleu", "sacreBLEU"), ("chrf", "chrF"), ("nltk_bleu", "NLTK BLEU"))


@dataclass(frozen=True)
class Experiment:
    name: str
    changes: dict[str, Any]  # flattened params.yaml keys whose value differs from the baseline
    scores: dict[str, Any]  # reports/metrics.json of the tuning split ({} if the run failed)
    training: dict[str, Any]  # reports/train/live/metrics.json (last record)


def flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def _file_data(data: Mapping[str, Any], kind: str, path: str) -> dict[str, Any]:
    return ((data.get(kind) or {}).get(path) or {}).get("data") or {}


def experiments(show: Sequence[Mapping[str, Any]], split: str, match: str = "*") -> list[Experiment]:
    """Experiments of `dvc exp show --json` output whose name matches `match`."""
    found = []
    for base in show:
        base_params = flatten(_file_data(base.get("data") or {}, "params", "params.yaml"))
        for group in base.get("experiments") or []:
            for rev in group.get("revs") or []:
                name = rev.get("name") or rev["rev"][:7]
                if not fnmatch.fnmatch(name, match) or not rev.get("data"):
                    continue
                params = flatten(_file_data(rev["data"], "params", "params.yaml"))
                changes = {k: v for k, v in params.items() if base_params.get(k) != v}
                scores = _file_data(rev["data"], "metrics", "reports/metrics.json").get(split, {})
                found.append(Experiment(name, changes, scores, _file_data(rev["data"], "metrics",
                                                                          "reports/train/live/metrics.json")))
    return found


def shared_changes(rows: Sequence[Experiment]) -> dict[str, Any]:
    """The changes every row makes alike (the sweep's common settings)."""
    if not rows:
        return {}
    first = rows[0].changes
    return {k: v for k, v in first.items() if all(r.changes.get(k, object()) == v for r in rows[1:])}


def _value(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def table_markdown(rows: Sequence[Experiment], split: str) -> str:
    common = shared_changes(rows)
    ranked = ranking.ranked(rows, lambda r: float(r.scores.get("sacrebleu", float("-inf"))))
    lines = [f"Scores on `{split}` (beam and length penalty as in the row's `evaluate` params), best first. "
             "Every run here: " + (", ".join(f"`{k}={_value(v)}`" for k, v in sorted(common.items())) or "-") + ".",
             "",
             "| experiment | changes | " + " | ".join(label for _, label in SCORES)
             + " | <unk> % | length ratio | updates | epochs | train tok/s | val loss |",
             "|---|---|" + "---:|" * (len(SCORES) + 6)]
    for r in ranked:
        own = ", ".join(f"`{k}={_value(v)}`" for k, v in sorted(r.changes.items()) if k not in common) or "(baseline)"
        s, t = r.scores, r.training
        cells = [f"{s[key]:.2f}" if key in s else "-" for key, _ in SCORES]  # "-": failed or unfinished
        cells += [f"{100 * s['unk_rate']:.2f}" if "unk_rate" in s else "-",
                  f"{s['length_ratio']:.3f}" if "length_ratio" in s else "-",
                  str(t.get("step", "-")), str(t.get("epoch", "-")),
                  f"{t['tokens_per_s']:.0f}" if "tokens_per_s" in t else "-",
                  f"{t['val_loss']:.3f}" if "val_loss" in t else "-"]
        lines.append(f"| {r.name} | {own} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def replace_block(text: str, block_id: str, body: str) -> str:
    """`text` with the block between the markers of `block_id` replaced (appended if absent)."""
    start, end = f"<!-- experiments:{block_id} -->", f"<!-- /experiments:{block_id} -->"
    block = f"{start}\n{body}{end}"
    if start in text and end in text:
        return text[: text.index(start)] + block + text[text.index(end) + len(end):]
    return text.rstrip("\n") + ("\n\n" if text.strip() else "") + block + "\n"


def dvc_exp_show(project: Path, revs: int) -> list[dict[str, Any]]:
    proc = subprocess.run(dvc_command("exp", "show", "--json", "-n", str(revs)), cwd=project, env=tool_env(),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"experiments: `dvc exp show` failed: {last}")
    return json.loads(proc.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.experiments", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--id", required=True, help="name of the table's block in the output file")
    p.add_argument("--match", default="*", help="experiment names to include (glob, default: all)")
    p.add_argument("--split", default="val", help="split of reports/metrics.json to show (default: val)")
    p.add_argument("--revs", type=int, default=5, help="commits back from HEAD whose experiments are read")
    p.add_argument("--out", type=Path, default=ROOT / "reports" / "experiments.md")
    args = p.parse_args(argv)
    try:
        shown = dvc_exp_show(ROOT, args.revs)
    except ToolMissing as exc:
        print(f"experiments: error: {exc}", file=sys.stderr)
        return 1
    rows = experiments(shown, args.split, args.match)
    if not rows:
        print(f"experiments: no experiment matches {args.match!r}; see `dvc exp show`", file=sys.stderr)
        return 1
    old = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    atomic_write_text(args.out, replace_block(old, args.id, table_markdown(rows, args.split)))
    print(f"{args.out}: {len(rows)} experiments in table {args.id!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
