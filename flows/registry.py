"""The model registry in the DVC way: GTO versions and stages, as git tags in this repository.

The artifacts declared in dvc.yaml's `artifacts:` (the torch model file `nmt-de-en` and the
ONNX package `nmt-de-en-onnx`) get one version per pipeline run that retrained something
(`nmt-de-en@v0.0.N`, `nmt-de-en-onnx@v0.0.N`: tags on the run's DVC experiment commit, whose
dvc.lock records the model), and the stage `promote.stage` (`prod`; tags `NAME#prod#N`) only
when the challenger is not worse than the champion: champion/challenger, `decide()`. No
server: `gto show` and `git tag` read the registry; a consumer fetches the package at `prod`
with `dvc artifacts get REPO nmt-de-en-onnx --stage prod -o nmt-onnx` (docs/lifecycle.md).

Each model a dvc.yaml declares is promoted on its own metrics (flows/models.py): the default
dvc.yaml has one; general/dvc.yaml one per direction (`general:nmt-de-en` on
reports/general/de-en/metrics.json, `general:nmt-en-de` on reports/general/en-de/metrics.json).

    python -m flows.registry promote [--rev HEAD] [--max-bleu-drop X]  # register a commit, promote if not worse
    python -m flows.registry show                                      # versions and the one at prod
    python -m flows.registry --dvcfile general/dvc.yaml promote [--model general:nmt-en-de]  # per direction
"""

from __future__ import annotations

import argparse
import json
import re
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flows.models import ArtifactsError, Model, declared_models
from flows.tools import ToolMissing, git
from nmt.config.loader import from_dict, read_yaml
from nmt.config.promote import PromoteConfig
from nmt.errors import ConfigError, NmtError
from nmt.files.atomic import atomic_write_text

log = logging.getLogger(__name__)


class RegistryError(RuntimeError):
    """The registry cannot do what was asked (no artifacts declared, no git, bad revision)."""


@dataclass(frozen=True)
class Decision:
    """Whether the challenger takes the stage, why, and the scores compared."""

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
        return Decision(False, "no test-set scores in the challenger's metrics file", challenger, champion, champion_version, rows)
    if champion is None:
        return Decision(True, "first model: no champion yet", challenger, None, None, rows)
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
    """The decision's scores as table rows (the Prefect artifact)."""
    champ, new = f"champion ({decision.champion_version or 'none'})", f"challenger ({version})"
    return [{"test set": t, "metric": k, champ: c, new: n} for t, k, c, n in decision.rows]


def markdown(decision: Decision, version: str, artifact: str, stage: str = "prod") -> str:
    """The decision as a markdown page (reports/promotion.md and a Prefect artifact)."""
    state = f"promoted to `{stage}`" if decision.promote else "**not promoted**"
    lines = [f"# {artifact} {version}: {state}", "", f"Reason: {decision.reason}.", "",
             f"| test set | metric | champion ({decision.champion_version or 'none'}) | challenger ({version}) |",
             "| --- | --- | ---: | ---: |"]
    lines += [f"| {t} | {k} | {'-' if c is None else f'{c:g}'} | {n:g} |" for t, k, c, n in decision.rows]
    return "\n".join(lines) + "\n"


def _git(repo: Path, *args: str) -> str:
    result = git(repo, *args)
    if result.returncode != 0:
        raise RegistryError(f"git {' '.join(args)} in {repo}: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


_VERSION_TAG = re.compile(r"^(?P<name>.+)@v(?P<major>\d+)\.(?P<minor>\d+)\.(?P<patch>\d+)$")  # not GTO's `!` tags


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.lstrip("v").split("."))


def models(repo: Path, dvcfile: str = "dvc.yaml") -> list[Model]:
    """The models `dvcfile` declares; a RegistryError when it declares none."""
    try:
        found = declared_models(repo, dvcfile)
    except ArtifactsError as exc:
        raise RegistryError(str(exc)) from None
    if not found:
        raise RegistryError(f"{Path(repo) / dvcfile} declares no `artifacts:`; nothing to register")
    return found


