"""Helpers for the params tests: the repository's params.yaml, a params file written to a
directory, and the one-line ConfigError that loading a section of it raises."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from nmt.config.data import DataConfig, TokenizeConfig, ValidateConfig, VocabConfig
from nmt.config.params import load_params
from nmt.errors import ConfigError
from support.corpus import ROOT

PARAMS = ROOT / "params.yaml"
SECTIONS = {"data": DataConfig, "validate": ValidateConfig, "tokenize": TokenizeConfig, "vocab": VocabConfig}


def write_params(tmp_path: Path, params: dict, name: str = "params.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def load_error(path: Path, section: str) -> str:
    with pytest.raises(ConfigError) as err:
        getattr(load_params(path), section)
    msg = str(err.value)
    assert "\n" not in msg  # one line, for the CLI
    return msg
