"""The Prefect flow (flows/pipeline.py) under `prefect_test_harness`.

End to end on a scratch copy of the project with the smoke configuration, run in full once
per module (`first_run`) for every test that needs a built project: the full run completes
(one task per dvc.yaml stage, gate and metrics artifacts, outputs pushed and restorable with
`dvc pull`); a second run does no stage work; a corrupted raw file fails the validate gate and
the flow run with the gate's message; a params override reaches the stage and is taken back
after the run. Tests that change the built project work on their own copy of it. A second
run is turned away while another holds the pipeline's concurrency slot (a two-stage project).
A killed or stuck stage fails its task and the run within seconds (tests/flows/test_stage_death.py: run_dvc).
The helpers (dvc.yaml parsing, stage selection, params overrides, messages: flows/dvc_project.py;
the run summary: flows/artifacts.py) are tested directly; which gate reports are a run's own:
test_gate_freshness.py.
"""

from __future__ import annotations

import gzip
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID

import pytest
import yaml

from support.prefect_server import drain_prefect_services
from support.scratch import (
    ROOT,
    build_project,
    build_tiny_project,
    commit_project,
    copy_project,
    dvc,
    isolate_prefect,
    project_env,
)

isolate_prefect()  # before prefect is imported

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    FlowRunFilter,
    FlowRunFilterId,
)
from prefect.concurrency.sync import concurrency
from prefect.states import State
from prefect.testing.utilities import prefect_test_harness

from flows import artifacts as fa
from flows import concurrency as fc
from flows import dvc_project as dp
from flows import pipeline as pl

GATE_REPORT = re.compile(r"reports/validation/([\w-]+)\.json")  # where a stage's gate writes its report


def gate_names(project: Path = ROOT) -> list[str]:
    """Every stage gate of dvc.yaml, in stage order: the gate reports its stages declare as metrics."""
    return [m.group(1) for spec in dp.read_stages(project) for path in spec.metrics
            if (m := GATE_REPORT.fullmatch(path))]


GATES = gate_names()


@pytest.fixture(scope="module")
def harness() -> Iterator[None]:
    with prefect_test_harness(server_startup_timeout=60):
        yield
        drain_prefect_services()  # before the harness's server stops (support/prefect_server.py)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    root = build_project(tmp_path_factory.mktemp("flow-project"))
    commit_project(root, project_env(mirror), remote=True)  # remote: the repository's `.dvcstore` config
    return root


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, mirror: Path, harness: None) -> dict:
    """The flow passes its environment to DVC: point the download stage at the mirror."""
    monkeypatch.setenv("NMT_DATA_MIRROR", str(mirror))
    return project_env(mirror)


