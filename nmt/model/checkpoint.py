"""Self-describing, atomic checkpoints that can never execute code.

A checkpoint is a dict of tensors and plain values, serialised, sealed with its SHA-256
(nmt/files/seal.py), written to a temporary file and renamed; a load checks the seal, then
`torch.load(weights_only=True)`: a damaged file is refused, never used. It carries the weights, the model
config, the vocabularies themselves (so a model file translates on its own) with their
SHA-256, and for resuming: step, epoch, position in the epoch's batches, optimizer and
scheduler state, RNG states, early-stopping state and the metric history.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from nmt.config.loader import from_dict
from nmt.config.model import ModelConfig
from nmt.errors import DataError
from nmt.files import seal
from nmt.files.atomic import atomic_write_bytes
from nmt.files.killpoints import kill_point
from nmt.text.spm import SentencePiece
from nmt.text.subword import BPE
from nmt.text.vocab import Vocabulary
from nmt.text.vocabularies import Vocabularies

log = logging.getLogger(__name__)

FORMAT = 1
_EPOCH_FILE = re.compile(r"^epoch-\d{4}-step-(?P<step>\d{8})\.pt$")
_STEP_FILE = re.compile(r"^step-(?P<step>\d{8})\.pt$")


def save(path: Path, state: dict[str, Any]) -> None:
    """`state` written whole, sealed with its digest, or not at all (a full disk: one OutOfSpace line)."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    atomic_write_bytes(path, seal.seal(buffer.getvalue()))


_PASS_INSTEAD = "pass a model file written by the train stage (models/model.pt) or an ONNX package folder (models/onnx)"


