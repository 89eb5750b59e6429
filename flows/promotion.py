"""Promotion by evidence for the registry: the champion's and the challenger's
ONNX packages decode the gated test sets side by side, and `flows.evidence.decide_by_evidence`
decides on their translations and speeds.

- The packages: each at its own commit, `dvc get . PATH --rev COMMIT` (PATH: the model's `*-onnx`
  artifact, flows/models.py), from the local DVC cache or else the project's DVC remote; works
  offline when the cache holds them. The champion's translations are DVC outputs, not in git:
  they are made again, in the same run as the challenger's.
- The gated sets: every set the champion's or the challenger's metrics file scores (their evaluate
  stages' test sets for the model's direction; a set the champion was scored on and the challenger
  was not refuses the challenger before anything is decoded, flows/decision.py), read from the
  folder the dvc.yaml's evaluate stage reads them from (its `--data`: data/validated, or
  data/general/validated for general/dvc.yaml) in the workspace, sources and references in the
  package's languages.
- The record: `reports/promotion/<artifact>.json` (`folder:name` as `folder-name`) and `.md`
  beside it, written atomically by the registry for every decision (flows/registry.py).

A project without champion packages (the dvc.yaml declares no `*-onnx` artifact, or it is not a
DVC project) leaves the point-score rule of flows/decision.py as the fallback, and the reason says
so. A champion package that is declared but cannot be fetched (`dvc get` failed: not in the cache,
the remote unreachable) is `ChampionUnavailable`: the registry stops the
promotion unless `--allow-point-score` asks for the fallback.
"""

from __future__ import annotations

import json
import logging
import posixpath
import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from flows.evidence import EvidenceDecision, decide_by_evidence
from flows.gto_registry import RegistryError
from flows.models import Model
from flows.side_by_side import SideBySide, decode_side_by_side
from flows.tools import dvc_command, tool_env
from nmt.config.promote import PromoteConfig
from nmt.files.atomic import atomic_write_text
from nmt.files.lines import read_lines, split_file

log = logging.getLogger(__name__)

RECORDS = Path("reports") / "promotion"  # the decision records, relative to the repository root
DEFAULT_DATA = "data/validated"  # the evaluate stage's test-set folder when a dvc.yaml names none
_DATA_ARG = re.compile(r"--data[=\s]+(\S+)")


class ChampionUnavailable(RegistryError):
    """The champion's package is declared but could not be fetched: the evidence cannot be made."""


def record_paths(repo: Path, artifact: str) -> tuple[Path, Path]:
    """Where the decision record of `artifact` goes: (JSON, Markdown) under reports/promotion/."""
    stem = artifact.replace(":", "-")
    return Path(repo) / RECORDS / f"{stem}.json", Path(repo) / RECORDS / f"{stem}.md"


