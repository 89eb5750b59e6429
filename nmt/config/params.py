"""`Params`: the whole of params.yaml, typed and validated once.

`load_params(path)` checks the whole file: an unknown section or key, a missing key, a wrong
type or a value out of range is one `ConfigError` naming the file and the dotted key. params.yaml
states every key: a missing one is an error, not a silent default. A stage loads only the
sections it reads (`nmt.config.loader.load_sections` with its own dataclass of sections, e.g.
`nmt.train.stage.TrainParams`), so that a new section re-runs no stage; no stage imports this
module (tests/test_architecture.py); tests/config checks the repository's file whole with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from nmt.config.data import DataConfig, TokenizeConfig, ValidateConfig, VocabConfig
from nmt.config.drift import DriftConfig
from nmt.config.evaluate import EvaluateConfig
from nmt.config.export import ExportConfig
from nmt.config.loader import from_dict, read_params
from nmt.config.model import ModelConfig
from nmt.config.profile import ProfileConfig
from nmt.config.promote import PromoteConfig
from nmt.config.train import TrainConfig


@dataclass(frozen=True)
class Params:
    """One field per params.yaml section, in file order (the pipeline's order)."""

    data: DataConfig  # corpus, direction, download
    validate: ValidateConfig  # the raw-data gate
    tokenize: TokenizeConfig  # spaCy tokenization
    vocab: VocabConfig  # word or BPE vocabularies
    model: ModelConfig  # the Transformer's shape
    train: TrainConfig  # optimisation, batching, checkpoints
    evaluate: EvaluateConfig  # test sets, decoding, BLEU floor
    export: ExportConfig  # the ONNX package and its gate
    profile: ProfileConfig  # the training data's profile, what the served traffic is compared with
    promote: PromoteConfig  # champion / challenger: when a new model goes to production
    drift: DriftConfig  # the drift check: when the served traffic no longer looks like the training data


def load_params(path: Path) -> Params:
    """Read and validate the whole params file; `ConfigError` names the key at fault."""
    return from_dict(Params, read_params(path, Params), source=str(path), complete=True)