@pytest.fixture(scope="module")
def first_run(project: Path, mirror: Path, harness: None) -> State:
    """The project's first full run (every stage runs), once per module: what a built project needs."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NMT_DATA_MIRROR", str(mirror))
        state = run(project)
    assert state.is_completed(), state.message
    return state


@pytest.fixture
def own_copy(project: Path, first_run: State, tmp_path: Path) -> Path:
    """A copy of the built project for a test that changes it."""
    return copy_project(project, tmp_path / "project")


def run(project: Path, **params) -> State:
    return pl.pipeline(project_dir=str(project), return_state=True, **params)


def artifacts(state: State) -> dict[str, object]:
    """The keyed artifacts of one flow run (task artifacts included), by key."""
    run_id = state.state_details.flow_run_id
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[run_id])))
    return {a.key: a for a in found if a.key}


def task_run_names(flow_run_id: UUID) -> list[str]:
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
    return sorted(r.name for r in runs)


def table(artifact) -> list[dict]:
    return json.loads(artifact.data)


def stage_names(project: Path) -> list[str]:
    return list(yaml.safe_load((project / "dvc.yaml").read_text())["stages"])


def tree_state(project: Path, *dirs: str) -> dict[str, int]:
    """mtime of every file under `dirs` (default: data and models): changes if a stage rewrote it."""
    return {str(p): p.stat().st_mtime_ns for d in dirs or ("data", "models") for p in (project / d).rglob("*")
            if p.is_file()}


# --- end to end ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_full_run_completes_publishes_gates_and_pushes(first_run: State, project: Path, env: dict,
                                                       tmp_path: Path) -> None:
    state = first_run
    report = state.result()
    stages = stage_names(project)
    assert report.ran == stages  # every stage ran, in dvc.yaml order
    assert task_run_names(state.state_details.flow_run_id) == sorted([*stages, "dvc-push", "dvc-exp-save",
                                                                      "register"])
    assert report.promotion.version == "v0.0.1" and report.promotion.promoted  # the first model takes prod

    found = artifacts(state)
    for gate in GATES:
        assert found[f"gate-{gate}"].data.startswith(f"# Gate `{gate}`: PASSED")
    gate_rows = {r["gate"]: r for r in table(found["gates"])}
    assert gate_rows.keys() == set(GATES)
    assert all(r["result"] == "PASSED" and r["from this run"] for r in gate_rows.values())
    live = json.loads((project / "reports/train/live/metrics.json").read_text())
    metrics = {(r["file"], r["metric"]): r["value"] for r in table(found["metrics"])}
    assert metrics[("reports/train/live/metrics.json", "step")] == live["step"]
    assert metrics[("reports/train/live/metrics.json", "train_loss")] == live["train_loss"]
    bleu = json.loads((project / "reports/metrics.json").read_text())["test_2016_flickr"]["sacrebleu"]
    assert metrics[("reports/metrics.json", "test_2016_flickr.sacrebleu")] == bleu
    assert found["pipeline-summary"].data.startswith("# nmt pipeline: COMPLETED")

    # pushed to the default remote: the model comes back from it alone (in a copy: the model is deleted)
    clone = copy_project(project, tmp_path / "project")
    lock = yaml.safe_load((clone / "dvc.lock").read_text())
    md5 = next(o["md5"] for o in lock["stages"]["train"]["outs"] if o["path"] == "models/model.pt")
    assert (clone / ".dvcstore/files/md5" / md5[:2] / md5[2:]).is_file()
    assert f"md5: {md5}" in found["dvc-lock"].data  # the run's lineage, to restore this version later
    model = clone / "models/model.pt"
    original = model.read_bytes()
    model.unlink()
    (clone / ".dvc/cache/files/md5" / md5[:2] / md5[2:]).unlink()
    pulled = dvc(clone, env, "pull", "models/model.pt")
    assert pulled.returncode == 0, pulled.stderr
    assert model.read_bytes() == original


@pytest.mark.slow
def test_second_run_with_nothing_changed_does_no_stage_work(first_run: State, project: Path, env: dict) -> None:
    lock, files = (project / "dvc.lock").read_text(), tree_state(project)
    state = run(project)
    assert state.is_completed(), state.message
    report = state.result()
    assert [s.stage for s in report.stages] == stage_names(project)
    assert report.ran == []
    assert (project / "dvc.lock").read_text() == lock
    assert tree_state(project) == files
    found = artifacts(state)  # gates are published on every run, from their current reports
    assert all(f"gate-{g}" in found for g in GATES)
    assert all(r["result"] == "PASSED" and not r["from this run"] for r in table(found["gates"]))


@pytest.mark.slow
def test_corrupted_raw_file_fails_validate_gate_and_flow_run(own_copy: Path, env: dict) -> None:
    project = own_copy
    raw = project / "data/raw/train.en.gz"
    original, lock = raw.read_bytes(), (project / "dvc.lock").read_text()
    built = ("data/validated", "data/tokens", "data/vocab", "models")
    outputs = tree_state(project, *built)
    lines = gzip.decompress(original).splitlines(keepends=True)
    raw.write_bytes(gzip.compress(b"".join(lines[:-1])))  # one English training sentence lost
    try:
        # from validate on: the download stage would restore the file (its checksum no longer matches)
        state = run(project, stages=["validate", "tokenize"], push=False)
    finally:
        raw.write_bytes(original)
    assert state.is_failed()
    assert "stage 'validate' failed: raw gate failed: train: aligned" in state.message
    assert "28999 lines" in state.message
    assert task_run_names(state.state_details.flow_run_id) == ["validate"]  # tokenize never started
    found = artifacts(state)
    assert found["gate-raw"].data.startswith("# Gate `raw`: FAILED")
    raw_row = {r["gate"]: r for r in table(found["gates"])}["raw"]
    assert raw_row["result"] == "FAILED" and raw_row["from this run"]  # this run's failure, not a stale report
    assert found["pipeline-summary"].data.startswith("# nmt pipeline: FAILED")
    assert (project / "dvc.lock").read_text() == lock
    assert tree_state(project, *built) == outputs  # the gate kept the last good outputs


@pytest.mark.slow
def test_params_override_reaches_the_stage_and_is_taken_back(own_copy: Path, env: dict) -> None:
    project = own_copy
    params_file, lock = project / "params.yaml", project / "dvc.lock"
    before = params_file.read_bytes(), lock.read_bytes()
    state = run(project, stages=["validate"], params={"validate.min_train_pairs": 10**6}, push=False)
    assert state.is_failed()
    assert "raw gate failed: train: pairs" in state.message  # the stage read the override
    assert (params_file.read_bytes(), lock.read_bytes()) == before  # and params.yaml is as before the run


def test_second_run_is_rejected_while_another_holds_the_pipeline(harness: None, tmp_path: Path) -> None:
    project = build_tiny_project(tmp_path / "tiny", project_env(), tmp_path / "remote")
    fc.ensure_pipeline_limit()
    with concurrency(fc.PIPELINE_LIMIT, occupy=1, strict=True):  # a run in progress
        state = run(project, lock_timeout_s=1)
    assert state.is_failed()
    assert f"another nmt pipeline run holds the Prefect concurrency limit '{fc.PIPELINE_LIMIT}'" in state.message
    assert task_run_names(state.state_details.flow_run_id) == []
    assert not (project / "dvc.lock").exists()  # no stage ran


def test_unknown_stage_fails_the_run_naming_the_stages(harness: None) -> None:
    state = pl.pipeline(stages=["donwload"], project_dir=str(ROOT), return_state=True)
    assert state.is_failed()
    assert "unknown stage(s) 'donwload'; dvc.yaml has: download, validate" in state.message


# --- helpers ----------------------------------------------------------------------------------------


def test_stages_are_read_in_file_order_with_their_files(tmp_path: Path) -> None:
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n"
        "  zeta: {cmd: a, outs: [out/z, {rep/z.md: {cache: false}}], metrics: [{rep/z.json: {cache: false}}]}\n"
        "  alpha: {cmd: b, deps: [out/z], plots: [rep/plot.csv]}\n")
    specs = dp.read_stages(tmp_path)
    assert [s.name for s in specs] == ["zeta", "alpha"]
    assert specs[0].outputs == ("out/z", "rep/z.md", "rep/z.json") and specs[0].metrics == ("rep/z.json",)
    assert specs[1].outputs == ("rep/plot.csv",)
    assert [s.name for s in dp.select_stages(specs, ["alpha", "zeta"])] == ["zeta", "alpha"]
    with pytest.raises(dp.PipelineError, match="dvc.yaml has: zeta, alpha"):
        dp.select_stages(specs, ["beta"])


def test_not_a_project_is_an_error_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(dp.PipelineError, match=f"{tmp_path}/dvc.yaml: not found"):
        dp.resolve_project(tmp_path)


def test_param_overrides_keep_comments_and_reject_unknown_keys(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("# top comment\ntrain:\n  max_steps: null   # cap\n  lr_factor: 0.7\n")
    assert dp.apply_param_overrides(path, {"train.max_steps": 100}) == {"train.max_steps": 100}
    text = path.read_text()
    assert text.startswith("# top comment\ntrain:\n") and text.endswith("  lr_factor: 0.7\n")
    assert re.search(r"^  max_steps: 100 +# cap$", text, re.MULTILINE)
    with pytest.raises(dp.PipelineError, match=r"has no key 'max_step' there \(known keys: max_steps, lr_factor\)"):
        dp.apply_param_overrides(path, {"train.max_step": 5})
    with pytest.raises(dp.PipelineError, match="has no 'trian' under the top level"):
        dp.apply_param_overrides(path, {"trian.max_steps": 5})
    assert "max_steps: 100" in path.read_text()


def test_an_experiment_keeps_the_run_files_git_should_track(tmp_path: Path) -> None:
    """dvc.lock, DVC's .gitignore files and declared git-tracked outputs; not stray files."""
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for rel in ("dvc.lock", "data/.gitignore", "reports/metrics.json", "reports/attention/a.html", "notes.txt",
                "reports/other.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    specs = [dp.StageSpec("evaluate", ("reports/attention", "reports/metrics.json"), ("reports/metrics.json",))]
    assert sorted(dp.run_files(tmp_path, specs)) == ["data/.gitignore", "dvc.lock", "reports/attention/a.html",
                                                     "reports/metrics.json"]


def test_snapshot_and_restore_take_a_run_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """params.yaml, dvc.lock and the uncached outputs come back as they were; new ones go."""
    (tmp_path / ".dvc").mkdir()
    (tmp_path / "params.yaml").write_text("train: {epochs: 3}\n")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "epoch-1.pt").write_bytes(b"old")
    specs = [dp.StageSpec("train", ("ckpt", "report.md", "model.pt"), (), ("ckpt", "report.md"))]
    saved = dp.snapshot(tmp_path, specs)
    (tmp_path / "params.yaml").write_text("train: {epochs: 9}\n")
    (tmp_path / "dvc.lock").write_text("lock of the override run\n")
    (tmp_path / "ckpt" / "epoch-1.pt").write_bytes(b"new")
    (tmp_path / "ckpt" / "epoch-2.pt").write_bytes(b"new")
    (tmp_path / "report.md").write_text("override run\n")
    calls = []
    monkeypatch.setattr(dp, "run_dvc", lambda project, args, logger: calls.append(args) or (0, []))
    dp.restore(tmp_path, saved, logging.getLogger("test"))
    assert (tmp_path / "params.yaml").read_text() == "train: {epochs: 3}\n"
    assert not (tmp_path / "dvc.lock").exists() and not (tmp_path / "report.md").exists()
    assert [p.name for p in (tmp_path / "ckpt").iterdir()] == ["epoch-1.pt"]
    assert (tmp_path / "ckpt" / "epoch-1.pt").read_bytes() == b"old"
    assert calls == [["checkout", "--force", "--quiet"]] and not saved.root.exists()
    # a run killed before its restore: the next run's recover() takes it back
    dp.snapshot(tmp_path, specs)
    (tmp_path / "params.yaml").write_text("train: {epochs: 9}\n")
    assert dp.recover(tmp_path, logging.getLogger("test"))
    assert (tmp_path / "params.yaml").read_text() == "train: {epochs: 3}\n"
    assert not dp.recover(tmp_path, logging.getLogger("test"))  # nothing left to take back


