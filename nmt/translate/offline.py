"""A file's lines through the one path, in this process: what the stages that score a model read.

`translate_lines(translator, lines)` translates each line as a text exactly as `nmt translate`
does (`nmt.translate.local.LocalTranslator.lines` without a glossary, and `POST /translate` with
the same model): cut into sentences with its layout kept (`nmt.text.sentences`), spans masked,
the beam's n-best list read by the loop guard (`nmt.translate.decoding`), the sentences joined
back. The evaluate, baseline, export and ctranslate2 stages and the benches that report BLEU
score this output, so their figures and gates are those of what users get. It imports no
document reader and no runtime: a stage that uses it re-runs when the text path changes, not when
a `.docx` reader does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from nmt.decode.lines import LineTranslator
from nmt.text.sentences import Splitters
from nmt.translate.decoding import Output, translate_sentences
from nmt.translate.texts import Split, translate_texts

BATCH = 4096  # sentences handed to the model at a time (length-sorted into its batches; enough for
# the auto decoder processes of an ONNX package to start: nmt.runtime.translator.AUTO_SENTENCES)
WINDOW = 2048  # lines translated at a time: output can be written as it is made


def decode_in_batches(translator: LineTranslator, sentences: list[str], n: int,
                      progress: Callable[[int], None] | None = None) -> list[Output]:
    """The decode step of the one path: up to `n` translations of each sentence, `BATCH` at a time."""
    outputs: list[Output] = []
    for start in range(0, len(sentences), BATCH):
        part = sentences[start:start + BATCH]
        outputs += translate_sentences(translator, part, n)[0]
        if progress is not None:
            progress(len(part))
    return outputs


def in_windows(translate: Callable[[list[str]], list[str]], lines: Sequence[str],
               progress: Callable[[int], object] | None = None) -> Iterator[str]:
    """`translate` (texts -> their translations) over `lines`, `WINDOW` at a time, in order; `progress(n)`
    after each window with its lines that have text."""
    for start in range(0, len(lines), WINDOW):
        window = list(lines[start:start + WINDOW])
        yield from translate(window)
        if progress is not None:
            progress(sum(1 for x in window if x.strip()))


def translate_lines(translator: LineTranslator, lines: Sequence[str], progress: Callable[[int], object] | None = None,
                    split: Split | None = None) -> Iterator[str]:
    """One translation per line, each line a text in the translator's source language, `WINDOW` lines
    at a time, in order (`in_windows`)."""
    cut = split if split is not None else Splitters()
    lang = translator.vocabs.src_lang

    def texts(window: list[str]) -> list[str]:
        return translate_texts(lambda s, n: decode_in_batches(translator, s, n), cut, window,
                               [lang] * len(window)).texts

    return in_windows(texts, lines, progress)
