"""How the data stages and the train stage's start-up grow with the corpus.

Builds synthetic corpora (`bench/common/corpus.py`) from the Multi30k training split at
`--factors` times its size (default 1, 8, 32, 155: 155x is WMT14 de-en's 4.5M pairs): every
synthetic pair joins two Multi30k pairs (so sentences are WMT-length), and 30% of them start
with a made-up name drawn from a pool that grows with the factor (so the vocabulary grows with
the corpus, as a real one does; flat memory on a corpus that repeats itself would prove
nothing). Deterministic: the same factor gives the same bytes. val and test are Multi30k's own.

Each stage then runs as `dvc.yaml` runs it (the command read from there), in a scratch
project per factor, cold (an empty tokenization cache): validate, tokenize, vocab, binarize, and train
cut to `--updates` updates (its start-up: memory-mapping the ids, building batches, then the
updates, validation and the model file). Measured per stage and factor: wall time, peak
memory of the whole process tree (the stage and its workers, RSS summed, sampled every
`--sample-s`), and pairs per second. Besides, per factor:

- `first_update_s`: the train stage run to its first update and stopped there (start to exit,
  its validation and model file included: an upper bound of the time to the first update);
- `resume_first_update_s`: the same run continued for one more update from the checkpoint that
  one left (loading it, rebuilding the epoch's batches, the update, validation, the model file);
- `tokens_per_s` (at the first and the last factor): training throughput over
  `--throughput-updates` updates, best of `--throughput-repeats` runs of the train stage;
- `workers` (at `--workers-factor`): tokenize and binarize with `--workers 1` against the
  default (every core), cold, alternating, best of `--workers-repeats` each, and whether the
  outputs are byte-identical to the pipeline's;
- `bpe_learners` (at `--learners-factor`): on the vocab stage's word counts of that corpus, our
  BPE learner against Hugging Face `tokenizers`' BpeTrainer (same `##` continuation pieces, as
  many merges, same min_freq), fed the same counts; the vocab stage's wall time is the row above.

Printed with the growth between `--growth A B` (default 8 and 32): the time exponent (1.0 =
linear) and the memory ratio; written to `bench/results/scale.json`.

    python -m bench.scale [--factors 1 8 32 155] [--mirror DIR]    # default: data/raw (the download stage's)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from bench.common.corpus import make_corpus
from bench.common.measure import run_measured
from bench.common.record import RESULTS, write_result

ROOT = Path(__file__).resolve().parents[1]
STAGES = ("validate", "tokenize", "vocab", "binarize", "train")


def scratch_params(updates: int) -> dict[str, Any]:
    """params.yaml with the train stage cut to `updates` updates and no BLEU during training."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["train"].update(max_steps=updates, epochs=1, val_bleu_sentences=0, early_stop_metric="val_loss",
                           keep_last=1, average_last=1, max_val_loss=1e9,  # 20 updates learn little
                           log_every=max(1, updates))  # one record: tokens/s over all the updates
    return params


def write_params(work: Path, updates: int, resume: bool = False) -> None:
    """params.yaml for `updates` updates; checkpoints removed unless `resume` (then the run continues them)."""
    (work / "params.yaml").write_text(yaml.safe_dump(scratch_params(updates), sort_keys=False), encoding="utf-8")
    if not resume:
        shutil.rmtree(work / "models" / "checkpoints", ignore_errors=True)  # a fresh run


def growth(small: dict[str, float], large: dict[str, float], ratio: float) -> dict[str, float]:
    """Time exponent (log time ratio / log size ratio) and memory ratio from `small` to `large`."""
    return {"time_exponent": round(math.log(large["seconds"] / small["seconds"]) / math.log(ratio), 2),
            "memory_ratio": round(large["peak_mib"] / small["peak_mib"], 2)}


