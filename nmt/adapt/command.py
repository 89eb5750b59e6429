"""`nmt adapt --model MODEL --train my.tsv --out DIR`: fine-tune a trained model on your own pairs in one
command, through the fine-tune pipeline's stages and gates (nmt/adapt/steps.py), ending with the
comparison page and the compare gate's verdict. Exit status 0 when every gate passed, 1 when one failed
or the input is wrong (one line saying which and how to fix it), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from nmt.adapt.plan import HELD_OUT, AdaptRequest
from nmt.command import run_reporting_errors, setup_logging
from nmt.errors import DataError

DESCRIPTION = __doc__.split("\n\n")[0].replace("\n", " ")
EPILOG = f"""\
The run's folder (--out) holds everything: params.yaml (laid over the parent's recipe: read it to see
what runs), input/ (the cuts of your file), data/, models/model.pt and models/onnx (the fine-tuned model
and its package, for `nmt translate` and `nmt serve`), reports/compare/finetune.md (the comparison page)
and reports/validation/ (every gate's report). Run the same command again after a failure or a kill: the
steps that are done are skipped, an interrupted fine-tune resumes. Without --dev or --test, {HELD_OUT:.0%} of
your lines each are cut off for them (by each line's digest). Lines of a TSV that are not UTF-8 or lack a
column are skipped and counted in reports/data/raw.md, up to --max-dropped of each file.
A first try: --max-steps 200 --max-minutes 5 (docs/training.md: Adapting a model to your own files)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nmt adapt", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, required=True,
                   help="the model to adapt: a model file (models/general/de-en/model.pt), its folder, or the "
                        "ONNX package beside it")
    p.add_argument("--train", type=Path, required=True,
                   help="your pairs: a TSV, one pair per line, the source language in the first column (see "
                        "--columns), or a TMX")
    p.add_argument("--out", type=Path, required=True, help="the run's folder (created; a second run resumes it)")
    p.add_argument("--dev", type=Path, help="dev pairs, same format (default: cut from --train)")
    p.add_argument("--test", type=Path, help="test pairs of your domain for the comparison page (default: cut "
                                             "from --train)")
    p.add_argument("--general", nargs="+", metavar="SET",
                   help="test sets of the recipe that the fine-tune must not lose more than --max-drop on "
                        "(default: every set the recipe scores in the model's direction)")
    p.add_argument("--recipe", type=Path, help="the params file the model was trained with (default: found in "
                                               "pipeline/models.yaml for a model of this project)")
    p.add_argument("--columns", help="the languages of a TSV's first two columns, e.g. en,de (default: the "
                                     "model's source, then target)")
    p.add_argument("--max-steps", type=int, default=600, help="updates of the fine-tune (default: 600)")
    p.add_argument("--max-minutes", type=float, default=15.0,
                   help="stop training after this long, checkpointed (default: 15; 0: no clock)")
    p.add_argument("--lr", type=float, default=1e-4, help="peak learning rate (default: 1e-4)")
    p.add_argument("--max-drop", type=float, default=1.0,
                   help="sacreBLEU a --general set may lose before the compare gate fails (default: 1.0)")
    p.add_argument("--max-dropped", type=float, default=0.1,
                   help="share of each of your files that may be dropped, malformed or by the recipe's cleaning "
                        "rules, before the validate gate fails (data.mixes.adapt.sources[*].max_filtered_rate of "
                        "the run's params.yaml; default: 0.1)")
    p.add_argument("--max-repeated", type=float, default=0.2,
                   help="share of your training pairs that may repeat an earlier one (dropped) before the validate "
                        "gate fails (default: 0.2)")
    p.add_argument("--replay", type=Path, help="the model's binarized training data (its data/bin), replayed "
                                               "against forgetting (default: found for a model of this project)")
    p.add_argument("--no-export", action="store_true", help="skip the ONNX package")
    p.add_argument("--force", action="store_true", help="run every step again, even those that are done")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p


def request(args: argparse.Namespace) -> AdaptRequest:
    columns = None
    if args.columns is not None:
        parts = tuple(c.strip() for c in args.columns.split(","))
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise DataError(f"--columns {args.columns!r}: expected two language codes, e.g. en,de")
        columns = (parts[0], parts[1])
    if args.max_steps < 1:
        raise DataError("--max-steps must be >= 1")
    return AdaptRequest(model=args.model, train=args.train, out=args.out, dev=args.dev, test=args.test,
                        general=tuple(args.general) if args.general else None, recipe=args.recipe,
                        columns=columns, max_steps=args.max_steps, max_minutes=args.max_minutes or None,
                        lr=args.lr, max_general_drop=args.max_drop, max_dropped=args.max_dropped,
                        max_repeated=args.max_repeated,
                        replay=args.replay, export=not args.no_export)


def verdict(out: Path, reached: list[str]) -> tuple[bool, str]:
    """(passed, what to print): the compare gate's checks and the comparison table, when this run reached it."""
    gate = out / "reports" / "validation" / "finetune-compare.json"
    if "finetune-compare" not in reached or not gate.is_file():
        return False, f"no verdict: the run stopped {f'at {reached[-1]}' if reached else 'before its first step'}, " \
                      "before the compare gate"
    body = json.loads(gate.read_text(encoding="utf-8"))
    lines = [f"compare gate: {'PASSED' if body['success'] else 'FAILED'} ({gate.with_suffix('.md')})"]
    lines += [f"  {'ok' if c['success'] else 'FAILED'}  {c['name']}: {c['observed']} (expected {c['expected']})"
              for c in body["checks"]]
    for row in body.get("stats", {}).get("sets", []):
        lines.append(f"  {row['set']:<20} parent {row['parent_sacrebleu']:6.2f}  fine-tuned "
                     f"{row['finetuned_sacrebleu']:6.2f}  ({row['change']:+.2f} sacreBLEU)"
                     f"{'  general' if row['general'] else ''}")
    page = out / "reports" / "compare" / "finetune.md"
    if body["success"] and page.is_file():
        lines.append(f"comparison page: {page}")
        package = out / "models" / "onnx"
        lines.append(f"fine-tuned model: {out / 'models' / 'model.pt'}" +
                     (f"; its package: {package} (nmt serve --model {package})" if package.is_dir() else ""))
    return bool(body["success"]), "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)

    reached: list[str] = []

    def adapt() -> None:
        from nmt.adapt.plan import make_plan
        from nmt.adapt.steps import run_steps

        req = request(args)
        req.out.mkdir(parents=True, exist_ok=True)
        run_steps(req, make_plan(req), force=args.force, reached=reached)

    status = run_reporting_errors("adapt", adapt)
    if status != 130:  # after the error line, if any: the verdict of this run, never an earlier one
        print(verdict(args.out, reached)[1], file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