class Registry:
    """GTO over the git repository `repo` for one model: its artifacts get the same version on the
    same commit, and its metrics file decides (default: the first model of dvc.yaml)."""

    def __init__(self, repo: Path, model: Model | None = None, stage: str = "prod") -> None:
        self.repo, self.stage = Path(repo), stage
        self.model = model if model is not None else models(self.repo)[0]
        self.artifacts = list(self.model.artifacts)
        self.artifact = self.model.name  # the one whose versions are counted and shown

    def prod(self) -> tuple[str, str] | None:
        """(version, commit) at the stage, or None before the first promotion."""
        from gto.api import find_versions_in_stage
        from gto.exceptions import ArtifactNotFound

        try:
            found = find_versions_in_stage(str(self.repo), self.artifact, self.stage)
        except ArtifactNotFound:  # nothing registered yet
            return None
        if not found:
            return None
        latest = found[0] if isinstance(found, list) else found
        return latest.version, latest.commit_hexsha

    def versions(self, artifact: str | None = None) -> list[str]:
        """Registered versions of `artifact` (default: the first), oldest first."""
        from gto.constants import name_to_tag

        tag_name = name_to_tag(artifact or self.artifact)  # `general:x` is tagged `general=x@v0.0.1`
        tags = _git(self.repo, "tag", "--list", f"{tag_name}@v*").split()
        found = [m for m in map(_VERSION_TAG.match, tags) if m and m["name"] == tag_name]
        return sorted((f"v{m['major']}.{m['minor']}.{m['patch']}" for m in found), key=_version_key)

    def register(self, ref: str = "HEAD", message: str = "") -> str:
        """A new version of every artifact on `ref`, one above the highest of any of them (v0.0.1
        first); all of its tags or none."""
        from gto.api import register

        known = [v for name in self.artifacts for v in self.versions(name)]
        major, minor, patch = max(map(_version_key, known)) if known else (0, 0, 0)
        version = f"v{major}.{minor}.{patch + 1}"
        commit = _git(self.repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()
        made: list[str] = []
        try:
            for name in self.artifacts:
                register(str(self.repo), name, commit, version=version, message=message or None)
                made.append(f"{name}@{version}")
        except Exception:
            for tag in made:
                _git(self.repo, "tag", "--delete", tag)
            raise
        return version

    def promote(self, version: str, message: str = "") -> None:
        from gto.api import assign

        for name in self.artifacts:
            assign(str(self.repo), name, self.stage, version=version, message=message or None)

    def metrics_at(self, commit: str) -> dict[str, Any]:
        """The model's evaluate metrics as committed in `commit` ({} when it has none)."""
        try:
            return json.loads(_git(self.repo, "show", f"{commit}:{self.model.metrics}"))
        except RegistryError:
            return {}  # the run wrote no metrics: decide() says so
        except json.JSONDecodeError as exc:
            raise RegistryError(f"{self.model.metrics} at {commit[:8]}: not JSON: {exc}") from None


def promote_config(params: Path) -> PromoteConfig:
    """The `promote` section of `params` (all of its keys, checked; other sections are the stages')."""
    data = read_yaml(params)
    if "promote" not in data:
        raise ConfigError(f"{params}: no `promote:` section (stage, max_bleu_drop): copy it from the nmt params.yaml")
    return from_dict(PromoteConfig, data["promote"], key="promote", source=str(params), complete=True)


def promote_commit(repo: Path, ref: str, max_bleu_drop: float, stage: str = "prod",
                   gates_passed: bool = True, model: Model | None = None) -> tuple[Decision, str, Registry]:
    """Register `ref` as a new version of `model` (default: dvc.yaml's first); assign the stage if
    `decide` says so, on that model's metrics."""
    registry = Registry(repo, model, stage=stage)
    champion = registry.prod()
    challenger = scores(registry.metrics_at(ref))
    old = scores(registry.metrics_at(champion[1])) if champion else None
    decision = decide(challenger, old, max_bleu_drop, gates_passed, champion[0] if champion else None)
    version = registry.register(ref, message=decision.reason)
    if decision.promote:
        registry.promote(version, message=decision.reason)
    log.info("%s %s: %s (%s)", registry.artifact, version,
             f"promoted to {stage}" if decision.promote else "not promoted", decision.reason)
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
    pr.add_argument("--max-bleu-drop", type=float, help="sacreBLEU the challenger may lose (default: params.yaml)")
    pr.add_argument("--report", type=Path, default=Path("reports/promotion.md"),
                    help="where the decisions go (one section per model)")
    sub.add_parser("show", help="versions and the one at the stage, per model")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    pages = []
    try:
        cfg = promote_config(args.params)
        repo = Path.cwd()
        chosen = select_models(repo, args.dvcfile, args.model)
        if args.command == "show":
            for model in chosen:
                registry = Registry(repo, model, stage=cfg.stage)
                log.info("%s: versions %s; %s: %s", registry.artifact, registry.versions() or "none", cfg.stage,
                         registry.prod() or "none")
            return 0
        drop = cfg.max_bleu_drop if args.max_bleu_drop is None else args.max_bleu_drop
        for model in chosen:
            decision, version, registry = promote_commit(repo, args.rev, drop, cfg.stage, model=model)
            pages.append(markdown(decision, version, registry.artifact, cfg.stage))
    except (RegistryError, ToolMissing, NmtError, OSError, GTOException) as exc:
        print(f"python -m flows.registry: error: {exc}", file=sys.stderr)
        return 1
    args.report.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.report, "\n".join(pages))
    return 0


if __name__ == "__main__":
    sys.exit(main())
