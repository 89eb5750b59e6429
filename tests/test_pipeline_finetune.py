"""Fine-tuning end to end through DVC, in a scratch project: the French->English smoke model of
pairs/dvc.yaml is the parent, finetune/dvc.yaml continues it on another tiny cut of Multi30k's French
mirror (its own corpus, through download, validate and tokenize, binarized with the parent's
vocabulary), with the parent's training ids replayed. `dvc repro finetune/dvc.yaml` trains the parent
first (the graph crosses the two files), then fine-tunes, scores both on the general and the new test
set and compares them; the fine-tuned model names its parent and translates from the CLI; a second run
does nothing; a params edit that would resume the fine-tune with other settings fails it, keeping it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from nmt.config.loader import read_params
from nmt.config.params import Params
from nmt.files.digest import sha256_file
from support.corpus import ROOT
from support.graphs import write_graph
from support.pairs import FR_CS, build_pairs, tiny_corpus
from support.scratch import dvc, repro_project, url_env

pytestmark = pytest.mark.slow
KEY = "tiny-fr-en"
# the fine-tune's own corpus: Multi30k train lines the parent never saw, its general set the parent's test set
CUT = {"train": ("train", 0, 1000), "val": ("train", 1000, 1100), "test_own": ("train", 1100, 1250),
       "test_2016_flickr": ("test_2016_flickr", 150, 300)}


def build(root: Path) -> Path:
    build_pairs(root, ("fr-en",))
    (root / "finetune").mkdir()
    params = read_params(root / "pairs" / "fr-en.yaml", Params)  # the pair's settings, whole (no finetune section
    # in the recipe: a fine-tune's file states every section)
    params["data"]["corpora"] = {"multi30k-fr-cs": tiny_corpus(root / "srv-finetune", CUT)}
    params["evaluate"].update(test_sets=["test_2016_flickr", "test_own"])
    params["train"].update(epochs=5)
    params["finetune"] = {"lr": 0.001, "warmup": 5, "cooldown": 0.2, "max_steps": 20, "max_minutes": None,
                          "replay": 0.3, "general_sets": ["test_2016_flickr"], "max_general_drop": 100.0}
    (root / "finetune" / "tiny.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    # the fine-tune's rows, and its parent's (the pair's fr-en of build_pairs)
    write_graph(root, "finetune", {"finetune/tiny": {"pipeline": "finetune", "key": "tiny",
                                                     "params": "finetune/tiny.yaml"},
                                   "pairs/fr-en": {"pipeline": "pairs", "key": "fr-en", "params": "pairs/fr-en.yaml"}},
                {"pairs:nmt-fr-en": {"pipeline": "pairs", "data": "pairs/fr-en", "key": "fr-en", "direction": "fr-en",
                                     "desc": "the parent"},
                 f"finetune:nmt-{KEY}": {"pipeline": "finetune", "data": "finetune/tiny", "key": KEY,
                                        "direction": "fr-en", "parent": "pairs:nmt-fr-en", "labels": ["finetune"],
                                        "desc": "the smoke fine-tune"}})
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (FR_CS / "train.fr.gz").is_file():
        pytest.skip(f"the French-Czech Multi30k mirror is not at {FR_CS}")
    return repro_project(build(tmp_path_factory.mktemp("finetune")), "finetune/dvc.yaml")


def test_the_fine_tune_starts_from_its_parent_and_is_compared_with_it(project: Path) -> None:
    import torch

    parent = project / "models" / "pairs" / "fr-en" / "model.pt"
    state = torch.load(project / "models" / "finetune" / KEY / "model.pt", weights_only=True)
    assert state["parent"]["sha256"] == sha256_file(parent) and state["parent"]["direction"] == "fr-en"
    assert state["final"]["step"] == 20 and "max_steps" in state["final"]["how"]
    trained = json.loads((project / "reports" / "finetune" / KEY / "validation" / "finetune.json").read_text())
    assert trained["stats"]["updates"] == 20 and 0 < trained["stats"]["train_s"] < 3600  # the publish block's time
    vocab = json.loads((project / "data" / "finetune" / KEY / "vocab" / "manifest.json").read_text())
    ids = json.loads((project / "data" / "finetune" / KEY / "bin" / "manifest.json").read_text())
    parent_ids = json.loads((project / "data" / "pairs" / "fr-en" / "bin" / "manifest.json").read_text())
    assert ids["vocab"] == parent_ids["vocab"] and vocab["src_lang"] == "fr"
    compare = json.loads((project / "reports" / "finetune" / KEY / "compare" / "compare.json").read_text())
    assert {r["set"]: r["general"] for r in compare["sets"]} == {"test_2016_flickr": True, "test_own": False}
    for row in compare["sets"]:
        parent_scores = json.loads((project / "reports" / "finetune" / KEY / "parent" / "metrics.json").read_text())
        assert row["parent_sacrebleu"] == parent_scores[row["set"]]["sacrebleu"]
    page = (project / "reports" / "finetune" / KEY / "compare" / "finetune.md").read_text()
    assert "| test_own | no |" in page and "the sentences that changed most" in page
    gate = json.loads((project / "reports" / "finetune" / KEY / "validation" / "finetune-compare.json").read_text())
    assert gate["success"] and any(c["name"] == "test_2016_flickr: sacreBLEU kept" for c in gate["checks"])


def test_the_fine_tuned_model_translates_from_the_cli(project: Path, tmp_path: Path) -> None:
    source = tmp_path / "in.fr"
    source.write_text("Un chien court.\nDeux hommes parlent.\n", encoding="utf-8")
    nmt = [str(Path(shutil.which("nmt", path=url_env()["PATH"])))]
    run = subprocess.run([*nmt, "translate", "--model", str(project / "models" / "finetune" / KEY / "model.pt"),
                          "--input", str(source), "--output", str(tmp_path / "out.en")], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len((tmp_path / "out.en").read_text(encoding="utf-8").splitlines()) == 2


def test_the_registry_judges_the_fine_tune_against_its_parent(project: Path) -> None:
    """Both packages (the parent's exported here) decode the fine-tune's test sets side by side; the
    record names the parent as the champion, whatever the decision."""
    env = url_env()
    assert dvc(project, env, "repro", "pairs/dvc.yaml:export@fr-en").returncode == 0
    for args in (["add", "-A"], ["commit", "-qm", "runs"]):
        subprocess.run(["git", *args], cwd=project, check=True, env=env)
    python = str(Path(shutil.which("python", path=env["PATH"])))
    run = subprocess.run([python, "-m", "flows.registry", "--params", "finetune/tiny.yaml", "--dvcfile",
                          "finetune/dvc.yaml", "promote"], cwd=project, env=env | {"PYTHONPATH": str(ROOT)},
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    # the model's first artifact (its torch model file) names the record
    record = json.loads((project / "reports" / "promotion" / f"finetune-nmt-{KEY}.json").read_text())
    assert record["champion_version"] == "pairs:nmt-fr-en (the parent)" and record["rule"] == "evidence"
    assert {s["test_set"] for s in record["evidence"]["sets"]} == {"test_2016_flickr", "test_own"}


def test_a_second_run_does_nothing(project: Path) -> None:
    again = dvc(project, url_env(), "repro", "finetune/dvc.yaml")
    assert again.returncode == 0 and "Data and pipelines are up to date." in again.stdout, again.stdout


@pytest.mark.fault
def test_a_fine_tune_killed_with_its_model_staged_keeps_its_outputs_and_the_rerun_passes(project: Path,
                                                                                         tmp_path: Path) -> None:
    """SIGKILL inside the finetune stage with the new model file written beside its target, before the
    gate: finetune/dvc.lock and every output as they were, no process left; the re-run fine-tunes again
    and leaves no temporary (issue 80)."""
    from support.kills import killed_leaves_outputs, leftovers
    from support.scratch import copy_project

    copy = copy_project(project, tmp_path / "p")
    stage = f"finetune/dvc.yaml:finetune@{KEY}"
    killed_leaves_outputs(copy, url_env(), stage, "model-staged", lock="finetune/dvc.lock")
    again = dvc(copy, url_env(), "repro", "--force", "--single-item", stage)
    assert again.returncode == 0, again.stderr + again.stdout
    assert leftovers(copy) == []
