"""The code's own tie rule, for tests that compare two engines' outputs of one model (transformers,
the JavaScript consumer in a browser): where two searches part, our torch model scores both choices,
and a gap under `TIE` is a tie, which either engine may break its own way."""

from __future__ import annotations

from typing import Any

TIE = 1e-4  # two engines' log-probabilities of one model differ by ~1e-6; a closer call than this is a tie
EOS, BOS = 3, 2


def first_difference(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def tie_gap(ours: Any, src: list[int], mine: list[int], theirs: list[int], beam: int, alpha: float = 0.0,
            limit: int | None = None) -> float:
    """`ours` (nmt.decode.translator.Translator)'s score of `mine` minus that of `theirs`: greedy, the two tokens
    at the first difference; beam, the whole hypotheses as nmt/decode/hypotheses.py scores them: the summed
    log-probabilities with `</s>` over GNMT's length penalty ((5 + |Y|) / 6) ** alpha, |Y| counting `</s>`; a
    hypothesis cut at the output `limit` (it has `limit` symbols) has no `</s>` and |Y| = its length."""
    import torch

    with torch.no_grad():
        logp = [ours.model(torch.tensor([src]), torch.tensor([[BOS, *y]]))[0].log_softmax(-1) for y in (mine, theirs)]
    if beam == 1:
        at = first_difference(mine, theirs)
        return float(logp[0][at, (mine + [EOS])[at]] - logp[0][at, (theirs + [EOS])[at]])  # one prefix: one row

    def score(lp: Any, y: list[int]) -> float:
        ids = y if limit is not None and len(y) >= limit else y + [EOS]
        return float(lp[range(len(ids)), ids].sum()) / ((5 + len(ids)) / 6) ** alpha

    return score(logp[0], mine) - score(logp[1], theirs)
