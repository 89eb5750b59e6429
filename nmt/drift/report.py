"""Drift: whether the served traffic still looks like the training data, aggregate by aggregate
(docs/lifecycle.md: Drift check).

Four aggregates of `nmt.translate.traffic.Aggregate` are compared as distributions: the histogram of
the sentences' lengths in source pieces (`pieces`), of their share of <unk> pieces (`unknown`), of
the translations' confidence (`confidence`), and the shares of the detected languages (`language`).
The statistic is the population stability index, PSI = sum over buckets of (o - e) * ln(o / e),
with e the profile's share of a bucket and o the traffic's, an empty bucket's share taken as
`epsilon` (the log of zero has no value). PSI is symmetric, adds up over buckets, and reads the
same whatever the counts: below 0.1 little change, 0.1-0.2 a moderate shift, above 0.2 a
significant one (the defaults of `drift.max_psi`). Languages under 1% of the texts on both sides
are pooled into one bucket, as rare categories usually are for PSI: the detector's odd guesses on
a few short texts are noise, not a shift.

`compare()` is the pure function over two aggregates; a window with fewer sentences than
`min_sentences` (fewer detected texts than `min_detected`, for the languages) is "not enough data",
never drift. `drift_report()` compares every direction of a window of snapshots with its profile;
`markdown()` is the report for people. No text is in a report: counts, shares and PSI only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from nmt.config.drift import DriftConfig
from nmt.translate.traffic import CONFIDENCE_EDGES, PIECES_EDGES, UNKNOWN_EDGES, Aggregate, Snapshot

FORMAT = 1  # the report's layout version
AGGREGATES = ("pieces", "unknown", "confidence", "language")
DRIFT, NO_DRIFT, NOT_ENOUGH = "drift", "no drift", "not enough data"
NO_PROFILE = "no profile"  # a served direction without a profile
NO_REFERENCE = "no reference"  # an aggregate the profile did not measure (confidence of a CTranslate2 package)
RARE_LANGUAGE = 0.01  # a language below this share of the texts on both sides is pooled into OTHER_LANGUAGES
OTHER_LANGUAGES = "other"


@dataclass(frozen=True)
class AggregateDrift:
    """One aggregate compared: its PSI against its threshold, and the shares it was computed from."""

    name: str  # one of AGGREGATES
    status: str  # DRIFT, NO_DRIFT, NOT_ENOUGH or NO_REFERENCE
    psi: float | None  # None when not computed (not enough data, no reference)
    threshold: float  # drift.max_psi of this aggregate
    drifted: bool  # psi > threshold
    observed: int  # the traffic's sentences (texts with a detected language, for `language`)
    reference: int  # the profile's
    buckets: tuple[str, ...]  # bucket labels ("<=16", ">256"), or the languages
    expected: tuple[float, ...]  # the profile's share of each bucket
    shares: tuple[float, ...]  # the traffic's


@dataclass(frozen=True)
class DirectionDrift:
    """One direction's aggregates compared."""

    direction: str
    status: str  # DRIFT if an aggregate drifted; NO_DRIFT if one was judged; else NOT_ENOUGH (or NO_PROFILE)
    sentences: int  # translated in the window
    aggregates: tuple[AggregateDrift, ...]

    @property
    def drifted(self) -> list[str]:
        return [a.name for a in self.aggregates if a.drifted]


@dataclass(frozen=True)
class DriftReport:
    """The drift check of one window of served traffic."""

    status: str  # DRIFT, NO_DRIFT or NOT_ENOUGH, over every direction
    start: str  # the window, ISO 8601 (UTC)
    end: str
    snapshots: int  # snapshots summed in the window
    directions: tuple[DirectionDrift, ...]
    config: dict[str, Any]  # the thresholds and minimums it was judged with
    profiles: dict[str, str] = field(default_factory=dict)  # direction -> the profile file compared with
    retrain: dict[str, Any] | None = None  # what the flow did about a drift (a retraining run), if asked
    format: int = FORMAT

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """One line: the verdict and, on drift, what drifted where (for the alert and the CLI)."""
        if self.status != DRIFT:
            sentences = sum(d.sentences for d in self.directions)
            return f"{self.status} in {sentences} sentences ({self.start} to {self.end})"
        found = [f"{d.direction} {a.name} PSI {a.psi:.3f} > {a.threshold:g}" for d in self.directions
                 for a in d.aggregates if a.drifted]
        return f"drift: {', '.join(found)} ({self.start} to {self.end})"


def psi(expected: Sequence[float], observed: Sequence[float], epsilon: float = 1e-4) -> float:
    """Population stability index of `observed` counts against `expected` counts (same buckets):
    sum of (o - e) * ln(o / e) over the shares, an empty bucket's share taken as `epsilon`."""
    if len(expected) != len(observed):
        raise ValueError(f"{len(expected)} expected and {len(observed)} observed buckets")
    e_total, o_total = sum(expected), sum(observed)
    if e_total <= 0 or o_total <= 0:
        raise ValueError("PSI needs counts on both sides")
    total = 0.0
    for e, o in zip(expected, observed):
        pe, po = max(e / e_total, epsilon), max(o / o_total, epsilon)
        total += (po - pe) * math.log(po / pe)
    return total


def _labels(edges: Sequence[float]) -> tuple[str, ...]:
    return (*(f"<={e:g}" for e in edges), f">{edges[-1]:g}")


Buckets = tuple[tuple[str, ...], list[int], list[int]]  # labels, the reference's counts, the observed counts