def workers_row(work: Path, commands: dict[str, str], sample_s: float, factor: str, repeats: int) -> dict[str, Any]:
    """tokenize and binarize again, cold, with `--workers 1` and with the default (every core) into
    other folders, alternating, `repeats` times each: the best times, and whether the files equal the
    pipeline's own (`data/tokens`, `data/bin`)."""
    out: dict[str, Any] = {}
    for stage, output in (("tokenize", "data/tokens"), ("binarize", "data/bin")):
        best: dict[str, float] = {}
        same = True
        for _ in range(repeats):
            for label, flag in (("one_worker_s", " --workers 1"), ("default_s", "")):
                other = f"{output}-{label}"
                cmd = " ".join(commands[stage].split()).replace(f"--out {output}", f"--out {other}") + flag
                if stage == "tokenize":  # cold: a cache of its own, emptied
                    shutil.rmtree(work / ".cache" / f"tokenize-{label}", ignore_errors=True)
                    cmd = cmd.replace("--cache-dir .cache/tokenize", f"--cache-dir .cache/tokenize-{label}")
                shutil.rmtree(work / other, ignore_errors=True)
                seconds, _ = run_measured(cmd, work, sample_s)
                best[label] = min(best.get(label, seconds), seconds)
                same = same and all((work / other / f.relative_to(work / output)).read_bytes() == f.read_bytes()
                                    for f in (work / output).rglob("*") if f.is_file())
        one, default = best["one_worker_s"], best["default_s"]
        out[stage] = {"one_worker_s": round(one, 2), "default_s": round(default, 2), "speedup": round(one / default, 2),
                      "repeats": repeats, "identical": same, "cores": len(os.sched_getaffinity(0))}
        print(f"{factor:>4}x  {stage:<9} 1 worker {one:.1f} s, every core {default:.1f} s (best of {repeats} each): "
              f"x{one / default:.2f}, files {'identical' if same else 'DIFFER'}", flush=True)
    return out


def bpe_learners(work: Path, merges: int, min_freq: int, langs: tuple[str, str]) -> dict[str, Any]:
    """Our learner and tokenizers' BpeTrainer on the same word counts (both languages of train)."""
    from collections import Counter

    from nmt.data.vocab import word_counts
    from nmt.text.subword import CONT, learn_merges

    start = time.perf_counter()
    words: Counter[str] = Counter()
    for lang in langs:
        words += word_counts(work / "data" / "tokens" / f"train.{lang}.tsv", workers=1)
    counting = time.perf_counter() - start
    start = time.perf_counter()
    ours = learn_merges(words, merges, min_freq=max(min_freq, 2))
    ours_s = time.perf_counter() - start
    row: dict[str, Any] = {"word_types": len(words), "tokens": sum(words.values()), "counting_s": round(counting, 2),
                           "ours": {"merges": len(ours), "seconds": round(ours_s, 2)}}
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    except ImportError:
        row["tokenizers"] = None
        return row
    alphabet = {c for w in words for c in w}
    tok = Tokenizer(models.BPE(continuing_subword_prefix=CONT))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(vocab_size=2 * len(alphabet) + merges, min_frequency=max(min_freq, 2),
                                  continuing_subword_prefix=CONT, show_progress=False, limit_alphabet=len(alphabet))

    def same_counts():  # each word type as often as it occurs, a bounded string at a time
        for word, n in words.items():
            for k in range(0, n, 4096):
                yield " ".join([word] * min(4096, n - k))

    start = time.perf_counter()
    tok.train_from_iterator(same_counts(), trainer)
    theirs_s = time.perf_counter() - start
    learned = len(tok.get_vocab()) - len({s for s in tok.get_vocab() if len(s.removeprefix(CONT)) == 1})
    row["tokenizers"] = {"merges": learned, "seconds": round(theirs_s, 2),
                         "version": __import__("tokenizers").__version__}
    row["ratio_ours_to_tokenizers"] = round(ours_s / theirs_s, 2)
    print(f"BPE learners on {len(words)} word types: counting {counting:.1f} s; ours {len(ours)} merges "
          f"{ours_s:.1f} s, tokenizers {learned} pieces {theirs_s:.1f} s", flush=True)
    return row


