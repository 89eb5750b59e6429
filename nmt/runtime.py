"""Translation with the exported ONNX package: numpy + ONNX Runtime, no torch.

`OnnxTranslator.from_dir("models/onnx")` reads the package written by the export stage,
checks every file against the SHA-256 recorded in its `model.json` card, opens the two
graphs in ONNX Runtime and translates text to text exactly as `nmt translate` does with
the model file: spaCy tokenization with the recorded settings, vocabulary (and BPE)
lookup, greedy or beam search (`nmt.onnx_search`), detokenization. Empty lines stay
empty; lines longer than the model takes are truncated with a warning naming the line.

Execution provider: `device="auto"` uses CUDA when a session really runs on it, else the
CPU, without printing ONNX Runtime's errors about missing CUDA libraries; `threads` sets
ONNX Runtime's intra-op threads (0: its default). Installable without torch:
`pip install "nmt[runtime]"`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nmt import onnx_search
from nmt.detokenize import Detokenizer
from nmt.errors import DataError, NmtError
from nmt.subword import BPE, merge_pieces
from nmt.text_input import LineTranslator
from nmt.vocab import BOS_ID, EOS_ID, PAD_ID, Vocabulary

log = logging.getLogger(__name__)

CARD = "model.json"
FORMAT = "nmt-onnx"
FORMAT_VERSION = 1
_REEXPORT = "re-export it (`dvc repro export`, or `nmt export`)"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Package:
    """A verified export folder: the card and the small files a translator needs."""

    root: Path
    card: dict[str, Any]  # model.json
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    bpe: BPE | None
    tokenizer: dict[str, Any]  # tokenizer.json: languages, lowercase, detokenizer table

    def graph(self, name: str, int8: bool = False) -> Path:
        """Path of graph `name` (encoder / decoder_step), fp32 or int8."""
        variant = "int8" if int8 else "fp32"
        files = self.card["graphs"].get(variant)
        if files is None:
            raise DataError(f"{self.root / CARD}: the package has no {variant} graphs; set export.quantize: true "
                            f"and {_REEXPORT}")
        return self.root / files[name]["file"]


def load_package(path: Path) -> Package:
    """Read and verify an export folder; `DataError` names the file at fault."""
    root = Path(path)
    card_path = root / CARD
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{card_path}: not found; {root} is not an ONNX export of nmt ({_REEXPORT})") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{card_path}: cannot read ({exc}); {_REEXPORT}") from None
    if not isinstance(card, dict) or card.get("format") != FORMAT or card.get("format_version") != FORMAT_VERSION:
        raise DataError(f"{card_path}: not an {FORMAT} card of version {FORMAT_VERSION}; {_REEXPORT}")
    try:
        for name, expected in card["files"].items():
            file = root / name
            if not file.is_file():
                raise DataError(f"{file}: missing from the package (listed in {CARD}); copy the whole folder or "
                                f"{_REEXPORT}")
            actual = sha256_file(file)
            if actual != expected:
                raise DataError(f"{file}: SHA-256 {actual[:12]}... differs from the {expected[:12]}... recorded in "
                                f"{card_path}; the file was changed or comes from another export; {_REEXPORT}")
        vocab = card["vocab"]
        src = Vocabulary.load(root / vocab["src"]["file"], vocab["src"]["sha256"])
        tgt = Vocabulary.load(root / vocab["tgt"]["file"], vocab["tgt"]["sha256"])
        bpe = BPE.load(root / vocab["bpe"]["file"]) if vocab.get("bpe") else None
        tokenizer = json.loads((root / card["tokenizer"]).read_text(encoding="utf-8"))
        absent = [f"{card['tokenizer']}: {k}" for k in ("src_lang", "lowercase", "detokenizer") if k not in tokenizer]
        absent += [f"{CARD}: {part}" for part in ("model", "decoding", "graphs") if part not in card]
        if absent:
            raise KeyError(", ".join(absent))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(f"{card_path}: malformed package ({type(exc).__name__}: {exc}); {_REEXPORT}") from None
    return Package(root, card, src, tgt, bpe, tokenizer)


def _session(path: Path, providers: list[str], threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    # Search runs numpy between the many small session runs; spinning worker threads would
    # take the CPU from it (measured: 2 threads with spinning were slower than 1 without).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=providers)


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
    with contextlib.suppress(Exception), contextlib.redirect_stdout(io.StringIO()):
        ort.preload_dlls()  # CUDA/cuDNN from pip's nvidia packages, where there are any
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
    """The encoder and decoder-step sessions; the interface `nmt.onnx_search` decodes with."""

    def __init__(self, encoder: Path, decoder_step: Path, max_len: int, device: str = "auto", threads: int = 0) -> None:
        self.encoder, self.decoder = open_sessions([encoder, decoder_step], device, threads)
        self.max_len = max_len
        for session, path, wanted in ((self.encoder, encoder, {"src"}),
                                      (self.decoder, decoder_step, {"tokens", "src_mask", "self_k", "self_v"})):
            have = {i.name for i in session.get_inputs()}
            if not wanted <= have:
                raise DataError(f"{path}: graph inputs {sorted(have)} lack {sorted(wanted - have)}; {_REEXPORT}")

    @property
    def providers(self) -> list[str]:
        return list(self.decoder.get_providers())

    def encode(self, src: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cross_k, cross_v = self.encoder.run(None, {"src": src})
        return cross_k, cross_v

    def step(self, tokens: np.ndarray, src_mask: np.ndarray, self_k: np.ndarray, self_v: np.ndarray,
             cross_k: np.ndarray, cross_v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        logits, new_k, new_v = self.decoder.run(None, {"tokens": tokens, "src_mask": src_mask, "self_k": self_k,
                                                       "self_v": self_v, "cross_k": cross_k, "cross_v": cross_v})
        return logits, new_k, new_v

    def greedy(self, src: np.ndarray, max_extra: int = 50) -> list[list[int]]:
        return onnx_search.greedy(self, src, max_extra)

    def beam_search(self, src: np.ndarray, beam_size: int = 4, alpha: float = 0.6, max_extra: int = 50
                    ) -> list[list[int]]:
        return onnx_search.beam_search(self, src, beam_size, alpha, max_extra)


def pad_batch(rows: Sequence[Sequence[int]]) -> np.ndarray:
    """Right-pad id lists with <pad> into a (B, S) int64 array."""
    out = np.full((len(rows), max(len(r) for r in rows)), PAD_ID, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


@dataclass(kw_only=True)
class OnnxTranslator(LineTranslator):
    """Text in, text out, like `nmt.translate.Translator`, on ONNX Runtime."""

    package: Package
    model: OnnxModel

    @classmethod
    def from_dir(cls, path: Path, *, device: str = "auto", threads: int = 0, int8: bool = False,
                 beam_size: int | None = None, alpha: float | None = None, max_extra: int | None = None,
                 batch_size: int = 64) -> OnnxTranslator:
        """Load a verified package; decoding options default to the card's."""
        from nmt.tokenization import make_tokenizer

        package = load_package(path)
        model = OnnxModel(package.graph("encoder", int8), package.graph("decoder_step", int8),
                          package.card["model"]["max_len"], device, threads)
        defaults = package.card["decoding"]
        tok = package.tokenizer
        return cls(package=package, model=model, tokenize=make_tokenizer(tok["src_lang"], tok["lowercase"]),
                   detokenize=Detokenizer.from_dict(tok["detokenizer"]),
                   beam_size=beam_size if beam_size is not None else defaults["beam_size"],
                   alpha=alpha if alpha is not None else defaults["alpha"],
                   max_extra=max_extra if max_extra is not None else defaults["max_extra"], batch_size=batch_size)

    @property
    def max_len(self) -> int:
        return self.model.max_len

    def encode_source(self, tokens: list[str]) -> list[int]:
        pieces = self.package.bpe.segment(tokens) if self.package.bpe is not None else tokens
        return self.package.src_vocab.encode(pieces) + [EOS_ID]

    def output_tokens(self, ids: list[int]) -> list[str]:
        symbols = self.package.tgt_vocab.decode(i for i in ids if i not in (PAD_ID, BOS_ID, EOS_ID))
        return merge_pieces(symbols) if self.package.bpe is not None else symbols

    def decode_batch(self, sources: list[list[int]]) -> list[list[int]]:
        src = pad_batch(sources)
        if self.beam_size == 1:
            return self.model.greedy(src, self.max_extra)
        return self.model.beam_search(src, self.beam_size, self.alpha, self.max_extra)
