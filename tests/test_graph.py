"""The stage graph is written once (pipeline/stages.yaml) and every model is a row of one table
(pipeline/models.yaml); tools/graph.py writes the four dvc.yaml files from them (issue 74)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tools import graph
from tools.imports import ROOT


def test_the_committed_dvc_files_are_what_the_table_and_the_stages_give() -> None:
    stale = [str(p) for p, text in graph.graphs().items() if (ROOT / p).read_text() != text]
    assert not stale, f"{stale} out of step with pipeline/: run `make graph` and commit"


def test_check_reports_a_hand_edited_dvc_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root = _copy(tmp_path)
    (root / "pairs" / "dvc.yaml").write_text((root / "pairs" / "dvc.yaml").read_text() + "# edited\n")
    assert graph.main(["--check"], root) == 1
    assert "pairs/dvc.yaml" in capsys.readouterr().err
    assert graph.main([], root) == 0 and graph.main(["--check"], root) == 0  # rewritten whole
    assert (root / "pairs" / "dvc.yaml").read_text() == (ROOT / "pairs" / "dvc.yaml").read_text()


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "pipeline", root / "pipeline")
    table = yaml.safe_load((ROOT / graph.TABLE).read_text())
    files = [spec["file"] for spec in table["pipelines"].values()] + [row["params"] for row in table["data"].values()]
    for file in [*files, "params.yaml"]:  # the graphs, the params files and their recipe
        (root / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / file, root / file)
    return root


def _stages(root: Path, dvcfile: str) -> dict:
    return yaml.safe_load(graph.graphs(root)[Path(dvcfile)])["stages"]


def test_a_new_pair_is_a_params_file_and_table_rows(tmp_path: Path) -> None:
    """German-French: one corpus row and two model rows give its data stages once and each direction's
    model stages, reading pairs/de-fr.yaml, into data/pairs/<key>/, models/pairs/<key>/, reports/pairs/<key>/."""
    root = _copy(tmp_path)
    table = yaml.safe_load((root / graph.TABLE).read_text())
    table["data"]["pairs/de-fr"] = {"pipeline": "pairs", "key": "de-fr", "params": "pairs/de-fr.yaml"}
    (root / "pairs" / "de-fr.yaml").write_text("recipe: ../params.yaml\ndata: {direction: de-fr}\n")
    for direction in ("de-fr", "fr-de"):
        table["models"][f"pairs:nmt-{direction}"] = {"pipeline": "pairs", "data": "pairs/de-fr", "key": direction,
                                                     "direction": direction, "labels": ["multi30k"], "desc": "x"}
    (root / graph.TABLE).write_text(yaml.safe_dump(table, sort_keys=False))
    stages = _stages(root, "pairs/dvc.yaml")
    assert stages["download"]["foreach"]["de-fr"]["params"] == "pairs/de-fr.yaml"
    train = stages["train"]["foreach"]["fr-de"]
    assert (train["unit"], train["models"], train["vocab"]) == ("data/pairs/de-fr", "models/pairs/fr-de",
                                                                "data/pairs/de-fr/vocab")
    assert "--direction ${item.direction}" in stages["binarize"]["do"]["cmd"]
    assert stages["binarize"]["foreach"]["fr-de"]["direction"] == "fr-de"
    publish = stages["publish"]["deps"]
    assert "reports/pairs/fr-de/metrics.json" in publish and "reports/pairs/de-fr/validation/raw.json" in publish
    assert set(_stages(root, "dvc.yaml")) == set(_stages(ROOT, "dvc.yaml"))  # the other pipelines as they were


def test_the_default_pipeline_reads_params_yaml_without_naming_it() -> None:
    stages = _stages(ROOT, "dvc.yaml")
    assert stages["binarize"]["cmd"].startswith("python -m nmt.data.binarize --tokens data/tokens")
    assert stages["train"]["params"] == ["model", "train", "tokenize.lowercase"]
    assert "foreach" not in stages["train"] and "wdir" not in stages["train"]


def test_a_row_naming_an_unknown_corpus_is_refused_with_its_key(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = yaml.safe_load((root / graph.TABLE).read_text())
    table["models"]["pairs:nmt-en-fr"]["data"] = "pairs/fr-em"
    (root / graph.TABLE).write_text(yaml.safe_dump(table, sort_keys=False))
    with pytest.raises(graph.TableError, match=r"models\.pairs:nmt-en-fr\.data: 'pairs/fr-em' is not one of data"):
        graph.graphs(root)


def test_a_placeholder_the_unit_lacks_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    stages = (root / graph.STAGES).read_text().replace("--tokens ${unit}/tokens --out ${vocab}",
                                                       "--tokens ${unit}/tokens --out ${vocabulary}")
    (root / graph.STAGES).write_text(stages)
    with pytest.raises(graph.TableError, match=r"\$\{vocabulary\} is not a value"):
        graph.graphs(root)
