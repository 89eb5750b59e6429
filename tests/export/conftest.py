"""The SentencePiece model the export tests share (test_portable.py, test_javascript.py): the smoke fr-en model
trained longer (600 updates, two layers) so that it says something (a 25-update model answers "▁" to every
line, and identical empty strings would prove nothing), through evaluate, export and ctranslate2."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.pairs import FR_CS
from support.stages import train_smoke


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sentencepiece")
    if not (FR_CS / "train.fr.gz").is_file():
        pytest.skip(f"the French-Czech Multi30k mirror is not at {FR_CS}")
    root = tmp_path_factory.mktemp("portable")
    train_smoke(root, evaluated=True,
                vocab={"kind": "sentencepiece", "max_size": 600, "joint": True, "min_size": 100},
                train={"max_steps": 600, "epochs": 1000, "warmup": 100},
                model={"n_layers": 2, "d_model": 64, "n_heads": 4, "d_ff": 128})
    return root
