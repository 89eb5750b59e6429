"""The ONNX package on disk: graphs, vocabularies, tokenizer settings and the model card.

`write_package` writes the encoder and decoder-step graphs (`nmt.export.graphs`), optionally
their int8 dynamic quantisation, the vocabularies (and BPE merges) and `tokenizer.json`
(tokenizer settings and the learned detokenizer); `build_card` describes all of it in
`model.json`: source commit, parameters, vocabulary hashes, the evaluate stage's BLEU, opset,
decoding defaults, special-token ids, graph inputs and outputs, and the SHA-256 of every
file. `nmt.runtime.package` reads it back.
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Mapping
from dataclasses import asdict
from importlib.metadata import version
from pathlib import Path
from typing import Any

from nmt.config.evaluate import Decoding
from nmt.config.export import ExportConfig
from nmt.decode.translator import Translator
from nmt.export.graphs import describe, export_graphs
from nmt.files.atomic import atomic_write_text
from nmt.files.digest import sha256_file
from nmt.runtime.package import CARD, FORMAT, FORMAT_VERSION
from nmt.text.spm import FILE as SP_FILE
from nmt.text.subword import CONT
from nmt.text.vocab import SPECIALS

log = logging.getLogger(__name__)

TOKENIZER = "tokenizer.json"
SEARCH = {  # how a consumer drives the graphs (nmt/decode/search.py is the reference; docs/export.md)
    "start": "encoder once per batch of b sentences; first step: tokens <s> (b, K), rows arange(b*K).reshape(b, K), "
             "self_k_i / self_v_i of length t = 0 with b*K rows",
    "step": "feed the newest token per row and the previous step's row each continues (rows); the outputs "
            "new_self_k_i / new_self_v_i are the next step's self_k_i / self_v_i",
    "greedy": "K = 1; next token ids[:, 0, 0]",
    "beam": "K = beam size; a sentence's candidates are its rows' scores + log_probs, keep the 2K best (at most K "
            "end in </s>); finished hypotheses score log P / ((5 + |Y|) / 6) ** alpha, |Y| counting </s>",
    "finished_sentences": "drop their rows from tokens, rows (index the survivors' earlier rows), src_mask and cross_*",
}


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


def write_text_files(translator: Translator, lowercase: bool, out: Path) -> None:
    """Vocabularies (and BPE merges) and `tokenizer.json`: what turns text into ids and back."""
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
            "detokenizer": translator.detokenizer.to_dict()}
    if vocabs.sp is not None:  # text -> pieces -> text by SentencePiece alone: no spaCy
        vocabs.sp.save(out / SP_FILE)
        text.update(tokenizer=f"SentencePiece ({SP_FILE}): its pieces are the vocabulary's symbols",
                    spacy_version=None, subword={"kind": "sentencepiece", "file": SP_FILE, "sha256": vocabs.sp.sha256})
    atomic_write_text(out / TOKENIZER, json.dumps(text, indent=1, ensure_ascii=False) + "\n")


def write_package(translator: Translator, lowercase: bool, cfg: ExportConfig, out: Path) -> dict[str, Any]:
    """Graphs, vocabularies, tokenizer.json into `out`; returns the card's graph section."""
    import onnx

    paths = export_graphs(translator.model, out, cfg.opset)
    write_text_files(translator, lowercase, out)
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
               params: Mapping[str, Any]) -> dict[str, Any]:
    """The model card: everything a consumer needs to know, and the SHA-256 of every file."""
    mcfg, vocabs = translator.model.cfg, translator.vocabs
    dims = {"L": mcfg.n_layers, "H": mcfg.n_heads, "Dh": mcfg.d_model // mcfg.n_heads, "V": len(vocabs.tgt)}
    for variant in graphs.values():
        for name, entry in variant.items():
            entry.update(describe(mcfg.n_layers)[name])
    manifest = vocabs.manifest
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION, "nmt_version": version("nmt"),
        "languages": {"src": manifest["src_lang"], "tgt": manifest["tgt_lang"]},
        "source": {**source_commit(), "model_file": str(model_path), "model_sha256": sha256_file(model_path),
                   "final_weights": state.get("final")},
        "params": {"model": asdict(mcfg), "export": asdict(cfg), **params},
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
                  "bpe": {"file": "bpe.merges", "sha256": vocabs.bpe.sha256} if vocabs.bpe else None,
                  **({"sentencepiece": {"file": SP_FILE, "sha256": vocabs.sp.sha256}} if vocabs.sp else {})},
        "tokenizer": TOKENIZER,
        "graphs": graphs,
        "search": SEARCH,
        "files": {p.name: sha256_file(p) for p in sorted(out.iterdir()) if p.is_file() and p.name != CARD},
    }


def _ort_version() -> str:
    import onnxruntime

    return onnxruntime.__version__
