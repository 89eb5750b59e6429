"""Another language pair end to end through DVC (issue 65), in a scratch project: pairs/dvc.yaml with the
French-English pair only, pairs/fr-en.yaml with the smoke model and a tiny corpus cut from Multi30k's
French mirror (file:// URLs). `dvc repro pairs/dvc.yaml` runs the data stages once and binarize, train,
evaluate, export, ctranslate2 and profile for fr-en and en-fr: each package says its direction and is
scored on test_2016_flickr, both share one vocabulary, one server serves both and names French, the
CLI translates French with the CTranslate2 model; a second run does nothing."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest
import yaml

from support.corpus import ROOT, sha256
from support.scratch import check_directions, repro_project, url_env
from support.scratch import dvc as _dvc
from support.serve import ThreadServer, config

pytestmark = pytest.mark.slow
FR_CS = ROOT.parent / "shared" / "data" / "multi30k-fr-cs"
DIRECTIONS = ("fr-en", "en-fr")


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


def tiny_pair(src: Path) -> dict:
    """pairs/fr-en.yaml's `data` for a tiny corpus: Multi30k val (1,014 pairs) as train, test_2016's first
    150 pairs as val and the next 150 as test_2016_flickr."""
    src.mkdir(parents=True)
    files, splits = [], {}
    cut = {"train": ("val", 0, None), "val": ("test_2016_flickr", 0, 150), "test_2016_flickr": ("test_2016_flickr",
                                                                                                 150, 300)}
    for split, (name, a, b) in cut.items():
        splits[split] = {}
        for lang in ("fr", "en"):
            data = gzip.compress("".join(s + "\n" for s in _lines(FR_CS / f"{name}.{lang}.gz")[a:b]).encode(), mtime=0)
            (src / f"{split}.{lang}.gz").write_bytes(data)
            files.append({"name": f"{split}.{lang}.gz", "url": (src / f"{split}.{lang}.gz").as_uri(),
                          "sha256": sha256(data)})
            splits[split][lang] = f"{split}.{lang}.gz"
    return {"languages": ["fr", "en"], "files": files, "splits": splits}


def build(root: Path) -> Path:
    for name in (".dvcignore", ".gitignore"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "nmt", root / "nmt", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "pairs").mkdir()
    pipeline = yaml.safe_load((ROOT / "pairs" / "dvc.yaml").read_text())
    del pipeline["stages"]["publish"]  # the pages' blocks: tests/test_published.py
    for stage in pipeline["stages"].values():
        each = stage["foreach"]
        stage["foreach"] = ["fr-en"] if isinstance(each, list) else {d: each[d] for d in DIRECTIONS}
    (root / "pairs" / "dvc.yaml").write_text(yaml.safe_dump(pipeline, sort_keys=False))
    params = yaml.safe_load((ROOT / "pairs" / "fr-en.yaml").read_text())
    params["data"]["corpora"] = {"multi30k-fr-cs": tiny_pair(root / "srv")}
    for section, values in yaml.safe_load((ROOT / "tests" / "support" / "smoke_params.yaml").read_text()).items():
        params[section].update(values)
    params["validate"].update(min_pairs=50, min_train_pairs=500)
    params["vocab"].update(bpe_merges=300, min_size=100)
    params["export"].update(compare_sentences=64)
    (root / "pairs" / "fr-en.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (FR_CS / "val.fr.gz").is_file():
        pytest.skip(f"the French-Czech Multi30k mirror is not at {FR_CS}")
    return repro_project(build(tmp_path_factory.mktemp("pairs")), "pairs/dvc.yaml")


def test_both_directions_are_trained_scored_exported_and_profiled(project: Path) -> None:
    check_directions(project, "pairs", {d: {"test_2016_flickr"} for d in DIRECTIONS})
    for direction in DIRECTIONS:
        metrics = json.loads((project / "reports" / "pairs" / direction / "metrics.json").read_text())
        assert "sacrebleu_signature" in metrics["test_2016_flickr"]
        assert (project / "reports" / "pairs" / direction / "profile.json").is_file()


def test_one_server_serves_both_and_the_cli_translates_french(project: Path, tmp_path: Path) -> None:
    packages = project / "models" / "pairs"
    server = ThreadServer(config(packages, model=(packages / "en-fr" / "onnx", packages / "fr-en" / "onnx")))
    try:
        languages = httpx.get(f"{server.url}/languages").json()
        answer = httpx.post(f"{server.url}/translate", json={"q": "Un chien court.", "source": "fr", "target": "en"},
                            timeout=60).json()
    finally:
        server.close()
    assert {(lang["code"], lang["name"]) for lang in languages} == {("fr", "French"), ("en", "English")}
    assert isinstance(answer["translatedText"], str)
    source = tmp_path / "in.fr"
    source.write_text("Un chien court.\nDeux hommes parlent.\n", encoding="utf-8")
    nmt = [str(Path(shutil.which("nmt", path=url_env()["PATH"])))]
    run = subprocess.run([*nmt, "translate", "--model", str(packages / "fr-en" / "ct2"), "--input", str(source),
                          "--output", str(tmp_path / "out.en")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len((tmp_path / "out.en").read_text(encoding="utf-8").splitlines()) == 2


def test_a_second_run_does_nothing(project: Path) -> None:
    again = _dvc(project, url_env(), "repro", "pairs/dvc.yaml")
    assert again.returncode == 0 and "Data and pipelines are up to date." in again.stdout, again.stdout
