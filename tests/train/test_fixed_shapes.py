"""The accelerator's training path: batch lengths padded to a multiple (few distinct shapes for
torch.compile / CUDA graphs) and every target position through the output layer with padding
masked in the loss (no data-dependent shape, no wait on the device). Both compute the same loss
and gradients as the CPU's least-work path (padding trimmed, real positions selected)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import torch

from nmt.model.transformer import Transformer
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID
from nmt.train.batching import collate
from nmt.train.loop import all_positions, train
from nmt.train.loss import LabelSmoothingKL
from support.train import TINY_MODEL, copy_corpus, tiny_train


def pairs(n: int = 12, seed: int = 0):
    rng = random.Random(seed)
    return [([rng.randint(4, 40) for _ in range(rng.randint(1, 13))] + [EOS_ID],
             [BOS_ID] + [rng.randint(4, 40) for _ in range(rng.randint(1, 11))] + [EOS_ID]) for _ in range(n)]


def test_lengths_are_padded_up_to_the_multiple_and_nothing_else_changes() -> None:
    data = pairs()
    plain, padded = collate(data, range(len(data))), collate(data, range(len(data)), multiple=8)
    assert padded.src.shape[1] % 8 == 0 and padded.tgt_in.shape[1] % 8 == 0 and padded.tgt_out.shape[1] % 8 == 0
    assert padded.src.shape[1] > plain.src.shape[1] or plain.src.shape[1] % 8 == 0
    for got, want in ((padded.src, plain.src), (padded.tgt_out, plain.tgt_out)):
        assert torch.equal(got[:, :want.shape[1]], want) and (got[:, want.shape[1]:] == PAD_ID).all()
    width = plain.tgt_in.shape[1]  # the decoder input past it may hold the longest rows' </s>: its label is <pad>
    assert torch.equal(padded.tgt_in[:, :width], plain.tgt_in) and (padded.tgt_out[:, width:] == PAD_ID).all()
    assert padded.n_tgt_tokens == plain.n_tgt_tokens and padded.real_tokens == plain.real_tokens


def loss_and_grads(model: Transformer, batch, all_pos: bool) -> tuple[torch.Tensor, list[torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    criterion = LabelSmoothingKL(50, 0.1)
    if all_pos:
        total, count = criterion.masked(model(batch.src, batch.tgt_in), batch.tgt_out)
    else:
        keep = batch.tgt_out != PAD_ID
        total, count = criterion(model(batch.src, batch.tgt_in, keep), batch.tgt_out[keep])
    (total / count).backward()
    return total.detach(), [p.grad.clone() for p in model.parameters()]


def test_every_position_masked_and_padded_to_8_gives_the_selected_paths_loss_and_gradients() -> None:
    torch.manual_seed(0)
    model = Transformer(TINY_MODEL, 50, 50).eval()  # no dropout: the two paths see the same network
    data = pairs()
    want, want_grads = loss_and_grads(model, collate(data, range(len(data))), all_pos=False)
    got, got_grads = loss_and_grads(model, collate(data, range(len(data)), multiple=8), all_pos=True)
    assert torch.allclose(got, want, rtol=1e-5)
    for g, w in zip(got_grads, want_grads):
        assert torch.allclose(g, w, rtol=1e-4, atol=1e-6)


def test_auto_projects_every_position_on_cuda_only() -> None:
    assert all_positions("auto", torch.device("cuda")) and not all_positions("auto", torch.device("cpu"))
    assert all_positions("all", torch.device("cpu")) and not all_positions("real", torch.device("cuda"))


def test_training_on_the_accelerators_path_learns_what_the_cpus_path_learns(tmp_path: Path) -> None:
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=120, n_val=16, length=(3, 12))
    fixed = {"max_steps": 6, "epochs": 10, "precision": "fp32", "val_bleu_sentences": 0}
    model = replace(TINY_MODEL, dropout=0.0)  # dropout's masks follow the tensors' shapes, which differ here
    _, cpu = train(model, tiny_train(**fixed), vocab, tokens, tmp_path / "cpu")
    _, acc = train(model, tiny_train(**fixed, pad_multiple=8, loss_positions="all"), vocab, tokens, tmp_path / "acc")
    assert acc.step == cpu.step == 6
    # the same updates up to rounding (Adam divides by the gradients' size, so weights are compared
    # through what they do: the training losses update by update, and the validation loss)
    losses = [[h["train_loss"] for h in prog.history if "train_loss" in h] for prog in (cpu, acc)]
    assert torch.allclose(torch.tensor(losses[0]), torch.tensor(losses[1]), rtol=1e-3)
    val = [next(h["val_loss"] for h in reversed(prog.history) if "val_loss" in h) for prog in (cpu, acc)]
    assert abs(val[0] - val[1]) < 1e-2 * val[0]
