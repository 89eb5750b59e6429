"""The `nmt` command: the pipeline stages, `nmt translate` and `nmt serve`.

`nmt STAGE ...` forwards to the stage's own module (`python -m nmt.data.validate ...` is the
same command; dvc.yaml runs those, so this file is no stage's dependency). `nmt translate`
turns text into text with a model file (torch) or an ONNX package (torch-free); `nmt serve`
serves the package over HTTP (`nmt.serve`, docs/serving.md). Errors a user
can fix are one line, `nmt COMMAND: error: ...`, and exit status 1; heavy libraries are
imported only when a command runs, so `nmt --help` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from nmt import __version__
from nmt.command import run_reporting_errors, setup_logging
from nmt.config.evaluate import DEFAULT_DECODING, MAX_BEAM_SIZE
from nmt.errors import DataError
from nmt.serve.api.options import add_arguments as add_serve_arguments

if TYPE_CHECKING:  # numpy and the text pipeline load only when a command runs
    from nmt.translate.local import LocalTranslator

log = logging.getLogger("nmt.translate")

# stage -> (module with main(argv), one-line help); the order of dvc.yaml
STAGES: dict[str, tuple[str, str]] = {
    "download": ("nmt.data.download", "fetch the corpus files (params: data), SHA-256 checked"),
    "validate": ("nmt.data.validate", "gate on raw data (params: validate); writes the cleaned corpus"),
    "tokenize": ("nmt.data.tokenize", "spaCy tokenization of every split (params: tokenize), cached; gated"),
    "vocab": ("nmt.data.vocab", "word or BPE vocabularies from train (params: vocab); gated"),
    "binarize": ("nmt.data.binarize", "train and val ids in memory-mapped files for training; gated"),
    "train": ("nmt.train.stage", "train the Transformer (params: model, train); resumable; gated"),
    "finetune-parent": ("nmt.finetune.parent", "a trained model's vocabularies for a corpus to fine-tune on; gated"),
    "finetune": ("nmt.finetune.stage", "continue a trained model on your own data (params: train, finetune); "
                 "resumable; gated"),
    "finetune-compare": ("nmt.finetune.compare", "a fine-tune beside its parent on every test set; gated on the "
                         "general sets (params: finetune)"),
    "evaluate": ("nmt.evaluate.stage", "translate and score the test sets (params: evaluate); HTML report; gated"),
    "export": ("nmt.export.stage", "ONNX package with its model card (params: export); parity-gated"),
    "ctranslate2": ("nmt.export.ct2_stage", "CTranslate2 model of the same weights (params: export); BLEU-gated"),
    "profile": ("nmt.drift.stage", "the training data's profile, what the drift check compares traffic with "
                "(params: profile)"),
}
# command -> (module with main(argv), one-line help): the tools beside the stages
TOOLS: dict[str, tuple[str, str]] = {
    "check-params": ("nmt.config.check", "check params files whole (every section, the rules across them) before "
                     "a run"),
    "adapt": ("nmt.adapt.command", "fine-tune a model on your own TSV in one command: the fine-tune's stages and "
              "gates, then the comparison page"),
    "export-hf": ("nmt.export.hf_command", "a SentencePiece model as a transformers MarianMT folder, card included"),
    "export-argos": ("nmt.export.argos", "a SentencePiece model as an Argos Translate package for LibreTranslate"),
}


class ProgressLog:
    """Progress where no bar can be drawn (a pipe, a log file): one log line every `every_s`
    seconds and at the end, with lines done, lines/s and the time left."""

    def __init__(self, total: int, every_s: float = 10.0) -> None:
        self.total, self.every_s, self.done = total, every_s, 0
        self.start = self.last = time.monotonic()

    def __call__(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.last < self.every_s and self.done < self.total:
            return
        self.last = now
        rate = self.done / max(now - self.start, 1e-9)
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        log.info("translated %d/%d lines (%.1f lines/s, %d:%02d left)", self.done, self.total, rate,
                 eta // 60, eta % 60)


def check_paths(model: Path, source: Path | None, output: Path | None) -> None:
    """Problems with the files, found before any work: the output must be writable and must not be the input."""
    if not model.exists():
        raise DataError(f"--model {model}: not found; pass models/model.pt (train stage) or models/onnx (export stage)")
    if source is not None and not source.is_file():
        raise DataError(f"--input {source}: cannot read: no such file")
    if output is None:
        return
    if output.is_dir():
        raise DataError(f"--output {output}: is a directory; give a file path")
    if source is not None and output.exists() and os.path.samefile(source, output):
        raise DataError(f"--output {output}: is the input file {source}; writing it would destroy the input, "
                        "so give another path")
    try:
        with tempfile.TemporaryFile(dir=output.parent if str(output.parent) else "."):
            pass
    except OSError as exc:
        raise DataError(f"--output {output}: cannot write in {output.parent}: {exc.strerror or exc}") from None


def open_translator(args: argparse.Namespace) -> LocalTranslator:
    """`--model` (a model file, an ONNX package or a CTranslate2 folder: `nmt.translate.models`) with
    `--glossary`, translating as the server does (`nmt.translate.local`)."""
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    options = ModelOptions(beam_size=args.beam_size, alpha=args.alpha, batch_size=args.batch_size, device=args.device,
                           threads=args.threads, int8=args.int8, workers=args.workers)
    return LocalTranslator.open(args.model, options, args.glossary)


def _check_translate_options(args: argparse.Namespace) -> None:
    """`nmt translate`'s numeric options, refused before anything is opened."""
    if args.beam_size is not None and not 1 <= args.beam_size <= MAX_BEAM_SIZE:
        raise DataError(f"--beam-size must be 1 (greedy) to {MAX_BEAM_SIZE}; wider beams cost memory "
                        "(rows = batch x beam) for no gain")
    if args.batch_size < 1:
        raise DataError("--batch-size must be >= 1")
    if args.threads < 0:
        raise DataError("--threads must be >= 0 (0: the library's default)")
    if args.workers < 0:
        raise DataError("--workers must be >= 0 (0: one decoder process per core once the input is large enough; "
                        "1: this process decodes)")


