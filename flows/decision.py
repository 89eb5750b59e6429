"""The promotion decision on a registered commit: does the challenger take the stage from the champion?

`judge_commit` decides by evidence (flows/promotion.py, flows/evidence.py): the challenger must be
scored on every set the champion was, with no higher `<unk>` rate (`before_decoding`, on the
metrics files alone), then both ONNX packages decode every set either was scored on side by side.
Only where the project has no packages does the point-score rule `decide` decide on the metrics
files (`scores`), and the reason says so; a champion package that cannot be fetched stops the
promotion unless `allow_point_score`. The `Decision` (the rule, the reason, the scores compared)
renders as table rows (`table`, the Prefect artifact) and as a markdown page (`markdown`,
reports/promotion/). Registering and assigning the stage: flows/registry.py.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from flows.evidence import EvidenceDecision
from flows.evidence import markdown as evidence_markdown
from flows.gto_registry import Registry, RegistryError
from flows.promotion import ChampionUnavailable, by_evidence, no_packages
from flows.side_by_side import SideBySide
from nmt import ranking
from nmt.config.promote import PromoteConfig


@dataclass(frozen=True)
class Decision:
    """Whether the challenger takes the stage, why, and the scores compared."""

    promote: bool
    reason: str
    challenger: dict[str, dict[str, float]]
    champion: dict[str, dict[str, float]] | None = None
    champion_version: str | None = None
    # test set, metric, champion, challenger
    rows: list[tuple[str, str, float | None, float]] = field(default_factory=list)
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
        drop = best["sacrebleu"] - new["sacrebleu"]  # 38.0 - 37.8 is 0.2000000000000028: within() rounds
        if not ranking.within(drop, max_bleu_drop):  # NaN included
            return Decision(False, f"sacreBLEU on {test_set} {new['sacrebleu']:.2f} "
                            f"vs champion {best['sacrebleu']:.2f}: "
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
    raises a RegistryError unless `allow_point_score` (then point scores decide, saying so). A
    fine-tune's champion is its parent (`Model.parent_package`): its scores on the fine-tune's sets and
    its package, at the same commit."""
    challenger = scores(registry.metrics_at(commit))
    old = scores(registry.metrics_at(champion[1], registry.model.parent_metrics)) if champion else None
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
                                   decoded_by, registry.model.parent_package)
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
    rows: list[tuple[str, str, float | None, float]] = [(e.test_set, metric, c, n) for e in evidence.sets
            for metric, c, n in (("sacrebleu", e.champion_bleu, e.challenger_bleu),
                                 ("chrf", e.champion_chrf, e.challenger_chrf))]
    return Decision(evidence.promote, evidence.reason, challenger, old, champion[0], rows, evidence, "evidence")