def load(path: Path | str) -> dict[str, Any]:
    """A checkpoint or model file, loaded without running any code (`weights_only=True`)."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"{path}: a folder, not a model file; {_PASS_INSTEAD}")
    try:
        sealed = seal.check(path)
        if sealed is False:
            raise DataError(f"{path}: damaged: its bytes no longer match the SHA-256 written with them (a flipped "
                            f"bit, a partial copy); not used. {_recover(path)}")
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise DataError(f"{path}: no such checkpoint; train a model first (`dvc repro train`)") from None
    except DataError:
        raise
    except Exception as exc:  # unpickling errors of every kind: truncated, foreign, unsafe; one line, no advice
        raise DataError(f"{path}: not an nmt model file ({_what_it_is(path, exc)}); {_PASS_INSTEAD}") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise DataError(f"{path}: not an nmt checkpoint of format {FORMAT}; {_PASS_INSTEAD}")
    return state


def _recover(path: Path) -> str:
    """The command that recovers a damaged file of this kind."""
    if _EPOCH_FILE.match(path.name) or _STEP_FILE.match(path.name) or path.name == "best.pt":
        return ("Delete it and re-run `dvc repro train`: training resumes from the previous good checkpoint "
                "(the stage skips a damaged one itself)")
    return ("Restore the recorded version with `dvc checkout` (or `dvc pull`) for this file, or re-run "
            "`dvc repro train`")


def _what_it_is(path: Path, exc: Exception) -> str:
    """What a file that torch cannot load looks like, in a few words (never torch's advice)."""
    if path.suffix == ".onnx":
        return "an ONNX graph: pass the folder that holds it with its model.json"
    try:
        head = path.read_bytes()[:64].lstrip()
    except OSError as err:
        return f"cannot read: {err.strerror}"
    if head.startswith((b"{", b"[")):
        return "a JSON file" + (": pass the folder that holds it" if path.name == "model.json" else "")
    if head[:2] == b"PK":
        return (f"a damaged, truncated or foreign torch archive ({type(exc).__name__}); "
                f"if it was ours: {_recover(path)}")
    return "not a torch archive" + (" but text" if head and all(32 <= c < 127 or c in b"\t\r\n" for c in head) else "")


def load_weights(model: torch.nn.Module, weights: dict[str, torch.Tensor], path: Path) -> None:
    """`model.load_state_dict(weights)`, or one `DataError` naming the first tensor that does not fit."""
    expected = model.state_dict()
    for name, tensor in expected.items():
        if name not in weights:
            raise DataError(f"{path}: weights lack {name!r} that model_config {_shape_of(model)} needs; the file's "
                            "config does not match its weights (re-run `dvc repro train`)")
        if weights[name].shape != tensor.shape:
            raise DataError(f"{path}: tensor {name!r} is {tuple(weights[name].shape)} in the file, "
                            f"{tuple(tensor.shape)} for its model_config {_shape_of(model)}; the config does not "
                            "match the weights (re-run `dvc repro train`)")
    extra = sorted(set(weights) - set(expected))
    if extra:
        raise DataError(f"{path}: tensor {extra[0]!r} is not part of model_config {_shape_of(model)} "
                        f"({len(extra)} such); the config does not match the weights (re-run `dvc repro train`)")
    model.load_state_dict(weights)


def _shape_of(model: torch.nn.Module) -> str:
    cfg = getattr(model, "cfg", None)
    if cfg is None:
        return ""
    return f"(n_layers={cfg.n_layers}, d_model={cfg.d_model}, d_ff={cfg.d_ff}, n_heads={cfg.n_heads})"


def vocab_payload(vocabs: Vocabularies) -> dict[str, Any]:
    return {"src": vocabs.src.itos, "tgt": vocabs.tgt.itos, "manifest": vocabs.manifest,
            "bpe": [list(m) for m in vocabs.bpe.merges] if vocabs.bpe is not None else None,
            **({"sentencepiece": vocabs.sp.model} if vocabs.sp is not None else {})}


def model_payload(model: torch.nn.Module, cfg: ModelConfig, vocabs: Vocabularies) -> dict[str, Any]:
    """What a model file needs to translate: weights, config, vocabularies."""
    return {"format": FORMAT, "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            "model_config": asdict(cfg), "vocab": vocab_payload(vocabs)}


def vocabs_of(state: dict[str, Any]) -> Vocabularies:
    v = state["vocab"]
    bpe = BPE([tuple(m) for m in v["bpe"]]) if v["bpe"] is not None else None
    sp = SentencePiece(v["sentencepiece"]) if v.get("sentencepiece") is not None else None
    return Vocabularies(Vocabulary(v["src"]), Vocabulary(v["tgt"]), bpe, v["manifest"], sp)


def model_config_of(state: dict[str, Any]) -> ModelConfig:
    return from_dict(ModelConfig, state["model_config"], key="model_config", source="checkpoint")


def check_vocab_hashes(state: dict[str, Any], vocabs: Vocabularies, path: Path) -> None:
    """The checkpoint's vocabularies must be the ones on disk (same SHA-256)."""
    mine = state["vocab"]["manifest"]
    for side in ("src", "tgt"):
        if mine[side]["sha256"] != vocabs.manifest[side]["sha256"]:
            raise DataError(f"{path}: {side} vocabulary {mine[side]['sha256'][:12]}... differs from the "
                            f"vocabularies given (--vocab: {vocabs.manifest[side]['sha256'][:12]}...); they were "
                            "rebuilt since the run began: delete its checkpoints (--checkpoints) to train from "
                            "scratch, or pass the vocabularies it was trained with")


class CheckpointDir:
    """Epoch-end checkpoints `epoch-EEEE-step-SSSSSSSS.pt` (the newest `keep` are kept),
    one rolling mid-epoch `step-SSSSSSSS.pt` (periodic saves, interruptions) and `best.pt`."""

    def __init__(self, root: Path, keep: int) -> None:
        self.root, self.keep = Path(root), keep

    def _files(self, pattern: re.Pattern[str]) -> list[tuple[int, Path]]:
        if not self.root.is_dir():
            return []
        found = [(m, p) for p in self.root.iterdir() if (m := pattern.match(p.name))]
        return sorted((int(m.group("step")), p) for m, p in found)

    def epochs(self) -> list[Path]:
        return [p for _, p in self._files(_EPOCH_FILE)]

    def latest(self) -> Path | None:
        """The checkpoint with the most updates, epoch-end or mid-epoch."""
        newest = self.newest_first()
        return newest[0] if newest else None

    def newest_first(self) -> list[Path]:
        """Every checkpoint, the most updates first (at the same step, the epoch-end one first)."""
        found = [(step, 1, p) for step, p in self._files(_EPOCH_FILE)] + \
                [(step, 0, p) for step, p in self._files(_STEP_FILE)]
        return [p for _, _, p in sorted(found, reverse=True)]

    def at_step(self, step: int) -> Path | None:
        """The epoch-end checkpoint written at update `step`, if it is still kept."""
        return next((p for s, p in self._files(_EPOCH_FILE) if s == step), None)

    def clear(self) -> None:
        """Remove every checkpoint (they belong to another configuration)."""
        for _, path in self._files(_EPOCH_FILE) + self._files(_STEP_FILE):
            path.unlink()
        (self.root / "best.pt").unlink(missing_ok=True)

    def write(self, state: dict[str, Any], epoch_end: bool, best: bool = False) -> Path:
        step = state["step"]
        name = f"epoch-{state['epoch']:04d}-step-{step:08d}.pt" if epoch_end else f"step-{step:08d}.pt"
        path = self.root / name
        save(path, state)
        kill_point("checkpoint-saved")
        if best:
            save(self.root / "best.pt", state)
        for _, old in self._files(_STEP_FILE):  # a newer save supersedes every rolling one
            if old != path:
                old.unlink()
        for old in self.epochs()[: -self.keep]:
            old.unlink()
        return path


def average(paths: list[Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of the weights of several checkpoints (paper section 6.1)."""
    states = [load(p)["model"] for p in paths]
    out = {}
    for key, first in states[0].items():
        if first.is_floating_point():
            out[key] = sum(s[key].double() for s in states).div(len(states)).to(first.dtype)
        else:
            out[key] = first
    return out
