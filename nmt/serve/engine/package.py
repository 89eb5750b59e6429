"""The model the server decodes with: loaded, verified, warmed up, and swapped on reload.

`load_model()` opens an ONNX package (`OnnxTranslator`) or a CTranslate2 model folder
(`Ct2Translator`), whichever the folder's `model.json` says it is; both verify every file
against the card first, so a damaged or half-copied package is a `DataError` and never served.
`Engine` holds the current `Model`; `reload()` loads the new one beside it, warms it up and
switches with one assignment, so a batch that already started finishes on the old model and
every later batch runs on the new one. Each inference thread decodes with its own
`Model.for_thread()` translator: the ONNX Runtime sessions (thread-safe, and the memory) are
shared, the per-batch search state of `OnnxModel` and the spaCy tokenizer are not.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.decode.lines import LineTranslator
from nmt.errors import DataError, NmtError
from nmt.runtime.package import CARD, package_file
from nmt.text.tokenizer import make_tokenizer

log = logging.getLogger(__name__)

ENGINES = {"nmt-onnx": "onnx", "nmt-ctranslate2": "ct2"}  # card format -> engine
WARM_UP = {"de": "Ein Mann fährt mit dem Fahrrad eine Straße hinunter.", "en": "A man rides a bicycle down a street."}
WARM_UP_OTHER = "1, 2, 3."  # a source language without a sentence above


class ReloadBusy(NmtError):
    """A reload is already running."""


@dataclass(frozen=True)
class Model:
    """A loaded, verified model and what the server says about it."""

    translator: LineTranslator  # the shared translator; threads decode with `for_thread()` copies
    path: Path  # the folder it was loaded from
    engine: str  # "onnx" or "ct2"
    int8: bool  # int8 graphs / compute
    card: dict[str, Any]  # model.json
    tokenizer: dict[str, Any]  # tokenizer.json: src_lang, lowercase, ...
    generation: int  # 1 for the model served at start, +1 per reload
    loaded_at: float  # time.time() when it was loaded
    digest: str  # the first 12 hex digits of the SHA-256 of model.json as loaded (not as the folder holds it now)

    @property
    def languages(self) -> tuple[str, str]:
        return self.card["languages"]["src"], self.card["languages"]["tgt"]

    @property
    def direction(self) -> str:
        """"de-en": source and target language."""
        return "-".join(self.languages)

    @property
    def warm_up_text(self) -> str:
        """A sentence in the source language, decoded once before the model serves."""
        return WARM_UP.get(self.languages[0], WARM_UP_OTHER)

    def for_thread(self) -> LineTranslator:
        """A translator for one inference thread: its own tokenizer and (ONNX) search state, the
        sessions shared."""
        tokenize = make_tokenizer(self.tokenizer["src_lang"], self.tokenizer["lowercase"])
        if self.engine == "onnx":
            return dataclasses.replace(self.translator, model=copy.copy(self.translator.model), tokenize=tokenize)
        return dataclasses.replace(self.translator, tokenize=tokenize)  # ctranslate2.Translator is thread-safe

    def describe(self) -> dict[str, Any]:
        """What GET /v1/model says besides the card."""
        t = self.translator
        return {"direction": self.direction, "path": str(self.path), "engine": self.engine, "int8": self.int8,
                "generation": self.generation,
                "loaded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.loaded_at)), "sha256": self.digest,
                "decoding": {"beam_size": t.beam_size, "alpha": t.alpha, "max_extra": t.max_extra}}


def engine_of(path: Path) -> str:
    """"onnx" or "ct2", from the card's format; a `DataError` for anything else."""
    card_path = Path(path) / CARD
    if not Path(path).is_dir():
        raise DataError(f"--model {path}: not a folder; pass the ONNX package (models/onnx, the export stage's, or "
                        "`dvc artifacts get ... --stage prod`) or the CTranslate2 model (models/ct2)")
    try:
        kind = json.loads(card_path.read_text(encoding="utf-8")).get("format")
    except FileNotFoundError:
        raise DataError(f"{card_path}: not found; "
                        f"{path} is not a model folder of nmt (models/onnx or models/ct2)") from None
    except (OSError, ValueError, AttributeError) as exc:
        raise DataError(f"{card_path}: cannot read ({exc}); fetch or export the package again") from None
    if kind not in ENGINES:
        raise DataError(f"{card_path}: format {kind!r} is neither an ONNX package nor a CTranslate2 model of nmt")
    return ENGINES[kind]


