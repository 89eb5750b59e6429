"""Terminology by span swap (issue 42, item 3): a glossary's terms and do-not-translate spans.

Why a swap and not constrained decoding: the exported decoder's step graph returns only the 2K
best next tokens per row (a TopK inside the ONNX graph), so our beam search cannot score a
constraint token outside them without an export format change. Terms therefore ride the
placeholder mechanism of `nmt.serve.spans`: a glossary source term found in a sentence is
masked as a placeholder number, which the model copies like any number, and the placeholder is
restored as the target term; a do-not-translate span is restored as the input wrote it. No
retraining, and a sentence without terms is masked exactly as `spans.mask` masks it, so the
unconstrained path is unchanged. A dropped term placeholder is appended at the end, as spans are.

- A glossary file is TSV, one term a line: `source term<TAB>target term[<TAB>more target forms]`
  (the first target is written; more forms, e.g. a German term's inflections, are what a check
  accepts as the term); blank lines and `#` comments skipped; an error names the file and line,
  and a source term given twice is an error. A request's glossary is a mapping
  `{"source term": "target" or ["target", more forms]}`, laid over the file's (`over`: the
  request wins); its do-not-translate spans are a list of strings (`keeping`).
- Matching is on words (letters and digits, hyphenated compounds one word, so `Haus` never
  matches in `Haustür` or `Haus-Tür`; each punctuation mark a word of its own; whitespace between
  words free): glossary terms case-insensitively after Unicode NFC and case folding (`Straße`,
  `STRASSE`, `strasse` are one term; umlauts as any letter), do-not-translate spans
  case-sensitively (`Apple` is a name, `apple` a fruit). The longest match wins (characters),
  then the earlier one; matches never overlap; at equal spans a do-not-translate span wins, then
  the request's term, then the file's. A term never cuts into a URL, address, number or emoji
  (`nmt.serve.spans.PROTECTED`); a term that holds such a span whole (`Windows 10`) takes it in.
- Case: the target is written as the glossary writes it (a German noun keeps its capital, a
  lower-case target is not lowered further), except that an all-lower-case target whose
  placeholder opens the translation is capitalised (the capital of a sentence start, whichever
  language), and a source term written in capitals (`HAUS`, not the glossary's own spelling)
  gives the target in capitals. Where the term stands in the output decides, not whether the
  source term opened the sentence: the model may move it (`Schnell lief er` -> `He ran 1`).

    glossary = Glossary.read(path)                    # once per direction (--glossary FILE)
    terms = for_request(glossary, {"Haus": "home"}, ["ACME"])  # None: nothing to swap
    masked = mask_terms(sentence, terms)              # a `Masked`: .text to the model
    masked.restore(translation)
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nmt.errors import NmtError
from nmt.serve.spans import PLACEHOLDER, PROTECTED, Masked, mask

log = logging.getLogger(__name__)

_LETTERS = r"[\w\u0300-\u036f]+"  # word characters and combining accents (a decomposed `ä`)
TOKEN = re.compile(rf"{_LETTERS}(?:-{_LETTERS})*|[^\w\s]")
_JOIN_BEFORE = re.compile(r"[\w.,:/%+\-]$")  # would run into a placeholder written after it
_JOIN_AFTER = re.compile(r"[\w%]|[.,:/+\-][\w]")  # would run into a placeholder written before it
_WORDISH = re.compile(r"\w")


class GlossaryError(NmtError):
    """A glossary file, a request's glossary or its do-not-translate list is malformed."""


@dataclass(frozen=True)
class Term:
    """A glossary entry. `forms`: more target forms (accepted by checks, never written); `keep`:
    a do-not-translate span, restored as the input has it."""

    source: str
    target: str
    forms: tuple[str, ...] = ()
    keep: bool = False

    @property
    def targets(self) -> tuple[str, ...]:
        return (self.target, *self.forms)


def _key(text: str, exact: bool) -> tuple[str, ...]:
    """`text`'s words and punctuation marks as terms are matched: NFC, case-folded unless `exact`."""
    words = (unicodedata.normalize("NFC", t) for t in TOKEN.findall(text))
    return tuple(words if exact else (t.casefold() for t in words))


@dataclass(frozen=True)
class _Layer:
    """Terms of one origin by key; `exact`: matched case-sensitively (do-not-translate spans)."""

    terms: Mapping[tuple[str, ...], Term]
    exact: bool
    origin: str


