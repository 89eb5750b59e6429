"""`format: html` without a model (nmt/translate/markup/html.py, nmt/translate/markup/inline.py): units across inline
markup, cut at blocks; tags, attributes, comments, entities and untouched elements back as they
were; well-formed output whatever a (fake) model does with the placeholders."""

from __future__ import annotations

import html
import random
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable

import pytest

from nmt.text.sentences import SentenceSplitter
from nmt.translate.markup.html import parse_html
from nmt.translate.markup.htmlscan import scan
from nmt.translate.spans import PLACEHOLDER, mask


def split_html(source: str):
    """The units to translate and the function that puts their translations back."""
    doc = parse_html(source)
    return doc.units, doc.rebuild


def translate_html(source: str, translate) -> str:
    """`source` translated: `translate` gets the units' texts and returns their translations."""
    doc = parse_html(source)
    return doc.rebuild(translate(doc.units) if doc.units else [])

PAGE = """<!DOCTYPE html>
<html lang="de"><head><meta charset="utf-8"><meta name="description" content="Eine Seite">
<title>Hallo Welt</title><style>p > b { color: red }</style></head>
<body>
<!-- Kopf -->
<h1 class="t">Ein <b>roter</b> Ball</h1>
<p>Fisch &amp; Pommes f&uuml;r 5&nbsp;Euro &copy; <a href="/x?a=1&amp;b=2" title="Titel">hier</a>.</p>
<ul><li>Eins</li><li>Zwei <i>und</i> drei</li></ul>
<script>var s = "<b>Nicht</b> übersetzen";</script>
<pre>Vorformatiert   bleibt</pre>
<p>Rufe <code>ls -l</code> auf und <span translate="no">ACME Werk</span> bleibt.</p>
<div translate="no"><p>Auch das bleibt.</p></div><p class="x notranslate">Und das.</p>
<table><tr><td>Zelle</td><td>42</td></tr></table>
</body></html>"""


def upper(units: list[str]) -> list[str]:
    return [u.upper() for u in units]


def reverse_words(units: list[str]) -> list[str]:
    return [" ".join(reversed(u.split())) for u in units]


def tags(fragment: str) -> list[str]:
    """The source text of every tag, comment and declaration, in order."""
    return [e.raw for e in scan(fragment) if e.kind not in ("text", "entity")]


def well_formed(fragment: str) -> ET.Element:
    return ET.fromstring(f"<root>{fragment}</root>")


def test_scanning_keeps_every_character() -> None:
    for source in (PAGE, "a < b & c <B>x</B> <?xml version='1.0'?> <![CDATA[x]]> <p unclosed", "", "<br/>&#x41;"):
        assert "".join(e.raw for e in scan(source)) == source


def test_identity_gives_the_page_back_byte_for_byte() -> None:
    units, rebuild = split_html(PAGE)
    assert rebuild(units) == PAGE
    assert units == ["Hallo Welt", "Ein 1 roter 2 Ball", "Fisch & Pommes für 1\xa0Euro © 2 hier 3 .", "Eins",
                     "Zwei 1 und 2 drei", "Rufe 1 auf und 2 bleibt.", "Zelle"]


def test_tags_attributes_comments_and_untouched_elements_come_back_unchanged() -> None:
    out = translate_html(PAGE, upper)
    assert tags(out) == tags(PAGE)
    for kept in ('<script>var s = "<b>Nicht</b> übersetzen";</script>', "<pre>Vorformatiert   bleibt</pre>",
                 "<code>ls -l</code>", '<span translate="no">ACME Werk</span>', "<p>Auch das bleibt.</p>",
                 '<p class="x notranslate">Und das.</p>', "<style>p > b { color: red }</style>",
                 'content="Eine Seite"', "<td>42</td>", "<!-- Kopf -->"):
        assert kept in out
    assert "<title>HALLO WELT</title>" in out and "EIN <b>ROTER</b> BALL" in out
    assert "<li>ZWEI <i>UND</i> DREI</li>" in out and "RUFE <code>ls -l</code> AUF" in out


