"""How every choice among scored candidates is made, and what a tie does: stated once, here.

The project picks among scores in many places: the best decoding setting on dev, the best
checkpoint, the finished hypothesis a beam returns, the consensus among systems' outputs, the
detected language, the best and worst sentences of a report, a promotion's verdict. Scores from a
trained model can tie, or land a float's last bit apart, on one CPU and not on another; so each of
those places follows the same rule, and a test that derives its expectation from a model's scores
reads it through these functions rather than re-deciding it.

The rule:
- **The first listed wins a tie** (`best`, `ranked`): candidates are compared by score alone;
  among equal scores the one listed earlier (in the order the caller gives: settings as written,
  hypotheses as they finished, systems as read) comes first. A NaN score ranks after every number.
- **An equal value is no improvement** (`improves`): a value measured again (a val loss, a val
  BLEU) replaces the best so far only when strictly better, so a tie keeps the earlier epoch.
- **A limit holds at equality** (`within`): a gate's difference passes when it is at most its
  limit, both rounded to 6 decimals first, so scores that are themselves rounded (BLEU to 2
  decimals) do not fail by a float's last bit (15.51 and 16.01 are 0.5 apart, not
  0.5000000000000018).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

PLACES = 6  # a gate's difference is rounded to this many decimals before it meets its limit


def _key(score: float, higher: bool) -> tuple[int, float]:
    """Sort key: smaller is better; NaN after every number."""
    if math.isnan(score):
        return (1, 0.0)
    return (0, -score if higher else score)


def ranked(candidates: Iterable[T], score: Callable[[T], float], *, higher: bool = True) -> list[T]:
    """The candidates best first; equal scores keep the order they were listed in (a stable sort)."""
    return sorted(candidates, key=lambda c: _key(float(score(c)), higher))


def best(candidates: Iterable[T], score: Callable[[T], float], *, higher: bool = True) -> T:
    """The best candidate; on a tie, the one listed first. Raises ValueError on no candidates."""
    chosen: T | None = None
    chosen_key: tuple[int, float] | None = None
    for candidate in candidates:
        key = _key(float(score(candidate)), higher)
        if chosen_key is None or key < chosen_key:  # strict: an equal later one never displaces the first
            chosen, chosen_key = candidate, key
    if chosen_key is None:
        raise ValueError("best() of no candidates")
    return chosen  # type: ignore[return-value]


def improves(value: float, best_so_far: float | None, *, higher: bool) -> bool:
    """Whether `value` beats the best so far: strictly (an equal value does not); the first value
    always does; a NaN never does."""
    if math.isnan(value):
        return False
    if best_so_far is None or math.isnan(best_so_far):
        return True
    return value > best_so_far if higher else value < best_so_far


def within(difference: float, limit: float) -> bool:
    """Whether a gate's `difference` (e.g. a BLEU drop) stays within `limit`: at most, both rounded to
    `PLACES` decimals first. A NaN difference never does."""
    return not math.isnan(difference) and round(difference, PLACES) <= round(limit, PLACES)
