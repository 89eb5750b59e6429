"""Tag pairs put back by alignment: the text the model reads without them, the pairs
written back where an aligner says, sentence by sentence, and the leave-span-out aligner itself."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from nmt.runtime.translator import OnnxTranslator
from nmt.text.sentences import SentenceSplitter
from nmt.translate.markup.align import MIN_DROP, SentenceAligner, aligned_words, leave_out_drops
from nmt.translate.markup.html import parse_html
from nmt.translate.markup.pairs import align_pairs, plain_text, with_pairs
from support.learned import ALIGN_SOURCE


def unit_of(html: str):
    (unit,) = parse_html(html).unit_objects
    return unit


def test_the_model_reads_the_text_without_the_pairs_and_each_pair_keeps_its_words() -> None:
    unit = unit_of("<p>Ein <b>roter</b> Ball für 5 Euro, <i>sehr <u>schön</u></i>! <img src=x> Ende.</p>")
    text, ranges = plain_text(unit)
    assert text == "Ein roter Ball für 1 Euro, sehr schön! 2 Ende."  # the span and the atom, numbered among themselves
    assert [text[r.start:r.end] for r in ranges] == ["roter", "sehr schön", "schön"]
    glued = unit_of("<p>x<a href='1'>y</a>z w</p>")
    assert plain_text(glued)[0] == "xyz w"  # no space where the source had none


def test_pairs_go_around_the_aligned_words_and_a_crossing_one_next_to_its_place() -> None:
    unit = unit_of("<p>Ein <b>roter</b> Ball für 5 Euro, <i>sehr <u>schön</u></i>! <img src=x> Ende.</p>")
    text, ranges = plain_text(unit)
    out = "A red ball for 1 euros, very nice! 2 End."
    done = unit.restore(with_pairs(unit, text, out, ranges, {0: (2, 5), 3: (24, 33), 4: (29, 33)}))
    assert done == "A <b>red</b> ball for 5 euros, <i>very <u>nice</u></i>! <img src=x> End."
    crossing = unit.restore(with_pairs(unit, text, out, ranges, {0: None, 3: (24, 33), 4: (20, 28)}))
    assert re.findall(r"<[^>]+>", crossing) == ["<b>", "</b>", "<i>", "<u>", "</u>", "</i>", "<img src=x>"]
    ET.fromstring(f"<r>{crossing.replace('<img src=x>', '<img/>')}</r>")  # well-formed whatever the aligner says


class Recorder:
    """An aligner that answers the first word of the target for every range, and keeps what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, list[tuple[int, int]]]] = []

    def align(self, source, target, spans):
        self.asked.append((source, target, list(spans)))
        return [(0, target.index(" ")) for _ in spans]


def test_pairs_are_aligned_within_their_sentence_and_shifted_into_the_text() -> None:
    unit = unit_of("<p>Erster Satz hier. Ein <b>roter</b> Ball. <i>Quer. Über</i> zwei.</p>")
    text, ranges = plain_text(unit)
    seg = SentenceSplitter("de").split(text)
    assert len(seg.sentences) == 4
    translations = ["First sentence here.", "A red ball.", "Across.", "Over two."]
    aligner = Recorder()
    found = align_pairs(aligner, seg, translations, ranges)
    assert aligner.asked == [("Ein roter Ball.", "A red ball.", [(4, 9)])]  # the pair across sentences is not asked
    joined = seg.join(translations)
    b_open = ranges[0].open
    assert joined[slice(*found[b_open])] == "A" and found[b_open][0] == joined.index("A red")
    assert ranges[1].open not in found


def test_the_aligned_words_grow_to_strong_neighbours_and_nothing_weak_aligns() -> None:
    word_of = [0, 1, 1, 2, 3, 4]  # word 1 has two pieces
    assert aligned_words(np.array([0.0, 2.0, 0.1, 1.5, 0.1, 0.0]), word_of) == (1, 2)
    assert aligned_words(np.array([0.0, 0.2, 3.0, 0.1, 0.1, 0.0]), word_of) == (1, 1)
    assert aligned_words(np.array([2.0, 2.0, 2.0, 2.0, 2.0, 2.0]), word_of) == (0, 2)  # three words at most
    assert aligned_words(np.full(6, MIN_DROP / 2), word_of) is None


@pytest.fixture(scope="module")
def translator(learned_package: Path) -> OnnxTranslator:
    return OnnxTranslator.from_dir(learned_package, device="cpu", threads=1)


@pytest.mark.isa  # the model's own scores: also run with a lower instruction set forced
def test_leaving_a_word_out_hurts_the_output_word_that_copies_it(translator: OnnxTranslator) -> None:
    """The learned copy package (tests/support/learned.py) writes its input back, and leaving any
    word of this line out drops that word's copy most, by a nat at least in torch (the fixture's
    check): the aligner, through the package's graphs as exported, puts each word on its copy.
    (On the partly learned model, a host's rounding decided whether the copies stood out from the
    tail it wrote after them.)"""
    source = ALIGN_SOURCE
    (out,) = translator.translate([source])
    assert out == source
    aligner = SentenceAligner(translator, translator.package.card["languages"]["tgt"])
    ids = translator.source_ids(source.split())
    target = translator.vocabs.tgt.encode(out.split())
    drops = np.stack([leave_out_drops(aligner.backend, ids, target, [(k, k + 1)])[0] for k in range(5)])
    assert (drops.argmax(axis=1) == np.arange(5)).all(), drops.round(2)  # word k unreadable: output word k drops most
    assert (np.diag(drops) > MIN_DROP).all()
    spans = [(m.start(), m.end()) for m in re.finditer(r"\S+", source)]
    got = aligner.align(source, out, spans)
    assert all(r is not None and r[0] <= s[0] and s[1] <= r[1] for s, r in zip(spans, got)), got  # on its copy
    assert aligner.align(source, out, [(2, 3)]) == [None]  # a space: no source word to leave out


def test_a_pair_around_a_number_goes_around_the_same_placeholder_without_the_aligner() -> None:
    unit = unit_of("<p>Er lief <b>17</b> Runden in 2 Stunden.</p>")
    text, ranges = plain_text(unit)
    assert text == "Er lief 1 Runden in 2 Stunden." and text[ranges[0].start:ranges[0].end] == "1"
    seg = SentenceSplitter("de").split(text)
    aligner = Recorder()
    found = align_pairs(aligner, seg, ["He ran 1 laps in 2 hours."], ranges)
    assert aligner.asked == [] and found == {ranges[0].open: (7, 8)}
    out = unit.restore(with_pairs(unit, text, "He ran 1 laps in 2 hours.", ranges, found))
    assert out == "He ran <b>17</b> laps in 2 hours."


def test_pairs_on_the_same_words_nest_as_in_the_source_past_nine_slots() -> None:
    """Two pairs aligned to the same words keep the source's nesting, slot numbers of two digits included."""
    html = "<p>" + " ".join(f"w{k} <b>x{k}</b>" for k in range(4)) + " und <i><u>schön</u></i> hier.</p>"
    unit = unit_of(html)
    text, ranges = plain_text(unit)
    i, u = ranges[-2], ranges[-1]
    assert i.open >= 8 and text[i.start:i.end] == text[u.start:u.end] == "schön"
    out = "w0 x0 w1 x1 w2 x2 w3 x3 and nice here."
    nice = (out.index("nice"), out.index("nice") + 4)
    done = unit.restore(with_pairs(unit, text, out, ranges, {i.open: nice, u.open: nice}))
    assert "<i><u>nice</u></i>" in done
