"""The steps a list of units takes around decoding, for `nmt.translate.texts` (`prepare` and `finish`).

A unit is a block of markup's text with its inline tags as placeholders (`nmt.translate.markup.inline`), or
plain text (None). Before decoding: where the unit's model aligns tag pairs back (an ONNX package) they leave
the text the model reads (`plain_texts`), each text is cut into sentences with its layout kept and each
sentence's glossary terms masked (`split_and_mask`). After decoding: the terms are put back (`terms_restored`),
each text's sentences joined in its layout, and a unit's pairs written back where the model's own alignment
says (`put_pairs`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from nmt.text.sentences import Segmented
from nmt.translate.decoding import Output
from nmt.translate.glossary import Glossary
from nmt.translate.markup.inline import Unit
from nmt.translate.markup.pairs import Aligner, PairRange, align_pairs, has_pairs, plain_text, with_pairs
from nmt.translate.termswap import TermMasked, mask_sentences, restore_all

Plain = tuple[str, list[PairRange]]  # a unit's text without its tag pairs, and where the pairs were


def plain_texts(units: Sequence[Unit | None], aligned: Sequence[bool]) -> list[Plain | None]:
    """Each unit's text without its tag pairs, where its model can align them back (`aligned[i]`: an ONNX
    package) and it has pairs; None where the unit is read as it is."""
    return [plain_text(u) if u is not None and ok and has_pairs(u) else None for u, ok in zip(units, aligned)]


def model_texts(texts: Sequence[str], plains: Sequence[Plain | None]) -> list[str]:
    """What each text is cut into sentences from: its plain text where its pairs left it."""
    return [t if p is None else p[0] for t, p in zip(texts, plains)]


def split_and_mask(split: Callable[[list[str], list[str]], list[Segmented]], texts: list[str], langs: list[str],
                   glossaries: Sequence[Glossary | None] | None) -> tuple[list[Segmented], list[TermMasked | None]]:
    """The texts cut into sentences (`split(texts, langs)`), and each sentence's glossary terms masked
    (`glossaries[i]`: text i's terminology; None where a sentence has no term or span to keep)."""
    segmented = split(texts, langs)
    masks: list[TermMasked | None] = []
    for seg, glossary in zip(segmented, glossaries or [None] * len(texts)):
        masks += mask_sentences(seg.sentences, glossary)
    return segmented, masks


def terms_restored(outputs: Sequence[Output], masks: Sequence[TermMasked | None]) -> list[Output]:
    """Each sentence's outputs (every hypothesis) with its glossary terms and kept spans written back."""
    return [o if m is None else replace(o, texts=restore_all(o.texts, m)) for o, m in zip(outputs, masks)]


def put_pairs(unit: Unit, plain: Plain, seg: Segmented, best: Sequence[str], joined: str,
              aligner: Aligner | None) -> str:
    """A unit's translation (`joined`, of its sentences' `best`) with its tag pairs' placeholders written
    in where `aligner` (the model's own alignment) puts their words; without one, next to their relative place."""
    found = {} if aligner is None else align_pairs(aligner, seg, best, plain[1])
    return with_pairs(unit, plain[0], joined, plain[1], found)
