"""The training loop: learning, reproducibility, bf16 autocast, exact resume, SIGTERM checkpoint, NaN stop,
early stopping, BPE-dropout."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from nmt.config.model import ModelConfig
from nmt.decode.backend import greedy
from nmt.errors import ConfigError, TrainingDiverged, TrainingInterrupted
from nmt.model import checkpoint
from nmt.text.vocabularies import load_vocabularies
from nmt.train import loop as train_module
from nmt.train import resume as resume_module
from nmt.train import step as step_module
from nmt.train.batching import collate, load_pairs
from nmt.train.loop import train
from support.train import TINY_MODEL, copy_corpus, tiny_train


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    return copy_corpus(tmp_path / "corpus", n_train=120, n_val=16)


def weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_exact_resume(corpus, tmp_path: Path) -> None:
    tokens, vocab = corpus
    cfg = tiny_train(max_steps=10, epochs=5)  # 120 pairs / ~21 per batch: the run crosses an epoch end
    straight, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "a")
    _, half = train(TINY_MODEL, tiny_train(max_steps=5, epochs=5), vocab, tokens, tmp_path / "b")
    assert half.step == 5
    resumed, prog = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "b")
    assert prog.step == 10
    a, b = weights(straight), weights(resumed)
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_a_shorter_budget_than_the_checkpoint_trains_from_scratch(corpus, tmp_path: Path, caplog) -> None:
    """max_steps below what the checkpoint has done is a different model, not a resumption (a
    `dvc exp run -S train.max_steps=...` must get the model its params say)."""
    tokens, vocab = corpus
    train(TINY_MODEL, tiny_train(max_steps=8, epochs=5), vocab, tokens, tmp_path / "run")
    short, prog = train(TINY_MODEL, tiny_train(max_steps=3, epochs=5), vocab, tokens, tmp_path / "run")
    assert prog.step == 3 and "8 updates in, past train.max_steps=3" in caplog.text
    fresh, _ = train(TINY_MODEL, tiny_train(max_steps=3, epochs=5), vocab, tokens, tmp_path / "fresh")
    assert all(torch.equal(weights(short)[k], weights(fresh)[k]) for k in weights(fresh))


def keep_initial_weights(monkeypatch, hook=None) -> list[dict[str, torch.Tensor]]:
    """Make `train()`'s build_model record each model's initial weights (and apply `hook` to it)."""
    initial, real_build = [], train_module.build_model

    def build_and_record(*args, **kwargs):
        model = real_build(*args, **kwargs)
        initial.append(weights(model))
        if hook is not None:
            hook(model)
        return model

    monkeypatch.setattr(train_module, "build_model", build_and_record)
    return initial


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_same_seed_gives_identical_weights(corpus, tmp_path: Path, precision: str, monkeypatch) -> None:
    """Reproducibility on one machine: two runs of the same seed, bit for bit, in fp32
    and in bf16 autocast (the default on CPUs with native bf16); and they did train: every
    parameter moved from its initial value, and another seed gives other weights."""
    tokens, vocab = corpus
    initial = keep_initial_weights(monkeypatch)
    cfg = tiny_train(max_steps=8, epochs=5, precision=precision)
    a, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "a")
    b, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "b")
    other, _ = train(TINY_MODEL, replace(cfg, seed=cfg.seed + 1), vocab, tokens, tmp_path / "c")
    wa, wb = weights(a), weights(b)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    unmoved = [name for name, _ in a.named_parameters() if torch.equal(wa[name], initial[0][name])]
    assert not unmoved
    assert any(not torch.equal(wa[k], v) for k, v in weights(other).items())


def test_bf16_precision_trains_under_autocast(corpus, tmp_path: Path, monkeypatch) -> None:
    """train.precision=bf16: the training forward passes run under CPU bf16 autocast (every
    Linear's output is bfloat16) while the weights stay fp32; fp32: no autocast."""
    tokens, vocab = corpus
    assert train_module.use_bf16("bf16", torch.device("cpu")) and not train_module.use_bf16("fp32", torch.device("cpu"))
    seen: list[tuple[bool, torch.dtype]] = []  # (autocast on, output dtype) of Linear layers while training

    def record(module, inputs, output) -> None:
        if module.training:
            seen.append((torch.is_autocast_enabled("cpu"), output.dtype))

    def hook(model: torch.nn.Module) -> None:
        for layer in model.modules():
            if isinstance(layer, torch.nn.Linear):
                layer.register_forward_hook(record)

    keep_initial_weights(monkeypatch, hook)
    fp32, _ = train(TINY_MODEL, tiny_train(max_steps=3, precision="fp32"), vocab, tokens, tmp_path / "a")
    assert seen and set(seen) == {(False, torch.float32)}
    seen.clear()
    bf16, _ = train(TINY_MODEL, tiny_train(max_steps=3, precision="bf16"), vocab, tokens, tmp_path / "b")
    assert seen and set(seen) == {(True, torch.bfloat16)}
    w32, w16 = weights(fp32), weights(bf16)
    assert any(not torch.equal(w32[k], w16[k]) for k in w32)  # the matmuls really ran in bf16
    assert all(v.dtype == torch.float32 for v in w16.values() if v.is_floating_point())  # weights stay fp32


def test_sigterm_finishes_the_update_checkpoints_and_resumes(corpus, tmp_path: Path, monkeypatch) -> None:
    tokens, vocab = corpus
    real_update, calls = step_module.update, []

    def update_then_sigterm(*args, **kwargs):
        calls.append(1)
        result = real_update(*args, **kwargs)
        if len(calls) == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return result

    monkeypatch.setattr(step_module, "update", update_then_sigterm)
    with pytest.raises(TrainingInterrupted, match="stopped at update 3"):
        train(TINY_MODEL, tiny_train(max_steps=6), vocab, tokens, tmp_path / "run")
    saved = checkpoint.load(tmp_path / "run" / "step-00000003.pt")
    assert saved["step"] == 3 and saved["batch"] == 3
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handler restored
    monkeypatch.setattr(step_module, "update", real_update)
    resumed, prog = train(TINY_MODEL, tiny_train(max_steps=6), vocab, tokens, tmp_path / "run")
    straight, _ = train(TINY_MODEL, tiny_train(max_steps=6), vocab, tokens, tmp_path / "straight")
    assert prog.step == 6
    for key, value in weights(straight).items():
        assert torch.equal(value, resumed.state_dict()[key]), key


def test_nan_loss_stops_with_step_and_keeps_last_good_checkpoint(corpus, tmp_path: Path, monkeypatch) -> None:
    tokens, vocab = corpus
    real_forward, calls = train_module.LabelSmoothingKL.forward, []

    def poisoned(self, logits, target):
        calls.append(1)
        total, count = real_forward(self, logits, target)
        return (total * float("nan"), count) if len(calls) == 4 else (total, count)

    monkeypatch.setattr(train_module.LabelSmoothingKL, "forward", poisoned)
    with pytest.raises(TrainingDiverged, match=r"loss is nan at update 4 \(epoch 1, batches 3-3\)") as err:
        train(TINY_MODEL, tiny_train(max_steps=8, save_every=1), vocab, tokens, tmp_path / "run")
    assert "step-00000003.pt" in str(err.value)
    good = checkpoint.load(tmp_path / "run" / "step-00000003.pt")
    assert all(torch.isfinite(v).all() for v in good["model"].values() if v.is_floating_point())
    assert not (tmp_path / "run" / "step-00000004.pt").exists()


def test_on_an_accelerator_losses_are_read_once_a_window_and_a_nan_update_is_skipped(corpus, tmp_path: Path,
                                                                                     monkeypatch) -> None:
    """With lazy checks (an accelerator's mode, forced here on the CPU), the losses stay on the device
    until a log point reads a window of them at once; a NaN loss inside the window still names its
    own update, and the fused Adam skipped that update on the device, so the weights stay finite."""
    tokens, vocab = corpus
    monkeypatch.setattr(train_module, "lazy_loss_checks", lambda device: True)
    real_forward, real_check, calls, reads = train_module.LabelSmoothingKL.forward, train_module.check_losses, [], []

    def poisoned(self, logits, target):
        calls.append(1)
        total, count = real_forward(self, logits, target)
        return (total * float("nan"), count) if len(calls) == 2 else (total, count)

    def counted(run, prog, pending):
        reads.append(len(pending))
        return real_check(run, prog, pending)

    monkeypatch.setattr(train_module, "check_losses", counted)
    _, prog = train(TINY_MODEL, tiny_train(max_steps=8, log_every=4, epochs=10), vocab, tokens, tmp_path / "lazy")
    assert prog.step == 8 and sum(reads) == 8 and len(reads) < 8 and max(reads) == 4
    weights_seen = []
    real_step = step_module.update

    def update_and_look(run, group):
        out = real_step(run, group)
        weights_seen.append(all(torch.isfinite(p).all() for p in run.model.parameters()))
        return out

    monkeypatch.setattr(step_module, "update", update_and_look)
    monkeypatch.setattr(train_module.LabelSmoothingKL, "forward", poisoned)
    with pytest.raises(TrainingDiverged, match=r"loss is nan at update 2 \(epoch 1, batches 1-1\)"):
        train(TINY_MODEL, tiny_train(max_steps=8, log_every=4, epochs=10), vocab, tokens, tmp_path / "nan")
    assert len(weights_seen) == 4 and all(weights_seen)  # read at update 4; the NaN update left no trace


def test_early_stopping_after_patience_epochs_without_improvement(corpus, tmp_path: Path, monkeypatch) -> None:
    tokens, vocab = corpus
    scores = iter([5.0, 7.0, 6.0, 6.5, 9.0, 9.0])
    monkeypatch.setattr(train_module, "greedy_bleu", lambda *a, **k: next(scores))
    _, prog = train(TINY_MODEL, tiny_train(epochs=6, patience=2), vocab, tokens, tmp_path / "run")
    assert prog.epoch == 4  # best at epoch 2 (7.0), then two epochs without improvement
    assert prog.best == 7.0 and prog.bad_epochs == 2
    best = checkpoint.load(tmp_path / "run" / "best.pt")
    assert best["epoch"] == 2


def test_early_stopping_on_val_loss_keeps_the_lowest_loss(corpus, tmp_path: Path, monkeypatch) -> None:
    """early_stop_metric: val_loss: lower is better, for best.pt and for patience."""
    tokens, vocab = corpus
    losses = iter([5.0, 4.0, 4.5, 4.2, 3.0, 3.0])
    monkeypatch.setattr(train_module, "validation_loss", lambda *a, **k: next(losses))
    cfg = tiny_train(epochs=6, patience=2, val_bleu_sentences=0, early_stop_metric="val_loss")
    _, prog = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "run")
    assert prog.epoch == 4 and prog.best == 4.0 and prog.bad_epochs == 2
    assert checkpoint.load(tmp_path / "run" / "best.pt")["epoch"] == 2


