"""Promotion by evidence in a pipeline flow run against a real Prefect server on 127.0.0.1.

A scratch DVC project whose one stage puts an ONNX package in place (models/onnx, the dvc.yaml
artifact `nmt-de-en-onnx`) and writes the same metrics whatever the package: the first run's
package (the `package` fixture: the tiny copy-task model) becomes v0.0.1 at `prod`; a second run
puts a deliberately degraded copy of it (its target vocabulary rotated: every output symbol is
the wrong one, the work per sentence the same) and must be refused on the evidence, which the
point-score rule, seeing equal metrics, would not do. The champion's package comes from the DVC
cache at its commit and both decode the test set side by side; the record (intervals, speeds)
lands in reports/promotion/ and, as Markdown and a table, in the run's Prefect artifacts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from support.onnx import sentences
from support.prefect_server import running_server
from support.scratch import ROOT, commit_project, isolate_prefect, project_env

isolate_prefect()  # before prefect is imported

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId
from prefect.settings import PREFECT_API_URL, temporary_settings

from flows import pipeline as pl
from flows.gto_registry import Registry
from nmt.runtime.package import write_card

pytestmark = [pytest.mark.slow, pytest.mark.network]

DVC_YAML = """artifacts:
  nmt-de-en-onnx: {path: models/onnx, type: model}
stages:
  package:
    cmd: python package.py
    deps: [package.py, packages]
    params: [package.variant]
    outs: [models/onnx]
    metrics:
      - reports/metrics.json:
          cache: false
"""
PACKAGE_PY = """\
import json, pathlib, shutil, yaml
variant = yaml.safe_load(open("params.yaml"))["package"]["variant"]
shutil.rmtree("models/onnx", ignore_errors=True)
shutil.copytree(f"packages/{variant}", "models/onnx")
pathlib.Path("reports").mkdir(exist_ok=True)
pathlib.Path("reports/metrics.json").write_text(json.dumps({"test": {"sacrebleu": 50.0, "chrf": 70.0}}))
"""
SOURCES = sentences(60, seed=7)  # the copy task: the reference is the source


def degraded(package: Path, dest: Path) -> Path:
    """A copy of `package` whose target vocabulary is rotated by one symbol (card hashes updated)."""
    from nmt.files.digest import sha256_file
    from nmt.text.vocab import Vocabulary

    shutil.copytree(package, dest)
    vocab = dest / "tgt.vocab"
    lines = vocab.read_text(encoding="utf-8").splitlines()
    specials, symbols = lines[:4], lines[4:]
    vocab.write_text("".join(s + "\n" for s in specials + symbols[1:] + symbols[:1]), encoding="utf-8")
    card = json.loads((dest / "model.json").read_text(encoding="utf-8"))
    card["files"]["tgt.vocab"] = sha256_file(vocab)
    card["vocab"]["tgt"]["sha256"] = Vocabulary.load(vocab).sha256
    card["vocab"]["joint"] = False
    write_card(dest, card)  # re-sealed: the card's own digest (issue 80)
    return dest


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with running_server(tmp_path_factory.mktemp("prefect-server-home")) as env:
        with temporary_settings({PREFECT_API_URL: env["PREFECT_API_URL"]}):
            yield env


@pytest.fixture()
def project(tmp_path: Path, package: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "dvc.yaml").write_text(DVC_YAML)
    (root / "package.py").write_text(PACKAGE_PY)
    promote = yaml.safe_load((ROOT / "params.yaml").read_text())["promote"] | {"threads": 1}
    (root / "params.yaml").write_text(yaml.safe_dump({"package": {"variant": "champion"}, "promote": promote}))
    shutil.copytree(package, root / "packages" / "champion")
    degraded(package, root / "packages" / "degraded")
    data = root / "data" / "validated"
    data.mkdir(parents=True)
    for lang in ("de", "en"):
        (data / f"test.{lang}").write_text("".join(line + "\n" for line in SOURCES))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    commit_project(root, project_env())
    return root


def artifacts(state) -> dict[str, object]:
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id])))
    return {a.key: a for a in found if a.key}


def test_a_flow_run_decides_by_evidence_and_records_it(server: dict[str, str], project: Path, package: Path) -> None:
    import sacrebleu

    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    registry = Registry(project)
    first = pl.pipeline(project_dir=str(project), push=False, experiment="champion", return_state=True)
    assert first.is_completed() and first.name == "Completed", first.message
    assert registry.prod()[0] == "v0.0.1"

    worse = pl.pipeline(project_dir=str(project), push=False, experiment="degraded",
                        params={"package.variant": "degraded"}, return_state=True)
    assert worse.is_completed() and worse.name == pl.NOT_PROMOTED, worse
    assert "nmt-de-en-onnx v0.0.2 not promoted: significantly worse on test (sacreBLEU -" in worse.message
    assert registry.versions() == ["v0.0.1", "v0.0.2"] and registry.prod()[0] == "v0.0.1"

    record = json.loads((project / "reports/promotion/nmt-de-en-onnx.json").read_text())
    assert (record["rule"], record["promoted"], record["champion_version"]) == ("evidence", False, "v0.0.1")
    tagged = {v: registry.commit(f"nmt-de-en-onnx@{v}") for v in ("v0.0.1", "v0.0.2")}  # the experiments' commits
    assert (record["champion_commit"], record["commit"]) == (tagged["v0.0.1"], tagged["v0.0.2"])
    evidence = record["evidence"]
    (test,) = evidence["sets"]
    assert test["test_set"] == "test" and test["sentences"] == len(SOURCES) and test["verdict"] == "significantly worse"
    assert test["low"] <= test["difference"] <= test["high"] < 0 and test["holm_p"] < evidence["alpha"]
    assert evidence["champion_sps"] > 0 and evidence["challenger_sps"] > 0
    assert evidence["speed_ratio"] == pytest.approx(evidence["challenger_sps"] / evidence["champion_sps"])
    assert (evidence["resamples"], evidence["seed"]) == (1000, 12345)
    # the champion was decoded again, from its package, as users get it (nmt.translate): its BLEU on the test set
    translator = LocalTranslator.open(package, ModelOptions(device="cpu", threads=1))
    own = sacrebleu.corpus_bleu(translator.translate(SOURCES).texts, [SOURCES]).score
    assert test["champion_bleu"] == pytest.approx(own) and test["challenger_bleu"] < own

    found = artifacts(worse)
    page = (project / "reports/promotion/nmt-de-en-onnx.md").read_text()
    assert found["promotion-decision"].data == page
    assert page.startswith("# nmt-de-en-onnx v0.0.2 against the champion v0.0.1: **not promoted**")
    assert f"| test | {len(SOURCES)} |" in page and "Speed ratio" in page and "Not measured:" in page
    (row,) = json.loads(found["promotion"].data)
    assert row["test set"] == "test" and row["95% low"] == test["low"] and row["95% high"] == test["high"]
    assert row["speed ratio"] == evidence["speed_ratio"] and row["verdict"] == "significantly worse"
