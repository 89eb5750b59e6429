"""The GTO registry: first model -> v0.0.1 at prod; worse -> registered, prod unchanged; better -> promoted.

A scratch git repository stands for the project: a dvc.yaml with two artifacts (as ours) and
commits of `reports/metrics.json` for the runs. The flow end to end: tests/flows/test_lifecycle.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from flows.decision import decide, markdown, scores
from flows.gto_registry import Registry, RegistryError
from flows.registry import main, promote_commit, select_models
from support.scratch import ROOT

ARTIFACT = "nmt-de-en"
DVC_YAML = """artifacts:
  nmt-de-en: {path: models/model.pt, type: model}
  nmt-de-en-onnx: {path: models/onnx, type: model}
stages: {}
"""

pytest.importorskip("gto")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def _commit_model(repo: Path, bleu: float, unk: float = 0.0) -> None:
    """A pipeline run's outcome as git sees it: the evaluate stage's metrics, committed."""
    (repo / "reports").mkdir(exist_ok=True)
    metrics = {"test_2016_flickr": {"sacrebleu": bleu, "chrf": bleu + 20, "unk_rate": unk, "sentences": 1000}}
    (repo / "reports" / "metrics.json").write_text(json.dumps(metrics))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"model scoring {bleu}")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "ci@example.com")
    _git(tmp_path, "config", "user.name", "ci")
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    return tmp_path


def test_champion_challenger_over_three_runs(repo: Path) -> None:
    registry = Registry(repo)
    _commit_model(repo, 38.0)
    decision, version, _ = promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    first = _git(repo, "rev-parse", "HEAD").strip()
    assert (version, decision.promote) == ("v0.0.1", True) and registry.prod() == ("v0.0.1", first)

    _commit_model(repo, 31.0)  # a worse retrain
    decision, version, _ = promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    assert version == "v0.0.2" and not decision.promote
    assert "31.00 vs champion 38.00" in decision.reason
    assert registry.prod() == ("v0.0.1", first)  # prod unchanged
    assert "**not promoted**" in markdown(decision, version, ARTIFACT)

    _commit_model(repo, 38.5)  # a better one
    decision, version, _ = promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    assert version == "v0.0.3" and decision.promote
    assert registry.prod()[0] == "v0.0.3"
    tags = set(_git(repo, "tag").split())
    assert {f"{name}@v0.0.{n}" for name in (ARTIFACT, f"{ARTIFACT}-onnx") for n in (1, 2, 3)} <= tags
    assert {f"{ARTIFACT}#prod#1", f"{ARTIFACT}-onnx#prod#2"} <= tags  # both artifacts promoted, twice
    assert registry.versions() == ["v0.0.1", "v0.0.2", "v0.0.3"]


def test_decision_rules() -> None:
    champ = scores({"t": {"sacrebleu": 38.0, "chrf": 58.0, "unk_rate": 0.0}, "bleu_signature": "x"})
    assert decide(scores({"t": {"sacrebleu": 37.8, "chrf": 58}}), champ, max_bleu_drop=0.5).promote
    assert not decide(scores({"t": {"sacrebleu": 37.8, "chrf": 58}}), champ, max_bleu_drop=0.0).promote
    assert not decide(scores({"t": {"sacrebleu": 39.0, "chrf": 58}}), champ, 0.0, gates_passed=False).promote
    assert not decide(scores({"t": {"sacrebleu": 39.0, "chrf": 58, "unk_rate": 0.01}}), champ, 0.0).promote
    assert not decide(scores({"other": {"sacrebleu": 45.0}}), champ, 0.0).promote  # not scored where it matters
    assert decide(scores({"t": {"sacrebleu": 37.8, "chrf": 58}}), champ, max_bleu_drop=0.2).promote  # at the limit
    assert not decide(scores({"t": {"sacrebleu": float("nan"), "chrf": 58}}), champ, max_bleu_drop=5).promote


def test_cli_writes_the_decision(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(repo)
    _commit_model(repo, 35.0)
    assert main(["--params", str(ROOT / "params.yaml"), "promote", "--report", "reports/promotion.md"]) == 0
    assert (repo / "reports" / "promotion.md").read_text().startswith(f"# {ARTIFACT} v0.0.1: promoted to `prod`")
    _commit_model(repo, 30.0)
    assert main(["--params", str(ROOT / "params.yaml"), "promote", "--max-bleu-drop", "10"]) == 0  # within 10
    assert Registry(repo).prod()[0] == "v0.0.2"


def test_errors_name_what_is_missing(repo: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch, capsys) -> None:
    bare = tmp_path_factory.mktemp("bare")
    with pytest.raises(RegistryError, match="dvc.yaml: cannot read the artifacts section: .*No such file"):
        Registry(bare)
    (bare / "dvc.yaml").write_text("stages: {}\n")
    with pytest.raises(RegistryError, match="declares no `artifacts:`; nothing to register"):
        Registry(bare)
    monkeypatch.chdir(repo)
    _commit_model(repo, 35.0)
    assert main(["--params", str(ROOT / "params.yaml"), "promote", "--rev", "no-such-rev"]) == 1
    assert "error: git rev-parse" in capsys.readouterr().err and not Registry(repo).versions()


def test_git_missing_from_path_is_a_one_line_error(repo: Path, tmp_path_factory: pytest.TempPathFactory,
                                                   monkeypatch, capsys) -> None:
    monkeypatch.chdir(repo)
    monkeypatch.setenv("PATH", str(tmp_path_factory.mktemp("no-git")))
    assert main(["--params", str(ROOT / "params.yaml"), "show"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("python -m flows.registry: error: git is not on PATH: install git") and err.count("\n") == 1


GENERAL_DVC_YAML = """artifacts:
  nmt-de-en: {path: ../models/general/de-en/model.pt, type: model,
              meta: {direction: de-en, metrics: reports/general/de-en/metrics.json}}
  nmt-de-en-onnx: {path: ../models/general/de-en/onnx, type: model,
                   meta: {direction: de-en, metrics: reports/general/de-en/metrics.json}}
  nmt-en-de: {path: ../models/general/en-de/model.pt, type: model,
              meta: {direction: en-de, metrics: reports/general/en-de/metrics.json}}