def _languages(reference: Aggregate, observed: Aggregate) -> Buckets:
    """The language buckets: the source language, every language with at least `RARE_LANGUAGE` of
    the texts on either side, and OTHER_LANGUAGES pooling the rest (the detector's rare guesses,
    which would otherwise weigh as much as epsilon makes them)."""
    sides = (reference, observed)
    shares = [{k: v / total for k, v in a.languages.items()} if (total := sum(a.languages.values())) else {}
              for a in sides]
    kept = sorted(k for k in set(reference.languages) | set(observed.languages)
                  if k == reference.source or any(side.get(k, 0.0) >= RARE_LANGUAGE for side in shares))
    pooled = [sum(v for k, v in a.languages.items() if k not in kept) for a in sides]
    extra = [OTHER_LANGUAGES] if any(pooled) else []
    counts = [[a.languages.get(k, 0) for k in kept] + ([n] if extra else []) for a, n in zip(sides, pooled)]
    return (*kept, *extra), counts[0], counts[1]


def distributions(reference: Aggregate, observed: Aggregate) -> dict[str, Buckets]:
    """Per aggregate: bucket labels, the reference's counts and the observed counts."""
    return {"pieces": (_labels(PIECES_EDGES), reference.pieces, observed.pieces),
            "unknown": (_labels(UNKNOWN_EDGES), reference.unknown_share, observed.unknown_share),
            "confidence": (_labels(CONFIDENCE_EDGES), reference.confidence, observed.confidence),
            "language": _languages(reference, observed)}


def _shares(counts: Sequence[int]) -> tuple[float, ...]:
    total = sum(counts)
    return tuple(round(c / total, 4) if total else 0.0 for c in counts)


def compare(direction: str, reference: Aggregate, observed: Aggregate, cfg: DriftConfig) -> DirectionDrift:
    """`observed` (a window of traffic) against `reference` (the profile), aggregate by aggregate."""
    out = []
    for name, (labels, expected, seen) in distributions(reference, observed).items():
        threshold = getattr(cfg.max_psi, name)
        minimum = cfg.min_detected if name == "language" else cfg.min_sentences
        n, m = sum(seen), sum(expected)
        value: float | None = None
        if m == 0:
            status = NO_REFERENCE
        elif observed.sentences < cfg.min_sentences or n < minimum:
            status = NOT_ENOUGH
        else:
            value = round(psi(expected, seen, cfg.epsilon), 6)
            status = DRIFT if value > threshold else NO_DRIFT
        out.append(AggregateDrift(name, status, value, threshold, status == DRIFT, n, m, labels, _shares(expected),
                                  _shares(seen)))
    statuses = {a.status for a in out}
    status = DRIFT if DRIFT in statuses else NO_DRIFT if NO_DRIFT in statuses else NOT_ENOUGH
    return DirectionDrift(direction, status, observed.sentences, tuple(out))


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")


def drift_report(references: Mapping[str, Aggregate], traffic: Snapshot | None, cfg: DriftConfig, start: float,
                 end: float, profiles: Mapping[str, str] | None = None) -> DriftReport:
    """Every direction of `references` (direction -> its profile's reference) compared with the
    `traffic` of the window [start, end] (unix seconds; None: no snapshot in it); a served
    direction without a profile is listed as NO_PROFILE."""
    served = traffic.directions if traffic is not None else {}
    directions = [compare(d, ref, served.get(d, Aggregate(ref.source)), cfg) for d, ref in sorted(references.items())]
    directions += [DirectionDrift(d, NO_PROFILE, a.sentences, ()) for d, a in sorted(served.items())
                   if d not in references]
    statuses = {d.status for d in directions}
    status = DRIFT if DRIFT in statuses else NO_DRIFT if NO_DRIFT in statuses else NOT_ENOUGH
    config = {"max_psi": asdict(cfg.max_psi), "epsilon": cfg.epsilon, "min_sentences": cfg.min_sentences,
              "min_detected": cfg.min_detected}
    return DriftReport(status, _iso(start), _iso(end), traffic.parts if traffic is not None else 0, tuple(directions),
                       config, dict(profiles or {}))


def _largest_shift(a: AggregateDrift) -> str:
    """The bucket whose share moved most, e.g. `<=32` 12.0% -> 61.3%."""
    i = max(range(len(a.buckets)), key=lambda k: (abs(a.shares[k] - a.expected[k]), a.shares[k] + a.expected[k]))
    return f"`{a.buckets[i]}` {a.expected[i]:.1%} -> {a.shares[i]:.1%}"


def markdown(report: DriftReport) -> str:
    """The report as a Markdown page: the verdict, the window, one row per direction and aggregate."""
    lines = [f"# Drift check: {report.status}", "",
             f"Window: {report.start} to {report.end}, {report.snapshots} snapshot(s). PSI against the training "
             f"data's profile; an empty bucket counts as {report.config['epsilon']:g}; fewer than "
             f"{report.config['min_sentences']} sentences ({report.config['min_detected']} detected texts for the "
             "languages) is not enough data.", "",
             "| direction | aggregate | traffic | profile | PSI | threshold | verdict "
             "| largest shift (profile -> traffic) |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for d in report.directions:
        if not d.aggregates:
            lines.append(f"| {d.direction} | - | {d.sentences} | - | - | - | {d.status} | - |")
        for a in d.aggregates:
            value = "-" if a.psi is None else f"{a.psi:.3f}"
            shift = _largest_shift(a) if a.psi is not None and a.buckets else "-"
            lines.append(f"| {d.direction} | {a.name} | {a.observed} | {a.reference} | {value} | {a.threshold:g} | "
                         f"{'**drift**' if a.drifted else a.status} | {shift} |")
    if report.retrain is not None:
        lines += ["", f"Retraining: {report.retrain.get('message', '')}"]
    return "\n".join(lines) + "\n"
