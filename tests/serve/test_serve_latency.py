"""bench/serve_latency.py: one client's latency on this checkout's server against an earlier commit's,
side by side. Its summary arithmetic, its refusal of an unknown commit, and a short run (one round of
1 s a side, the test package) against HEAD checked out as a worktree: both sides answer every request.
No figure of this machine's speed is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.serve_latency import summary
from support.corpus import ROOT
from support.onnx import sentences


def _round(before_p50: float, now_p50: float) -> dict:
    return {side: {"latency_ms": {"p50": p50, "p99": 2 * p50}} for side, p50 in (("before", before_p50),
                                                                             ("now", now_p50))}


def test_the_summary_takes_medians_and_calls_a_difference_within_the_spread_noise() -> None:
    got = summary([_round(40.0, 41.0), _round(44.0, 42.0), _round(42.0, 47.0)])
    assert got["sides"]["before"] == {"p50_ms_median": 42.0, "p50_ms_spread": 4.0, "p99_ms_median": 84.0}
    assert got["sides"]["now"]["p50_ms_median"] == 42.0 and got["sides"]["now"]["p50_ms_spread"] == 6.0
    assert got["p50_difference_ms"] == 0.0 and got["noise_ms"] == 6.0 and got["within_noise"] is True
    slower = summary([_round(40.0, 50.0), _round(41.0, 51.0)])
    assert slower["p50_difference_ms"] == 10.0 and slower["noise_ms"] == 1.0 and slower["within_noise"] is False
    assert slower["p50_ratio"] == round(50.5 / 40.5, 3)


def test_an_unknown_commit_is_refused_by_name(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "bench.serve_latency", "--against", "no-such-rev-0000",
                          "--data", str(tmp_path), "--model", str(tmp_path), "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "Traceback" not in run.stderr
    assert "model.json" in run.stderr or "no-such-rev-0000" in run.stderr


@pytest.mark.network
@pytest.mark.slow
def test_a_short_side_by_side_run_against_head_answers_every_request(package: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for lang in ("de", "en"):
        (data / f"test.{lang}").write_text("\n".join(sentences(50, seed=3)) + "\n")
    run = subprocess.run([sys.executable, "-m", "bench.serve_latency", "--against", "HEAD", "--model", str(package),
                          "--data", str(data), "--split", "test", "--threads", "1", "--rounds", "1",
                          "--step-s", "1", "--out", str(tmp_path)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads((tmp_path / "serve_latency.json").read_text())["results"]
    (only,) = result["rounds"]
    for side in ("before", "now"):
        assert only[side]["requests"] > 0 and set(only[side]["statuses"]) == {"200"}
    assert result["noise_ms"] == 0.0  # one round: no spread to measure
    assert not any(p.name.startswith("checkout-") for p in tmp_path.iterdir())  # the worktree is gone
