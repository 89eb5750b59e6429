"""The load test's smoke version (`bench/serve_load.py --smoke`, a minute or so) on the test package:
it runs every step, and its ratios say the server batches, stays correct, drains and reloads.
Ratios only: no figure of this machine's speed is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.corpus import ROOT
from support.onnx import sentences

pytestmark = [pytest.mark.network, pytest.mark.slow]


def test_the_smoke_load_test_batches_and_loses_nothing(package: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    lines = sentences(200, seed=7)
    for lang in ("de", "en"):
        (data / f"test.{lang}").write_text("\n".join(lines) + "\n")
    run = subprocess.run([sys.executable, "-m", "bench.serve_load", "--smoke", "--model", str(package),
                          "--data", str(data), "--split", "test", "--threads", "1", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads((tmp_path / "serve.json").read_text())
    assert result["bench"] == "serve" and result["results"]["smoke"] is True
    res, c = result["results"], result["results"]["criteria"]
    steps = {s["step"]: s for s in res["steps"]}
    assert set(steps) >= {"1 client", "8 clients", "32 clients", "bulk 32 texts", "open loop 0.5x", "open loop 2x",
                          "soak"}
    assert c["parity_identical"] == 1.0 and res["parity"]["failed"] == 0  # fp32: served == offline
    assert c["mean_batch_32_clients"] >= 4 * steps["1 client"]["mean_batch"]  # concurrent sentences share batches
    assert steps["32 clients"]["sentences_per_s"] > 2 * steps["1 client"]["sentences_per_s"]
    assert c["sigterm_failed"] == 0 and c["sigterm_exit_code"] == 0 and res["sigterm"]["answered_200"] > 0
    assert c["reload_failed"] == 0 and c["reload_after_switch_from_new"] == 1.0
    assert c["other_5xx_2x"] == 0 and c["soak_errors"] == 0
    assert c["slowloris_held_closed"] == 1.0 and c["slowloris_other_than_200"] == 0  # held heads closed, clients served
    assert steps["slowloris"]["sentences_per_s"] > 0 and steps["slowloris"]["held"]["held"] == 20
    for step in res["steps"]:
        assert set(step["statuses"]) <= {"200", "503"}, step
