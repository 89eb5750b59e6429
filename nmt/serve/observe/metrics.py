"""The server's Prometheus metrics (`GET /metrics`), in a registry of its own (the API's middleware
`nmt.serve.api.timing` times every request into it).

No label names a client, a key or a text: routes, status codes, rejection reasons, directions
and detected languages only, so the series stay few. The mean batch size is
`nmt_serve_batch_size_sum / _count`. The `nmt_serve_traffic_*` series count what each direction is
asked (`nmt.translate.traffic`: the same buckets as the snapshots of `--stats-dir`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest

from nmt.translate.traffic import CONFIDENCE_EDGES, PIECES_EDGES, UNKNOWN_EDGES, Record, off_source

log = logging.getLogger("nmt.serve")

LATENCY = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
BATCH = (1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128)
# why a request was not translated
REASONS = ("bad_request", "too_large", "too_many_sentences", "body_timeout", "forbidden", "rate_limited", "queue_full",
           "queue_timeout", "request_timeout", "draining", "batch_failed", "disconnected", "not_found", "out_of_space")


class Metrics:
    """Every metric the server exports."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.request_seconds = Histogram("nmt_serve_request_duration_seconds", "time from request to response",
                                         ["route", "status"], buckets=LATENCY, registry=r)
        self.queue_wait_seconds = Histogram("nmt_serve_queue_wait_seconds", "time a sentence waited in the queue",
                                            buckets=LATENCY, registry=r)
        self.batch_seconds = Histogram("nmt_serve_batch_duration_seconds", "time to decode one batch",
                                       buckets=LATENCY, registry=r)
        self.batch_size = Histogram("nmt_serve_batch_size", "sentences per decoded batch", buckets=BATCH, registry=r)
        self.queue_depth = Gauge("nmt_serve_queue_depth", "sentences waiting in the queue", registry=r)
        self.in_flight = Gauge("nmt_serve_requests_in_flight", "admitted translate requests not yet answered",
                               registry=r)
        self.sentences = Counter("nmt_serve_sentences", "sentences translated", registry=r)
        self.rejections = Counter("nmt_serve_rejections", "requests answered with an error, by reason", ["reason"],
                                  registry=r)
        self.dropped = Counter("nmt_serve_sentences_dropped", "queued sentences not decoded because their request "
                               "was gone (client disconnected, request timed out, or failed)", registry=r)
        self.guarded = Counter("nmt_serve_guarded_sentences", "sentences whose best hypothesis looped or had an absurd "
                               "length, replaced by the next good one of the beam or the greedy translation",
                               registry=r)
        self.confidence = Histogram("nmt_serve_translation_confidence", "per translated sentence, the geometric mean "
                                    "of the model's probabilities of the tokens it chose (0-1; docs/serving.md)",
                                    ["direction"], buckets=CONFIDENCE_EDGES, registry=r)
        self.pieces = Histogram("nmt_serve_traffic_pieces", "per translated sentence, its source pieces as the model "
                                "read them (</s> included)", ["direction"], buckets=PIECES_EDGES, registry=r)
        self.unknown = Counter("nmt_serve_traffic_unknown_pieces", "source pieces the vocabulary lacks (<unk>)",
                               ["direction"], registry=r)
        self.unknown_share = Histogram("nmt_serve_traffic_unknown_share", "per translated sentence, the share of its "
                                       "source pieces that are <unk>", ["direction"], buckets=UNKNOWN_EDGES, registry=r)
        self.languages = Counter("nmt_serve_traffic_detected_languages", "texts by detected language (source: auto, "
                                 "and --detect-sample of the others)", ["direction", "language"], registry=r)
        self.other_language = Counter("nmt_serve_traffic_other_language", "texts detected as a language other than "
                                      "the direction's source (texts without letters not counted)", ["direction"],
                                      registry=r)
        self.guarded_by = Counter("nmt_serve_traffic_guarded_sentences", "sentences the loop and length guard "
                                  "changed, per direction", ["direction"], registry=r)
        self.sampled = Counter("nmt_serve_traffic_sampled_inputs", "texts sampled by --sample-inputs: written, or "
                               "not for lack of room (--sample-max-mb)", ["outcome"], registry=r)
        self.reloads = Counter("nmt_serve_reloads", "model reloads, by outcome", ["outcome"], registry=r)
        self.model = Info("nmt_serve_model", "the models being served, one per direction", ["direction"], registry=r)
        for reason in REASONS:
            self.rejections.labels(reason)
        for outcome in ("ok", "refused"):
            self.reloads.labels(outcome)
        for outcome in ("written", "full"):
            self.sampled.labels(outcome)

    def add_direction(self, direction: str) -> None:
        """The direction's traffic series, at 0 until it is asked."""
        for metric in (self.confidence, self.pieces, self.unknown, self.unknown_share, self.other_language,
                       self.guarded_by):
            metric.labels(direction)

    def set_model(self, described: dict[str, Any]) -> None:
        self.model.labels(described["direction"]).info({k: str(described[k]) for k in ("path", "kind", "int8",
                                                                                        "generation", "sha256")})

    def observe_traffic(self, direction: str, records: Collection[Record], guarded: int) -> None:
        """Translated sentences of `direction` (a NaN confidence, where the engine keeps no scores,
        left out of the confidence histogram), `guarded` of them changed by the loop guard."""
        confidence, pieces, share = (m.labels(direction) for m in (self.confidence, self.pieces, self.unknown_share))
        for record in records:
            pieces.observe(record.pieces)
            share.observe(record.unknown / record.pieces if record.pieces else 0.0)
            if not math.isnan(record.confidence):
                confidence.observe(record.confidence)
        self.unknown.labels(direction).inc(sum(r.unknown for r in records))
        self.guarded_by.labels(direction).inc(guarded)

    def observe_languages(self, direction: str, languages: Collection[str], source: str) -> None:
        """Texts sent to `direction` (reading `source`) detected as `languages`."""
        for language in languages:
            self.languages.labels(direction, language).inc()
        self.other_language.labels(direction).inc(sum(off_source(lang, source) for lang in languages))

    def reject(self, reason: str, n: int = 1) -> None:
        self.rejections.labels(reason).inc(n)

    def render(self) -> bytes:
        return generate_latest(self.registry)