def _layer(terms: Iterable[tuple[str, Term]], origin: str, exact: bool = False) -> _Layer:
    """A layer from (where it was given, term) pairs; a key given twice is an error naming both."""
    found: dict[tuple[str, ...], tuple[str, Term]] = {}
    for where, term in terms:
        key = _key(term.source, exact)
        if not key:
            raise GlossaryError(f"{where}: the source term {term.source!r} has no word in it")
        if not term.keep and not term.target.strip():
            raise GlossaryError(f"{where}: the source term {term.source!r} has an empty target")
        if key in found and not term.keep:
            raise GlossaryError(f"{where}: the source term {term.source!r} is given twice (also {found[key][0]})")
        found[key] = (where, term)
    return _Layer({k: t for k, (_, t) in found.items()}, exact, origin)


class Glossary:
    """A direction's terminology: layers of terms, the first layer's term winning a key they share."""

    def __init__(self, layers: Sequence[_Layer]) -> None:
        self.layers = tuple(layer for layer in layers if layer.terms)
        self._longest = max((len(k) for layer in self.layers for k in layer.terms), default=0)

    @classmethod
    def read(cls, path: Path) -> Glossary:
        """A glossary file (the module's TSV format); errors name the file and line."""
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise GlossaryError(f"glossary {path}: cannot read it ({exc.strerror})") from None
        entries = []
        for number, line in enumerate(raw.removeprefix(b"\xef\xbb\xbf").split(b"\n"), start=1):
            where = f"{path}:{number}"
            try:
                text = line.decode("utf-8").rstrip("\r")
            except UnicodeDecodeError:
                raise GlossaryError(f"{where}: not UTF-8 text") from None
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            fields = [f.strip() for f in text.split("\t")]
            while fields and not fields[-1]:
                fields.pop()
            if len(fields) < 2 or not all(fields):
                raise GlossaryError(f"{where}: expected `source term<TAB>target term[<TAB>more forms]`, got {text!r}")
            entries.append((where, Term(fields[0], fields[1], tuple(fields[2:]))))
        glossary = cls([_layer(entries, str(path))])
        if not len(glossary):
            log.warning("glossary %s has no terms", path)
        log.info("glossary %s: %d terms", path, len(glossary))
        return glossary

    @classmethod
    def from_mapping(cls, mapping: object, origin: str = "glossary") -> Glossary:
        """A request's glossary: `{"source term": "target term" or ["target term", more forms]}`."""
        if not isinstance(mapping, Mapping):
            raise GlossaryError(f"{origin}: expected an object of source term -> target term(s)")
        entries = []
        for source, targets in mapping.items():
            where = f"{origin}[{source!r}]"
            if isinstance(targets, str):
                targets = [targets]
            if not (isinstance(source, str) and isinstance(targets, list) and targets
                    and all(isinstance(t, str) and t.strip() for t in targets)):
                raise GlossaryError(f"{where}: expected a target term (a string) or a list of its forms")
            entries.append((where, Term(source.strip(), targets[0].strip(), tuple(t.strip() for t in targets[1:]))))
        return cls([_layer(entries, origin)])

    def over(self, base: Glossary | None) -> Glossary:
        """This glossary laid over `base`: its terms win where both have one."""
        return Glossary(self.layers + (base.layers if base is not None else ()))

    def keeping(self, spans: Iterable[str], origin: str = "do_not_translate") -> Glossary:
        """This glossary with do-not-translate spans on top (matched case-sensitively)."""
        if isinstance(spans, str):
            raise GlossaryError(f"{origin}: expected a list of strings")
        entries = []
        for k, span in enumerate(spans):
            if not isinstance(span, str) or not span.strip():
                raise GlossaryError(f"{origin}[{k}]: expected a non-empty string")
            entries.append((f"{origin}[{k}]", Term(span.strip(), span.strip(), keep=True)))
        return Glossary((_layer(entries, origin, exact=True), *self.layers))

    def lookup(self, source: str) -> Term | None:
        """The term a source text is matched as (the first layer's), if any."""
        for layer in self.layers:
            term = layer.terms.get(_key(source, layer.exact))
            if term is not None:
                return term
        return None

    @property
    def terms(self) -> list[Term]:
        """Every term in effect (one per key, the winning layer's)."""
        seen: set[tuple[bool, tuple[str, ...]]] = set()
        out = []
        for layer in self.layers:
            for key, term in layer.terms.items():
                if (layer.exact, key) not in seen:
                    seen.add((layer.exact, key))
                    out.append(term)
        return out

    def __len__(self) -> int:
        return len(self.terms)

    def __bool__(self) -> bool:  # without counting the terms (a file's may be many)
        return bool(self.layers)

    def find(self, sentence: str) -> list[tuple[int, int, Term]]:
        """(start, end, term) of every match in `sentence`, in order: longest first, no overlaps,
        none cutting into a protected span."""
        found = [(m.start(), m.end(), unicodedata.normalize("NFC", m.group(0))) for m in TOKEN.finditer(sentence)]
        folded = [t.casefold() for _, _, t in found]
        candidates = []  # (-length, start, layer, end, term)
        for i in range(len(found)):
            for n in range(1, min(self._longest, len(found) - i) + 1):
                start, end = found[i][0], found[i + n - 1][1]
                if sentence[start - 1:start] == "-" or sentence[end:end + 1] == "-":
                    continue  # `Haus-` of `Haus- und Gartenarbeit` is part of a compound
                for rank, layer in enumerate(self.layers):
                    key = tuple(t for _, _, t in found[i:i + n]) if layer.exact else tuple(folded[i:i + n])
                    term = layer.terms.get(key)
                    if term is not None:
                        candidates.append((start - end, start, rank, end, term))
        protected = [(m.start(), m.end()) for m in PROTECTED.finditer(sentence)]
        chosen: list[tuple[int, int, Term]] = []
        for _, start, _, end, term in sorted(candidates, key=lambda c: c[:3]):
            if any(s < end and start < e for s, e, _ in chosen):
                continue
            if any(s < end and start < e and not (start <= s and e <= end) for s, e in protected):
                continue
            chosen.append((start, end, term))
        return sorted(chosen, key=lambda c: c[0])


