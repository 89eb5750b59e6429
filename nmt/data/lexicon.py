"""A bilingual-dictionary score for sentence pairs: does the target translate the source?
It finds misaligned pairs in the right languages and of plausible lengths.

The dictionary is a file in the format of Ding (Frank Richter's German-English dictionary,
Debian package `trans-de-en`, /usr/share/trans/de-en; GPL-2+): a line per entry, `German ::
English`, each side's sub-entries aligned by ` | `, alternatives split by `; `, annotations in
`{}`, `[]`, `()` and `<>`. Sub-entries of at most `MAX_ENTRY_WORDS` words a side give word-level
translations, inflected forms included (`ich/er/sie ging :: I/he/she went`).

`LexicalScore.coverage(a, b)`: of the words of each side the dictionary knows, the share with a
translation among the other side's words, a side at a time (a word matches when it or a form
with a common suffix stripped is in the dictionary); the pair's score is the mean of the sides
with at least `min_known` known words, and None when neither has (nothing to judge: the pair is
kept). On all of Multi30k train, each pair also misaligned by pairing its German side with the
English side of the next pair in length: at a threshold of 0.45, 0.63% of the aligned pairs score
below it and 75.5% of the misaligned ones (0.4: 0.42% / 67%; 0.5: 1.0% / 82%). Taking the max or
the min of the two shares instead of the mean moves along the same trade-off.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from nmt.errors import ConfigError

log = logging.getLogger(__name__)

LANGUAGES = frozenset({"de", "en"})  # a Ding dictionary's: another pair has the rule switched off (nmt.data.cleaning)
MAX_ENTRY_WORDS = 3  # longer sub-entries are phrases, not word translations
MEMO_WORDS = 200_000  # word types whose translation forms are remembered (then the memo starts again)
_ANNOTATION = re.compile(r"\{[^}]*\}|\[[^\]]*\]|\([^)]*\)|<[^>]*>")
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
STOP_WORDS = {
    "de": set("der die das den dem des ein eine einer einem einen eines und oder zu sich ich du er sie es wir ihr "
              "jd jds jdm jdn etw ist sind war waren hat haben mit von in im an am auf für nicht".split()),
    "en": set("the a an and or to of in on at for with be is are was were has have he she it i you we they "
              "sb sth sb's sth's not do does did one's".split()),
}
_SUFFIXES = {"de": ("ern", "en", "er", "es", "em", "e", "n", "s", "st", "t", "et"),
             "en": ("ing", "ed", "es", "s")}


def words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def word_forms(word: str, lang: str) -> list[str]:
    return [word, *(word[:-len(s)] for s in _SUFFIXES[lang] if word.endswith(s) and len(word) - len(s) >= 3)]


def _side_words(alternatives: str, lang: str) -> set[str]:
    out: set[str] = set()
    for alt in _ANNOTATION.sub(" ", alternatives).split(";"):
        ws = [w for w in words(alt.replace("/", " ")) if w not in STOP_WORDS[lang]]
        if 0 < len(ws) <= MAX_ENTRY_WORDS:
            out.update(ws)
    return out


class LexicalScore:
    """Word translations both ways, loaded from a Ding-format dictionary."""

    def __init__(self, path: Path, langs: tuple[str, str], min_known: int = 1) -> None:
        if set(langs) != LANGUAGES:
            raise ConfigError(f"validate.clean.lexicon: a Ding dictionary is German-English, the mix is {list(langs)}")
        self.langs, self.min_known = langs, min_known
        self.table: dict[str, dict[str, set[str]]] = {"de": defaultdict(set), "en": defaultdict(set)}
        self._memo: dict[tuple[str, str], frozenset[str] | None] = {}
        try:
            fh = open(path, encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"validate.clean.lexicon: cannot read {path} ({exc.strerror}); on Debian/Ubuntu "
                              "`apt-get install trans-de-en` installs it at /usr/share/trans/de-en, or set "
                              "validate.clean.min_lexical: 0 to switch the rule off") from None
        with fh:
            for line in fh:
                if line.startswith("#") or " :: " not in line:
                    continue
                de, en = line.rstrip("\n").split(" :: ", 1)
                for sub_de, sub_en in zip(de.split(" | "), en.split(" | ")):
                    wd, we = _side_words(sub_de, "de"), _side_words(sub_en, "en")
                    for w in wd:
                        self.table["de"][w] |= we
                    for w in we:
                        self.table["en"][w] |= wd
        log.info("lexicon %s: %d German and %d English words", path, len(self.table["de"]), len(self.table["en"]))

    def _translations(self, word: str, lang: str, other: str) -> frozenset[str] | None:
        """The forms of the translations of the forms of `word`, plus its own forms (names and loan
        words match themselves); None when no form of it is in the dictionary. Memoized: a corpus
        repeats its words."""
        key = (lang, word)
        if key not in self._memo:
            table, forms = self.table[lang], word_forms(word, lang)
            known = [f for f in forms if f in table]
            if len(self._memo) >= MEMO_WORDS:  # bounded: start afresh before adding (a corpus of many words)
                self._memo.clear()
            self._memo[key] = None if not known else frozenset(
                [*forms, *(g for f in known for e in table[f] for g in word_forms(e, other))])
        return self._memo[key]

    def _share(self, src: list[str], tgt: list[str], lang: str, other: str) -> tuple[int, int]:
        """(known words of `src`, those with a translation in `tgt`): a word is known when one of its
        forms is in the dictionary, and translated when a form of one of its forms' translations is a
        form of a `tgt` word (`spielt` -> {plays, play} meets `playing` -> {playing, play})."""
        targets = {f for w in tgt for f in word_forms(w, other)}
        known = hit = 0
        for w in src:
            if w in STOP_WORDS[lang]:
                continue
            translations = self._translations(w, lang, other)
            if translations is None:
                continue
            known += 1
            hit += not translations.isdisjoint(targets)
        return known, hit

    def coverage(self, a: str, b: str) -> float | None:
        (la, lb), wa, wb = self.langs, words(a), words(b)
        shares = [hit / known for known, hit in (self._share(wa, wb, la, lb), self._share(wb, wa, lb, la))
                  if known >= self.min_known]
        return sum(shares) / len(shares) if shares else None

    def misaligned(self, a: list[str], b: list[str], least: float) -> np.ndarray:
        """Mask of the pairs whose coverage is below `least` (pairs without a score are kept)."""
        out = np.zeros(len(a), dtype=bool)
        for i, (x, y) in enumerate(zip(a, b)):
            score = self.coverage(x, y)
            out[i] = score is not None and score < least
        return out
