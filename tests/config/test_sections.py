"""A stage loads only the params.yaml sections it reads (`load_sections`), each in full."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from nmt.config.data import DataConfig, ValidateConfig
from nmt.config.loader import load_sections
from nmt.config.params import load_params
from nmt.data.validate import ValidateParams
from nmt.errors import ConfigError
from support.params import PARAMS


@pytest.fixture
def params() -> dict:
    return yaml.safe_load(PARAMS.read_text())


def _write(tmp_path: Path, params: dict) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def test_the_sections_a_stage_reads_are_those_of_the_whole_file() -> None:
    whole = load_params(PARAMS)
    own = load_sections(PARAMS, ValidateParams)
    assert (own.data, own.validate) == (whole.data, whole.validate)


def test_another_stages_section_is_no_concern_of_this_one(tmp_path: Path, params: dict) -> None:
    """A new section, or a mistake in another stage's, neither re-runs nor stops this stage."""
    params["serve"] = {"port": 5000}  # a section this code base does not know (yet)
    params["train"]["epochs"] = "many"
    path = _write(tmp_path, params)
    assert load_sections(path, ValidateParams).validate == load_params(PARAMS).validate
    with pytest.raises(ConfigError, match="unknown section"):
        load_params(path)  # the whole-file check still sees both


def test_the_stages_own_sections_are_checked_in_full(tmp_path: Path, params: dict) -> None:
    del params["validate"]["min_train_pairs"]
    with pytest.raises(ConfigError, match=r"validate\.min_train_pairs: missing required key"):
        load_sections(_write(tmp_path, params), ValidateParams)
    params = yaml.safe_load(PARAMS.read_text())
    del params["validate"]
    with pytest.raises(ConfigError, match="missing section 'validate:'"):
        load_sections(_write(tmp_path, params), ValidateParams)


def test_sections_are_read_by_field_name(tmp_path: Path, params: dict) -> None:
    @dataclass(frozen=True)
    class OnlyData:
        data: DataConfig

    @dataclass(frozen=True)
    class OnlyValidate:
        validate: ValidateConfig

    params["data"]["corpus"] = 3  # wrong type: only a reader of `data` notices
    path = _write(tmp_path, params)
    assert load_sections(path, OnlyValidate).validate == load_params(PARAMS).validate
    with pytest.raises(ConfigError, match=r"data\.corpus"):
        load_sections(path, OnlyData)
