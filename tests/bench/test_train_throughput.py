"""bench/train_throughput.py and bench/common/peer_models.py: the peers compute our training step (same loss,
same gradient) from a copy of our weights, with our dropout settings, so the bench's speed ratios
compare like with like."""

from __future__ import annotations

import pytest
import torch

from bench.common.peer_models import PEERS, DenseLabelSmoothing, ManualAttention, TorchTransformer, build
from bench.train_throughput import TOLERANCE, agreement, disagreements
from nmt.config.model import ModelConfig
from nmt.model.transformer import Transformer
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID
from nmt.train.batching import Batch, collate
from nmt.train.loss import LabelSmoothingKL

V = 40  # symbols, the four specials included


def tiny(**kw) -> ModelConfig:
    return ModelConfig(**{"n_layers": 2, "d_model": 32, "n_heads": 4, "d_ff": 64, "max_len": 64, **kw})


def batch(seed: int = 0) -> Batch:
    """Three pairs of different lengths, so both sides have padding."""
    g = torch.Generator().manual_seed(seed)

    def ids(n: int) -> list[int]:
        return torch.randint(4, V, (n,), generator=g).tolist()

    pairs = [(ids(s) + [EOS_ID], [BOS_ID] + ids(t) + [EOS_ID]) for s, t in ((5, 7), (9, 3), (2, 2))]
    b = collate(pairs, [0, 1, 2])
    assert (b.src == PAD_ID).any() and (b.tgt_out == PAD_ID).any()
    return b


def ours(cfg: ModelConfig) -> Transformer:
    torch.manual_seed(0)
    return Transformer(cfg, V, V)


@pytest.mark.isa  # three implementations' float sums compared: also with a lower instruction set forced
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("tie_source", [False, True])
def test_both_peers_compute_our_loss_and_gradient(norm_first: bool, tie_source: bool) -> None:
    figures = agreement(ours(tiny(norm_first=norm_first, tie_source=tie_source)), batch(), 0.1)
    assert set(figures) == {"ours", *PEERS}
    assert disagreements(figures) == []
    for peer in PEERS:
        assert figures[peer]["loss_per_token_rel_diff"] <= TOLERANCE
        assert figures[peer]["grad_norm_rel_diff"] <= TOLERANCE


def test_a_wrong_weight_mapping_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Swapping K and V in nn.MultiheadAttention's in_proj (a plausible mapping slip) must fail the check."""
    copy = TorchTransformer.copy_from

    def swapped(self: TorchTransformer, model: Transformer) -> None:
        copy(self, model)
        with torch.no_grad():
            w = self.tf.decoder.layers[0].multihead_attn.in_proj_weight
            d = w.shape[1]
            w[d:] = torch.cat([w[2 * d:], w[d:2 * d]]).clone()

    monkeypatch.setattr(TorchTransformer, "copy_from", swapped)
    wrong = disagreements(agreement(ours(tiny()), batch(), 0.1))
    assert wrong and all(msg.startswith("torch_nn_transformer:") for msg in wrong)


def test_peers_use_our_dropout_settings() -> None:
    cfg = tiny(dropout=0.1, attn_dropout=0.25)
    straightforward, _ = build("straightforward", ours(cfg), 0.1)
    attn = [m for m in straightforward.modules() if isinstance(m, ManualAttention)]
    assert len(attn) == 3 * cfg.n_layers and all(a.drop.p == 0.25 for a in attn)
    torch_peer, _ = build("torch_nn_transformer", ours(cfg), 0.1)
    mha = [m for m in torch_peer.modules() if isinstance(m, torch.nn.MultiheadAttention)]
    assert len(mha) == 3 * cfg.n_layers and all(m.dropout == 0.25 for m in mha)
    layers = [*torch_peer.tf.encoder.layers, *torch_peer.tf.decoder.layers]
    assert all(isinstance(layer.dropout, torch.nn.Identity) for layer in layers)  # none inside the FFN, as ours
    assert all(layer.dropout1.p == 0.1 and layer.dropout2.p == 0.1 for layer in layers)


def test_dense_label_smoothing_is_ours() -> None:
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(12, V, generator=g, dtype=torch.float64).float()
    target = torch.randint(4, V, (12,), generator=g)
    target[[3, 7]] = PAD_ID
    values, grads = [], []
    for loss in (LabelSmoothingKL(V, 0.1), DenseLabelSmoothing(V, 0.1)):
        x = logits.clone().requires_grad_()
        total, n = loss(x, target)
        total.backward()
        values.append((float(total.detach()), int(n)))
        grads.append(x.grad)
    assert values[0][1] == values[1][1] == 10
    assert values[0][0] == pytest.approx(values[1][0], rel=1e-6)
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-5, atol=1e-6)