def test_alerts_need_a_real_server(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows import alerts

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    with temporary_settings(restore_defaults={PREFECT_API_URL}):  # not the test harness's server either
        assert alerts.main(["--webhook-url", "https://example.invalid/hook"]) == 2
    assert "PREFECT_API_URL is not set" in capsys.readouterr().err


def test_only_the_download_task_retries() -> None:
    retries = {spec.name: pl.stage_task(spec.name).retries for spec in dp.read_stages(ROOT)}  # every stage
    assert retries.pop("download") == pl.DOWNLOAD_RETRIES > 0
    assert retries and retries == dict.fromkeys(retries, 0), retries


def test_failure_message_prefers_the_stage_error_over_dvc() -> None:
    lines = ["Running stage 'validate':", "> nmt validate ...",
             "nmt validate: error: raw gate failed: train: aligned: 2 vs 3 lines",
             "ERROR: failed to reproduce 'validate': failed to run: nmt validate, exited with 1"]
    assert dp.failure_message(lines) == "raw gate failed: train: aligned: 2 vs 3 lines"
    assert dp.failure_message(lines[-1:]).startswith("failed to reproduce 'validate'")
    assert dp.stage_ran(lines, "validate") and not dp.stage_ran(["Stage 'validate' didn't change, skipping"],
                                                                "validate")


def test_summary_rounds_numbers_and_table_cells_stay_short() -> None:
    """The run summary printed val_bleu with 14 decimals; a long gate finding was one
    endless table cell."""
    spec = dp.StageSpec("evaluate", (), ("reports/metrics.json",))
    report = fa.PipelineReport(project="/p", stages=[fa.StageResult("evaluate", True, 12.345)])
    rows = [{"stage": "evaluate", "file": "reports/metrics.json", "metric": "test.sacrebleu", "value": 38.35123456789},
            {"stage": "train", "file": "reports/train/live/metrics.json", "metric": "val_bleu",
             "value": 37.70172926734491}]
    md = fa.summary_markdown(report, [spec], [], rows, None)
    assert "test.sacrebleu: 38.35\n" in md and "val_bleu: 37.7\n" in md and "| evaluate | ran | 12.3 |" in md
    assert len(fa._cell("x" * 5000)) == fa.CELL_CHARS and fa._cell("short") == "short"


# a data stage whose pool outlives it (a worker holding its stdout open), killed (the OOM killer) or stuck
DYING_STAGE = """import os, signal, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # a pool worker that lives on
if sys.argv[1] == "killed":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(60)
"""


@pytest.mark.fault
@pytest.mark.parametrize("mode,message", [
    ("killed", "stage 'tokenize' failed: killed by SIGKILL (out of memory?): failed to reproduce 'tokenize': "),
    ("stuck", "stage 'tokenize' failed: dvc repro --single-item tokenize timed out after 3 s (NMT_STAGE_TIMEOUT_S)"),
], ids=["killed", "stuck"])
def test_a_killed_or_stuck_stage_fails_the_run_within_seconds(mode: str, message: str, harness: None, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """An OOM-killed data stage whose pool lived on hung the run for ever (no alert): the task read DVC's
    output to its end, and had no timeout."""
    import subprocess
    import time

    project = tmp_path / "dying"
    project.mkdir()
    (project / "stage.py").write_text(DYING_STAGE)
    (project / "dvc.yaml").write_text(f"stages:\n  tokenize:\n    cmd: python stage.py {mode}\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    commit_project(project, project_env())
    monkeypatch.setenv(dp.TIMEOUT_ENV, "3")
    started = time.monotonic()
    state = run(project, push=False, registry=False)
    assert time.monotonic() - started < 30
    assert state.is_failed()
    assert message in state.message  # the alert's reason (flows/alerts.py)


def test_a_stage_task_has_a_timeout_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behind run_dvc's own (which stops the stage and says so): a Prefect task timeout."""
    monkeypatch.setenv(dp.TIMEOUT_ENV, "3600")
    assert pl.stage_task("train").timeout_seconds == 3600 + pl.TASK_TIMEOUT_MARGIN_S
    monkeypatch.delenv(dp.TIMEOUT_ENV)
    assert pl.stage_task("tokenize").timeout_seconds == dp.TIMEOUT_S + pl.TASK_TIMEOUT_MARGIN_S > dp.STOP_GRACE_S
