"""Translating in this process, as `nmt serve` translates: the Python API and `nmt translate`.

    from nmt.translate.local import LocalTranslator
    translator = LocalTranslator.open("models/onnx")           # or models/model.pt, models/ct2
    translator.translate(["Ein Mann fährt Fahrrad. Er lacht."]).texts

`LocalTranslator` drives the one path (`nmt.translate.texts`) with the server's decode step
(`nmt.translate.decoding.translate_sentences`: spans kept, the loop guard, confidence), the
sentences decoded `BATCH` at a time instead of queued for a batcher: the same text gives the same
answer here, in `nmt translate` and from `POST /translate` with the same model. Plain texts, HTML
documents (`translate_html`) and files (`translate_document`: .docx, .srt, .html, .txt, through
`nmt.translate.markup.formats`) with a glossary, alternatives and confidence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nmt.text.sentences import Splitters
from nmt.translate.decoding import Output
from nmt.translate.glossary import Glossary
from nmt.translate.markup.align import thread_aligner
from nmt.translate.markup.formats import FORMATS, read_document
from nmt.translate.markup.html import parse_html
from nmt.translate.models import Model, ModelOptions, open_model
from nmt.translate.offline import decode_in_batches, in_windows
from nmt.translate.texts import Texts, html_units, rebuild_html, translate_texts

DOCUMENTS = tuple(f for f in FORMATS if f != ".txt")  # translated as documents; others: one sentence per line


@dataclass
class LocalTranslator:
    """A model and, optionally, a glossary; `progress(n)` is told of every `n` sentences decoded."""

    model: Model
    glossary: Glossary | None = None
    progress: Callable[[int], None] | None = None
    split: Splitters = field(default_factory=Splitters)

    @classmethod
    def open(cls, path: Path | str, options: ModelOptions = ModelOptions(), glossary: Path | None = None
             ) -> LocalTranslator:
        """The model at `path` (`nmt.translate.models.open_model`) with the glossary file `glossary` (a TSV)."""
        return cls(open_model(Path(path), options), Glossary.read(glossary) if glossary is not None else None)

    @property
    def source_lang(self) -> str:
        return self.model.languages[0]

    def decode(self, sentences: list[str], n: int) -> list[Output]:
        """The decode step: up to `n` translations of each sentence, `BATCH` sentences at a time."""
        return decode_in_batches(self.model.translator, sentences, n, self.progress)

    def translate(self, texts: Sequence[str], alternatives: int = 0) -> Texts:
        """Each text's translation in its layout, with `alternatives` others and its confidence."""
        return self._texts(list(texts), alternatives=alternatives)

    def lines(self, lines: Sequence[str], progress: Callable[[int], object] | None = None) -> Iterator[str]:
        """One translation per line of a file, each line a text, exactly as `nmt translate` writes them
        (sentences, spans, the glossary, the loop guard), `WINDOW` lines at a time, in order."""
        return in_windows(lambda window: self.translate(window).texts, lines, progress)

    def translate_html(self, docs: Sequence[str], alternatives: int = 0) -> Texts:
        """Each HTML document translated with its markup, as `POST /translate` with `format: html`."""
        parsed = [parse_html(d) for d in docs]
        units = html_units(parsed)
        return rebuild_html(parsed, self._texts([u.text for u in units], units, alternatives), alternatives)

    def translate_document(self, name: str, data: bytes) -> bytes:
        """A file's bytes translated with its formatting (by `name`'s extension, as `/translate_file`);
        a `DocumentError` (an `NmtError`) for a file that cannot be read."""
        doc = read_document(name, data)
        return doc.write(self._texts(list(doc.units), doc.unit_objects or None).texts)

    def close(self) -> None:
        """Stop the model's decoder processes, if any."""
        closer = getattr(self.model.translator, "close", None)
        if closer is not None:
            closer()

    def _texts(self, texts: list[str], units: Sequence | None = None, alternatives: int = 0) -> Texts:
        model = self.model
        return translate_texts(self.decode, self.split, texts, [self.source_lang] * len(texts), units=units,
                               aligns=[model.aligns] * len(texts), glossaries=[self.glossary] * len(texts),
                               alternatives=alternatives, aligner_of=lambda _: thread_aligner(model))
