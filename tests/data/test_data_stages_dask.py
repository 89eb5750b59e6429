"""The data stages on a Dask cluster: with NMT_DASK_SCHEDULER set, tokenize's, vocab's and binarize's shards
go to the cluster (here a LocalCluster of 2 worker processes) and the outputs are byte-identical to the
local run's; and on a local pool of 2 processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmt.config.data import TokenizeConfig, VocabConfig
from nmt.data import binarize, shards, vocab
from nmt.data.binarize import binarize_stage
from nmt.data.tokenize import tokenize_corpus
from nmt.data.vocab import vocab_stage
from nmt.errors import DataError
from support.corpus import data_config, multi30k_validated

distributed = pytest.importorskip("distributed")


@pytest.fixture
def clean(mirror: Path, tmp_path: Path) -> tuple[dict, Path]:
    """Multi30k's val and test_2016_flickr as the train and val splits of a validated corpus: (corpus entry, folder)."""
    return multi30k_validated(mirror, tmp_path / "clean"), tmp_path / "clean"


def test_an_unreachable_scheduler_is_a_one_line_error(clean: tuple[dict, Path], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, folder = clean
    monkeypatch.setattr(shards, "DASK_CONNECT_S", 1)
    monkeypatch.setenv(shards.DASK_ENV, "tcp://127.0.0.1:9")  # nothing listens on the discard port
    with pytest.raises(DataError, match=r"NMT_DASK_SCHEDULER=tcp://127\.0\.0\.1:9: cannot reach the Dask scheduler"):
        tokenize_corpus(data_config(corpus), TokenizeConfig(), folder, tmp_path / "out", tmp_path / "r", None,
                        workers=1)
    assert not (tmp_path / "out").exists()


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _data_stages(corpus: dict, folder: Path, out: Path, workers: int) -> dict[str, dict[str, bytes]]:
    """tokenize -> vocab (BPE) -> binarize into `out`; every output file's bytes, by stage."""
    data = data_config(corpus)
    tokenize_corpus(data, TokenizeConfig(), folder, out / "tokens", out / "reports", None, workers=workers)
    vocab_stage(data, VocabConfig(kind="bpe", bpe_merges=300, min_freq=1, min_size=10), out / "tokens", out / "vocab",
                out / "reports", workers=workers)
    binarize_stage(out / "tokens", out / "vocab", out / "bin", out / "reports", workers=workers)
    return {stage: _tree(out / stage) for stage in ("tokens", "vocab", "bin")}


@pytest.mark.slow
def test_the_data_stages_give_the_same_files_locally_on_a_pool_and_on_a_dask_cluster(
        clean: tuple[dict, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, folder = clean
    for module in (shards, vocab, binarize):  # several shards per file, spread over both workers
        monkeypatch.setattr(module, "SHARD_LINES" if module is not binarize else "CHUNK_LINES", 300)
    monkeypatch.delenv(shards.DASK_ENV, raising=False)
    local = _data_stages(corpus, folder, tmp_path / "local", workers=1)
    assert _data_stages(corpus, folder, tmp_path / "pool", workers=2) == local
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  host="127.0.0.1") as cluster:
        monkeypatch.setenv(shards.DASK_ENV, cluster.scheduler_address)
        seen: list[str] = []
        submit = distributed.Client.submit

        def recording(self, func, *args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(args[1].__name__)  # the worker class: _run_on_dask(job, factory, args)
            return submit(self, func, *args, **kwargs)

        monkeypatch.setattr(distributed.Client, "submit", recording)
        on_dask = _data_stages(corpus, folder, tmp_path / "dask", workers=1)
    assert set(seen) == {"ShardWorker", "WordCounter", "Numericaliser"}  # every stage's shards went to the cluster
    assert all(local[stage] for stage in local) and on_dask == local
