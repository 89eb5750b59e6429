"""Where the test suite ran and how it ended: `pytest --host-record=DIR` writes DIR/<cpu>-<mode>.json.

`.ci/run` passes `--host-record=bench/results/hosts` to `make test` (mode native) and to `make
test-isa` (mode forced: the tests marked isa with a lower instruction set forced, docs/pipeline.md#
other-hosts). The record holds the CPU (vendor, model, family and model numbers, the instruction-set
flags that decide kernels, as bench/common/record.py reads them), the ISA variables set, what torch
dispatched to, the engines' versions, the commit (and how many files differed from it), the pytest
arguments and the outcome counts. A later run on the same CPU in the same mode replaces its record.
The README's "Tested on" block is rendered from the committed records (tools/publish/hosts.py,
`dvc repro publish`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from bench.common.record import ROOT, cpu, environment

# The variables that cap the instruction set a library dispatches to (docs/pipeline.md#other-hosts).
ISA_VARIABLES = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "CT2_FORCE_CPU_ISA",
                 "MKL_ENABLE_INSTRUCTIONS", "MKL_CBWR")
OUTCOMES = ("passed", "failed", "errors", "skipped")


def vendor() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "vendor_id":
                return value.strip()
    except OSError:
        pass
    return None


def torch_capability() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.backends.cpu.get_cpu_capability()


def uncommitted() -> int | None:
    """How many files differ from the commit (git status --porcelain), so a record of a run on a
    working tree with changes says so."""
    try:
        out = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return len(out.stdout.splitlines())


def record(counts: dict[str, int], seconds: float, args: list[str]) -> dict[str, Any]:
    env = environment(repeats=1)
    forced = {name: os.environ[name] for name in ISA_VARIABLES if os.environ.get(name)}
    return {"host": {"cpu": {**cpu(), "vendor": vendor()}, "platform": env["machine"]["platform"],
                     "python": env["machine"]["python"]},
            "mode": "forced" if forced else "native", "isa_variables": forced,
            "torch_cpu_capability": torch_capability(), "command": " ".join(["pytest", *args]),
            "date": env["date"], "commit": env["commit"], "uncommitted_files": uncommitted(),
            "versions": env["versions"],
            "summary": {**{k: counts.get(k, 0) for k in OUTCOMES}, "seconds": round(seconds, 1),
                        "fault": counts.get("fault", {})}}


def write(folder: Path, rec: dict[str, Any]) -> Path:
    """DIR/<cpu>-<mode>.json; a run of the fault tests alone (`-m fault`, `make test-faults`) <cpu>-<mode>-faults."""
    c = rec["host"]["cpu"]
    kind = f"{rec['mode']}-faults" if re.search(r"-m fault\b", rec["command"]) else rec["mode"]
    name = re.sub(r"[^a-z0-9]+", "-", f"{c['vendor'] or 'cpu'} {c['family'] or ''} {c['model_number'] or ''} "
                                      f"{c['model']} {kind}".lower()).strip("-")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(rec, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
