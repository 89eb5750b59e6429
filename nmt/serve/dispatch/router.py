"""Several packages in one server: which one translates a request, by its source and target.

`Router` holds one `Served` per direction (the packages' cards say theirs: `languages`), lists
the languages as LibreTranslate's `/languages` does, routes `source`/`target` to an engine (a
pair it has not is `NotServed`, naming the pairs it has: the API answers 400), and reloads one package or all. With
`source: auto`, `detect()` names each text's language (`nmt.text.langid`, the detector the data
stages filter with) and its confidence; `route_auto()` sends each text to the package of its
language, and a text in a language no package reads is `NotServed`. A pair with no package of its
own but a package into English and one out of it is translated through English (`chain`, as Argos
Translate and LibreTranslate do): the first package's translation is the second one's source.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt import ranking
from nmt.errors import DataError
from nmt.runtime.package import CARD
from nmt.serve.dispatch.refusals import NotServed
from nmt.serve.dispatch.served import Served
from nmt.text.langid import UNDETERMINED, LanguageIdentifier, unknown_to_detector
from nmt.text.languages import name
from nmt.translate.models import Model

log = logging.getLogger("nmt.serve")
# confidence = softmax of eldc's scores over the candidate languages at this temperature: a text
# whose runner-up scores close to its language (e.g. "Hallo": de 0.79, nl 0.76) gets about half,
# a clear one about 100 (docs/serving.md)
TEMPERATURE = 0.05
# a language no package reads, named with less confidence than this, gives way to the likeliest
# language a package reads, when the detector scored one ("ok" reads as Italian at 43)
AMBIGUOUS = 50.0
PIVOT = "en"  # the language a pair without a package of its own is translated through


@dataclass(frozen=True)
class Detected:
    """A text's language and how sure the detector is, 0-100."""

    language: str
    confidence: float


def package_folders(paths: Sequence[Path]) -> list[Path]:
    """The package folders `paths` name: a folder with a card, or a folder of such folders."""
    found: list[Path] = []
    for path in map(Path, paths):
        if (path / CARD).is_file() or not path.is_dir():
            found.append(path)  # a missing or odd folder: load_model says what is wrong with it
            continue
        inside = sorted(p for p in path.iterdir() if (p / CARD).is_file())
        found += inside or [path]  # no package inside either: load_model says what is missing
    return found


def _softmax(scores: dict[str, float], lang: str) -> float:
    """`lang`'s share of the detector's scores, 0-100, unrounded (decisions use it; answers round it)."""
    return 100.0 / sum(math.exp((s - scores[lang]) / TEMPERATURE) for s in scores.values())


