"""`train.loss_chunk`: the output layer and the label-smoothed loss run together a chunk of target
positions at a time (`LabelSmoothingKL.projected`), giving the loss and gradients of the whole-logits
path without making the (tokens x vocab) logits whole."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import torch

from nmt.config.loader import from_dict
from nmt.config.train import TrainConfig
from nmt.errors import ConfigError
from nmt.train.loop import train
from nmt.train.loss import LabelSmoothingKL
from support.train import TINY_MODEL, copy_corpus, tiny_train

V, D = 61, 16


def inputs(n: int = 37, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    hidden = torch.randn(n, D, generator=gen, requires_grad=True)
    weight = (torch.randn(V, D, generator=gen) * 0.3).requires_grad_()
    target = torch.randint(1, V, (n,), generator=gen)
    target[::5] = 0  # <pad> rows: no loss, no gradient
    return hidden, weight, target


def whole(criterion: LabelSmoothingKL, hidden, weight, target, scale: float = 1.0):
    total, count = criterion.masked(hidden @ weight.T, target)
    hg, wg = torch.autograd.grad(total * scale, (hidden, weight))
    return total.detach(), count, hg, wg


@pytest.mark.parametrize("chunk", [1, 8, 36, 37, 1000])
def test_chunks_give_the_whole_logits_loss_and_gradients(chunk: int) -> None:
    criterion = LabelSmoothingKL(V, 0.1)
    hidden, weight, target = inputs()
    want, want_n, want_hg, want_wg = whole(criterion, hidden, weight, target, scale=0.5)
    got, got_n = criterion.projected(hidden, weight, target, chunk)
    hg, wg = torch.autograd.grad(got * 0.5, (hidden, weight))  # the incoming gradient scales both
    assert got_n == want_n == int((target != 0).sum())
    torch.testing.assert_close(got.detach(), want, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(hg, want_hg, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(wg, want_wg, rtol=1e-4, atol=1e-6)
    assert hg[::5].abs().max() == 0  # the <pad> rows


def test_batched_states_and_bf16_autocast_match_the_whole_logits_path() -> None:
    criterion = LabelSmoothingKL(V, 0.1)
    hidden, weight, target = inputs(n=48)
    states, ids = hidden.view(4, 12, D), target.view(4, 12)  # (B, T, d), (B, T): the every-position path
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want, _ = criterion.masked(torch.nn.functional.linear(states, weight), ids)
        got, _ = criterion.projected(states, weight, ids, 16)
    assert abs(got.item() - want.item()) < 1e-2 * want.item()  # both products in bf16, summed apart
    hg, wg = torch.autograd.grad(got, (hidden, weight))
    assert hg.dtype == hidden.dtype and wg.dtype == weight.dtype and torch.isfinite(wg).all()


def test_no_gradients_are_made_without_autograd() -> None:
    criterion = LabelSmoothingKL(V, 0.1)
    hidden, weight, target = inputs()
    with torch.no_grad():
        total, _ = criterion.projected(hidden, weight, target, 8)
    assert total.grad_fn is None and total.item() == pytest.approx(criterion.masked(hidden @ weight.T, target)[0]
                                                                  .item(), rel=1e-5)


def test_a_negative_chunk_is_refused_by_the_config() -> None:
    with pytest.raises(ConfigError, match="loss_chunk"):
        from_dict(TrainConfig, {"loss_chunk": -1}, key="train")


@pytest.mark.parametrize("positions", ["real", "all"])
def test_training_with_chunks_learns_what_the_whole_logits_learn(tmp_path: Path, positions: str) -> None:
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=120, n_val=16, length=(3, 12))
    fixed = {"max_steps": 6, "epochs": 10, "precision": "fp32", "val_bleu_sentences": 0, "loss_positions": positions}
    model = replace(TINY_MODEL, dropout=0.0)
    _, plain = train(model, tiny_train(**fixed), vocab, tokens, tmp_path / "plain")
    _, chunked = train(model, tiny_train(**fixed, loss_chunk=7), vocab, tokens, tmp_path / "chunked")
    losses = [[h["train_loss"] for h in prog.history if "train_loss" in h] for prog in (plain, chunked)]
    assert chunked.step == plain.step == 6 and len(losses[0]) > 0
    assert torch.allclose(torch.tensor(losses[0]), torch.tensor(losses[1]), rtol=1e-4)
    val = [next(h["val_loss"] for h in reversed(prog.history) if "val_loss" in h) for prog in (plain, chunked)]
    assert abs(val[0] - val[1]) < 1e-3 * val[0]
