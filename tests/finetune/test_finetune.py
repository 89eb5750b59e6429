"""Fine-tuning: a parent trained on the copy task continued on a substitution task (each symbol the next
one) with the parent's
vocabularies; its weights are the start, the new task is learned, the parent's pairs are replayed by
share, an interrupted fine-tune resumes to the same weights, and bad input is a clear error."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from nmt.config.data import DataConfig, TokenizeConfig
from nmt.config.finetune import FinetuneConfig
from nmt.config.loader import from_dict
from nmt.errors import ConfigError, DataError, TrainingInterrupted
from nmt.finetune import loop
from nmt.finetune.loop import Deadline, FinetuneSchedule, finetune, load_parent
from nmt.finetune.parent import ParentPaths, parent_stage
from nmt.finetune.replay import epoch_mix, replay_count
from nmt.model import checkpoint
from nmt.text.vocabularies import load_vocabularies
from nmt.train.loop import train
from nmt.train.loss import LabelSmoothingKL
from nmt.train.monitor import validation_loss
from nmt.train.pairs import PairArrays, open_split
from support.train import TINY_MODEL, binarized, copy_corpus, tiny_train, write_split

CFG = tiny_train(max_len=16, val_bleu_sentences=0, epochs=50, patience=50,
                 precision="fp32")  # parent and fine-tune alike on every host (auto: bf16 on some CPUs only)
FT = FinetuneConfig(lr=3e-3, warmup=5, cooldown=0.2, max_steps=60, max_minutes=None, replay=0.3)
SYMBOLS = 6


def data_config(direction: str = "de-en") -> DataConfig:
    return from_dict(DataConfig, {"corpus": "c", "direction": direction, "corpora": {"c": {
        "languages": ["de", "en"], "files": [{"name": "x", "url": "file:///x", "sha256": "0" * 64}],
        "splits": {"train": {"de": "x", "en": "x"}, "val": {"de": "x", "en": "x"}}}}}, key="data")


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict[str, Path]:
    """A parent trained on copying (its last epoch checkpoint) and the substitution task binarized with
    its vocabularies (the finetune-parent stage's output)."""
    root = tmp_path_factory.mktemp("finetune")
    tokens, vocab = copy_corpus(root / "parent", n_train=300, n_val=16, symbols=SYMBOLS, length=(2, 8))
    parent_bin = binarized(tokens, vocab)
    train(TINY_MODEL, replace(CFG, max_steps=150, warmup=20), vocab, tokens, root / "parent-ckpt", bin_dir=parent_bin)
    parent = checkpoint.CheckpointDir(root / "parent-ckpt", 3).latest()
    new_tokens = root / "new" / "tokens"
    new_tokens.mkdir(parents=True)
    rng = random.Random(1)
    for split, n in (("train", 200), ("val", 16)):
        src = [[f"s{rng.randrange(SYMBOLS)}" for _ in range(rng.randint(2, 8))] for _ in range(n)]
        write_split(new_tokens, split, src, [[f"s{(int(t[1:]) + 1) % SYMBOLS}" for t in s] for s in src])
    new_vocab = root / "new-vocab"
    parent_stage(data_config(), TokenizeConfig(), ParentPaths(parent, new_tokens, new_vocab, root / "reports"))
    return {"parent": parent, "parent_bin": parent_bin, "vocab": new_vocab,
            "bin": binarized(new_tokens, new_vocab, root / "new-bin"), "root": root}


def run(world: dict[str, Path], out: str, ft: FinetuneConfig = FT, replay: bool = True):
    return finetune(load_parent(world["parent"]), ft, CFG, world["vocab"], world["bin"],
                    world["parent_bin"] if replay else None, world["root"] / out)


def val_loss(model: torch.nn.Module, world: dict[str, Path]) -> float:
    vocabs = load_vocabularies(world["vocab"])
    return validation_loss(model, open_split(world["bin"], "val", vocabs), LabelSmoothingKL(len(vocabs.tgt), 0.1),
                           256, torch.device("cpu"), False)


def test_the_parent_stage_writes_the_parents_vocabularies(world) -> None:
    parent = load_parent(world["parent"])
    written = load_vocabularies(world["vocab"])
    assert written.hashes == parent.vocabs.hashes and written.direction == "de-en"


def test_the_fine_tune_starts_from_the_parent_and_learns_the_new_task(world) -> None:
    """A rate too small to move the weights leaves the parent's; the schedule learns the substitution:
    val loss on it below 0.95 of the parent's after 60 updates. Where 0.95 comes from: each host
    trains another parent and fine-tune (its kernels round otherwise), as another `train.seed`
    does, so the bound sits above the spread of such runs, not at one run's figure. Measured in
    fp32 (Intel Xeon with AMX): 0.767, 0.779, 0.824, 0.670 of the parent's loss for seeds 1234, 1,
    2, 3 (0.85, the bound before, was 0.03 from seed 2), 0.746 in bf16; a fine-tune that does not
    learn stays at 1 (the untouched model is the parent, checked first)."""
    parent = load_parent(world["parent"])
    still, _, _ = run(world, "still", replace(FT, lr=1e-12, max_steps=2, warmup=1, replay=0.0), replay=False)
    for name, weight in still.state_dict().items():
        assert torch.allclose(weight, parent.state["model"][name], atol=1e-6), name
    tuned, prog, why = run(world, "tuned")
    assert prog.step == FT.max_steps and "max_steps" in why
    assert val_loss(tuned, world) < 0.95 * val_loss(still, world), (val_loss(tuned, world), val_loss(still, world))


def test_the_schedule_warms_up_holds_and_anneals_to_zero() -> None:
    s = FinetuneSchedule(lr=1e-4, warmup=10, cooldown=0.2, max_steps=100)
    assert s(0) == pytest.approx(1e-5) and s(9) == pytest.approx(1e-4) and s(50) == pytest.approx(1e-4)
    assert s(80) == pytest.approx(1e-4) and s(90) == pytest.approx(0.5e-4) and s(99) == pytest.approx(5e-6)
    assert s(100) == 0.0


def test_replay_is_its_share_of_each_epoch_and_drawn_afresh(world) -> None:
    vocabs = load_vocabularies(world["vocab"])
    new, old = open_split(world["bin"], "train", vocabs), open_split(world["parent_bin"], "train", vocabs)
    assert replay_count(200, 0.3) == 86 and len(old) == 300 and replay_count(200, 0.0) == 0
    first, second = epoch_mix(new, old, 0.3, 1, 0), epoch_mix(new, old, 0.3, 1, 1)
    assert len(first) == len(new) + 86
    assert [p[1].tolist() for p in first][: len(new)] == [p[1].tolist() for p in new]
    parents = {tuple(p[0].tolist()) for p in old}
    assert all(tuple(p[0].tolist()) in parents for p in first[len(new):])
    assert [p[0].tolist() for p in first[len(new):]] != [p[0].tolist() for p in second[len(new):]]
    assert [p[0].tolist() for p in epoch_mix(new, old, 0.3, 1, 0)] == [p[0].tolist() for p in first]
    assert epoch_mix(new, old, 0.0, 1, 0) is new and isinstance(first, PairArrays)


def test_replay_without_the_parents_data_is_a_config_error(world) -> None:
    with pytest.raises(ConfigError, match="finetune.replay is 0.3 .*--replay"):
        run(world, "no-replay-data", replay=False)


class SigtermAfter(Deadline):
    """A Deadline whose SIGTERM arrives once the loop has asked `n` times (mid-epoch: a few updates in)."""

    n = 7

    def __init__(self, minutes: float | None) -> None:
        super().__init__(minutes)
        self.asked = 0

    @property
    def requested(self) -> bool:
        self.asked += 1
        return self.asked > self.n

    @requested.setter
    def requested(self, value: bool) -> None:
        pass


def test_an_interrupted_fine_tune_with_other_settings_is_refused_and_its_checkpoints_kept(world, monkeypatch) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(loop, "Deadline", SigtermAfter)
        with pytest.raises(TrainingInterrupted):
            run(world, "changed")
    kept = {p.name: p.read_bytes() for p in (world["root"] / "changed").iterdir()}
    assert any(name.endswith(".pt") for name in kept) and "finished" not in json.loads(kept["run.json"])
    with pytest.raises(ConfigError, match=r"finetune.lr: 0.003 -> 0.002.*set them back.*or delete"):
        run(world, "changed", replace(FT, lr=2e-3))
    assert {p.name: p.read_bytes() for p in (world["root"] / "changed").iterdir()} == kept
    resumed, prog, _ = run(world, "changed")  # the same settings: resumed, to the weights of a run never stopped
    straight, _, _ = run(world, "straight")
    assert prog.step == FT.max_steps and all(torch.equal(a, b) for a, b in zip(resumed.state_dict().values(),
                                                                              straight.state_dict().values()))


def test_a_finished_fine_tune_gives_way_to_one_with_other_settings(world) -> None:
    run(world, "again", replace(FT, max_steps=10))
    other, prog, _ = run(world, "again", replace(FT, max_steps=10, lr=2e-3))
    fresh, _, _ = run(world, "fresh", replace(FT, max_steps=10, lr=2e-3))
    assert prog.step == 10 and all(torch.equal(a, b) for a, b in zip(other.state_dict().values(),
                                                                     fresh.state_dict().values()))
    assert json.loads((world["root"] / "again" / "run.json").read_text())["finetune"]["lr"] == 2e-3


def test_a_corpus_binarized_with_other_vocabularies_is_refused(world, tmp_path: Path) -> None:
    tokens, own_vocab = copy_corpus(tmp_path / "other", n_train=50, n_val=8, symbols=14, seed=3)
    with pytest.raises(DataError, match="vocabulary is not .*finetune parent stage"):
        finetune(load_parent(world["parent"]), FT, CFG, own_vocab, binarized(tokens, own_vocab), world["parent_bin"],
                 tmp_path / "ckpt")


def test_the_parent_stage_refuses_another_direction_or_casing(world, tmp_path: Path) -> None:
    paths = ParentPaths(world["parent"], world["root"] / "new" / "tokens", tmp_path / "vocab", tmp_path / "reports")
    with pytest.raises(ConfigError, match="direction is en-de, but .* translates de-en.*--direction de-en"):
        parent_stage(data_config("en-de"), TokenizeConfig(), paths)
    with pytest.raises(ConfigError, match="direction is en-de, but .* translates de-en.*--direction de-en"):
        parent_stage(data_config(), TokenizeConfig(), replace(paths, direction="en-de"))
    state = checkpoint.load(world["parent"])
    state["text"] = {"lowercase": True}
    lowered = tmp_path / "lowered.pt"
    checkpoint.save(lowered, state)
    with pytest.raises(ConfigError, match="tokenize.lowercase is False, but .* lowercase: True"):
        parent_stage(data_config(), TokenizeConfig(), replace(paths, parent=lowered))
    assert not (tmp_path / "vocab").exists()


def _stage(world: dict[str, Path], out: Path, kill: str | None = None) -> subprocess.CompletedProcess:
    params = out.parent / "finetune.yaml"
    params.write_text(yaml.safe_dump({"train": asdict(CFG), "finetune": {**asdict(FT), "general_sets": []}}))
    env = {k: v for k, v in os.environ.items() if k != "NMT_KILL_AT"} | ({"NMT_KILL_AT": kill} if kill else {})
    return subprocess.run([sys.executable, "-m", "nmt.finetune.stage", "--params", str(params),
                           "--parent", str(world["parent"]), "--vocab", str(world["vocab"]), "--bin",
                           str(world["bin"]), "--replay", str(world["parent_bin"]), "--checkpoints", str(out / "ckpt"),
                           "--model", str(out / "model.pt"), "--reports", str(out / "reports"), "--train-reports",
                           str(out / "train")], env=env, capture_output=True, text=True, timeout=600)


def test_a_killed_fine_tune_resumes_to_the_weights_of_an_uninterrupted_one(world, tmp_path: Path) -> None:
    straight = _stage(world, tmp_path / "a")
    assert straight.returncode == 0, straight.stderr
    killed = _stage(world, tmp_path / "b", kill="train-update:37")
    assert killed.returncode == -9 and not (tmp_path / "b" / "model.pt").exists()
    resumed = _stage(world, tmp_path / "b")
    assert resumed.returncode == 0, resumed.stderr
    a, b = checkpoint.load(tmp_path / "a" / "model.pt"), checkpoint.load(tmp_path / "b" / "model.pt")
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert b["parent"]["sha256"] == load_parent(world["parent"]).sha256 and b["final"]["step"] == FT.max_steps
    assert np.isfinite(b["final"]["val_loss"])
