"""Scratch projects for end-to-end tests, and a private Prefect home for tests that use Prefect.

`build_project` copies what the pipeline needs (dvc.yaml, .dvcignore, .gitignore, nmt/, params.yaml with
tests/support/smoke_params.yaml merged in: the real data stages and a tiny model) into a folder,
makes it a git repository, and `commit_project` adds DVC and the first commit (DVCLive in
the train stage needs one); `copy_project` gives a test its own copy of a built one.
`build_tiny_project` is a two-stage DVC project that runs in about a second, for tests of the
orchestration rather than of the stages.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost"]

# files the Prefect flows write that the repository's publish stage reads (dvc.yaml): none in a scratch project
FLOW_RECORDS = ("- reports/promotion/nmt-de-en.json", "- reports/drift/latest.json")

_prefect_home: Path | None = None


def isolate_prefect() -> Path:
    """Give this test process a private, throw-away PREFECT_HOME; call before importing prefect.

    Also fixes the settings Prefect needs here (analytics off, 60 s startup timeout) and drops
    any PREFECT_API_URL / profile from the environment, so tests only ever talk to servers
    they start themselves (the harness, or a server on 127.0.0.1).
    """
    global _prefect_home
    if _prefect_home is None:
        _prefect_home = Path(tempfile.mkdtemp(prefix="nmt-test-prefect-"))
        atexit.register(shutil.rmtree, _prefect_home, True)
        for var in ("PREFECT_API_URL", "PREFECT_API_KEY", "PREFECT_PROFILE", "PREFECT_PROFILES_PATH"):
            os.environ.pop(var, None)
        os.environ.update(prefect_settings(_prefect_home))
    return _prefect_home


def prefect_settings(home: Path) -> dict[str, str]:
    """Prefect settings for a test process or a server/CLI subprocess with its own home."""
    return {"PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "60"}


def project_env(mirror: Path | None = None) -> dict[str, str]:
    """The environment for DVC in a scratch project: the venv's bin first, the corpus mirror."""
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env['PATH']}"
    env["DVC_NO_ANALYTICS"] = "1"
    if mirror is not None:
        env["NMT_DATA_MIRROR"] = str(mirror)
    return env


def url_env() -> dict[str, str]:
    """`project_env` without a mirror: a scratch project whose corpora are fetched from their file:// URLs."""
    env = project_env(None)
    env.pop("NMT_DATA_MIRROR", None)
    return env


def repro_project(root: Path, dvcfile: str) -> Path:
    """Commit the scratch project at `root` and `dvc repro` its `dvcfile` (corpora from their URLs); an error
    fails the test with the run's last output."""
    env = url_env()
    commit_project(root, env)
    run = dvc(root, env, "repro", dvcfile)
    assert run.returncode == 0, run.stderr[-3000:] + run.stdout[-3000:]
    return root


def check_directions(project: Path, config: str, test_sets: dict[str, set[str]]) -> None:
    """Each direction of a multi-direction pipeline (models/<config>/<direction>/, ...) trained on its own
    ids, packaged with its languages, scored on its `test_sets`, the two sharing one joint vocabulary."""
    import json

    def read(*parts: str) -> dict:
        return json.loads(project.joinpath(*parts).read_text())

    for direction, sets in test_sets.items():
        src, tgt = direction.split("-")
        assert read("models", config, direction, "onnx", "model.json")["languages"] == {"src": src, "tgt": tgt}
        assert (project / "models" / config / direction / "ct2" / "ctranslate2" / "model.bin").is_file()
        assert set(read("reports", config, direction, "metrics.json")) == sets
        manifest = read("data", config, direction, "bin", "manifest.json")
        assert (manifest["src_lang"], manifest["tgt_lang"]) == (src, tgt)
    bpe = [read("data", config, d, "bin", "manifest.json")["vocab"]["bpe"] for d in test_sets]
    assert all(b == bpe[0] for b in bpe)  # one joint vocabulary


