"""The code's own tie rule, for tests that compare two engines' outputs of one model (transformers,
the JavaScript consumer in a browser): where two searches part, our torch model scores both choices,
and a gap under `TIE` is a tie, which either engine may break its own way."""

from __future__ import annotations

from typing import Any

TIE = 1e-4  # two engines' log-probabilities of one model differ by ~1e-6; a closer call than this is a tie
EOS, BOS = 3, 2


def first_difference(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def tie_gap(ours: Any, src: list[int], mine: list[int], theirs: list[int], beam: int, alpha: float = 0.0) -> float:
    """`ours` (nmt.decode.translator.Translator)'s score of `mine` minus that of `theirs`: greedy, the two tokens
    at the first difference; beam, the whole hypotheses with `</s>`, their summed log-probabilities over GNMT's
    length penalty ((5 + |Y|) / 6) ** alpha, |Y| counting `</s>` (nmt/decode/search.py)."""
    import torch

    with torch.no_grad():
        logp = [ours.model(torch.tensor([src]), torch.tensor([[BOS, *y]]))[0].log_softmax(-1) for y in (mine, theirs)]
    if beam == 1:
        at = first_difference(mine, theirs)
        return float(logp[0][at, (mine + [EOS])[at]] - logp[0][at, (theirs + [EOS])[at]])  # one prefix: one row
    scores = [float(lp[range(len(y) + 1), y + [EOS]].sum()) / ((5 + len(y) + 1) / 6) ** alpha
              for lp, y in zip(logp, (mine, theirs))]
    return scores[0] - scores[1]
