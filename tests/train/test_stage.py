"""The train stage: the gated, self-contained model file, its gate (failures keep the previous
model; a bad file is a finding, a bug is not), and DDP across two CPU processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from nmt.config.data import TokenizeConfig
from nmt.errors import DataError, GateError
from nmt.model import checkpoint
from nmt.text.vocabularies import load_vocabularies
from nmt.train.batching import load_pairs, make_batches
from nmt.train.stage import TrainPaths, train_stage
from support.corpus import repo_params
from support.train import TINY_MODEL, binarized, copy_corpus, tiny_train


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=120, n_val=16)
    binarized(tokens, vocab)
    return tokens, vocab


def paths(corpus: tuple[Path, Path], root: Path) -> TrainPaths:
    tokens, vocab = corpus
    return TrainPaths(vocab, tokens, tokens.parent / "bin", root / "ckpt", root / "model.pt", root / "reports",
                      root / "train_reports")


def test_train_stage_writes_gated_self_contained_model(corpus, tmp_path: Path) -> None:
    gate = train_stage(TINY_MODEL, tiny_train(epochs=3), TokenizeConfig(), paths(corpus, tmp_path))
    assert gate.success
    state = torch.load(tmp_path / "model.pt", weights_only=True)
    assert "average of 2 epoch checkpoints" in state["final"]["how"]
    assert state["vocab"]["manifest"] == load_vocabularies(corpus[1]).manifest
    assert (tmp_path / "train_reports" / "curves.png").stat().st_size > 1000
    assert (tmp_path / "train_reports" / "live" / "metrics.json").is_file()
    assert (tmp_path / "reports" / "train.json").is_file()


def test_the_stage_trains_from_data_bin_without_reading_token_pairs(corpus, tmp_path: Path, monkeypatch) -> None:
    """bpe_dropout 0: the pairs are memory-mapped from data/bin and the detokenizer comes from
    data/bin/detokenizer.json: no tokens file is opened at all (start-up and finish
    independent of the corpus size)."""
    from nmt.files import lines

    def guarded(read):
        def no_token_file(path, *args, **kwargs):
            assert corpus[0] not in Path(path).parents, f"opened {path}"
            return read(path, *args, **kwargs)
        return no_token_file

    monkeypatch.setattr(lines, "open_raw", guarded(lines.open_raw))
    monkeypatch.setattr(lines, "read_bytes", guarded(lines.read_bytes))
    gate = train_stage(TINY_MODEL, ONE_EPOCH, TokenizeConfig(), paths(corpus, tmp_path))
    assert gate.success and torch.load(tmp_path / "model.pt", weights_only=True)["text"]["detokenizer"]


def test_train_gate_failure_keeps_previous_model(corpus, tmp_path: Path) -> None:
    (tmp_path / "model.pt").write_bytes(b"previous good model")
    with pytest.raises(GateError, match="final validation loss"):
        train_stage(TINY_MODEL, tiny_train(epochs=1, max_val_loss=0.01), TokenizeConfig(), paths(corpus, tmp_path))
    assert (tmp_path / "model.pt").read_bytes() == b"previous good model"
    assert not list(tmp_path.glob("model.candidate*"))


# one epoch, final weights = the last: the model-file check is the stage's only checkpoint.load
ONE_EPOCH = tiny_train(epochs=1, average_last=1, keep_last=1)


def test_a_corrupt_model_file_is_the_gates_finding(corpus, tmp_path: Path, monkeypatch) -> None:
    real_load = checkpoint.load

    def load_truncated(path: Path):
        Path(path).write_bytes(b"PK\x03\x04 cut short")  # the staged file, damaged on disk
        return real_load(path)

    monkeypatch.setattr(checkpoint, "load", load_truncated)
    (tmp_path / "model.pt").write_bytes(b"previous good model")
    with pytest.raises(GateError, match=r"model file: .*not an nmt model file \(a damaged, truncated or foreign torch"):
        train_stage(TINY_MODEL, ONE_EPOCH, TokenizeConfig(), paths(corpus, tmp_path))
    assert (tmp_path / "model.pt").read_bytes() == b"previous good model"


@pytest.mark.parametrize(("function", "bug"), [("load", TypeError), ("check_vocab_hashes", AttributeError)])
def test_a_bug_in_the_model_file_check_is_raised_not_reported_as_a_finding(corpus, tmp_path: Path, monkeypatch,
                                                                          function: str, bug: type) -> None:
    """A programming error in the check propagates with its traceback: it says nothing about the file."""
    def broken(*args, **kwargs):
        raise bug("a bug in the check")

    monkeypatch.setattr(checkpoint, function, broken)
    with pytest.raises(bug, match="a bug in the check"):
        train_stage(TINY_MODEL, ONE_EPOCH, TokenizeConfig(), paths(corpus, tmp_path))
    assert not (tmp_path / "reports" / "train.json").exists()  # no gate report blaming the file


# run under torchrun: the train stage's CLI, recording each rank's training batches and final
# weights (before rank 0 averages checkpoints) to <argv[1]>/rank<R>.pt
DDP_PROBE = """
import os, sys
import torch
from nmt.train import loop, stage