def test_entities_are_decoded_for_the_model_and_written_back_as_the_source_wrote_them() -> None:
    source = '<p>Fisch &amp; Pommes f&uuml;r 5&nbsp;Euro &copy; &#169; &lt;3 <a href="/x?a=1&amp;b=2">hier</a></p>'
    units, rebuild = split_html(source)
    assert units == ["Fisch & Pommes für 1\xa0Euro © © <2 3 hier 4"]
    assert rebuild(units) == source.replace("&copy; &#169;", "&#169; &#169;")  # one spelling per character
    out = translate_html(source, upper)
    assert 'href="/x?a=1&amp;b=2"' in out and "FISCH &amp; POMMES FÜR 5&nbsp;EURO &#169; &#169; &lt;3" in out


@pytest.mark.parametrize("source", ["<p>Ein <b>roter</b> Ball.</p>", "<p>Ein\n   <b>roter</b>\r\n  Ball.</p>",
                                    "<div>\n  Ein <b>roter</b>\n  Ball.\n</div>"])
def test_inline_markup_and_line_breaks_inside_an_element_do_not_cut_the_sentence(source: str) -> None:
    units, rebuild = split_html(source)
    assert units == ["Ein 1 roter 2 Ball."]
    assert SentenceSplitter("de").split(units[0]).sentences == units  # one sentence for the server's text path
    assert "Ein <b>roter</b> Ball." in rebuild(units)
    assert rebuild(units).startswith(source[:source.index("E")])  # the layout around the unit is kept


@pytest.mark.parametrize("source,expected", [
    ("<p>Eins</p><p>Zwei</p>", ["Eins", "Zwei"]), ("Eins<br>Zwei<br/>Drei", ["Eins", "Zwei", "Drei"]),
    ("<ul><li>Eins<li>Zwei</ul>", ["Eins", "Zwei"]), ("<h1>Titel</h1>Text", ["Titel", "Text"]),
    ("<table><tr><td>A b</td><td>c D</td></tr></table>", ["A b", "c D"]), ("<p>5 &amp; 6</p>", []),
    ("<p><img src='a.png' alt='Bild'> Ein Bild <img src=b></p>", ["Ein Bild"]),
    ("<p>Klicke <img src='a.png'> hier</p>", ["Klicke 1 hier"]),
])
def test_blocks_cut_units_and_text_without_letters_is_left_alone(source: str, expected: list[str]) -> None:
    units, rebuild = split_html(source)
    assert units == expected
    assert rebuild(units) == source


def test_a_tag_pair_across_sentences_stays_in_one_unit_and_comes_back_well_formed() -> None:
    units, rebuild = split_html("<p>Ein <b>Ball. Er</b> rollt.</p>")
    assert units == ["Ein 1 Ball. Er 2 rollt."]
    seg = SentenceSplitter("de").split(units[0])
    assert len(seg.sentences) == 2
    out = rebuild([seg.join([s.upper() for s in seg.sentences])])
    assert out == "<p>EIN <b>BALL. ER</b> ROLLT.</p>"


def test_the_masked_text_passes_the_servers_span_masking_unchanged() -> None:
    units, _ = split_html("<p>Ab <b>5</b> Uhr, 3 Kinder, <i>siehe</i> https://a.de/x?y=1 und COVID-19 &amp; A4.</p>")
    (unit,) = units
    slots = tuple(str(k) for k in range(1, 8))
    assert tuple(m.group(0) for m in PLACEHOLDER.finditer(unit)) == slots
    masked = mask(unit)
    assert masked.spans == slots and masked.restore(masked.text) == unit
    assert "COVID-19" in unit and "A4" in unit


def test_urls_and_numbers_inside_a_unit_come_back_as_written() -> None:
    source = '<p>Preis <b>5,50</b> Euro, siehe https://a.de/?q=1&amp;r=2 oder <i>mail@x.de</i>.</p>'
    out = translate_html(source, upper)
    assert "<b>5,50</b>" in out and "https://a.de/?q=1&amp;r=2" in out and "<i>mail@x.de</i>" in out