def fetch_package(repo: Path, path: str, commit: str, dest: Path) -> str | None:
    """The folder `path` as committed in `commit`, fetched into `dest` with `dvc get`; None when
    fetched, else why not (one line)."""
    if not (Path(repo) / ".dvc").is_dir():
        return f"{repo} is not a DVC project"
    command = dvc_command("get", ".", path, "--rev", commit, "-o", str(dest))
    result = subprocess.run(command, cwd=repo, env=tool_env(), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        lines = [line.strip() for line in (result.stderr or result.stdout).splitlines() if line.strip()]
        error = next((line for line in reversed(lines) if line.startswith("ERROR")), lines[-1] if lines else "")
        return f"`dvc get . {path} --rev {commit[:8]}` failed: {error or 'no message'}"
    return None


def evaluate_data(repo: Path, dvcfile: str) -> Path:
    """The folder `dvcfile`'s evaluate stage reads the test sets from (its `--data`, resolved
    against its `wdir`), under `repo`; data/validated when there is no such stage."""
    try:
        stages = (yaml.safe_load((Path(repo) / dvcfile).read_text(encoding="utf-8")) or {}).get("stages") or {}
    except (OSError, yaml.YAMLError, AttributeError) as exc:
        raise RegistryError(f"{Path(repo) / dvcfile}: cannot read the evaluate stage: {exc}") from None
    stage = stages.get("evaluate") if isinstance(stages, dict) else None
    body = stage.get("do", stage) if isinstance(stage, dict) else {}
    match = _DATA_ARG.search(" ".join(str(body.get("cmd", "")).split())) if isinstance(body, dict) else None
    if match is None:
        return Path(repo) / DEFAULT_DATA
    folder = posixpath.join(posixpath.dirname(dvcfile), str(body.get("wdir", ".")), match.group(1))
    return Path(repo) / posixpath.normpath(folder)


def languages(package: Path) -> tuple[str, str]:
    """(source, target) language of the package, from its model.json card."""
    try:
        card = json.loads((Path(package) / "model.json").read_text(encoding="utf-8"))
        return str(card["languages"]["src"]), str(card["languages"]["tgt"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RegistryError(f"{package}: not an ONNX package with model.json languages ({exc})") from None


def gated_sets(data: Path, names: Sequence[str], src: str, tgt: str) -> dict[str, tuple[list[str], list[str]]]:
    """name -> (source lines, reference lines) of each set in `data`; a RegistryError naming a
    missing file or a length mismatch."""
    sets = {}
    for name in names:
        files = split_file(data, name, src), split_file(data, name, tgt)
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise RegistryError(f"test set {name}: {', '.join(missing)} not found; promotion by evidence decodes "
                                "the gated sets there: `dvc pull` the data stages' outputs or run them")
        sources, references = (read_lines(f) for f in files)
        if len(sources) != len(references) or not sources:
            raise RegistryError(f"test set {name}: {len(sources)} source and {len(references)} reference lines in "
                                f"{data}: need as many, at least one")
        sets[name] = (sources, references)
    return sets


def judge(sets: Mapping[str, tuple[Sequence[str], Sequence[str]]], decoded_by: SideBySide, champion: Path,
          challenger: Path, cfg: PromoteConfig) -> EvidenceDecision:
    """Decode `sets` (name -> (sources, references)) with both packages side by side and decide
    by evidence with `cfg`'s thresholds (margins, alpha, speed budget)."""
    decoded = decoded_by(champion, challenger, {name: src for name, (src, _) in sets.items()}, cfg.threads)
    compared = {name: (refs, decoded.champion[name], decoded.challenger[name]) for name, (_, refs) in sets.items()}
    return decide_by_evidence(compared, decoded.champion_sps, decoded.challenger_sps, cfg.alpha, cfg.min_speed_ratio,
                              cfg.resamples, cfg.seed, cfg.bleu_margin, cfg.chrf_margin)


def no_packages(repo: Path, model: Model) -> str | None:
    """Why the project has no ONNX packages to decide by evidence on (none declared, not a DVC
    project), or None when it has: then a champion package that cannot be fetched is an error."""
    if model.package is None:
        return f"{model.dvcfile} declares no ONNX package artifact (`*-onnx`) for {model.name}"
    if not (Path(repo) / ".dvc").is_dir():
        return f"{repo} is not a DVC project"
    return None


def by_evidence(repo: Path, model: Model, champion_commit: str, challenger_commit: str, names: Sequence[str],
                cfg: PromoteConfig, work: Path, decoded_by: SideBySide | None = None,
                champion_package: str | None = None) -> EvidenceDecision | str:
    """The evidence decision on the sets `names` (every set either model was scored on), or, when
    the project has no packages (`no_packages`), why not (the registry then falls back on point
    scores). A champion package that cannot be fetched raises `ChampionUnavailable`. Packages are
    fetched into `work`; `decoded_by` decodes them (default `decode_side_by_side`; tests inject
    prepared translations). `champion_package`: the champion's package path when it is another
    model's (a fine-tune's parent), else the model's own."""
    why = no_packages(repo, model)
    if why is not None:
        return why
    package = str(model.package)  # declared: no_packages said so
    champion, challenger = Path(work) / "champion", Path(work) / "challenger"
    why = fetch_package(repo, champion_package or package, champion_commit, champion)
    if why is not None:
        raise ChampionUnavailable(why)
    why = fetch_package(repo, package, challenger_commit, challenger)
    if why is not None:
        raise RegistryError(f"the challenger's package: {why}")
    src, tgt = languages(challenger)
    if languages(champion) != (src, tgt):
        raise RegistryError(f"the champion's package translates {'-'.join(languages(champion))}, the challenger's "
                            f"{src}-{tgt}: not the same task")
    data = Path(repo) / model.test_data if model.test_data else evaluate_data(repo, model.dvcfile)
    sets = gated_sets(data, names, src, tgt)
    log.info("%s: champion and challenger packages decode %s side by side", model.name, ", ".join(sets))
    return judge(sets, decoded_by or decode_side_by_side, champion, challenger, cfg)


def write_record(repo: Path, artifact: str, record: Mapping[str, object], page: str) -> tuple[Path, Path]:
    """Write the decision record of `artifact`: `record` as JSON, `page` as Markdown, each
    atomically (reports/promotion/, `record_paths`); returns their paths."""
    json_path, md_path = record_paths(repo, artifact)
    atomic_write_text(json_path, json.dumps(record, indent=2, default=str) + "\n")
    atomic_write_text(md_path, page)
    return json_path, md_path