def test_early_stopping_never_watches_another_metric_than_its_own(corpus, tmp_path: Path) -> None:
    """val_bleu without BLEU sentences (TrainConfig refuses it; forced here to reach the loop)
    is an error, not val_loss watched as if higher were better (best.pt at the worst epoch)."""
    tokens, vocab = corpus
    cfg = tiny_train(epochs=3, val_bleu_sentences=0, early_stop_metric="val_loss")
    object.__setattr__(cfg, "early_stop_metric", "val_bleu")
    with pytest.raises(KeyError, match="val_bleu"):
        train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "run")


def test_copy_task_learns(tmp_path: Path) -> None:
    """The Annotated Transformer's copy task learns: >= 90% greedy token accuracy on val (chance:
    10%), on CPU in about 30 s, trained in fp32 (auto would train in bf16 on CPUs with
    AVX512-BF16 or AMX only). Where the bound comes from: each host trains another model (its
    kernels round otherwise), as another corpus seed does, so the bound sits far below the spread
    of such models, not at one host's figure. Measured in fp32 at one thread (Intel Xeon with
    AMX): corpus seeds 1, 2, 3 gave 100%, 97.4%, 100% after 30 epochs (98% failed seed 2); seed 1
    in bf16 100%; a training stopped early is far below or near the line (3 epochs 23.4%, 8 epochs
    93.8%), and one that learns nothing is at chance."""
    tokens, vocab = copy_corpus(tmp_path / "copy", n_train=2000, n_val=50, symbols=10, length=10, seed=1)
    cfg = tiny_train(max_tokens=1200, epochs=30, warmup=100, lr_factor=0.5, val_bleu_sentences=0, patience=30,
                     log_every=50, num_threads=1, precision="fp32")  # the same kind of model on every host
    model, _ = train(ModelConfig(n_layers=2, d_model=128, n_heads=4, d_ff=256, dropout=0.0, max_len=64),
                     cfg, vocab, tokens, tmp_path / "run")
    model.eval()
    vocabs = load_vocabularies(vocab)
    val = load_pairs(tokens, "val", vocabs)
    batch = collate(val, list(range(len(val))))
    hyps = greedy(model, batch.src)
    right = total = 0
    for hyp, (_, tgt) in zip(hyps, val):
        gold = tgt[1:-1]
        right += sum(h == g for h, g in zip(hyp, gold))
        total += len(gold)
    assert right / total >= 0.9, right / total