def dvc(project: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    """Run the venv's dvc in `project`."""
    return subprocess.run([str(BIN / "dvc"), *args], cwd=project, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


def copy_code(root: Path) -> None:
    """The code the stages run into `root`: nmt/, and tools/publish (the publish stages' renderer, not installed)."""
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "nmt", root / "nmt", ignore=skip)
    shutil.copytree(ROOT / "tools" / "publish", root / "tools" / "publish", ignore=skip)
    shutil.copy(ROOT / "tools" / "__init__.py", root / "tools" / "__init__.py")


def build_project(root: Path) -> Path:
    """A copy of the pipeline in `root` with the smoke configuration, as a fresh git repository."""
    for name in (".dvcignore", ".gitignore"):
        shutil.copy(ROOT / name, root / name)
    # the publish stage's deps on the records of real flow runs (committed here, absent in a new project)
    stages = (ROOT / "dvc.yaml").read_text().splitlines(keepends=True)
    (root / "dvc.yaml").write_text("".join(line for line in stages if line.strip() not in FLOW_RECORDS))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for section, values in yaml.safe_load((Path(__file__).with_name("smoke_params.yaml")).read_text()).items():
        params[section].update(values)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    copy_code(root)
    # what the publish stage renders (the pages) and from what besides the stages' reports (bench results)
    shutil.copy(ROOT / "README.md", root / "README.md")
    shutil.copytree(ROOT / "docs", root / "docs")
    shutil.copytree(ROOT / "bench" / "results", root / "bench" / "results")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def commit_project(project: Path, env: dict, remote: bool = False) -> None:
    """`dvc init` and a first commit; `remote`: also the repository's DVC config (local `.dvcstore` remote)."""
    result = dvc(project, env, "init", "-q")
    assert result.returncode == 0, result.stderr
    if remote:
        shutil.copy(ROOT / ".dvc" / "config", project / ".dvc" / "config")
        ignore = project / ".gitignore"
        text = ignore.read_text() if ignore.is_file() else ""
        if "/.dvcstore/" not in text.split():
            ignore.write_text(text + "/.dvcstore/\n")
    for key, value in (("user.name", "test"), ("user.email", "test@localhost")):  # for DVC experiments and GTO tags
        subprocess.run(["git", "config", key, value], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run([*GIT, "commit", "-qm", "scratch project"], cwd=project, check=True)


def copy_project(project: Path, dst: Path) -> Path:
    """A private copy of a scratch project (workspace, git, DVC cache, local remote) for a test that
    changes it, so that no other test sees the change."""
    shutil.copytree(project, dst, symlinks=True)
    return dst


TINY_DVC_YAML = """\
stages:
  prepare:
    cmd: python prepare.py
    deps: [prepare.py]
    params: [prepare.lines]
    outs: [data/lines.txt]
  score:
    cmd: python score.py
    deps: [data/lines.txt, score.py]
    metrics:
      - reports/metrics.json:
          cache: false
"""

TINY_PREPARE = """\
import pathlib, yaml
n = yaml.safe_load(open("params.yaml"))["prepare"]["lines"]
pathlib.Path("data").mkdir(exist_ok=True)
pathlib.Path("data/lines.txt").write_text("".join(f"line {i}\\n" for i in range(n)))
"""

TINY_SCORE = """\
import json, pathlib
n = len(pathlib.Path("data/lines.txt").read_text().splitlines())
pathlib.Path("reports").mkdir(exist_ok=True)
pathlib.Path("reports/metrics.json").write_text(json.dumps({"test": {"sacrebleu": n / 2, "chrf": n / 4}}))
"""


def build_tiny_project(root: Path, env: dict, remote_dir: Path) -> Path:
    """A two-stage DVC project (prepare -> score, a BLEU-like metric) with `remote_dir` as its remote."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "dvc.yaml").write_text(TINY_DVC_YAML)
    (root / "params.yaml").write_text("prepare:\n  lines: 8  # how many lines to write\n")
    (root / "prepare.py").write_text(TINY_PREPARE)
    (root / "score.py").write_text(TINY_SCORE)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    commit_project(root, env)
    result = dvc(root, env, "remote", "add", "-d", "store", str(remote_dir))
    assert result.returncode == 0, result.stderr
    return root
