"""Another language pair end to end through DVC (issue 65), in a scratch project: pairs/dvc.yaml with the
French-English pair only, pairs/fr-en.yaml with the smoke model and a tiny corpus cut from Multi30k's
French mirror (file:// URLs). `dvc repro pairs/dvc.yaml` runs the data stages once and binarize, train,
evaluate, export, ctranslate2 and profile for fr-en and en-fr: each package says its direction and is
scored on test_2016_flickr, both share one vocabulary, one server serves both and names French, the
CLI translates French with the CTranslate2 model; a second run does nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
import yaml

from support.pairs import FR_CS, build_pairs
from support.scratch import check_directions, repro_project, url_env
from support.scratch import dvc as _dvc
from support.serve import ThreadServer, config

pytestmark = pytest.mark.slow
DIRECTIONS = ("fr-en", "en-fr")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (FR_CS / "val.fr.gz").is_file():
        pytest.skip(f"the French-Czech Multi30k mirror is not at {FR_CS}")
    return repro_project(build_pairs(tmp_path_factory.mktemp("pairs"), DIRECTIONS), "pairs/dvc.yaml")


def test_the_pair_is_a_short_file_over_the_recipe(project: Path) -> None:
    """What a user writes for a new pair: its corpus over params.yaml, at most 30 lines (issue 74)."""
    text = (project / "pairs" / "fr-en.yaml").read_text()
    assert len(text.splitlines()) <= 30 and set(yaml.safe_load(text)) == {"recipe", "data"}


def test_both_directions_are_trained_scored_exported_and_profiled(project: Path) -> None:
    check_directions(project, "pairs", {d: {"test_2016_flickr"} for d in DIRECTIONS})
    for direction in DIRECTIONS:
        metrics = json.loads((project / "reports" / "pairs" / direction / "metrics.json").read_text())
        assert "sacrebleu_signature" in metrics["test_2016_flickr"]
        assert (project / "reports" / "pairs" / direction / "profile.json").is_file()


def test_one_server_serves_both_and_the_cli_translates_french(project: Path, tmp_path: Path) -> None:
    packages = project / "models" / "pairs"
    server = ThreadServer(config(packages, model=(packages / "en-fr" / "onnx", packages / "fr-en" / "onnx")))
    try:
        languages = httpx.get(f"{server.url}/languages").json()
        answer = httpx.post(f"{server.url}/translate", json={"q": "Un chien court.", "source": "fr", "target": "en"},
                            timeout=60).json()
    finally:
        server.close()
    assert {(lang["code"], lang["name"]) for lang in languages} == {("fr", "French"), ("en", "English")}
    assert isinstance(answer["translatedText"], str)
    source = tmp_path / "in.fr"
    source.write_text("Un chien court.\nDeux hommes parlent.\n", encoding="utf-8")
    nmt = [str(Path(shutil.which("nmt", path=url_env()["PATH"])))]
    run = subprocess.run([*nmt, "translate", "--model", str(packages / "fr-en" / "ct2"), "--input", str(source),
                          "--output", str(tmp_path / "out.en")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len((tmp_path / "out.en").read_text(encoding="utf-8").splitlines()) == 2


def test_a_second_run_does_nothing(project: Path) -> None:
    again = _dvc(project, url_env(), "repro", "pairs/dvc.yaml")
    assert again.returncode == 0 and "Data and pipelines are up to date." in again.stdout, again.stdout


@pytest.mark.fault
def test_a_pair_train_stage_killed_mid_run_keeps_its_outputs_and_the_rerun_passes(project: Path,
                                                                                   tmp_path: Path) -> None:
    """SIGKILL inside a pair's train stage (after its seventh update): pairs/dvc.lock and every output as
    they were, no process left; the re-run trains the direction again and leaves no temporary (issue 80)."""
    from support.kills import killed_leaves_outputs, leftovers
    from support.scratch import copy_project

    copy = copy_project(project, tmp_path / "p")
    shutil.rmtree(copy / "models" / "pairs" / "fr-en" / "checkpoints")  # from scratch: it would resume at the end
    (copy / "models" / "pairs" / "fr-en" / "checkpoints").mkdir()
    killed_leaves_outputs(copy, url_env(), "pairs/dvc.yaml:train@fr-en", "train-update:7", lock="pairs/dvc.lock")
    again = _dvc(copy, url_env(), "repro", "--force", "--single-item", "pairs/dvc.yaml:train@fr-en")
    assert again.returncode == 0, again.stderr + again.stdout
    assert leftovers(copy) == []
