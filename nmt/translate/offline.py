"""A document translated without a server, as the server translates it: `translate_document_file`.

`nmt translate --input FILE.docx --output OUT.docx` (also .srt, .html, .htm): the file is read into
units (`nmt.translate.markup.formats`: paragraphs, subtitle cues, HTML blocks with their inline markup as
placeholders; with an ONNX package tag pairs leave the text and are put back by alignment), each
unit cut into sentences with its layout kept (`nmt.translate.sentences`), the
sentences translated on the server's per-batch path (`nmt.translate.decoding.translate_sentences`:
spans and placeholders kept, the loop guard) with a glossary's terms swapped in, the steps around
decoding the server's own (`nmt.translate.units`), and the file written back with its formatting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nmt.decode.lines import LineTranslator
from nmt.translate.decoding import Output, translate_sentences
from nmt.translate.glossary import Glossary
from nmt.translate.markup.align import SentenceAligner
from nmt.translate.markup.formats import FORMATS, read_document
from nmt.translate.markup.inline import Unit
from nmt.translate.sentences import SentenceSplitter
from nmt.translate.termswap import to_model
from nmt.translate.units import model_texts, plain_texts, put_pairs, split_and_mask, terms_restored

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
    the server's unit path (`nmt.translate.units`), the sentences decoded `BATCH` at a time."""
    aligner = _aligner(translator)
    plains = plain_texts(units, [aligner is not None] * len(units))
    splitter = SentenceSplitter(source_lang)
    segmented, masks = split_and_mask(lambda ts, _: [splitter.split(t) for t in ts], model_texts(texts, plains),
                                      [source_lang] * len(texts), [glossary] * len(texts))
    sentences = to_model([s for seg in segmented for s in seg.sentences], masks)
    outputs: list[Output] = []
    for start in range(0, len(sentences), BATCH):
        outputs += translate_sentences(translator, sentences[start:start + BATCH])[0]
        if progress is not None:
            progress(len(sentences[start:start + BATCH]))
    outputs = terms_restored(outputs, masks)
    done, at = [], 0
    for seg, unit, plain in zip(segmented, units, plains):
        best = [o.texts[0] for o in outputs[at:at + len(seg.sentences)]]
        at += len(best)
        joined = seg.join(best)
        done.append(joined if unit is None or plain is None else put_pairs(unit, plain, seg, best, joined, aligner))
    return done


def _aligner(translator: LineTranslator) -> SentenceAligner | None:
    """The pairs' aligner for an ONNX package's translator; None for another engine (placeholders)."""
    from nmt.runtime.translator import OnnxTranslator

    return SentenceAligner(translator, translator.vocabs.tgt_lang) if isinstance(translator, OnnxTranslator) else None
