"""The model registry in the DVC way: GTO versions and stages, as git tags in this repository.

The artifact `nmt-de-en` (declared in dvc.yaml's `artifacts:`: the model file and the ONNX
package) gets a version for every run that is registered (`nmt-de-en@v0.0.N`, a tag on the
commit whose dvc.lock records the model), and the stage `prod` (`nmt-de-en#prod#N`) only when
the challenger is not worse than the champion: champion/challenger, `decide()`. No server:
`gto show` and `git tag` read the registry. A first step of issue 13; the Prefect flow does not
call it yet.

    python -m flows.registry promote [--max-bleu-drop 0.0]   # register HEAD, promote if not worse
    python -m flows.registry show
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ARTIFACT = "nmt-de-en"
PROD = "prod"
METRICS = "reports/metrics.json"  # the evaluate stage's scores per test set


@dataclass(frozen=True)
class Decision:
    """Whether the challenger takes `prod`, why, and the scores compared."""

    promote: bool
    reason: str
    challenger: dict[str, dict[str, float]]
    champion: dict[str, dict[str, float]] | None = None
    champion_version: str | None = None
    rows: list[tuple[str, str, float | None, float]] = field(default_factory=list)  # test set, metric, champion, challenger


def scores(metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
    """sacreBLEU, chrF and (when reported) the <unk> rate per test set of an evaluate metrics file."""
    out = {}
    for test_set, m in metrics.items():
        if isinstance(m, dict) and "sacrebleu" in m:
            out[test_set] = {k: float(m[k]) for k in ("sacrebleu", "chrf", "unk_rate") if k in m}
    return out


def decide(challenger: dict[str, dict[str, float]], champion: dict[str, dict[str, float]] | None,
           max_bleu_drop: float, gates_passed: bool = True, champion_version: str | None = None) -> Decision:
    """Promote when every gate passed and, on every test set the champion was scored on, the
    challenger's sacreBLEU is at most `max_bleu_drop` below it and its <unk> rate not higher."""
    rows = [(t, k, (champion or {}).get(t, {}).get(k), v) for t, s in challenger.items() for k, v in s.items()]
    if not gates_passed:
        return Decision(False, "a gate failed", challenger, champion, champion_version, rows)
    if not challenger:
        return Decision(False, f"no test-set scores in {METRICS}", challenger, champion, champion_version, rows)
    if champion is None:
        return Decision(True, "first model: no champion yet", challenger, None, None, rows)
    for test_set, best in champion.items():
        new = challenger.get(test_set)
        if new is None:
            return Decision(False, f"not scored on {test_set}, where the champion was", challenger, champion,
                            champion_version, rows)
        drop = best["sacrebleu"] - new["sacrebleu"]
        if drop > max_bleu_drop:
            return Decision(False, f"sacreBLEU on {test_set} {new['sacrebleu']:.2f} vs champion {best['sacrebleu']:.2f}: "
                            f"{drop:.2f} worse, more than max_bleu_drop {max_bleu_drop:g}", challenger, champion,
                            champion_version, rows)
        if new.get("unk_rate", 0.0) > best.get("unk_rate", 0.0):
            return Decision(False, f"<unk> rate on {test_set} rose to {new['unk_rate']:g}", challenger, champion,
                            champion_version, rows)
    return Decision(True, f"not worse than the champion {champion_version} on {', '.join(champion)}", challenger,
                    champion, champion_version, rows)


def markdown(decision: Decision, version: str) -> str:
    """The decision as a markdown page (reports/promotion.md; also the Prefect artifact's table)."""
    state = f"promoted to `{PROD}`" if decision.promote else "**not promoted**"
    lines = [f"# {ARTIFACT} {version}: {state}", "", f"Reason: {decision.reason}.", "",
             f"| test set | metric | champion ({decision.champion_version or 'none'}) | challenger ({version}) |",
             "| --- | --- | ---: | ---: |"]
    lines += [f"| {t} | {k} | {'-' if c is None else f'{c:g}'} | {n:g} |" for t, k, c, n in decision.rows]
    return "\n".join(lines) + "\n"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


class Registry:
    """GTO over the git repository `repo`."""

    def __init__(self, repo: Path, artifact: str = ARTIFACT) -> None:
        self.repo, self.artifact = Path(repo), artifact

    def prod(self) -> tuple[str, str] | None:
        """(version, commit) at stage prod, or None before the first promotion."""
        from gto.api import find_versions_in_stage
        from gto.exceptions import ArtifactNotFound

        try:
            found = find_versions_in_stage(str(self.repo), self.artifact, PROD)
        except ArtifactNotFound:  # nothing registered yet
            return None
        if not found:
            return None
        latest = found[0] if isinstance(found, list) else found
        return latest.version, latest.commit_hexsha

    def versions(self) -> list[str]:
        return [t.split("@", 1)[1] for t in _git(self.repo, "tag", "--list", f"{self.artifact}@v*").split()]

    def register(self, ref: str = "HEAD", message: str = "") -> str:
        """A new version on `ref`: v0.0.1 first, then the next patch version."""
        from gto.api import register

        first = not self.versions()
        register(str(self.repo), self.artifact, ref, version="v0.0.1" if first else None, bump_patch=not first,
                 message=message or None)
        return max(self.versions(), key=lambda v: tuple(int(x) for x in v.lstrip("v").split(".")))

    def promote(self, version: str, message: str = "") -> None:
        from gto.api import assign

        assign(str(self.repo), self.artifact, PROD, version=version, message=message or None)

    def metrics_at(self, commit: str) -> dict[str, Any]:
        return json.loads(_git(self.repo, "show", f"{commit}:{METRICS}"))


def promote_head(repo: Path, max_bleu_drop: float, gates_passed: bool = True) -> tuple[Decision, str]:
    """Register HEAD as a new version; assign prod if `decide` says so. Returns the decision and version."""
    registry = Registry(repo)
    champion = registry.prod()
    challenger = scores(registry.metrics_at("HEAD"))
    old = scores(registry.metrics_at(champion[1])) if champion else None
    decision = decide(challenger, old, max_bleu_drop, gates_passed, champion[0] if champion else None)
    version = registry.register("HEAD", message=decision.reason)
    if decision.promote:
        registry.promote(version, message=decision.reason)
    return decision, version


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    pr = sub.add_parser("promote", help="register HEAD's model as a new version; assign prod if not worse")
    pr.add_argument("--max-bleu-drop", type=float, default=0.0, help="sacreBLEU the challenger may lose (default 0)")
    pr.add_argument("--report", type=Path, default=Path("reports/promotion.md"), help="where the decision goes")
    sub.add_parser("show", help="versions and the one at prod")
    args = p.parse_args(argv)
    repo = Path.cwd()
    if args.command == "show":
        registry = Registry(repo)
        print(f"{ARTIFACT}: versions {registry.versions() or 'none'}; {PROD}: {registry.prod() or 'none'}")
        return 0
    decision, version = promote_head(repo, args.max_bleu_drop)
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(markdown(decision, version), encoding="utf-8")
    print(f"{ARTIFACT} {version}: {'promoted to ' + PROD if decision.promote else 'not promoted'} ({decision.reason})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
