"""nmt.text.spm: a SentencePiece model with the project's special ids, its pieces as a Vocabulary, text to
pieces and back without spaCy, deterministic training, and a changed model file refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.errors import ConfigError, DataError
from nmt.text.spm import SentencePiece
from nmt.text.vocab import SPECIALS
from support.corpus import synthetic_pairs

pytest.importorskip("sentencepiece")
DE, EN = synthetic_pairs(400, seed=3)
TEXTS = DE + EN


@pytest.fixture(scope="module", params=["unigram", "bpe"])
def model(request: pytest.FixtureRequest) -> SentencePiece:
    return SentencePiece.train(TEXTS, size=400, model_type=request.param)


def test_the_specials_have_the_project_ids_and_the_pieces_are_a_vocabulary(model: SentencePiece) -> None:
    vocab = model.vocabulary()
    assert tuple(vocab.itos[:4]) == SPECIALS and len(vocab) <= 400
    pieces = model.encode("Ein Mann läuft über die Straße 7 .")
    assert all(p in vocab.stoi for p in pieces)


def test_text_round_trips_through_the_pieces(model: SentencePiece) -> None:
    for text in (DE[0], EN[5], "Eine Frau spielt Ball im Park."):
        assert model.decode(model.encode(text)) == text


def test_an_unseen_character_is_bytes_not_unk(model: SentencePiece) -> None:
    pieces = model.encode("Ein Hund 🐕 läuft.")
    assert "<unk>" not in pieces and model.decode(pieces) == "Ein Hund 🐕 läuft."


def test_training_is_deterministic() -> None:
    a, b = (SentencePiece.train(TEXTS, size=400) for _ in range(2))
    assert a.model == b.model and a.sha256 == b.sha256


def test_a_saved_model_loads_and_a_changed_one_is_refused(model: SentencePiece, tmp_path: Path) -> None:
    path = tmp_path / "sentencepiece.model"
    model.save(path)
    assert SentencePiece.load(path, model.sha256).encode(EN[1]) == model.encode(EN[1])
    data = bytearray(path.read_bytes())
    data[100] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="SHA-256 differs .* changed after it was written"):
        SentencePiece.load(path, model.sha256)
    path.write_bytes(b"not a model")
    with pytest.raises(DataError, match="not a SentencePiece model"):
        SentencePiece.load(path)


def test_bad_settings_are_one_line() -> None:
    with pytest.raises(ConfigError, match="vocab.sp_model_type: 'word' is not one of unigram, bpe"):
        SentencePiece.train(TEXTS, size=400, model_type="word")
    with pytest.raises(DataError, match="SentencePiece training failed"):
        SentencePiece.train([], size=400)
