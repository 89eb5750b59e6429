"""One source of the default decoding settings: `Decoding()` equals params.yaml's tuned evaluate
section, and everything that decodes without being told how (the evaluate config, a model file
loaded with `Translator.from_file`, `nmt translate --model model.pt`) decodes with it."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from nmt.cli import main
from nmt.config.data import TokenizeConfig
from nmt.config.evaluate import Decoding, EvaluateConfig
from nmt.config.model import ModelConfig
from nmt.config.params import load_params
from nmt.decode import translator as translator_module
from nmt.decode.translator import Translator
from nmt.train.stage import TrainPaths, train_stage
from support.corpus import ROOT
from support.train import binarized, copy_corpus, tiny_train


def test_the_defaults_are_the_tuned_settings_of_params_yaml() -> None:
    tuned = load_params(ROOT / "params.yaml").evaluate
    assert Decoding() == tuned.decoding
    assert EvaluateConfig().decoding == Decoding()


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A barely trained model file whose target vocabulary (40 symbols + 4 specials) takes a beam
    of 16 (a beam step ranks 2K next tokens), so the defaults apply unnarrowed."""
    root = tmp_path_factory.mktemp("defaults")
    tokens, vocab = copy_corpus(root / "corpus", n_train=200, n_val=10, symbols=40, length=6, seed=2)
    cfg = tiny_train(epochs=1, val_bleu_sentences=0, early_stop_metric="val_loss", average_last=1, keep_last=1,
                     num_threads=1)
    model_cfg = ModelConfig(n_layers=1, d_model=16, n_heads=2, d_ff=32, dropout=0.0, max_len=64)
    bin_dir = binarized(tokens, vocab)
    train_stage(model_cfg, cfg, TokenizeConfig(), TrainPaths(vocab, tokens, bin_dir, root / "ckpt", root / "model.pt",
                                                             root / "reports", root / "tr"))
    return root / "model.pt"


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, float, int]]:
    """(beam_size, alpha, max_extra) of every beam search a `Translator` runs; greedy is (1, -1, max_extra)."""
    seen: list[tuple[int, float, int]] = []
    beam, greedy = translator_module.beam_search, translator_module.greedy

    def spy_beam(model, src, beam_size, alpha, max_extra):
        seen.append((beam_size, alpha, max_extra))
        return beam(model, src, beam_size, alpha, max_extra)

    def spy_greedy(model, src, max_extra):
        seen.append((1, -1.0, max_extra))
        return greedy(model, src, max_extra)

    monkeypatch.setattr(translator_module, "beam_search", spy_beam)
    monkeypatch.setattr(translator_module, "greedy", spy_greedy)
    # the n-best searches the text path's decode step runs (`nmt translate`, the server: translate_scored)
    search = translator_module.search
    beam_n, greedy_scored = search.beam_search_n, search.greedy_scored

    def spy_beam_n(backend, src, n, beam_size, alpha, max_extra):
        seen.append((beam_size, alpha, max_extra))
        return beam_n(backend, src, n, beam_size, alpha, max_extra)

    def spy_greedy_scored(backend, src, max_extra):
        seen.append((1, -1.0, max_extra))
        return greedy_scored(backend, src, max_extra)

    monkeypatch.setattr(search, "beam_search_n", spy_beam_n)
    monkeypatch.setattr(search, "greedy_scored", spy_greedy_scored)
    return seen


def _expected() -> tuple[int, float, int]:
    tuned = load_params(ROOT / "params.yaml").evaluate
    return tuned.beam_size, tuned.alpha, tuned.max_extra


def test_a_model_file_decodes_with_the_defaults(model_file: Path, searches: list) -> None:
    translator = Translator.from_file(model_file)
    assert len(translator.vocabs.tgt) // 2 >= Decoding().beam_size  # not narrowed
    assert {k: getattr(translator, k) for k in asdict(Decoding())} == asdict(Decoding())
    translator.translate(["s1 s2 s3", "", "s4 s5"])
    assert searches and set(searches) == {_expected()}


def test_nmt_translate_on_a_model_file_decodes_with_the_defaults(model_file: Path, tmp_path: Path,
                                                                 searches: list) -> None:
    src = tmp_path / "in.txt"
    src.write_text("s1 s2 s3\n\ns4 s5\n")
    assert main(["translate", "--model", str(model_file), "--input", str(src), "--output", str(tmp_path / "o")]) == 0
    assert searches and set(searches) == {_expected()}
    searches.clear()
    assert main(["translate", "--model", str(model_file), "--input", str(src), "--output", str(tmp_path / "o"),
                 "--beam-size", "3", "--alpha", "0.6"]) == 0
    assert set(searches) == {(3, 0.6, _expected()[2])}
