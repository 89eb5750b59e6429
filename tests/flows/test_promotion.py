"""Promotion by evidence in the registry (flows/promotion.py, flows/registry.py), with prepared
translations and timings injected in place of decoding.

A scratch git + DVC repository stands for the project: dvc.yaml declares the ONNX package
artifact, each "run" commits a stand-in package (`dvc add models/onnx`: a model.json saying which
run made it), its metrics file and the test sets in data/validated. The registry fetches both
packages at their commits from the DVC cache and hands them, with the test sets' sources, to the
injected decoder, which returns the prepared translations and seconds. The real decoding, under
a Prefect flow run: test_promotion_flow.py.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from flows.gto_registry import Registry, RegistryError
from flows.registry import main, promote_commit
from flows.side_by_side import Decoded
from nmt.config.promote import PromoteConfig
from support.scratch import ROOT, dvc, project_env

pytest.importorskip("gto")

DVC_YAML = """artifacts:
  nmt-de-en-onnx: {path: models/onnx, type: model}
stages: {}
"""
SETS = ("test_a", "test_b")
LINES = 200
COLORS = ("red", "blue", "green", "small", "old", "young", "tall", "happy")
NOUNS = ("dog", "man", "woman", "child", "horse", "bike", "ball", "boat")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def references(name: str) -> list[str]:
    """English reference lines of a test set (varied, so BLEU resamples vary)."""
    k = SETS.index(name) + 3
    return [f"a {COLORS[i % 8]} {NOUNS[(i * k) % 8]} is playing with the {NOUNS[(i + k) % 8]} number {i}"
            for i in range(LINES)]


def champion_lines(name: str) -> list[str]:
    """A decent system: every fifth line has a word wrong."""
    return [r.replace("playing", "running") if i % 5 == 0 else r for i, r in enumerate(references(name))]


def worse_lines(name: str) -> list[str]:
    """A system that gets every second line badly wrong."""
    return ["something else entirely happened there" if i % 2 else r for i, r in enumerate(champion_lines(name))]


def _commit_run(repo: Path, run: int, metrics: dict | None = None) -> None:
    """A pipeline run's outcome as git and DVC see it: the package, the metrics (default: the same
    scores on every set), the test sets."""
    package = repo / "models" / "onnx"
    package.mkdir(parents=True, exist_ok=True)
    (package / "model.json").write_text(json.dumps({"languages": {"src": "de", "tgt": "en"}, "run": run}))
    result = dvc(repo, project_env(), "add", "-q", "models/onnx")
    assert result.returncode == 0, result.stderr
    (repo / "reports").mkdir(exist_ok=True)  # the same scores every run: the point-score rule would promote
    scores = metrics if metrics is not None else {n: {"sacrebleu": 40.0, "chrf": 60.0} for n in SETS}
    (repo / "reports" / "metrics.json").write_text(json.dumps(scores))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"run {run}")


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "ci@example.com")
    _git(tmp_path, "config", "user.name", "ci")
    result = dvc(tmp_path, project_env(), "init", "-q")
    assert result.returncode == 0, result.stderr
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    data = tmp_path / "data" / "validated"
    data.mkdir(parents=True)
    for name in SETS:
        (data / f"{name}.de").write_text("".join(f"Satz {i}\n" for i in range(LINES)))
        (data / f"{name}.en").write_text("".join(r + "\n" for r in references(name)))
    _commit_run(tmp_path, 1)
    decision, version, _ = promote_commit(tmp_path, "HEAD", max_bleu_drop=0.0)  # the first model: no comparison
    assert (version, decision.promote, decision.rule) == ("v0.0.1", True, "none")
    _commit_run(tmp_path, 2)
    return tmp_path


def prepared(challenger: dict[str, list[str]], champion_s: float, challenger_s: float,
             calls: list[dict]) -> Callable[..., Decoded]:
    """A side-by-side decoder that returns these translations and seconds, and notes what it got."""
    def decode(champion_dir: Path, challenger_dir: Path, sources, threads: int) -> Decoded:
        runs = [json.loads((d / "model.json").read_text())["run"] for d in (champion_dir, challenger_dir)]
        calls.append({"runs": runs, "sources": {n: list(s) for n, s in sources.items()}, "threads": threads})
        return Decoded({n: champion_lines(n) for n in sources}, {n: challenger[n] for n in sources}, champion_s,
                       challenger_s, threads)
    return decode


def _record(repo: Path) -> dict:
    return json.loads((repo / "reports" / "promotion" / "nmt-de-en-onnx.json").read_text())


def test_a_challenger_significantly_worse_on_one_set_is_refused(repo: Path) -> None:
    calls: list[dict] = []
    challenger = {"test_a": champion_lines("test_a"), "test_b": worse_lines("test_b")}
    rule = PromoteConfig(threads=3)
    decision, version, registry = promote_commit(repo, "HEAD", 0.0, rule=rule,
                                                 decoded_by=prepared(challenger, 10.0, 10.0, calls))
    assert (version, decision.promote, decision.rule) == ("v0.0.2", False, "evidence")
    assert registry.prod()[0] == "v0.0.1"  # prod unchanged
    # both packages at their own commits, the sources of every gated set, the rule's threads
    assert calls == [{"runs": [1, 2], "sources": {n: [f"Satz {i}" for i in range(LINES)] for n in SETS}, "threads": 3}]
    assert decision.reason.startswith("significantly worse on test_b (sacreBLEU -")
    assert "test_a" not in decision.reason and "speed" not in decision.reason
    verdicts = {e.test_set: e.verdict for e in decision.evidence.sets}
    assert verdicts == {"test_a": "no significant difference", "test_b": "significantly worse"}

    record = _record(repo)
    assert record["promoted"] is False and record["rule"] == "evidence" and record["version"] == "v0.0.2"
    assert record["champion_version"] == "v0.0.1" and record["reason"] == decision.reason
    assert record["config"]["threads"] == 3 and record["config"]["alpha"] == 0.05
    sets = {s["test_set"]: s for s in record["evidence"]["sets"]}
    assert sets["test_b"]["low"] <= sets["test_b"]["difference"] <= sets["test_b"]["high"] < 0  # the interval
    assert sets["test_b"]["holm_p"] < 0.05 and sets["test_a"]["difference"] == 0.0
    assert record["evidence"]["speed_ratio"] == 1.0 and record["evidence"]["resamples"] == 1000
    page = (repo / "reports" / "promotion" / "nmt-de-en-onnx.md").read_text()
    assert page.startswith("# nmt-de-en-onnx v0.0.2 against the champion v0.0.1: **not promoted**")
    assert "| test_b | 200 |" in page and "significantly worse |" in page and "Not measured:" in page


def test_a_challenger_slower_than_the_budget_is_refused(repo: Path) -> None:
    calls: list[dict] = []
    same = {n: champion_lines(n) for n in SETS}
    decision, version, registry = promote_commit(repo, "HEAD", 0.0, decoded_by=prepared(same, 8.0, 10.0, calls))
    assert not decision.promote and registry.prod()[0] == "v0.0.1"
    assert decision.reason == ("too slow: speed ratio 0.800 (40 / 50 sentences/s) below min_speed_ratio 0.9")
    assert _record(repo)["evidence"]["speed_ratio"] == pytest.approx(0.8)

    _commit_run(repo, 3)  # the same translations within the budget (0.95): promoted
    decision, version, registry = promote_commit(repo, "HEAD", 0.0, decoded_by=prepared(same, 9.5, 10.0, calls))
    assert (version, decision.promote, registry.prod()[0]) == ("v0.0.3", True, "v0.0.3")
    assert decision.reason.startswith("not significantly worse on any of test_a, test_b (Holm, alpha 0.05)")
    assert calls[-1]["runs"] == [1, 3]  # v0.0.1 is the champion still
    assert _record(repo)["promoted"] is True


def test_the_cli_decides_by_evidence_by_default(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import flows.promotion

    calls: list[dict] = []
    worse = {n: worse_lines(n) for n in SETS}
    monkeypatch.setattr(flows.promotion, "decode_side_by_side", prepared(worse, 10.0, 10.0, calls))
    monkeypatch.chdir(repo)
    assert main(["--params", str(ROOT / "params.yaml"), "promote"]) == 0
    assert calls and calls[0]["threads"] == 0  # params.yaml's promote.threads
    record = _record(repo)
    assert record["rule"] == "evidence" and not record["promoted"]
    assert record["evidence"]["alpha"] == 0.05 and record["evidence"]["min_speed_ratio"] == 0.9
    assert "significantly worse on test_a" in (repo / "reports" / "promotion.md").read_text()
    assert Registry(repo).prod()[0] == "v0.0.1"


def test_without_a_champion_package_the_point_scores_decide_and_say_so(repo: Path) -> None:
    subprocess.run(["rm", "-rf", str(repo / ".dvc")], check=True)  # no DVC: no package to fetch
    decision, version, _ = promote_commit(repo, "HEAD", 0.0, decoded_by=prepared({}, 1.0, 1.0, []))
    assert decision.promote and decision.rule == "point scores" and decision.evidence is None
    assert decision.reason == (f"not worse than the champion v0.0.1 on test_a, test_b; decided on point scores, the "
                               f"fallback rule: no package of the champion v0.0.1 to decode ({repo} is not a DVC "
                               "project)")
    record = _record(repo)
    assert record["rule"] == "point scores" and record["evidence"] is None and record["version"] == version


def test_a_champion_that_cannot_be_fetched_stops_the_promotion_unless_the_point_scores_are_allowed(
        repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An outage (here: the champion's package in neither the DVC cache nor the remote) stops a
    promotion instead of loosening it to the point-score rule."""
    subprocess.run(["rm", "-rf", str(repo / ".dvc" / "cache")], check=True)
    with pytest.raises(RegistryError) as stopped:
        promote_commit(repo, "HEAD", 0.0, decoded_by=prepared({}, 1.0, 1.0, []))
    message = str(stopped.value)
    assert message.startswith("cannot fetch the champion v0.0.1's package to decide by evidence: `dvc get . "
                              "models/onnx --rev ")
    assert "failed: ERROR: " in message and "--allow-point-score" in message and "\n" not in message
    registry = Registry(repo)
    assert registry.versions() == ["v0.0.1"] and registry.prod()[0] == "v0.0.1"  # nothing registered, nothing moved
    assert _record(repo)["version"] == "v0.0.1"  # no decision recorded: the first model's record stays
    monkeypatch.chdir(repo)
    assert main(["--params", str(ROOT / "params.yaml"), "promote"]) == 1
    assert "cannot fetch the champion v0.0.1's package" in capsys.readouterr().err

    # the explicit override: the old fallback, said in the reason and the record
    assert main(["--params", str(ROOT / "params.yaml"), "promote", "--allow-point-score"]) == 0
    record = _record(repo)
    assert record["rule"] == "point scores" and record["promoted"] and record["allow_point_score"] is True
    assert record["version"] == "v0.0.2" and record["evidence"] is None
    assert "decided on point scores by --allow-point-score: the champion v0.0.1's package could not be fetched" \
        in record["reason"]
    assert "failed: ERROR: " in record["reason"] and "\n" not in record["reason"]


