"""The `<unk>` rate next to BLEU, and the evaluate gate on it: a word-level model
whose vocabulary lacks the test set's rare words writes `<unk>`, and the gate fails; the
same data with the BPE vocabulary (the default) gives no `<unk>`, and the gate passes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from nmt.config.data import DataConfig, TokenizeConfig, VocabConfig
from nmt.config.evaluate import Decoding, EvaluateConfig
from nmt.config.loader import from_dict
from nmt.config.model import ModelConfig
from nmt.data.vocab import build_vocabularies, save_vocabularies
from nmt.decode.hypotheses import Hypothesis
from nmt.decode.translator import Translator
from nmt.errors import GateError
from nmt.evaluate.stage import EvaluatePaths, evaluate_stage
from nmt.text.vocab import UNK, UNK_ID
from nmt.train.stage import TrainPaths, train_stage
from support.train import binarized, tiny_train, write_split

NAMES = ("Anna", "Jürgen", "Schröder", "Köln")


def _sentences(rng: random.Random, n: int, first_rare: int) -> list[list[str]]:
    """Copy-task sentences; every other one has a word seen once only (r<k>): <unk> for min_freq 2."""
    out = []
    for i in range(n):
        words = [f"s{rng.randrange(10)}" for _ in range(8)]
        if i % 2:
            words[rng.randrange(8)] = f"r{first_rare + i}"
        if i % 5 == 0:  # names: their letters are the alphabet of the round-trip test
            words[rng.randrange(8)] = NAMES[i % len(NAMES)]
        out.append(words)
    return out


def _train(root: Path, vocab_cfg: VocabConfig) -> dict[str, Path]:
    """Copy-task corpus with rare words (r<k>, seen once or never), its vocabularies, a trained model."""
    tokens, vocab, data = root / "tokens", root / "vocab", root / "validated"
    tokens.mkdir()
    data.mkdir()
    rng = random.Random(7)
    for split, n, first in (("train", 2000, 0), ("val", 40, 10**5), ("test", 40, 10**6)):
        sents = _sentences(rng, n, first)
        write_split(tokens, split, sents, sents)
        if split == "test":
            for lang in ("de", "en"):
                (data / f"test.{lang}").write_text("".join(" ".join(s) + "\n" for s in sents))
    corpus = {"languages": ["de", "en"], "files": [{"name": "x", "url": "file:///x", "sha256": "0" * 64}],
              "splits": {"train": {"de": "x", "en": "x"}, "val": {"de": "x", "en": "x"}}}
    cfg = from_dict(DataConfig, {"corpus": "c", "direction": "de-en", "corpora": {"c": corpus}}, key="data")
    save_vocabularies(build_vocabularies(cfg, vocab_cfg, tokens), vocab)
    train = tiny_train(max_tokens=1200, epochs=8, warmup=100, lr_factor=0.5, val_bleu_sentences=0, log_every=50,
                       num_threads=1, average_last=1, keep_last=1, precision="fp32")  # the same on every host
    model = ModelConfig(n_layers=2, d_model=64, n_heads=4, d_ff=128, dropout=0.0, max_len=96)
    reports = root / "reports"
    bin_dir = binarized(tokens, vocab)
    train_stage(model, train, TokenizeConfig(), TrainPaths(vocab, tokens, bin_dir, root / "ckpt", root / "model.pt",
                                                           reports / "validation", reports / "train"))
    return {"model": root / "model.pt", "tokens": tokens, "data": data, "reports": reports}


@pytest.fixture(scope="module")
def word_model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _train(tmp_path_factory.mktemp("unk-word"), VocabConfig(kind="word", min_freq=2, joint=False))


@pytest.fixture(scope="module")
def bpe_model(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return _train(tmp_path_factory.mktemp("unk-bpe"), VocabConfig(kind="bpe", bpe_merges=40, min_freq=2, joint=False))


def _evaluate(s: dict[str, Path], max_unk_rate: float) -> None:
    cfg = EvaluateConfig(test_sets=("test",), beam_size=1, min_bleu=0.0, max_unk_rate=max_unk_rate, samples=2,
                         attention_samples=1, attention_max_tokens=10)
    evaluate_stage(cfg, EvaluatePaths(s["model"], s["data"], s["tokens"], s["reports"], s["reports"] / "validation"))


def test_unk_rate_and_length_ratio_are_reported_next_to_bleu(word_model: dict[str, Path],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The figures are those of the outputs the stage wrote (reports/translations/test.txt), counted
    here by nmt/evaluate/scoring.py's definitions: <unk> rate, the output tokens that are <unk> over
    all output tokens; length ratio, hypothesis over reference length in sacreBLEU's 13a tokens. The
    outputs are the word-level model's own (half the test sentences have a word it cannot read; how
    many <unk> it writes for them is its own, another number on each host) with 30 <unk> in 20 of
    the 40 sentences put on top (`_write_unks`), so on any host the rate and the count are above zero
    and the count is 20 at least. Every output token is a word of letters and digits or <unk>: one
    token split at spaces, as the stage counts them."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    _write_unks(monkeypatch)
    _evaluate(word_model, max_unk_rate=1.0)
    m = json.loads((word_model["reports"] / "metrics.json").read_text())["test"]
    hyps = (word_model["reports"] / "translations" / "test.txt").read_text().splitlines()
    refs = (word_model["data"] / "test.en").read_text().splitlines()
    assert len(hyps) == len(refs) == m["sentences"] == 40
    tokens = [h.split() for h in hyps]
    unks = [t.count(UNK) for t in tokens]
    assert sum(unks) >= 30 and sum(n > 0 for n in unks) >= 20  # the 30 put on top, in 20 sentences
    assert m["unk_rate"] == round(sum(unks) / sum(map(len, tokens)), 6)
    assert m["unk_sentences"] == sum(n > 0 for n in unks)
    tok = Tokenizer13a()
    ratio = sum(len(tok(h).split()) for h in hyps) / sum(len(tok(r).split()) for r in refs)
    assert m["length_ratio"] == round(ratio, 4)
    html = (word_model["reports"] / "index.html").read_text()
    assert "&lt;unk&gt; rate" in html and "length ratio" in html
    assert "<unk> rate" in (word_model["reports"] / "bleu.md").read_text()


def test_the_unk_gate_fails_a_word_level_model(word_model: dict[str, Path]) -> None:
    with pytest.raises(GateError, match=r"test: <unk> rate: 0\.\d+ \(\d+ of 40 sentences contain <unk>\) "
                                        r"\(expected <= 0 of output tokens; set by evaluate\.max_unk_rate\)"):
        _evaluate(word_model, max_unk_rate=0.0)


def test_the_open_vocabulary_model_passes_the_unk_gate_on_the_same_data(bpe_model: dict[str, Path]) -> None:
    _evaluate(bpe_model, max_unk_rate=0.0)  # raises GateError if any <unk> is written
    m = json.loads((bpe_model["reports"] / "metrics.json").read_text())["test"]
    assert m["unk_rate"] == 0.0 and m["unk_sentences"] == 0


def _write_unks(monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """Make the model write <unk>: of every four sentences decoded, the second ends with one <unk>
    and the fourth with two (words of their own, after the BPE pieces). Returns the output ids of
    every sentence decoded, as the stage gets them."""
    outputs: list[list[int]] = []
    decode, decode_n = Translator.decode_batch, Translator.decode_batch_n

    def decode_batch(self: Translator, sources: list[list[int]]) -> list[list[int]]:
        """The raw search (the attention samples' own decode): the same <unk> pattern, not recorded."""
        hyps = decode(self, sources)
        for k, hyp in enumerate(hyps):
            hyp += [UNK_ID] * {1: 1, 3: 2}.get(k % 4, 0)
        return hyps

    def decode_batch_n(self: Translator, sources: list[list[int]], n: int) -> list[list[Hypothesis]]:
        """The n-best path (a search the loop guard reads): each hypothesis of a sentence alike."""
        lists = decode_n(self, sources, n)
        for hyps in lists:
            extra = [UNK_ID] * {1: 1, 3: 2}.get(len(outputs) % 4, 0)
            for hyp in hyps:
                hyp.ids.extend(extra)
            outputs.append(hyps[0].ids if hyps else [])
        return lists

    monkeypatch.setattr(Translator, "decode_batch", decode_batch)
    monkeypatch.setattr(Translator, "decode_batch_n", decode_batch_n)
    # the loop guard's greedy retries (a search of their own) are another test's: every hypothesis passes
    monkeypatch.setattr("nmt.translate.guard.acceptable", lambda translation, source: True)
    return outputs


def test_the_unk_gate_counts_the_unks_a_bpe_model_writes(bpe_model: dict[str, Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The same open-vocabulary model, made to write 30 <unk> in 20 of its 40 sentences: the
    metrics count exactly those, and the gate compares their share with max_unk_rate."""
    outputs = _write_unks(monkeypatch)
    with pytest.raises(GateError, match=r"test: <unk> rate: 0\.\d+ \(20 of 40 sentences contain <unk>\)"):
        _evaluate(bpe_model, max_unk_rate=0.0)
    vocabs = Translator.from_file(bpe_model["model"], Decoding(beam_size=1)).vocabs
    assert len(outputs) == 40 and sum(h.count(UNK_ID) for h in outputs) == 30
    tokens = sum(len(vocabs.output_tokens(h)) for h in outputs)
    rate = round(30 / tokens, 6)
    gate = json.loads((bpe_model["reports"] / "validation" / "evaluate.json").read_text())
    m = gate["stats"]["metrics"]["test"]
    assert (m["unk_rate"], m["unk_sentences"]) == (rate, 20)
    assert gate["success"] is False and [c["success"] for c in gate["checks"] if "<unk>" in c["name"]] == [False]

    outputs.clear()
    _evaluate(bpe_model, max_unk_rate=rate)  # at the limit: passes
    assert json.loads((bpe_model["reports"] / "metrics.json").read_text())["test"]["unk_rate"] == rate
    outputs.clear()
    with pytest.raises(GateError,
                       match=r"<unk> rate: .* \(expected <= 0\.0\d+ of output tokens; set by evaluate\.max_unk_rate\)"):
        _evaluate(bpe_model, max_unk_rate=rate - 0.001)  # just below: fails


def test_open_vocabulary_round_trip_rare_word_number_name(bpe_model: dict[str, Path]) -> None:
    """Text never seen as a whole word (a rare word, a number, a name) gets no <unk> on the way
    in (source ids) or out (translation), and the target side can spell it exactly."""
    translator = Translator.from_file(bpe_model["model"], Decoding(beam_size=2))
    # digits: never token-initial in training
    lines = ["s1 r424242 s3", "s2 s5 1987 s0", "Jörg s4 s9", "s7 Schönherr 31415 s1 r7"]
    vocabs = translator.vocabs
    for line in lines:
        tokens = line.split()
        assert UNK_ID not in vocabs.source_ids(tokens), line
        ids = vocabs.target_ids(tokens)
        assert UNK_ID not in ids and vocabs.output_tokens(ids) == tokens, line
    out = translator.translate(lines)
    assert len(out) == len(lines) and all(out) and not any("<unk>" in o for o in out), out