@pytest.mark.parametrize("translation,expected", [
    ("A 1 red 2 ball", "A <b>red</b> ball"),
    ("A 1 red ball", "A <b>red</b> ball"),  # the close dropped: the open wraps the word after it
    ("A red 2 ball", "A <b>red</b> ball"),  # the open dropped: the close wraps the word before it
    ("A 2 red 1 ball", "A red <b>ball</b>"),  # in the wrong order: the open's place wins
    ("A red ball", "<b>A red ball</b>"),  # both dropped: around the whole unit
    ("A 1 red 2 ball 1 2", "A <b>red</b> ball"),  # repeated: kept once
    ("A red ball 1 2", "A red <b>ball</b>"),  # around nothing (as the server appends dropped placeholders)
    ("1 2 A red ball", "<b>A</b> red ball"),
    ("A red 2 1 ball", "A red <b>ball</b>"),
])
def test_a_pair_the_model_broke_is_put_back_well_formed(translation: str, expected: str) -> None:
    units, rebuild = split_html("<p>Ein <b>roter</b> Ball</p>")
    assert units == ["Ein 1 roter 2 Ball"]
    assert rebuild([translation]) == f"<p>{expected}</p>"


def test_a_pair_empty_in_the_source_may_stay_empty() -> None:
    units, rebuild = split_html('<p>Ein <a id="x"></a> Ball</p>')
    assert units == ["Ein 1 2 Ball"]
    assert rebuild(["A 1 2 ball"]) == '<p>A <a id="x"></a> ball</p>'


def test_atoms_and_spans_the_model_dropped_are_appended() -> None:
    units, rebuild = split_html("<p>Rufe <code>ls</code> für 5 Euro auf.</p>")
    assert units == ["Rufe 1 für 2 Euro auf."]
    assert rebuild(["Call for euros."]) == "<p>Call for euros. <code>ls</code> 5</p>"


def _random_fragment(rng: random.Random) -> str:
    words = ["Ein", "roter", "Ball", "rollt", "über", "die", "Straße", "5", "Kinder", "&amp;", "https://a.de/x"]

    def inline(depth: int) -> str:
        out = []
        for _ in range(rng.randint(1, 5)):
            r = rng.random()
            if depth < 3 and r < 0.25:
                tag = rng.choice(["b", "i", "em", "a", "span"])
                attrs = ' href="/x?a=1&amp;b=2"' if tag == "a" else ' class="k"' if tag == "span" else ""
                out.append(f"<{tag}{attrs}>{inline(depth + 1)}</{tag}>")
            elif r < 0.3:
                out.append(rng.choice(['<img src="a.png"/>', "<code>x &lt; y</code>", "<!-- c -->",
                                       '<span translate="no">ACME</span>', "<br/>"]))
            else:
                out.append(rng.choice(words))
        return rng.choice([" ", "\n  ", ""]).join(out) if rng.random() < 0.2 else " ".join(out)

    return "".join(f"<{b}>{inline(0)}</{b}>" for b in rng.choices(["p", "li", "div", "h2"], k=rng.randint(1, 3)))


def _shuffle(rng: random.Random) -> Callable[[list[str]], list[str]]:
    def model(units: list[str]) -> list[str]:
        out = []
        for u in units:
            words = u.split()
            if rng.random() < 0.5:
                rng.shuffle(words)
            words = [w for w in words if not (w.isdigit() and rng.random() < 0.3)]  # drops placeholders
            words += [w for w in words if w.isdigit() and rng.random() < 0.1]  # repeats some
            out.append(" ".join(words))
        return out

    return model


@pytest.mark.parametrize("seed", range(40))
def test_whatever_the_model_does_with_placeholders_the_output_is_well_formed(seed: int) -> None:
    rng = random.Random(seed)
    source = _random_fragment(rng)
    well_formed(source)  # the generator's own check
    for model in (upper, reverse_words, _shuffle(rng)):
        out = translate_html(source, model)
        well_formed(out)
        assert Counter(tags(out)) == Counter(tags(source)), (source, out)
    assert tags(translate_html(source, upper)) == tags(source)


def test_a_whole_document_keeps_its_structure_under_a_reordering_model() -> None:
    out = translate_html(PAGE, reverse_words)
    assert Counter(tags(out)) == Counter(tags(PAGE))
    body = re.sub(r"<!DOCTYPE html>|<meta[^>]*>", "", out)  # HTML, not XML: void meta, named entities
    well_formed(re.sub(r"&(?!amp;|lt;|gt;|quot;|apos;|#)\w+;", lambda m: html.unescape(m.group(0)), body))


def test_the_number_of_translations_must_match() -> None:
    doc = parse_html("<p>Eins</p><p>Zwei</p>")
    with pytest.raises(ValueError, match="1 translations for 2 units"):
        doc.rebuild(["One"])
    assert translate_html("<p>5</p>", lambda units: []) == "<p>5</p>"