def test_a_challenger_not_scored_on_a_set_of_the_champion_is_refused(repo: Path) -> None:
    """A challenger whose `evaluate.test_sets` was narrowed is not judged on its own sets only:
    the champion's sets are gated too."""
    calls: list[dict] = []
    _commit_run(repo, 3, {"test_a": {"sacrebleu": 40.0, "chrf": 60.0}})  # test_b dropped from its evaluation
    same = {n: champion_lines(n) for n in SETS}
    decision, version, registry = promote_commit(repo, "HEAD", 0.0, decoded_by=prepared(same, 10.0, 10.0, calls))
    assert (version, decision.promote, decision.rule, registry.prod()[0]) == ("v0.0.2", False, "evidence", "v0.0.1")
    assert decision.reason == ("not scored on test_b, where the champion v0.0.1 was: the evidence rule gates every "
                               "set either was scored on")
    assert calls == []  # refused before decoding anything
    assert _record(repo)["reason"] == decision.reason


def test_a_higher_unk_rate_is_refused_on_the_evidence_path_too(repo: Path) -> None:
    calls: list[dict] = []
    _commit_run(repo, 3, {n: {"sacrebleu": 40.0, "chrf": 60.0, "unk_rate": 0.02 if n == "test_b" else 0.0}
                          for n in SETS})
    same = {n: champion_lines(n) for n in SETS}
    decision, _, registry = promote_commit(repo, "HEAD", 0.0, decoded_by=prepared(same, 10.0, 10.0, calls))
    assert not decision.promote and registry.prod()[0] == "v0.0.1"
    assert decision.reason == "<unk> rate on test_b rose to 0.02 (the champion v0.0.1's: 0)"
    assert calls == []


