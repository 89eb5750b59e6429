"""Text kept as written: the layout around the sentences comes back verbatim
(blank lines, `\\r\\n`, leading and trailing spaces, list markers, a text of whitespace only), and
URLs, e-mail addresses, numbers and emoji survive translation, wherever the model moves them."""

from __future__ import annotations

import pytest

from nmt.text.sentences import SentenceSplitter
from nmt.translate.spans import Masked, mask
from support.serve import ThreadServer, ask, post

LAYOUTS = [
    "s1 s2\n\ns3 s4",                       # a blank line between paragraphs
    "s1 s2\r\ns3 s4\r\n",                   # Windows line ends
    "   s1 s2   ",                          # leading and trailing spaces
    "- s1 s2\n- s3 s4\n* s5\n• s6 s7",      # bullet lists
    "1. s1 s2\n2) s3\na) s4",               # numbered lists
    " \n\t \n",                             # whitespace only
    "",                                     # nothing
]


@pytest.mark.parametrize("text", LAYOUTS, ids=repr)
def test_the_layout_around_sentences_is_kept(text: str) -> None:
    seg = SentenceSplitter("de").split(text)
    assert seg.join(seg.sentences) == text
    marked = seg.join([f"<{s}>" for s in seg.sentences])
    assert marked.count("\n") == text.count("\n") and marked.count("\r") == text.count("\r")
    assert all(not s.startswith(("-", "*", "•", "1.", "2)", "a)")) for s in seg.sentences)  # markers stay layout
    assert all(s == s.strip() and s for s in seg.sentences)


@pytest.mark.parametrize("sentence, spans", [
    ("Besuche https://example.com/a?b=1 heute.", ["https://example.com/a?b=1"]),
    ("Schreib an anna.b@example.de, bitte.", ["anna.b@example.de"]),
    ("Es kostet 3,50 EUR, also -5 % mehr.", ["3,50", "-5"]),
    ("Um 10:30 am 1/2/2024 🙂👍🏽 🇩🇪", ["10:30", "1/2/2024", "🙂👍🏽", "🇩🇪"]),
    ("COVID-19 und A4 bleiben Wörter.", []),
])
def test_spans_are_cut_out_and_put_back_where_the_model_moved_them(sentence: str, spans: list[str]) -> None:
    m = mask(sentence)
    assert list(m.spans) == spans and not any(s in m.text for s in spans)
    assert m.restore(m.text) == sentence  # a model that copies everything
    if len(spans) >= 2:
        moved = f"{len(spans)} first, then " + " ".join(str(k) for k in range(1, len(spans)))
        assert m.restore(moved) == f"{spans[-1]} first, then " + " ".join(spans[:-1])
        assert m.restore("it dropped them") == "it dropped them " + " ".join(spans)  # appended, never lost


@pytest.mark.network
def test_the_server_keeps_layout_and_spans(start) -> None:
    server: ThreadServer = start()
    for text in LAYOUTS:
        if not text:
            continue
        got = post(server.url, json=ask(text)).json()["translatedText"]
        assert got.count("\n") == text.count("\n") and got.startswith(text[:len(text) - len(text.lstrip())])
        assert got.endswith(text[len(text.rstrip()):])
    assert post(server.url, json=ask(" \n\t \n")).json()["translatedText"] == " \n\t \n"
    text = "s1 s2 https://example.com/x 10:30 🙂 a@b.de"
    got = post(server.url, json=ask(text)).json()["translatedText"]
    assert all(span in got for span in ("https://example.com/x", "10:30", "🙂", "a@b.de")), got


def test_a_signed_number_in_a_translation_is_no_placeholder() -> None:
    """Spans and inline tags share one placeholder pattern (spans.PLACEHOLDER): the 2 of -2 or +2 is the
    translation's own number, not span 2."""
    masked = Masked("Zwischen 1 und 2 Grad", ("-3", "5"))
    assert masked.restore("between 1 and -2 degrees, 2") == "between -3 and -2 degrees, 5"
    assert masked.restore("+2 and 1") == "+2 and -3 5"  # span 2 had no placeholder of its own: appended
