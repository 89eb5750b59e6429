"""The export stage: the final model as an ONNX package for consumers, gated on parity.

`models/onnx/` gets the encoder and decoder-step graphs (`nmt.onnx_graphs`), optionally
their int8 dynamic quantisation, the vocabularies (and BPE merges), `tokenizer.json`
(tokenizer settings and the learned detokenizer) and the `model.json` card: source
commit, parameters, vocabulary hashes, the evaluate stage's BLEU, opset, decoding
defaults, special-token ids, graph inputs and outputs, and the SHA-256 of every file.

The package is built in a temporary folder and loaded back through `nmt.runtime`, as a
consumer would. The gate then requires torch and ONNX Runtime to agree on a validation
sample (logits within `export.logits_tolerance`, identical greedy and beam outputs) and,
with quantisation, int8 BLEU within `export.max_int8_bleu_drop` of fp32. Only then does
the folder replace `models/onnx/`; a failed gate leaves the previous package untouched.
Metrics (parity, identical test lines, BLEU, sizes) go to `reports/export.json`.
"""

from __future__ import annotations

import json
import logging
import subprocess
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

from nmt import checkpoint, export_checks
from nmt.atomic import atomic_write_text, staged_dir
from nmt.corpus import read_lines, split_file
from nmt.errors import DataError
from nmt.gates import Gate
from nmt.onnx_graphs import GRAPHS, export_graphs
from nmt.params import read_yaml, require
from nmt.runtime import CARD, FORMAT, FORMAT_VERSION, OnnxTranslator, sha256_file
from nmt.subword import CONT
from nmt.translate import Translator
from nmt.vocab import SPECIALS

log = logging.getLogger(__name__)

REPORT_NAME = "export"
TOKENIZER = "tokenizer.json"


@dataclass(frozen=True)
class ExportConfig:
    """The `export` section of params.yaml."""

    opset: int = 20  # ONNX opset (23 emits the Attention op that ORT's CPU provider rejects)
    quantize: bool = False  # also write int8 graphs (onnxruntime dynamic quantisation of the weights)
    parity_split: str = "val"  # validated split whose first sentences the gate decodes with both runtimes
    parity_sentences: int = 100  # how many of them
    logits_tolerance: float = 1e-3  # gate: largest abs(torch - ORT) of encoder outputs and step logits
    logits_steps: int = 8  # teacher-forced decoder steps whose logits are compared
    batch_size: int = 64  # sentences decoded together (as `nmt translate`)
    compare_split: str | None = "test_2016_flickr"  # split translated text to text by both (null: skip)
    compare_sentences: int | None = None  # first sentences of compare_split (null: all)
    max_int8_bleu_drop: float = 1.0  # gate, quantize only: int8 sacreBLEU may be this much below fp32
    threads: int = 0  # ONNX Runtime intra-op threads during the gate (0: its default)

    def __post_init__(self) -> None:
        require(13 <= self.opset <= 22, "opset", "must be between 13 and 22 (20 is tested; 23 breaks ORT CPU)")
        require(self.parity_sentences >= 1, "parity_sentences", "must be >= 1")
        require(self.logits_tolerance >= 0 and self.logits_steps >= 1, "logits_tolerance",
                "tolerance must be >= 0 and logits_steps >= 1")
        require(self.batch_size >= 1 and self.threads >= 0, "batch_size", "must be >= 1 (threads >= 0)")
        require(self.compare_sentences is None or self.compare_sentences >= 1, "compare_sentences", "must be >= 1")
        require(self.max_int8_bleu_drop >= 0, "max_int8_bleu_drop", "must be >= 0")
        require(not self.quantize or self.compare_split is not None, "compare_split",
                "quantize: true needs a compare_split to measure the int8 BLEU change on")


@dataclass(frozen=True)
class Decoding:
    """Decoding defaults written to the card: the evaluate stage's (params: evaluate), so the
    BLEU the card records is what a consumer gets with the defaults."""

    beam_size: int = 4  # beam width; 1 = greedy
    alpha: float = 0.6  # GNMT length penalty
    max_extra: int = 50  # output length limit: source length + this


