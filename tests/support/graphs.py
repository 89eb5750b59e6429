"""A scratch project's stage graph made as the repository's is: its own rows of pipeline/models.yaml, the
stages of pipeline/stages.yaml, written by tools/graph.py (so a test runs what a user who adds a pair runs)."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tools import graph
from tools.imports import ROOT


def write_graph(root: Path, pipeline: str, data: dict[str, dict], models: dict[str, dict],
                publish: bool = False) -> dict:
    """Write `root`/<pipeline's dvc.yaml> for the table rows `data` and `models` (pipeline/ copied to `root`,
    its table replaced by these rows); `publish`: keep the pipeline's publish stage. Returns the graph."""
    shutil.copytree(ROOT / "pipeline", root / "pipeline", dirs_exist_ok=True)
    table = yaml.safe_load((ROOT / graph.TABLE).read_text())
    table["data"], table["models"] = data, models
    (root / graph.TABLE).write_text(yaml.safe_dump(table, sort_keys=False))
    file = Path(table["pipelines"][pipeline]["file"])
    document = yaml.safe_load(graph.graphs(root)[file])
    if not publish:
        del document["stages"]["publish"]  # the pages' blocks: tests/test_published.py
    (root / file).parent.mkdir(parents=True, exist_ok=True)
    (root / file).write_text(yaml.safe_dump(document, sort_keys=False))
    return document
