"""The fine-tunes' params: finetune/multi30k.yaml and finetune/news.yaml load for every fine-tune stage, their
files are laid over general/params.yaml (its corpora, their own mixes), the news domain trains on no set the parents
trained on or are scored on, and the own-data example in docs/training.md is a file the loader takes over the same
recipe (its SHA-256 placeholders filled)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from nmt.config.finetune import FinetuneConfig
from nmt.config.loader import from_dict, load_sections
from nmt.data.download import DownloadParams as DataParams
from nmt.errors import ConfigError
from support.corpus import ROOT

PARAMS = ROOT / "finetune" / "multi30k.yaml"
FILES = [PARAMS, ROOT / "finetune" / "news.yaml"]


@pytest.mark.parametrize("params", FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("module", ["nmt.finetune.parent", "nmt.finetune.stage", "nmt.finetune.compare",
                                    "nmt.data.validate", "nmt.evaluate.stage", "nmt.export.stage"])
def test_every_stage_loads_its_sections(module: str, params) -> None:
    import dataclasses
    import importlib

    stage = importlib.import_module(module)
    params_cls = next(v for k, v in vars(stage).items() if k.endswith("Params") and dataclasses.is_dataclass(v))
    assert load_sections(params, params_cls) is not None


@pytest.mark.parametrize("params", FILES, ids=lambda p: p.name)
def test_the_corpora_are_the_general_configurations(params) -> None:
    """A fine-tune is laid over its parents' params: their corpora, and only its own mix of them beside."""
    text = yaml.safe_load(params.read_text())
    assert text["recipe"] == "../general/params.yaml" and "corpora" not in text["data"]
    general = load_sections(ROOT / "general" / "params.yaml", DataParams).data
    data = load_sections(params, DataParams).data
    assert data.corpora == general.corpora and set(data.used_corpora()) <= set(general.corpora)


def test_the_news_domain_is_unseen_by_the_parents() -> None:
    """Its train and dev sets are test or dev sets of the general mix (never its train), and its own test sets
    are none of them."""
    general = yaml.safe_load((ROOT / "general" / "params.yaml").read_text())["data"]["mixes"]["general"]["sources"]
    held = {(s["corpus"], s["split"]) for s in general if s["role"] in ("dev", "test")}
    trained = {(s["corpus"], s["split"]) for s in general if s["role"] == "train"}
    news = yaml.safe_load((ROOT / "finetune" / "news.yaml").read_text())["data"]["mixes"]["news-finetune"]["sources"]
    mine = {role: {(s["corpus"], s["split"]) for s in news if s["role"] == role} for role in ("train", "dev", "test")}
    assert mine["train"] and mine["train"] <= held and not mine["train"] & trained
    assert not (mine["train"] | mine["dev"]) & mine["test"] and not mine["test"] & trained


def test_the_own_data_example_in_the_docs_loads(tmp_path: Path) -> None:
    block = re.search(r"```yaml\n(recipe:.*?)```", (ROOT / "docs" / "training.md").read_text(), re.S).group(1)
    mine = tmp_path / "finetune" / "client.yaml"
    mine.parent.mkdir()
    mine.write_text(block.replace('sha256: "..."', f'sha256: "{"0" * 64}"'))
    shutil.copytree(ROOT / "general", tmp_path / "general")
    data = load_sections(mine, DataParams).data
    assert data.corpus == "client-finetune" and data.used_corpora() == ["client", "wmt-news"]


@pytest.mark.parametrize(("values", "key"), [({"lr": 0.0}, "lr"), ({"replay": 1.0}, "replay"),
                                             ({"warmup": 1000, "max_steps": 1000}, "warmup"),
                                             ({"max_minutes": -1.0}, "max_minutes"),
                                             ({"general_sets": ["a", "a"]}, "general_sets")])
def test_bad_settings_name_their_key(values: dict, key: str) -> None:
    with pytest.raises(ConfigError, match=rf"finetune\.{key}:"):
        from_dict(FinetuneConfig, values, key="finetune")
