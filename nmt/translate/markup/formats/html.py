"""`.html` and `.htm` files: `nmt.translate.markup.html` cuts them into units (tags, attributes and scripts
kept; text by block, across inline tags), counting the file's budget as it parses.
"""

from __future__ import annotations

from collections.abc import Callable

from nmt.translate.markup.formats.base import Budget, Document
from nmt.translate.markup.html import parse_html


def html_file(name: str, text: str, encode: Callable[[str], bytes], budget: Budget) -> Document:
    """A decoded HTML file as its blocks' units and a writer rebuilding it around the translations."""
    doc = parse_html(text, budget)
    return Document(name, doc.units, lambda translations: encode(doc.rebuild(translations)), list(doc.unit_objects))
