"""The two ONNX graphs of a trained Transformer: encoder, and one decoder step with its cache.

`EncoderGraph` maps source ids to the cross-attention keys/values of every decoder layer
(the projected encoder memory, computed once per source). `DecoderStepGraph` takes the
newest target token, the source mask, the self-attention cache of the earlier positions
and the cross keys/values, and returns the next-token logits and the cache grown by one
position. Both wrap the model's own `encode` / `init_cache` / `decode_step`, so the graphs
compute exactly what `nmt.decode.search` computes. Dynamic axes: batch, source length and cache
length (an empty cache, length 0, is the first step).

`GRAPHS` describes the inputs and outputs (names, dtypes, symbolic shapes) for the model
card, so consumers in any language know how to call the graphs.
"""

from __future__ import annotations

import contextlib
import io
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from nmt.errors import NmtError
from nmt.model.transformer import KVCache, Transformer, padding_mask

log = logging.getLogger(__name__)

ENCODER, DECODER_STEP = "encoder", "decoder_step"
# L: decoder layers, H: heads, Dh: d_model / H, V: target vocabulary size
_CACHE = ["L", "batch", "H", "cache_len", "Dh"]
_CROSS = ["L", "batch", "H", "src_len", "Dh"]
GRAPHS: dict[str, dict[str, list[dict[str, Any]]]] = {
    ENCODER: {
        "inputs": [{"name": "src", "dtype": "int64", "shape": ["batch", "src_len"],
                    "doc": "source ids: symbols, then </s> (3), right-padded with <pad> (0)"}],
        "outputs": [{"name": "cross_k", "dtype": "float32", "shape": _CROSS, "doc": "cross-attention keys per layer"},
                    {"name": "cross_v", "dtype": "float32", "shape": _CROSS, "doc": "cross-attention values per layer"}],
    },
    DECODER_STEP: {
        "inputs": [
            {"name": "tokens", "dtype": "int64", "shape": ["batch", 1],
             "doc": "newest target token per row; <s> (2) at the first step"},
            {"name": "src_mask", "dtype": "bool", "shape": ["batch", "src_len"], "doc": "src != <pad>"},
            {"name": "self_k", "dtype": "float32", "shape": _CACHE,
             "doc": "self-attention keys of the earlier positions; cache_len 0 at the first step"},
            {"name": "self_v", "dtype": "float32", "shape": _CACHE, "doc": "self-attention values, likewise"},
            {"name": "cross_k", "dtype": "float32", "shape": _CROSS, "doc": "encoder output"},
            {"name": "cross_v", "dtype": "float32", "shape": _CROSS, "doc": "encoder output"},
        ],
        "outputs": [
            {"name": "logits", "dtype": "float32", "shape": ["batch", "V"], "doc": "next-token logits (no softmax)"},
            {"name": "new_self_k", "dtype": "float32", "shape": ["L", "batch", "H", "cache_len + 1", "Dh"],
             "doc": "self_k with this position appended: the next step's self_k"},
            {"name": "new_self_v", "dtype": "float32", "shape": ["L", "batch", "H", "cache_len + 1", "Dh"],
             "doc": "self_v with this position appended"},
        ],
    },
}


def names(graph: str, side: str) -> list[str]:
    return [io_["name"] for io_ in GRAPHS[graph][side]]


class EncoderGraph(nn.Module):
    """src (B, S) -> cross_k, cross_v (L, B, H, S, Dh)."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: Tensor) -> tuple[Tensor, Tensor]:
        cache = self.model.init_cache(self.model.encode(src, padding_mask(src)))
        return cache.cross_k, cache.cross_v


class DecoderStepGraph(nn.Module):
    """One decoding step: logits (B, V) and the self-attention cache grown by one position."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.model = model

    def forward(self, tokens: Tensor, src_mask: Tensor, self_k: Tensor, self_v: Tensor, cross_k: Tensor,
                cross_v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        logits, cache = self.model.decode_step(tokens, KVCache(self_k, self_v, cross_k, cross_v),
                                               src_mask[:, None, None, :])
        return logits, cache.self_k, cache.self_v


def sample_inputs(model: Transformer, batch: int = 3, src_len: int = 7, cache_len: int = 4
                  ) -> tuple[tuple[Tensor], tuple[Tensor, ...]]:
    """Example inputs for tracing; every dynamic size >= 2, so none gets specialised."""
    cfg = model.cfg
    dh = cfg.d_model // cfg.n_heads
    gen = torch.Generator().manual_seed(0)
    vocab = model.src_embed.num_embeddings
    src = torch.randint(4, max(vocab, 5), (batch, src_len), generator=gen)
    src[0, -2:] = 0  # some padding
    cache = [torch.randn(cfg.n_layers, batch, cfg.n_heads, n, dh, generator=gen) for n in (cache_len, cache_len)]
    cross = [torch.randn(cfg.n_layers, batch, cfg.n_heads, src_len, dh, generator=gen) for _ in range(2)]
    tokens = torch.randint(4, max(model.generator.out_features, 5), (batch, 1), generator=gen)
    return (src,), (tokens, src != 0, *cache, *cross)


_NOISY = ("torch.onnx", "torch.export", "torch._export", "onnx_ir", "onnxscript")  # INFO chatter per pass


@contextlib.contextmanager
def _quiet(loggers: tuple[str, ...]) -> Iterator[None]:
    """Raise these loggers to ERROR for the duration, then restore their levels."""
    saved = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


def export_graphs(model: Transformer, out_dir: Path, opset: int) -> dict[str, Path]:
    """Write `encoder.onnx` and `decoder_step.onnx` (weights inside each file) to `out_dir`."""
    from torch.export import Dim

    model.eval()
    max_len = model.cfg.max_len
    batch = Dim("batch", min=1, max=65536)
    src_len = Dim("src_len", min=1, max=max_len)
    cache_len = Dim("cache_len", min=0, max=max_len - 1)
    enc_in, dec_in = sample_inputs(model)
    specs = {
        ENCODER: (EncoderGraph(model), enc_in, {"src": {0: batch, 1: src_len}}),
        DECODER_STEP: (DecoderStepGraph(model), dec_in, {
            "tokens": {0: batch}, "src_mask": {0: batch, 1: src_len},
            "self_k": {1: batch, 3: cache_len}, "self_v": {1: batch, 3: cache_len},
            "cross_k": {1: batch, 3: src_len}, "cross_v": {1: batch, 3: src_len}}),
    }
    paths = {}
    for name, (module, inputs, shapes) in specs.items():
        path = Path(out_dir) / f"{name}.onnx"
        log.info("exporting %s (opset %d)", path.name, opset)
        module.eval()
        chatter = io.StringIO()  # the exporter prints progress lines and warns about torchvision
        try:
            with torch.no_grad(), warnings.catch_warnings(), contextlib.redirect_stdout(chatter), _quiet(_NOISY):
                warnings.simplefilter("ignore")
                torch.onnx.export(module, inputs, str(path), input_names=names(name, "inputs"),
                                  output_names=names(name, "outputs"), opset_version=opset, dynamo=True,
                                  external_data=False, dynamic_shapes=shapes, verbose=False)
        except Exception as exc:  # the exporter's errors come in many types
            log.debug("exporter output:\n%s", chatter.getvalue())
            raise NmtError(f"ONNX export of the {name} graph failed ({type(exc).__name__}: {exc}); "
                           f"check export.opset (20 is tested)") from exc
        paths[name] = path
    return paths
