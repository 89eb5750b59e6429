"""Two ONNX packages decode the same test sets side by side in one process: both packages'
translations and how long each took (promotion by evidence).

Both translators are opened before anything is timed, on the CPU with the same ONNX Runtime
intra-op threads, each with its own card's decoding defaults (what a consumer of the package
gets), and warmed up on the first lines, untimed. Then every set is decoded in chunks of
`CHUNK` lines, the champion and the challenger taking turns at going first (champion first on
the even chunks, challenger first on the odd ones), so that a load that comes and goes on the
machine falls on both alike; a package's time is the sum of its chunks' wall-clock times
(`time.perf_counter`), and its speed the sentences of every set over that time. Each line is
translated as `nmt serve` and `nmt translate` translate a text (`nmt.translate.local`: sentences,
spans kept, the loop guard), its sentences length-sorted into batches within a chunk.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from nmt.files.cores import available_cores

log = logging.getLogger(__name__)

CHUNK = 256  # lines decoded by one package before the other takes its turn
WARMUP = 8  # first lines decoded by each package before timing starts (sessions, allocations)


@dataclass(frozen=True)
class Decoded:
    """Both packages' translations of every test set, and the seconds each spent decoding them."""

    champion: dict[str, list[str]]  # test set -> the champion's translations, one per source line
    challenger: dict[str, list[str]]  # test set -> the challenger's translations
    champion_s: float  # wall-clock seconds the champion spent on all sets (warm-up not counted)
    challenger_s: float  # the same for the challenger
    threads: int  # ONNX Runtime intra-op threads of both

    @property
    def sentences(self) -> int:
        """Lines decoded by each package, all sets together."""
        return sum(len(lines) for lines in self.champion.values())

    @property
    def champion_sps(self) -> float:
        """The champion's sentences per second."""
        return self.sentences / max(self.champion_s, 1e-9)

    @property
    def challenger_sps(self) -> float:
        """The challenger's sentences per second."""
        return self.sentences / max(self.challenger_s, 1e-9)


# (champion package, challenger package, test set -> source lines, threads) -> Decoded; tests inject their own
SideBySide = Callable[[Path, Path, Mapping[str, Sequence[str]], int], Decoded]


def resolve_threads(threads: int) -> int:
    """`threads`, or the machine's cores for 0 (promote.threads)."""
    return threads or available_cores()


def _texts(translator: Any, lines: list[str]) -> list[str]:
    return translator.translate(lines).texts


def _timed(translate: Callable[[list[str]], list[str]], lines: list[str]) -> tuple[list[str], float]:
    started = time.perf_counter()
    out = translate(lines)
    return out, time.perf_counter() - started


def decode_side_by_side(champion: Path, challenger: Path, sources: Mapping[str, Sequence[str]], threads: int,
                        chunk: int = CHUNK) -> Decoded:
    """Translate every set of `sources` (name -> source lines) with both packages, taking turns
    chunk by chunk on warm sessions with the same `threads` (0: the machine's cores)."""
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    if chunk < 1:
        raise ValueError(f"chunk {chunk} must be at least 1")
    threads = resolve_threads(threads)
    # each package opened and driven as the server drives it (nmt.translate): what users would get from it
    pair = [LocalTranslator.open(Path(p), ModelOptions(device="cpu", threads=threads)) for p in (champion, challenger)]
    try:
        warmup = [line for lines in sources.values() for line in lines][:WARMUP]
        for translator in pair:
            translator.translate(warmup)
        out: list[dict[str, list[str]]] = [{}, {}]
        seconds = [0.0, 0.0]
        turn = 0
        for name, lines in sources.items():
            parts: list[list[str]] = [[], []]
            for start in range(0, len(lines), chunk):
                part = list(lines[start:start + chunk])
                for who in ((0, 1) if turn % 2 == 0 else (1, 0)):
                    translated, spent = _timed(partial(_texts, pair[who]), part)
                    parts[who].extend(translated)
                    seconds[who] += spent
                turn += 1
            out[0][name], out[1][name] = parts
        decoded = Decoded(out[0], out[1], seconds[0], seconds[1], threads)
    finally:
        for translator in pair:
            translator.close()
    log.info("side by side on %d sentences, %d threads: champion %.4g sentences/s, challenger %.4g",
             decoded.sentences, threads, decoded.champion_sps, decoded.challenger_sps)
    return decoded
