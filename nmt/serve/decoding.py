"""What the server does with a batch of sentences, batching aside: `translate_sentences`.

Spans (URLs, e-mail addresses, numbers, emoji) are masked (`nmt.serve.spans`), the beam's
n-best list is decoded (one search), the loop and length guard puts its choice first
(`nmt.serve.guard`; greedy decoding for a sentence with no good hypothesis), and the spans are put
back. The batcher calls it for every batch; the tests and `bench/serve_load.py` call it offline
for the reference the served answers must equal.
"""

from __future__ import annotations

from dataclasses import replace

from nmt.decode.lines import LineTranslator
from nmt.serve.guard import choose
from nmt.serve.spans import mask

GUARD_NBEST = 4  # hypotheses per sentence the guard may choose from (the beam's n-best list)


def translate_sentences(translator: LineTranslator, sentences: list[str], n: int = 1) -> tuple[list[list[str]], int]:
    """Up to `n` translations per sentence, best first (never none: "" for a sentence with no
    tokens), and how many sentences the guard changed."""
    masked = [mask(s) for s in sentences]
    nbest = translator.translate_n([m.text for m in masked], max(n, GUARD_NBEST))
    chosen, changed = choose([m.text for m in masked], nbest,
                             lambda lines: replace(translator, beam_size=1).translate(lines))
    return [[m.restore(h) for h in hyps[:n]] or [""] for m, hyps in zip(masked, chosen)], changed
