"""The model registry in the DVC way: GTO versions and stages, as git tags in this repository.

The artifacts declared in dvc.yaml's `artifacts:` (the torch model file `nmt-de-en` and the
ONNX package `nmt-de-en-onnx`) get one version per pipeline run that retrained something
(`nmt-de-en@v0.0.N`, `nmt-de-en-onnx@v0.0.N`: tags on the run's DVC experiment commit, whose
dvc.lock records the model), and the stage `promote.stage` (`prod`; tags `NAME#prod#N`) only
when the challenger is not worse than the champion (the decision: flows/decision.py). The rule is
promotion by evidence (flows/promotion.py): the challenger must be scored on every set the
champion was, with no higher `<unk>` rate; then both ONNX packages decode every set either was
scored on side by side, and the challenger is refused when a set's 95% interval of the sacreBLEU
or chrF difference reaches down to -`promote.bleu_margin` / -`promote.chrf_margin`
(non-inferiority not shown), when a set is significantly worse (paired bootstrap, Holm), or when
it decodes below `promote.min_speed_ratio` of the champion's sentences/s. Only where the project has no packages
(none declared, not a DVC project) does the point-score rule `decide()` decide on the metrics
files, and the reason says so; there, a champion without scores stops promotion until
`--allow-champion-without-metrics` says otherwise. A champion package that cannot be fetched
stops the promotion (nothing registered) unless `--allow-point-score` asks for the point-score
rule, which the reason and the record then say. Every decision is recorded in
reports/promotion/<artifact>.json and .md. `rollback` gives the stage back to the version that
held it before the champion. The GTO calls, all of a model's artifacts or none:
flows/gto_registry.py. No server: `gto show` and `git tag` read the registry; a consumer fetches
the package at `prod` with `dvc artifacts get REPO nmt-de-en-onnx --stage prod -o nmt-onnx`
(docs/lifecycle.md).

Each model a dvc.yaml declares is promoted on its own metrics (flows/models.py): the default
dvc.yaml has one; general/dvc.yaml one per direction (`general:nmt-de-en` on
reports/general/de-en/metrics.json, `general:nmt-en-de` on reports/general/en-de/metrics.json).
A fine-tune of finetune/dvc.yaml is judged against the model it came from (its parent's package
and scores on the fine-tune's sets, at the same commit) and takes the stage only on that evidence.

    python -m flows.registry promote [--rev HEAD] [--max-bleu-drop X]  # register a commit, promote on the evidence
    python -m flows.registry promote --allow-champion-without-metrics  # the champion has no scores: promote anyway
    python -m flows.registry promote --allow-point-score               # champion package not fetchable: point scores
    python -m flows.registry show                                      # versions and the one at prod
    python -m flows.registry rollback [--model nmt-de-en]              # prod back to the version before it
    python -m flows.registry --dvcfile general/dvc.yaml promote [--model general:nmt-en-de]  # per direction
    python -m flows.registry --dvcfile finetune/dvc.yaml promote  # each fine-tune against its parent
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from flows.decision import Decision, judge_commit, markdown
from flows.gto_registry import Registry, RegistryError, models
from flows.models import Model
from flows.promotion import write_record
from flows.side_by_side import SideBySide, resolve_threads
from flows.tools import ToolMissing
from nmt.config.loader import from_dict, read_params
from nmt.config.promote import PromoteConfig
from nmt.errors import ConfigError, NmtError
from nmt.files.atomic import atomic_write_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Sections:
    promote: PromoteConfig  # the only section the registry reads (merged key by key over a recipe's)


def promote_config(params: Path) -> PromoteConfig:
    """The `promote` section of `params` (all of its keys, checked; other sections are the stages')."""
    data = read_params(params, _Sections)
    if "promote" not in data:
        raise ConfigError(f"{params}: no `promote:` section (stage, the evidence thresholds): copy it from the nmt "
                          "params.yaml")
    return from_dict(PromoteConfig, data["promote"], key="promote", source=str(params), complete=True)


def promote_commit(repo: Path, ref: str, max_bleu_drop: float, stage: str = "prod",
                   gates_passed: bool = True, model: Model | None = None,
                   allow_champion_without_metrics: bool = False, rule: PromoteConfig | None = None,
                   decoded_by: SideBySide | None = None,
                   allow_point_score: bool = False) -> tuple[Decision, str, Registry]:
    """Register `ref` as a new version of `model` (default: dvc.yaml's first); assign the stage if
    `judge_commit` says so (`rule`: the evidence thresholds, default PromoteConfig's, with
    `max_bleu_drop` and `stage`); record the decision in reports/promotion/. A promotion that
    fails takes the registration back too: the registry is as it was; so does a champion package
    that cannot be fetched, unless `allow_point_score` (the record says which)."""
    rule = replace(rule or PromoteConfig(), stage=stage, max_bleu_drop=max_bleu_drop)
    registry = Registry(repo, model, stage=stage)
    commit = registry.commit(ref)
    parent = registry.model.parent
    champion = (f"{parent} (the parent)", commit) if registry.model.parent_package else registry.prod()
    decision = judge_commit(registry, commit, champion, rule, gates_passed, allow_champion_without_metrics, decoded_by,
                            allow_point_score)
    version = registry.register(commit, message=decision.reason)
    if decision.promote:
        try:
            registry.promote(version, message=decision.reason)
        except Exception:
            try:
                registry.forget(version)
            except Exception as undo:  # noqa: BLE001 - the promotion's error is the one to raise
                log.error("%s %s stays registered (%s): `gto deregister --delete`", registry.artifact, version, undo)
            raise
    log.info("%s %s: %s (%s)", registry.artifact, version,
             f"promoted to {stage}" if decision.promote else "not promoted", decision.reason)
    record = {"artifact": registry.artifact, "artifacts": registry.artifacts, "version": version, "commit": commit,
              "stage": stage, "promoted": decision.promote, "reason": decision.reason, "rule": decision.rule,
              "allow_point_score": allow_point_score,
              "champion_version": decision.champion_version, "champion_commit": champion[1] if champion else None,
              "scores": {"champion": decision.champion, "challenger": decision.challenger},
              "config": asdict(rule) | {"threads": resolve_threads(rule.threads)},
              "evidence": asdict(decision.evidence) if decision.evidence is not None else None}
    write_record(repo, registry.artifact, record, markdown(decision, version, registry.artifact, stage))
    return decision, version, registry


def select_models(repo: Path, dvcfile: str, names: Sequence[str] | None) -> list[Model]:
    """`dvcfile`'s models, or those holding one of `names` (an unknown name is an error listing the known)."""
    found = models(repo, dvcfile)
    if not names:
        return found
    known = {a for m in found for a in m.artifacts}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise RegistryError(f"{dvcfile} declares no artifact {', '.join(unknown)}; "
                            f"it declares {', '.join(sorted(known))}")
    return [m for m in found if set(m.artifacts) & set(names)]


def main(argv: list[str] | None = None) -> int:
    from gto.exceptions import GTOException

    p = argparse.ArgumentParser(prog="python -m flows.registry", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", type=Path, default=Path("params.yaml"), help="params file (section promote)")
    p.add_argument("--dvcfile", default="dvc.yaml",
                   help="the dvc.yaml declaring the artifacts (general/dvc.yaml: one model per direction)")
    p.add_argument("--model", action="append", metavar="ARTIFACT",
                   help="only the model holding this artifact, e.g. general:nmt-en-de (repeatable; default: all)")
    sub = p.add_subparsers(dest="command", required=True)
    pr = sub.add_parser("promote", help="register a commit's models as new versions; assign the stage to each "
                                        "model that is not worse on its own metrics")
    pr.add_argument("--rev", default="HEAD", help="the commit (or experiment) whose dvc.lock records the models")
    pr.add_argument("--max-bleu-drop", type=float, help="fallback rule (no champion package to decode): sacreBLEU "
                                                        "the challenger may lose (default: params.yaml)")
    pr.add_argument("--report", type=Path, default=Path("reports/promotion.md"),
                    help="where the decisions go (one section per model)")
    pr.add_argument("--allow-champion-without-metrics", action="store_true",
                    help="promote even when the champion has no test-set scores to compare with (refused otherwise)")
    pr.add_argument("--allow-point-score", action="store_true",
                    help="when the champion's package cannot be fetched (`dvc get` failed), decide on the metrics "
                         "files' point scores instead of stopping (no bootstrap, no speed budget; the record says so)")
    sub.add_parser("show", help="versions and the one at the stage, per model")
    rb = sub.add_parser("rollback", help="give the stage back to the version that held it before the champion "
                                         "(all artifacts of one model)")
    rb.add_argument("--model", action="append", dest="rollback_model", metavar="ARTIFACT",
                    help="the model holding this artifact (needed when the dvc.yaml declares several)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    pages = []
    try:
        cfg = promote_config(args.params)
        repo = Path.cwd()
        chosen = select_models(repo, args.dvcfile, (args.model or []) + (getattr(args, "rollback_model", None) or []))
        if args.command == "rollback":
            if len(chosen) != 1:
                names = ", ".join(m.name for m in chosen)
                raise RegistryError(f"{args.dvcfile} declares {len(chosen)} models ({names}): name the one to roll "
                                    "back with --model")
            Registry(repo, chosen[0], stage=cfg.stage).rollback()
            return 0
        if args.command == "show":
            for model in chosen:
                registry = Registry(repo, model, stage=cfg.stage)
                log.info("%s: versions %s; %s: %s", registry.artifact, registry.versions() or "none", cfg.stage,
                         registry.prod() or "none")
            return 0
        drop = cfg.max_bleu_drop if args.max_bleu_drop is None else args.max_bleu_drop
        for model in chosen:
            decision, version, registry = promote_commit(
                repo, args.rev, drop, cfg.stage, model=model,
                allow_champion_without_metrics=args.allow_champion_without_metrics, rule=cfg,
                allow_point_score=args.allow_point_score)
            pages.append(markdown(decision, version, registry.artifact, cfg.stage))
    except (RegistryError, ToolMissing, NmtError, OSError, GTOException) as exc:
        print(f"python -m flows.registry: error: {exc}", file=sys.stderr)
        return 1
    args.report.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report, "\n".join(pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
