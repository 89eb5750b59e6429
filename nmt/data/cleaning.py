"""Cleaning rules for training pairs, in the spirit of OpusFilter's filters.

Each rule looks at a chunk of pairs and returns a mask of the pairs it rejects; `Cleaner` runs
the rules `validate.clean` turns on, in a fixed order, and attributes every dropped pair to the
first rule it fails, so a source's report says how many pairs each rule took. Rules that cost
more (language identification, the duplicate look-up) only see the pairs the cheaper ones kept.

- `same`: the sides are equal after normalization (a copy: OpusFilter's `LengthRatio` cannot see it);
- `min_alpha` / `max_other_script`: OpusFilter's `AlphabetRatioFilter` / `CharacterScoreFilter`:
  letters among the non-space characters, and the letters outside the Latin script;
- `numbers`: OpusFilter's `NonZeroNumeralsFilter` in its strict form: the numbers (in a canonical
  form, so 3,5 / 3.5 and 1.000 / 1,000 agree, and 3,5 / 35 do not) are the same set on both sides,
  when both sides have digits (a number spelled out on one side is fine);
- `urls`: URLs and e-mail addresses appear on both sides alike;
- `langid`: both sides are identified as their language (`nmt.text.langid`);
- `min_lexical`: the sides translate each other, word by word, by a bilingual dictionary
  (`nmt.data.lexicon`): misaligned pairs in the right languages and of plausible lengths;
- `dedupe`: a pair seen before in the training sources is dropped (the first is kept): pair-level,
  since Tatoeba gives several valid translations of one sentence.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nmt.config.mix import CleanConfig
from nmt.data.chunks import digest64
from nmt.data.decontaminate import normalize
from nmt.data.lexicon import LANGUAGES as LEXICON_LANGUAGES
from nmt.data.lexicon import LexicalScore
from nmt.text.langid import unknown_to_detector
from nmt.text.languages import language

_LETTER = re.compile(r"[^\W\d_]")
_LATIN = re.compile(r"[A-Za-z\u00AA\u00BA\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u024F\u1E00-\u1EFF\uFB00-\uFB06]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)
_TRAILING = ".,;:!?)]}'\""

Mask = np.ndarray  # (n,) bool: True = the pair is rejected
REPEATED = "repeated pair"  # the dedupe rule's count, which the mix's gate holds to max_duplicate_rate
Rule = Callable[[list[str], list[str]], Mask]


def row_rules(words: dict[str, Any], max_words: int, max_ratio: float) -> dict[str, Any]:
    """validate's row-level rules by label, in the order a row is judged: per language a side empty and
    a side over `max_words` words, then the word-count ratio (longer + 1) / (shorter + 1) over `max_ratio`.
    `words`: the two languages' word counts (numpy arrays or pandas Series); each rule a boolean mask of
    that kind. The validate stage counts every problem (`row_problems`), a mix drops a row under its first."""
    rules = {}
    for lang, w in words.items():
        rules[f"empty {lang}"], rules[f"{lang} over {max_words} words"] = w == 0, w > max_words
    wa, wb = words.values()
    rules[f"length ratio over {max_ratio:g}"] = np.maximum(wa + 1, wb + 1) / np.minimum(wa + 1, wb + 1) > max_ratio
    return rules


def _both(a: list[str], b: list[str], bad: Callable[[str], bool]) -> Mask:
    return np.fromiter((bad(x) or bad(y) for x, y in zip(a, b)), dtype=bool, count=len(a))


def same(a: list[str], b: list[str]) -> Mask:
    return np.fromiter(((n := normalize(x)) != "" and n == normalize(y) for x, y in zip(a, b)),
                       dtype=bool, count=len(a))


def alpha_share(text: str) -> float:
    """Letters among the non-space characters (1.0 for an empty text)."""
    chars = len(text) - text.count(" ")
    return len(_LETTER.findall(text)) / chars if chars else 1.0


def other_script_share(text: str) -> float:
    """Letters outside the Latin script among all letters (0.0 without letters)."""
    letters = len(_LETTER.findall(text))
    return (letters - len(_LATIN.findall(text))) / letters if letters else 0.0


def _canonical_number(text: str) -> str:
    """`1,000` and `1.000` -> `1000` (groups of three after every separator: thousands); `3,5` and
    `3.5` -> `3.5` (otherwise the last separator is the decimal mark); `35` stays `35`."""
    groups = re.split(r"[.,]", text)
    if len(groups) == 1 or all(len(g) == 3 for g in groups[1:]):
        return "".join(groups)
    return "".join(groups[:-1]) + "." + groups[-1]


def numbers(text: str) -> frozenset[str]:
    return frozenset(_canonical_number(n) for n in _NUMBER.findall(text))


def urls(text: str) -> frozenset[str]:
    return frozenset(u.rstrip(_TRAILING).lower() for u in _URL.findall(text))


def number_mismatch(a: list[str], b: list[str]) -> Mask:
    return np.fromiter(((na := numbers(x)) and (nb := numbers(y)) and na != nb for x, y in zip(a, b)),
                       dtype=bool, count=len(a))


def url_mismatch(a: list[str], b: list[str]) -> Mask:
    return np.fromiter((urls(x) != urls(y) for x, y in zip(a, b)), dtype=bool, count=len(a))


def rules_for_pair(cfg: CleanConfig, langs: tuple[str, str]) -> tuple[CleanConfig, list[str]]:
    """`cfg` with the rules switched off that have no data for the pair `langs`, and a line for each
    saying so (the validate report's notes): the dictionary rule off a German-English pair, the
    language rule for a language the detector does not know, the Latin-script rule for another script."""
    notes, pair = [], "-".join(langs)
    if cfg.min_lexical > 0 and set(langs) != LEXICON_LANGUAGES:
        notes.append(f"validate.clean.min_lexical switched off for {pair}: its dictionary ({cfg.lexicon}) is "
                     "German-English; no dictionary ships for this pair")
        cfg = dataclasses.replace(cfg, min_lexical=0.0)
    if cfg.langid and (missing := unknown_to_detector(langs)):
        notes.append(f"validate.clean.langid switched off for {pair}: the language detector (eldc) does not know "
                     f"{missing}")
        cfg = dataclasses.replace(cfg, langid=False)
    scripts = {lang: language(lang).script or "unknown" for lang in langs}
    if cfg.max_other_script < 1 and set(scripts.values()) != {"Latn"}:
        notes.append(f"validate.clean.max_other_script switched off for {pair}: it counts letters outside the Latin "
                     f"script, and the pair's scripts are {scripts} (nmt/text/languages.py)")
        cfg = dataclasses.replace(cfg, max_other_script=1.0)
    return cfg, notes


@functools.lru_cache(maxsize=2)
def _lexicon(path: Path, langs: tuple[str, str]) -> LexicalScore:
    """One load per dictionary and process (the holdout and train passes share it)."""
    return LexicalScore(path, langs)


def pair_digests(a: list[str], b: list[str]) -> np.ndarray:
    """8-byte BLAKE2b digest of each pair, as uint64: the duplicate look-up's key, and the mix's
    (nmt.data.mixing) draw of a dev share and a weight's fraction, fixed by the pair's text."""
    return np.fromiter((digest64(f"{x}\t{y}", person=b"nmt-mix") for x, y in zip(a, b)), dtype=np.uint64,
                       count=len(a))


class SeenPairs:
    """The pairs seen so far, as a sorted array of 8-byte digests (8 bytes per distinct pair; two
    distinct pairs collide with probability about pairs^2 / 2^65). A chunk is looked up and merged
    in one pass: O(chunk log chunk + seen) per chunk."""

    def __init__(self) -> None:
        self.seen = np.empty(0, dtype=np.uint64)

    def repeated(self, d: np.ndarray, skip: Mask) -> Mask:
        """Mask of the pairs (their `pair_digests`) seen before, earlier in this chunk included; the
        others are added. Pairs marked `skip` are neither looked up nor added."""
        live = np.flatnonzero(~skip)
        uniq, first = np.unique(d[live], return_index=True)
        dup = np.ones(len(live), dtype=bool)
        dup[first] = False  # the first of equal pairs within the chunk
        pos = np.searchsorted(self.seen, uniq)
        known = (pos < len(self.seen)) & (self.seen[np.minimum(pos, len(self.seen) - 1)] == uniq) if len(
            self.seen) else np.zeros(len(uniq), dtype=bool)
        dup[first[known]] = True
        new = uniq[~known]
        self.seen = np.insert(self.seen, np.searchsorted(self.seen, new), new)
        out = np.zeros(len(d), dtype=bool)
        out[live] = dup
        return out


@dataclass
class Cleaner:
    """The rules of `cfg` over chunks of one mix's training pairs; `identify` (a language
    identifier's `mismatch(texts, lang) -> Mask`) is needed when `cfg.langid` is on."""

    cfg: CleanConfig
    langs: tuple[str, str]
    identify: Callable[[list[str], str], Mask] | None = None
    seen: SeenPairs = field(default_factory=SeenPairs)
    lexicon: LexicalScore | None = None  # loaded when min_lexical first needs it

    def rules(self) -> list[tuple[str, Rule]]:
        """(name, rule) of every rule switched on, cheapest first (the dedupe look-up comes last)."""
        c, out = self.cfg, list[tuple[str, Rule]]()
        if c.same:
            out.append(("same text on both sides", same))
        if c.min_alpha > 0:
            out.append((f"letters under {c.min_alpha:g} of characters",
                        lambda a, b: _both(a, b, lambda s: alpha_share(s) < c.min_alpha)))
        if c.max_other_script < 1:
            out.append((f"non-Latin letters over {c.max_other_script:g}",
                        lambda a, b: _both(a, b, lambda s: other_script_share(s) > c.max_other_script)))
        if c.numbers:
            out.append(("numbers differ", number_mismatch))
        if c.urls:
            out.append(("URLs or e-mail addresses differ", url_mismatch))
        if c.langid:
            out.append(("wrong language", self._wrong_language))
        if c.min_lexical > 0:
            if self.lexicon is None:
                self.lexicon = _lexicon(Path(c.lexicon), self.langs)
            lexicon = self.lexicon
            out.append((f"dictionary coverage under {c.min_lexical:g}",
                        lambda a, b: lexicon.misaligned(a, b, c.min_lexical)))
        return out

    def _wrong_language(self, a: list[str], b: list[str]) -> Mask:
        if self.identify is None:
            raise ValueError("validate.clean.langid needs a language identifier")
        bad = np.zeros(len(a), dtype=bool)
        for lang, side in zip(self.langs, (a, b)):
            long_enough = np.fromiter((len(s) >= self.cfg.langid_min_chars for s in side), dtype=bool, count=len(a))
            idx = np.flatnonzero(long_enough & ~bad)
            if len(idx):
                bad[idx] |= self.identify([side[i] for i in idx], lang)
        return bad

    def apply(self, a: list[str], b: list[str], dropped: Mask, counts: Counter, digests: np.ndarray | None = None
              ) -> Mask:
        """Run the rules on the pairs not yet `dropped`; count each newly dropped pair under its
        first failed rule in `counts`; return the updated mask (duplicates checked last, by the
        pairs' `digests` when the caller has them)."""
        dropped = dropped.copy()
        for name, rule in self.rules():
            live = np.flatnonzero(~dropped)
            if not len(live):
                break
            bad = rule([a[i] for i in live], [b[i] for i in live])
            counts[name] += int(bad.sum())
            dropped[live[bad]] = True
        if self.cfg.dedupe:
            rep = self.seen.repeated(pair_digests(a, b) if digests is None else digests, dropped)
            counts[REPEATED] += int(rep.sum())
            dropped |= rep
        return dropped
