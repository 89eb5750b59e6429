"""Stage 3, tokenize, at scale: shards, the process pool, the per-shard cache and the gate on shard aggregates.

The output must be the bytes a whole-file tokenization gives, whatever the worker count and the
shard size; a grown corpus re-tokenizes only the shards that changed; a bad line is reported
with its line number in the file, not in its shard. The pool's processes die with a killed stage.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from nmt.config.data import TokenizeConfig, ValidateConfig
from nmt.data import shards, tokencache
from nmt.data.tokenize import main, resolve_workers, tokenize_corpus
from nmt.data.validate import validate_corpus
from nmt.errors import ConfigError, DataError, GateError
from nmt.files.lines import read_lines
from nmt.text.tokenizer import format_line, make_tokenizer
from support.corpus import data_config, make_params, multi30k_validated, synthetic_pairs, write_corpus

LANGS = ("de", "en")


def whole_file_tokens(src: Path, lang: str) -> bytes:
    """What the stage wrote before it was sharded: the whole file through one tokenizer."""
    return "".join(format_line(t, f) + "\n" for t, f in make_tokenizer(lang, False)(read_lines(src))).encode()


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def report(reports: Path) -> dict:
    return json.loads((reports / "tokens.json").read_text(encoding="utf-8"))


@pytest.fixture
def multi30k(mirror: Path, tmp_path: Path) -> tuple[dict, Path]:
    """Multi30k's val and test_2016_flickr as the train and val splits of a validated corpus: (corpus entry, folder)."""
    return multi30k_validated(mirror, tmp_path / "clean"), tmp_path / "clean"


@pytest.fixture
def validated(tiny_corpus: dict, tmp_path: Path) -> Path:
    validate_corpus(data_config(tiny_corpus), ValidateConfig(min_pairs=10, min_train_pairs=100),
                    tmp_path / "src_corpus", tmp_path / "clean", tmp_path / "reports")
    return tmp_path / "clean"


