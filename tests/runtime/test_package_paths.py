"""A card names files inside its own folder only: `..`, absolute and drive paths, and links leading
out are one-line `DataError`s, raised before any such file is opened or hashed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from nmt.errors import DataError
from nmt.files.digest import sha256_file
from nmt.runtime import package as package_module
from nmt.runtime.ct2 import Ct2Translator
from nmt.runtime.package import load_package, package_file

OUTSIDE = ["../x", "/etc/passwd", "a/../../x", "C:\\x", "C:x", "..\\x", "\\\\server\\share\\x"]


@pytest.fixture
def pkg(package: Path, tmp_path: Path) -> Path:
    """A copy of the session's ONNX package, with a file `x` beside it (outside it)."""
    out = tmp_path / "pkg"
    shutil.copytree(package, out)
    (tmp_path / "x").write_text((out / "src.vocab").read_text())
    return out


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files `verify_files` hashes, in order."""
    seen: list[Path] = []
    monkeypatch.setattr(package_module, "sha256_file", lambda p: seen.append(Path(p)) or sha256_file(p))
    return seen


def edit_card(root: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    card = json.loads((root / "model.json").read_text())
    edit(card)
    (root / "model.json").write_text(json.dumps(card))


def refused(call: Callable[[], Any], card: Path, entry: str) -> str:
    """The one-line error of `call`, checked to name `card`, `entry` and the remedy."""
    with pytest.raises(DataError) as exc:
        call()
    message = str(exc.value)
    assert message.startswith(f"{card}: {entry} names a file outside the package ("), message
    assert "re-export it" in message or "convert it again" in message
    assert "\n" not in message
    return message


@pytest.mark.parametrize("name", OUTSIDE)
def test_a_listed_file_outside_the_package_is_refused_before_hashing(pkg: Path, hashed: list[Path],
                                                                     name: str) -> None:
    edit_card(pkg, lambda card: card.update(files={name: "0" * 64, **card["files"]}))
    refused(lambda: load_package(pkg), pkg / "model.json", f"files[{name!r}]")
    assert hashed == []


@pytest.mark.parametrize(("entry", "where"), [
    ("vocab.src.file", ("vocab", "src", "file")), ("tokenizer", ("tokenizer",)),
    ("graphs.fp32.encoder.file", ("graphs", "fp32", "encoder", "file")),
    ("graphs.int8.decoder_step.file", ("graphs", "int8", "decoder_step", "file"))])
@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/../../x", "C:\\x"])
def test_a_named_file_outside_the_package_is_refused_before_any_is_read(
        pkg: Path, hashed: list[Path], monkeypatch: pytest.MonkeyPatch, entry: str, where: tuple[str, ...],
        name: str) -> None:
    def point(card: dict[str, Any]) -> None:
        parent = card
        for key in where[:-1]:
            parent = parent[key]
        parent[where[-1]] = name

    edit_card(pkg, point)
    read_text = Path.read_text

    def inside_only(path: Path, *args: Any, **kwargs: Any) -> str:
        assert path.resolve().is_relative_to(pkg.resolve()), f"read {path}"
        return read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", inside_only)
    monkeypatch.setattr(package_module.Vocabulary, "load", lambda path, *a: pytest.fail(f"read {path}"))
    refused(lambda: load_package(pkg), pkg / "model.json", entry)
    assert hashed == []


def test_a_link_leading_out_is_refused_and_links_inside_are_not(pkg: Path, tmp_path: Path) -> None:
    (pkg / "tgt.vocab").unlink()
    (pkg / "tgt.vocab").symlink_to(tmp_path / "x")  # same text, so its SHA-256 matches the card's
    message = refused(lambda: load_package(pkg), pkg / "model.json", "vocab.tgt.file")
    assert f"leads to {(tmp_path / 'x').resolve()} through a link" in message

    (pkg / "tgt.vocab").unlink()
    (pkg / "tgt.vocab").symlink_to("src.vocab")  # a link inside the package is fine (the copy model's are joint)
    (tmp_path / "current").symlink_to(pkg, target_is_directory=True)  # so is a link to the whole package
    for root in (pkg, tmp_path / "current"):
        loaded = load_package(root)
        assert loaded.graph("encoder") == root / "encoder.onnx"


def test_a_card_edited_after_loading_cannot_send_a_graph_outside(pkg: Path) -> None:
    loaded = load_package(pkg)
    loaded.card["graphs"]["int8"]["encoder"]["file"] = "../x"
    refused(lambda: loaded.graph("encoder", int8=True), pkg / "model.json", "graphs.int8.encoder.file")


def test_package_file_accepts_names_inside_and_refuses_the_rest(tmp_path: Path) -> None:
    card = tmp_path / "model.json"
    for name in ("model.bin", "ctranslate2/model.bin", "a/b/c.txt", "./x"):
        assert package_file(tmp_path, name, card, "files") == tmp_path / name
    for name in OUTSIDE:
        refused(lambda name=name: package_file(tmp_path, name, card, "files"), card, "files")
    for name in ("", None, 3):
        with pytest.raises(DataError, match=r"model\.json: files is .*, not a file name; re-export it"):
            package_file(tmp_path, name, card, "files")


@pytest.fixture
def ct2_dir(pkg: Path, tmp_path: Path) -> Path:
    """A CTranslate2 folder's text side and card (no model: each test's error comes before it is opened)."""
    out = tmp_path / "ct2"
    out.mkdir()
    for name in ("src.vocab", "tgt.vocab", "tokenizer.json"):
        shutil.copy(pkg / name, out / name)
    (out / "ctranslate2").mkdir()
    files = {name: sha256_file(out / name) for name in ("src.vocab", "tgt.vocab", "tokenizer.json")}
    card = {"format": "nmt-ctranslate2", "format_version": 1, "files": files, "tokenizer": "tokenizer.json",
            "model": {"dir": "ctranslate2", "max_len": 64}, "languages": {"src": "de", "tgt": "en"},
            "decoding": {"beam_size": 1, "length_penalty": 1.0}}
    (out / "model.json").write_text(json.dumps(card))
    return out


@pytest.mark.parametrize(("entry", "where"), [("tokenizer", ("tokenizer",)), ("model.dir", ("model", "dir"))])
@pytest.mark.parametrize("name", ["../x", "/", "a/../../x", "C:\\x"])
def test_ct2_card_names_inside_its_folder_only(ct2_dir: Path, hashed: list[Path], entry: str,
                                               where: tuple[str, ...], name: str) -> None:
    def point(card: dict[str, Any]) -> None:
        (card[where[0]] if len(where) == 2 else card)[where[-1]] = name

    edit_card(ct2_dir, point)
    refused(lambda: Ct2Translator.from_dir(ct2_dir), ct2_dir / "model.json", entry)
    assert hashed == []


def test_ct2_listed_files_links_and_the_merges_file_stay_inside(ct2_dir: Path, pkg: Path,
                                                                hashed: list[Path]) -> None:
    edit_card(ct2_dir, lambda card: card.update(files={"../x": "0" * 64, **card["files"]}))
    refused(lambda: Ct2Translator.from_dir(ct2_dir), ct2_dir / "model.json", "files['../x']")
    assert hashed == []

    tokenizer = json.loads((ct2_dir / "tokenizer.json").read_text())
    tokenizer["subword"] = {"file": "../bpe.merges"}
    (ct2_dir / "tokenizer.json").write_text(json.dumps(tokenizer))
    edit_card(ct2_dir, lambda card: card.update(files={k: sha256_file(ct2_dir / k)
                                                       for k in card["files"] if k != "../x"}))
    refused(lambda: Ct2Translator.from_dir(ct2_dir), ct2_dir / "tokenizer.json", "subword.file")

    (ct2_dir / "src.vocab").unlink()
    (ct2_dir / "src.vocab").symlink_to(pkg / "src.vocab")  # the same text, in another folder
    message = refused(lambda: Ct2Translator.from_dir(ct2_dir), ct2_dir / "model.json", "files['src.vocab']")
    assert "through a link" in message
