"""bench/hostile.py --smoke on the test package: every hostile input answered, never with a 500."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.corpus import ROOT

pytestmark = pytest.mark.network


def test_the_hostile_inputs_bench_answers_each_input_without_an_error(package: Path, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "bench.hostile", "--smoke", "--model", str(package), "--out",
                          str(tmp_path), "--timeout-s", "60"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    res = json.loads((tmp_path / "hostile.json").read_text())["results"]
    rows = {r["input"]: r for r in res["inputs"]}
    assert len(rows) == 8 and res["criteria"]["no_error"] is True
    assert all(r["status"] in (200, 400, 403, 413, 503, 504) and r["livez_probes"] >= 1 for r in rows.values()), rows
    assert rows["html upload without a key"]["status"] == 403
    assert rows["glossary: 400-word term, 16 x 2,000 words"]["status"] == 400