def test_checkpoints_of_another_configuration_are_not_resumed(corpus, tmp_path: Path, caplog, monkeypatch) -> None:
    tokens, vocab = corpus
    train(TINY_MODEL, tiny_train(max_steps=2), vocab, tokens, tmp_path / "run")
    # more epochs / steps: the same run, continued
    _, prog = train(TINY_MODEL, tiny_train(max_steps=3, epochs=9), vocab, tokens, tmp_path / "run")
    assert prog.history[0]["step"] == 1 and prog.step == 3
    # another model size: starts over, the old checkpoints are removed
    _, prog = train(replace(TINY_MODEL, d_ff=48), tiny_train(max_steps=2), vocab, tokens, tmp_path / "run")
    assert "model section of params.yaml changed" in caplog.text
    assert prog.step == 2 and [h["step"] for h in prog.history if "train_loss" in h] == [1, 2]
    # other training code (DVC re-runs the stage after a code change): starts over
    monkeypatch.setattr(resume_module, "code_fingerprint", lambda: "other code")
    _, prog = train(replace(TINY_MODEL, d_ff=48), tiny_train(max_steps=2), vocab, tokens, tmp_path / "run")
    assert "training code changed" in caplog.text and prog.history[0]["step"] == 1
    # a rebuilt vocabulary: starts over as well
    other_tokens, other_vocab = copy_corpus(tmp_path / "other", n_train=50, n_val=5, symbols=7)
    _, prog = train(replace(TINY_MODEL, d_ff=48), tiny_train(max_steps=1), other_vocab, other_tokens, tmp_path / "run")
    assert "vocabulary was rebuilt" in caplog.text and prog.step == 1
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["step-00000001.pt"]


