"""Which renderer fills which generated block (`<!-- begin generated: NAME -->`).

Each renderer takes the `Sources` and returns Markdown ending with the files it was rendered
from (and, for a bench, where and when it was measured).
"""

from __future__ import annotations

from collections.abc import Callable

from nmt.publish import benches, corpora, reports, serving
from nmt.publish.sources import Sources

BLOCKS: dict[str, Callable[[Sources], str]] = {
    "results": reports.results,
    "evaluate-scores": reports.evaluate_scores,
    "export-checks": reports.export_checks,
    "decode-peers": benches.decode_peers,
    "decode-peers-summary": benches.decode_peers_summary,
    "decode-levers": benches.decode_levers,
    "tokenize-cache": benches.tokenize_cache,
    "train-throughput": benches.train_throughput,
    "train-throughput-summary": benches.train_throughput_summary,
    "decode-speed": benches.decode_speed,
    "subwords": benches.subwords,
    "scale": benches.scale,
    "repro-compare": benches.repro_compare,
    "serve-load": serving.serve_load,
    "langid": corpora.langid,
    "clean-scale": corpora.clean_scale,
    "moses-proxy": corpora.moses_proxy,
}

__all__ = ["BLOCKS", "Sources"]
