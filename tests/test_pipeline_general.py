"""The general configuration end to end through DVC, both directions, in a scratch project: a tiny
mix written by the test (real Multi30k sentences, a TSV train source and line-file dev and test
sources, file:// URLs) with general/params.yaml's cleaning and decontamination, the smoke model.

`dvc repro general/dvc.yaml` runs the data stages once and binarize, train, evaluate, export and
ctranslate2 for de-en and en-de: each direction's package says its direction,
is scored on the test sets of its direction, and its card records the corpora and the
decontamination counts; the baseline stage sets a Multi30k-like model (the ONNX tests' small
model standing in for models/model.pt) beside the de-en model, and the general publish stage
renders the README's general blocks from these reports; a second run does nothing.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from support.corpus import ROOT, sha256
from support.scratch import check_directions, copy_code, repro_project, url_env
from support.scratch import dvc as _dvc

pytestmark = pytest.mark.slow


def _lines(path: Path) -> list[str]:
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()


def _file(directory: Path, name: str, text: str) -> dict:
    data = text.encode("utf-8")
    (directory / name).write_bytes(data)
    return {"name": name, "url": (directory / name).as_uri(), "sha256": sha256(data)}


def tiny_mix(src: Path, mirror: Path) -> dict:
    """`data` of general/params.yaml with one corpus: Multi30k val as a TSV train source (English<TAB>German,
    with a leaked test pair), test_2016's first 150 pairs as dev and the next 150 as two test sets."""
    de, en = _lines(mirror / "val.de.gz"), _lines(mirror / "val.en.gz")
    tde, ten = _lines(mirror / "test_2016_flickr.de.gz"), _lines(mirror / "test_2016_flickr.en.gz")
    src.mkdir(parents=True)
    rows = [f"{e}\t{d}" for d, e in zip(de, en)] + [f"{ten[200]}\t{tde[200]}"]  # a test pair leaked into train
    files = [_file(src, "train.tsv", "".join(r + "\n" for r in rows))]
    splits = {"train": {"format": "tsv", "file": "train.tsv", "en": 0, "de": 1}}
    for split, (a, b) in {"dev": (0, 150), "test_a": (150, 225), "test_b": (225, 300)}.items():
        files += [_file(src, f"{split}.de", "".join(s + "\n" for s in tde[a:b])),
                  _file(src, f"{split}.en", "".join(s + "\n" for s in ten[a:b]))]
        splits[split] = {"de": f"{split}.de", "en": f"{split}.en"}
    params = yaml.safe_load((ROOT / "general" / "params.yaml").read_text())
    data = params["data"]
    data["corpora"] = {"tiny": {"languages": ["de", "en"], "licence": "test data", "requires_train": False,
                                "files": files, "splits": splits}}
    data["mixes"] = {"general": {"languages": ["de", "en"], "sources": [
        {"corpus": "tiny", "split": "train", "role": "train", "dev_share": 0.05},
        {"corpus": "tiny", "split": "dev", "role": "dev"},
        {"corpus": "tiny", "split": "test_a", "role": "test"},
        {"corpus": "tiny", "split": "test_b", "role": "test"}]}}
    return data


def build(root: Path, mirror: Path, baseline_model: Path) -> Path:
    for name in (".dvcignore", ".gitignore", "README.md"):
        shutil.copy(ROOT / name, root / name)
    shutil.copytree(ROOT / "docs", root / "docs")
    for name in ("reports/export.json", "reports/ctranslate2.json", "bench/results/packages.json",
                 "bench/results/peers_published.json", "bench/results/general_rounds.json",
                 "bench/results/final_weights.json", "bench/results/decode_tune.json"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, root / name)  # the Multi30k package's figures and the benches, as committed
    (root / "models").mkdir()
    shutil.copy(baseline_model, root / "models" / "model.pt")  # the default pipeline's model, here a small one
    (root / "general").mkdir()
    shutil.copy(ROOT / "general" / "dvc.yaml", root / "general" / "dvc.yaml")
    copy_code(root)
    params = yaml.safe_load((ROOT / "general" / "params.yaml").read_text())
    params["data"] = tiny_mix(root / "srv", mirror)
    for section, values in yaml.safe_load((ROOT / "tests" / "support" / "smoke_params.yaml").read_text()).items():
        params[section].update(values)
    params["validate"].update(min_pairs=50, min_train_pairs=500)
    params["validate"]["clean"]["min_lexical"] = 0.0  # the dictionary rule has its own tests (tests/data)
    params["validate"]["decontaminate"]["blind"] = []  # ../shared/data/blind: blind sets have their own tests
    params["vocab"].update(bpe_merges=300, min_size=100)
    params["tokenize"]["max_tokens"] = 128
    params["evaluate"].update(test_sets=["test_a", "test_b"], test_set_directions={"test_b": "en-de"},
                              min_bleu_by_set={})
    params["export"].update(compare_split="test_a", ctranslate2=True)
    (root / "general" / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, mirror: Path, model_path: Path) -> Path:
    return repro_project(build(tmp_path_factory.mktemp("general"), mirror, model_path), "general/dvc.yaml")


def test_both_directions_are_trained_scored_and_packaged(project: Path) -> None:
    check_directions(project, "general", {"de-en": {"test_a"}, "en-de": {"test_a", "test_b"}})


def test_the_card_records_the_corpora_and_the_decontamination(project: Path) -> None:
    card = json.loads((project / "models" / "general" / "de-en" / "onnx" / "model.json").read_text())
    data = card["data"]
    assert data["corpus"] == "general" and data["provenance"]["tiny"]["licence"] == "test data"
    assert set(data["provenance"]["tiny"]["files"]) == {"train.tsv", *(f"{s}.{lang}"
                                                                       for s in ("dev", "test_a", "test_b")
                                                                       for lang in ("de", "en"))}
    assert data["decontamination"]["test_a"]["exact"] >= 1  # the leaked test pair left training
    assert data["sources"]["tiny.train"]["to_val"] > 0


def test_the_baseline_sits_beside_the_general_model_and_the_readme_follows(project: Path) -> None:
    general = json.loads((project / "reports" / "general" / "de-en" / "metrics.json").read_text())
    baseline = json.loads((project / "reports" / "general" / "baseline" / "metrics.json").read_text())
    assert set(baseline) == set(general) == {"test_a"}
    page = (project / "reports" / "general" / "baseline" / "index.html").read_text()
    assert f"{general['test_a']['sacrebleu']:.2f}" in page and f"{baseline['test_a']['sacrebleu']:.2f}" in page
    readme = (project / "README.md").read_text()
    block = readme.split("<!-- begin generated: general-results -->")[1].split("<!-- end generated")[0]
    assert "| de-en |" in block and "| en-de |" in block and "not trained yet" not in block
    assert f"**{general['test_a']['sacrebleu']:.2f}**" in block and f"{baseline['test_a']['sacrebleu']:.2f}" in block


def test_a_second_run_does_nothing(project: Path) -> None:
    again = _dvc(project, url_env(), "repro", "general/dvc.yaml")
    assert again.returncode == 0 and "Data and pipelines are up to date." in again.stdout, again.stdout
