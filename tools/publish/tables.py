"""Which renderer fills which generated block (`<!-- begin generated: NAME -->`).

Each renderer takes the `Sources` and returns Markdown ending with the files it was rendered
from (and, for a bench, where and when it was measured). Two sets: the default pipeline's
publish stage renders `BLOCKS`, general/dvc.yaml's renders `GENERAL_BLOCKS`; each leaves the
other's blocks as they are.
"""

from __future__ import annotations

from collections.abc import Callable

from tools.publish import (
    benches,
    corpora,
    finetune,
    general,
    gpu,
    hosts,
    lifecycle,
    markup,
    pairs,
    portable,
    reports,
    serving,
)
from tools.publish.sources import Sources

BLOCKS: dict[str, Callable[[Sources], str]] = {
    "results": reports.results,
    "evaluate-scores": reports.evaluate_scores,
    "export-checks": reports.export_checks,
    "decode-peers": benches.decode_peers,
    "decode-peers-summary": benches.decode_peers_summary,
    "decode-levers": benches.decode_levers,
    "tokenize-cache": benches.tokenize_cache,
    "first-try": benches.first_try,
    "vocab-kinds": portable.vocab_kinds,
    "js-consumer": portable.js_consumer,
    "train-throughput": benches.train_throughput,
    "train-throughput-summary": benches.train_throughput_summary,
    "decode-speed": benches.decode_speed,
    "subwords": benches.subwords,
    "scale": benches.scale,
    "repro-compare": benches.repro_compare,
    "serve-load": serving.serve_load,
    "serve-latency": serving.serve_latency,
    "hostile": serving.hostile,
    "serve-mixed": serving.serve_mixed,
    "confidence": serving.confidence,
    "markup": markup.markup,
    "terminology": markup.terminology,
    "langid": corpora.langid,
    "clean-scale": corpora.clean_scale,
    "moses-proxy": corpora.moses_proxy,
    "pilots": corpora.pilots,
    "distill-select": corpora.distill_select,
    "promotion-record": lifecycle.promotion_record,
    "drift-report": lifecycle.drift_report,
    "tested-hosts": hosts.tested_hosts,
    "tested-hosts-summary": hosts.tested_hosts_summary,
    "how-long": hosts.how_long,
    "how-long-summary": hosts.how_long_summary,
    "fault-suite": hosts.fault_suite,
    "gpu-check": gpu.gpu_check,
}

# The general configuration's blocks: rendered by general/dvc.yaml's publish stage (`--general`) only,
# so the default pipeline's publish never reads what the general pipeline writes.
GENERAL_BLOCKS: dict[str, Callable[[Sources], str]] = {
    "general-results": general.results,
    "general-packages": general.packages,
    "general-peers": general.peers,
    "general-rounds": general.rounds,
    "general-final-weights": general.final_weights,
    "general-decode-tune": general.decode_tune,
}

# The other language pairs' blocks: rendered by pairs/dvc.yaml's publish stage (`--pairs`) only.
PAIRS_BLOCKS: dict[str, Callable[[Sources], str]] = {
    "pairs-summary": pairs.summary,
    "pairs-results": pairs.results,
    "pairs-training": pairs.training,
    "pairs-tune": pairs.tune,
    "pairs-data": pairs.data,
    "pairs-detect": pairs.detect,
    "pairs-pivot": pairs.pivot,
}

# The fine-tunes' blocks: rendered by finetune/dvc.yaml's publish stage (`--finetune`) only.
FINETUNE_BLOCKS: dict[str, Callable[[Sources], str]] = {
    "finetune-results": finetune.results,
    "finetune-replay": finetune.replay,
    "finetune-schedule": finetune.schedule,
}

SETS = {"default": BLOCKS, "general": GENERAL_BLOCKS, "pairs": PAIRS_BLOCKS,
        "finetune": FINETUNE_BLOCKS}  # by the pipeline whose publish owns them

__all__ = ["BLOCKS", "FINETUNE_BLOCKS", "GENERAL_BLOCKS", "PAIRS_BLOCKS", "SETS", "Sources"]
