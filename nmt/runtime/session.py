"""ONNX Runtime sessions for the two graphs, and the model interface search decodes with.

`OnnxModel` opens the encoder and decoder-step graphs and is the backend that
`nmt.decode.search` (the one search, shared with torch) drives; `device="auto"` uses CUDA when a
session really runs on it, else the CPU, without printing ONNX Runtime's errors about
missing CUDA libraries (a failed preload of pip's CUDA libraries is logged at debug level);
`threads` sets ONNX Runtime's intra-op threads (0: its default).
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nmt.decode import search
from nmt.decode.hypotheses import Hypothesis
from nmt.errors import DataError, NmtError
from nmt.runtime.package import REEXPORT
from nmt.text.vocab import PAD_ID

log = logging.getLogger(__name__)


# ONNX Runtime graph rewrites left out on the CPU. SkipLayerNormFusion turns each residual Add +
# LayerNormalization into one SkipLayerNormalization, whose CPU kernel took 12% of a decoder
# step and 17% of the encoder where the two ops it replaces take 2-4% (ONNX Runtime's profiler,
# bench/decode_levers.py); without it, at one thread, greedy fp32 +14%, beam 4 fp32 +13%, greedy int8 +21%,
# fp32 output unchanged.
CPU_DISABLED_OPTIMIZERS = ("SkipLayerNormFusion",)


def _session(path: Path, providers: list[str], threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    # Search runs numpy between the many small session runs; spinning worker threads would
    # take the CPU from it (measured: 2 threads with spinning were slower than 1 without).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    disabled = list(CPU_DISABLED_OPTIMIZERS) if providers[0] == "CPUExecutionProvider" else []
    return ort.InferenceSession(str(path), options, providers=providers, disabled_optimizers=disabled)


def open_sessions(paths: Sequence[Path], device: str = "auto", threads: int = 0) -> list[Any]:
    """ONNX Runtime sessions for `paths`, on CUDA when it really works (`auto`), else the CPU."""
    import onnxruntime as ort

    if device not in ("auto", "cpu", "cuda"):
        raise NmtError(f"device {device!r}: expected auto, cpu or cuda")
    cpu = ["CPUExecutionProvider"]
    if device == "cpu" or "CUDAExecutionProvider" not in ort.get_available_providers():
        if device == "cuda":
            raise NmtError("device cuda: this onnxruntime has no CUDA execution provider; install onnxruntime-gpu")
        return [_session(p, cpu, threads) for p in paths]
    # onnxruntime-gpu lists CUDA even without a GPU, and logs an error when it falls back:
    # probe silently, then keep the providers that the first session really got.
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            ort.preload_dlls()  # CUDA/cuDNN from pip's nvidia packages, where there are any
    except Exception as exc:  # not fatal: the probe below finds out whether CUDA works without them
        log.debug("onnxruntime.preload_dlls() failed (%s: %s); CUDA and cuDNN must come from the system's "
                  "library path", type(exc).__name__, exc, exc_info=True)
    ort.set_default_logger_severity(4)
    try:
        first = _session(paths[0], ["CUDAExecutionProvider", *cpu], threads)
    finally:
        ort.set_default_logger_severity(3)
    on_cuda = first.get_providers()[0] == "CUDAExecutionProvider"
    if device == "cuda" and not on_cuda:
        raise NmtError("device cuda: the CUDA execution provider does not work here (no GPU, or CUDA/cuDNN "
                       "libraries missing); use --device cpu or auto")
    log.info("ONNX Runtime on %s", "CUDA" if on_cuda else "CPU")
    providers = ["CUDAExecutionProvider", *cpu] if on_cuda else cpu
    return [first] + [_session(p, providers, threads) for p in paths[1:]]


class OnnxModel:
    """The encoder and decoder-step sessions as a search backend (`nmt.decode.search.Backend`)."""

    def __init__(self, encoder: Path, decoder_step: Path, max_len: int, device: str = "auto", threads: int = 0) -> None:
        self.encoder, self.decoder = open_sessions([encoder, decoder_step], device, threads)
        self.max_len = max_len
        for session, path, wanted in ((self.encoder, encoder, {"src"}),
                                      (self.decoder, decoder_step,
                                       {"tokens", "rows", "src_mask", "self_k_0", "cross_k_0"})):
            have = {i.name for i in session.get_inputs()}
            if not wanted <= have:
                raise DataError(f"{path}: graph inputs {sorted(have)} lack {sorted(wanted - have)}; {REEXPORT}")
        self.cross_names = [o.name for o in self.encoder.get_outputs()]
        self.past_names = [i.name for i in self.decoder.get_inputs() if i.name.startswith("self_")]
        shapes = {i.name: i.shape for i in self.decoder.get_inputs()}
        # (rows, H, Dh, t) / (rows, H, t, Dh): every symbolic size but the rows is t, 0 before the first step
        self.empty = [[0 if isinstance(d, str) else d for d in shapes[name][1:]] for name in self.past_names]
        self.src_mask = np.zeros((0, 0), dtype=bool)
        self.cross: list[np.ndarray] = []
        self.past: list[np.ndarray] = []

    @property
    def providers(self) -> list[str]:
        return list(self.decoder.get_providers())

    def encode(self, src: np.ndarray) -> None:
        self.src_mask, self.past = src != PAD_ID, []
        self.cross = self.encoder.run(None, {"src": src})

    def step(self, tokens: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not self.past:  # first step: a cache of length 0 for every row
            self.past = [np.zeros([tokens.size, *shape], dtype=np.float32) for shape in self.empty]
        feeds = {"tokens": tokens, "rows": rows, "src_mask": self.src_mask,
                 **dict(zip(self.past_names, self.past)), **dict(zip(self.cross_names, self.cross))}
        log_probs, ids, *self.past = self.decoder.run(None, feeds)
        return log_probs, ids

    def keep(self, sentences: np.ndarray) -> None:
        self.src_mask = self.src_mask[sentences]
        self.cross = [c.take(sentences, axis=0) for c in self.cross]

    def greedy(self, src: np.ndarray, max_extra: int = 50) -> list[list[int]]:
        return search.greedy(self, src, max_extra)

    def beam_search(self, src: np.ndarray, beam_size: int, alpha: float, max_extra: int = 50) -> list[list[int]]:
        return search.beam_search(self, src, beam_size, alpha, max_extra)

    def greedy_scored(self, src: np.ndarray, max_extra: int = 50) -> list[Hypothesis]:
        return search.greedy_scored(self, src, max_extra)

    def beam_search_n(self, src: np.ndarray, n: int, beam_size: int, alpha: float,
                      max_extra: int = 50) -> list[list[Hypothesis]]:
        return search.beam_search_n(self, src, n, beam_size, alpha, max_extra)
