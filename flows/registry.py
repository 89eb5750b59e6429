"""The model registry in the DVC way: GTO versions and stages, as git tags in this repository.

The artifacts declared in dvc.yaml's `artifacts:` (the torch model file `nmt-de-en` and the
ONNX package `nmt-de-en-onnx`) get one version per pipeline run that retrained something
(`nmt-de-en@v0.0.N`, `nmt-de-en-onnx@v0.0.N`: tags on the run's DVC experiment commit, whose
dvc.lock records the model), and the stage `promote.stage` (`prod`; tags `NAME#prod#N`) only
when the challenger is not worse than the champion. The rule is promotion by evidence
(flows/promotion.py): the challenger must be scored on every set the champion was, with no
higher `<unk>` rate; then both ONNX packages decode every set either was scored on side by side,
and the challenger is refused when a set's 95% interval of the sacreBLEU or chrF difference
reaches down to -`promote.bleu_margin` / -`promote.chrf_margin` (non-inferiority not shown),
when a set is significantly worse (paired bootstrap, Holm), or when it decodes below
`promote.min_speed_ratio` of the champion's sentences/s. Only where the project has no packages
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

    python -m flows.registry promote [--rev HEAD] [--max-bleu-drop X]  # register a commit, promote on the evidence
    python -m flows.registry promote --allow-champion-without-metrics  # the champion has no scores: promote anyway
    python -m flows.registry promote --allow-point-score               # champion package not fetchable: point scores
    python -m flows.registry show                                      # versions and the one at prod
    python -m flows.registry rollback [--model nmt-de-en]              # prod back to the version before it
    python -m flows.registry --dvcfile general/dvc.yaml promote [--model general:nmt-en-de]  # per direction
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from flows.evidence import EvidenceDecision
from flows.evidence import markdown as evidence_markdown
from flows.gto_registry import Registry, RegistryError, models
from flows.models import Model
from flows.promotion import ChampionUnavailable, by_evidence, no_packages, write_record
from flows.side_by_side import SideBySide, resolve_threads
from flows.tools import ToolMissing
from nmt.config.loader import from_dict, read_yaml
from nmt.config.promote import PromoteConfig
from nmt.errors import ConfigError, NmtError
from nmt.files.atomic import atomic_write_text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Decision:
    """Whether the challenger takes the stage, why, and the scores compared."""

    promote: bool
    reason: str
    challenger: dict[str, dict[str, float]]
    champion: dict[str, dict[str, float]] | None = None
    champion_version: str | None = None
    rows: list[tuple[str, str, float | None, float]] = field(default_factory=list)  # test set, metric, champion, challenger
    evidence: EvidenceDecision | None = None  # the side-by-side evidence, when the rule was promotion by evidence
    rule: str = "point scores"  # "evidence", "point scores" (the fallback) or "none" (nothing was compared)


def scores(metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
    """sacreBLEU, chrF and (when reported) the <unk> rate per test set of an evaluate metrics file."""
    out = {}
    for test_set, m in metrics.items():
        if isinstance(m, dict) and "sacrebleu" in m:
            out[test_set] = {k: float(m[k]) for k in ("sacrebleu", "chrf", "unk_rate") if k in m}
    return out


def decide(challenger: dict[str, dict[str, float]], champion: dict[str, dict[str, float]] | None,
           max_bleu_drop: float, gates_passed: bool = True, champion_version: str | None = None,
           metrics: str = "its metrics file", allow_champion_without_metrics: bool = False) -> Decision:
    """Promote when every gate passed and, on every test set the champion was scored on, the
    challenger's sacreBLEU is at most `max_bleu_drop` below it and its <unk> rate not higher.
    A champion without scores (`{}`: its `metrics` file missing or empty) is no reason to
    promote: refused unless `allow_champion_without_metrics`, and the reason says which."""
    rows = [(t, k, (champion or {}).get(t, {}).get(k), v) for t, s in challenger.items() for k, v in s.items()]
    if not gates_passed:
        return Decision(False, "a gate failed", challenger, champion, champion_version, rows)
    if not challenger:
        return Decision(False, f"the challenger has no test-set scores in {metrics}", challenger, champion,
                        champion_version, rows)
    if champion is None:
        return Decision(True, "first model: no champion yet", challenger, None, None, rows)
    if not champion:
        missing = f"the champion {champion_version} has no test-set scores in {metrics}"
        if allow_champion_without_metrics:
            return Decision(True, f"{missing}; promoted by --allow-champion-without-metrics", challenger, champion,
                            champion_version, rows)
        return Decision(False, f"{missing}: nothing to compare with (--allow-champion-without-metrics promotes "
                        "anyway)", challenger, champion, champion_version, rows)
    for test_set, best in champion.items():
        new = challenger.get(test_set)
        if new is None:
            return Decision(False, f"not scored on {test_set}, where the champion was", challenger, champion,
                            champion_version, rows)
        drop = round(best["sacrebleu"] - new["sacrebleu"], 6)  # 38.0 - 37.8 is 0.2000000000000028
        if not drop <= max_bleu_drop:  # NaN included
            return Decision(False, f"sacreBLEU on {test_set} {new['sacrebleu']:.2f} vs champion {best['sacrebleu']:.2f}: "
                            f"{drop:.2f} worse, more than max_bleu_drop {max_bleu_drop:g}", challenger, champion,
                            champion_version, rows)
        if new.get("unk_rate", 0.0) > best.get("unk_rate", 0.0):
            return Decision(False, f"<unk> rate on {test_set} rose to {new['unk_rate']:g}", challenger, champion,
                            champion_version, rows)
    return Decision(True, f"not worse than the champion {champion_version} on {', '.join(champion)}", challenger,
                    champion, champion_version, rows)


def table(decision: Decision, version: str) -> list[dict[str, Any]]:
    """The decision's scores as table rows (the Prefect artifact): per test set the evidence, else per metric."""
    champ, new = f"champion ({decision.champion_version or 'none'})", f"challenger ({version})"
    if decision.evidence is not None:
        return [{"test set": e.test_set, "sentences": e.sentences, f"{champ} sacreBLEU": e.champion_bleu,
                 f"{new} sacreBLEU": e.challenger_bleu, "difference": e.difference, "95% low": e.low,
                 "95% high": e.high, "Holm p": e.holm_p, "chrF difference": e.chrf_difference, "verdict": e.verdict,
                 "speed ratio": decision.evidence.speed_ratio} for e in decision.evidence.sets]
    return [{"test set": t, "metric": k, champ: c, new: n} for t, k, c, n in decision.rows]