def test_dvclive_in_a_repository_without_commits_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    from nmt.errors import NmtError
    from nmt.train.live import open_live

    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NmtError, match="make a first commit"):
        open_live(tmp_path / "live", resume=False)


def test_bpe_dropout_resegments_every_epoch_and_resumes_exactly(tmp_path: Path) -> None:
    """train.bpe_dropout: each epoch's training pairs are a fresh sample (so they differ from the
    deterministic segmentation and from epoch to epoch), drawn from the seed and the epoch so that
    an interrupted run resumes to the same weights."""
    from nmt.config.data import VocabConfig
    from nmt.train.batching import epoch_pairs, load_token_pairs

    tokens, vocab = copy_corpus(tmp_path / "bpe", n_train=120, n_val=16, symbols=30,
                                vocab=VocabConfig(kind="bpe", joint=True, min_freq=1, bpe_merges=40))
    vocabs = load_vocabularies(vocab)
    token_pairs = load_token_pairs(tokens, "train", vocabs)
    plain = load_pairs(tokens, "train", vocabs, 64)
    e0, e1 = (epoch_pairs(token_pairs, vocabs, 64, 0.3, seed=1, epoch=e) for e in (0, 1))
    assert e0 != plain and e0 != e1 and e0 == epoch_pairs(token_pairs, vocabs, 64, 0.3, seed=1, epoch=0)
    assert sum(len(s) + len(t) for s, t in e0) > sum(len(s) + len(t) for s, t in plain)  # finer pieces
    cfg = tiny_train(max_steps=10, epochs=5, bpe_dropout=0.3)
    straight, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "a")
    train(TINY_MODEL, tiny_train(max_steps=5, epochs=5, bpe_dropout=0.3), vocab, tokens, tmp_path / "b")
    resumed, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "b")
    a, b = weights(straight), weights(resumed)
    assert all(torch.equal(a[k], b[k]) for k in a)
    without, _ = train(TINY_MODEL, tiny_train(max_steps=10, epochs=5), vocab, tokens, tmp_path / "c")
    assert not all(torch.equal(a[k], v) for k, v in weights(without).items())


def test_bpe_dropout_on_a_word_level_vocabulary_is_a_config_error(corpus, tmp_path: Path) -> None:
    tokens, vocab = corpus
    with pytest.raises(ConfigError, match="train.bpe_dropout=0.1 needs a BPE vocabulary"):
        train(TINY_MODEL, tiny_train(bpe_dropout=0.1), vocab, tokens, tmp_path / "run")