def _read_lines(path: Path | None) -> list[str]:
    """The lines of `path`, or of stdin when it is None."""
    from nmt.files.lines import split_lines

    if path is None:
        return split_lines(sys.stdin.buffer.read(), "<stdin>")
    try:
        return split_lines(path.read_bytes(), str(path))
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror}") from None


def translate(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from nmt.files.atomic import atomic_open
    from nmt.translate.local import DOCUMENTS

    _check_translate_options(args)
    check_paths(args.model, args.input, args.output)
    translator = open_translator(args)
    direction = translator.model.direction
    try:
        if args.direction is not None and args.direction != direction:
            raise DataError(f"--model {args.model} translates {direction}, not {args.direction}: pick the model of "
                            f"that direction (the general packages: models/general/{args.direction}/onnx)")
        if args.input is not None and args.input.suffix.lower() in DOCUMENTS:
            _translate_document(translator, args)
            return
        lines = _read_lines(args.input)
        total = sum(1 for x in lines if x.strip())
        log.info("translating %d lines (%d with text) %s, beam %d", len(lines), total, direction,
                 translator.model.translator.beam_size)
        bar = tqdm(total=total, unit="line", desc="translate") if sys.stderr.isatty() else None
        progress = bar.update if bar is not None else ProgressLog(total)
        try:
            out = translator.lines(lines, progress)  # as the server translates a text, written as made
            if args.output is None:
                for line in out:
                    sys.stdout.write(line + "\n")
                    sys.stdout.flush()
                return
            with atomic_open(args.output, "w") as fh:  # the file appears whole at the end, or not at all
                for line in out:
                    fh.write(line + "\n")
        except OSError as exc:
            raise DataError(f"--output {args.output}: cannot write: {exc.strerror or exc}") from None
        finally:
            if bar is not None:
                bar.close()
    finally:
        translator.close()  # the decoder processes of --workers




def _translate_document(translator: LocalTranslator, args: argparse.Namespace) -> None:
    """A .docx, .srt or .html file translated with its formatting (as `/translate_file`), written atomically."""
    from nmt.files.atomic import atomic_open

    if args.output is None or args.output.suffix.lower() != args.input.suffix.lower():
        raise DataError(f"--input {args.input}: a document; give --output a file of the same kind "
                        f"(e.g. {args.input.with_stem(args.input.stem + '.translated').name})")
    data = translator.translate_document(args.input.name, args.input.read_bytes())
    with atomic_open(args.output, "wb", encoding=None) as fh:
        fh.write(data)
    log.info("translated %s into %s", args.input, args.output)


def serve(args: argparse.Namespace) -> None:
    from importlib.util import find_spec

    from nmt.serve.api.options import from_args

    config = from_args(args)
    missing = [name for name in ("starlette", "uvicorn", "prometheus_client", "python_multipart")
               if find_spec(name) is None]
    if missing:
        raise DataError(f"nmt serve needs the serve extra ({', '.join(missing)} not installed): "
                        'pip install "nmt[runtime,serve]"')
    from nmt.serve.api.server import serve as run_server

    run_server(config)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nmt", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Transformer translation pipeline (German<->English by default, any pair by configuration: "
                    "docs/pairs.md). Each STAGE is one DVC stage (`dvc repro` runs them in "
                    "order with the paths from dvc.yaml); `nmt STAGE --help` lists its options.",
        epilog="stages:\n" + "".join(f"  {name:<9} {help_}\n" for name, (_, help_) in STAGES.items()))
    parser.add_argument("--version", action="version", version=f"nmt {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, help_) in (STAGES | TOOLS).items():
        sub.add_parser(name, help=help_, add_help=False)
    p = sub.add_parser("translate", help="translate text with a trained model (one sentence per line)",
                       description="Translate UTF-8 text, one text per line, with a model file written by the "
                                   "train stage, the ONNX package of the export stage or the CTranslate2 model, as "
                                   "`nmt serve` translates a text (cut into sentences, URLs, numbers and emoji kept, "
                                   "a --glossary's terms swapped in): the same answer as the server and the Python "
                                   "API (nmt.translate.local). Reads stdin and writes stdout unless --input / "
                                   "--output are given; empty lines stay empty, so output lines match input lines. "
                                   "Progress goes to stderr: a bar on a terminal, else a log line every 10 s.")
    p.add_argument("--model", type=Path, required=True,
                   help="model file (models/model.pt: needs torch), an ONNX package folder (models/onnx: ONNX "
                        "Runtime, no torch) or a CTranslate2 model folder (models/ct2)")
    p.add_argument("--beam-size", type=int, default=None,
                   help=f"beam width, 1 (greedy) to {MAX_BEAM_SIZE} (default: the ONNX card's; for model files "
                        f"{DEFAULT_DECODING.beam_size}, the evaluate stage's default, tuned on val)")
    p.add_argument("--alpha", type=float, default=None,
                   help="length penalty ((5 + length) / 6) ** alpha of beam search (default: the ONNX card's; "
                        f"for model files {DEFAULT_DECODING.alpha}, the evaluate stage's default, tuned on val)")
    p.add_argument("--direction", help="the direction you expect, e.g. de-en: an error when the model translates "
                                         "another (the model's own is logged either way)")
    p.add_argument("--input", type=Path, help="input file, one text per line (default: stdin); a .docx, .srt, "
                   ".html or .htm file is translated with its formatting into --output (same kind)")
    p.add_argument("--output", type=Path, help="output file, written atomically; not the input (default: stdout, "
                                              "line by line as translations are made)")
    p.add_argument("--glossary", type=Path, help="terms to translate as given (a TSV, as `nmt serve --glossary`), "
                   "swapped in as the server swaps them")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded together (default: 64)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads of each decoder (default: 0: the library's default in this process, the cores "
                        "shared out among --workers decoder processes)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to run: auto = CUDA when it works, else CPU; cuda fails if it does not (default: auto)")
    p.add_argument("--int8", action="store_true", help="ONNX packages: the int8-quantised graphs; CTranslate2: "
                   "int8 compute")
    p.add_argument("--workers", type=int, default=0,
                   help="ONNX packages: decoder processes side by side (CTranslate2: its replicas), each with "
                        "--threads threads (0: the cores "
                        "shared out); on a small CPU, N decoders of 1 thread on N cores beat one decoder with N "
                        "threads. 0: one per core, started once an input is large enough to pay for their start "
                        "(nmt.runtime.translator.AUTO_SENTENCES); 1: this process decodes "
                        "(default: 0)")
    p = sub.add_parser("serve", help="serve the ONNX package over HTTP (LibreTranslate's API, dynamic batching)",
                       description="Serve the ONNX package (or the CTranslate2 model) over HTTP with LibreTranslate's "
                                   "API: POST /translate, GET /languages, /health; also /readyz, /livez, /v1/model, "
                                   "/metrics (Prometheus), POST /admin/reload and a demo page at /. Sentences of "
                                   "concurrent requests are decoded together in batches. SIGTERM drains and exits 0; "
                                   "SIGHUP reloads the model folder. docs/serving.md has the API and a production "
                                   "recipe.")
    add_serve_arguments(p)
    return parser


def run_stage(name: str, argv: list[str]) -> int:
    """Import the stage's module and run its `main`; a package missing in this install (torch,
    pandas, ...) is one line, as for every command."""
    module: list = []
    status = run_reporting_errors(name, lambda: module.append(importlib.import_module((STAGES | TOOLS)[name][0])))
    return status or module[0].main(argv)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args, rest = build_parser().parse_known_args(argv)
    if args.command in STAGES:  # the stage parses its own options (and --help)
        return run_stage(args.command, rest + (["--verbose"] if args.verbose else []))
    if args.command in TOOLS:
        return run_stage(args.command, rest)
    if rest:
        build_parser().error(f"unrecognized arguments: {' '.join(rest)}")
    setup_logging(args.verbose)
    return run_reporting_errors(args.command, lambda: (serve if args.command == "serve" else translate)(args))


if __name__ == "__main__":
    sys.exit(main())