def read_evaluation(path: Path) -> dict[str, Any]:
    """The evaluate stage's metrics (BLEU per test set) for the card."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: not found; run the evaluate stage first (`dvc repro evaluate`): the model "
                        "card records its BLEU") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read ({exc}); re-run the evaluate stage") from None
    if not isinstance(data, dict):
        raise DataError(f"{path}: expected a JSON object of metrics per test set; re-run the evaluate stage")
    return data


def source_commit() -> dict[str, Any]:
    """The git commit of the working tree, and whether nmt/ has uncommitted changes."""
    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, check=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--", "nmt") if commit else None
    return {"commit": commit or "unknown", "nmt_modified": bool(status) if status is not None else None}


def _read_split(data_dir: Path, key: str, split: str, lang: str, limit: int | None) -> list[str]:
    path = split_file(data_dir, split, lang)
    if not path.is_file():
        raise DataError(f"{path}: not found; export.{key} must name a split of the validated corpus "
                        f"({data_dir}): run `dvc repro validate` or fix params.yaml")
    return read_lines(path)[:limit]


def write_package(translator: Translator, lowercase: bool, cfg: ExportConfig, out: Path) -> dict[str, Any]:
    """Graphs, vocabularies, tokenizer.json into `out`; returns the card's graph section."""
    import onnx

    paths = export_graphs(translator.model, out, cfg.opset)
    vocabs = translator.vocabs
    vocabs.src.save(out / "src.vocab")
    vocabs.tgt.save(out / "tgt.vocab")
    if vocabs.bpe is not None:
        vocabs.bpe.save(out / "bpe.merges")
    text = {"src_lang": vocabs.manifest["src_lang"], "tgt_lang": vocabs.manifest["tgt_lang"],
            "lowercase": lowercase,
            "normalize": "every run of whitespace becomes one space; ends stripped",
            "tokenizer": f"spacy.blank({vocabs.manifest['src_lang']!r}).tokenizer", "spacy_version": version("spacy"),
            "subword": {"kind": "bpe", "file": "bpe.merges", "continuation_prefix": CONT} if vocabs.bpe else None,
            "detokenizer": translator.detokenize.to_dict()}
    atomic_write_text(out / TOKENIZER, json.dumps(text, indent=1, ensure_ascii=False) + "\n")
    variants = {"fp32": paths}
    if cfg.quantize:
        variants["int8"] = {name: quantize(path, out / f"{name}.int8.onnx") for name, path in paths.items()}
    for variant in variants.values():
        for path in variant.values():
            onnx.checker.check_model(str(path))
    return {v: {name: {"file": p.name, "bytes": p.stat().st_size} for name, p in files.items()}
            for v, files in variants.items()}


def quantize(src: Path, dst: Path) -> Path:
    """int8 dynamic quantisation of the weights of `src` (activations stay float)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs every skipped node, and advice, on the root logger
    try:
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)
    log.info("int8 %s: %.1f MB (fp32 %.1f MB)", dst.name, dst.stat().st_size / 1e6, src.stat().st_size / 1e6)
    return dst


def build_card(translator: Translator, state: dict[str, Any], cfg: ExportConfig, decoding: Decoding,
               graphs: dict[str, Any],
               out: Path, model_path: Path, evaluation: dict[str, Any], metrics_path: Path,
               params: dict[str, Any]) -> dict[str, Any]:
    """The model card: everything a consumer needs to know, and the SHA-256 of every file."""
    mcfg, vocabs = translator.model.cfg, translator.vocabs
    dims = {"L": mcfg.n_layers, "H": mcfg.n_heads, "Dh": mcfg.d_model // mcfg.n_heads, "V": len(vocabs.tgt)}
    for variant in graphs.values():
        for name, entry in variant.items():
            entry.update(GRAPHS[name])
    manifest = vocabs.manifest
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "nmt_version": version("nmt"),
        "languages": {"src": manifest["src_lang"], "tgt": manifest["tgt_lang"]},
        "source": {**source_commit(), "model_file": str(model_path), "model_sha256": sha256_file(model_path),
                   "final_weights": state.get("final")},
        "params": {"model": asdict(mcfg), "export": asdict(cfg),
                   **{k: params[k] for k in ("tokenize", "vocab", "train", "evaluate") if k in params}},
        "evaluation": {"file": str(metrics_path), "metrics": evaluation},
        "opset": cfg.opset,
        "exported_with": {"torch": version("torch"), "onnx": version("onnx"), "onnxruntime": _ort_version()},
        "model": {"max_len": mcfg.max_len, "d_model": mcfg.d_model, **dims,
                  "src_vocab_size": len(vocabs.src), "tgt_vocab_size": len(vocabs.tgt)},
        "special_tokens": {name: i for i, name in enumerate(SPECIALS)},
        "decoding": {**asdict(decoding),
                     "length_penalty": "score = log P(Y) / ((5 + |Y|) / 6) ** alpha, |Y| counting </s>",
                     "max_output": "min(source symbols with </s> + max_extra, max_len - 1)",
                     "max_source": mcfg.max_len - 1 - decoding.max_extra},
        "vocab": {"kind": manifest.get("kind"), "joint": manifest.get("joint"),
                  "src": {"file": "src.vocab", "size": len(vocabs.src), "sha256": vocabs.src.sha256},
                  "tgt": {"file": "tgt.vocab", "size": len(vocabs.tgt), "sha256": vocabs.tgt.sha256},
                  "bpe": {"file": "bpe.merges", "sha256": vocabs.bpe.sha256} if vocabs.bpe else None},
        "tokenizer": TOKENIZER,
        "graphs": graphs,
        "files": {p.name: sha256_file(p) for p in sorted(out.iterdir()) if p.is_file() and p.name != CARD},
    }


def check_decoding(gate: Gate, decoding: Decoding, evaluation: dict[str, Any], metrics_path: Path) -> None:
    """The card's BLEU must describe its decoding defaults (a stale metrics file would not)."""
    for split, scores in evaluation.items():
        used = scores.get("decoding") if isinstance(scores, dict) else None
        if isinstance(used, dict):
            keys = [k for k in ("beam_size", "alpha", "max_extra") if k in used]
            ours, theirs = {k: getattr(decoding, k) for k in keys}, {k: used[k] for k in keys}
            gate.check(f"decoding defaults = evaluate's ({split})", ours == theirs,
                       f"export {ours} (the settings of the BLEU in {metrics_path.name})", f"evaluate {theirs}")


