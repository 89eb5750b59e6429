"""The model lifecycle against a real Prefect server on 127.0.0.1.

On a scratch copy of the project with the smoke model (tests/support/smoke_params.yaml):
(a) the first run registers v0.0.1 and puts it at `prod`; (b) a better model (v0.0.2) is
promoted; (c) a run with params that make a worse model registers v0.0.3, leaves `prod` alone,
ends `Completed` in the state `Not promoted` with a `promotion` artifact that says why (promotion
by evidence: both ONNX packages decoded the test set side by side, the champion's from the DVC
cache), and the alert automation's webhook hears of it; (d) params.yaml is as committed after the
runs with overrides, and `dvc exp show` lists every run; (e) a second clone fetches the ONNX
package at `prod` with the one command of docs/lifecycle.md and translates with it. A failed run calls
the webhook too (a two-stage project, to keep that part quick).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import HTTPServer
from pathlib import Path

import pytest
import yaml

from support.prefect_server import running_server
from support.scratch import (
    BIN,
    GIT,
    build_project,
    build_tiny_project,
    commit_project,
    dvc,
    isolate_prefect,
    project_env,
)
from support.webhook import Hook, heard

isolate_prefect()  # before prefect is imported

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
from prefect.settings import PREFECT_API_URL, temporary_settings

from flows import pipeline as pl
from flows.gto_registry import Registry

pytestmark = [pytest.mark.slow, pytest.mark.network]

ALERT_WAIT_S = 90


@pytest.fixture(scope="module")
def webhook() -> Iterator[str]:
    httpd = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/alert"
    httpd.shutdown()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, webhook: str) -> Iterator[dict[str, str]]:
    """The server, with the alert automation installed by the command in docs/lifecycle.md."""
    with running_server(tmp_path_factory.mktemp("prefect-server-home")) as env:
        result = subprocess.run([sys.executable, "-m", "flows.alerts", "--webhook-url", webhook,
                                 "--allow-private-urls"], env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        with temporary_settings({PREFECT_API_URL: env["PREFECT_API_URL"]}):
            yield env



def artifacts(state) -> dict[str, object]:
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])))
    return {a.key: a for a in found if a.key}


def test_failed_run_calls_the_webhook(server: dict[str, str], tmp_path: Path, monkeypatch) -> None:
    project = build_tiny_project(tmp_path / "tiny", project_env(), tmp_path / "remote")
    (project / "params.yaml").write_text("prepare:\n  lines: many\n")  # prepare.py cannot range() a string
    state = pl.pipeline(project_dir=str(project), push=False, return_state=True)
    assert state.is_failed()
    message = heard(f"{_run_name(state)}: Failed", ALERT_WAIT_S)
    assert "stage 'prepare' failed" in message


def _run_name(state) -> str:
    with get_client(sync_client=True) as client:
        return client.read_flow_run(state.state_details.flow_run_id).name


# The smoke model scores sacreBLEU 0 at its 25 updates (so does any run of it): the better challenger
# trains long enough to score a few BLEU, at a learning rate it does not collapse at (measured on val:
# 300 updates at lr_factor 1.0 -> 0.0; at 0.3 with 50 warm-up updates -> 4.2, in about 30 s). The
# first model and the worse challenger stay near 0 at a few dozen updates (training is most of this
# test's time: 370 updates in all). Where the comparisons come from: those figures were measured on one
# host, and each host trains its own models (in fp32 here, as on every host: auto trains in bf16 on CPUs
# with AVX512-BF16 or AMX only); what is asserted is an order between a model of 300 updates and models
# of 30 and 40, several BLEU apart, not a measured value, and the champion's own score read twice.
LEARNS = {"max_steps": 30, "epochs": 3, "lr_factor": 0.3, "warmup": 50,  # an epoch is ~280 updates
          "precision": "fp32"}
BETTER, WORSE = 300, 40  # updates of the challengers
# Sentences/s of two tiny models on a shared 2-core test machine vary by more than the real budget
# allows: here the speed budget only stops a challenger at half the champion's speed (its own tests:
# test_promotion.py).
MIN_SPEED_RATIO = 0.5


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> Path:
    root = build_project(tmp_path_factory.mktemp("lifecycle"))
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["train"].update(LEARNS)
    params["promote"]["min_speed_ratio"] = MIN_SPEED_RATIO
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    commit_project(root, project_env(mirror), remote=True)  # the repository's `.dvcstore` remote
    return root


def test_champion_challenger_lifecycle(server: dict[str, str], project: Path, mirror: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NMT_DATA_MIRROR", str(mirror))
    committed_params = (project / "params.yaml").read_bytes()
    registry = Registry(project)

    # (a) the first model goes to prod
    first = pl.pipeline(project_dir=str(project), experiment="first", return_state=True)
    assert first.is_completed() and first.name == "Completed", first.message
    assert registry.prod()[0] == "v0.0.1"
    assert "first model" in (project / "reports/promotion.md").read_text()
    lock_after_first = (project / "dvc.lock").read_bytes()
    bleu_first = json.loads((project / "reports/metrics.json").read_text())["test_2016_flickr"]["sacrebleu"]

    # (b) a better model takes prod
    better = pl.pipeline(project_dir=str(project), experiment="better", params={"train.max_steps": BETTER},
                         return_state=True)
    assert better.is_completed() and better.name == "Completed", better.message
    assert registry.prod()[0] == "v0.0.2"
    (row,) = json.loads(artifacts(better)["promotion"].data)
    assert row["verdict"] != "significantly worse" and row["speed ratio"] >= MIN_SPEED_RATIO
    assert row["challenger (v0.0.2) sacreBLEU"] > row["champion (v0.0.1) sacreBLEU"]
    assert abs(row["champion (v0.0.1) sacreBLEU"] - bleu_first) < 1.0  # its ONNX package, decoded again
    bleu_better = row["challenger (v0.0.2) sacreBLEU"]
    assert (project / "params.yaml").read_bytes() == committed_params

    # (c) a worse model: registered, not promoted, a completed run that says why, and an alert
    worse = pl.pipeline(project_dir=str(project), experiment="worse", params={"train.max_steps": WORSE},
                        return_state=True)
    assert worse.is_completed() and worse.name == pl.NOT_PROMOTED, worse
    assert "v0.0.3 not promoted: significantly worse on test_2016_flickr (sacreBLEU -" in worse.message
    assert registry.versions() == ["v0.0.1", "v0.0.2", "v0.0.3"] and registry.prod()[0] == "v0.0.2"
    found = artifacts(worse)
    assert "NOT PROMOTED" in found["promotion"].description
    (row,) = json.loads(found["promotion"].data)  # the evidence on the one test set
    assert row["test set"] == "test_2016_flickr" and row["verdict"] == "significantly worse"
    assert row["champion (v0.0.2) sacreBLEU"] > row["challenger (v0.0.3) sacreBLEU"] and row["95% high"] < 0
    assert row["champion (v0.0.2) sacreBLEU"] == bleu_better  # the champion's package fetched from the cache
    assert "**not promoted**" in found["promotion-decision"].data
    record = json.loads((project / "reports/promotion/nmt-de-en.json").read_text())
    assert record["rule"] == "evidence" and record["evidence"]["speed_ratio"] > 0
    assert pl.NOT_PROMOTED in heard(f"{_run_name(worse)}: {pl.NOT_PROMOTED}", ALERT_WAIT_S)
    # the overrides were the experiments' only: params.yaml, dvc.lock and outputs as before
    assert (project / "params.yaml").read_bytes() == committed_params
    assert (project / "dvc.lock").read_bytes() == lock_after_first
    assert dvc(project, project_env(mirror), "status", "--quiet").returncode == 0  # outputs match dvc.lock

    # (d) every run is a DVC experiment with its params and BLEU
    shown = dvc(project, project_env(mirror), "exp", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    names = {exp["name"] for base in json.loads(shown.stdout) for run in base.get("experiments") or []
             for exp in run["revs"]}
    assert {"first", "worse", "better"} <= names

    # (e) a second clone fetches the package at prod (docs/lifecycle.md) and translates with it
    clone = tmp_path / "clone"
    subprocess.run([*GIT, "clone", "-q", str(project), str(clone)], check=True)
    got = subprocess.run([str(BIN / "dvc"), "artifacts", "get", str(project), "nmt-de-en-onnx", "--stage", "prod",
                          "-o", "nmt-onnx"], cwd=clone, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    card = json.loads((clone / "nmt-onnx/model.json").read_text())
    assert card["source"]["final_weights"]["step"] == BETTER  # v0.0.2's model, not the workspace's
    out = subprocess.run([sys.executable, "-m", "nmt.cli", "translate", "--model", str(clone / "nmt-onnx"),
                          "--beam-size", "1"], input="Ein Mann fährt Fahrrad.\nZwei Hunde spielen im Schnee.\n",
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert len(out.stdout.splitlines()) == 2 and all(line.strip() for line in out.stdout.splitlines())