def _written(term: Term, source_text: str) -> tuple[str, str]:
    """What a matched term's placeholder becomes: (anywhere, where it opens the translation)."""
    if term.keep:
        return source_text, source_text
    target = term.target
    letters = [c for c in source_text if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters) and not term.source.isupper():
        target = target.upper()
    initial = target[:1].upper() + target[1:] if target.islower() else target
    return target, initial


@dataclass(frozen=True)
class TermMasked(Masked):
    """A `Masked` with glossary or do-not-translate spans: `initial[k]` is span k's form where its
    placeholder opens the translation (a capital); `terms`: the terms matched, in order."""

    initial: tuple[str, ...] = ()
    terms: tuple[Term, ...] = ()

    def restore(self, translation: str) -> str:
        first = PLACEHOLDER.search(translation)
        if first and not _WORDISH.search(translation[:first.start()]):
            k = int(first.group(0))
            if 1 <= k <= len(self.spans) and self.initial[k - 1] != self.spans[k - 1]:
                spans = (*self.spans[:k - 1], self.initial[k - 1], *self.spans[k:])
                return Masked(self.text, spans).restore(translation)
        return super().restore(translation)


def mask_terms(sentence: str, glossary: Glossary | None = None, keep: Iterable[str] = ()) -> Masked:
    """`sentence` with its terms, do-not-translate spans (`keep`, or those in `glossary`) and
    protected spans (`nmt.serve.spans`) replaced by placeholder numbers, numbered in order; with
    none of the first two in it, exactly `spans.mask(sentence)`."""
    keep = list(keep)
    if keep:
        glossary = (glossary or Glossary(())).keeping(keep)
    matches = glossary.find(sentence) if glossary is not None else []
    if not matches:
        return mask(sentence)
    pieces: list[tuple[int, int, Term | None]] = list(matches)
    pieces += [(m.start(), m.end(), None) for m in PROTECTED.finditer(sentence)
               if not any(s <= m.start() and m.end() <= e for s, e, _ in matches)]
    out: list[str] = []
    spans: list[str] = []
    initial: list[str] = []
    last = 0
    for start, end, term in sorted(pieces, key=lambda p: p[0]):
        out.append(sentence[last:start])
        text = sentence[start:end]
        span, first = (text, text) if term is None else _written(term, text)
        spans.append(span)
        initial.append(first)
        number = str(len(spans))
        if term is not None:  # set off from what would run into it (a protected span is written as mask() does)
            before, after = "".join(out), sentence[end:]
            number = (" " if _JOIN_BEFORE.search(before) else "") + number + (" " if _JOIN_AFTER.match(after) else "")
        out.append(number)
        last = end
    out.append(sentence[last:])
    return TermMasked("".join(out), tuple(spans), tuple(initial), tuple(t for _, _, t in matches))


def for_request(base: Glossary | None, glossary: object = None, keep: Sequence[str] | None = None) -> Glossary | None:
    """A request's terminology: its glossary (a mapping) over `base`, its do-not-translate spans on
    top; None when there is nothing to swap (the unconstrained path)."""
    out = base
    if glossary:
        out = Glossary.from_mapping(glossary).over(base)
    if keep:
        out = (out or Glossary(())).keeping(keep)
    return out if out is not None and out.layers else None
