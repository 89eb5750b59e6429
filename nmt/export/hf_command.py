"""`nmt export-hf --model models/model.pt --out models/hf`: the model as a transformers MarianMT folder.

The folder loads offline with `MarianMTModel.from_pretrained` and `MarianTokenizer.from_pretrained` (or
`pipeline("translation", model=...)`): config.json, model.safetensors, generation_config.json (the evaluate
stage's beam and length penalty), source.spm / target.spm / vocab.json (the model's SentencePiece model),
and a README.md model card with a `model-index` block of the committed test-set scores, read from the ONNX
package of the same model file (`--package`, default: the `onnx` folder beside it). Before the folder
replaces --out, transformers loads it back and it is checked on --check-lines validation sentences: the
tokenizer must give our source ids and the model our log-probabilities (teacher-forced on our greedy output,
within 1e-4). Exit status 0 on success; 1 with one line saying what was wrong.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nmt.command import run_reporting_errors, setup_logging
from nmt.errors import DataError

log = logging.getLogger(__name__)
DESCRIPTION = __doc__.split("\n\n")[0].replace("\n", " ")
TOLERANCE = 1e-4  # largest |log-prob difference| allowed between our model and MarianMT (float summation order)
KIND = "transformers-marian"  # nmt.json's "kind" in the folder
USAGE = """from transformers import MarianMTModel, MarianTokenizer
tokenizer = MarianTokenizer.from_pretrained("{path}")
model = MarianMTModel.from_pretrained("{path}")
batch = tokenizer(["{example}"], return_tensors="pt", padding=True)
print(tokenizer.batch_decode(model.generate(**batch), skip_special_tokens=True))"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nmt export-hf", description=__doc__.split("\n\n")[1].replace("\n", " "),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", type=Path, help="final model file (models/model.pt) of a model trained "
                                              "with vocab.kind: sentencepiece")
    p.add_argument("--out", type=Path, required=True, help="folder to write (replaced whole, only once checked)")
    p.add_argument("--package", type=Path, help="the ONNX package of the same model file, for the card's scores and "
                                                "training data (default: the onnx folder beside --model)")
    p.add_argument("--data", type=Path, default=Path("data/validated"),
                   help="validated corpus with the check sentences (default: data/validated)")
    p.add_argument("--split", default="val", help="split of --data to check on (default: val, a dev set)")
    p.add_argument("--check-lines", type=int, default=32, help="sentences checked (default: 32)")
    p.add_argument("--name", help="the model's name in the card (default: nmt-SRC-TGT)")
    p.add_argument("--verify", action="store_true", help="check an exported --out folder's files instead "
                                                         "(SHA-256 against its nmt.json)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    return p


def check_folder(out: Path, translator: Any, lines: list[str]) -> dict[str, Any]:
    """Load `out` with transformers and compare it with `translator` on `lines`; a DataError on a mismatch."""
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(str(out), local_files_only=True)
    model = MarianMTModel.from_pretrained(str(out), local_files_only=True).eval()
    worst = 0.0
    for i, line in enumerate(lines):
        ours = translator.source_ids(next(iter(translator.tokenize([line])))[0])
        theirs = tokenizer(line)["input_ids"]
        if theirs != ours:
            raise DataError(f"check line {i + 1}: MarianTokenizer gives ids {theirs[:8]}..., ours {ours[:8]}...; "
                            "the folder is not written")
        greedy = translator.decode_batch([ours])[0]
        src, tgt = torch.tensor([ours]), torch.tensor([[2, *greedy]])
        with torch.no_grad():
            mine = translator.model(src, tgt).log_softmax(-1)
            hf = model(input_ids=src, decoder_input_ids=tgt).logits.log_softmax(-1)
        worst = max(worst, float((mine - hf).abs().max()))
    if worst > TOLERANCE:
        raise DataError(f"MarianMT's log-probabilities differ from ours by {worst:.2e} (> {TOLERANCE:g}) on the check "
                        "lines; the folder is not written")
    return {"lines": len(lines), "max_logprob_diff": worst, "tolerance": TOLERANCE}


def export_hf(args: argparse.Namespace) -> Path:
    from nmt.config.evaluate import Decoding
    from nmt.decode.translator import Translator
    from nmt.export.marian import FILES, check_exportable, write_marian
    from nmt.export.modelcard import model_card, package_card, verify_export, write_record
    from nmt.files.atomic import atomic_write_text, staged_dir
    from nmt.files.digest import sha256_file
    from nmt.files.lines import read_lines, split_file

    if args.verify:
        verify_export(args.out, KIND, "export it again with `nmt export-hf`")
        return args.out
    if args.model is None or not args.model.is_file():
        raise DataError(f"--model {args.model or ''}: not found; pass a final model file (models/model.pt)"
                        if args.model else "--model is required: the final model file (models/model.pt)")
    if args.check_lines < 1:
        raise DataError("--check-lines must be >= 1")
    package = args.package or args.model.parent / "onnx"
    card = package_card(package, sha256_file(args.model))
    decoding = card["decoding"]
    translator = Translator.from_file(args.model, Decoding(beam_size=1))
    vocabs = translator.vocabs
    sp = check_exportable(vocabs, translator.model, bool(translator.text_settings.get("lowercase")), "nmt export-hf")
    check_file = split_file(args.data, args.split, vocabs.src_lang)
    if not check_file.is_file():
        raise DataError(f"--data {args.data}: no {check_file.name} for --split {args.split}; pass the validated "
                        "corpus (data/validated) and one of its splits")
    lines = [s for s in read_lines(check_file) if s.strip()][:args.check_lines]
    name = args.name or f"nmt-{vocabs.src_lang}-{vocabs.tgt_lang}"
    with staged_dir(args.out) as tmp:
        generation = {"num_beams": decoding["beam_size"], "length_penalty": decoding["alpha"],
                      "max_length": translator.model.cfg.max_len}
        write_marian(translator.model, vocabs, sp, tmp, generation)
        usage = USAGE.format(path=args.out, example=lines[0].replace('"', '\\"'))
        atomic_write_text(tmp / "README.md", model_card(card, name, "transformers", usage))
        checked = check_folder(tmp, translator, lines)
        log.info("MarianMT checked on %d %s lines: log-probabilities within %.1e of ours", len(lines), args.split,
                 checked["max_logprob_diff"])
        missing = [f for f in FILES if not (tmp / f).is_file()]
        if missing:
            raise DataError(f"transformers wrote no {', '.join(missing)}; the folder is not written")
        write_record(tmp, KIND, {"model_sha256": card["source"]["model_sha256"], "check": checked,
                                                  "decoding": generation})
    return args.out


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging(args.verbose)
    done = "checked: every file as exported" if args.verify else "written to"
    return run_reporting_errors("export-hf", lambda: print(f"MarianMT folder {done} {export_hf(args)}"))


if __name__ == "__main__":
    sys.exit(main())
