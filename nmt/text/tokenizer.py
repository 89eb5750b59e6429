"""spaCy rule-based tokenization and the tokens file format (torch-free).

`spacy.blank(lang)` gives the same rule-based tokenizer as the `*_core_*_sm` models with
nothing to download. A tokens file (`split.lang.tsv`, written by the tokenize stage) has one
sentence per line: the tokens joined by single spaces, a TAB, then one flag per token ("1"
when spaCy saw whitespace after the token, "0" when not), so `restore_text()` gives back the
normalised input exactly.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType

from nmt.errors import DataError
from nmt.files.lines import iter_lines, read_lines

SUFFIX = ".tsv"
Tokenized = tuple[list[str], str]  # (tokens, trailing-whitespace flags "1"/"0" per token)


def normalize(text: str) -> str:
    """Collapse every run of whitespace (tabs, NBSP, ...) to one space; strip the ends."""
    return " ".join(text.split())


def import_spacy() -> ModuleType:
    """spaCy, imported without torch. Its ML library, thinc, imports torch at import time when
    torch is installed: in a torch-free runtime process (ONNX Runtime, CTranslate2) that costs a
    second or more, hundreds of MB, and a second OpenMP runtime beside the engine's. The rule-based
    tokenizer needs none of it, so while thinc loads in a process that has not imported torch,
    torch is hidden from it; a later `import torch` works as usual."""
    if "torch" in sys.modules or "thinc" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # makes `import torch` raise ImportError
    try:
        import spacy
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return spacy


def make_tokenizer(lang: str, lowercase: bool) -> Callable[[Iterable[str]], Iterable[Tokenized]]:
    """A function from raw sentences to (tokens, flags), using spacy.blank(lang)."""
    tokenizer = import_spacy().blank(lang).tokenizer

    def tokenize(texts: Iterable[str]) -> Iterable[Tokenized]:
        for doc in tokenizer.pipe((normalize(t) for t in texts), batch_size=1000):
            tokens = [t.lower_ if lowercase else t.text for t in doc]
            yield tokens, "".join("1" if t.whitespace_ else "0" for t in doc)

    return tokenize


def restore_text(tokens: list[str], flags: str) -> str:
    """Inverse of tokenization: tokens joined with the whitespace spaCy recorded."""
    return "".join(tok + (" " if f == "1" else "") for tok, f in zip(tokens, flags)).rstrip()


def format_line(tokens: list[str], flags: str) -> str:
    return " ".join(tokens) + "\t" + flags


def read_tokenized(path: Path) -> list[Tokenized]:
    """Read a `.tsv` tokens file back into (tokens, flags) pairs."""
    return [parse_tokens_line(line, path, lineno) for lineno, line in enumerate(read_lines(path), start=1)]


def iter_tokenized(path: Path) -> Iterator[Tokenized]:
    """`read_tokenized`, a line at a time: for passes over a whole training split (binarizing it,
    learning the detokenizer) whose memory must not grow with the corpus."""
    for lineno, line in enumerate(iter_lines(path), start=1):
        yield parse_tokens_line(line, path, lineno)


def parse_tokens_line(line: str, path: Path, lineno: int) -> Tokenized:
    """One line of a tokens file as (tokens, flags); `DataError` naming the line when malformed."""
    text, sep, flags = line.partition("\t")
    tokens = text.split(" ") if text else []
    if not sep or len(flags) != len(tokens) or "" in tokens or flags.strip("01"):
        raise DataError(f"{path}:{lineno}: malformed tokens line (expected tokens, TAB, one flag per token); "
                        "delete data/tokens and re-run the tokenize stage")
    return tokens, flags