def load_model(path: Path, *, int8: bool = False, threads: int = 0, decoders: int = 1, max_batch: int = 64,
               generation: int = 1) -> Model:
    """Open and verify the model folder `path`; `DataError` / `NmtError` say what is wrong."""
    path = Path(path)
    engine = engine_of(path)
    card_bytes = _read_card(path)  # read once: the card the translator verifies the files against is this one
    if engine == "onnx":
        from nmt.runtime.translator import OnnxTranslator

        translator: LineTranslator = OnnxTranslator.from_dir(path, device="cpu", threads=threads, int8=int8,
                                                             batch_size=max_batch)
    else:
        from nmt.runtime.ct2 import Ct2Translator

        translator = Ct2Translator.from_dir(path, compute_type="int8" if int8 else "default", intra_threads=threads,
                                            inter_threads=decoders, batch_size=max_batch)
    if _read_card(path) != card_bytes:
        raise DataError(f"{path / CARD}: the package changed while it was loading; load it again once it is whole")
    card = json.loads(card_bytes)
    tokenizer_file = package_file(path, card["tokenizer"], path / CARD, "tokenizer")
    tokenizer = json.loads(tokenizer_file.read_text(encoding="utf-8"))
    digest = hashlib.sha256(card_bytes).hexdigest()[:12]
    return Model(translator, path, engine, int8, card, tokenizer, generation, time.time(), digest)


def _read_card(path: Path) -> bytes:
    try:
        return (path / CARD).read_bytes()
    except OSError as exc:
        raise DataError(f"{path / CARD}: cannot read ({exc.strerror or exc}); "
                        "fetch or export the package again") from None


def warm_up(model: Model, translator: LineTranslator) -> None:
    """One decode, so the first request does not pay for lazy initialisation."""
    translator.translate([model.warm_up_text])


class Engine:
    """The current model, and its replacement by `reload()`."""

    def __init__(self, model: Model, *, int8: bool, threads: int, decoders: int, max_batch: int) -> None:
        self.current = model
        self.options = {"int8": int8, "threads": threads, "decoders": decoders, "max_batch": max_batch}
        self._reloading = threading.Lock()
        # each inference thread's translator, by thread: dropped at a reload, so a thread idle since
        # holds no old session (its next batch makes one for the new model)
        self._translators: dict[int, tuple[int, LineTranslator]] = {}
        self._local = threading.local()

    def translator(self) -> tuple[Model, LineTranslator]:
        """The current model and this thread's translator for it (made when the model changed)."""
        model = self.current
        me = threading.get_ident()
        held = self._translators.get(me)
        if held is None or held[0] != model.generation:
            held = (model.generation, model.for_thread())
            self._translators[me] = held
        self._local.generation = model.generation
        return model, held[1]

    def thread_generation(self) -> int:
        """The generation of the model this thread decoded its last batch with (0: none yet)."""
        return getattr(self._local, "generation", 0)

    def reload(self, path: Path | None = None) -> Model:
        """Load `path` (default: the current model's folder) beside the current model, warm it
        up, switch. Blocks (run it off the event loop); a failure leaves the current model serving."""
        if not self._reloading.acquire(blocking=False):
            raise ReloadBusy("a reload is already running; wait for it to finish")
        try:
            old = self.current
            new = load_model(path or old.path, generation=old.generation + 1, **self.options)
            if new.direction != old.direction:
                raise DataError(f"{new.path} translates {new.direction}; "
                                f"it cannot replace {old.path}, which translates "
                                f"{old.direction}: reload the package of that direction")
            warm_up(new, new.for_thread())
            self.current = new
            self._translators = {}  # the threads' old translators go now, not at each thread's next batch
            log.info("reloaded: %s (%s, generation %d) replaces %s", new.path, new.digest, new.generation, old.digest)
            return new
        finally:
            self._reloading.release()
