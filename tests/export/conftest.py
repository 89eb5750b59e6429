"""The SentencePiece model the export tests share (test_portable.py, test_javascript.py): support.stages'
portable_model, the smoke fr-en model trained long enough to say something, evaluated, exported to ONNX and
CTranslate2."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.pairs import FR_CS
from support.stages import portable_model


@pytest.fixture(scope="session")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sentencepiece")
    if not (FR_CS / "train.fr.gz").is_file():
        pytest.skip(f"the French-Czech Multi30k mirror is not at {FR_CS}")
    return portable_model(tmp_path_factory.mktemp("portable"))
