"""The ONNX package the export stage writes, read and verified (torch-free).

`load_package("models/onnx")` reads the `model.json` card, checks every file against the
SHA-256 the card records, and loads the vocabularies, BPE merges and tokenizer settings; any
problem is a `DataError` naming the file and saying how to get a good package.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.config.evaluate import Decoding
from nmt.config.loader import from_dict
from nmt.errors import DataError
from nmt.files.digest import sha256_file
from nmt.text.subword import BPE
from nmt.text.vocab import Vocabulary
from nmt.text.vocabularies import Vocabularies

CARD = "model.json"
FORMAT = "nmt-onnx"
FORMAT_VERSION = 2  # 2: one search, top-k inside the decoder step, per-layer caches
REEXPORT = "re-export it (`dvc repro export`, or `nmt export`)"


@dataclass(frozen=True)
class Package:
    """A verified export folder: the card and the small files a translator needs."""

    root: Path
    card: dict[str, Any]  # model.json
    vocabs: Vocabularies  # source / target vocabularies and BPE merges, as the model file holds them
    tokenizer: dict[str, Any]  # tokenizer.json: languages, lowercase, detokenizer table
    decoding: Decoding  # the card's decoding defaults, checked

    def graph(self, name: str, int8: bool = False) -> Path:
        """Path of graph `name` (encoder / decoder_step), fp32 or int8."""
        variant = "int8" if int8 else "fp32"
        files = self.card["graphs"].get(variant)
        if files is None:
            raise DataError(f"{self.root / CARD}: the package has no {variant} graphs; set export.quantize: true "
                            f"and {REEXPORT}")
        return self.root / files[name]["file"]


def read_card(root: Path, kind: str, kind_version: int, what: str, remedy: str) -> dict[str, Any]:
    """`root/model.json`, checked to be a card of format `kind`, version `kind_version`; else a
    `DataError` saying `root` is not `what` and how to get one (`remedy`)."""
    card_path = root / CARD
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{card_path}: not found; {root} is not {what} ({remedy})") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{card_path}: cannot read ({exc}); {remedy}") from None
    if not isinstance(card, dict) or card.get("format") != kind or card.get("format_version") != kind_version:
        raise DataError(f"{card_path}: not an {kind} card of version {kind_version}; {remedy}")
    return card


def verify_files(root: Path, files: dict[str, str], remedy: str) -> None:
    """Every file the card lists (`{relative path: SHA-256}`) is there with that digest, else a
    `DataError` naming it and `remedy`."""
    for name, expected in files.items():
        file = root / name
        if not file.is_file():
            raise DataError(f"{file}: missing from the package (listed in {CARD}); copy the whole folder or {remedy}")
        actual = sha256_file(file)
        if actual != expected:
            raise DataError(f"{file}: SHA-256 {actual[:12]}... differs from the {expected[:12]}... recorded in "
                            f"{root / CARD}; the file was changed or comes from another export; {remedy}")


def load_package(path: Path) -> Package:
    """Read and verify an export folder; `DataError` names the file at fault."""
    root = Path(path)
    card_path = root / CARD
    card = read_card(root, FORMAT, FORMAT_VERSION, "an ONNX export of nmt", REEXPORT)
    try:
        verify_files(root, card["files"], REEXPORT)
        vocab = card["vocab"]
        src = Vocabulary.load(root / vocab["src"]["file"], vocab["src"]["sha256"])
        tgt = Vocabulary.load(root / vocab["tgt"]["file"], vocab["tgt"]["sha256"])
        bpe = BPE.load(root / vocab["bpe"]["file"]) if vocab.get("bpe") else None
        tokenizer = json.loads((root / card["tokenizer"]).read_text(encoding="utf-8"))
        absent = [f"{card['tokenizer']}: {k}" for k in ("src_lang", "lowercase", "detokenizer") if k not in tokenizer]
        absent += [f"{CARD}: {part}" for part in ("model", "decoding", "graphs", "languages") if part not in card]
        if absent:
            raise KeyError(", ".join(absent))
        manifest = {"kind": vocab.get("kind"), "joint": vocab.get("joint"), "src_lang": card["languages"]["src"],
                    "tgt_lang": card["languages"]["tgt"], "src": vocab["src"], "tgt": vocab["tgt"], "bpe": vocab.get("bpe")}
        decoding = {k: card["decoding"][k] for k in ("beam_size", "alpha", "max_extra")}
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(f"{card_path}: malformed package ({type(exc).__name__}: {exc}); {REEXPORT}") from None
    return Package(root, card, Vocabularies(src, tgt, bpe, manifest), tokenizer,
                   from_dict(Decoding, decoding, key="decoding", source=str(card_path)))