def throughput(work: Path, cmd: str, updates: int, repeats: int, sample_s: float) -> dict[str, Any]:
    """Training tokens/s over `updates` updates, best of `repeats` runs of the train stage."""
    write_params(work, updates)
    rates = []
    for _ in range(repeats):
        shutil.rmtree(work / "models" / "checkpoints", ignore_errors=True)
        run_measured(cmd, work, sample_s)
        live = json.loads((work / "reports" / "train" / "live" / "metrics.json").read_text(encoding="utf-8"))
        rates.append(round(live["tokens_per_s"], 1))
    return {"updates": updates, "tokens_per_s": max(rates), "runs": rates}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--factors", type=int, nargs="+", default=[1, 8, 32, 155], help="corpus sizes, in Multi30k trains")
    p.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    p.add_argument("--updates", type=int, default=20, help="updates of the cut train stage")
    p.add_argument("--growth", type=int, nargs=2, default=[8, 32], help="the two factors the growth is taken between")
    p.add_argument("--throughput-updates", type=int, default=60, help="updates of a tokens/s run")
    p.add_argument("--throughput-repeats", type=int, default=3, help="tokens/s runs per factor; the best counts")
    p.add_argument("--workers-factor", type=int, default=32, help="factor of the 1-worker runs (0: none)")
    p.add_argument("--workers-repeats", type=int, default=2, help="cold runs per worker count at --workers-factor")
    p.add_argument("--learners-factor", type=int, default=32, help="factor of the BPE learner comparison (0: none)")
    p.add_argument("--sample-s", type=float, default=0.05, help="memory sampling interval")
    p.add_argument("--mirror", type=Path, default=os.environ.get("NMT_DATA_MIRROR") or ROOT / "data" / "raw",
                   help="folder with Multi30k's files (default: env NMT_DATA_MIRROR, else data/raw of `make repro`)")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for scale.json")
    args = p.parse_args()
    if args.mirror is None or not (Path(args.mirror) / "train.de.gz").is_file():
        raise SystemExit(f"bench.scale needs Multi30k's files in {args.mirror}: run `dvc repro download`, or "
                         "pass --mirror DIR (or set NMT_DATA_MIRROR)")
    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    commands = {name: " ".join(stage["cmd"].split()) for name, stage in dvc.items()}
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    rows: dict[str, dict[str, dict[str, float]]] = {stage: {} for stage in args.stages}
    pairs: dict[str, int] = {}
    extra: dict[str, dict[str, Any]] = {"first_update_s": {}, "resume_first_update_s": {}, "tokens_per_s": {},
                                        "workers": {}, "bpe_learners": {}}
    for factor in args.factors:
        f = str(factor)
        with tempfile.TemporaryDirectory(prefix=f"scale{factor}-") as tmp:
            work = Path(tmp)
            pairs[f] = make_corpus(Path(args.mirror), factor, work / "data" / "raw")
            write_params(work, args.updates)
            for git in (["init", "-q"], ["-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q",
                                         "--allow-empty", "-m", "scale bench"]):  # DVCLive wants a commit
                subprocess.run(["git", *git], cwd=work, check=True)
            for stage in args.stages:
                seconds, peak = run_measured(commands[stage], work, args.sample_s)
                rows[stage][f] = {"seconds": round(seconds, 2), "peak_mib": round(peak, 1),
                                  "pairs_per_s": round(pairs[f] / seconds, 1)}
                print(f"{factor:>4}x {pairs[f]:>9} pairs  {stage:<9} {seconds:8.1f} s  {peak:8.0f} MiB", flush=True)
            if "train" in args.stages:
                write_params(work, 1)
                extra["first_update_s"][f] = round(run_measured(commands["train"], work, args.sample_s)[0], 2)
                print(f"{factor:>4}x  train to its first update and out: {extra['first_update_s'][f]:.1f} s",
                      flush=True)
                write_params(work, 2, resume=True)  # update 2 from the checkpoint of update 1
                extra["resume_first_update_s"][f] = round(run_measured(commands["train"], work, args.sample_s)[0], 2)
                live = json.loads((work / "reports" / "train" / "live" / "metrics.json").read_text(encoding="utf-8"))
                if live.get("step") != 2:
                    raise SystemExit(f"the resumed train run ended at update {live.get('step')}, not 2: "
                                     "it did not resume")
                print(f"{factor:>4}x  train resumed, to its next update and out: "
                      f"{extra['resume_first_update_s'][f]:.1f} s", flush=True)
                if factor in (args.factors[0], args.factors[-1]):
                    extra["tokens_per_s"][f] = throughput(work, commands["train"], args.throughput_updates,
                                                          args.throughput_repeats, args.sample_s)
                    print(f"{factor:>4}x  training {extra['tokens_per_s'][f]['tokens_per_s']:.0f} tokens/s", flush=True)
            if factor == args.workers_factor and {"tokenize", "binarize"} <= set(args.stages):
                extra["workers"][f] = workers_row(work, commands, args.sample_s, f, args.workers_repeats)
            if factor == args.learners_factor and "vocab" in args.stages:
                langs = tuple(params["data"]["direction"].split("-"))
                extra["bpe_learners"][f] = bpe_learners(work, params["vocab"]["bpe_merges"],
                                                        params["vocab"]["min_freq"], langs)
    results: dict[str, Any] = {"factors": args.factors, "pairs": pairs, "updates": args.updates, "stages": rows,
                               **{k: v for k, v in extra.items() if v}}
    small, large = (str(x) for x in args.growth)
    if small in pairs and large in pairs:
        ratio = pairs[large] / pairs[small]
        results["growth"] = {"from": small, "to": large,
                             "stages": {s: growth(rows[s][small], rows[s][large], ratio) for s in args.stages}}
        print(f"\ngrowth {small}x -> {large}x: " + "; ".join(
            f"{s} time^{g['time_exponent']:.2f} memory x{g['memory_ratio']:.2f}"
            for s, g in results["growth"]["stages"].items()))
    write_result("scale", results, 1, args.out)


if __name__ == "__main__":
    main()
