"""Checkpoints and model files under faults: a damaged file is refused, never used; the train stage
resumes from the previous good checkpoint and ships the weights its records name as best."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from nmt.config.data import TokenizeConfig
from nmt.errors import DataError, OutOfSpace
from nmt.files import seal
from nmt.model import checkpoint
from nmt.train import loop as train_module
from nmt.train.loop import train
from nmt.train.stage import TrainPaths, final_weights, train_stage
from support.train import TINY_MODEL, binarized, copy_corpus, tiny_train

pytestmark = pytest.mark.fault


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=120, n_val=16)
    binarized(tokens, vocab)
    return tokens, vocab


def flip_bit(path: Path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x10
    path.write_bytes(bytes(data))


def test_a_flipped_bit_is_refused_with_the_command_that_recovers(tmp_path: Path) -> None:
    path = tmp_path / "epoch-0001-step-00000004.pt"
    checkpoint.save(path, {"format": checkpoint.FORMAT, "w": torch.arange(4096, dtype=torch.float32)})
    assert seal.check(path) is True and checkpoint.load(path)["w"][7] == 7
    import hashlib

    data = path.read_bytes()  # the seal records the archive's SHA-256 with a zero comment length
    assert seal.sealed_digest(path) == hashlib.sha256(data[:-seal._COMMENT_SIZE - 2] + b"\x00\x00").hexdigest()
    flip_bit(path)
    assert seal.check(path) is False
    with pytest.raises(DataError, match=r"epoch-0001-step-00000004.pt: damaged: .*resumes from the previous good"):
        checkpoint.load(path)
    model = tmp_path / "model.pt"
    checkpoint.save(model, {"format": checkpoint.FORMAT, "w": torch.ones(4096)})
    flip_bit(model, 0.3)
    with pytest.raises(DataError, match=r"model.pt: damaged: .*`dvc checkout`"):
        checkpoint.load(model)


@pytest.mark.fault
@pytest.mark.parametrize("mask", [0x01, 0x10, 0x80])
def test_a_damaged_seal_is_refused_not_read_as_an_unsealed_file(tmp_path: Path, mask: int) -> None:
    """A flipped bit anywhere in the 97-byte seal (its end-of-central-directory record, the comment's
    length, prefix or digest) must not turn verification off: before, a flip outside the digest made
    the file read as an older, unsealed one and load with no check (issue 80), so a second flip in the
    weights was resumed from."""
    path = tmp_path / "epoch-0001-step-00000004.pt"
    checkpoint.save(path, {"format": checkpoint.FORMAT, "w": torch.arange(512, dtype=torch.float32)})
    good = path.read_bytes()
    trailer = seal._EOCD_SIZE + seal._COMMENT_SIZE
    for at in range(len(good) - trailer, len(good)):
        damaged = bytearray(good)
        damaged[at] ^= mask
        damaged[len(good) // 2] ^= 0x10  # and the weights
        path.write_bytes(bytes(damaged))
        assert seal.check(path) is False, f"byte {at - len(good)} of the file's end"
        with pytest.raises(DataError, match=r"epoch-0001-step-00000004.pt: damaged"):
            checkpoint.load(path)


def test_a_truncated_file_says_so_and_an_unsealed_one_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "step-00000009.pt"
    checkpoint.save(path, {"format": checkpoint.FORMAT, "w": torch.ones(4096)})
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    assert seal.check(path) is None  # the seal went with the end of the file
    with pytest.raises(DataError, match=r"damaged, truncated or foreign torch archive .*previous good checkpoint"):
        checkpoint.load(path)
    older = tmp_path / "older.pt"
    torch.save({"format": checkpoint.FORMAT, "w": torch.ones(3)}, older)  # written before seals
    assert seal.check(older) is None and checkpoint.load(older)["w"].sum() == 3
    assert seal.sealed_digest(older) is None and seal.sealed_digest(path) is None


def test_a_full_disk_is_one_line_naming_the_file_and_the_space_needed(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "best.pt"
    path.write_bytes(b"previous")
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda p: real(p)._replace(free=1000))
    with pytest.raises(OutOfSpace, match=r"best.pt: out of disk space while writing it \(it needs [\d.]+ MiB, "
                                         r"0.0 MiB free there\); the previous file is kept"):
        checkpoint.save(path, {"format": checkpoint.FORMAT, "w": torch.ones(100_000)})
    assert path.read_bytes() == b"previous" and [p.name for p in tmp_path.iterdir()] == ["best.pt"]


def test_a_damaged_newest_checkpoint_is_skipped_and_training_ends_where_it_would_have(corpus, tmp_path: Path,
                                                                                       caplog) -> None:
    tokens, vocab = corpus
    straight, _ = train(TINY_MODEL, tiny_train(max_steps=8, epochs=5), vocab, tokens, tmp_path / "straight")
    train(TINY_MODEL, tiny_train(max_steps=4, epochs=5, save_every=2), vocab, tokens, tmp_path / "run")
    newest = checkpoint.CheckpointDir(tmp_path / "run", 3).latest()
    assert newest is not None and newest.name == "step-00000004.pt"
    flip_bit(newest)
    resumed, prog = train(TINY_MODEL, tiny_train(max_steps=8, epochs=5, save_every=2), vocab, tokens,
                          tmp_path / "run")
    assert "step-00000004.pt: damaged" in caplog.text and "resuming from the checkpoint before it" in caplog.text
    assert prog.step == 8
    for key, value in straight.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[key]), key


def test_a_kill_between_the_epoch_checkpoint_and_best_pt_ships_the_best_epoch(corpus, tmp_path: Path,
                                                                              monkeypatch, caplog) -> None:
    """Epoch 2 improves; the run dies after its checkpoint, before best.pt is replaced (best.pt still
    holds epoch 1): the re-run ships epoch 2's weights, the update its records name."""
    tokens, vocab = corpus
    losses = iter([5.0, 4.0] * 2)
    monkeypatch.setattr(train_module, "validation_loss", lambda *a, **k: next(losses))
    cfg = tiny_train(epochs=2, average_last=0, val_bleu_sentences=0, early_stop_metric="val_loss")
    tokens_dir, vocab_dir = corpus
    paths = TrainPaths(vocab_dir, tokens_dir, tokens_dir.parent / "bin", tmp_path / "ckpt", tmp_path / "model.pt",
                       tmp_path / "reports", tmp_path / "train_reports")
    real_save, saves = checkpoint.save, []

    def killed_before_best(path: Path, state: dict) -> None:
        if Path(path).name == "best.pt" and state["epoch"] == 2:
            raise KeyboardInterrupt  # as a SIGKILL would: nothing after the epoch's checkpoint ran
        saves.append(Path(path).name)
        real_save(path, state)

    monkeypatch.setattr(checkpoint, "save", killed_before_best)
    with pytest.raises(KeyboardInterrupt):
        train_stage(TINY_MODEL, cfg, TokenizeConfig(), paths)
    epochs = checkpoint.CheckpointDir(paths.checkpoints, 3).epochs()
    assert len(epochs) == 2 and checkpoint.load(paths.checkpoints / "best.pt")["epoch"] == 1
    monkeypatch.setattr(checkpoint, "save", real_save)
    train_stage(TINY_MODEL, cfg, TokenizeConfig(), paths)
    shipped, second = checkpoint.load(paths.model), checkpoint.load(epochs[1])
    assert shipped["final"]["how"] == f"best epoch checkpoint (update {second['step']})"
    assert all(torch.equal(v, second["model"][k]) for k, v in shipped["model"].items())
    assert "best.pt holds update" in caplog.text


def test_a_best_pt_whose_update_is_gone_is_an_error_not_another_epochs_weights(tmp_path: Path) -> None:
    root = tmp_path / "ckpt"
    checkpoint.save(root / "best.pt", {"format": checkpoint.FORMAT, "step": 4, "model": {}})
    model = torch.nn.Linear(2, 2)
    with pytest.raises(DataError, match=r"best.pt: holds update 4, the run's records name update 9 as best"):
        final_weights(model, tiny_train(average_last=0), checkpoint.CheckpointDir(root, 3), best_step=9)
    assert sorted(p.name for p in root.iterdir()) == ["best.pt"]  # nothing removed or written
