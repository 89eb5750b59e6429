"""A fine-tune's schedule chosen on dev sets only (issue 66): each candidate schedule trained in turn with
finetune/dvc.yaml's own `finetune` command, then it and the parent scored on the domain's dev set and on a
general dev set; no test set is read.

Each `--config` is a list of `section.key=value` changes to the fine-tune's params file (e.g.
`finetune.lr=5e-5 finetune.replay=0.3 finetune.max_steps=1800 train.patience=20`); the run goes into a
scratch folder (the pipeline's outputs are not touched), so run it after the fine-tune's data stages
(`make finetune FINETUNE=<key>` or `dvc repro finetune/dvc.yaml:binarize@<key>`) and with the parent trained.
The dev sets: the fine-tune's own `val` split (`data/finetune/<data>/validated/val.<lang>`) and newstest2013
from the data mirror (`$NMT_DATA_MIRROR/wmt-news/newstest2013.de-en.<lang>`, the general parents' dev set), or
those given with `--dev NAME=PREFIX` (PREFIX.<src> and PREFIX.<tgt>).

    NMT_DATA_MIRROR=../shared/data python -m bench.finetune_schedule --key multi30k-de-en \
        --config "finetune.lr=1e-4 finetune.replay=0.3" --config "finetune.lr=5e-5 finetune.replay=0.3"

The rule (the `chosen` row): the highest BLEU on the first dev set (the domain's) among the configurations
that lose at most `finetune.max_general_drop` on every other dev set against the parent; if none does, the one
that loses least there. Results (`bench/results/finetune_schedule.json`, key `results`): `key`, `decoding`,
`dev` (per set: its files and sentences), `parent` (sacreBLEU per dev set), `rows` (per configuration: its
changes, updates, why it stopped, minutes, sacreBLEU per dev set), `max_general_drop`, `chosen` (a row index).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import sacrebleu
import yaml

from bench.common.finetune_runs import arg_of, params_copy, redirect, run, stage_command
from bench.common.record import RESULTS, ROOT, write_result
from nmt.config.evaluate import Decoding
from nmt.decode.translator import Translator
from nmt.files.lines import read_lines
from nmt.translate.offline import translate_lines

GENERAL_DEV = "wmt-news/newstest2013.de-en"  # in the data mirror: the general parents' dev set


def parse_config(text: str) -> dict[str, Any]:
    """"finetune.lr=5e-5 train.patience=20" -> {"finetune.lr": 5e-05, "train.patience": 20} (YAML values,
    numbers such as 5e-5 included)."""
    changes = {}
    for part in text.split():
        key, sep, value = part.partition("=")
        if not sep or "." not in key:
            raise SystemExit(f"--config {text!r}: {part!r} is not section.key=value")
        changes[key] = yaml.safe_load(value)
        if isinstance(changes[key], str):  # YAML 1.1 reads 5e-5 as text
            try:
                changes[key] = float(changes[key])
            except ValueError:
                pass
    if not changes:
        raise SystemExit("--config is empty: give section.key=value changes")
    return changes


def dev_sets(given: list[str], val_prefix: Path, mirror: str | None, src: str, tgt: str
             ) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (sources, references): the fine-tune's val and the general dev set, or those of --dev."""
    prefixes = dict(g.split("=", 1) for g in given) if given else {}
    if not prefixes:
        if not mirror:
            raise SystemExit("set NMT_DATA_MIRROR (the data mirror, for newstest2013) or give --dev NAME=PREFIX")
        prefixes = {"val": str(val_prefix), "newstest2013": str(Path(mirror) / GENERAL_DEV)}
    sets = {}
    for name, prefix in prefixes.items():
        files = [Path(f"{prefix}.{lang}") for lang in (src, tgt)]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise SystemExit(f"dev set {name}: {', '.join(missing)} not found")
        sources, refs = (read_lines(f) for f in files)
        if len(sources) != len(refs):
            raise SystemExit(f"dev set {name}: {len(sources)} source lines but {len(refs)} reference lines")
        sets[name] = (sources, refs)
    return sets


