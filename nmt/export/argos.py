"""`nmt export-argos --model models/ct2 --out de_en.argosmodel`: the model as an Argos Translate package.

An `.argosmodel` is what Argos Translate installs (`argostranslate.package.install_from_path`, `argospm`) and
LibreTranslate serves: a zip of one folder `translate-SRC_TGT-VERSION/` with `metadata.json` (codes, names,
versions), `model/` (a CTranslate2 model: the ctranslate2 stage's, its config set to append </s> to the
source, as our model was trained), `sentencepiece.model` (Argos encodes and decodes text with it),
`spacy/` (a blank spaCy pipeline of the source language, which Argos splits sentences with when
ARGOS_CHUNK_TYPE=SPACY, offline; by default it fetches its MiniSBD splitter once), `README.md` (the model
card: the committed scores, the training data and licences, from the ONNX package of the same model) and
`nmt.json` (the SHA-256 of every file). Torch-free: it reads the verified CTranslate2 folder.
Exit status 0 on success; 1 with one line saying what was wrong.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nmt.command import run_reporting_errors, setup_logging
from nmt.errors import DataError
from nmt.export.modelcard import RECORD, check_portable, model_card, package_card, write_record
from nmt.files.atomic import atomic_open, atomic_write_text
from nmt.runtime.ct2 import FORMAT, FORMAT_VERSION, RECONVERT
from nmt.runtime.package import read_card, verify_files
from nmt.text.languages import name as language_name
from nmt.text.spm import FILE as SP_FILE

ARGOS_VERSION = "1.11"  # the package format of the argostranslate release the tests install
USAGE = """import argostranslate.package, argostranslate.translate
argostranslate.package.install_from_path("{path}")
print(argostranslate.translate.translate("{example}", "{src}", "{tgt}"))"""


def folder_name(src: str, tgt: str, version: str) -> str:
    return f"translate-{src}_{tgt}-{version.replace('.', '_')}"


def write_package_folder(ct2_dir: Path, root: Path, version: str, card: dict[str, Any] | None) -> Path:
    """The package folder under `root` from the verified CTranslate2 folder `ct2_dir`; returns it."""
    ct2 = read_card(ct2_dir, FORMAT, FORMAT_VERSION, "a CTranslate2 model of nmt (models/ct2)", RECONVERT)
    paths = verify_files(ct2_dir, ct2.get("files", {}), RECONVERT)
    tokenizer = json.loads(paths[ct2["tokenizer"]].read_text(encoding="utf-8"))
    check_portable((tokenizer.get("subword") or {}).get("kind") == "sentencepiece", bool(tokenizer.get("lowercase")),
                   "an Argos Translate package")
    src, tgt = ct2["languages"]["src"], ct2["languages"]["tgt"]
    out = root / folder_name(src, tgt, version)
    shutil.copytree(ct2_dir / ct2["model"]["dir"], out / "model")
    config_path = out / "model" / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["add_source_eos"] = True  # Argos passes the pieces alone; our model reads them with </s>
    atomic_write_text(config_path, json.dumps(config, indent=2) + "\n")
    shutil.copy2(paths[SP_FILE], out / SP_FILE)
    _spacy_splitter(src, out / "spacy")
    metadata = {"package_version": version, "argos_version": ARGOS_VERSION, "from_code": src,
                "from_name": language_name(src), "to_code": tgt, "to_name": language_name(tgt), "type": "translate",
                "links": []}
    atomic_write_text(out / "metadata.json", json.dumps(metadata, indent=2, ensure_ascii=False) + "\n")
    usage = USAGE.format(path=f"{out.name}.argosmodel", example="...", src=src, tgt=tgt)
    readme = (model_card(card, f"nmt-{src}-{tgt}", "argostranslate", usage) if card is not None
              else f"# nmt {src}-{tgt}\n\nNo ONNX package card was given, so no scores are stated here.\n")
    atomic_write_text(out / "README.md", readme)
    write_record(out, "argos-translate", {"model_sha256": ct2["source"]["model_sha256"], "ctranslate2_card":
                                          ct2.get("card_sha256"), "metadata": metadata})
    return out


def _spacy_splitter(lang: str, out: Path) -> None:
    """spacy.blank(lang) saved to `out`: Argos adds its rule-based sentencizer (ARGOS_CHUNK_TYPE=SPACY)."""
    from nmt.text.tokenizer import import_spacy

    import_spacy().blank(lang).to_disk(out)


def write_zip(folder: Path, out: Path) -> None:
    """`folder` (and everything under it) zipped into `out`, whole or not at all; fixed dates, sorted names."""
    with atomic_open(out, "wb", encoding=None) as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(path.relative_to(folder.parent).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
                info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o644 << 16
                zf.writestr(info, path.read_bytes())


def verify_package(path: Path) -> dict[str, Any]:
    """The `nmt.json` record of an .argosmodel, every file it lists checked; a DataError when one was changed."""
    import hashlib

    remedy = "export it again (nmt export-argos)"
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            record_name = next((n for n in names if n.count("/") == 1 and n.endswith("/" + RECORD)), None)
            if record_name is None:
                raise DataError(f"{path}: no {RECORD} in the package: not one nmt exported; {remedy}")
            top = record_name.split("/")[0]
            record = json.loads(zf.read(record_name))
            for name, digest in record.get("files", {}).items():
                member = f"{top}/{name}"
                if member not in names or hashlib.sha256(zf.read(member)).hexdigest() != digest:
                    raise DataError(f"{path}: {name} was changed or removed after export; not used. {remedy}")
    except (OSError, zipfile.BadZipFile, ValueError) as exc:
        raise DataError(f"{path}: not a readable .argosmodel ({exc}); {remedy}") from None
    return record


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nmt export-argos", description=__doc__.split("\n\n")[1].replace("\n", " "),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, required=True, help="the CTranslate2 folder of a SentencePiece model "
                                                              "(models/ct2, the ctranslate2 stage's)")
    p.add_argument("--out", type=Path, help="the package to write (default: translate-SRC_TGT-VERSION.argosmodel "
                                            "in the current folder); replaced whole")
    p.add_argument("--package", type=Path, help="the ONNX package of the same model file, for the card's scores and "
                                                "training data (default: the onnx folder beside --model, if any)")
    p.add_argument("--version", default="1.0", help="the package's version (metadata.json; default: 1.0)")
    p.add_argument("--verify", action="store_true", help="check an exported --out package's files instead")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p


def export_argos(args: argparse.Namespace) -> str:
    if args.verify:
        if args.out is None:
            raise DataError("--verify needs --out PACKAGE.argosmodel")
        record = verify_package(args.out)
        return f"{args.out}: every file as exported ({len(record['files'])} files)"
    if not (args.model / "model.json").is_file():
        raise DataError(f"--model {args.model}: no model.json: pass the CTranslate2 folder the ctranslate2 stage "
                        "writes (models/ct2), of a model trained with vocab.kind: sentencepiece")
    ct2 = read_card(args.model, FORMAT, FORMAT_VERSION, "a CTranslate2 model of nmt (models/ct2)", RECONVERT)
    package = args.package or args.model.parent / "onnx"
    card = package_card(package, ct2["source"]["model_sha256"]) if args.package or package.is_dir() else None
    with tempfile.TemporaryDirectory(prefix="argos-") as tmp:
        folder = write_package_folder(args.model, Path(tmp), args.version, card)
        out = args.out or Path(f"{folder.name}.argosmodel")
        write_zip(folder, out)
    verify_package(out)
    return f"Argos Translate package written to {out}"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    return run_reporting_errors("export-argos", lambda: print(export_argos(args)))


if __name__ == "__main__":
    sys.exit(main())