class Router:
    """The engines by direction, and the language detector for `auto`."""

    def __init__(self, engines: Sequence[Served]) -> None:
        self.engines: dict[str, Served] = {}
        for engine in engines:
            direction = engine.current.direction
            if direction in self.engines:
                raise DataError(f"--model {engine.current.path} and {self.engines[direction].current.path} both "
                                f"translate {direction}: serve one package per direction")
            self.engines[direction] = engine
        self._detector: LanguageIdentifier | None = None

    @property
    def first(self) -> Served:
        return next(iter(self.engines.values()))

    def models(self) -> list[Model]:
        return [e.current for e in self.engines.values()]

    def sources(self) -> list[str]:
        return list(dict.fromkeys(m.languages[0] for m in self.models()))

    def languages(self) -> list[dict]:
        """GET /languages: every language the server reads or writes, with the targets it has for it (those
        through English also under `through_english`)."""
        codes = list(dict.fromkeys(lang for m in self.models() for lang in m.languages))
        out = []
        for c in codes:
            direct = [m.languages[1] for m in self.models() if m.languages[0] == c]
            pivot = [t for t in codes if t not in direct and t != c and self._through(c, t) is not None]
            out.append({"code": c, "name": name(c), "targets": direct + pivot, "through_english": pivot})
        return out

    def pairs(self) -> str:
        return ", ".join(p.replace("-", " to ") for p in self.engines)

    def route(self, source: str, target: str) -> Served:
        engine = self.engines.get(f"{source}-{target}")
        if engine is None:
            raise NotServed(self._unsupported(source, target))
        return engine

    def _unsupported(self, source: str, target: str) -> str:
        what = f"{target} is not supported as a target of {source}" if source in self.sources() else \
            f"{source} is not supported"
        return f"{what}: this server translates {self.pairs()} (or auto to a target)"

    def detector(self) -> LanguageIdentifier:
        if self._detector is None:
            langs = sorted({lang for m in self.models() for lang in m.languages})
            if unknown := unknown_to_detector(langs):
                log.warning("the language detector does not know %s: `source: auto` never names them (send their "
                            "texts with their source language)", unknown)
            self._detector = LanguageIdentifier.for_languages(langs)
        return self._detector

    def detect(self, text: str) -> Detected:
        """The language of `text` and a 0-100 confidence (softmax of the detector's scores); an
        unsure guess of a language no package reads gives way to the likeliest one a package reads."""
        scores = self.detector().scores(text)
        if not scores:
            return Detected(UNDETERMINED, 0.0)
        served = [lang for lang in self.sources() if lang in scores]
        # a tie: the first listed wins (nmt/ranking.py), and the languages a package reads are listed first
        best = ranking.best([*served, *(lang for lang in scores if lang not in served)], scores.__getitem__)
        confidence = _softmax(scores, best)
        if best not in served and confidence < AMBIGUOUS and served:
            best = ranking.best(served, scores.__getitem__)
            confidence = _softmax(scores, best)
        return Detected(best, round(confidence, 1))

    def route_auto(self, detected: Sequence[Detected], target: str) -> list[Served]:
        """Each text's engine by its detected language (a text without letters, language-neutral,
        goes to the first package writing `target`); a 400 for a language no package reads."""
        return [chain[0] if len(chain) == 1 else self.route(d.language, target)
                for d, chain in zip(detected, self.chains_auto(detected, target))]

    def _through(self, source: str, target: str) -> list[Served] | None:
        hops = [self.engines.get(f"{source}-{PIVOT}"), self.engines.get(f"{PIVOT}-{target}")]
        return None if source == target or None in hops else hops  # type: ignore[return-value]

    def chain(self, source: str, target: str) -> list[Served]:
        """The packages that translate `source` into `target`, in order: its own package, else the one into
        English and the one out of it; `NotServed` when neither."""
        direct = self.engines.get(f"{source}-{target}")
        if direct is not None:
            return [direct]
        through = self._through(source, target)
        if through is None:
            raise NotServed(f"{self._unsupported(source, target)}; a text goes through English with a package into "
                            "English and one out of it")
        return through

    def chains_auto(self, detected: Sequence[Detected], target: str) -> list[list[Served]]:
        """`route_auto` with pairs through English: each text's `chain` by its detected language (a text
        without letters: the first package writing `target`, or the chain from English)."""
        into = [e for pair, e in self.engines.items() if pair.endswith(f"-{target}")]
        if not into:
            raise NotServed(f"{target} is not supported as a target: this server translates {self.pairs()}")
        out = []
        for i, d in enumerate(detected):
            direct = into[0] if d.language == UNDETERMINED else self.engines.get(f"{d.language}-{target}")
            chain = [direct] if direct is not None else self._through(d.language, target)
            if chain is None:
                raise NotServed(self._unserved(i, d))
            out.append(chain)
        return out

    def _unserved(self, i: int, d: Detected) -> str:
        return (f"text {i} reads as {name(d.language)} ({d.language}, confidence {d.confidence:g}), and this server "
                f"translates {self.pairs()}; name the source language instead of auto")

    def reload_targets(self, path: Path | None) -> list[Served]:
        """The engines a reload of `path` replaces: all (None), else the one of the card's direction."""
        if path is None:
            return list(self.engines.values())
        try:
            languages = json.loads((Path(path) / CARD).read_text(encoding="utf-8"))["languages"]
            direction = f"{languages['src']}-{languages['tgt']}"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise DataError(f"{path}: not a package with a readable {CARD} ({exc})") from None
        if direction not in self.engines:
            raise DataError(f"{path} translates {direction}, which this server does not serve (it serves "
                            f"{', '.join(self.engines)}); start a server for it")
        return [self.engines[direction]]

