"""A params file laid over the recipe it names (nmt/config/recipe.py): only what differs is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from nmt.config.loader import load_sections
from nmt.config.params import load_params
from nmt.errors import ConfigError
from nmt.train.stage import TrainParams
from support.params import PARAMS


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(PARAMS, tmp_path / "params.yaml")
    (tmp_path / "pairs").mkdir()
    return tmp_path


def _overlay(project: Path, text: str) -> Path:
    path = project / "pairs" / "xx-en.yaml"
    path.write_text("recipe: ../params.yaml\n" + text)
    return path


def test_sections_merge_key_by_key_and_lists_and_tables_are_replaced(project: Path) -> None:
    path = _overlay(project, "train: {epochs: 3}\nevaluate: {test_sets: [val]}\n"
                             "validate: {clean: {langid: false}}\n")
    recipe, params = load_params(project / "params.yaml"), load_params(path)
    assert params.train.epochs == 3 and params.train.warmup == recipe.train.warmup  # the rest is the recipe's
    assert params.evaluate.test_sets == ("val",)  # a list replaced, not appended to
    assert params.validate.clean.langid is False and params.validate.clean.max_other_script == \
        recipe.validate.clean.max_other_script  # a block inside a section merges too
    assert params.model == recipe.model


def test_a_named_table_gains_the_overlays_entries_each_whole(project: Path) -> None:
    corpora = yaml.safe_load((project / "params.yaml").read_text())["data"]["corpora"]
    mine = dict(corpora["multi30k"], licence="mine")
    path = _overlay(project, yaml.safe_dump({"data": {"corpus": "mine", "corpora": {"mine": mine}}}))
    data = load_params(path).data
    assert list(data.corpora) == ["multi30k", "mine"] and data.active.licence == "mine"
    again = _overlay(project, yaml.safe_dump({"data": {"corpora": {"multi30k": {"languages": ["de", "en"]}}}}))
    with pytest.raises(ConfigError, match=r"data\.corpora\.multi30k\.files: missing required key"):
        load_params(again)  # an entry is replaced whole, not merged: it states every key


@pytest.mark.parametrize("text, key, hint", [
    ("train: {max_step: 10}\n", "train.max_step", "did you mean max_steps?"),
    ("trian: {epochs: 1}\n", "trian", "did you mean train?"),
    ("validate: {clean: {lang_id: false}}\n", "validate.clean.lang_id", "did you mean langid?"),
])
def test_a_key_the_recipe_lacks_names_the_file_the_key_and_the_nearest(project: Path, text: str, key: str,
                                                                       hint: str) -> None:
    path = _overlay(project, text)
    with pytest.raises(ConfigError) as err:
        load_params(path)
    assert str(err.value) == f"{path}: {key}: not a key of its recipe {project}/pairs/../params.yaml ({hint})"


def test_a_stage_checks_only_its_own_sections_of_an_overlay(project: Path) -> None:
    """The train stage reads model, train and tokenize: another section's mistake is that stage's concern."""
    path = _overlay(project, "train: {epochs: 2}\nevaluate: {beam_size: 'five'}\n")
    assert load_sections(path, TrainParams).train.epochs == 2
    with pytest.raises(ConfigError, match=r"evaluate\.beam_size: expected int"):
        load_params(path)


def test_a_missing_recipe_and_a_cycle_are_refused(project: Path) -> None:
    missing = project / "pairs" / "a.yaml"
    missing.write_text("recipe: nowhere.yaml\n")
    with pytest.raises(ConfigError, match=r"a\.yaml: recipe: .*nowhere\.yaml not found"):
        load_params(missing)
    (project / "pairs" / "b.yaml").write_text("recipe: c.yaml\n")
    (project / "pairs" / "c.yaml").write_text("recipe: b.yaml\n")
    with pytest.raises(ConfigError, match="a cycle of recipes"):
        load_params(project / "pairs" / "b.yaml")
