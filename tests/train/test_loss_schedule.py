"""Label-smoothing KL loss against the dense reference; the Noam schedule and its cooldown."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from nmt.train.loop import train
from nmt.train.loss import LabelSmoothingKL
from nmt.train.schedule import build_optimizer, noam_lr
from support.train import TINY_MODEL, copy_corpus, tiny_train


def dense_reference(logits: torch.Tensor, target: torch.Tensor, eps: float, pad: int = 0) -> torch.Tensor:
    """pytorch-original-transformer's construction: a full (tokens x vocab) target distribution."""
    V = logits.shape[-1]
    logp = torch.log_softmax(logits.reshape(-1, V), dim=-1)
    t = target.reshape(-1)
    dist = torch.full_like(logp, eps / (V - 2))
    dist.scatter_(1, t[:, None], 1.0 - eps)
    dist[:, pad] = 0.0
    dist[t == pad] = 0.0
    return torch.nn.KLDivLoss(reduction="sum")(logp, dist) / (t != pad).sum()


@pytest.mark.parametrize("eps", [0.0, 0.1, 0.3])
def test_matches_dense_kl_div_loss(eps: float) -> None:
    torch.manual_seed(0)
    logits = torch.randn(5, 11, 97, requires_grad=True)
    target = torch.randint(1, 97, (5, 11))
    target[0, 4:] = 0
    target[3, 1:] = 0
    total, count = LabelSmoothingKL(97, eps)(logits, target)
    ours = total / count
    ref = dense_reference(logits, target, eps)
    assert count.item() == int((target != 0).sum())
    assert ours.item() == pytest.approx(ref.item(), abs=1e-5)
    g_ours, = torch.autograd.grad(ours, logits)
    g_ref, = torch.autograd.grad(ref, logits)
    torch.testing.assert_close(g_ours, g_ref, atol=1e-6, rtol=1e-4)


def test_perfect_prediction_gives_zero_loss_without_smoothing() -> None:
    target = torch.tensor([[5, 6, 0]])
    logits = torch.full((1, 3, 10), -1e4)
    logits[0, 0, 5] = logits[0, 1, 6] = 1e4
    total, count = LabelSmoothingKL(10, 0.0)(logits, target)
    assert total.item() == pytest.approx(0.0, abs=1e-4) and count.item() == 2


def test_noam_schedule_shape() -> None:
    d, warmup = 512, 4000
    assert noam_lr(1, d, warmup, 1.0) == pytest.approx(d**-0.5 * warmup**-1.5)
    assert noam_lr(warmup, d, warmup, 1.0) == pytest.approx(d**-0.5 * warmup**-0.5)
    assert noam_lr(warmup, d, warmup, 1.0) > noam_lr(warmup - 1, d, warmup, 1.0)
    assert noam_lr(4 * warmup, d, warmup, 2.0) == pytest.approx(2.0 * d**-0.5 * (4 * warmup) ** -0.5)


def test_optimizer_follows_the_schedule() -> None:
    model = torch.nn.Linear(4, 4)
    opt, sched = build_optimizer(model, d_model=64, warmup=10, factor=2.0)
    assert opt.defaults["betas"] == (0.9, 0.98) and opt.defaults["eps"] == 1e-9
    for step in range(1, 25):
        assert opt.param_groups[0]["lr"] == pytest.approx(noam_lr(step, 64, 10, 2.0))
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
        sched.step()


def test_cooldown_anneals_the_last_share_linearly_to_zero() -> None:
    d, warmup, total = 256, 100, 1000
    plain = [noam_lr(s, d, warmup, 0.7) for s in range(1, total + 1)]
    cooled = [noam_lr(s, d, warmup, 0.7, total=total, cooldown=0.3) for s in range(1, total + 1)]
    assert cooled[:701] == plain[:701]  # warm-up and the paper's decay untouched before the last 30%
    assert cooled[701] == pytest.approx(plain[701] * 299 / 300)  # update 702: the first annealed one
    assert cooled[-1] == pytest.approx(plain[-1] / 300)  # the last planned update: one step above 0
    assert all(a > b for a, b in zip(cooled[700:], cooled[701:], strict=False))
    assert noam_lr(total + 5, d, warmup, 0.7, total=total, cooldown=0.3) == 0.0  # past the plan: no updates
    assert noam_lr(total, d, warmup, 0.7, total=None, cooldown=0.3) == plain[-1]  # no plan: the paper's rate


