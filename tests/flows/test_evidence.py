"""Promotion by evidence (flows/evidence.py, nmt/evaluate/paired.py) on prepared translations.

Synthetic test sets stand for real ones: references are random sentences of made-up words; a
system's hypothesis is its reference with a share of the words dropped (more dropped: worse).
Nothing is trained or decoded."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import sacrebleu

import flows.evidence
from flows.evidence import BETTER, NO_DIFFERENCE, WORSE, decide_by_evidence, markdown, to_json
from flows.registry import promote_config
from nmt.config.promote import PromoteConfig
from nmt.evaluate.paired import (
    Comparison,
    PairedResult,
    holm,
    paired_bootstrap,
    percentile_interval,
    resampled_sums,
    scores_from_sums,
    sentence_statistics,
    two_sided_p,
)
from support.scratch import ROOT

REAL_RECORD = ROOT / "reports" / "promotion" / "nmt-de-en.json"  # the committed real promotion

WORDS = [f"{a}{b}" for a in ("Haus", "Mann", "Frau", "Hund", "Kind", "Ball", "Weg", "Tag") for b in
         ("", "e", "en", "er", "es", "ig", "lich", "ung", "chen", "heit")]


def references(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) + "." for _ in range(n)]


def dropped(refs: list[str], share: float, seed: int) -> list[str]:
    """Each reference with about `share` of its words dropped (the first word always kept)."""
    rng = random.Random(seed)
    out = []
    for line in refs:
        words = line.split()
        out.append(" ".join([words[0]] + [w for w in words[1:] if rng.random() >= share]))
    return out


@pytest.fixture(scope="module")
def sets() -> dict[str, tuple[list[str], list[str]]]:
    """Three sets: name -> (references, champion hypotheses with 10% of the words dropped)."""
    out = {}
    for i, (name, n) in enumerate((("test2016", 300), ("test2017", 250), ("val", 400))):
        refs = references(n, seed=i)
        out[name] = (refs, dropped(refs, 0.10, seed=100 + i))
    return out


def test_the_fast_scores_of_the_full_sample_equal_sacrebleus_corpus_scores(sets: dict) -> None:
    from sacrebleu.metrics import BLEU, CHRF

    refs, champion = sets["test2016"]
    bleu, chrf = BLEU(references=[refs]), CHRF(references=[refs])
    for metric, corpus in ((bleu, sacrebleu.corpus_bleu), (chrf, sacrebleu.corpus_chrf)):
        full = sentence_statistics(metric, champion).sum(axis=0, keepdims=True).astype(np.float64)
        assert scores_from_sums(metric, full)[0] == pytest.approx(corpus(champion, [refs]).score, abs=1e-9)
    result = paired_bootstrap(refs, champion, champion)
    assert result.bleu.champion == pytest.approx(sacrebleu.corpus_bleu(champion, [refs]).score, abs=1e-9)
    assert result.chrf.challenger == pytest.approx(sacrebleu.corpus_chrf(champion, [refs]).score, abs=1e-9)


def test_the_resampled_sums_are_the_sums_of_the_resampled_sentences(sets: dict) -> None:
    from sacrebleu.metrics import BLEU

    refs, champion = sets["test2017"]
    stats = sentence_statistics(BLEU(references=[refs]), champion)
    idx = np.random.default_rng(7).choice(len(stats), size=(30, len(stats)), replace=True)
    (sums,) = resampled_sums([stats], resamples=30, seed=7, chunk=7)  # chunks of 7 continue one stream
    assert np.array_equal(sums, stats[idx].sum(axis=1).astype(np.float64))


def test_the_resampled_scores_are_sacrebleus_own_bootstrap_for_the_same_seed(sets: dict,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import _bootstrap_resample

    monkeypatch.setenv("SACREBLEU_SEED", "321")
    refs, champion = sets["test2016"]
    bleu = BLEU(references=[refs])
    stats = sentence_statistics(bleu, champion)
    _, theirs = _bootstrap_resample(stats.tolist(), bleu, n_samples=200)
    (sums,) = resampled_sums([stats], resamples=200, seed=321)
    np.testing.assert_allclose(scores_from_sums(bleu, sums), [s.score for s in theirs], rtol=1e-5)


def test_the_interval_contains_the_point_difference_and_a_clearly_worse_system_is_significant(sets: dict) -> None:
    refs, champion = sets["val"]
    result = paired_bootstrap(refs, champion, dropped(refs, 0.13, seed=9))
    for c in (result.bleu, result.chrf):
        assert c.low <= c.difference <= c.high
        assert c.difference == pytest.approx(c.challenger - c.champion)
    assert result.bleu.high < 0 and result.bleu.p_value < 0.01
    assert (result.sentences, result.resamples, result.seed) == (400, 1000, 12345)
    assert "bs:1000" in result.bleu.signature and "seed:12345" in result.bleu.signature


def test_a_fixed_seed_gives_identical_results_and_another_seed_other_resamples(sets: dict) -> None:
    refs, champion = sets["test2017"]
    challenger = dropped(refs, 0.11, seed=5)
    first, second = paired_bootstrap(refs, champion, challenger), paired_bootstrap(refs, champion, challenger)
    assert first == second
    other = paired_bootstrap(refs, champion, challenger, seed=1)
    assert other.bleu.difference == first.bleu.difference  # the full-set scores do not depend on the seed
    assert (other.bleu.low, other.bleu.high) != (first.bleu.low, first.bleu.high)


def test_identical_systems_have_p_one_and_a_zero_interval(sets: dict) -> None:
    refs, champion = sets["test2016"]
    result = paired_bootstrap(refs, champion, list(champion))
    assert result.bleu.p_value == 1.0 and result.chrf.p_value == 1.0
    assert (result.bleu.low, result.bleu.difference, result.bleu.high) == (0.0, 0.0, 0.0)


def test_two_sided_p_and_the_percentile_interval_by_hand() -> None:
    better = np.arange(1.0, 1001.0)  # the challenger ahead in every resample
    assert two_sided_p(better) == pytest.approx(2 / 1001)
    assert two_sided_p(-better) == pytest.approx(2 / 1001)
    half = np.array([-1.0] * 50 + [1.0] * 50)
    assert two_sided_p(half) == 1.0
    assert two_sided_p(np.array([-1.0] * 10 + [1.0] * 90)) == pytest.approx(2 * 11 / 101)
    assert percentile_interval(np.arange(0.0, 101.0)) == pytest.approx((2.5, 97.5))


def test_holm_against_hand_computed_values() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> max(0.06, 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # 0.5*2 = 1.0 caps; 0.6 stays below the running max
    assert holm([0.02]) == [0.02]  # one test: nothing to correct
    assert holm([]) == []
    with pytest.raises(ValueError):
        holm([0.1, float("nan")])


def _with(sets: dict, challengers: dict[str, list[str]]) -> dict:
    return {name: (refs, champ, challengers.get(name, champ)) for name, (refs, champ) in sets.items()}


def test_a_challenger_much_worse_on_one_set_is_refused_naming_that_set(sets: dict) -> None:
    refs = sets["test2017"][0]
    decision = decide_by_evidence(_with(sets, {"test2017": dropped(refs, 0.40, seed=11)}), 10.0, 10.0)
    assert not decision.promote
    assert "significantly worse on test2017" in decision.reason
    assert "on test2016" not in decision.reason and "on val" not in decision.reason
    verdicts = {e.test_set: e.verdict for e in decision.sets}
    assert verdicts == {"test2016": NO_DIFFERENCE, "test2017": WORSE, "val": NO_DIFFERENCE}
    worse = next(e for e in decision.sets if e.test_set == "test2017")
    assert worse.difference < 0 and worse.high < 0 and worse.holm_p < 0.05
    assert worse.holm_p == pytest.approx(min(1.0, 3 * worse.p_value))  # the smallest of three p-values
    assert worse.chrf_difference < 0


def test_a_challenger_equal_to_the_champion_is_promoted(sets: dict) -> None:
    decision = decide_by_evidence(_with(sets, {}), 10.0, 9.5)
    assert decision.promote, decision.reason
    assert all(e.verdict == NO_DIFFERENCE and e.difference == 0.0 and e.holm_p == 1.0 for e in decision.sets)
    assert decision.speed_ratio == pytest.approx(0.95)
    assert "not significantly worse" in decision.reason


def test_a_better_challenger_is_promoted_and_called_better(sets: dict) -> None:
    better = {name: list(refs) for name, (refs, _) in sets.items()}  # the references themselves: nothing dropped
    decision = decide_by_evidence(_with(sets, better), 10.0, 12.0)
    assert decision.promote, decision.reason
    assert {e.verdict for e in decision.sets} == {BETTER}
    assert "significantly better on test2016, test2017, val" in decision.reason


def test_a_good_but_slow_challenger_is_refused_naming_the_speed(sets: dict) -> None:
    better = {name: list(refs) for name, (refs, _) in sets.items()}
    decision = decide_by_evidence(_with(sets, better), champion_sps=20.0, challenger_sps=17.0)
    assert not decision.promote
    assert decision.speed_ratio == pytest.approx(0.85)
    assert "too slow: speed ratio 0.850" in decision.reason and "min_speed_ratio 0.9" in decision.reason
    assert "worse" not in decision.reason


def test_worse_and_slow_are_both_named(sets: dict) -> None:
    refs = sets["val"][0]
    decision = decide_by_evidence(_with(sets, {"val": dropped(refs, 0.40, seed=3)}), 20.0, 10.0)
    assert not decision.promote
    assert "significantly worse on val" in decision.reason and "too slow" in decision.reason


def test_bad_arguments_raise(sets: dict) -> None:
    with pytest.raises(ValueError, match="no test sets"):
        decide_by_evidence({}, 1.0, 1.0)
    with pytest.raises(ValueError, match="champion_sps"):
        decide_by_evidence(_with(sets, {}), 0.0, 1.0)
    with pytest.raises(ValueError, match="challenger_sps"):
        decide_by_evidence(_with(sets, {}), 1.0, float("nan"))
    with pytest.raises(ValueError, match="bleu_margin -0.5 must be a finite number >= 0"):
        decide_by_evidence(_with(sets, {}), 1.0, 1.0, bleu_margin=-0.5)
    with pytest.raises(ValueError, match="must be 0 to 100") as bad:
        PromoteConfig(chrf_margin=float("inf"))
    assert getattr(bad.value, "key", None) == "chrf_margin"
    refs, champion = sets["test2016"]
    with pytest.raises(ValueError, match="must be equal"):
        paired_bootstrap(refs, champion, champion[:-1])
    with pytest.raises(ValueError, match="empty"):
        paired_bootstrap([], [], [])


def test_the_record_as_json_and_as_markdown(sets: dict) -> None:
    refs = sets["test2017"][0]
    decision = decide_by_evidence(_with(sets, {"test2017": dropped(refs, 0.40, seed=11)}), 10.0, 10.0)
    record = json.loads(to_json(decision))
    assert record["promote"] is False and record["reason"] == decision.reason
    assert [s["test_set"] for s in record["sets"]] == ["test2016", "test2017", "val"]
    assert {"champion_bleu", "challenger_bleu", "difference", "low", "high", "p_value", "holm_p", "champion_chrf",
            "challenger_chrf", "verdict"} <= set(record["sets"][0])
    assert "training seeds" in record["not_measured"]
    page = markdown(decision)
    rows = [line for line in page.splitlines() if line.startswith("| test20") or line.startswith("| val")]
    assert len(rows) == 3 and "significantly worse" in rows[1]
    assert "**not promoted**" in page and "Holm" in page


def _replayed(s: dict, bleu: tuple[float, float] | None = None,
              chrf: tuple[float, float] | None = None) -> PairedResult:
    """A recorded set's figures as paired_bootstrap's result; `bleu`/`chrf` ((low, high)) replace an interval."""
    blow, bhigh = bleu or (s["low"], s["high"])
    clow, chigh = chrf or (s["chrf_low"], s["chrf_high"])
    return PairedResult(
        s["sentences"], 1000, 12345,
        Comparison("sacrebleu", s["champion_bleu"], s["challenger_bleu"], s["difference"], blow, bhigh, s["p_value"],
                   "BLEU"),
        Comparison("chrf", s["champion_chrf"], s["challenger_chrf"], s["chrf_difference"], clow, chigh,
                   s["chrf_p_value"], "chrF"))


def test_the_committed_real_promotion_is_refused_under_the_default_margins(monkeypatch: pytest.MonkeyPatch) -> None:
    """reports/promotion/nmt-de-en.json put at prod a challenger whose chrF was significantly worse
    and whose BLEU interval reached below -1: its recorded figures, replayed
    through the rule with params.yaml's thresholds, are refused on both metrics, speed or not."""
    record = json.loads(REAL_RECORD.read_text(encoding="utf-8"))
    (real,) = record["evidence"]["sets"]
    assert record["promoted"] is True and real["verdict"] == NO_DIFFERENCE  # what the old rule did with them
    monkeypatch.setattr(flows.evidence, "paired_bootstrap", lambda *args, **kwargs: _replayed(real))
    cfg = promote_config(ROOT / "params.yaml")
    assert (cfg.bleu_margin, cfg.chrf_margin) == (PromoteConfig().bleu_margin, PromoteConfig().chrf_margin)
    e = record["evidence"]
    decision = decide_by_evidence({real["test_set"]: ([], [], [])}, e["champion_sps"], e["challenger_sps"], cfg.alpha,
                                  cfg.min_speed_ratio, cfg.resamples, cfg.seed, cfg.bleu_margin, cfg.chrf_margin)
    assert not decision.promote
    assert decision.speed_ratio > 3  # three times as fast: no speed trade buys a loss it cannot bound
    assert f"not shown within the margin on {real['test_set']}: sacreBLEU" in decision.reason
    assert f"lower end {real['low']:+.2f} <= -{cfg.bleu_margin:g}" in decision.reason
    assert f"chrF {real['chrf_difference']:+.2f} [{real['chrf_low']:+.2f}, {real['chrf_high']:+.2f}]" in decision.reason
    assert "too slow" not in decision.reason
    assert (decision.bleu_margin, decision.chrf_margin) == (cfg.bleu_margin, cfg.chrf_margin)