def markdown(decision: Decision, version: str, artifact: str, stage: str = "prod") -> str:
    """The decision as a markdown page (reports/promotion.md and a Prefect artifact)."""
    state = f"promoted to `{stage}`" if decision.promote else "**not promoted**"
    if decision.evidence is not None:  # its page (the reason, the table, what it does not measure), our title
        body = evidence_markdown(decision.evidence).split("\n", 1)[1]
        return f"# {artifact} {version} against the champion {decision.champion_version}: {state}\n{body}"
    lines = [f"# {artifact} {version}: {state}", "", f"Reason: {decision.reason}.", "",
             f"| test set | metric | champion ({decision.champion_version or 'none'}) | challenger ({version}) |",
             "| --- | --- | ---: | ---: |"]
    lines += [f"| {t} | {k} | {'-' if c is None else f'{c:g}'} | {n:g} |" for t, k, c, n in decision.rows]
    return "\n".join(lines) + "\n"


def promote_config(params: Path) -> PromoteConfig:
    """The `promote` section of `params` (all of its keys, checked; other sections are the stages')."""
    data = read_yaml(params)
    if "promote" not in data:
        raise ConfigError(f"{params}: no `promote:` section (stage, the evidence thresholds): copy it from the nmt "
                          "params.yaml")
    return from_dict(PromoteConfig, data["promote"], key="promote", source=str(params), complete=True)


