"""The models the server decodes with: warmed up, and swapped on reload.

Models are opened by `nmt.translate.models.open_model` (a model file, an ONNX package or a
CTranslate2 folder, verified). `Served` holds the current `Model`; `reload()` opens the new one
beside it, warms it up and switches with one assignment, so a batch that already started finishes
on the old model and every later batch runs on the new one. Each inference thread decodes with its
own `Model.for_thread()` translator: the ONNX Runtime sessions (thread-safe, and the memory) are
shared, the per-batch search state of `OnnxModel` and the spaCy tokenizer are not.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from nmt.decode.lines import LineTranslator
from nmt.errors import DataError, NmtError
from nmt.translate.models import Model, ModelOptions, kind_of, open_model

log = logging.getLogger(__name__)


class ReloadBusy(NmtError):
    """A reload is already running."""


def serving_options(*, int8: bool, threads: int, decoders: int, max_batch: int) -> ModelOptions:
    """How the server opens a model: on the CPU, `decoders` CTranslate2 replicas (an ONNX package decodes
    on the server's inference threads), `max_batch` sentences at a time."""
    return ModelOptions(device="cpu", int8=int8, threads=threads, workers=decoders, batch_size=max_batch)


def load_model(path: Path, *, int8: bool = False, threads: int = 0, decoders: int = 1, max_batch: int = 64,
               generation: int = 1) -> Model:
    """`open_model` with the server's options."""
    options = serving_options(int8=int8, threads=threads, decoders=1 if kind_of(path) == "onnx" else decoders,
                              max_batch=max_batch)  # an ONNX package decodes on the server's inference threads
    return open_model(path, options, generation)


def warm_up(model: Model, translator: LineTranslator) -> None:
    """One decode, so the first request does not pay for lazy initialisation."""
    translator.translate([model.warm_up_text])


class Served:
    """A served model: the current one of its direction, and its replacement by `reload()`."""

    def __init__(self, model: Model, *, int8: bool, threads: int, decoders: int, max_batch: int) -> None:
        self.current = model
        self.options: dict[str, Any] = {"int8": int8, "threads": threads, "decoders": decoders, "max_batch": max_batch}
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
