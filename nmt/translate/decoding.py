"""What the server does with a batch of sentences, batching aside: `translate_sentences`.

Spans (URLs, e-mail addresses, numbers, emoji) are masked (`nmt.translate.spans`), the beam's
n-best list is decoded (one search), the loop and length guard puts its choice first
(`nmt.translate.guard`; greedy decoding for a sentence with no good hypothesis), and the spans are put
back. Each sentence keeps the confidence of the translation chosen for it (`Hypothesis.confidence`:
the geometric mean of the model's probabilities of the tokens it chose). The batcher calls it for
every batch; the tests and `bench/serve_load.py` call it offline for the reference the served
answers must equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from nmt.decode.lines import LineTranslator
from nmt.text.vocab import UNK_ID
from nmt.translate.guard import choose
from nmt.translate.spans import mask

GUARD_NBEST = 4  # hypotheses per sentence the guard may choose from (the beam's n-best list)


@dataclass(frozen=True)
class Output:
    """One sentence's answer."""

    texts: list[str]  # its translations, best first (never none: "" for a sentence with no tokens)
    confidence: float  # the first one's, 0-1; NaN when the engine keeps no scores (CTranslate2) or no tokens
    pieces: int = 0  # source pieces the model read (</s> included)
    unknown: int = 0  # of which <unk>: pieces the source vocabulary lacks


def translate_sentences(translator: LineTranslator, sentences: list[str], n: int = 1) -> tuple[list[Output], int]:
    """Up to `n` translations per sentence, best first, and how many sentences the guard changed."""
    masked = [mask(s) for s in sentences]
    sources = [m.text for m in masked]
    scored = translator.translate_scored(sources, max(n, GUARD_NBEST))
    confidence = [dict(line.hyps) for line in scored]  # per sentence: text -> confidence

    def greedy(lines: list[str]) -> list[str]:
        found = replace(translator, beam_size=1).translate_scored(lines, 1)
        for line, again in zip(lines, found):
            for i in (i for i, s in enumerate(sources) if s == line):
                confidence[i].update(again.hyps)
        return [again.hyps[0][0] if again.hyps else "" for again in found]

    chosen, changed = choose(sources, [[text for text, _ in line.hyps] for line in scored], greedy)
    out = []
    for i, (m, hyps) in enumerate(zip(masked, chosen)):
        # a loop cut short by the guard keeps the confidence of the hypothesis it was cut from
        score = confidence[i].get(hyps[0], scored[i].hyps[0][1]) if hyps else math.nan
        source = scored[i].source
        out.append(Output([m.restore(h) for h in hyps[:n]] or [""], score, len(source), source.count(UNK_ID)))
    return out, changed
