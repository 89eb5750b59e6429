"""A document translated without a server, as the server translates it: `translate_document_file`.

`nmt translate --input FILE.docx --output OUT.docx` (also .srt, .html, .htm): the file is read into
units (`nmt.serve.documents`: paragraphs, subtitle cues, HTML blocks with their inline markup as
placeholders), each unit cut into sentences with its layout kept (`nmt.serve.sentences`), the
sentences translated on the server's per-batch path (`nmt.serve.decoding.translate_sentences`:
spans and placeholders kept, the loop guard), and the file written back with its formatting.
"""

from __future__ import annotations

from collections.abc import Callable

from nmt.decode.lines import LineTranslator
from nmt.serve.decoding import translate_sentences
from nmt.serve.documents import read_document
from nmt.serve.sentences import SentenceSplitter

DOCUMENTS = (".docx", ".srt", ".html", ".htm")  # extensions translated as documents; others: one sentence per line
BATCH = 256  # sentences handed to the translator at a time


def translate_document_file(translator: LineTranslator, name: str, data: bytes, source_lang: str,
                            progress: Callable[[int], None] | None = None) -> bytes:
    """The translated file's bytes; a `DocumentError` (an `NmtError`) for a file that cannot be read."""
    doc = read_document(name, data)
    splitter = SentenceSplitter(source_lang)
    segmented = [splitter.split(unit) for unit in doc.units]
    sentences = [s for seg in segmented for s in seg.sentences]
    outputs = []
    for start in range(0, len(sentences), BATCH):
        outputs += translate_sentences(translator, sentences[start:start + BATCH])[0]
        if progress is not None:
            progress(len(sentences[start:start + BATCH]))
    texts, done = [], 0
    for seg in segmented:
        mine = outputs[done:done + len(seg.sentences)]
        done += len(mine)
        texts.append(seg.join([o.texts[0] for o in mine]))
    return doc.write(texts)
