"""Replay's effect on a fine-tune (issue 66): one fine-tune of finetune/dvc.yaml trained again with each replay
share (by default 0, 10% and 30% of each epoch drawn from the parent's training pairs), each scored on the
fine-tune's test sets, beside its parent's scores there.

The commands are finetune/dvc.yaml's own (its `finetune` and `evaluate` stages for `--key`, ${key} and
${item.*} filled in), with the params file copied and `finetune.replay` set, and the outputs (checkpoints,
model, reports) in a scratch folder: the pipeline's outputs are not touched. Run it after
`make finetune FINETUNE=<key>` (the vocabulary, the ids and the parent's scores are that run's).

    python -m bench.finetune_replay --key multi30k-de-en [--shares 0 0.1 0.3]

Results (`bench/results/finetune_replay.json`, key `results`): per share the updates, why training stopped,
its seconds, and sacreBLEU / chrF per test set; the parent's scores per set (`parent`, from
reports/finetune/<key>/parent/metrics.json); which sets are general (`finetune.general_sets`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from bench.common.finetune_runs import arg_of, params_copy, redirect, run, stage_command
from bench.common.record import RESULTS, ROOT, write_result


def one_share(project: Path, dvcfile: Path, key: str, share: float, work: Path) -> dict[str, Any]:
    train = stage_command(dvcfile, "finetune", key)
    copy = params_copy(project / arg_of(train, "--params"), {"finetune.replay": share}, work)
    seconds = run(redirect(train, copy, work), project)
    evaluate = stage_command(dvcfile, "evaluate", key)
    run(redirect(evaluate, copy, work), project)
    gate = json.loads((work / "reports" / "finetune.json").read_text(encoding="utf-8"))  # the finetune stage's gate
    metrics = json.loads((work / "reports" / "metrics.json").read_text(encoding="utf-8"))
    return {"replay": share, "updates": gate["stats"]["updates"], "stopped": gate["stats"]["stopped"],
            "seconds": round(seconds, 1),
            "sets": {name: {"sacrebleu": m["sacrebleu"], "chrf": m["chrf"]} for name, m in metrics.items()
                     if isinstance(m, dict) and "sacrebleu" in m}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--key", required=True, help="the fine-tune (an entry of finetune/dvc.yaml's foreach)")
    p.add_argument("--shares", type=float, nargs="+", default=[0.0, 0.1, 0.3], help="replay shares to train")
    p.add_argument("--project", type=Path, default=ROOT, help="the project whose fine-tune this is")
    p.add_argument("--results", type=Path, default=RESULTS, help="where finetune_replay.json goes")
    args = p.parse_args(argv)
    project = args.project.resolve()
    dvcfile = project / "finetune" / "dvc.yaml"
    parent_metrics = project / "reports" / "finetune" / args.key / "parent" / "metrics.json"
    if not parent_metrics.is_file():
        raise SystemExit(f"{parent_metrics} not found: run `make finetune FINETUNE={args.key}` first")
    parent = {name: {"sacrebleu": m["sacrebleu"], "chrf": m["chrf"]}
              for name, m in json.loads(parent_metrics.read_text(encoding="utf-8")).items()
              if isinstance(m, dict) and "sacrebleu" in m}
    rows = []
    with tempfile.TemporaryDirectory(prefix="nmt-finetune-replay-") as tmp:
        for share in args.shares:
            rows.append(one_share(project, dvcfile, args.key, share, Path(tmp) / f"replay-{share:g}"))
            print(f"replay {share:.0%}: " + ", ".join(f"{n} {s['sacrebleu']}" for n, s in rows[-1]["sets"].items()))
    train = stage_command(dvcfile, "finetune", args.key)
    params = yaml.safe_load((project / arg_of(train, "--params")).read_text(encoding="utf-8"))
    write_result("finetune_replay", {"key": args.key, "general_sets": params["finetune"]["general_sets"],
                                     "parent": parent, "rows": rows}, repeats=1, out_dir=args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
