"""The vocabularies of a model, and the way between tokens and ids (torch-free).

`Vocabularies` holds the source and target `Vocabulary` (one object when joint) and the BPE
merges, if any: tokens -> model symbols -> ids for the encoder (`source_ids`) and decoder
(`target_ids`), output ids -> tokens (`output_tokens`). The vocab stage writes them to a
folder with a `manifest.json` (`load_vocabularies` reads and verifies it); model files and
ONNX packages carry their own copy. `pad_batch` right-pads id lists into one array.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nmt.errors import DataError
from nmt.text.spm import SentencePiece
from nmt.text.subword import BPE, merge_pieces
from nmt.text.vocab import BOS_ID, EOS_ID, PAD_ID, Vocabulary

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Vocabularies:
    """What later stages need to turn token sequences into ids and back."""

    src: Vocabulary
    tgt: Vocabulary
    bpe: BPE | None  # None for word-level vocabularies
    manifest: dict  # languages, kind, joint, files and their SHA-256
    sp: SentencePiece | None = None  # vocab.kind sentencepiece: the model whose pieces src and tgt are

    @property
    def src_lang(self) -> str:
        return self.manifest["src_lang"]

    @property
    def tgt_lang(self) -> str:
        return self.manifest["tgt_lang"]

    @property
    def direction(self) -> str:
        return f"{self.src_lang}-{self.tgt_lang}"

    @property
    def hashes(self) -> dict[str, str | None]:
        """SHA-256 of the source and target vocabularies and the BPE merges (None: word level), as
        the manifest records them: what ids made with these vocabularies (data/bin) are checked against."""
        bpe, sp = self.manifest.get("bpe"), self.manifest.get("sentencepiece")
        return {"src": self.manifest["src"]["sha256"], "tgt": self.manifest["tgt"]["sha256"],
                "bpe": bpe["sha256"] if bpe else None, **({"sentencepiece": sp["sha256"]} if sp else {})}

    def toward(self, direction: str | None) -> Vocabularies:
        """These vocabularies for translating `direction` ("src-tgt"): themselves when it is theirs,
        source and target swapped when it is the reverse (one vocab stage serves both directions of
        a language pair), a `DataError` for other languages; None: as they are."""
        if direction is None or direction == f"{self.src_lang}-{self.tgt_lang}":
            return self
        if direction != f"{self.tgt_lang}-{self.src_lang}":
            raise DataError(f"direction {direction!r}: these vocabularies are {self.src_lang}-{self.tgt_lang}; "
                            f"translate {self.src_lang}-{self.tgt_lang} or {self.tgt_lang}-{self.src_lang}")
        m = self.manifest
        manifest = {**m, "src_lang": m["tgt_lang"], "tgt_lang": m["src_lang"], "src": m["tgt"], "tgt": m["src"]}
        return Vocabularies(self.tgt, self.src, self.bpe, manifest, self.sp)

    def pieces(self, tokens: list[str], vocab: Vocabulary | None = None, dropout: float = 0.0,
               rng: random.Random | None = None) -> list[str]:
        """Model symbols of a token sequence (BPE pieces, or the tokens themselves); with
        `vocab`, BPE pieces that vocabulary lacks are split until it has them. `dropout` and
        `rng`: BPE-dropout (training only; `BPE.sample_token`)."""
        if self.bpe is None:
            return list(tokens)
        return self.bpe.segment(tokens, None if vocab is None else vocab.stoi, dropout, rng)

    def source_ids(self, tokens: list[str], dropout: float = 0.0, rng: random.Random | None = None) -> list[int]:
        """Encoder input: symbols + </s>."""
        return self.src.encode(self.pieces(tokens, self.src, dropout, rng)) + [EOS_ID]

    def target_ids(self, tokens: list[str], dropout: float = 0.0, rng: random.Random | None = None) -> list[int]:
        """Decoder sequence: <s> + symbols + </s>."""
        return [BOS_ID] + self.tgt.encode(self.pieces(tokens, self.tgt, dropout, rng)) + [EOS_ID]

    def output_tokens(self, ids: Iterable[int]) -> list[str]:
        """Output ids -> tokens: specials dropped, BPE pieces merged into words."""
        symbols = self.tgt.decode(i for i in ids if i not in (PAD_ID, BOS_ID, EOS_ID))
        return merge_pieces(symbols) if self.bpe is not None else symbols


def load_vocabularies(vocab_dir: Path, direction: str | None = None) -> Vocabularies:
    """Load and verify (SHA-256 against the manifest) the output of the vocab stage, turned toward
    `direction` (`Vocabularies.toward`; None: the vocab stage's own)."""
    vocab_dir = Path(vocab_dir)
    try:
        manifest = json.loads((vocab_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{vocab_dir / MANIFEST}: cannot read ({exc}); run the vocab stage first") from None
    try:
        files = {side: (manifest[side]["file"], manifest[side]["sha256"])
                 for side in ("src", "tgt", "bpe") if side != "bpe" or manifest.get("bpe")}
        if not all(isinstance(v, str) for entry in files.values() for v in entry):
            raise TypeError("file and sha256 must be strings")
    except (AttributeError, KeyError, TypeError) as exc:
        raise DataError(f"{vocab_dir / MANIFEST}: malformed ({type(exc).__name__}: {exc}); "
                        "re-run the vocab stage") from None
    src = Vocabulary.load(vocab_dir / files["src"][0], files["src"][1])
    tgt = Vocabulary.load(vocab_dir / files["tgt"][0], files["tgt"][1])
    sp = None
    if manifest.get("sentencepiece"):
        sp = SentencePiece.load(vocab_dir / manifest["sentencepiece"]["file"], manifest["sentencepiece"]["sha256"])
    bpe = None
    if "bpe" in files:
        bpe = BPE.load(vocab_dir / files["bpe"][0])
        if bpe.sha256 != files["bpe"][1]:
            raise DataError(f"{vocab_dir / files['bpe'][0]}: SHA-256 differs from {MANIFEST}; re-run the vocab stage")
    return Vocabularies(src, tgt, bpe, manifest, sp).toward(direction)


def pad_batch(rows: Sequence[Sequence[int] | np.ndarray], length: int | None = None) -> np.ndarray:
    """Right-pad id lists with <pad> into a (B, S) int64 array; S = `length` (default: the longest row)."""
    out = np.full((len(rows), max(max(len(r) for r in rows), length or 0)), PAD_ID, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out
