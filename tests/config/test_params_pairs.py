"""The other language pairs' configuration (pairs/, docs/pairs.md): each pairs/<pair>.yaml loads whole, is
laid over params.yaml (`recipe: ../params.yaml`, nmt/config/recipe.py) with its data and tuned decoding, names
its corpus's files with the mirror's hashes, and is a row of the table of models (pipeline/models.yaml), so
pairs/dvc.yaml runs its data stages once and its other stages once for each direction, with that pair's file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from nmt.config.params import load_params
from support.params import PARAMS

ROOT = PARAMS.parent
PAIRS = sorted((ROOT / "pairs").glob("*.yaml"))
PAIR_FILES = [p for p in PAIRS if p.name != "dvc.yaml"]
MIRROR = ROOT.parent / "shared" / "data"
DATA_STAGES = ("download", "validate", "tokenize", "vocab")


def _flat(data: object, key: str = "") -> dict[str, object]:
    if isinstance(data, dict):
        return {k: v for name, sub in data.items() for k, v in _flat(sub, f"{key}.{name}" if key else name).items()}
    return {key: data}


def _default_direction(path: Path) -> str | None:
    """The default pipeline's direction (dvc.yaml trains it) when the pair file is on params.yaml's corpus."""
    default, pair = load_params(PARAMS).data, load_params(path).data
    return default.direction if pair.corpus == default.corpus else None


def test_a_pair_on_the_default_corpus_is_that_corpus_and_leaves_its_direction_to_dvc_yaml() -> None:
    default = load_params(PARAMS).data
    on_default = [p for p in PAIR_FILES if _default_direction(p)]
    assert [p.stem for p in on_default] == [default.direction]  # pairs/de-en.yaml: the pivot's en-de
    assert load_params(on_default[0]).data.active == default.active  # the same files, hashes and splits
    stages = yaml.safe_load((ROOT / "pairs" / "dvc.yaml").read_text())["stages"]
    assert default.direction not in stages["train"]["foreach"] and "en-de" in stages["train"]["foreach"]


def test_there_are_pairs_beside_german() -> None:
    assert {p.stem for p in PAIR_FILES} >= {"fr-en", "cs-en"}


@pytest.mark.parametrize("path", PAIR_FILES, ids=lambda p: p.stem)
def test_a_pair_file_is_the_default_recipe_on_its_own_corpus(path: Path) -> None:
    """A pair file names params.yaml as its recipe and holds only what differs (at most 30 lines): its data and
    a decoding or gate setting tuned on its own val; everything else is the recipe's."""
    params = load_params(path)
    src, tgt = path.stem.split("-")
    assert params.data.languages == (src, tgt) and params.data.direction == path.stem
    assert params.data.mix is None and "test_2016_flickr" in params.data.active.test_splits
    pair = yaml.safe_load(path.read_text())
    assert pair["recipe"] == "../params.yaml" and len(path.read_text().splitlines()) <= 30
    assert set(pair) <= {"recipe", "data", "evaluate"}, f"{path.name}: sections beyond data and decoding"
    default = load_params(PARAMS)
    for section in ("validate", "tokenize", "vocab", "model", "train", "export", "profile", "promote", "drift"):
        assert getattr(params, section) == getattr(default, section), section


@pytest.mark.parametrize("path", PAIR_FILES, ids=lambda p: p.stem)
def test_a_pair_file_names_the_mirror_files_by_their_hashes(path: Path) -> None:
    corpus = load_params(path).data.active
    sums = MIRROR / load_params(path).data.corpus / "SHA256SUMS"
    if not sums.exists():
        pytest.skip(f"no mirror at {sums.parent}")
    known = dict(reversed(line.split()) for line in sums.read_text().splitlines())
    assert {f.name: f.sha256 for f in corpus.files} == {f.name: known[f.name] for f in corpus.files}


def test_the_pairs_pipeline_runs_every_pair_and_both_its_directions() -> None:
    """Every pair file is a corpus row of the table (pipeline/models.yaml) with a model row for each direction
    the default pipeline does not train; pairs/dvc.yaml (written from it) runs the data stages once per pair and
    the others once per direction, each with its pair's file."""
    table = yaml.safe_load((ROOT / "pipeline" / "models.yaml").read_text())
    rows = {row["key"]: row for row in table["data"].values() if row["pipeline"] == "pairs"}
    pairs = {p.stem for p in PAIR_FILES}
    assert set(rows) == pairs and all(rows[p]["params"] == f"pairs/{p}.yaml" for p in pairs)
    models = {m["key"]: m for m in table["models"].values() if m["pipeline"] == "pairs"}
    both = {d: p for p in pairs for d in (p, "-".join(reversed(p.split("-"))))
            if d != _default_direction(ROOT / "pairs" / f"{p}.yaml")}
    assert {k: table["data"][m["data"]]["key"] for k, m in models.items()} == both
    stages = yaml.safe_load((ROOT / "pairs" / "dvc.yaml").read_text())["stages"]
    publish = stages.pop("publish")
    assert "--pairs" in publish["cmd"]
    assert all(f"reports/pairs/{p}/validation/raw.json" in publish["deps"] for p in pairs)
    for name, stage in stages.items():
        each, cmd = stage["foreach"], stage["do"]["cmd"]
        assert "--params ${item.params}" in cmd, name
        if name in DATA_STAGES:
            assert {k: v["params"] for k, v in each.items()} == {p: f"pairs/{p}.yaml" for p in pairs}, name
        else:
            assert {k: v["params"] for k, v in each.items()} == {d: f"pairs/{p}.yaml" for d, p in both.items()}, name
    default = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert set(stages) == set(DATA_STAGES) | {"binarize", "train", "evaluate", "export", "ctranslate2", "profile"}
    for name, stage in stages.items():
        ours = [d for d in stage["do"]["deps"] if d.startswith("nmt/")]
        assert ours == [d for d in default[name]["deps"] if d.startswith("nmt/")], name


@pytest.mark.parametrize("pair, directions", [("fr-en", ["fr-en", "en-fr"]), ("de-en", ["en-de"])])
def test_make_repro_pairs_runs_the_directions_the_pairs_pipeline_has(pair: str, directions: list[str]) -> None:
    """`make repro-pairs PAIR=de-en` runs en-de only: de-en is dvc.yaml's, and DVC would refuse a target
    that pairs/dvc.yaml does not have."""
    out = subprocess.run(["make", "-n", "repro-pairs", f"PAIR={pair}"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    (line,) = [x for x in out.splitlines() if "dvc repro" in x]
    assert line.split("dvc repro ", 1)[1].split() == [f"pairs/dvc.yaml:{s}@{d}" for d in directions
                                                      for s in ("ctranslate2", "profile")]
