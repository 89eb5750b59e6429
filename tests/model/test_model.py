"""The Transformer: masks, incremental decoding, attention capture, weight tying."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from nmt.config.loader import from_dict
from nmt.config.model import ModelConfig
from nmt.errors import ConfigError
from nmt.model.incremental import DecoderStep, Encoder, empty_cache
from nmt.model.layers import Dropout, causal_mask, sinusoidal_table
from nmt.model.transformer import build_model, padding_mask
from nmt.text.vocab import PAD_ID, SPECIALS, Vocabulary

VOCAB = Vocabulary(list(SPECIALS) + [f"w{i}" for i in range(60)])
OTHER = Vocabulary(list(SPECIALS) + [f"v{i}" for i in range(40)])


def tiny(**kw) -> ModelConfig:
    return ModelConfig(**{"n_layers": 2, "d_model": 32, "n_heads": 4, "d_ff": 64, **kw})


def batch(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, len(VOCAB), (3, 9), generator=g)
    src[0, 6:] = PAD_ID
    tgt = torch.randint(4, len(VOCAB), (3, 7), generator=g)
    return src, tgt


def test_masks() -> None:
    src, _ = batch()
    m = padding_mask(src)
    assert m.shape == (3, 1, 1, 9) and not m[0, 0, 0, 6:].any() and m[1].all()
    c = causal_mask(4)[0, 0]
    assert c.tolist() == [[True, False, False, False], [True, True, False, False],
                          [True, True, True, False], [True, True, True, True]]


@pytest.mark.parametrize("max_len, d_model", [(50, 16), (200, 64), (1, 2)])
def test_sinusoidal_table_matches_formula(max_len: int, d_model: int) -> None:
    """Every entry: PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
    (section 3.5), computed here in float64 with `math`, one element at a time."""
    expected = np.empty((max_len, d_model))
    for pos in range(max_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            expected[pos, 2 * i], expected[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)
    pe = sinusoidal_table(max_len, d_model)
    assert pe.shape == (max_len, d_model) and pe.dtype == torch.float32
    # float32 angles of up to 199 radians: ~1e-5 absolute; a wrong term is off by far more
    np.testing.assert_allclose(pe.numpy(), expected, rtol=0, atol=5e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_incremental_decoding_equals_full_decoding(norm_first: bool) -> None:
    """Two rows per sentence (K = 2), each with its own target: the grouped cross-attention
    must send every row to its own sentence, and the cache must give the full pass's scores."""
    torch.manual_seed(0)
    model = build_model(tiny(norm_first=norm_first), VOCAB, VOCAB).eval()
    src, tgt = batch()
    other = tgt.flip(1).clone()
    other[:, 0] = tgt[:, 0]  # both start with <s>
    B, T = tgt.shape
    full = torch.stack([model(src, tgt), model(src, other)], dim=1).log_softmax(-1)  # (B, 2, T, V)
    step = DecoderStep(model)
    cross, cache = Encoder(model)(src), empty_cache(model, 2 * B)
    rows = torch.arange(2 * B).view(B, 2)
    with torch.no_grad():
        for t in range(T):
            logp, ids, *cache = step(torch.stack([tgt[:, t], other[:, t]], dim=1), rows, src != 0, *cache, *cross)
            expected, expected_ids = full[:, :, t].topk(4, dim=-1)
            torch.testing.assert_close(logp, expected, atol=1e-5, rtol=1e-5)
            assert torch.equal(ids, expected_ids)
    assert cache[0].shape == (2 * B, 4, 8, T) and cache[1].shape == (2 * B, 4, T, 8)


def test_future_target_tokens_do_not_change_earlier_logits() -> None:
    torch.manual_seed(0)
    model = build_model(tiny(), VOCAB, VOCAB).eval()
    src, tgt = batch()
    changed = tgt.clone()
    changed[:, 4:] = 5
    torch.testing.assert_close(model(src, tgt)[:, :4], model(src, changed)[:, :4])


def test_padding_does_not_change_the_translation_of_a_sentence() -> None:
    torch.manual_seed(0)
    model = build_model(tiny(), VOCAB, VOCAB).eval()
    src, tgt = batch()
    alone = model(src[:1, :6], tgt[:1])
    padded = model(src, tgt)[:1]
    torch.testing.assert_close(alone, padded, atol=1e-5, rtol=1e-5)


