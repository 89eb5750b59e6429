"""The weekly deployment against a real Prefect server on 127.0.0.1 (SQLite, private home).

Follows docs/lifecycle.md: create the process work pool, `prefect deploy --all` from a copy of
the repository's prefect.yaml and flows/ (as on a fresh clone), read the deployment back
(cron schedule, pool, one-run concurrency limit, code location; the drift check's daily one
beside it), trigger a run and execute
it with `python -m prefect flow-run execute` (what a worker does, without polling), then
check it ended Completed with its artifacts and pushed outputs. The run points the flow at
a two-stage DVC project so that this test is about the deployment, not the stages.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from support.prefect_server import prefect_cli, running_server
from support.scratch import ROOT, build_tiny_project, isolate_prefect, project_env

isolate_prefect()  # before prefect is imported

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
from prefect.deployments import run_deployment
from prefect.settings import PREFECT_API_URL, temporary_settings

pytestmark = [pytest.mark.slow, pytest.mark.network]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with running_server(tmp_path_factory.mktemp("prefect-server-home")) as env:
        yield env


def test_weekly_deployment_applies_and_a_triggered_run_completes(server: dict[str, str], tmp_path: Path) -> None:
    clone = tmp_path / "clone"  # what a fresh clone has for Prefect
    clone.mkdir()
    shutil.copy(ROOT / "prefect.yaml", clone / "prefect.yaml")
    shutil.copytree(ROOT / "flows", clone / "flows", ignore=shutil.ignore_patterns("__pycache__"))
    spec, drift_spec = yaml.safe_load((clone / "prefect.yaml").read_text())["deployments"]
    pool, name = spec["work_pool"]["name"], f"nmt-pipeline/{spec['name']}"

    prefect_cli(server, clone, "work-pool", "create", pool, "--type", "process")
    prefect_cli(server, clone, "--no-prompt", "deploy", "--all")

    project = build_tiny_project(tmp_path / "project", project_env(), tmp_path / "remote")
    with temporary_settings({PREFECT_API_URL: server["PREFECT_API_URL"]}):
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment_by_name(name)
            drift = client.read_deployment_by_name(f"nmt-drift/{drift_spec['name']}")  # the drift check, daily
        assert [(s.schedule.cron, s.schedule.timezone, s.active) for s in deployment.schedules] == \
            [(s["cron"], s["timezone"], True) for s in spec["schedules"]]
        assert deployment.work_pool_name == pool
        assert [(s.schedule.cron, s.active) for s in drift.schedules] == [(drift_spec["schedules"][0]["cron"], True)]
        assert drift.work_pool_name == pool and drift.parameters == drift_spec["parameters"]
        assert deployment.global_concurrency_limit is not None
        assert deployment.global_concurrency_limit.limit == spec["concurrency_limit"]["limit"] == 1
        (step,) = deployment.pull_steps
        assert Path(step["prefect.deployments.steps.set_working_directory"]["directory"]).resolve() == clone.resolve()

        run = run_deployment(name, parameters={"project_dir": str(project)}, timeout=0)
        assert run.state is not None and run.state.is_scheduled()

    prefect_cli(server, tmp_path, "flow-run", "execute", str(run.id))

    with temporary_settings({PREFECT_API_URL: server["PREFECT_API_URL"]}), get_client(sync_client=True) as client:
        finished = client.read_flow_run(run.id)
        found = client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(
            any_=[run.id])))
    assert finished.state is not None and finished.state.is_completed(), finished.state
    metrics = json.loads((project / "reports/metrics.json").read_text())
    table = {r["metric"]: r["value"] for a in found if a.key == "metrics" for r in json.loads(a.data)}
    assert table["test.sacrebleu"] == metrics["test"]["sacrebleu"]
    summary = next(a.data for a in found if a.key == "pipeline-summary")
    assert summary.startswith("# nmt pipeline: COMPLETED") and "test.sacrebleu" in summary

    lock = yaml.safe_load((project / "dvc.lock").read_text())
    md5 = lock["stages"]["prepare"]["outs"][0]["md5"]
    assert (tmp_path / "remote/files/md5" / md5[:2] / md5[2:]).is_file()  # pushed to the project's remote
