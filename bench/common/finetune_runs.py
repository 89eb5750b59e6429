"""finetune/dvc.yaml's own stage commands, run again with a changed params copy into a scratch folder
(the replay bench and the schedule sweep): the pipeline's outputs are never touched."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common.children import die_with_parent

# a stage's output arguments -> where they go inside the scratch folder
OUTPUTS = {"--checkpoints": "checkpoints", "--model": "model.pt", "--reports": "reports",
           "--train-reports": "train", "--gates": "reports/validation", "--curves": "train/curves.png"}


def stage_command(dvcfile: Path, stage: str, key: str) -> list[str]:
    """`stage`'s command for the foreach entry `key`, its ${key} and ${item.NAME} filled in."""
    stages = yaml.safe_load(dvcfile.read_text(encoding="utf-8"))["stages"]
    if stage not in stages:
        raise SystemExit(f"{dvcfile} has no stage {stage!r}")
    each, body = stages[stage]["foreach"], stages[stage]["do"]
    if key not in each:
        raise SystemExit(f"{dvcfile}: no fine-tune {key!r}; the fine-tunes are {', '.join(each)}")
    item = each[key]
    cmd = re.sub(r"\$\{item\.(\w+)\}", lambda m: str(item[m.group(1)]), body["cmd"].replace("${key}", key))
    return shlex.split(cmd)


def arg_of(argv: list[str], name: str) -> str:
    """The value of `name` (e.g. --params) in a stage command."""
    if name not in argv[:-1]:
        raise SystemExit(f"{' '.join(argv[:4])} ... has no {name}")
    return argv[argv.index(name) + 1]


def redirect(argv: list[str], params: Path, work: Path) -> list[str]:
    """`argv` with its params file and its outputs moved into `work` (inputs kept)."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--params":
            out[i + 1] = str(params)
        elif arg in OUTPUTS:
            out[i + 1] = str(work / OUTPUTS[arg])
    return out


def params_copy(params_file: Path, changes: dict[str, Any], work: Path) -> Path:
    """`params_file` with `changes` ("section.key" -> value) applied, written as work/params.yaml."""
    params = yaml.safe_load(params_file.read_text(encoding="utf-8"))
    for dotted, value in changes.items():
        section, _, key = dotted.partition(".")
        if section not in params or not key or key not in params[section]:
            raise SystemExit(f"{params_file} has no {dotted!r} to change")
        params[section][key] = value
    work.mkdir(parents=True, exist_ok=True)
    copy = work / "params.yaml"
    copy.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return copy


def run(argv: list[str], cwd: Path) -> float:
    """Run a stage command (its `python` is this interpreter) in `cwd`; its seconds, or exit with its error. The
    command ends with this process (a killed sweep leaves no training behind)."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv[1:]], cwd=cwd, capture_output=True, text=True, check=False,
                          preexec_fn=die_with_parent)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - started
