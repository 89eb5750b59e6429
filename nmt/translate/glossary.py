"""Terminology by span swap: a glossary's terms and do-not-translate spans.

A glossary source term found in a sentence is masked as a placeholder number (the placeholder
mechanism of `nmt.translate.spans`), which the model copies like any number, and the placeholder is
restored as the target term; a do-not-translate span is restored as the input wrote it. The file
format, the matching and case rules, the limits and why a swap rather than a constrained search:
docs/serving.md, "Terminology". A sentence without terms is masked exactly as `spans.mask` masks it.

    glossary = Glossary.read(path)                    # once per direction (--glossary FILE)
    terms = for_request(glossary, {"Haus": "home"}, ["ACME"])  # None: nothing to swap
    masked = mask_terms(sentence, terms)              # nmt.translate.termswap: .text to the model
    masked.restore(translation)
"""

from __future__ import annotations

import logging
import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from nmt.errors import NmtError
from nmt.translate.spans import PROTECTED

log = logging.getLogger(__name__)

_LETTERS = r"[\w\u0300-\u036f]+"  # word characters and combining accents (a decomposed `ä`)
TOKEN = re.compile(rf"{_LETTERS}(?:-{_LETTERS})*|[^\w\s]")
MAX_TERM_WORDS = 32  # words and marks in one source term: bounds the matching work per word of text
MAX_REQUEST_TERMS = 1000  # terms and do-not-translate spans in one request
_END = ""  # the trie key under which a node holds the term that ends there (no token is empty)


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
    """Terms of one origin by key; `exact`: matched case-sensitively (do-not-translate spans);
    `trie`: the keys as nested dicts, token by token, a term under `_END` where its key ends."""

    terms: Mapping[tuple[str, ...], Term]
    exact: bool
    origin: str
    trie: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for key, term in self.terms.items():
            node = self.trie
            for token in key:
                node = node.setdefault(token, {})
            node[_END] = term


def _layer(terms: Iterable[tuple[str, Term]], origin: str, exact: bool = False) -> _Layer:
    """A layer from (where it was given, term) pairs; a key given twice is an error naming both."""
    found: dict[tuple[str, ...], tuple[str, Term]] = {}
    for where, term in terms:
        key = _key(term.source, exact)
        if not key:
            raise GlossaryError(f"{where}: the source term {term.source!r} has no word in it")
        if len(key) > MAX_TERM_WORDS:
            raise GlossaryError(f"{where}: the source term has {len(key)} words and marks, more than a term may "
                                f"have ({MAX_TERM_WORDS})")
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
        if len(mapping) > MAX_REQUEST_TERMS:
            raise GlossaryError(f"{origin}: {len(mapping)} terms, more than a request may give ({MAX_REQUEST_TERMS}); "
                                "put a large glossary in a file served with --glossary")
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
        spans = list(spans)
        if len(spans) > MAX_REQUEST_TERMS:
            raise GlossaryError(f"{origin}: {len(spans)} spans, more than a request may give ({MAX_REQUEST_TERMS})")
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
        none cutting into a protected span. Each layer's terms are walked as a trie from every word,
        so the work is at most the words times `MAX_TERM_WORDS`, whatever the terms."""
        found = [(m.start(), m.end(), unicodedata.normalize("NFC", m.group(0))) for m in TOKEN.finditer(sentence)]
        tokens = ([t for _, _, t in found], [t.casefold() for _, _, t in found])  # exact, folded
        candidates = []  # (-length, start, layer, end, term, first word, words)
        for i in range(len(found)):
            for rank, layer in enumerate(self.layers):
                words, node = tokens[0] if layer.exact else tokens[1], cast(Any, layer.trie)
                for j in range(i, len(found)):
                    node = node.get(words[j])
                    if node is None:
                        break
                    term = node.get(_END)
                    start, end = found[i][0], found[j][1]
                    if term is not None and sentence[start - 1:start] != "-" and sentence[end:end + 1] != "-":
                        candidates.append((start - end, start, rank, end, term, i, j + 1))  # `Haus-` of a compound: no
        protected = [(m.start(), m.end()) for m in PROTECTED.finditer(sentence)]
        starts = [s for s, _ in protected]
        taken = bytearray(len(found))
        chosen: list[tuple[int, int, Term]] = []
        for _, start, _, end, term, first, last in sorted(candidates, key=lambda c: c[:3]):
            if any(taken[first:last]):
                continue
            if _cuts(protected, starts, start, end):
                continue
            taken[first:last] = b"\x01" * (last - first)
            chosen.append((start, end, term))
        return sorted(chosen, key=lambda c: c[0])


def _cuts(protected: list[tuple[int, int]], starts: list[int], start: int, end: int) -> bool:
    """Whether [start, end) cuts into a protected span (overlaps one without holding it whole). The
    spans are disjoint and in order: only those from the last one starting before `end` back to
    the first one ending after `start` can overlap."""
    q = bisect_left(starts, end) - 1
    while q >= 0 and protected[q][1] > start:
        if not (start <= protected[q][0] and protected[q][1] <= end):
            return True
        q -= 1
    return False


def for_request(base: Glossary | None, glossary: object = None, keep: Sequence[str] | None = None) -> Glossary | None:
    """A request's terminology: its glossary (a mapping) over `base`, its do-not-translate spans on
    top; None when there is nothing to swap (the unconstrained path)."""
    out = base
    if glossary:
        out = Glossary.from_mapping(glossary).over(base)
    if keep:
        out = (out or Glossary(())).keeping(keep)
    return out if out is not None and out.layers else None
