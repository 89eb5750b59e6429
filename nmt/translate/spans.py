"""Spans carried through the model untouched: URLs, e-mail addresses, numbers and emoji.

A sentence's protected spans are cut out before decoding and put back after it, by placeholder:
each span becomes a number (`1`, `2`, ... in order; the sentence holds no other digits, since
numbers are spans too), which a translation model copies as it copies any number, and `restore()`
replaces each placeholder in the translation with its span, wherever the model moved it. A
placeholder the model dropped gets its span appended at the end, so no URL, address, number or
emoji is lost; a placeholder it repeated is restored once. No retraining: the models never see a
special token. The markup and terminology features reuse the mechanism (`Masked`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

URL = r"(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)\]]"
EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
NUMBER = r"(?<![\w.,+-])[+-]?\d+(?:[.,:/]\d+)*%?(?!\w)"  # a number of its own, not the 19 of COVID-19 or the 4 of A4
# pictographs, dingbats, flags, keycaps, with their joiners and variation selectors
EMOJI = (r"(?:[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF]"
         r"[\uFE0F\u200D\U0001F3FB-\U0001F3FF\U0001F000-\U0001FAFF\u2600-\u27BF]*)+")
PROTECTED = re.compile(f"{URL}|{EMAIL}|{EMOJI}|{NUMBER}")
# a placeholder in a translation: a number of its own (not the 1 of "s1", the 19 of COVID-19 nor the 4 of A4 or +4);
# spans (here) and inline tags (nmt.translate.markup.inline) are both written back at these
PLACEHOLDER = re.compile(r"(?<![\w.,+-])\d+(?![\d.,]\d|\w)")


@dataclass(frozen=True)
class Masked:
    """A sentence with its spans replaced by placeholders, and the spans in order."""

    text: str
    spans: tuple[str, ...]

    def restore(self, translation: str) -> str:
        """`translation` with placeholder k replaced by span k (its first occurrence; one pass, so a
        restored span's digits are never taken for a placeholder); spans whose placeholder is
        missing are appended at the end."""
        used: set[int] = set()

        def put(match: re.Match[str]) -> str:
            k = int(match.group(0))
            if 1 <= k <= len(self.spans) and k not in used:
                used.add(k)
                return self.spans[k - 1]
            return match.group(0)

        out = PLACEHOLDER.sub(put, translation)
        missing = [span for k, span in enumerate(self.spans, start=1) if k not in used]
        return " ".join([out, *missing]) if missing else out


def mask(sentence: str) -> Masked:
    """`sentence` with every protected span replaced by its placeholder number."""
    spans: list[str] = []

    def placeholder(match: re.Match[str]) -> str:
        spans.append(match.group(0))
        return str(len(spans))

    return Masked(PROTECTED.sub(placeholder, sentence), tuple(spans))

