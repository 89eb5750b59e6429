"""Training from the binarized set: the same weights as from the token files, bit for bit, through
the max_len filter and epoch ends; exact resume; a start-up that reads no token file and maps the ids;
BPE-dropout still from the tokens; a data/bin of other vocabularies refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from nmt.config.data import VocabConfig
from nmt.errors import DataError
from nmt.text.vocabularies import load_vocabularies
from nmt.train import batching
from nmt.train.batching import load_pairs
from nmt.train.loop import setup, train
from nmt.train.pairs import PairArrays
from support.train import TINY_MODEL, binarized, copy_corpus, tiny_train


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(tokens, vocab, bin) of a copy task with sentences of 2 to 16 tokens."""
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=150, n_val=16, length=(2, 16))
    return tokens, vocab, binarized(tokens, vocab)


def weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in model.state_dict().items()}


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


def without_timing(history: list[dict]) -> list[dict]:
    return [{k: v for k, v in h.items() if k not in ("tokens_per_s", "epoch_s", "val_s")} for h in history]


def no_token_files(*args, **kwargs):
    raise AssertionError("read a token file")


def test_the_binarized_set_trains_the_weights_of_the_token_files(corpus, tmp_path: Path) -> None:
    """max_len 12 drops the pairs over 12 ids on a side; 12 updates cross two epoch ends (val loss and
    BLEU on the mapped val split): weights and history as from today's loader, bit for bit."""
    tokens, vocab, bin_dir = corpus
    cfg = tiny_train(max_steps=12, epochs=5, max_len=12)
    kept = load_pairs(tokens, "train", load_vocabularies(vocab), cfg.max_len)
    assert 50 < len(kept) < 150  # the filter is exercised
    from_tokens, p1 = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "a")
    from_bin, p2 = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "b", bin_dir=bin_dir)
    assert p1.epoch == p2.epoch >= 2 and p2.step == 12
    assert same_weights(from_tokens, from_bin)
    assert without_timing(p1.history) == without_timing(p2.history)


def test_resume_from_the_binarized_set_is_exact(corpus, tmp_path: Path) -> None:
    tokens, vocab, bin_dir = corpus
    straight, _ = train(TINY_MODEL, tiny_train(max_steps=10, epochs=5, max_len=12), vocab, tokens, tmp_path / "a",
                        bin_dir=bin_dir)
    _, half = train(TINY_MODEL, tiny_train(max_steps=5, epochs=5, max_len=12), vocab, tokens, tmp_path / "b",
                    bin_dir=bin_dir)
    assert half.step == 5
    resumed, prog = train(TINY_MODEL, tiny_train(max_steps=10, epochs=5, max_len=12), vocab, tokens, tmp_path / "b",
                          bin_dir=bin_dir)
    assert prog.step == 10 and same_weights(straight, resumed)


def test_start_up_reads_no_token_file_and_maps_the_ids(corpus, tmp_path: Path, monkeypatch) -> None:
    tokens, vocab, bin_dir = corpus
    for path in tokens.glob("*.tsv"):
        path.unlink()
    monkeypatch.setattr(batching, "read_tokenized", no_token_files)
    cfg = tiny_train(max_steps=3, max_len=12)
    run, _ = setup(TINY_MODEL, cfg, vocab, tokens, tmp_path / "a", None, bin_dir)
    assert isinstance(run.train_pairs, PairArrays) and run.train_pairs.mapped and run.val_pairs.mapped
    assert run.token_pairs == [] and int(run.train_pairs.src_lens.max()) <= 12
    _, prog = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "b", bin_dir=bin_dir)
    assert prog.step == 3


def test_bpe_dropout_segments_the_tokens_beside_the_binarized_set(tmp_path: Path) -> None:
    """The small-corpus path: BPE-dropout needs the tokens (a fresh segmentation every epoch); validation
    comes from data/bin, the same ids as from the tokens, so the weights are those of the token-only run."""
    tokens, vocab = copy_corpus(tmp_path / "bpe", n_train=120, n_val=16, symbols=30,
                                vocab=VocabConfig(kind="bpe", joint=True, min_freq=1, bpe_merges=40))
    bin_dir = binarized(tokens, vocab)
    cfg = tiny_train(max_steps=6, epochs=5, bpe_dropout=0.3)
    a, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "a")
    b, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "b", bin_dir=bin_dir)
    assert same_weights(a, b)


def test_a_bin_of_other_vocabularies_is_refused_before_training(corpus, tmp_path: Path) -> None:
    tokens, vocab, _ = corpus
    other_tokens, other_vocab = copy_corpus(tmp_path / "other", n_train=40, n_val=8, symbols=7)
    with pytest.raises(DataError, match="made with other vocabularies than the ones given"):
        train(TINY_MODEL, tiny_train(max_steps=1), vocab, tokens, tmp_path / "run",
              bin_dir=binarized(other_tokens, other_vocab))
    assert not (tmp_path / "run").exists() or not list((tmp_path / "run").iterdir())
