"""Where a bench's numbers come from, and the JSON file they go to.

Every bench ends with `write_result(name, results, ...)`: `bench/results/<name>.json` gets the
measurements with the machine they were taken on (CPU model, cores, the instruction-set flags
that change kernel choice), the versions of the engines involved, the date, the command line
(`python -m bench.<name> ...` for a bench run as a module, its arguments shell-quoted) and the
number of repeats. The README and docs quote these files through `python -m tools.publish.stage`
(generated blocks), so a figure there always has a committed source. Standard library only:
a bench child that must not import torch can import this.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import subprocess
import sys
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
# CPU flags that decide which kernels torch, ONNX Runtime and CTranslate2 pick.
FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_bf16",
         "amx_int8", "asimd", "sve")
PACKAGES = ("torch", "onnxruntime", "onnxruntime-gpu", "ctranslate2", "numpy", "spacy", "sentencepiece",
            "sacrebleu")


def cpu() -> dict[str, Any]:
    """CPU model, family/model numbers, cores usable by this process, and the relevant flags."""
    info: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    flags = set(info.get("flags", info.get("Features", "")).split())
    return {"model": info.get("model name") or platform.processor() or platform.machine(),
            "family": info.get("cpu family"), "model_number": info.get("model"),
            "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
            "flags": [f for f in FLAGS if f in flags]}


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def versions(packages: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    found = {}
    for name in packages:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            pass
    return found


def commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def command() -> str:
    """This process's command line as it can be typed again: `python -m <module> ...` when it was run
    with -m (every bench: `python -m bench.<name>`), else `python <script> ...` (relative to the
    repository when inside it)."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is not None and spec.name:
        head = ["python", "-m", spec.name.removesuffix(".__main__")]
    else:
        script = Path(sys.argv[0]).resolve()
        head = ["python", script.relative_to(ROOT).as_posix() if script.is_relative_to(ROOT) else sys.argv[0]]
    return shlex.join([*head, *sys.argv[1:]])


def environment(repeats: int) -> dict[str, Any]:
    """Everything a reader needs to know where and how a result was measured."""
    return {"date": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": command(),
            "repeats": repeats, "commit": commit(),
            "machine": {"cpu": cpu(), "memory_gib": memory_gib(), "platform": platform.platform(),
                        "python": platform.python_version()},
            "versions": versions()}


def write_result(name: str, results: dict[str, Any], repeats: int, out_dir: Path = RESULTS) -> Path:
    """Write `<out_dir>/<name>.json` (via a temporary file, so a failed write leaves the old one)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"bench": name, **environment(repeats), "results": results}, indent=1) + "\n",
                   encoding="utf-8")
    tmp.replace(path)
    print(f"results written to {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return path
