"""The drift check end to end against a real Prefect server on 127.0.0.1.

A real `nmt serve` (in a thread) on the test package keeps its traffic snapshots in `--stats-dir`;
the training data's profile is made by the profile stage's command from Multi30k train and val,
with the same package. Multi30k test sentences sent -> no drift, no alert; too few sentences ->
not enough data, no alert; WMT news sentences -> `pieces` drifts, the run ends `Drifted` and the
alert automation's webhook (installed by `python -m flows.alerts`) hears it; English sent as German,
checked by a run of the prefect.yaml deployment executed as a worker would -> `language` drifts,
the webhook hears it and the retraining deployment gets a run. No sent text is in any snapshot or
report.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import HTTPServer
from pathlib import Path

import httpx
import pytest
import yaml

from support.prefect_server import prefect_cli, running_server
from support.scratch import ROOT, isolate_prefect
from support.serve import ThreadServer, ask, config, post
from support.webhook import Hook, heard

isolate_prefect()  # before prefect is imported

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    DeploymentFilter,
    DeploymentFilterId,
)
from prefect.deployments import run_deployment
from prefect.settings import PREFECT_API_URL, temporary_settings

from flows.drift import DRIFT_EXIT, DRIFTED, NOT_ENOUGH_DATA, drift_check, main, report_paths
from flows.pipeline import pipeline
from nmt.drift.stage import main as profile_main
from nmt.runtime.package import write_card

pytestmark = [pytest.mark.slow, pytest.mark.network]

ALERT_WAIT_S = 90
SENT = 300  # sentences per scenario: above drift.min_sentences (200)
MAX_EXTRA = 8  # the test package's card: 64 positions - 1 - 8 = sources of up to 55 pieces read whole


QUIET: list[str] = []  # flow runs that must call no webhook: checked once later runs' alerts are heard


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A Prefect server with the alert automations installed by the documented command."""
    httpd = HTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    with running_server(tmp_path_factory.mktemp("prefect-server-home")) as env:
        done = subprocess.run([sys.executable, "-m", "flows.alerts", "--webhook-url",
                               f"http://127.0.0.1:{httpd.server_address[1]}/alert", "--allow-private-urls"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "nmt-drift: drifted or failed" in done.stdout
        with temporary_settings({PREFECT_API_URL: env["PREFECT_API_URL"]}):
            yield env
    httpd.shutdown()


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


@pytest.fixture(scope="module")
def served_package(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test package, its card decoding with max_extra 8: at the card's 50 every source would be
    cut to 13 pieces, and captions and news would look alike."""
    out = tmp_path_factory.mktemp("drift-package") / "onnx"
    shutil.copytree(package, out)
    card = json.loads((out / "model.json").read_text())
    card["decoding"]["max_extra"] = MAX_EXTRA
    write_card(out, card)  # re-sealed: the card's own digest (issue 80)
    return out


@pytest.fixture(scope="module")
def project(served_package: Path, mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """params.yaml as committed (the profile's samples smaller) and reports/profile.json from the
    profile stage's command on Multi30k train and val."""
    root = tmp_path_factory.mktemp("drift-project")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["profile"].update(train_sentences=2000, dev_sentences=400, threads=1)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    data = root / "data" / "validated"
    data.mkdir(parents=True)
    for split in ("train", "val"):
        (data / f"{split}.de").write_text("".join(s + "\n" for s in _lines(mirror / f"{split}.de.gz")))
    assert profile_main(["--params", str(root / "params.yaml"), "--package", str(served_package), "--data", str(data),
                         "--out", str(root / "reports" / "profile.json")]) == 0
    return root


def _serve(package: Path, stats: Path, texts: list[str]) -> Path:
    """`texts` sent to a fresh server with --stats-dir (every request's language detected); its last
    snapshot written at shutdown."""
    s = ThreadServer(config(package, stats_dir=stats, detect_sample=1.0))
    try:
        for start in range(0, len(texts), 25):
            assert post(s.url, json=ask(texts[start:start + 25])).status_code == httpx.codes.OK
    finally:
        s.close()
    assert list(stats.glob("traffic-*.json"))
    return stats


@pytest.fixture(scope="module")
def traffic(served_package: Path, mirror: Path,
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[str]]]:
    """Stats folders of four servers (in-domain, too little, news, English sent as German), and what
    each was sent."""
    news_dir = mirror.parent / "wmt-news"
    if not (news_dir / "newstest2014.de-en.de").is_file():
        pytest.skip(f"the WMT news mirror is not beside {mirror}")
    test_de, test_en = _lines(mirror / "test_2016_flickr.de.gz"), _lines(mirror / "test_2016_flickr.en.gz")
    news = [s for s in (news_dir / "newstest2014.de-en.de").read_text().splitlines() if s.strip()]
    texts = {"in-domain": test_de[:SENT], "few": test_de[SENT:SENT + 40], "news": news[:SENT],
             "english": test_en[:SENT]}
    root = tmp_path_factory.mktemp("stats")
    return {name: (_serve(served_package, root / name, sent), sent) for name, sent in texts.items()}



def _run_name(flow_run_id) -> str:
    with get_client(sync_client=True) as client:
        return client.read_flow_run(flow_run_id).name


def _quiet_runs_unheard() -> None:
    """The runs that found no drift (or too little traffic) called no webhook: their final states
    came before the drift heard just now, and the automation acts on events in order."""
    time.sleep(5)
    assert not [m for m in Hook.received for name in QUIET if name in m]


def _verdicts(report: dict) -> dict[str, str]:
    (direction,) = report["directions"]
    assert direction["direction"] == "de-en"
    return {a["name"]: a["status"] for a in direction["aggregates"]}


def _no_text(files: list[Path], sent: list[str]) -> None:
    """None of `sent`, nor any of its words of 8 letters or more, in the files."""
    words = {w for s in sent for w in re.findall(r"[^\W\d_]{8,}", s)}
    for path in files:
        content = path.read_text(encoding="utf-8")
        assert not [s for s in sent if s in content], path
        assert not {w for w in words if re.search(rf"\b{re.escape(w)}\b", content)}, path


def test_in_domain_traffic_is_no_drift_and_too_little_is_not_enough_data(
        server: dict[str, str], project: Path, traffic: dict) -> None:
    stats, sent = traffic["in-domain"]
    state = drift_check(stats_dir=str(stats), project_dir=str(project), return_state=True)
    assert state.is_completed() and state.name == "Completed", state.message
    report = json.loads(report_paths(project)[0].read_text())
    assert report["status"] == "no drift" and set(_verdicts(report).values()) == {"no drift"}, report
    assert report["directions"][0]["sentences"] >= SENT
    _no_text([*stats.glob("*.json"), *report_paths(project)], sent)
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])))
    assert [a.data for a in found if a.key == "drift-report"][0].startswith("# Drift check: no drift")
    QUIET.append(_run_name(state.state_details.flow_run_id))  # checked once the drifts are heard

    stats, _ = traffic["few"]
    state = drift_check(stats_dir=str(stats), project_dir=str(project), return_state=True)
    assert state.is_completed() and state.name == NOT_ENOUGH_DATA, state.message
    report = json.loads(report_paths(project)[0].read_text())
    assert report["status"] == "not enough data" and set(_verdicts(report).values()) == {"not enough data"}
    QUIET.append(_run_name(state.state_details.flow_run_id))


