"""The GPU path, run on a CUDA device: bf16 autocast, fused Adam, the fused attention
kernels, torch.compile, the out-of-memory message, exact resume. Marked `cuda` and skipped without
a CUDA device, so CI (CPU only) reports them skipped; on a lent GPU: `pytest -m cuda tests/train`."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch

from nmt.config.model import ModelConfig
from nmt.errors import NmtError
from nmt.model.transformer import Transformer
from nmt.train.loop import train, use_bf16
from nmt.train.schedule import build_optimizer
from support.train import TINY_MODEL, copy_corpus, tiny_train

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(),
                                 reason="no CUDA device (the GPU path runs on a lent GPU)")]

BASE = ModelConfig(n_layers=6, d_model=512, n_heads=8, d_ff=2048, dropout=0.1, max_len=256)  # the paper's base


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    return copy_corpus(tmp_path / "corpus", n_train=120, n_val=16)


def weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_training_runs_on_the_gpu_under_bf16_autocast_with_fp32_weights(corpus, tmp_path: Path) -> None:
    tokens, vocab = corpus
    assert use_bf16("auto", torch.device("cuda"))
    seen: set[tuple[bool, torch.dtype, str]] = set()

    def record(module, inputs, output) -> None:
        if module.training:
            seen.add((torch.is_autocast_enabled("cuda"), output.dtype, output.device.type))

    real_init = Transformer.__init__

    def init_and_hook(self, *args, **kwargs) -> None:
        real_init(self, *args, **kwargs)
        for layer in self.modules():
            if isinstance(layer, torch.nn.Linear):
                layer.register_forward_hook(record)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Transformer, "__init__", init_and_hook)
        model, prog = train(TINY_MODEL, tiny_train(max_steps=3, device="auto"), vocab, tokens, tmp_path / "run")
    assert prog.step == 3 and seen == {(True, torch.bfloat16, "cuda")}
    assert all(p.is_cuda and p.dtype == torch.float32 for p in model.parameters())


def test_adam_is_the_fused_kernel_on_the_gpu() -> None:
    model = Transformer(TINY_MODEL, 20, 20).cuda()
    optimizer, _ = build_optimizer(model, TINY_MODEL.d_model, warmup=10, factor=1.0)
    assert optimizer.defaults["fused"] is True
    logits = model(torch.randint(4, 20, (2, 7), device="cuda"), torch.randint(4, 20, (2, 6), device="cuda"))
    logits.float().sum().backward()
    optimizer.step()  # the fused CUDA kernel runs


def test_attention_runs_on_the_fused_kernels_never_the_math_fallback() -> None:
    """Under bf16 autocast at the base model's head size (64), every attention call of a training
    step (padding masks in the encoder and cross-attention, the causal decoder) runs on flash or
    memory-efficient attention; the decoder's causal self-attention, which has no mask, on flash."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    model = Transformer(BASE, 1000, 1000).cuda().train()
    src, tgt = torch.randint(4, 1000, (8, 40), device="cuda"), torch.randint(4, 1000, (8, 35), device="cuda")
    src[:, 30:] = 0  # padding: a real mask
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]), \
            torch.autocast("cuda", dtype=torch.bfloat16):
        model(src, tgt).float().sum().backward()
    layer = model.decoder[0].self_attn
    x = torch.randn(8, 35, BASE.d_model, device="cuda")
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION]), torch.autocast("cuda", dtype=torch.bfloat16):
        layer.attend(x, *layer.project_kv(x), None, causal=True).float().sum().backward()


def test_torch_compile_trains_and_learns_what_eager_learns(corpus, tmp_path: Path, caplog) -> None:
    """20 updates each, whatever validation says: the update count, not early stopping on the tiny
    corpus, ends both runs (patience and epochs past what 20 updates take). The compiled run's
    log stays readable: none of torch's own debug records (its structured trace) in it. Learning is
    compared by validation loss epoch by epoch, not weight by weight: Adam's steps are normalised per
    element, so bf16 rounding differences move single weights by up to 0.08 in 20 updates (H200,
    2026-11-27) while the validation losses agreed within 0.011."""
    tokens, vocab = corpus
    fixed = {"max_steps": 20, "epochs": 100, "patience": 100, "device": "cuda"}
    eager, eager_prog = train(TINY_MODEL, tiny_train(**fixed), vocab, tokens, tmp_path / "eager")
    caplog.clear()
    compiled, prog = train(TINY_MODEL, tiny_train(**fixed, compile=True), vocab, tokens, tmp_path / "compiled")
    assert eager_prog.step == prog.step == 20
    assert not [r for r in caplog.records if r.name.startswith("torch") and r.levelno < logging.INFO]
    assert weights(eager).keys() == weights(compiled).keys()  # the model's own names, not torch.compile's
    eager_val = [h["val_loss"] for h in eager_prog.history if "val_loss" in h]
    compiled_val = [h["val_loss"] for h in prog.history if "val_loss" in h]
    assert len(eager_val) == len(compiled_val) >= 3
    assert max(abs(a - b) for a, b in zip(eager_val, compiled_val)) < 0.05, (eager_val, compiled_val)
    assert compiled_val[-1] < compiled_val[0]  # and it learns


def test_training_keeps_off_cudnn_attention_unless_asked(corpus, tmp_path: Path) -> None:
    """train.cudnn_attention: false (the default) keeps torch from cuDNN's fused attention, which
    plans each new batch shape (tests/train/test_attention_kernels.py: true leaves torch's pick)."""
    from torch.profiler import ProfilerActivity, profile

    tokens, vocab = corpus
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        train(TINY_MODEL, tiny_train(max_steps=3, device="cuda"), vocab, tokens, tmp_path / "run")
    kernels = {e.key for e in prof.key_averages()}
    assert not [k for k in kernels if "cudnn_attention" in k]
    assert [k for k in kernels if "flash_attention" in k or "efficient_attention" in k]


def test_running_out_of_gpu_memory_names_the_setting_to_lower(tmp_path: Path) -> None:
    """The allocator is capped at 2.5x the base model's weights: the weights fit, a training step
    (gradients, Adam's two moments, activations) does not, so memory runs out inside the update."""
    tokens, vocab = copy_corpus(tmp_path / "corpus", n_train=400, n_val=16, length=60)
    weights_bytes = 4 * sum(p.numel() for p in Transformer(BASE, 20, 20).parameters())
    torch.cuda.set_per_process_memory_fraction(2.5 * weights_bytes / torch.cuda.get_device_properties(0).total_memory)
    try:
        with pytest.raises(NmtError, match=r"out of GPU memory at update 1; lower train.max_tokens"):
            train(BASE, tiny_train(max_steps=2, device="cuda", max_tokens=8000), vocab, tokens, tmp_path / "run")
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()


def test_a_resumed_gpu_run_ends_with_the_weights_of_an_uninterrupted_one(corpus, tmp_path: Path) -> None:
    tokens, vocab = corpus
    cfg = tiny_train(max_steps=10, epochs=5, device="cuda")
    straight, _ = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "a")
    _, half = train(TINY_MODEL, tiny_train(max_steps=5, epochs=5, device="cuda"), vocab, tokens, tmp_path / "b")
    resumed, prog = train(TINY_MODEL, cfg, vocab, tokens, tmp_path / "b")
    assert half.step == 5 and prog.step == 10
    a, b = weights(straight), weights(resumed)
    for key in a:
        assert torch.equal(a[key], b[key]), key