def test_a_challenger_not_significantly_worse_is_still_refused_when_its_loss_is_not_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The default margins decide on the lower ends alone: the same point estimates pass when both
    intervals stay above -margin, and fail when either reaches below it."""
    real = json.loads(REAL_RECORD.read_text(encoding="utf-8"))["evidence"]["sets"][0]
    bleu_margin, chrf_margin = PromoteConfig().bleu_margin, PromoteConfig().chrf_margin
    cases = {  # (BLEU interval, chrF interval) -> promoted
        ((-bleu_margin + 0.05, 0.3), (-chrf_margin + 0.05, 0.2)): True,
        ((-bleu_margin - 0.05, 0.3), (-chrf_margin + 0.05, 0.2)): False,  # BLEU alone reaches below
        ((-bleu_margin + 0.05, 0.3), (-chrf_margin - 0.05, 0.2)): False,  # chrF alone reaches below
    }
    for (bleu, chrf), promoted in cases.items():
        monkeypatch.setattr(flows.evidence, "paired_bootstrap",
                            lambda *args, bleu=bleu, chrf=chrf, **kwargs: _replayed(real, bleu, chrf))
        decision = decide_by_evidence({"a": ([], [], []), "b": ([], [], [])}, 10.0, 10.0)
        assert decision.promote is promoted, (bleu, chrf, decision.reason)
        assert all(e.verdict == NO_DIFFERENCE for e in decision.sets)  # the Holm test alone would promote all three
        if not promoted:
            assert "not shown within the margin on a:" in decision.reason and "on b:" in decision.reason