seen, real_collate, real_train = [], loop.collate, stage.train

def collate(pairs, indices, *args):
    seen.append([int(i) for i in indices])
    return real_collate(pairs, indices, *args)

def train(*args, **kwargs):
    model, prog = real_train(*args, **kwargs)
    torch.save({"weights": model.state_dict(), "batches": seen}, f"{sys.argv[1]}/rank{os.environ['RANK']}.pt")
    return model, prog

loop.collate, stage.train = collate, train
sys.exit(stage.main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_ddp_two_cpu_processes_with_gloo(corpus, tmp_path: Path) -> None:
    """Two ranks train one epoch on disjoint shards that together cover it, and end with the
    same weights (DDP averages their gradients)."""
    tokens, vocab = corpus
    params = repo_params()
    params["model"] = dict(vars(TINY_MODEL))
    params["train"].update(max_steps=None, epochs=1, warmup=10, max_tokens=256, log_every=1, val_bleu_sentences=4,
                           keep_last=1, average_last=1, max_val_loss=50.0, num_threads=1, device="cpu")
    params["tokenize"]["lowercase"] = False
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    (tmp_path / "probe.py").write_text(DDP_PROBE)
    with socket.socket() as sock:  # a free port for the rendezvous (port 0 hangs torchrun)
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", port, str(tmp_path / "probe.py"), str(tmp_path),
           "--params", str(tmp_path / "params.yaml"), "--vocab", str(vocab),
           "--tokens", str(tokens), "--bin", str(tokens.parent / "bin"), "--checkpoints", str(tmp_path / "ckpt"),
           "--model", str(tmp_path / "model.pt"),
           "--reports", str(tmp_path / "reports"), "--train-reports", str(tmp_path / "tr")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False,
                         env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "on cpu x2" in run.stderr
    ranks = [torch.load(tmp_path / f"rank{r}.pt", weights_only=True) for r in (0, 1)]

    # the data: disjoint shards of equal size that together are the epoch's batches (less a remainder)
    cfg = tiny_train(max_tokens=256)
    epoch = make_batches(load_pairs(tokens, "train", load_vocabularies(vocab), cfg.max_len), 256, cfg.seed, 0)
    b0, b1 = (r["batches"] for r in ranks)
    assert len(b0) == len(b1) == len(epoch) // 2 >= 2
    assert not {i for b in b0 for i in b} & {i for b in b1 for i in b}
    assert sorted(b0 + b1) == sorted(epoch[: len(epoch) - len(epoch) % 2])

    # the gradients: synchronised, so both ranks end with the same weights although their data differed
    w0, w1 = (r["weights"] for r in ranks)
    assert all(torch.equal(w0[k], w1[k]) for k in w0)
    state = torch.load(tmp_path / "model.pt", weights_only=True)
    assert state["final"]["step"] == len(b0)
    assert all(torch.equal(state["model"][k], w0[k]) for k in w0)  # average_last=1: the final weights


def test_a_data_bin_without_its_detokenizer_fails_before_training(corpus, tmp_path: Path) -> None:
    (corpus[0].parent / "bin" / "detokenizer.json").unlink()
    with pytest.raises(DataError, match=r"detokenizer.json: cannot read the detokenizer .*re-run the binarize stage"):
        train_stage(TINY_MODEL, ONE_EPOCH, TokenizeConfig(), paths(corpus, tmp_path))
    assert not (tmp_path / "ckpt").exists()  # nothing trained