def _ort_version() -> str:
    import onnxruntime

    return onnxruntime.__version__


def export_stage(cfg: ExportConfig, decoding: Decoding, model_path: Path, data_dir: Path, metrics_path: Path,
                 out_dir: Path, report_dir: Path, export_metrics: Path, params_path: Path | None = None) -> Gate:
    """Export, gate, then (only if the gate passed) replace `out_dir` and write the metrics."""
    evaluation = read_evaluation(metrics_path)
    params = read_yaml(params_path) if params_path is not None else {}
    translator = Translator.from_file(model_path, beam_size=decoding.beam_size, alpha=decoding.alpha,
                                      max_extra=decoding.max_extra, batch_size=cfg.batch_size)
    state = checkpoint.load(model_path)  # for the card: training summary and tokenizer settings
    src_lang, tgt_lang = translator.vocabs.manifest["src_lang"], translator.vocabs.manifest["tgt_lang"]
    parity_lines = _read_split(data_dir, "parity_split", cfg.parity_split, src_lang, cfg.parity_sentences)
    if cfg.compare_split is not None:
        sources = _read_split(data_dir, "compare_split", cfg.compare_split, src_lang, cfg.compare_sentences)
        refs = _read_split(data_dir, "compare_split", cfg.compare_split, tgt_lang, cfg.compare_sentences)
    gate = Gate(REPORT_NAME)
    with staged_dir(out_dir) as tmp:
        graphs = write_package(translator, state["text"]["lowercase"], cfg, tmp)
        card = build_card(translator, state, cfg, decoding, graphs, tmp, model_path, evaluation, metrics_path, params)
        atomic_write_text(tmp / CARD, json.dumps(card, indent=1, ensure_ascii=False) + "\n")
        opts = {"device": "cpu", "threads": cfg.threads, "batch_size": cfg.batch_size}
        onnx = OnnxTranslator.from_dir(tmp, **opts)  # as a consumer loads it: files verified
        log.info("parity on %d %s sentences", len(parity_lines), cfg.parity_split)
        par = export_checks.parity(translator.model, onnx, parity_lines, cfg.logits_steps, cfg.batch_size)
        gate.check("logits", par["max_logit_diff"] <= cfg.logits_tolerance,
                   f"max abs(torch - ORT) <= {cfg.logits_tolerance:g}", f"{par['max_logit_diff']:.3g}")
        for kind in ("greedy", "beam"):
            share = par[f"{kind}_identical"]
            gate.check(f"{kind} outputs", share == 1.0 and par["sentences"] > 0,
                       f"identical on all {cfg.parity_split} sample sentences",
                       f"{share:.2%} of {par['sentences']} identical" +
                       (f"; first difference {par['first_difference'][kind]}" if kind in par["first_difference"] else ""))
        check_decoding(gate, decoding, evaluation, metrics_path)
        metrics: dict[str, Any] = {"parity": {k: v for k, v in par.items() if k != "first_difference"}}
        metrics["size_mb"] = {v: round(sum(g["bytes"] for g in files.values()) / 1e6, 2) for v, files in graphs.items()}
        if cfg.compare_split is not None:
            int8 = OnnxTranslator.from_dir(tmp, int8=True, **opts) if cfg.quantize else None
            log.info("translating %d %s sentences with torch and ONNX Runtime", len(sources), cfg.compare_split)
            cmp = export_checks.compare_texts(translator, onnx, int8, sources, refs)
            metrics[cfg.compare_split] = cmp
            if int8 is not None:
                gate.check("int8 BLEU", -cmp["int8_bleu_change"] <= cfg.max_int8_bleu_drop,
                           f"drop <= {cfg.max_int8_bleu_drop:g} sacreBLEU on {cfg.compare_split}",
                           f"{cmp['sacrebleu_onnx']} -> {cmp['sacrebleu_int8']} ({cmp['int8_bleu_change']:+.2f})")
        card["validation"] = metrics
        atomic_write_text(tmp / CARD, json.dumps(card, indent=1, ensure_ascii=False) + "\n")
        gate.stats.update(metrics)
        gate.finish(report_dir)
    atomic_write_text(export_metrics, json.dumps(metrics, indent=2) + "\n")
    log.info("ONNX package written to %s", out_dir)
    return gate
