"""Translation with the CTranslate2 model of the ctranslate2 stage (`models/ct2`): no torch.

`Ct2Translator.from_dir("models/ct2")` reads the folder the ctranslate2 stage writes (its
`model.json` card, every file checked against the SHA-256 the card records), opens
CTranslate2's model in `ctranslate2/` and translates text to text exactly as `nmt translate`
does: spaCy tokenization with the recorded settings, BPE pieces, the search (CTranslate2's),
detokenization. Sources are our pieces with the closing </s> (CTranslate2 adds nothing), so
the model decodes the ids our search decodes.

Length penalty: CTranslate2 divides a hypothesis' log-probability by |Y| ** length_penalty,
our search by ((5 + |Y|) / 6) ** alpha (GNMT); `alpha` is passed as its `length_penalty`, so beam
outputs may differ from torch's in a few lines (greedy ones do not). Threads: `intra_threads`
inside one replica, `inter_threads` replicas that decode batches side by side (CTranslate2's
throughput mode). `pip install "nmt[runtime,ct2]"`: numpy, spaCy, CTranslate2.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.config.evaluate import Decoding
from nmt.config.loader import from_dict
from nmt.decode.lines import LineTranslator
from nmt.errors import DataError, NmtError
from nmt.runtime.package import CARD, check_card, package_file, read_card, verify_files
from nmt.text.spm import SentencePiece, text_detokenizer, text_tokenizer
from nmt.text.subword import BPE
from nmt.text.vocab import Vocabulary
from nmt.text.vocabularies import Vocabularies

FORMAT, FORMAT_VERSION = "nmt-ctranslate2", 1
INSTALL = 'CTranslate2 is not installed: pip install "nmt[ct2]" (or pip install ctranslate2)'
RECONVERT = "convert it again (`dvc repro ctranslate2`, or `nmt ctranslate2`)"


def open_ct2(model_dir: Path, compute_type: str = "default", intra_threads: int = 0, inter_threads: int = 1) -> Any:
    """A `ctranslate2.Translator` on the CPU; a clear error when CTranslate2 is missing."""
    try:
        import ctranslate2
    except ImportError as exc:
        raise NmtError(INSTALL) from exc
    return ctranslate2.Translator(str(model_dir), device="cpu", compute_type=compute_type,
                                  inter_threads=inter_threads, intra_threads=intra_threads)


@dataclass(kw_only=True)
class Ct2Translator(LineTranslator):
    """Text in, text out on a CTranslate2 model, with our tokenizer, vocabularies and detokenizer.
    The output limit is the batch's longest source + `max_extra` (CTranslate2 takes one limit
    per batch)."""

    ct2: Any  # ctranslate2.Translator
    model_max_len: int  # the positional table's length

    @classmethod
    def open(cls, model_dir: Path, like: LineTranslator, max_len: int, compute_type: str = "default",
             threads: int = 0) -> Ct2Translator:
        """CTranslate2's `model_dir` with the text side (and decoding settings) of `like`."""
        return cls(ct2=open_ct2(model_dir, compute_type, threads), model_max_len=max_len, vocabs=like.vocabs,
                   tokenize=like.tokenize, detokenizer=like.detokenizer, beam_size=like.beam_size, alpha=like.alpha,
                   max_extra=like.max_extra, batch_size=like.batch_size)

    @classmethod
    def from_dir(cls, path: Path, *, compute_type: str = "default", intra_threads: int = 0, inter_threads: int = 1,
                 beam_size: int | None = None, alpha: float | None = None, max_extra: int | None = None,
                 batch_size: int = 64) -> Ct2Translator:
        """Load a verified `models/ct2` folder; decoding options default to its card's."""
        root = Path(path)
        card_path = root / CARD
        card = read_card(root, FORMAT, FORMAT_VERSION, "a CTranslate2 model of nmt", RECONVERT)
        try:
            files = card["files"]
            tokenizer_path = package_file(root, card["tokenizer"], card_path, "tokenizer", RECONVERT)
            model_dir = package_file(root, card["model"]["dir"], card_path, "model.dir", RECONVERT)
            paths = verify_files(root, files, RECONVERT)
            tokenizer = json.loads(tokenizer_path.read_text(encoding="utf-8"))
            src = Vocabulary.load(paths["src.vocab"], files["src.vocab"])
            tgt = Vocabulary.load(paths["tgt.vocab"], files["tgt.vocab"])
            subword = tokenizer.get("subword")  # tokenizer.json names the merges file: checked as the card's names are
            sub = package_file(root, subword["file"], tokenizer_path, "subword.file", RECONVERT) if subword else None
            sp = SentencePiece.load(sub, subword["sha256"]) if sub and subword["kind"] == "sentencepiece" else None
            bpe = BPE.load(sub) if sub and sp is None else None
            manifest = {"kind": "sentencepiece" if sp else "bpe" if bpe else "word",
                        "joint": files["src.vocab"] == files["tgt.vocab"],
                        "src_lang": card["languages"]["src"], "tgt_lang": card["languages"]["tgt"]}
            shipped = card["decoding"]
            given = {"beam_size": beam_size if beam_size is not None else shipped["beam_size"],
                     "alpha": alpha if alpha is not None else shipped["length_penalty"]}
            if max_extra is not None:
                given["max_extra"] = max_extra
            decoding = from_dict(Decoding, given, key="decoding", source=str(card_path))
            max_len = card["model"]["max_len"]
            detokenizer = text_detokenizer(sp, tokenizer["detokenizer"])
            tokenize = text_tokenizer(sp, tokenizer["src_lang"], tokenizer["lowercase"])
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise DataError(f"{card_path}: malformed model folder ({type(exc).__name__}: {exc}); {RECONVERT}") from None
        check_card(card, card_path, RECONVERT)
        ct2 = open_ct2(model_dir, compute_type, intra_threads, inter_threads)
        return cls(ct2=ct2, model_max_len=max_len, vocabs=Vocabularies(src, tgt, bpe, manifest, sp), tokenize=tokenize,
                   detokenizer=detokenizer, beam_size=decoding.beam_size, alpha=decoding.alpha,
                   max_extra=decoding.max_extra, batch_size=batch_size)

    @property
    def max_len(self) -> int:
        return self.model_max_len

    def decode_pieces(self, sources: list[list[str]], max_batch_size: int = 64) -> list[list[str]]:
        """CTranslate2's search over source pieces (with </s>), `max_batch_size` at a time
        (spread over its `inter_threads` replicas); the best hypothesis of each, as pieces."""
        limit = min(max(len(s) for s in sources) + self.max_extra, self.max_len - 1)
        results = self.ct2.translate_batch(sources, beam_size=self.beam_size, length_penalty=self.alpha,
                                           max_decoding_length=limit, max_batch_size=max_batch_size)
        return [r.hypotheses[0] for r in results]

    def decode_batch(self, sources: list[list[int]]) -> list[list[int]]:
        src, tgt = self.vocabs.src, self.vocabs.tgt
        pieces = self.decode_pieces([src.decode(s) for s in sources], max_batch_size=len(sources))
        return [[tgt.stoi[t] for t in hypothesis] for hypothesis in pieces]
