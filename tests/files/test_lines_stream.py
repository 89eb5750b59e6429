"""Streamed line files: `iter_lines` / `iter_tokenized` give what `read_lines` / `read_tokenized`
give, a line at a time, with the same errors (line numbers included)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from nmt.errors import DataError
from nmt.files.lines import iter_lines, read_lines
from nmt.text.tokenizer import iter_tokenized, read_tokenized

CONTENTS = [b"", b"a\n", b"a", b"a\nb", b"a\r\nb\r\n", b"\n\n", b"one\n\nthree\n", "Stra\u00dfe\n".encode()]


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("data", CONTENTS)
def test_iter_lines_gives_the_lines_read_lines_gives(tmp_path: Path, data: bytes, gz: bool) -> None:
    path = tmp_path / "f"
    path.write_bytes(gzip.compress(data) if gz else data)
    assert list(iter_lines(path)) == read_lines(path)


@pytest.mark.parametrize("data", [b"ok\nbad \xff here\n", b"x\x80"])
def test_iter_lines_raises_read_lines_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "f"
    path.write_bytes(data)
    with pytest.raises(DataError) as whole:
        read_lines(path)
    with pytest.raises(DataError) as streamed:
        list(iter_lines(path))
    assert str(streamed.value) == str(whole.value)
    with pytest.raises(DataError, match="file not found"):
        list(iter_lines(tmp_path / "missing"))


def test_iter_tokenized_gives_what_read_tokenized_gives(tmp_path: Path) -> None:
    path = tmp_path / "train.en.tsv"
    path.write_text("A man .\t100\n\t\nhi\t0\n")
    assert list(iter_tokenized(path)) == read_tokenized(path) == [(["A", "man", "."], "100"), ([], ""), (["hi"], "0")]
    path.write_text("A man .\t100\nbroken\t11\n")
    with pytest.raises(DataError, match=r"train.en.tsv:2: malformed tokens line"):
        list(iter_tokenized(path))