FINETUNE_YAML = """artifacts:
  nmt-ft-onnx:
    path: ../models/finetune/ft/onnx
    type: model
    meta: {direction: de-en, metrics: reports/finetune/ft/metrics.json, parent: "general:nmt-de-en",
           parent_package: models/general/de-en/onnx, parent_metrics: reports/finetune/ft/parent/metrics.json,
           test_data: data/finetune/own/validated}
stages: {}
"""


def _commit_finetune(repo: Path, run: int) -> None:
    """A fine-tune's outcome: its package and the parent's (both DVC-tracked), both scored on its sets."""
    for folder, made_by in (("models/general/de-en/onnx", 1), ("models/finetune/ft/onnx", run)):
        if (repo / f"{folder}.dvc").is_file() and made_by == 1:
            continue  # the parent stays as it was
        (repo / folder).mkdir(parents=True, exist_ok=True)
        (repo / folder / "model.json").write_text(json.dumps({"languages": {"src": "de", "tgt": "en"}, "run": made_by}))
        result = dvc(repo, project_env(), "add", "-q", folder)
        assert result.returncode == 0, result.stderr
    for folder in ("reports/finetune/ft", "reports/finetune/ft/parent"):
        (repo / folder).mkdir(parents=True, exist_ok=True)
        (repo / folder / "metrics.json").write_text(json.dumps({n: {"sacrebleu": 40.0, "chrf": 60.0} for n in SETS}))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", f"fine-tune {run}")