def before_decoding(challenger: dict[str, dict[str, float]], champion: dict[str, dict[str, float]],
                    champion_version: str) -> str | None:
    """Why the evidence rule refuses the challenger on the metrics files alone, or None: a set the
    champion was scored on and the challenger was not (a narrowed evaluation), or a higher <unk>
    rate there."""
    for test_set, old in champion.items():
        new = challenger.get(test_set)
        if new is None:
            return (f"not scored on {test_set}, where the champion {champion_version} was: the evidence rule gates "
                    "every set either was scored on")
        if new.get("unk_rate", 0.0) > old.get("unk_rate", 0.0):
            return (f"<unk> rate on {test_set} rose to {new['unk_rate']:g} (the champion {champion_version}'s: "
                    f"{old.get('unk_rate', 0.0):g})")
    return None


def judge_commit(registry: Registry, commit: str, champion: tuple[str, str] | None, rule: PromoteConfig,
                 gates_passed: bool = True, allow_champion_without_metrics: bool = False,
                 decoded_by: SideBySide | None = None, allow_point_score: bool = False) -> Decision:
    """The decision on `commit` against `champion` ((version, commit) at the stage, or None): by
    evidence on every set either was scored on (flows/promotion.py), else, where the project has
    no packages, `decide` on point scores, saying so. A champion package that cannot be fetched
    raises a RegistryError unless `allow_point_score` (then point scores decide, saying so)."""
    challenger = scores(registry.metrics_at(commit))
    old = scores(registry.metrics_at(champion[1])) if champion else None
    decision = decide(challenger, old, rule.max_bleu_drop, gates_passed, champion[0] if champion else None,
                      metrics=registry.model.metrics, allow_champion_without_metrics=allow_champion_without_metrics)
    if champion is None or not gates_passed or not challenger:  # first model, a failed gate, nothing to judge
        return replace(decision, rule="none")
    refused = before_decoding(challenger, old or {}, champion[0])
    if refused is not None and no_packages(registry.repo, registry.model) is None:  # else `decide` said it already
        return Decision(False, refused, challenger, old, champion[0], decision.rows, None, "evidence")
    names = list(old or {}) + [name for name in challenger if name not in (old or {})]  # the union, champion's first
    try:
        with tempfile.TemporaryDirectory(prefix="nmt-promote-") as work:
            evidence = by_evidence(registry.repo, registry.model, champion[1], commit, names, rule, Path(work),
                                   decoded_by)
    except ChampionUnavailable as exc:
        if not allow_point_score:
            raise RegistryError(
                f"cannot fetch the champion {champion[0]}'s package to decide by evidence: {exc}; the promotion "
                "stops rather than fall back to point scores (no bootstrap, no speed budget): make the package "
                "reachable (`dvc pull`, the DVC remote) and run again, or pass --allow-point-score to decide on the "
                "metrics files") from None
        return replace(decision, reason=f"{decision.reason}; decided on point scores by --allow-point-score: the "
                                        f"champion {champion[0]}'s package could not be fetched ({exc})")
    if isinstance(evidence, str):
        return replace(decision, reason=f"{decision.reason}; decided on point scores, the fallback rule: no package "
                                        f"of the champion {champion[0]} to decode ({evidence})")
    rows = [(e.test_set, metric, c, n) for e in evidence.sets
            for metric, c, n in (("sacrebleu", e.champion_bleu, e.challenger_bleu),
                                 ("chrf", e.champion_chrf, e.challenger_chrf))]
    return Decision(evidence.promote, evidence.reason, challenger, old, champion[0], rows, evidence, "evidence")


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
    champion = registry.prod()
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
        raise RegistryError(f"{dvcfile} declares no artifact {', '.join(unknown)}; it declares {', '.join(sorted(known))}")
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
