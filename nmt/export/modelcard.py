"""The README.md model card of the formats other toolkits load (transformers' MarianMT folder, Argos packages).

Written from the ONNX package's card (`models/onnx/model.json`: the export stage's record of the same model
file), so that every figure in it is one the pipeline measured and committed: the test sets' sacreBLEU and
chrF with their signatures (the `model-index` block that the Hugging Face Hub reads), the training data, its
licences and the file hashes, the model's shape, the commit it was built from. `package_card` reads that
card and refuses one of another model file (by SHA-256). `nmt.json` in an exported folder lists the SHA-256 of
every file; `verify_export` refuses a folder changed since (`nmt.runtime.package.verify_files`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text
from nmt.files.digest import sha256_file
from nmt.runtime.package import FORMAT, FORMAT_VERSION, REEXPORT, read_card, verify_files
from nmt.text.languages import name as language_name

RECORD = "nmt.json"  # the exported folder's own record: its files and their SHA-256


def check_portable(sentencepiece: bool, lowercase: bool, what: str) -> None:
    """A one-line DataError naming the setting to change when a model cannot leave this project as `what`."""
    if not sentencepiece:
        raise DataError(f"{what} needs a SentencePiece vocabulary, and this model tokenizes with spaCy and BPE "
                        "pieces that no other toolkit runs: train it with `vocab.kind: sentencepiece` (params.yaml, "
                        "docs/export.md: A package with no spaCy) and export again")
    if lowercase:
        raise DataError(f"{what}: this model was trained on lowercased text (tokenize.lowercase: true), which "
                        "its consumers would not lowercase; train it cased (tokenize.lowercase: false)")


def package_card(package: Path, model_sha256: str) -> dict[str, Any]:
    """The ONNX package card of `package`, which must be of the model file whose SHA-256 is `model_sha256`."""
    card = read_card(package, FORMAT, FORMAT_VERSION, "an ONNX package of nmt", REEXPORT)
    theirs = card.get("source", {}).get("model_sha256", "?")
    if theirs != model_sha256:
        raise DataError(f"--package {package}: its card is of another model file (SHA-256 "
                        f"{theirs[:12]}..., this model {model_sha256[:12]}...); "
                        "pass the package the export stage wrote from this model")
    return card


def _results(card: dict[str, Any], task: str) -> list[dict[str, Any]]:
    results = []
    for split, scores in sorted(card.get("evaluation", {}).get("metrics", {}).items()):
        if not isinstance(scores, dict) or "sacrebleu" not in scores:
            continue
        metrics = [{"type": "bleu", "name": "sacreBLEU", "value": scores["sacrebleu"],
                    "args": scores.get("sacrebleu_signature", "")}]
        if "chrf" in scores:
            metrics.append({"type": "chrf", "name": "chrF", "value": scores["chrf"],
                            "args": scores.get("chrf_signature", "")})
        results.append({"task": {"type": "translation", "name": f"Translation {task}"},
                        "dataset": {"name": split, "type": split}, "metrics": metrics})
    return results


def _count(n: Any, noun: str) -> str:
    return f"{n if n is not None else '?'} {noun}{'' if n == 1 else 's'}"


def model_card(card: dict[str, Any], name: str, library: str, usage: str) -> str:
    """README.md: YAML front matter (languages, licence, `model-index`), then the card in prose."""
    src, tgt = card["languages"]["src"], card["languages"]["tgt"]
    data = card.get("data", {})
    provenance = data.get("provenance", {})
    licences = {k: v.get("licence", "") for k, v in provenance.items() if isinstance(v, dict)}
    front = {"language": [src, tgt], "library_name": library, "pipeline_tag": "translation",
             "tags": ["translation", "transformer", "nmt"], "license": "other",
             "license_name": "training-data-terms", "datasets": sorted(licences),
             "model-index": [{"name": name, "results": _results(card, f"{src}-{tgt}")}]}
    shape = card.get("model", {})
    lines = [f"# {name}: {language_name(src)} to {language_name(tgt)}", "",
             "The Transformer of \"Attention Is All You Need\" (Vaswani et al. 2017) trained by the nmt pipeline "
             f"({_count(shape.get('L'), 'layer')}, d_model {shape.get('d_model', '?')}, {shape.get('H', '?')} heads, "
             "post-norm, SentencePiece vocabulary).", "", "## Use", "", "```python", usage, "```", "",
             "## Scores", "", "Scored by the evaluate stage with sacreBLEU and chrF on detokenized text "
             "(signatures in the front matter), decoding as the last column says (our length penalty: GNMT's "
             "((5 + |Y|) / 6) ** alpha, docs/export.md).", "",
             "| test set | sacreBLEU | chrF | decoding |", "| --- | --- | --- | --- |"]
    metrics = card.get("evaluation", {}).get("metrics", {})
    for result in front["model-index"][0]["results"]:
        values = {m["type"]: m["value"] for m in result["metrics"]}
        used = metrics.get(result["dataset"]["name"], {}).get("decoding") or {}
        decoding = (f"beam {used['beam_size']}, alpha {used.get('alpha', 0)}" if "beam_size" in used
                    else "not recorded")
        lines.append(f"| {result['dataset']['name']} | {values['bleu']} | {values.get('chrf', '')} | {decoding} |")
    lines += ["", "## Training data and licence", "",
              f"Corpus: {data.get('corpus', 'not recorded')}. The weights are derived from it, so its terms "
              "apply to them:", ""]
    lines += [f"- {corpus}: {terms or 'no licence recorded'}" for corpus, terms in sorted(licences.items())]
    if provenance.get("note"):
        lines.append(f"- {provenance['note']}")
    source = card.get("source", {})
    lines += ["", "## Provenance", "", f"Built from model file SHA-256 `{source.get('model_sha256', '?')}` "
              f"at commit `{source.get('commit', '?')}`; `{RECORD}` lists the SHA-256 of every file here.", ""]
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n" + "\n".join(lines)


def write_record(root: Path, kind: str, extra: dict[str, Any]) -> None:
    """`root/nmt.json`: what was exported (`kind`, `extra`) and the SHA-256 of every other file under `root`."""
    files = {p.relative_to(root).as_posix(): sha256_file(p) for p in sorted(root.rglob("*"))
             if p.is_file() and p.name != RECORD}
    atomic_write_text(root / RECORD, json.dumps({"kind": kind, **extra, "files": files}, indent=1,
                                                ensure_ascii=False) + "\n")


def verify_export(root: Path, kind: str, remedy: str) -> dict[str, Any]:
    """The record of an exported folder, every file it lists checked; a `DataError` when one was changed."""
    try:
        record = json.loads((root / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{root}: no readable {RECORD} ({exc}): not a folder nmt exported; {remedy}") from None
    if record.get("kind") != kind:
        raise DataError(f"{root}: {RECORD} says {record.get('kind')!r}, not {kind!r}; {remedy}")
    verify_files(root, record.get("files", {}), remedy, RECORD)
    return record