def test_output_is_the_whole_file_tokenization_for_any_workers_and_shard_size(
        multi30k: tuple[dict, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus, clean = multi30k
    expected = {f"{split}.{lang}.tsv": whole_file_tokens(clean / f"{split}.{lang}", lang)
                for split in ("train", "val") for lang in LANGS}
    reports = {}
    for shard_lines, workers in ((shards.SHARD_LINES, 1), (1000, 1), (1000, 2), (300, 2)):
        monkeypatch.setattr(shards, "SHARD_LINES", shard_lines)
        name = f"tokens-{shard_lines}-{workers}"
        gate = tokenize_corpus(data_config(corpus), TokenizeConfig(), clean, tmp_path / name, tmp_path / "reports",
                               None, workers=workers)
        assert gate.success
        assert snapshot(tmp_path / name) == expected, (shard_lines, workers)
        per_file = -(-1014 // shard_lines) + -(-1000 // shard_lines)
        assert gate.stats["cache"]["misses"] == 2 * per_file and gate.stats["cache"]["hits"] == 0
        assert gate.stats["train.de"]["shards"] == -(-1014 // shard_lines)
        assert gate.stats["train.de"]["sentences"] == 1014 and gate.stats["val.en"]["sentences"] == 1000
        reports[shard_lines, workers] = (tmp_path / "reports" / "tokens.json").read_bytes()
    # the report does not depend on the worker count (it is a DVC metric: a re-run must not change it)
    assert reports[1000, 1] == reports[1000, 2]


def test_gate_stats_and_expectations_are_per_shard(validated: Path, tiny_corpus: dict, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "SHARD_LINES", 100)
    tokenize_corpus(data_config(tiny_corpus), TokenizeConfig(), validated, tmp_path / "tokens", tmp_path / "reports",
                    None)
    body = report(tmp_path / "reports")
    assert body["stats"]["shards"]["great_expectations_on"].startswith("per-shard aggregates")
    assert body["stats"]["shards"]["lines_per_shard"] == 100 and body["stats"]["shards"]["count"] == 10
    assert body["stats"]["train.de"]["shards"] == 3 and body["stats"]["train.de"]["sentences"] == 300
    assert body["stats"]["train.de"]["min_tokens"] >= 1
    suites = [r["suite_name"] for r in body["great_expectations"]]
    assert suites == [f"tokens-{s}.{lang}.shards" for s in ("train", "val", "test") for lang in LANGS]
    assert all(r["results"][0]["result"]["element_count"] == (3 if "train" in r["suite_name"] else 1)
               for r in body["great_expectations"])


def test_too_many_tokens_in_a_later_shard_is_counted_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    de, en = synthetic_pairs(40, seed=2)
    de[27] = " ".join(["Wort"] * 15) + " ."  # 16 tokens, in the third shard of ten lines
    corpus = write_corpus(tmp_path / "raw", {"train": synthetic_pairs(300, seed=1), "val": (de, en)})
    validate_corpus(data_config(corpus), ValidateConfig(min_pairs=10, min_train_pairs=100), tmp_path / "raw",
                    tmp_path / "clean", tmp_path / "reports")
    monkeypatch.setattr(shards, "SHARD_LINES", 10)
    with pytest.raises(GateError) as err:
        tokenize_corpus(data_config(corpus), TokenizeConfig(max_tokens=15), tmp_path / "clean", tmp_path / "tokens",
                        tmp_path / "reports", None)
    msg = str(err.value)
    assert msg.startswith("tokens gate failed: val.de: tokens per sentence: 1 of 40 rows outside (2.5%), e.g. 16")
    assert "val.de.shards: max tokens per shard: 1 of 4 rows outside" in msg and "max_value=15" in msg
    assert not (tmp_path / "tokens").exists()
    assert report(tmp_path / "reports")["stats"]["val.de"]["max_tokens"] == 16


def test_grown_corpus_retokenizes_only_the_changed_shards(validated: Path, tiny_corpus: dict, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shards, "SHARD_LINES", 100)

    def run(out: str, cache: Path | None = tmp_path / "cache"):
        return tokenize_corpus(data_config(tiny_corpus), TokenizeConfig(), validated, tmp_path / out,
                               tmp_path / "reports", cache)

    first = run("tokens")
    assert first.stats["cache"] == {"hits": 0, "misses": 10, "dir": str(tmp_path / "cache"),
                                   "corrupt_rebuilt": []}  # train 3 shards, others 1

    more_de, more_en = synthetic_pairs(130, seed=9)
    for lang, extra in (("de", more_de), ("en", more_en)):  # train: 300 -> 430 lines, val: 40 -> 45
        with open(validated / f"train.{lang}", "a", encoding="utf-8") as fh:
            fh.write("".join(s + "\n" for s in extra))
        with open(validated / f"val.{lang}", "a", encoding="utf-8") as fh:
            fh.write("".join(s + "\n" for s in extra[:5]))

    tokenized: list[int] = []
    real = tokencache.make_tokenizer

    def counting(lang: str, lowercase: bool):
        tokenize = real(lang, lowercase)
        return lambda texts: tokenize(tokenized.append(len(texts)) or texts)

    monkeypatch.setattr(tokencache, "make_tokenizer", counting)
    grown = run("tokens")
    # train: shards 1-3 unchanged, 301-400 and 401-430 new; val: its only shard grew; test: unchanged
    assert grown.stats["cache"]["hits"] == 8 and grown.stats["cache"]["misses"] == 6
    assert grown.stats["train.de"]["cache_hits"] == 3 and grown.stats["val.en"]["cache_hits"] == 0
    assert grown.stats["test.de"]["cache_hits"] == 1
    assert sorted(tokenized) == sorted([100, 30, 45] * 2)  # spaCy saw only the changed shards' lines
    monkeypatch.setattr(tokencache, "make_tokenizer", real)
    run("fresh", cache=None)
    assert snapshot(tmp_path / "tokens") == snapshot(tmp_path / "fresh")
    assert snapshot(tmp_path / "tokens")["train.de.tsv"] == whole_file_tokens(validated / "train.de", "de")


@pytest.mark.parametrize("workers", [1, 2])
def test_bad_line_in_a_later_shard_names_its_line_in_the_file(validated: Path, tiny_corpus: dict, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    monkeypatch.setattr(shards, "SHARD_LINES", 100)
    tokenize_corpus(data_config(tiny_corpus), TokenizeConfig(), validated, tmp_path / "tokens", tmp_path / "reports",
                    tmp_path / "cache", workers=workers)
    before = snapshot(tmp_path / "tokens")
    path = validated / "train.en"
    lines = path.read_bytes().split(b"\n")
    lines[149] = lines[149][:5] + b"\xff" + lines[149][5:]  # line 150: the second shard's 50th line
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(DataError) as whole:
        read_lines(path)
    assert f"{path}:150: invalid UTF-8 (byte 0xff at column 6)" in str(whole.value)

    with pytest.raises(DataError) as err:
        tokenize_corpus(data_config(tiny_corpus), TokenizeConfig(), validated, tmp_path / "tokens",
                        tmp_path / "reports", tmp_path / "cache", workers=workers)
    assert str(err.value) == str(whole.value)
    assert snapshot(tmp_path / "tokens") == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tokens.")]


def test_empty_files_give_empty_outputs(tiny_corpus: dict, validated: Path, tmp_path: Path) -> None:
    for lang in LANGS:
        (validated / f"test.{lang}").write_bytes(b"")
    gate = tokenize_corpus(data_config(tiny_corpus), TokenizeConfig(), validated, tmp_path / "tokens",
                           tmp_path / "reports", None)
    assert gate.success and (tmp_path / "tokens" / "test.de.tsv").read_bytes() == b""
    assert gate.stats["test.de"] == {"sentences": 0, "tokens": 0, "min_tokens": 0, "max_tokens": 0, "shards": 0,
                                     "cache_hits": 0}


def test_workers_option(tiny_corpus: dict, validated: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert resolve_workers(0) == shards.available_cores() >= 1
    assert resolve_workers(Path("3")) == 3  # the stage parser gives every valued option as a Path
    for bad in ("-1", "two"):
        with pytest.raises(ConfigError, match=f"--workers {bad}: expected a whole number"):
            resolve_workers(Path(bad))

    params = make_params(tmp_path, tiny_corpus)
    common = ["--params", str(params), "--in", str(validated), "--reports", str(tmp_path / "reports"), "--no-cache"]
    assert main([*common, "--out", str(tmp_path / "one"), "--workers", "1"]) == 0
    assert main([*common, "--out", str(tmp_path / "two"), "--workers", "2"]) == 0
    assert snapshot(tmp_path / "one") == snapshot(tmp_path / "two")
    assert main([*common, "--out", str(tmp_path / "bad"), "--workers", "two"]) == 1
    assert "nmt tokenize: error: --workers two: expected a whole number" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


# --- a pool outlives no stage ------------------------------------------------------------------------

STUCK_STAGE = '''
import os, sys, time
from nmt.data import shards, tokencache

class Stuck:
    """A pool worker whose shard never ends (a long tokenization): it prints its pid and sleeps."""
    def __call__(self, job):
        os.write(1, f"{os.getpid()}\\n".encode())  # one write: the two workers' lines do not mix
        time.sleep(60)

if __name__ == "__main__":
    if sys.argv[1] == "pool":
        jobs = (shards.ShardJob("x", "en", i, 1, b"a\\n") for i in range(4))
        for _ in shards.ordered_map(jobs, Stuck, (), 2):
            pass
    else:  # the fallback without Linux's parent-death signal: a child that polls for its parent
        code = ("import os, threading, time; from nmt.data import shards; "
                "threading.Thread(target=shards._watch_parent, args=(os.getppid(), 0.1), daemon=True).start(); "
                "print(os.getpid(), flush=True); time.sleep(60)")
        import subprocess
        subprocess.Popen([sys.executable, "-c", code]).wait()
'''


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for PID 1 to reap it is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def _read_lines(stream, count: int, timeout_s: float) -> list[str]:
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    return [lines.get(timeout=timeout_s).strip() for _ in range(count)]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.fault
@pytest.mark.parametrize("mode,workers", [("pool", 2), ("poll", 1)])
def test_pool_processes_die_with_a_killed_stage(mode: str, workers: int, tmp_path: Path) -> None:
    """A SIGKILLed (OOM-killed) stage left its spawned pool processes alive under PID 1, holding the
    stage's stdout open: DVC and the flow that read it waited for ever."""
    script = tmp_path / "stage.py"
    script.write_text(STUCK_STAGE)
    root = Path(shards.__file__).resolve().parents[2]
    stage = subprocess.Popen([sys.executable, str(script), mode], cwd=root, stdout=subprocess.PIPE, text=True,
                             stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(root)},
                             start_new_session=True)
    pids: list[int] = []
    try:
        pids = [int(line) for line in _read_lines(stage.stdout, workers, timeout_s=30)]
        stage.kill()
        stage.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(map(_alive, pids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in pids if _alive(p)], "pool processes outlived the stage"
    finally:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        stage.kill()
        stage.wait(timeout=10)