def test_news_drifts_on_lengths_and_the_webhook_hears_it(server: dict[str, str], project: Path,
                                                         traffic: dict, capsys: pytest.CaptureFixture[str]) -> None:
    stats, sent = traffic["news"]
    state = drift_check(stats_dir=str(stats), project_dir=str(project), return_state=True)
    assert state.is_completed() and state.name == DRIFTED, state.message
    report = json.loads(report_paths(project)[0].read_text())
    assert report["status"] == "drift" and _verdicts(report)["pieces"] == "drift"
    assert _verdicts(report)["language"] == "no drift" and report["retrain"] is None  # retraining off by default
    pieces = report["directions"][0]["aggregates"][0]
    assert pieces["psi"] > pieces["threshold"] == 0.2 and pieces["drifted"] is True
    _no_text([*stats.glob("*.json"), *report_paths(project)], sent)
    message = heard(f"{_run_name(state.state_details.flow_run_id)}: {DRIFTED}", ALERT_WAIT_S)
    assert "de-en pieces PSI" in message
    _quiet_runs_unheard()
    # the command line: the same check, exit status 3 on drift
    assert main(["--stats-dir", str(stats), "--project", str(project)]) == DRIFT_EXIT
    assert capsys.readouterr().out.startswith("# Drift check: drift")


def test_english_drifts_on_language_through_the_deployment_which_starts_retraining(
        server: dict[str, str], project: Path, traffic: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # deployments' entrypoints are relative to the working directory
    spec = next(d for d in yaml.safe_load((ROOT / "prefect.yaml").read_text())["deployments"]
                if d["entrypoint"] == "flows/drift.py:drift_check")
    drift_check.to_deployment(spec["name"], cron=spec["schedules"][0]["cron"], parameters=spec["parameters"],
                              tags=spec["tags"]).apply()
    retrain_id = pipeline.to_deployment("test-retrain").apply()
    stats, sent = traffic["english"]
    run = run_deployment(f"nmt-drift/{spec['name']}", timeout=0, parameters={
        "stats_dir": str(stats), "project_dir": str(project), "retrain": True,
        "retrain_deployment": "nmt-pipeline/test-retrain"})
    prefect_cli(server, ROOT, "flow-run", "execute", str(run.id))  # what a worker does

    with get_client(sync_client=True) as client:
        finished = client.read_flow_run(run.id)
        retrains = client.read_flow_runs(deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[retrain_id])))
        deployment = client.read_deployment_by_name(f"nmt-drift/{spec['name']}")
    assert finished.state is not None and finished.state.name == DRIFTED, finished.state
    assert [s.schedule.cron for s in deployment.schedules] == ["0 6 * * *"]
    report = json.loads(report_paths(project)[0].read_text())
    assert _verdicts(report)["language"] == "drift"
    language = report["directions"][0]["aggregates"][3]
    assert language["buckets"][language["shares"].index(max(language["shares"]))] == "en"
    (retrain,) = retrains
    assert report["retrain"]["started"] and report["retrain"]["flow_run_id"] == str(retrain.id)
    assert "drift" in retrain.tags and retrain.state is not None and retrain.state.is_scheduled()
    _no_text([*stats.glob("*.json"), *report_paths(project)], sent)
    message = heard(f"{finished.name}: {DRIFTED}", ALERT_WAIT_S)
    assert "de-en language PSI" in message and "nmt-pipeline/test-retrain" in message
    _quiet_runs_unheard()
