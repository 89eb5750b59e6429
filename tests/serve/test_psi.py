"""The drift statistic: the population stability index per aggregate of the
served traffic against the training data's profile, and the profile's file (nmt/drift/report.py,
nmt/drift/profile.py). Pure functions: no model, no server."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from nmt.config.drift import DriftConfig, DriftThresholds
from nmt.drift.profile import build_profile, read_profile, sample
from nmt.drift.report import (
    DRIFT,
    NO_DRIFT,
    NO_PROFILE,
    NO_REFERENCE,
    NOT_ENOUGH,
    compare,
    drift_report,
    markdown,
    psi,
)
from nmt.errors import DataError
from nmt.translate.traffic import Aggregate, Record, Snapshot, aggregate

CFG = DriftConfig(min_sentences=100, min_detected=50)


def records(n: int, pieces: int, unknown: int = 0, confidence: float = 0.8, language: str | None = "de"
            ) -> list[Record]:
    return [Record(pieces, unknown, confidence, language) for _ in range(n)]


def captions(n: int = 400) -> Aggregate:
    """Short sentences, a few <unk>, German, confident: the profile's look."""
    return aggregate(records(n // 2, 7) + records(n // 2, 12, 1, 0.6), "de")


def test_psi_is_the_sum_of_share_differences_times_their_log_ratio() -> None:
    assert psi([50, 50], [50, 50]) == 0.0
    assert psi([10, 30], [1, 3]) == 0.0  # shares, not counts
    by_hand = (0.9 - 0.5) * math.log(0.9 / 0.5) + (0.1 - 0.5) * math.log(0.1 / 0.5)
    assert psi([50, 50], [90, 10]) == pytest.approx(by_hand)
    assert psi([50, 50], [90, 10]) == pytest.approx(psi([90, 10], [50, 50]))  # symmetric
    # an empty bucket counts as epsilon: finite, and larger the smaller epsilon
    empty = psi([100, 0], [99, 1], epsilon=1e-4)
    assert empty == pytest.approx((0.01 - 1e-4) * math.log(0.01 / 1e-4) + (0.99 - 1.0) * math.log(0.99))
    assert math.isfinite(empty) and psi([100, 0], [99, 1], epsilon=1e-6) > empty
    with pytest.raises(ValueError, match="counts on both sides"):
        psi([0, 0], [1, 1])
    with pytest.raises(ValueError, match="2 expected and 3 observed"):
        psi([1, 1], [1, 1, 1])


def test_the_same_traffic_is_no_drift_and_each_aggregate_has_its_psi_threshold_and_verdict() -> None:
    found = compare("de-en", captions(), captions(300), CFG)
    assert found.status == NO_DRIFT and found.sentences == 300 and found.drifted == []
    assert [a.name for a in found.aggregates] == ["pieces", "unknown", "confidence", "language"]
    for a in found.aggregates:
        assert (a.status, a.psi, a.threshold, a.drifted) == (NO_DRIFT, 0.0, 0.2, False)
        assert len(a.buckets) == len(a.expected) == len(a.shares) and sum(a.shares) == pytest.approx(1.0)
    pieces = found.aggregates[0]
    assert pieces.buckets[:4] == ("<=2", "<=4", "<=8", "<=16") and pieces.buckets[-1] == ">256"
    assert pieces.expected[2] == pieces.shares[2] == 0.5  # 7 pieces: the <=8 bucket


def test_longer_sentences_drift_on_pieces_and_english_on_language_only() -> None:
    news = aggregate(records(150, 30, 1, 0.6) + records(150, 60, 2, 0.6), "de")
    found = compare("de-en", captions(), news, CFG)
    assert found.status == DRIFT and "pieces" in found.drifted and "language" not in found.drifted
    english = aggregate(records(150, 7, language="en") + records(150, 12, 1, 0.6, "en"), "de")
    found = compare("de-en", captions(), english, CFG)
    assert found.drifted == ["language"]
    language = found.aggregates[3]
    assert language.buckets == ("de", "en") and language.expected == (1.0, 0.0) and language.shares == (0.0, 1.0)
    assert language.psi > 5  # every text moved to a bucket the profile had (almost) nothing in
    lenient = replace(CFG, max_psi=DriftThresholds(language=100.0))
    assert compare("de-en", captions(), english, lenient).status == NO_DRIFT  # the threshold is the aggregate's


def test_rare_languages_are_pooled_so_odd_guesses_are_not_a_shift() -> None:
    profile = aggregate(records(396, 7) + records(2, 7, language="nl") + records(2, 7, language="da"), "de")
    traffic = aggregate(records(296, 7) + records(2, 7, language="sv") + records(2, 7, language="fi"), "de")
    language = compare("de-en", profile, traffic, CFG).aggregates[3]
    assert language.buckets == ("de", "other")
    assert language.expected == (0.99, 0.01) and language.shares == (0.9867, 0.0133)
    assert language.psi < 0.01  # unpooled, four languages each absent on one side would add up to ~0.09
    english = aggregate(records(290, 7) + records(10, 7, language="en"), "de")  # 3.3%: a bucket of its own
    assert compare("de-en", profile, english, CFG).aggregates[3].buckets == ("de", "en", "other")


def test_too_little_traffic_is_not_enough_data_never_drift() -> None:
    few = aggregate(records(99, 60, language="en"), "de")  # far off, but fewer than min_sentences
    found = compare("de-en", captions(), few, CFG)
    assert found.status == NOT_ENOUGH and found.drifted == []
    assert all(a.status == NOT_ENOUGH and a.psi is None for a in found.aggregates)
    undetected = aggregate(records(75, 7, language=None) + records(75, 12, 1, 0.6, None)
                           + records(20, 7, language="en") + records(20, 12, 1, 0.6, "en"), "de")
    found = compare("de-en", captions(), undetected, CFG)  # 190 sentences, 40 detected: the languages are not judged
    assert {a.name: a.status for a in found.aggregates}["language"] == NOT_ENOUGH
    assert found.status == NO_DRIFT


def test_an_aggregate_the_profile_did_not_measure_has_no_reference() -> None:
    unscored = aggregate(records(200, 7, confidence=math.nan), "de")  # a CTranslate2 package keeps no scores
    found = compare("de-en", unscored, captions(300), CFG)
    assert {a.name: a.status for a in found.aggregates}["confidence"] == NO_REFERENCE


def test_the_report_covers_every_direction_of_the_window_and_says_what_drifted() -> None:
    traffic = Snapshot(1000.0, 4600.0, {"de-en": aggregate(records(300, 60), "de"), "en-de": captions(300)}, parts=3)
    report = drift_report({"de-en": captions()}, traffic, CFG, 1000.0, 4600.0, {"de-en": "reports/profile.json"})
    assert report.status == DRIFT and report.snapshots == 3 and report.start.startswith("1970-01-01T00:16:40")
    assert [(d.direction, d.status) for d in report.directions] == [("de-en", DRIFT), ("en-de", NO_PROFILE)]
    assert report.summary().startswith("drift: de-en pieces PSI ") and "> 0.2" in report.summary()
    data = json.loads(json.dumps(report.to_json()))  # JSON as written
    assert data["directions"][0]["aggregates"][0]["drifted"] is True and data["config"]["max_psi"]["pieces"] == 0.2
    page = markdown(report)
    assert page.startswith("# Drift check: drift") and "| de-en | pieces | 300 | 400 |" in page and "**drift**" in page
    assert "`<=64` 0.0% -> 100.0%" in page  # the largest shift of pieces
    nothing = drift_report({"de-en": captions()}, None, CFG, 0.0, 3600.0)
    assert nothing.status == NOT_ENOUGH and nothing.snapshots == 0 and nothing.directions[0].sentences == 0


def test_a_profile_is_counts_of_train_and_dev_and_reads_back(tmp_path: Path) -> None:
    train = records(30, 7, confidence=math.nan) + records(10, 20, 3, math.nan, "en")  # not decoded
    dev = records(5, 9, 0, 0.75, "de")
    made = build_profile("de-en", "de", train, dev, {"seed": 0})
    assert (made.direction, made.source, made.train.sentences, made.dev.sentences) == ("de-en", "de", 40, 5)
    reference = made.reference()
    assert reference.sentences == 45 and reference.languages == {"de": 35, "en": 10}
    assert sum(reference.confidence) == 5  # the dev sample's only: train is not decoded
    assert made.train.sentences == 40  # summing left the samples as they were
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(made.to_json()))
    back = read_profile(path)
    assert back.to_json() == made.to_json() and back.about == {"seed": 0}
    path.write_text(json.dumps(made.to_json() | {"format": 99}))
    with pytest.raises(DataError, match="not a profile of this version"):
        read_profile(path)
    with pytest.raises(DataError, match=r"not found; the profile stage writes it \(`dvc repro profile`\)"):
        read_profile(tmp_path / "missing.json")


def test_the_sample_is_the_same_every_run_in_file_order_and_skips_empty_lines() -> None:
    lines = [f"line {i}" for i in range(100)] + ["", "  "]
    first = sample(lines, 10, seed=3)
    assert first == sample(lines, 10, seed=3) and first != sample(lines, 10, seed=4)
    assert len(first) == 10 and first == sorted(first, key=lines.index)  # tie-rule: positions, not scores
    assert sample(lines, 500, seed=3) == lines[:100]
