"""Out of space on a real file system: a small tmpfs filled to its last page, then a stage writes there.

The unit tests of `nmt.files.atomic` fake ENOSPC; these let the kernel say it. Each writer (the
vocab stage's folder, a checkpoint, the export stage's package) must stop with one `OutOfSpace`
line naming what it was writing, keep the previous output whole and leave no temporary behind.
Needs `mount -t tmpfs` (root, as CI runs): skipped where the kernel refuses it.
"""

from __future__ import annotations

import errno
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch

from nmt.errors import OutOfSpace
from nmt.model import checkpoint

pytestmark = pytest.mark.fault
PAGE = 4096


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Callable[[Path | None], Path]]:
    """`full_disk(previous)`: a tmpfs holding a copy of `previous` (a file or folder) as `out`, every other
    page but two taken by a filler file."""
    mounts: list[Path] = []

    def make(previous: Path | None = None) -> Path:
        mnt = tmp_path / f"disk{len(mounts)}"
        mnt.mkdir()
        size = 64 * PAGE + (sum(p.stat().st_size for p in previous.rglob("*")) if previous and previous.is_dir()
                            else previous.stat().st_size if previous else 0)
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()})")
        mounts.append(mnt)
        if previous is not None:
            (shutil.copytree if previous.is_dir() else shutil.copy2)(previous, mnt / "out")
        with open(mnt / "filler", "wb", buffering=0) as fh:  # every page but the last two
            try:
                while True:
                    fh.write(b"\0" * PAGE)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
        with open(mnt / "filler", "r+b") as fh:
            fh.truncate(max(0, (mnt / "filler").stat().st_size - 2 * PAGE))
        return mnt

    yield make
    for mnt in mounts:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_checkpoint_write_on_a_full_disk(tmp_path: Path, full_disk) -> None:
    previous = tmp_path / "best.pt"
    checkpoint.save(previous, {"format": checkpoint.FORMAT, "w": torch.ones(8)})
    disk = full_disk(previous)
    with pytest.raises(OutOfSpace, match=r"out: out of disk space while writing it .*the previous file is kept"):
        checkpoint.save(disk / "out", {"format": checkpoint.FORMAT, "w": torch.ones(200_000)})
    assert (disk / "out").read_bytes() == previous.read_bytes() and checkpoint.load(disk / "out")["w"].sum() == 8
    assert sorted(p.name for p in disk.iterdir()) == ["filler", "out"]


def test_the_vocab_stage_on_a_full_disk(tmp_path: Path, full_disk) -> None:
    from nmt.config.data import TokenizeConfig, ValidateConfig, VocabConfig
    from nmt.data.tokenize import tokenize_corpus
    from nmt.data.validate import validate_corpus
    from nmt.data.vocab import vocab_stage
    from support.corpus import data_config, synthetic_pairs, write_corpus

    splits = {"train": synthetic_pairs(300, seed=1), "val": synthetic_pairs(40, seed=2)}
    data = data_config(write_corpus(tmp_path / "raw", splits))
    validate_corpus(data, ValidateConfig(min_pairs=10, min_train_pairs=100), tmp_path / "raw", tmp_path / "clean",
                    tmp_path / "reports")
    tokenize_corpus(data, TokenizeConfig(), tmp_path / "clean", tmp_path / "tokens", tmp_path / "reports", None)
    cfg = VocabConfig(min_freq=1, min_size=10, max_oov_rate=0.2)
    vocab_stage(data, cfg, tmp_path / "tokens", tmp_path / "vocab", tmp_path / "reports")
    disk = full_disk(tmp_path / "vocab")
    before = _tree(disk / "out")
    with pytest.raises(OutOfSpace, match=r"out of disk space while writing it"):
        vocab_stage(data, cfg, tmp_path / "tokens", disk / "out", tmp_path / "reports")
    assert _tree(disk / "out") == before
    assert sorted(p.name for p in disk.iterdir()) == ["filler", "out"]


def test_the_export_stage_on_a_full_disk(package: Path, model_path: Path, tmp_path: Path, full_disk) -> None:
    from support.onnx import export

    disk = full_disk(package)
    before = _tree(disk / "out")
    with pytest.raises(OutOfSpace, match=r"out of disk space while writing it"):
        export(tmp_path / "export", model_path, out=disk / "out")
    assert _tree(disk / "out") == before
    assert sorted(p.name for p in disk.iterdir()) == ["filler", "out"]
