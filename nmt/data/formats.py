"""Corpus files in the forms they are published in, read as aligned sentence pairs, in chunks.

Every reader yields `Chunk`s `(first_line, side_a, side_b)`: two equally long lists of up to
`chunk_lines` sentences, in file order, `side_a` in `langs[0]`; `first_line` is the 1-based line
of the chunk's first pair (for TMX, the 1-based index of its translation unit), so callers can
name a line in their own errors. Memory holds a chunk, never a file. Files may be gzip
(`nmt.files.lines.open_raw`); text files must be UTF-8. Bad input is a `DataError` naming the
file, the line and what to do; a reader never raises anything else for it. Given a `skipped`
counter (`nmt.data.chunks.Skips`), the TSV and line-aligned readers skip a malformed line instead
(not UTF-8, too few columns: counted by `MALFORMED` kind, with its line number), as the TMX reader
skips a unit without both languages; the validate stage gates on their share.

- `tsv_chunks`: tab-separated rows, a language per column (Tatoeba's `deu.txt`: English, German,
  in newer versions an attribution column, which is ignored);
- `tmx_chunks`: TMX 1.4 (or 1.1) translation memories, parsed incrementally;
- `moses_chunks`: two line-aligned files of Moses-tokenized, XML-escaped text, unescaped and
  detokenized (sacremoses);
- `line_chunks`: two line-aligned plain files;
- systems' outputs of the same source lines, or their human references: `nmt.data.systems`.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TypeVar

from nmt.config.data import SplitSource
from nmt.data.chunks import Chunk, Pair, chunked, skip
from nmt.data.systems import systems_chunks
from nmt.errors import ConfigError, DataError
from nmt.files.lines import iter_lines, iter_lines_or_none, open_raw

log = logging.getLogger(__name__)

V = TypeVar("V")

# TMX 1.4 inline elements whose content is native markup codes (dropped; their tails are text).
TMX_CODES = frozenset({"bpt", "ept", "it", "ph", "ut"})
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_MOSES_ENTITY = re.compile(r"&(?:(amp|lt|gt|quot|apos)|#([0-9]+)|#[xX]([0-9a-fA-F]+));")
_MOSES_NAMED = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
MALFORMED = "malformed: "  # the prefix of a skipped line's kind (validate gates their share on every split)
NOT_UTF8 = MALFORMED + "invalid UTF-8"


def _sides(mapping: Mapping[str, V], langs: tuple[str, str], what: str) -> tuple[V, V]:
    """`mapping`'s values for the two languages, in `langs` order."""
    missing = [lang for lang in langs if lang not in mapping]
    if missing or len(set(langs)) != 2:
        raise ConfigError(f"{what} {dict(mapping)}: expected one entry for each of two different languages "
                          f"{' and '.join(langs)}" + (f"; {', '.join(missing)} has none" if missing else ""))
    return mapping[langs[0]], mapping[langs[1]]


# --- tab-separated ------------------------------------------------------------------------------


def tsv_chunks(path: Path, columns: Mapping[str, int], langs: tuple[str, str], chunk_lines: int,
               skipped: Counter | None = None) -> Iterator[Chunk]:
    """Pairs from a tab-separated file, each language read from its 0-based column in `columns`
    (e.g. {"en": 0, "de": 1} for Tatoeba's `deu.txt`); further columns are ignored. A row with too
    few columns, or not UTF-8, is a `DataError` naming its line; with `skipped`, it is skipped and
    counted there."""
    col_a, col_b = _sides(columns, langs, "tsv columns")
    if not all(isinstance(c, int) and c >= 0 for c in (col_a, col_b)) or col_a == col_b:
        raise ConfigError(f"tsv columns {dict(columns)}: expected two different 0-based column numbers")
    yield from chunked(_tsv_pairs(Path(path), col_a, col_b, langs, skipped), chunk_lines)


def _tsv_pairs(path: Path, col_a: int, col_b: int, langs: tuple[str, str], skipped: Counter | None) -> Iterator[Pair]:
    needed = max(col_a, col_b) + 1
    names = ", ".join({col_a: langs[0], col_b: langs[1]}.get(i, "-") for i in range(needed))
    lines = iter_lines(path) if skipped is None else iter_lines_or_none(path)  # '\r' stripped
    for number, line in enumerate(lines, start=1):
        if line is None:  # only when skipping (iter_lines raises)
            if skipped is not None:
                skip(skipped, NOT_UTF8, number)
            continue
        cells = line.split("\t")
        if len(cells) < needed:
            if skipped is not None:
                skip(skipped, f"{MALFORMED}fewer than {needed} tab-separated columns", number)
                continue
            raise DataError(f"{path}:{number}: expected {needed} tab-separated columns ({names}), "
                            f"got {len(cells)}; fix or remove that line")
        yield number, cells[col_a], cells[col_b]