def test_optimizer_anneals_to_the_planned_total() -> None:
    model = torch.nn.Linear(4, 4)
    opt, sched = build_optimizer(model, d_model=64, warmup=5, factor=1.0, total=20, cooldown=0.5)
    rates = []
    for _ in range(20):
        rates.append(opt.param_groups[0]["lr"])
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
        sched.step()
    assert rates[9] == pytest.approx(noam_lr(10, 64, 5, 1.0))
    assert rates[-1] == pytest.approx(noam_lr(20, 64, 5, 1.0) / 10)
    assert opt.param_groups[0]["lr"] == 0.0


def test_a_training_run_anneals_to_zero_at_its_last_update(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The loop plans epochs x an epoch's updates: the rate after the last one is 0, the first half untouched;
    changing the epochs changes where the cooldown ends, so a checkpoint of the other plan is not resumed."""
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=120, n_val=16)
    cfg = tiny_train(epochs=2, cooldown=0.5, log_every=1, patience=2, val_bleu_sentences=0)
    _, prog = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "run")
    rates = [r["lr"] for r in prog.history if "lr" in r]  # each: the rate of the update after that record's
    assert len(rates) == prog.step and prog.step % 2 == 0
    assert rates[-1] == 0.0 and min(rates[:-1]) > 0.0
    half = prog.step // 2
    assert rates[half - 2] == pytest.approx(noam_lr(half, TINY_MODEL.d_model, cfg.warmup, cfg.lr_factor))
    assert rates[-2] == pytest.approx(noam_lr(prog.step, TINY_MODEL.d_model, cfg.warmup, cfg.lr_factor) / half)
    _, longer = train(TINY_MODEL, replace(cfg, epochs=3, patience=3), vocab, tokens, tmp_path / "run")
    assert "where train.cooldown anneals to" in caplog.text and longer.step == 3 * half


def test_a_resumed_scheduler_keeps_the_plan_it_started_with() -> None:
    """The schedule is saved with the scheduler's state: a resumed run anneals towards its own total."""
    model = torch.nn.Linear(4, 4)
    opt, sched = build_optimizer(model, d_model=64, warmup=5, factor=1.0, total=20, cooldown=0.5)
    for _ in range(12):
        opt.step()
        sched.step()
    opt2, sched2 = build_optimizer(model, d_model=64, warmup=5, factor=1.0, total=99, cooldown=0.5)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sched.state_dict())
    assert sched2.lr_lambdas[0].total == 20
    assert sched2.get_last_lr()[0] == pytest.approx(noam_lr(13, 64, 5, 1.0, total=20, cooldown=0.5))


def test_the_plan_under_bpe_dropout_counts_the_first_epoch_as_it_trains(tmp_path: Path) -> None:
    from nmt.config.data import VocabConfig
    from nmt.text.vocabularies import load_vocabularies
    from nmt.train.batching import epoch_pairs, length_batches, lengths, load_training_data
    from nmt.train.distributed import Dist
    from nmt.train.loop import planned_updates

    tokens, vocab = copy_corpus(tmp_path / "bpe", n_train=120, n_val=16, symbols=30,
                                vocab=VocabConfig(kind="bpe", joint=True, min_freq=1, bpe_merges=40))
    vocabs = load_vocabularies(vocab)
    cfg = tiny_train(epochs=3, cooldown=0.3, bpe_dropout=0.3, max_tokens=64)
    data = load_training_data(cfg, vocabs, tokens, None)
    first = epoch_pairs(data.tokens, vocabs, cfg.max_len, cfg.bpe_dropout, cfg.seed, 0)
    plain = len(length_batches(*lengths(data.train), cfg.max_tokens, cfg.seed, 0))
    dropped = len(length_batches(*lengths(first), cfg.max_tokens, cfg.seed, 0))
    assert dropped > plain  # finer pieces: more batches than the deterministic segmentation makes
    assert planned_updates(cfg, data, vocabs, Dist()) == 3 * dropped
    assert planned_updates(replace(cfg, max_steps=5), data, vocabs, Dist()) == 5
    assert planned_updates(replace(cfg, cooldown=0.0), data, vocabs, Dist()) is None
