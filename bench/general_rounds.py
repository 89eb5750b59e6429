"""The general models round by round: each training run's scores on every test set and its training
figures, read from the reports committed by the commit that trained it (docs/data.md's ablation table).

A round is `LABEL=REV`: the general pipeline's `reports/general/<direction>/metrics.json` (evaluate)
and `validation/train.json` (train) as committed at REV, for each direction trained there. Nothing is
decoded or trained here: a round is a committed run, so its figures stay those of that run, whatever
the pipeline has become since. A direction whose reports were last written by an earlier round's run
(not retrained since) is left out of the later round.

    python -m bench.general_rounds \
        --round "round 1: Multi30k, Tatoeba 2018, WMT news 2008-2012=c9b4419" \
        --round "round 2: + WMT23 system outputs (consensus)=HEAD"
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common.record import ROOT, write_result

DIRECTIONS = ("de-en", "en-de")
TRAIN_KEYS = ("epochs", "updates", "val_loss", "final_weights")


def committed(rev: str, path: str) -> Any | None:
    """The JSON file `path` as committed at `rev`; None where that commit has none."""
    proc = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, capture_output=True, text=True)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def commit_of(rev: str, path: str) -> str:
    """The commit that last wrote `path` at or before `rev` (the run's own commit)."""
    out = subprocess.run(["git", "log", "-1", "--format=%H", rev, "--", path], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.strip()
    return out or rev


def round_figures(label: str, rev: str) -> dict[str, Any]:
    """One round: per direction trained at `rev`, its test sets' scores and its training figures."""
    directions = {}
    for direction in DIRECTIONS:
        metrics_path = f"reports/general/{direction}/metrics.json"
        metrics = committed(rev, metrics_path)
        if metrics is None:
            continue
        train = (committed(rev, f"reports/general/{direction}/validation/train.json") or {}).get("stats", {})
        directions[direction] = {
            "commit": commit_of(rev, metrics_path),
            "train": {k: train[k] for k in TRAIN_KEYS if k in train},
            "scores": {name: {"sacrebleu": m["sacrebleu"], "chrf": m["chrf"], "sentences": m["sentences"]}
                       for name, m in metrics.items()}}
    if not directions:
        raise SystemExit(f"{label}: no reports/general/*/metrics.json at {rev}: is it the commit of a general run?")
    return {"label": label, "rev": rev, "directions": directions}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--round", dest="rounds", action="append", required=True, metavar="LABEL=REV",
                   help="a round: its label and the commit whose reports hold its run (repeat, oldest first)")
    p.add_argument("--out", type=Path, default=None, help="results folder (default bench/results)")
    args = p.parse_args(argv)
    rounds = []
    for spec in args.rounds:
        label, sep, rev = spec.rpartition("=")
        if not sep or not label or not rev:
            p.error(f"--round {spec!r}: expected LABEL=REV")
        figures = round_figures(label, rev)
        for earlier in rounds:  # a direction not retrained since an earlier round is that round's run
            for direction, d in earlier["directions"].items():
                if figures["directions"].get(direction, {}).get("commit") == d["commit"]:
                    del figures["directions"][direction]
        rounds.append(figures)
    kwargs = {} if args.out is None else {"out_dir": args.out}
    write_result("general_rounds", {"rounds": rounds}, repeats=1, **kwargs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
