"""SentencePiece: subwords learned on raw text, the vocabulary every language has a library for (torch-free).

`SentencePiece.train` learns a model (unigram or BPE; Kudo and Richardson 2018, "SentencePiece: A simple
and language independent subword tokenizer") over raw sentences with this project's special ids (<pad> 0,
<unk> 1, <s> 2, </s> 3: nmt.text.vocab), so that its piece list is a `Vocabulary` as it stands and a
piece's id is the model's symbol id; `encode` turns text into pieces and `decode` pieces back into text,
with no spaCy either way: what a consumer in another language, or in a browser, needs to feed the ONNX
graphs. Training is deterministic (one thread, the input in the order given). A model is saved as its
own bytes (`sentencepiece.model`, what SentencePiece loads in any language) and identified by their
SHA-256, which a loader checks.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from nmt.errors import ConfigError, DataError
from nmt.files.atomic import atomic_open
from nmt.text.detokenizer import Detokenizer
from nmt.text.tokenizer import Tokenized, make_tokenizer, normalize
from nmt.text.vocab import SPECIALS, Vocabulary

MODEL_TYPES = ("unigram", "bpe")  # SentencePiece's subword algorithms this project trains
FILE = "sentencepiece.model"  # its name in a vocabulary folder and in a package


def _library() -> Any:
    try:
        import sentencepiece
    except ModuleNotFoundError:
        raise ConfigError("vocab.kind sentencepiece needs the sentencepiece library: pip install sentencepiece "
                          "(it is in the runtime extra: pip install \"nmt[runtime]\")") from None
    return sentencepiece


class SentencePiece:
    """A trained SentencePiece model: its bytes, and a processor over them."""

    def __init__(self, model: bytes) -> None:
        self.model = bytes(model)
        self._sp = _library().SentencePieceProcessor(model_proto=self.model)
        ids = [self._sp.piece_to_id(s) for s in SPECIALS]
        if ids != list(range(len(SPECIALS))):
            raise DataError(f"a SentencePiece model must have {SPECIALS} at ids 0-3 (this one: {ids}); train it "
                            "with nmt.text.spm.SentencePiece.train")

    @classmethod
    def train(cls, texts: Iterable[str], size: int, model_type: str = "unigram", coverage: float = 1.0,
              byte_fallback: bool = True) -> SentencePiece:
        """A model of at most `size` pieces (specials included) learned on `texts`, one sentence each;
        `coverage`: the share of characters the pieces must cover (rarer ones are <unk>, or bytes with
        `byte_fallback`, which keeps any text encodable without <unk>)."""
        if model_type not in MODEL_TYPES:
            raise ConfigError(f"vocab.sp_model_type: {model_type!r} is not one of {', '.join(MODEL_TYPES)}")
        out = io.BytesIO()
        pad, unk, bos, eos = SPECIALS
        try:
            _library().SentencePieceTrainer.train(
                sentence_iterator=(t for t in texts if t.strip()), model_writer=out, vocab_size=size,
                model_type=model_type, character_coverage=coverage, byte_fallback=byte_fallback,
                pad_id=0, unk_id=1, bos_id=2, eos_id=3, pad_piece=pad, unk_piece=unk, bos_piece=bos,
                eos_piece=eos, num_threads=1, shuffle_input_sentence=False, hard_vocab_limit=False,
                minloglevel=2)
        except RuntimeError as exc:  # SentencePiece's own checks: an empty input, a size below its alphabet
            raise DataError(f"SentencePiece training failed: {exc}") from None
        return cls(out.getvalue())

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.model).hexdigest()

    def vocabulary(self) -> Vocabulary:
        """The pieces in id order: the model's symbols, the specials first."""
        return Vocabulary([self._sp.id_to_piece(i) for i in range(self._sp.get_piece_size())])

    def encode(self, text: str) -> list[str]:
        return list(self._sp.encode(text, out_type=str))

    def decode(self, pieces: Sequence[str]) -> str:
        return str(self._sp.decode_pieces(list(pieces)))

    def save(self, path: Path) -> None:
        with atomic_open(path, "wb", encoding=None) as fh:  # whole, or the previous file
            fh.write(self.model)

    @classmethod
    def load(cls, path: Path, sha256: str | None = None) -> SentencePiece:
        """The model at `path`, refused when its SHA-256 is not `sha256` (a file changed after it was written)."""
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise DataError(f"{path}: cannot read the SentencePiece model ({exc.strerror or exc})") from None
        if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
            raise DataError(f"{path}: SHA-256 differs from the one recorded beside it: the file was changed after "
                            "it was written; write it again (the vocab stage, or the export)")
        try:
            return cls(data)
        except RuntimeError as exc:
            raise DataError(f"{path}: not a SentencePiece model ({exc})") from None


def tokenizer(sp: SentencePiece, lowercase: bool) -> Callable[[Iterable[str]], Iterable[Tokenized]]:
    """Raw sentences -> (pieces, flags), as spaCy's tokenizer is used (`make_tokenizer`): the same whitespace
    normalization and casing, the pieces already the model's symbols (no whitespace flags to keep: "0")."""
    def tokenize(texts: Iterable[str]) -> Iterator[Tokenized]:
        for text in texts:
            text = normalize(text)
            pieces = sp.encode(text.lower() if lowercase else text)
            yield pieces, "0" * len(pieces)

    return tokenize


class PieceJoiner(Detokenizer):
    """Output pieces -> text by SentencePiece's own decoding (in place of the learned `Detokenizer`)."""

    def __init__(self, sp: SentencePiece) -> None:
        super().__init__(set(), set(), set(), set())
        self.sp = sp

    def __call__(self, tokens: list[str]) -> str:
        return self.sp.decode(tokens)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "sentencepiece", "how": f"SentencePiece decoding of the pieces ({FILE})"}


def text_tokenizer(sp: SentencePiece | None, lang: str, lowercase: bool
                   ) -> Callable[[Iterable[str]], Iterable[Tokenized]]:
    """A model's way from text to symbols: SentencePiece's when it has a model, else spaCy's for `lang`."""
    return tokenizer(sp, lowercase) if sp is not None else make_tokenizer(lang, lowercase)


def text_detokenizer(sp: SentencePiece | None, detokenizer: dict[str, Any]) -> Detokenizer:
    """A model's way from output symbols to text: SentencePiece's when it has a model, else the learned
    detokenizer (the dict a model file or package holds)."""
    return PieceJoiner(sp) if sp is not None else Detokenizer.from_dict(detokenizer)