stages: {}
"""


def _commit_direction(repo: Path, direction: str, bleu: float) -> None:
    folder = repo / "reports" / "general" / direction
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "metrics.json").write_text(json.dumps({"newstest2014": {"sacrebleu": bleu, "chrf": bleu + 20}}))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"{direction} scoring {bleu}")


def test_each_direction_is_promoted_on_its_own_metrics(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "general").mkdir()
    (repo / "general" / "dvc.yaml").write_text(GENERAL_DVC_YAML)
    monkeypatch.chdir(repo)
    params = str(ROOT / "params.yaml")
    _commit_direction(repo, "de-en", 20.0)
    _commit_direction(repo, "en-de", 15.0)
    assert main(["--params", params, "--dvcfile", "general/dvc.yaml", "promote"]) == 0
    page = (repo / "reports" / "promotion.md").read_text()
    assert "# general:nmt-de-en v0.0.1: promoted" in page and "# general:nmt-en-de v0.0.1: promoted" in page
    _commit_direction(repo, "de-en", 21.0)  # de-en better, en-de worse: each decided on its own scores
    _commit_direction(repo, "en-de", 12.0)
    assert main(["--params", params, "--dvcfile", "general/dvc.yaml", "promote"]) == 0
    models = {m.direction: m for m in select_models(repo, "general/dvc.yaml", None)}
    assert models["de-en"].artifacts == ("general:nmt-de-en", "general:nmt-de-en-onnx")
    assert Registry(repo, models["de-en"]).prod()[0] == "v0.0.2"
    assert Registry(repo, models["en-de"]).prod()[0] == "v0.0.1"
    tags = set(_git(repo, "tag").split())
    assert {"general=nmt-de-en@v0.0.2", "general=nmt-de-en-onnx#prod#2", "general=nmt-en-de@v0.0.2"} <= tags
    # one direction only; an unknown name lists the known ones
    _commit_direction(repo, "en-de", 16.0)
    assert main(["--params", params, "--dvcfile", "general/dvc.yaml", "--model", "general:nmt-en-de", "promote"]) == 0
    assert Registry(repo, models["en-de"]).prod()[0] == "v0.0.3"
    assert Registry(repo, models["de-en"]).versions()[-1] == "v0.0.2"
    with pytest.raises(RegistryError, match="declares no artifact nmt-en-de; it declares general:nmt-de-en"):
        select_models(repo, "general/dvc.yaml", ["nmt-en-de"])
    # a rollback names its direction; its tags are GTO's `general=` ones
    assert main(["--params", params, "--dvcfile", "general/dvc.yaml", "rollback"]) == 1
    assert main(["--params", params, "--dvcfile", "general/dvc.yaml", "rollback", "--model", "general:nmt-de-en"]) == 0
    assert Registry(repo, models["de-en"]).prod()[0] == "v0.0.1"
    assert Registry(repo, models["en-de"]).prod()[0] == "v0.0.3"


def _stage_tags(repo: Path) -> set[str]:
    return {t for t in _git(repo, "tag").split() if "#prod" in t}


def test_a_champion_without_metrics_is_no_reason_to_promote(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / "notes.txt").write_text("a run that wrote no metrics\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "no metrics")
    decision, version, registry = promote_commit(repo, "HEAD", max_bleu_drop=0.0)  # a challenger without metrics
    assert not decision.promote and decision.reason == "the challenger has no test-set scores in reports/metrics.json"
    registry.promote(version)  # v0.0.1 at prod by hand: a champion without metrics
    _commit_model(repo, 38.0)
    decision, version, _ = promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    assert (version, decision.promote, registry.prod()[0]) == ("v0.0.2", False, "v0.0.1")  # not promoted by default
    assert decision.reason.startswith("the champion v0.0.1 has no test-set scores in reports/metrics.json: nothing")
    assert "\n" not in decision.reason and "--allow-champion-without-metrics" in decision.reason
    monkeypatch.chdir(repo)
    _commit_model(repo, 37.0)
    assert main(["--params", str(ROOT / "params.yaml"), "promote", "--allow-champion-without-metrics"]) == 0
    assert registry.prod()[0] == "v0.0.3"
    assert "promoted by --allow-champion-without-metrics" in (repo / "reports" / "promotion.md").read_text()
    assert not decide(scores({"t": {"sacrebleu": 30.0}}), {}, 0.0, champion_version="v0.0.1").promote


def _fail_on_call(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """gto.api.assign fails on its `n`-th call from now (the second artifact's assignment)."""
    import gto.api

    real, calls = gto.api.assign, []

    def assign(*args, **kwargs):
        calls.append(args)
        if len(calls) == n:
            raise OSError("the disk is full")
        return real(*args, **kwargs)

    monkeypatch.setattr(gto.api, "assign", assign)


def test_a_promotion_that_fails_half_way_takes_back_what_it_did(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _commit_model(repo, 38.0)
    promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    before = set(_git(repo, "tag").split())
    _commit_model(repo, 39.0)
    with monkeypatch.context() as patch:
        _fail_on_call(patch, 2)
        with pytest.raises(OSError, match="the disk is full"):
            promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    assert set(_git(repo, "tag").split()) == before  # no stage tag of one artifact only, no v0.0.2 either
    registry = Registry(repo)
    assert [registry.holders(a)[0][0] for a in registry.artifacts] == ["v0.0.1", "v0.0.1"]
    decision, version, _ = promote_commit(repo, "HEAD", max_bleu_drop=0.0)  # the same commit again: it works
    assert (version, decision.promote, registry.prod()[0]) == ("v0.0.2", True, "v0.0.2")


def test_rollback_moves_prod_back_for_both_artifacts(repo: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from dvc.repo import Repo

    monkeypatch.chdir(repo)
    params = str(ROOT / "params.yaml")
    assert main(["--params", params, "rollback"]) == 1  # nothing at prod yet
    assert "error: nmt-de-en: no version is at prod; nothing to roll back" in capsys.readouterr().err
    for bleu in (38.0, 38.5, 39.0):
        _commit_model(repo, bleu)
        promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    registry = Registry(repo)
    commits = {v: _git(repo, "rev-parse", f"{ARTIFACT}@{v}^{{commit}}").strip() for v in registry.versions()}
    before = set(_git(repo, "tag").split())
    with monkeypatch.context() as patch:  # a rollback that fails half-way leaves prod where it was
        _fail_on_call(patch, 2)
        assert main(["--params", params, "rollback"]) == 1
    assert "error: the disk is full" in capsys.readouterr().err and set(_git(repo, "tag").split()) == before
    assert main(["--params", params, "rollback"]) == 0
    dvc = Repo(str(repo), uninitialized=True)  # `dvc artifacts get --stage prod` resolves the same version
    for name in registry.artifacts:
        assert registry.holders(name)[0] == ("v0.0.2", commits["v0.0.2"])
        assert dvc.artifacts.get_rev(name, stage="prod") == commits["v0.0.2"]
    assert main(["--params", params, "rollback"]) == 0
    assert registry.prod() == ("v0.0.1", commits["v0.0.1"])
    capsys.readouterr()
    assert main(["--params", params, "rollback"]) == 1  # v0.0.1 was the first
    err = capsys.readouterr().err
    assert err == ("python -m flows.registry: error: nmt-de-en: v0.0.1 is at prod and no earlier version is left to "
                   "roll back to\n")
    _commit_model(repo, 40.0)  # a new champion after a rollback; rolling it back skips the rolled-back ones
    decision, version, _ = promote_commit(repo, "HEAD", max_bleu_drop=0.0)
    assert (version, decision.promote) == ("v0.0.4", True)
    assert registry.rollback() == ("v0.0.4", "v0.0.1") and registry.prod()[0] == "v0.0.1"
