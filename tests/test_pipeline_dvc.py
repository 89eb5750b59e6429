"""The pipeline end to end through DVC, in a scratch copy of the project with the smoke
configuration (tests/support/smoke_params.yaml: the real data stages, a tiny model).

Checks what a user sees: `dvc repro` builds every data output through the gates, a second
run does nothing, a code edit or a params change re-runs only the stages it touches, tokenization is served
from the content cache when going back to earlier params, and a failing gate fails the
stage while the previous outputs and dvc.lock stay as they were. The project is built once
per module (`built`); a test that changes params or outputs works on its own copy of it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from nmt.data.shards import SHARD_LINES
from support.scratch import build_project, commit_project, copy_project, project_env
from support.scratch import dvc as _dvc
from tools.publish.stage import pages, render_pages
from tools.publish.tables import Sources

pytestmark = pytest.mark.slow


def _tree_digest(path: Path) -> str:
    digest = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file():
            digest.update(f.relative_to(path).as_posix().encode() + f.read_bytes())
    return digest.hexdigest()


def _set_param(project: Path, section: str, key: str, value) -> None:
    path = project / "params.yaml"
    params = yaml.safe_load(path.read_text())
    params[section][key] = value
    path.write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.fixture(scope="module")
def env(mirror: Path) -> dict:
    return project_env(mirror)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env: dict) -> Path:
    """The scratch project after its first `dvc repro`, once per module; tests that change it use `workspace`."""
    project = build_project(tmp_path_factory.mktemp("project"))
    commit_project(project, env)  # DVCLive needs a commit
    first = _dvc(project, env, "repro")
    assert first.returncode == 0, first.stderr + first.stdout
    return project


@pytest.fixture
def workspace(built: Path, tmp_path: Path) -> Path:
    """This test's own copy of the built project."""
    return copy_project(built, tmp_path / "project")


def test_repro_builds_gated_outputs_then_is_up_to_date(built: Path, env: dict) -> None:
    project = built
    for path in ("data/raw/train.de.gz", "data/validated/train.en", "data/tokens/val.de.tsv",
                 "data/vocab/src.vocab", "data/vocab/manifest.json", "data/bin/manifest.json", "data/bin/train.de.bin"):
        assert (project / path).is_file(), path
    assert (project / "models/model.pt").is_file() and (project / "reports/train/curves.png").is_file()
    metrics = json.loads((project / "reports/train/live/metrics.json").read_text())
    assert metrics["step"] == 25 and metrics["train_loss"] > 0
    for gate in ("raw", "tokens", "vocab", "binarize", "train"):
        report = json.loads((project / "reports/validation" / f"{gate}.json").read_text())
        assert report["success"] is True and report["checks"]
        assert (project / "reports/validation" / f"{gate}.md").read_text().startswith(f"# Gate `{gate}`: PASSED")
    assert len((project / "data/validated/train.de").read_text().splitlines()) == 28998

    second = _dvc(project, env, "repro")
    assert second.returncode == 0
    assert "Data and pipelines are up to date" in second.stdout


def _changed_stages(project: Path, env: dict) -> set[str]:
    status = _dvc(project, env, "status", "--json")
    assert status.returncode == 0, status.stderr
    return set(json.loads(status.stdout or "{}"))


@pytest.mark.parametrize(("edited", "expected"), [
    ("nmt/export/stage.py", {"export"}),
    # train decodes with nmt/decode/backend.py and search.py only
    ("nmt/decode/translator.py", {"evaluate", "export", "ctranslate2"}),
    ("nmt/runtime/session.py", {"export", "ctranslate2", "profile"}),  # profile reads through the package
    ("nmt/data/indexed.py", {"binarize", "train"}),  # the id files' format: written by one, memory-mapped by the other
])
def test_code_edit_reruns_exactly_the_stages_that_import_it(built: Path, env: dict, edited: str,
                                                            expected: set[str]) -> None:
    project = built  # the edit is taken back below
    assert _changed_stages(project, env) == set()
    path = project / edited
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n# an edit\n")
        assert _changed_stages(project, env) == expected
    finally:
        path.write_bytes(original)
    assert _changed_stages(project, env) == set()


def test_vocab_change_does_not_retokenize(workspace: Path, env: dict) -> None:
    project = workspace
    _set_param(project, "vocab", "min_freq", 3)
    run = _dvc(project, env, "repro")
    assert run.returncode == 0, run.stderr
    assert "Stage 'tokenize' didn't change" in run.stdout
    assert "Running stage 'vocab'" in run.stdout


def test_going_back_to_earlier_tokenize_params_hits_the_cache(workspace: Path, env: dict) -> None:
    project = workspace
    _set_param(project, "tokenize", "lowercase", True)
    assert _dvc(project, env, "repro", "tokenize").returncode == 0
    # cached per shard: the train files (28,998 lines) are two shards each, the others one
    shards = sum(-(-len((project / "data/validated" / f.name).read_bytes().splitlines()) // SHARD_LINES)
                 for f in (project / "data/validated").iterdir())
    assert shards == 8
    stats = json.loads((project / "reports/validation/tokens.json").read_text())["stats"]["cache"]
    assert stats["hits"] == 0 and stats["misses"] == shards
    assert "ein" in (project / "data/tokens/train.de.tsv").read_text().split()

    _set_param(project, "tokenize", "lowercase", False)
    run = _dvc(project, env, "repro", "tokenize")
    assert run.returncode == 0, run.stderr
    stats = json.loads((project / "reports/validation/tokens.json").read_text())["stats"]["cache"]
    assert stats["hits"] == shards and stats["misses"] == 0


def test_failed_gate_fails_stage_and_keeps_previous_outputs(workspace: Path, env: dict) -> None:
    project = workspace
    before, lock = _tree_digest(project / "data/validated"), (project / "dvc.lock").read_text()
    _set_param(project, "validate", "min_train_pairs", 10**6)
    run = _dvc(project, env, "repro")
    assert run.returncode != 0
    assert "raw gate failed" in run.stderr and "train: pairs" in run.stderr
    assert "Traceback" not in run.stderr
    assert _tree_digest(project / "data/validated") == before
    assert (project / "dvc.lock").read_text() == lock
    report = json.loads((project / "reports/validation/raw.json").read_text())
    assert report["success"] is False


def test_a_changed_parameter_leaves_the_published_pages_in_step(workspace: Path, env: dict) -> None:
    """`dvc repro` after a params change re-runs publish, so the README states the new scores and
    re-rendering it changes nothing (what tests/test_published.py checks on the repository)."""
    project = workspace
    def scores_shown() -> bool:
        readme = (project / "README.md").read_text()
        return all(f"**{v['sacrebleu']:.2f}**" in readme
                   for v in json.loads((project / "reports/metrics.json").read_text()).values())

    assert scores_shown()  # the first repro rendered the tiny model's scores
    _set_param(project, "evaluate", "beam_size", 3)  # the smoke configuration decodes with 2
    run = _dvc(project, env, "repro")
    assert run.returncode == 0, run.stderr + run.stdout
    assert "Running stage 'publish'" in run.stdout and "Stage 'train' didn't change" in run.stdout
    metrics = json.loads((project / "reports/metrics.json").read_text())
    assert {v["decoding"]["beam_size"] for v in metrics.values()} == {3}
    assert scores_shown() and "with beam 3 and length penalty" in (project / "README.md").read_text()
    site = pages(project / "README.md", project / "docs")
    assert render_pages(site, Sources(project / "reports", project / "bench" / "results")) == \
        {p: p.read_text() for p in site}
