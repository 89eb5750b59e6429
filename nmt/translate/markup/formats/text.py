"""`.txt` files: each non-blank line is a unit; blank lines, indentation, `\\r\\n` and a byte-order
mark stay as they were (as `format: text` keeps a text's layout).

Linear in the file (`str.strip`, line by line: a file over a limit stops at that line).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from nmt.translate.markup.formats.base import Budget, Document


def _layout(text: str, budget: Budget) -> tuple[list[str], list[int]]:
    """Lines as verbatim parts and units (indices of the unit parts): a unit is a line's text without
    its surrounding whitespace (and `\\r`). Linear (`str.strip`, the whitespace `\\s` matches)."""
    parts: list[str] = []
    units: list[int] = []
    start = 0
    while start >= 0:  # line by line (not split at once: a file over a limit stops there)
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if start:
            parts.append("\n")
        start = end if end < 0 else end + 1
        word = line.strip()
        if word:
            lead = len(line) - len(line.lstrip())
            parts.append(line[:lead])
            units.append(len(parts))
            parts += [word, line[lead + len(word):]]
            budget.add(word)
        else:
            parts.append(line)
    return parts, units


def text_file(name: str, text: str, encode: Callable[[str], bytes], budget: Budget) -> Document:
    """A decoded .txt file as its lines' units and a writer putting the translations in their place."""
    parts, units = _layout(text, budget)

    def write(translations: Sequence[str]) -> bytes:
        out = list(parts)
        for k, t in zip(units, translations):
            out[k] = t.replace("\n", " ")
        return encode("".join(out))

    return Document(name, [parts[k] for k in units], write)