# --- TMX ----------------------------------------------------------------------------------------


def tmx_chunks(path: Path, langs: tuple[str, str], chunk_lines: int,
               skipped: Counter | None = None) -> Iterator[Chunk]:
    """Pairs from a TMX file (gzip or plain), one per translation unit `<tu>` that has a non-empty
    segment in both languages (`xml:lang`, or TMX 1.1's `lang`, matched on the primary subtag,
    case-insensitively: `de-DE`, `DE`, `de_AT` are all de; the first `<tuv>` of a language wins).
    Other `<tu>`s are skipped and counted in `skipped` ("tmx: tu without de", ...). Segment text
    keeps `<hi>` content and drops the native codes of `<bpt>`, `<ept>`, `<it>`, `<ph>`, `<ut>`
    (their tails kept); whitespace runs become one space. Parsed incrementally, so memory holds
    one `<tu>`; entity declarations (XML bombs) and external entities are refused."""
    yield from chunked(_tmx_pairs(Path(path), langs, Counter() if skipped is None else skipped), chunk_lines)


def _local(tag: object) -> str:
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""  # comments, PIs: not elements


def _primary(lang: str) -> str:
    return re.split(r"[-_]", lang.strip(), maxsplit=1)[0].lower()


def _seg_text(elem) -> str:
    """The text content of a `<seg>` (or `<hi>`), native codes dropped, whitespace not yet collapsed."""
    parts = [elem.text or ""]
    for child in elem:
        if _local(child.tag) not in TMX_CODES:
            parts.append(_seg_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _tu_texts(tu, wanted: tuple[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for tuv in tu:
        lang = _primary(tuv.get(_XML_LANG) or tuv.get("lang") or "") if _local(tuv.tag) == "tuv" else ""
        if lang in wanted and lang not in found:
            seg = next((c for c in tuv if _local(c.tag) == "seg"), None)
            found[lang] = " ".join(_seg_text(seg).split()) if seg is not None else ""
    return found


def _tmx_pairs(path: Path, langs: tuple[str, str], skipped: Counter) -> Iterator[Pair]:
    try:
        from xml.etree.ElementTree import TreeBuilder

        from defusedxml import DefusedXmlException
        from defusedxml.ElementTree import DefusedXMLParser, ParseError, iterparse
    except ImportError:
        raise DataError(f"{path}: reading TMX needs defusedxml, which is not installed: "
                        "pip install defusedxml (or the project's pipeline extra)") from None
    from xml.parsers.expat import ErrorString

    wanted = (_primary(langs[0]), _primary(langs[1]))
    parser = DefusedXMLParser(target=TreeBuilder())  # forbids entity declarations and external entities
    units = pairs = 0
    stack: list = []
    with open_raw(path) as fh:
        try:
            for event, elem in iterparse(fh, events=("start", "end"), parser=parser):
                if event == "start":
                    if not stack and _local(elem.tag) != "tmx":
                        raise DataError(f"{path}: not a TMX file (its root element is <{_local(elem.tag)}>, "
                                        "expected <tmx>); check the corpus's format in the config")
                    stack.append(elem)
                    continue
                stack.pop()
                if _local(elem.tag) != "tu":
                    continue
                units += 1
                found = _tu_texts(elem, wanted)
                stack[-1].remove(elem)  # the parent keeps no finished <tu>: memory stays flat
                missing = [lang for lang in wanted if lang not in found]
                empty = [lang for lang in wanted if lang in found and not found[lang]]
                if missing or empty:
                    skip(skipped, f"tmx: tu without {' and '.join(missing)}" if missing
                         else f"tmx: tu with empty {' and '.join(empty)}", units)
                    continue
                pairs += 1
                yield units, found[wanted[0]], found[wanted[1]]
        except ParseError as exc:
            line, column = exc.position
            raise DataError(f"{path}:{line}:{column + 1}: malformed XML ({ErrorString(exc.code)}); the file must be "
                            "well-formed XML (UTF-8 unless its XML declaration says otherwise): fix it or "
                            "download it again") from None
        except DefusedXmlException as exc:
            raise DataError(f"{path}:{parser.parser.CurrentLineNumber}: refused XML declaration ({exc}); a TMX "
                            "file needs no entity declarations or external entities, and they can be used for "
                            "entity-expansion attacks: remove them") from None
    log.info("%s: %d translation units, %d pairs, %d skipped", path, units, pairs, units - pairs)


# --- two line-aligned files ---------------------------------------------------------------------


def line_chunks(paths: Mapping[str, Path], langs: tuple[str, str], chunk_lines: int,
                skipped: Counter | None = None) -> Iterator[Chunk]:
    """Pairs from two line-aligned plain-text files, one sentence per line, taken as they are
    (`paths` maps each language to its file). Unequal line counts are a `DataError` naming both
    files and their counts, raised when the shorter file ends (pairs before it were yielded). A line
    that is not UTF-8 is a `DataError`; with `skipped`, its pair is skipped and counted there."""
    yield from chunked(_aligned_pairs(paths, langs, skipped), chunk_lines)


def moses_chunks(paths: Mapping[str, Path], langs: tuple[str, str], chunk_lines: int,
                 skipped: Counter | None = None) -> Iterator[Chunk]:
    """Pairs from two line-aligned files of Moses-tokenized, XML-escaped text (OpenNMT-py's sample
    `src-train.txt`: "Tom &apos;s house , which ..."), each line unescaped (`unescape_moses`) and
    detokenized with sacremoses' `MosesDetokenizer` for its language. Alignment as `line_chunks`."""
    try:
        from sacremoses import MosesDetokenizer
    except ImportError:
        raise DataError(f"{', '.join(str(p) for p in paths.values())}: Moses-tokenized files need sacremoses, "
                        "which is not installed: pip install sacremoses (or reinstall the project)") from None
    detok_a, detok_b = (MosesDetokenizer(lang=lang).detokenize for lang in langs)

    def clean(detokenize: Callable[..., str], line: str) -> str:
        # unescape token by token (an entity never splits a token), then detokenize without its own
        # unescaping: that would unescape twice ("&amp;lt;" is a literal "&lt;", not "<")
        return detokenize([unescape_moses(token) for token in line.split()], unescape=False)

    for first, side_a, side_b in line_chunks(paths, langs, chunk_lines, skipped):
        yield first, [clean(detok_a, s) for s in side_a], [clean(detok_b, s) for s in side_b]


def unescape_moses(line: str) -> str:
    """`line` with the escapes of Moses' tokenizer undone: `&amp; &lt; &gt; &quot; &apos;` and
    numeric entities (`&#124;` |, `&#91;` [, `&#93;` ], hexadecimal too), in one pass, so
    `&amp;apos;` becomes a literal `&apos;`. A numeric entity that is no character is kept."""
    return _MOSES_ENTITY.sub(_unescape_entity, line)


def _unescape_entity(match: re.Match[str]) -> str:
    name, decimal, hexadecimal = match.groups()
    if name:
        return _MOSES_NAMED[name]
    code = int(decimal) if decimal else int(hexadecimal, 16)
    return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else match.group(0)


def _aligned_pairs(paths: Mapping[str, Path], langs: tuple[str, str], skipped: Counter | None) -> Iterator[Pair]:
    path_a, path_b = (Path(p) for p in _sides(paths, langs, "files"))
    read = iter_lines if skipped is None else iter_lines_or_none
    lines_a, lines_b = (((line,) for line in read(path)) for path in (path_a, path_b))  # (None,): not UTF-8
    for number, (a, b) in enumerate(itertools.zip_longest(lines_a, lines_b), start=1):
        if a is None or b is None:
            count_a = number - 1 + (a is not None) + sum(1 for _ in lines_a)
            count_b = number - 1 + (b is not None) + sum(1 for _ in lines_b)
            raise DataError(f"{path_a} has {count_a} lines but {path_b} has {count_b}: the two files must be "
                            "line-aligned (one sentence per line, pair by pair); fix them or download them again")
        (text_a,), (text_b,) = a, b
        if text_a is None or text_b is None:  # only when skipping (iter_lines raises)
            if skipped is not None:
                skip(skipped, NOT_UTF8, number)
            continue
        yield number, text_a, text_b


def source_chunks(source: SplitSource, folder: Path, langs: tuple[str, str], chunk_lines: int,
                  skipped: Counter | None = None, notes: Counter | None = None) -> Iterator[Chunk]:
    """The pairs of one configured split (`CorpusConfig.source(split)`), its files in `folder`.
    `notes`: what a systems/references reader kept and left out (nmt.data.systems), not drops."""
    if source.systems is not None:
        return systems_chunks(source.systems, folder, langs, chunk_lines, notes)
    if source.format == "tsv":
        return tsv_chunks(folder / source.files["*"], source.columns, langs, chunk_lines, skipped)
    if source.format == "tmx":
        return tmx_chunks(folder / source.files["*"], langs, chunk_lines, skipped)
    paths = {lang: folder / name for lang, name in source.files.items()}
    return (moses_chunks if source.format == "moses" else line_chunks)(paths, langs, chunk_lines, skipped)
