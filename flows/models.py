"""The models a dvc.yaml declares to the registry: its `artifacts:`, grouped by the metrics that judge them.

A model is a torch file and the packages made from it (dvc.yaml: `nmt-de-en` and
`nmt-de-en-onnx`); they are versioned and promoted together, on the evaluate stage's metrics
file named in each artifact's `meta.metrics` (default `reports/metrics.json`). The general
configuration (general/dvc.yaml) declares one model per direction, each with its own metrics,
so each direction is promoted on its own scores. Artifacts of a dvc.yaml in a sub-folder are
named as DVC and GTO name them, `folder:name` (GTO's tags read `folder=name@v0.0.1`). A model's
ONNX package is its artifact named `*-onnx` (or labelled `onnx`): the one promotion by evidence
decodes (flows/promotion.py). A fine-tune (finetune/dvc.yaml) names the model it came from in its
artifacts' meta (`parent`, `parent_package`, `parent_metrics`: the parent scored on the fine-tune's
sets): it is judged against that parent, not against an earlier fine-tune.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import yaml

DEFAULT_METRICS = "reports/metrics.json"  # the default pipeline's evaluate stage's scores per test set


class ArtifactsError(RuntimeError):
    """dvc.yaml's `artifacts:` section cannot be read or is not what the registry needs."""


@dataclass(frozen=True)
class Model:
    """The artifacts of one trained model, promoted together on one metrics file."""

    artifacts: tuple[str, ...]  # full names (`folder:name` for a dvc.yaml in a sub-folder), in file order
    metrics: str                # the evaluate metrics file, relative to the repository root
    direction: str | None       # `meta.direction` of the artifacts (e.g. de-en), when declared
    package: str | None = None  # the ONNX package artifact's path from the repository root (None: none declared)
    dvcfile: str = "dvc.yaml"   # the dvc.yaml that declares it, relative to the repository root
    parent: str | None = None   # a fine-tune's parent model (its artifact, e.g. general:nmt-de-en), else None
    parent_package: str | None = None  # the parent's ONNX package from the repository root (a fine-tune's champion)
    parent_metrics: str | None = None  # the parent's scores on the fine-tune's test sets (its evaluate-parent stage)
    test_data: str | None = None  # the test sets' folder from the repository root (meta.test_data; default: the
    # dvc.yaml's evaluate stage's --data)

    @property
    def name(self) -> str:
        """The first artifact's name: the one whose versions are counted and shown."""
        return self.artifacts[0]


def _section(project: Path, dvcfile: str) -> dict:
    path = Path(project) / dvcfile
    try:
        section = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("artifacts") or {}
    except (OSError, yaml.YAMLError, AttributeError) as exc:
        raise ArtifactsError(f"{path}: cannot read the artifacts section: {exc}") from None
    if not isinstance(section, dict):
        raise ArtifactsError(f"{path}: `artifacts:` must map names to {{path, type, meta}}")
    return section


def _package_path(folder: str, name: str, spec: dict) -> str | None:
    """The artifact's path from the repository root when it is an ONNX package (`*-onnx`, or labelled `onnx`)."""
    labels = spec.get("labels") or []
    if not (str(name).endswith("-onnx") or (isinstance(labels, list) and "onnx" in labels)):
        return None
    path = spec.get("path")
    return posixpath.normpath(posixpath.join(folder, str(path))) if path else None


def declared_models(project: Path, dvcfile: str = "dvc.yaml") -> list[Model]:
    """The models of `dvcfile`'s `artifacts:` (one per metrics file), in file order; [] when none."""
    folder = posixpath.dirname(Path(dvcfile).as_posix())
    groups: dict[str, list[tuple[str, str | None, str | None]]] = {}
    parents: dict[str, tuple[str | None, str | None, str | None]] = {}
    test_data: dict[str, str] = {}
    for name, spec in _section(project, dvcfile).items():
        meta = (spec or {}).get("meta") or {} if isinstance(spec, dict) else {}
        if not isinstance(meta, dict):
            raise ArtifactsError(f"{Path(project) / dvcfile}: artifact {name}: `meta:` must be a mapping")
        parent = tuple(None if meta.get(k) is None else str(meta[k]) for k in ("parent", "parent_package",
                                                                             "parent_metrics"))
        if any(parent) and not all(parent):
            raise ArtifactsError(f"{Path(project) / dvcfile}: artifact {name}: a fine-tune names its parent with "
                                 "all of meta.parent, meta.parent_package and meta.parent_metrics")
        metrics = str(meta.get("metrics") or DEFAULT_METRICS)
        direction = meta.get("direction")
        package = _package_path(folder, name, spec) if isinstance(spec, dict) else None
        groups.setdefault(metrics, []).append((f"{folder}:{name}" if folder else str(name),
                                               None if direction is None else str(direction), package))
        if all(parent):
            parents[metrics] = cast(tuple[str | None, str | None, str | None], parent)
        if meta.get("test_data") is not None:
            test_data[metrics] = str(meta["test_data"])
    models = []
    for metrics, members in groups.items():
        directions = {d for _, d, _ in members}
        if len(directions) > 1:
            raise ArtifactsError(f"{Path(project) / dvcfile}: artifacts judged by {metrics} declare different "
                                 f"directions {sorted(map(str, directions))}: one model, one direction")
        packages = [p for _, _, p in members if p is not None]
        models.append(Model(tuple(n for n, _, _ in members), metrics, members[0][1],
                            packages[0] if packages else None, Path(dvcfile).as_posix(),
                            *parents.get(metrics, (None, None, None)), test_data.get(metrics)))
    return models


def declared_artifacts(project: Path, dvcfile: str = "dvc.yaml") -> list[str]:
    """Every artifact name of `dvcfile`, in file order ([] when it has none)."""
    return [name for model in declared_models(project, dvcfile) for name in model.artifacts]
