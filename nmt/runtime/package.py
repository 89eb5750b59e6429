"""The ONNX package the export stage writes, read and verified (torch-free).

`load_package("models/onnx")` reads the `model.json` card, checks every file against the
SHA-256 the card records, and loads the vocabularies, BPE merges and tokenizer settings; any
problem is a `DataError` naming the file and saying how to get a good package. Every path a card
names goes through `package_file`, so a card cannot make us open or hash a file outside its folder.
The card carries a digest of its own (`card_sha256`: the SHA-256 of its canonical JSON without that
key, `write_card`), checked last (`check_card`): a flipped digit that still parses (a beam size, a
length penalty, a language code) is refused, not served. A card without one predates it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from nmt.config.evaluate import Decoding
from nmt.config.loader import from_dict
from nmt.errors import DataError
from nmt.files.atomic import atomic_write_text
from nmt.files.digest import sha256_file
from nmt.text.spm import SentencePiece
from nmt.text.subword import BPE
from nmt.text.vocab import Vocabulary
from nmt.text.vocabularies import Vocabularies

CARD = "model.json"
FORMAT = "nmt-onnx"
FORMAT_VERSION = 2  # 2: one search, top-k inside the decoder step, per-layer caches
REEXPORT = "re-export it (`dvc repro export`, or `nmt export`)"
CARD_DIGEST = "card_sha256"  # the card's own SHA-256: of its canonical JSON without this key


def card_digest(card: dict[str, Any]) -> str:
    body = {k: v for k, v in card.items() if k != CARD_DIGEST}
    canonical = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def write_card(root: Path, card: dict[str, Any]) -> None:
    """`root/model.json`, written atomically with its own digest (`card_sha256`)."""
    sealed = {**{k: v for k, v in card.items() if k != CARD_DIGEST}, CARD_DIGEST: card_digest(card)}
    atomic_write_text(Path(root) / CARD, json.dumps(sealed, indent=1, ensure_ascii=False) + "\n")


def check_card(card: dict[str, Any], card_path: Path, remedy: str) -> None:
    """A `DataError` when the card's content no longer matches the digest it records (none: an older card)."""
    recorded = card.get(CARD_DIGEST)
    if recorded is not None and recorded != card_digest(card):
        raise DataError(f"{card_path}: changed after it was written: its content no longer matches its own SHA-256 "
                        f"({CARD_DIGEST}), so a value it states (a beam size, a language) may be wrong; not used. "
                        f"{remedy}")


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
        return package_file(self.root, files[name]["file"], self.root / CARD, f"graphs.{variant}.{name}.file")


def package_file(root: Path, name: Any, card_path: Path, entry: str, remedy: str = REEXPORT) -> Path:
    """`root / name` for the file (or folder) that `entry` of `card_path` names; a `DataError`
    unless `name` is a relative path that stays inside `root`: no absolute or drive path, no `..`
    part, no link leading out. Checks the name only: whether the file is there is the caller's."""
    if not isinstance(name, str) or not name:
        raise DataError(f"{card_path}: {entry} is {name!r}, not a file name; {remedy}")
    if PurePosixPath(name).is_absolute() or PureWindowsPath(name).anchor:
        why = "is an absolute path"
    elif ".." in PureWindowsPath(name).parts:  # split at both / and \
        why = "has a '..' part"
    else:
        path = root / name
        try:
            target = path.resolve()
            if target.is_relative_to(root.resolve()):
                return path
            why = f"leads to {target} through a link"
        except (OSError, RuntimeError) as exc:  # a link loop
            why = f"cannot be resolved ({exc})"
    raise DataError(f"{card_path}: {entry} names a file outside the package ({name!r} {why}); {remedy}")


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


def verify_files(root: Path, files: dict[str, str], remedy: str, card: str = CARD) -> dict[str, Path]:
    """Every file the card (`root/card`) lists (`{relative path: SHA-256}`) is there with that digest,
    else a `DataError` naming it and `remedy`; every name is checked (`package_file`) before any file
    is hashed. Returns `{relative path: path}`."""
    paths = {name: package_file(root, name, root / card, f"files[{name!r}]", remedy) for name in files}
    for name, expected in files.items():
        file = paths[name]
        if not file.is_file():
            raise DataError(f"{file}: missing from the package (listed in {card}); copy the whole folder or {remedy}")
        actual = sha256_file(file)
        if actual != expected:
            raise DataError(f"{file}: SHA-256 {actual[:12]}... differs from the {expected[:12]}... recorded in "
                            f"{root / card}; the file was changed or comes from another export; {remedy}")
    return paths


def load_package(path: Path) -> Package:
    """Read and verify an export folder; `DataError` names the file at fault."""
    root = Path(path)
    card_path = root / CARD
    card = read_card(root, FORMAT, FORMAT_VERSION, "an ONNX export of nmt", REEXPORT)
    try:
        vocab = card["vocab"]
        named = {"vocab.src.file": vocab["src"]["file"], "vocab.tgt.file": vocab["tgt"]["file"],
                 "tokenizer": card["tokenizer"]}  # every name the card gives, checked before any file is read
        if vocab.get("bpe"):
            named["vocab.bpe.file"] = vocab["bpe"]["file"]
        if vocab.get("sentencepiece"):
            named["vocab.sentencepiece.file"] = vocab["sentencepiece"]["file"]
        named.update({f"graphs.{variant}.{graph}.file": entry["file"]
                      for variant, graphs in card.get("graphs", {}).items() for graph, entry in (graphs or {}).items()})
        paths = {entry: package_file(root, name, card_path, entry) for entry, name in named.items()}
        verify_files(root, card["files"], REEXPORT)
        src = Vocabulary.load(paths["vocab.src.file"], vocab["src"]["sha256"])
        tgt = Vocabulary.load(paths["vocab.tgt.file"], vocab["tgt"]["sha256"])
        bpe = BPE.load(paths["vocab.bpe.file"]) if vocab.get("bpe") else None
        sp = SentencePiece.load(paths["vocab.sentencepiece.file"], vocab["sentencepiece"]["sha256"]) \
            if vocab.get("sentencepiece") else None
        tokenizer = json.loads(paths["tokenizer"].read_text(encoding="utf-8"))
        absent = [f"{card['tokenizer']}: {k}" for k in ("src_lang", "lowercase", "detokenizer") if k not in tokenizer]
        absent += [f"{CARD}: {part}" for part in ("model", "decoding", "graphs", "languages") if part not in card]
        if absent:
            raise KeyError(", ".join(absent))
        manifest = {"kind": vocab.get("kind"), "joint": vocab.get("joint"), "src_lang": card["languages"]["src"],
                    "tgt_lang": card["languages"]["tgt"], "src": vocab["src"], "tgt": vocab["tgt"],
                    "bpe": vocab.get("bpe"), **({"sentencepiece": vocab["sentencepiece"]} if sp else {})}
        decoding = {k: card["decoding"][k] for k in ("beam_size", "alpha", "max_extra")}
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise DataError(f"{card_path}: malformed package ({type(exc).__name__}: {exc}); {REEXPORT}") from None
    check_card(card, card_path, REEXPORT)
    return Package(root, card, Vocabularies(src, tgt, bpe, manifest, sp), tokenizer,
                   from_dict(Decoding, decoding, key="decoding", source=str(card_path)))
