"""The two ONNX graphs of a trained Transformer: the encoder, and one decoder step with its cache.

Both are exported from `nmt.model.incremental`, the code the torch backend runs, so ONNX
Runtime computes what torch computes. The encoder maps source ids to every decoder layer's
cross-attention keys (transposed) and values, once per sentence. The decoder step takes the
newest token of K rows per sentence, the earlier row each continues, the source mask and the
per-layer caches, and returns the 2K best next tokens per row (log-softmax and top-k inside
the graph) and the self-attention caches grown by one position. Dynamic axes: sentences,
rows per sentence, source length, cache length, rows of the previous step.

`describe()` lists the inputs and outputs (names, dtypes, symbolic shapes) for the model card,
so consumers in any language know how to call the graphs.
"""

from __future__ import annotations

import contextlib
import errno
import io
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from nmt.errors import NmtError
from nmt.files.atomic import out_of_space
from nmt.model.incremental import DecoderStep, Encoder
from nmt.model.transformer import Transformer

log = logging.getLogger(__name__)

ENCODER, DECODER_STEP = "encoder", "decoder_step"


def _io(name: str, dtype: str, shape: list[str], doc: str) -> dict[str, Any]:
    return {"name": name, "dtype": dtype, "shape": shape, "doc": doc}


def describe(n_layers: int) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Inputs and outputs of both graphs, for the model card.

    b: live sentences, K: rows per sentence (beam size; 1 for greedy), n: rows of the previous
    step, H: heads, Dh: d_model / H, S: source length, t: positions decoded so far."""
    cross, past, grown = [], [], []
    for i in range(n_layers):
        cross += [_io(f"cross_k_{i}", "float32", ["b", "H", "Dh", "S"],
                      f"decoder layer {i}: cross-attention keys, transposed"),
                  _io(f"cross_v_{i}", "float32", ["b", "H", "S", "Dh"], f"decoder layer {i}: cross-attention values")]
        past += [_io(f"self_k_{i}", "float32", ["n", "H", "Dh", "t"],
                     f"decoder layer {i}: self-attention keys so far, transposed (t = 0 at the first step)"),
                 _io(f"self_v_{i}", "float32", ["n", "H", "t", "Dh"],
                     f"decoder layer {i}: self-attention values so far")]
        grown += [_io(f"new_self_k_{i}", "float32", ["b*K", "H", "Dh", "t+1"],
                      f"self_k_{i} of the rows, this position added"),
                  _io(f"new_self_v_{i}", "float32", ["b*K", "H", "t+1", "Dh"],
                      f"self_v_{i} of the rows, this position added")]
    step_inputs = [
        _io("tokens", "int64", ["b", "K"],
            "newest target token per row, K rows per sentence; <s> (2) at the first step"),
        _io("rows", "int64", ["b", "K"], "the previous step's row (0..n-1) each row continues; "
            "at the first step n = b*K and rows = arange(b*K)"),
        _io("src_mask", "bool", ["b", "S"], "src != <pad> of the live sentences"),
    ]
    return {
        ENCODER: {"inputs": [_io("src", "int64", ["b", "S"],
                                 "source ids: symbols, then </s> (3), right-padded with <pad> (0)")],
                  "outputs": cross},
        DECODER_STEP: {"inputs": step_inputs + past + cross,
                       "outputs": [_io("log_probs", "float32", ["b", "K", "2K"],
                                       "the 2K best next-token log-probabilities per row, best first"),
                                   _io("ids", "int64", ["b", "K", "2K"], "their token ids"), *grown]},
    }


def names(n_layers: int, graph: str, side: str) -> list[str]:
    return [io_["name"] for io_ in describe(n_layers)[graph][side]]


def sample_inputs(model: Transformer, batch: int = 3, beam: int = 2, src_len: int = 7, cache_len: int = 4,
                  earlier_rows: int = 5) -> tuple[tuple[Tensor], tuple[Tensor, ...]]:
    """Example inputs for tracing; every dynamic size >= 2, so none gets specialised."""
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(4, max(model.src_embed.num_embeddings, 5), (batch, src_len), generator=gen)
    src[0, -2:] = 0  # some padding
    with torch.no_grad():
        cross = Encoder(model)(src)
    H, dh = cross[1].shape[1], cross[1].shape[3]
    past: list[Tensor] = []
    for _ in model.decoder:
        past += [torch.randn(earlier_rows, H, dh, cache_len, generator=gen),
                 torch.randn(earlier_rows, H, cache_len, dh, generator=gen)]
    tokens = torch.randint(4, max(model.generator.out_features, 5), (batch, beam), generator=gen)
    rows = torch.randint(0, earlier_rows, (batch, beam), generator=gen)
    return (src,), (tokens, rows, src != 0, *past, *cross)


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
    L, max_len = model.cfg.n_layers, model.cfg.max_len
    sents, src_len = Dim("b", min=1, max=65536), Dim("S", min=1, max=max_len)
    beam = Dim("K", min=1, max=max(1, model.generator.out_features // 2))  # 2K candidates <= vocabulary
    earlier, cache_len = Dim("n", min=1, max=1 << 20), Dim("t", min=0, max=max_len - 1)
    cross = ({0: sents, 3: src_len}, {0: sents, 2: src_len}) * L
    past = ({0: earlier, 3: cache_len}, {0: earlier, 2: cache_len}) * L
    enc_in, dec_in = sample_inputs(model)
    specs: dict[str, tuple[torch.nn.Module, Any, dict[str, Any]]] = {
        ENCODER: (Encoder(model), enc_in, {"src": {0: sents, 1: src_len}}),
        DECODER_STEP: (DecoderStep(model, own_output_weight=True), dec_in,
                       {"tokens": {0: sents, 1: beam}, "rows": {0: sents, 1: beam},
                        "src_mask": {0: sents, 1: src_len}, "cache": past + cross}),
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
                torch.onnx.export(module, inputs, str(path), input_names=names(L, name, "inputs"),
                                  output_names=names(L, name, "outputs"), opset_version=opset, dynamo=True,
                                  external_data=False, dynamic_shapes=shapes, verbose=False)
        except Exception as exc:  # the exporter's errors come in many types
            log.debug("exporter output:\n%s", chatter.getvalue())
            if _disk_full(exc):  # not the opset's fault: say what it is
                raise out_of_space(path) from None
            raise NmtError(f"ONNX export of the {name} graph failed ({type(exc).__name__}: {exc}); "
                           f"check export.opset (20 is tested)") from exc
        paths[name] = path
    return paths


def _disk_full(exc: BaseException | None) -> bool:
    """Whether a full disk is behind `exc`: an OSError ENOSPC/EDQUOT anywhere in its chain, or its words."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "No space left on device" in str(exc) or "Disk quota exceeded" in str(exc):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False
