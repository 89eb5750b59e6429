"""Label-smoothing KL loss against the dense reference; the Noam schedule."""

from __future__ import annotations

import pytest
import torch

from nmt.train.loss import LabelSmoothingKL
from nmt.train.schedule import build_optimizer, noam_lr


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
