"""A document translated without a server, as the server translates it: `translate_document_file`.

`nmt translate --input FILE.docx --output OUT.docx` (also .srt, .html, .htm): the file is read into
units (`nmt.serve.markup.formats`: paragraphs, subtitle cues, HTML blocks with their inline markup as
placeholders; with an ONNX package tag pairs leave the text and are put back by alignment), each
unit cut into sentences with its layout kept (`nmt.serve.engine.sentences`), the
sentences translated on the server's per-batch path (`nmt.serve.engine.decoding.translate_sentences`:
spans and placeholders kept, the loop guard) with a glossary's terms swapped in as the server swaps
them (`nmt.serve.engine.termswap`), and the file written back with its formatting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nmt.decode.lines import LineTranslator
from nmt.serve.engine.decoding import translate_sentences
from nmt.serve.engine.glossary import Glossary
from nmt.serve.engine.sentences import SentenceSplitter
from nmt.serve.engine.termswap import mask_sentences, restore_all, to_model
from nmt.serve.markup.align import SentenceAligner
from nmt.serve.markup.formats import FORMATS, read_document
from nmt.serve.markup.inline import Unit
from nmt.serve.markup.pairs import align_pairs, has_pairs, plain_text, with_pairs

DOCUMENTS = tuple(f for f in FORMATS if f != ".txt")  # translated as documents; others: one sentence per line
BATCH = 256  # sentences handed to the translator at a time


def translate_document_file(translator: LineTranslator, name: str, data: bytes, source_lang: str,
                            progress: Callable[[int], None] | None = None, glossary: Glossary | None = None) -> bytes:
    """The translated file's bytes; a `DocumentError` (an `NmtError`) for a file that cannot be read."""
    doc = read_document(name, data)
    return doc.write(translate_units(translator, doc.units, doc.unit_objects or [None] * len(doc.units),
                                     source_lang, progress, glossary))


def translate_units(translator: LineTranslator, texts: list[str], units: Sequence[Unit | None], source_lang: str,
                    progress: Callable[[int], None] | None = None, glossary: Glossary | None = None) -> list[str]:
    """Each unit's translation (`texts[i]` is `units[i].text`; None: plain text), for `Unit.restore()`:
    cut into sentences, decoded `BATCH` at a time; with an ONNX package a unit's tag pairs leave the
    text and are put back by the model's alignment, as the server puts them back
    (`nmt.serve.api.translating.translate_units`); `glossary`'s terms are swapped in as the server swaps them."""
    aligner = _aligner(translator)
    plains = [plain_text(u) if u is not None and aligner is not None and has_pairs(u) else None for u in units]
    splitter = SentenceSplitter(source_lang)
    segmented = [splitter.split(t if p is None else p[0]) for t, p in zip(texts, plains)]
    sentences = [s for seg in segmented for s in seg.sentences]
    masks = mask_sentences(sentences, glossary)
    sentences = to_model(sentences, masks)
    outputs = []
    for start in range(0, len(sentences), BATCH):
        outputs += translate_sentences(translator, sentences[start:start + BATCH])[0]
        if progress is not None:
            progress(len(sentences[start:start + BATCH]))
    done, at = [], 0
    for seg, unit, plain in zip(segmented, units, plains):
        mine = [restore_all(o.texts, m)[0] for o, m in zip(outputs[at:at + len(seg.sentences)],
                                                             masks[at:at + len(seg.sentences)])]
        at += len(mine)
        joined = seg.join(mine)
        done.append(joined if unit is None or plain is None or aligner is None else
                    with_pairs(unit, plain[0], joined, plain[1], align_pairs(aligner, seg, mine, plain[1])))
    return done


def _aligner(translator: LineTranslator) -> SentenceAligner | None:
    """The pairs' aligner for an ONNX package's translator; None for another engine (placeholders)."""
    from nmt.runtime.translator import OnnxTranslator

    return SentenceAligner(translator, translator.vocabs.tgt_lang) if isinstance(translator, OnnxTranslator) else None
