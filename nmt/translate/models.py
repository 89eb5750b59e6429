"""One way to open a model for translating: a model file, an ONNX package or a CTranslate2 folder.

`open_model(path)` looks at what `path` is and opens it verified: a file is a model file of the
train stage (`models/model.pt`, torch: `nmt.decode.translator.Translator`), a folder is whatever its
`model.json` card says, an ONNX package of the export stage (`OnnxTranslator`) or a CTranslate2
model of the ctranslate2 stage (`Ct2Translator`); both verify every file against the card first,
so a damaged or half-copied folder is a `DataError` and never used. `nmt translate`, the Python API
(`nmt.translate.local`), `nmt serve`, the drift check, the side-by-side decode of the flows and the
benches all open models here. Torch is imported only to open a model file: a runtime-only install
(`nmt[runtime]`) opens the folders and says what to install for a model file.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.decode.lines import LineTranslator
from nmt.errors import DataError
from nmt.files.seal import sealed_digest
from nmt.runtime.package import CARD, package_file
from nmt.text import spm
from nmt.text.languages import warm_up
from nmt.text.tokenizer import make_tokenizer

KINDS = {"nmt-onnx": "onnx", "nmt-ctranslate2": "ct2"}  # a folder's card format -> its kind ("pt": a model file)
TORCH_TRANSLATOR = "nmt.decode.translator"  # imported by name, and only for a model file: the rest is torch-free


@dataclass(frozen=True)
class ModelOptions:
    """How to open a model; every field has the model's own default."""

    beam_size: int | None = None  # None: the card's (a model file: the evaluate section's defaults)
    alpha: float | None = None  # length penalty; None as beam_size
    batch_size: int = 64  # sentences decoded at a time
    device: str = "auto"  # cpu, cuda, auto; a model file or an ONNX package (a CTranslate2 folder runs on the CPU)
    threads: int = 0  # intra-op threads (0: the library's default)
    int8: bool = False  # an ONNX package's int8 graphs, or CTranslate2's int8 compute
    workers: int = 1  # decoders side by side: ONNX decoder processes (0: auto), CTranslate2 replicas


@dataclass(frozen=True)
class Model:
    """An opened, verified model and what is said about it."""

    translator: LineTranslator  # the shared translator; threads decode with `for_thread()` copies
    path: Path  # the file or folder it was opened from
    kind: str  # "pt" (a model file), "onnx" (an ONNX package) or "ct2" (a CTranslate2 folder)
    int8: bool  # int8 graphs / compute
    card: dict[str, Any]  # model.json (a model file: its languages only)
    tokenizer: dict[str, Any]  # src_lang, lowercase, ... (tokenizer.json; a model file's text settings)
    digest: str  # the first 12 hex digits of the SHA-256 of model.json as opened (a model file: of the file)
    generation: int = 1  # the server's: 1 for the model served at start, +1 per reload
    loaded_at: float = dataclasses.field(default_factory=time.time)  # time.time() when it was opened

    @property
    def languages(self) -> tuple[str, str]:
        return self.card["languages"]["src"], self.card["languages"]["tgt"]

    @property
    def direction(self) -> str:
        """"de-en": source and target language."""
        return "-".join(self.languages)

    @property
    def aligns(self) -> bool:
        """Whether markup's tag pairs are put back by the model's own alignment (`nmt.translate.markup.align`
        steps through ONNX graphs); other kinds keep them as placeholders in the text."""
        return self.kind == "onnx"

    @property
    def warm_up_text(self) -> str:
        """A sentence in the source language, decoded once before the model serves."""
        return warm_up(self.languages[0])

    def for_thread(self) -> LineTranslator:
        """A translator for one thread: its own tokenizer and (ONNX) search state, the weights and
        sessions shared (ONNX Runtime sessions, CTranslate2 and torch in eval mode are thread-safe)."""
        sp = self.translator.vocabs.sp
        tokenize = make_tokenizer(self.tokenizer["src_lang"], self.tokenizer["lowercase"]) if sp is None \
            else spm.tokenizer(sp, self.tokenizer["lowercase"])
        if self.kind == "onnx":
            onnx: Any = self.translator
            return dataclasses.replace(onnx, model=copy.copy(onnx.model), tokenize=tokenize)
        return dataclasses.replace(self.translator, tokenize=tokenize)

    def describe(self) -> dict[str, Any]:
        """What GET /v1/model says besides the card."""
        t = self.translator
        return {"direction": self.direction, "path": str(self.path), "kind": self.kind, "int8": self.int8,
                "generation": self.generation,
                "loaded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.loaded_at)), "sha256": self.digest,
                "decoding": {"beam_size": t.beam_size, "alpha": t.alpha, "max_extra": t.max_extra}}


