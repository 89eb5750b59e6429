"""nmt/ranking.py: the one tie rule of every choice among scores, on made-up scores that tie."""

from __future__ import annotations

import math

import pytest

from nmt.ranking import best, improves, ranked, within

NAN = float("nan")


def test_the_first_listed_wins_a_tie_whichever_way_is_better() -> None:
    scores = {"a": 25.67, "b": 25.67, "c": 3.0}
    assert best(scores, scores.get) == "a"
    assert best(["b", "a", "c"], scores.get) == "b"  # listed order, not the name's
    assert best(["c", "b", "a"], scores.get, higher=False) == "c"
    assert best({"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 1.0}.get, higher=False) == "x"


def test_ranked_keeps_listed_order_among_equal_scores_and_agrees_with_best() -> None:
    scores = [("p", 2.0), ("q", 5.0), ("r", 2.0), ("s", 5.0), ("t", 1.0)]
    assert [n for n, _ in ranked(scores, lambda x: x[1])] == ["q", "s", "p", "r", "t"]
    assert [n for n, _ in ranked(scores, lambda x: x[1], higher=False)] == ["t", "p", "r", "q", "s"]
    for higher in (True, False):
        assert ranked(scores, lambda x: x[1], higher=higher)[0] == best(scores, lambda x: x[1], higher=higher)


def test_a_nan_score_ranks_after_every_number() -> None:
    scores = {"nan": NAN, "low": -1e9, "high": 7.0}
    assert best(scores, scores.get) == "high" and best(scores, scores.get, higher=False) == "low"
    assert ranked(scores, scores.get)[-1] == "nan" and ranked(scores, scores.get, higher=False)[-1] == "nan"
    assert best(["nan", "nan2"], {"nan": NAN, "nan2": NAN}.get) == "nan"  # all NaN: still the first


def test_best_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="no candidates"):
        best([], float)


def test_an_equal_value_is_no_improvement() -> None:
    assert improves(4.59, None, higher=False) and improves(30.0, None, higher=True)
    assert not improves(4.59, 4.59, higher=False) and not improves(30.0, 30.0, higher=True)
    assert improves(4.58, 4.59, higher=False) and not improves(4.60, 4.59, higher=False)
    assert improves(30.01, 30.0, higher=True) and not improves(29.99, 30.0, higher=True)
    assert not improves(NAN, 4.59, higher=False) and not improves(NAN, None, higher=True)
    assert improves(4.59, NAN, higher=False)  # a NaN best so far is beaten by any number


def test_a_limit_holds_at_equality_despite_the_last_bit() -> None:
    gap = 16.01 - 15.51
    assert gap > 0.5  # the float's last bit: a plain `<=` would fail this gate
    assert within(gap, 0.5) and within(0.5, 0.5) and not within(0.51, 0.5)
    assert within(-3.0, 0.0) and not within(NAN, 1.0) and not within(math.inf, 1.0)
    limit = 100.0 - 97.93  # a limit computed from scores is as rounded as the difference it meets
    assert within(limit, limit) and within(2.07, limit) and not within(2.08, limit)