def test_attention_capture_is_opt_in_and_exact() -> None:
    torch.manual_seed(0)
    model = build_model(tiny(), VOCAB, VOCAB).eval()
    src, tgt = batch()
    plain = model(src, tgt)
    with model.capture_attention() as weights:
        captured = model(src, tgt)
    torch.testing.assert_close(captured, plain, atol=1e-5, rtol=1e-5)
    assert [w.shape for w in weights["encoder"]] == [(3, 4, 9, 9)] * 2
    assert [w.shape for w in weights["cross"]] == [(3, 4, 7, 9)] * 2
    dec = weights["decoder_self"][0]
    assert torch.all(dec.triu(diagonal=1) == 0)  # no attention to the future
    assert torch.all(weights["cross"][0][0, :, :, 6:] == 0)  # none to source padding
    torch.testing.assert_close(dec.sum(-1), torch.ones(3, 4, 7))
    model(src, tgt)
    assert all(not m.capture for m in model.modules() if hasattr(m, "capture"))


def test_weight_tying() -> None:
    tied = build_model(tiny(tie_output=True), VOCAB, OTHER)
    assert tied.generator.weight is tied.tgt_embed.weight
    assert tied.src_embed.weight is not tied.tgt_embed.weight
    untied = build_model(tiny(tie_output=False), VOCAB, OTHER)
    assert untied.generator.weight is not untied.tgt_embed.weight
    shared = build_model(tiny(tie_source=True), VOCAB, VOCAB)
    assert shared.src_embed.weight is shared.tgt_embed.weight is shared.generator.weight


def test_tie_source_with_two_vocabularies_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="model.tie_source.*vocab.joint"):
        build_model(tiny(tie_source=True), VOCAB, OTHER)


def test_model_config_validation_names_the_key() -> None:
    with pytest.raises(ConfigError, match="model.n_heads"):
        from_dict(ModelConfig, {"d_model": 30, "n_heads": 8}, key="model")
    with pytest.raises(ConfigError, match="model.tie_source"):
        from_dict(ModelConfig, {"tie_output": False, "tie_source": True}, key="model")


def test_cpu_autocast_keeps_attention_in_the_fp32_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under CPU bf16 autocast the linear layers run in bf16 but attention gets fp32 inputs:
    PyTorch's bf16 CPU attention kernel (its backward above all) is far slower than fp32."""
    import torch.nn.functional as F

    from nmt.model import layers

    seen: list[torch.dtype] = []
    real = F.scaled_dot_product_attention

    def spy(q, k, v, **kw):
        seen.append(q.dtype)
        return real(q, k, v, **kw)

    monkeypatch.setattr(layers.F, "scaled_dot_product_attention", spy)
    model = build_model(tiny(), VOCAB, VOCAB)
    src, tgt = batch()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(src, tgt)
    assert logits.dtype == torch.bfloat16  # the output projection did run under autocast
    assert seen and set(seen) == {torch.float32}
    seen.clear()
    model(src, tgt)  # fp32 without autocast, through the same kernel
    assert set(seen) == {torch.float32}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_dropout_zeroes_p_of_the_elements_and_rescales_the_rest(dtype) -> None:
    drop = Dropout(0.1).train()
    torch.manual_seed(0)
    x = torch.ones(64, 50, 33, dtype=dtype, requires_grad=True)  # odd size: not a multiple of 4
    y = drop(x)
    kept = y != 0
    assert y.dtype == dtype and y.shape == x.shape
    assert abs(1 - kept.float().mean().item() - 0.1) < 0.005  # 105600 draws: 4 sigma is 0.004
    assert torch.allclose(y[kept].float(), torch.full_like(y[kept].float(), 1 / 0.9), rtol=1e-2)
    y.sum().backward()
    assert torch.equal(x.grad != 0, kept)  # the gradient flows through the kept elements only
    # rows of the mask are not copies of each other (each int16 is its own draw)
    assert not torch.equal(kept[0], kept[1])


def test_dropout_is_reproducible_from_the_seed_and_off_in_eval() -> None:
    drop = Dropout(0.3).train()
    x = torch.randn(8, 16, 32)
    torch.manual_seed(5)
    a = drop(x)
    torch.manual_seed(5)
    assert torch.equal(a, drop(x))
    assert not torch.equal(a, drop(x))
    assert drop.eval()(x) is x
    assert Dropout(0.0).train()(x) is x
    with pytest.raises(ValueError, match="dropout probability"):
        Dropout(1.0)