def kind_of(path: Path) -> str:
    """"pt", "onnx" or "ct2": what `path` holds; a `DataError` that says what to pass instead."""
    path = Path(path)
    if path.is_file():
        return "pt"
    if not path.exists():
        raise DataError(f"--model {path}: not found; pass a model file (models/model.pt, the train stage's), an ONNX "
                        "package (models/onnx, the export stage's) or a CTranslate2 folder (models/ct2)")
    card_path = path / CARD
    try:
        kind = json.loads(card_path.read_text(encoding="utf-8")).get("format")
    except FileNotFoundError:
        raise DataError(f"{card_path}: not found; {path} is not a model folder of nmt (models/onnx or models/ct2)"
                        ) from None
    except (OSError, ValueError, AttributeError) as exc:
        raise DataError(f"{card_path}: cannot read ({exc}); fetch or export the package again") from None
    if kind not in KINDS:
        raise DataError(f"{card_path}: format {kind!r} is neither an ONNX package nor a CTranslate2 model of nmt")
    return KINDS[kind]


def open_model(path: Path, options: ModelOptions = ModelOptions(), generation: int = 1) -> Model:
    """Open and verify the model at `path` (a model file, an ONNX package or a CTranslate2 folder)."""
    path = Path(path)
    kind = kind_of(path)
    if kind == "pt":
        return _open_model_file(path, options, generation)
    card_bytes = _read_card(path)  # read once: the card the translator verifies the files against is this one
    decoding: dict[str, Any] = {"beam_size": options.beam_size, "alpha": options.alpha}
    if kind == "onnx":
        from nmt.runtime.translator import OnnxTranslator

        translator: LineTranslator = OnnxTranslator.from_dir(
            path, device=options.device, threads=options.threads, int8=options.int8, batch_size=options.batch_size,
            workers=options.workers, **decoding)
    else:
        from nmt.runtime.ct2 import Ct2Translator

        translator = Ct2Translator.from_dir(path, compute_type="int8" if options.int8 else "default",
                                            intra_threads=options.threads, inter_threads=max(1, options.workers),
                                            batch_size=options.batch_size, **decoding)
    if _read_card(path) != card_bytes:
        raise DataError(f"{path / CARD}: the package changed while it was loading; load it again once it is whole")
    card = json.loads(card_bytes)
    tokenizer_file = package_file(path, card["tokenizer"], path / CARD, "tokenizer")
    tokenizer = json.loads(tokenizer_file.read_text(encoding="utf-8"))
    return Model(translator, path, kind, options.int8, card, tokenizer, hashlib.sha256(card_bytes).hexdigest()[:12],
                 generation)


def _open_model_file(path: Path, options: ModelOptions, generation: int) -> Model:
    if options.int8:
        raise DataError("int8 needs an ONNX package exported with export.quantize: true (models/onnx) or a "
                        "CTranslate2 folder (models/ct2), not a model file")
    if options.workers > 1:
        raise DataError("decoder processes (workers) need the ONNX package (models/onnx); a model file decodes in "
                        "this process with its threads")
    try:
        translator_module = importlib.import_module(TORCH_TRANSLATOR)
    except ImportError as exc:  # a runtime-only install (`pip install "nmt[runtime]"`) has no torch
        raise DataError(f"{path}: translating a model file needs torch ({exc}); install nmt[pipeline], "
                        "or pass the exported ONNX package folder (models/onnx)") from None
    translator = translator_module.Translator.from_file(path, translator_module.decoding_of(options.beam_size,
                                                                                            options.alpha),
                                                        options.batch_size, options.device, threads=options.threads)
    vocabs = translator.vocabs
    card = {"languages": {"src": vocabs.src_lang, "tgt": vocabs.tgt_lang}}
    digest = (sealed_digest(path) or _file_digest(path))[:12]  # the seal the load checked; an unsealed file: hashed
    return Model(translator, path, "pt", False, card, dict(translator.text_settings), digest, generation)


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _read_card(path: Path) -> bytes:
    try:
        return (path / CARD).read_bytes()
    except OSError as exc:
        raise DataError(f"{path / CARD}: cannot read ({exc.strerror or exc}); "
                        "fetch or export the package again") from None
