"""Served traffic watched: per direction, what the server is asked, counted with
no text in it (lengths in pieces, <unk> share, detected language, confidence, guarded sentences), in
/metrics and in the snapshots of --stats-dir; sampling the texts themselves only when asked."""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from nmt.decode.lines import LineTranslator
from nmt.errors import ConfigError, DataError
from nmt.runtime.translator import OnnxTranslator
from nmt.serve.api.options import ServeConfig, add_arguments, from_args
from nmt.translate.decoding import translate_sentences
from nmt.translate.traffic import PIECES_EDGES, Record, Traffic, aggregate, bucket, read_snapshots, write_snapshot
from support.onnx import sentences
from support.serve import ThreadServer, ask, both_packages, config, post

pytestmark = pytest.mark.network
UNKNOWN = "s1 Wort s2 s3"  # "Wort": a word the copy model's vocabulary lacks
ENGLISH = ["The dog is running s1 s2 s3", "I am tired today s4 s5"]
GERMAN = ["Der Hund läuft s1 s2 s3", "Ich bin heute müde s4 s5"]


@pytest.fixture(scope="module")
def both(package: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of two packages: de-en (the test package) and en-de (its relabelled copy)."""
    return both_packages(package, tmp_path_factory.mktemp("packages"))


@pytest.fixture(scope="module")
def server(both: Path) -> Iterator[ThreadServer]:
    """Both directions; the language of every request naming its source detected; no --stats-dir,
    so no snapshot takes the counts away while a test reads them."""
    s = ThreadServer(config(both, detect_sample=1.0))
    yield s
    s.close()


def _metric(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    found = re.search(rf"^{re.escape(name)}\{{{re.escape(wanted)}\}} (\S+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


def test_bucket_edges_are_upper_bounds_as_prometheus_le_and_the_pure_function_counts_records() -> None:
    assert [bucket(PIECES_EDGES, v) for v in (1, 2, 3, 256, 257)] == [0, 0, 1, len(PIECES_EDGES) - 1, len(PIECES_EDGES)]
    counted = aggregate([Record(5, 1, 0.5, "de"), (3, 0, float("nan"), None), Record(9, 0, 0.97, "en")], "de")
    assert (counted.sentences, counted.pieces_sum, counted.unknown_sum, sum(counted.confidence)) == (3, 17, 1, 2)
    assert counted.languages == {"de": 1, "en": 1} and counted.other_language == 1
    assert counted.unknown_share[0] == 2 and sum(counted.unknown_share) == 3  # 2 without <unk>, one at 0.2


def test_the_aggregates_count_what_each_direction_was_sent(server: ThreadServer, both: Path) -> None:
    traffic, router = server.state.watch.traffic, server.state.router
    traffic.take()  # this test's window
    lines = sentences(6, seed=11)
    sent = {"de-en": ([*lines[:3], UNKNOWN, ENGLISH[0]], GERMAN), "en-de": (lines[3:], ENGLISH)}
    for direction, (named, auto) in sent.items():
        source, target = direction.split("-")
        assert post(server.url, json={"q": named, "source": source, "target": target}).status_code == 200
        assert post(server.url, json={"q": auto, "source": "auto", "target": target}).status_code == 200
    counted = traffic.take().directions
    for direction, (named, auto) in sent.items():
        texts = named + auto
        assert all(len(seg.sentences) == 1 for seg in server.state.split(texts, [direction[:2]] * len(texts)))
        translator = OnnxTranslator.from_dir(both / direction, device="cpu", threads=1)
        outputs, _ = translate_sentences(translator, texts)
        want = aggregate([Record(o.pieces, o.unknown, o.confidence, router.detect(t).language)
                          for o, t in zip(outputs, texts)], direction[:2])
        got = counted[direction]
        assert (got.sentences, got.pieces, got.pieces_sum) == (len(texts), want.pieces, want.pieces_sum)
        assert (got.unknown_sum, got.unknown_share) == (want.unknown_sum, want.unknown_share)
        assert got.languages == want.languages and sum(got.languages.values()) == len(texts)  # auto and sampled
        assert sum(got.confidence) == sum(want.confidence) == len(texts)
    assert counted["de-en"].unknown_sum >= 1
    assert counted["de-en"].languages.get("en", 0) >= 1 and counted["de-en"].other_language >= 1  # English as German
    assert counted["en-de"].languages.get("en", 0) >= len(ENGLISH)


def test_metrics_carry_the_aggregates_per_direction_and_no_text(server: ThreadServer) -> None:
    before = httpx.get(f"{server.url}/metrics", timeout=30).text
    de, en = [UNKNOWN, ENGLISH[1], "s7 s8"], ["s1 s2 s3", "s4 s5"]
    assert post(server.url, json=ask(de, api_key="not-a-label-0123")).status_code == 200
    assert post(server.url, json={"q": en, "source": "en", "target": "de"}).status_code == 200
    after = httpx.get(f"{server.url}/metrics", timeout=30).text

    def grew(name: str, **labels: str) -> float:
        return _metric(after, name, **labels) - _metric(before, name, **labels)

    for direction, texts in (("de-en", de), ("en-de", en)):
        assert grew("nmt_serve_traffic_pieces_count", direction=direction) == len(texts)
        assert grew("nmt_serve_traffic_pieces_sum", direction=direction) >= 3 * len(texts)
        assert grew("nmt_serve_traffic_unknown_share_count", direction=direction) == len(texts)
        assert grew("nmt_serve_translation_confidence_count", direction=direction) == len(texts)
        assert f'nmt_serve_traffic_guarded_sentences_total{{direction="{direction}"}}' in after
        found = Counter(server.state.router.detect(t).language for t in texts)  # --detect-sample 1: every text
        for language, n in found.items():
            assert grew("nmt_serve_traffic_detected_languages_total", direction=direction, language=language) == n
        other = sum(n for language, n in found.items() if language not in (direction[:2], "und"))
        assert grew("nmt_serve_traffic_other_language_total", direction=direction) == other
    assert grew("nmt_serve_traffic_detected_languages_total", direction="de-en", language="en") == 1  # ENGLISH[1]
    assert grew("nmt_serve_traffic_unknown_pieces_total", direction="de-en") >= 2  # "Wort", the English words
    assert grew("nmt_serve_traffic_unknown_pieces_total", direction="en-de") == 0
    assert grew("nmt_serve_traffic_unknown_share_bucket", direction="de-en", le="0.0") == 1  # "s7 s8" alone
    assert grew("nmt_serve_traffic_unknown_share_bucket", direction="en-de", le="0.0") == len(en)
    for secret in [*de, *en, "Wort", "not-a-label-0123", "127.0.0.1"]:
        assert secret not in after
    labels = set(re.findall(r'^nmt_serve_traffic_\w+\{([^}]*)\}', after, re.M))
    values = {value for label in labels for value in re.findall(r'="([^"]*)"', label)}
    assert all(re.fullmatch(r"de-en|en-de|[a-z]{2,3}|\+Inf|[0-9.]+|written|full", v) for v in values), values


def test_snapshots_hold_every_count_and_no_text_and_nothing_else_is_written(
        start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose best hypothesis always loops (the guard changes every sentence); periodic
    snapshots, and the last one at shutdown; sampling off by default: no text in any file."""
    real = LineTranslator.translate_scored

    def looping(self, lines, n, first_line=1):
        return [line._replace(hyps=[(" ".join([line.hyps[0][0]] * 5), line.hyps[0][1]), *line.hyps]) if line.hyps
                else line for line in real(self, lines, n, first_line)]

    monkeypatch.setattr(LineTranslator, "translate_scored", looping)
    stats = tmp_path / "stats"
    s = start(stats_dir=stats, stats_interval_s=0.3)
    assert s.state.watch.sampler is None and ServeConfig().sample_inputs == 0  # off by default
    first, second = sentences(3, seed=21), [UNKNOWN, GERMAN[0]]
    assert post(s.url, json=ask(first)).status_code == 200
    deadline = time.monotonic() + 60
    while (found := read_snapshots(stats)) is None or found.directions["de-en"].sentences < len(first):
        assert time.monotonic() < deadline, "no periodic snapshot with the first request's sentences"
        time.sleep(0.1)
    assert post(s.url, json=ask(second)).status_code == 200
    s.close()  # the last snapshot, at shutdown
    files = sorted(stats.iterdir())
    assert files and all(re.fullmatch(r"traffic-\d{8}T\d{12}Z\.json", f.name) for f in files)  # no temporaries
    snaps = [json.loads(f.read_text()) for f in files]
    assert all(a["end"] == b["start"] for a, b in zip(snaps, snaps[1:]))  # windows back to back
    total = read_snapshots(stats)
    counted = total.directions["de-en"]
    assert (total.parts, counted.sentences) == (len(files), len(first) + len(second))
    assert 0 < counted.guarded <= counted.sentences and counted.unknown_sum >= 1  # the guard, per direction
    assert sum(counted.confidence) == counted.sentences
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert set(written) == set(files)  # nothing but the snapshots (no sampled inputs)
    assert not list(Path.cwd().glob("inputs-*.jsonl"))
    for path in written:
        content = path.read_text()
        assert not any(text in content for text in [*first, *second, "Wort", "Hund"])


def test_sampling_inputs_needs_both_options_and_the_options_are_listed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--sample-inputs 0.5: needs --sample-dir"):
        ServeConfig(sample_inputs=0.5)
    with pytest.raises(ConfigError, match="--sample-dir .*: needs --sample-inputs"):
        ServeConfig(sample_dir=tmp_path)
    with pytest.raises(ConfigError, match="--detect-sample 2.0: must be a share"):
        ServeConfig(detect_sample=2.0)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    shown = parser.format_help()
    for flag in ("--stats-dir", "--stats-interval", "--stats-keep", "--detect-sample", "--sample-inputs",
                 "--sample-dir", "--sample-max-mb", "--sample-max-days"):
        assert flag in shown
    cfg = from_args(parser.parse_args(["--sample-inputs", "0.2", "--sample-dir", str(tmp_path), "--stats-dir", "s"]))
    assert (cfg.sample_inputs, cfg.sample_dir, cfg.stats_dir, cfg.stats_interval_s) == (0.2, tmp_path, Path("s"), 60.0)


def test_sampled_inputs_are_opt_in_bounded_in_age_and_size_and_hold_no_key(start, tmp_path: Path) -> None:
    samples, key = tmp_path / "samples", "secret-key-0123456789"
    samples.mkdir()
    old, notes = samples / "inputs-2000-01-01.jsonl", samples / "notes.txt"
    yesterday = samples / f"inputs-{(datetime.now(UTC) - timedelta(days=1)):%Y-%m-%d}.jsonl"
    for path in (old, notes):
        path.write_text('{"text": "old"}\n')
        os.utime(path, (time.time() - 3 * 86400,) * 2)
    yesterday.write_text('{"text": "recent"}\n' * 40)  # 760 bytes, within --sample-max-days
    (tmp_path / "keys.json").write_text(json.dumps({key: {}}))
    s = start(sample_inputs=1.0, sample_dir=samples, sample_max_mb=0.002, sample_max_days=1.0,
              api_keys=tmp_path / "keys.json")
    assert not old.exists() and notes.exists() and yesterday.exists()  # older than --sample-max-days: deleted
    texts = sentences(40, seed=31, lo=6, hi=12)
    assert post(s.url, json=ask(texts[:5], api_key=key)).status_code == 200
    assert yesterday.exists()
    lines = [json.loads(line) for line in next(p for p in samples.glob("inputs-*") if p != yesterday).open()]
    today = f"{datetime.now(UTC):%Y-%m-%d}"
    assert lines == [{"date": today, "direction": "de-en", "text": t} for t in texts[:5]]
    for i in range(5, 40, 5):
        assert post(s.url, json=ask(texts[i:i + 5], api_key=key)).status_code == 200
    kept = sorted(samples.glob("inputs-*.jsonl"))
    assert not yesterday.exists() and len(kept) == 1  # the oldest day made room first
    assert sum(p.stat().st_size for p in kept) <= 2000  # --sample-max-mb 0.002
    content = kept[0].read_text()
    assert texts[0] in content and key not in content and "127.0.0.1" not in content
    assert len(content.splitlines()) < len(texts)
    metrics = httpx.get(f"{s.url}/metrics", timeout=30).text
    assert _metric(metrics, "nmt_serve_traffic_sampled_inputs_total", outcome="full") == len(texts) - len(
        content.splitlines())


def test_snapshots_are_kept_bounded_and_summed_within_a_window(tmp_path: Path) -> None:
    traffic = Traffic({"de-en": "de"}, now=1000.0)
    for i in range(4):
        traffic.add("de-en", [Record(5, 1, 0.5)], guarded=1)
        traffic.detected("de-en", ["en"])
        write_snapshot(tmp_path, traffic.take(now=1000.0 + 60 * (i + 1)), keep=3)
    files = sorted(tmp_path.iterdir())
    assert len(files) == 3 and all(f.name.startswith("traffic-") for f in files)  # the oldest deleted
    whole = read_snapshots(tmp_path)
    assert (whole.parts, whole.start, whole.end) == (3, 1060.0, 1240.0)
    one = aggregate([Record(5, 1, 0.5, "en")], "de")
    three = aggregate([Record(5, 1, 0.5, "en")] * 3, "de")
    three.guarded = 3
    assert whole.directions["de-en"] == three
    window = read_snapshots(tmp_path, start=datetime.fromtimestamp(1120, UTC), end=1180.0)
    assert window.parts == 1 and window.directions["de-en"].sentences == one.sentences
    assert read_snapshots(tmp_path, start="2100-01-01T00:00:00+00:00") is None
    (tmp_path / "traffic-99999999T000000000000Z.json").write_text("{}")
    with pytest.raises(DataError, match="traffic-99999999T000000000000Z.json: not a traffic snapshot"):
        read_snapshots(tmp_path)