@pytest.fixture()
def finetune_repo(tmp_path: Path) -> Path:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "ci@example.com")
    _git(tmp_path, "config", "user.name", "ci")
    assert dvc(tmp_path, project_env(), "init", "-q").returncode == 0
    (tmp_path / "finetune").mkdir()
    (tmp_path / "finetune" / "dvc.yaml").write_text(FINETUNE_YAML)
    data = tmp_path / "data" / "finetune" / "own" / "validated"
    data.mkdir(parents=True)
    for name in SETS:
        (data / f"{name}.de").write_text("".join(f"Satz {i}\n" for i in range(LINES)))
        (data / f"{name}.en").write_text("".join(r + "\n" for r in references(name)))
    _commit_finetune(tmp_path, 2)
    return tmp_path


def test_a_fine_tune_is_judged_against_its_parent_even_as_the_first_version(finetune_repo: Path) -> None:
    """No fine-tune at prod yet is no free pass: the parent's package (run 1) is the champion, decoded on
    the fine-tune's test sets; significantly worse on one: registered, not promoted. A fine-tune as
    good as its parent within the margins: promoted."""
    from flows.models import declared_models

    model = declared_models(finetune_repo, "finetune/dvc.yaml")[0]
    calls: list[dict] = []
    worse = {"test_a": champion_lines("test_a"), "test_b": worse_lines("test_b")}
    decision, version, registry = promote_commit(finetune_repo, "HEAD", 0.0, model=model,
                                                 decoded_by=prepared(worse, 10.0, 10.0, calls))
    assert (version, decision.promote, decision.rule) == ("v0.0.1", False, "evidence")
    assert registry.prod() is None and calls[0]["runs"] == [1, 2]  # the parent's package against the fine-tune's
    assert decision.champion_version == "general:nmt-de-en (the parent)"
    assert decision.reason.startswith("significantly worse on test_b")
    _commit_finetune(finetune_repo, 3)
    same = {n: champion_lines(n) for n in SETS}
    decision, version, registry = promote_commit(finetune_repo, "HEAD", 0.0, model=model,
                                                 decoded_by=prepared(same, 10.0, 10.0, calls))
    assert (version, decision.promote, registry.prod()[0]) == ("v0.0.2", True, "v0.0.2")
    assert calls[-1]["runs"] == [1, 3]  # again the parent, not the fine-tune registered before
    record = json.loads((finetune_repo / "reports" / "promotion" / "finetune-nmt-ft-onnx.json").read_text())
    assert record["promoted"] and record["champion_version"] == "general:nmt-de-en (the parent)"