def score(model: Path, sets: dict[str, tuple[list[str], list[str]]], decoding: Decoding) -> dict[str, float]:
    translator = Translator.from_file(model, decoding)
    scores = {}
    for name, (sources, refs) in sets.items():
        hyps = list(translate_lines(translator, sources))  # as `nmt translate` writes them (issue 77)
        scores[name] = round(sacrebleu.corpus_bleu(hyps, [refs]).score, 2)
        print(f"  {name}: sacreBLEU {scores[name]:.2f}", flush=True)
    return scores


def choose(parent: dict[str, float], rows: list[dict[str, Any]], max_drop: float) -> int:
    """The rule of the module docstring; ties: the earlier configuration."""
    domain, *general = list(parent)

    def loss(row: dict[str, Any]) -> float:
        return max([parent[n] - row["scores"][n] for n in general] or [0.0])

    kept = [i for i, r in enumerate(rows) if loss(r) <= max_drop]
    if kept:
        return max(kept, key=lambda i: (rows[i]["scores"][domain], -i))
    return min(range(len(rows)), key=lambda i: (loss(rows[i]), i))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--key", required=True, help="the fine-tune (an entry of finetune/dvc.yaml's foreach)")
    p.add_argument("--config", action="append", required=True,
                   help="one candidate: space-separated section.key=value changes (repeat per candidate)")
    p.add_argument("--dev", action="append", default=[], help="NAME=PREFIX: a dev set (the first: the domain's)")
    p.add_argument("--beam", type=int, default=1, help="beam size of the dev scoring (1: greedy)")
    p.add_argument("--project", type=Path, default=ROOT, help="the project whose fine-tune this is")
    p.add_argument("--results", type=Path, default=RESULTS, help="where finetune_schedule.json goes")
    args = p.parse_args(argv)
    configs = [parse_config(c) for c in args.config]
    project = args.project.resolve()
    dvcfile = project / "finetune" / "dvc.yaml"
    train = stage_command(dvcfile, "finetune", args.key)
    params_file = project / arg_of(train, "--params")
    params = yaml.safe_load(params_file.read_text(encoding="utf-8"))
    src, tgt = arg_of(stage_command(dvcfile, "binarize", args.key), "--direction").split("-")
    data = Path(arg_of(stage_command(dvcfile, "evaluate", args.key), "--data"))
    sets = dev_sets(args.dev, project / data / "val", os.environ.get("NMT_DATA_MIRROR"), src, tgt)
    decoding = Decoding(beam_size=args.beam, alpha=params["evaluate"]["alpha"],
                        max_extra=params["evaluate"]["max_extra"])
    print(f"parent {arg_of(train, '--parent')}:", flush=True)
    parent = score(project / arg_of(train, "--parent"), sets, decoding)
    rows = []
    with tempfile.TemporaryDirectory(prefix="nmt-finetune-schedule-") as tmp:
        for i, changes in enumerate(configs):
            work = Path(tmp) / f"config-{i}"
            print(f"config {i}: {' '.join(f'{k}={v}' for k, v in changes.items())}", flush=True)
            seconds = run(redirect(train, params_copy(params_file, changes, work), work), project)
            stats = json.loads((work / "reports" / "finetune.json").read_text(encoding="utf-8"))["stats"]
            rows.append({"changes": changes, "updates": stats["updates"], "stopped": stats["stopped"],
                         "minutes": round(seconds / 60, 1), "scores": score(work / "model.pt", sets, decoding)})
    max_drop = float(params["finetune"]["max_general_drop"])
    chosen = choose(parent, rows, max_drop)
    print(f"chosen: config {chosen} ({rows[chosen]['changes']})")
    write_result("finetune_schedule", {
        "key": args.key, "decoding": {"beam_size": args.beam, "alpha": decoding.alpha},
        "dev": {n: {"sentences": len(s)} for n, (s, _) in sets.items()}, "parent": parent, "rows": rows,
        "max_general_drop": max_drop, "chosen": chosen}, repeats=1, out_dir=args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
