"""The `nmt` command: the pipeline stages, and `nmt translate`.

`nmt STAGE ...` forwards to the stage's own module (`python -m nmt.data.validate ...` is the
same command; dvc.yaml runs those, so this file is no stage's dependency). `nmt translate`
turns text into text with a model file (torch) or an ONNX package (torch-free). Errors a user
can fix are one line, `nmt COMMAND: error: ...`, and exit status 1; heavy libraries are
imported only when a command runs, so `nmt --help` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from nmt import __version__
from nmt.command import run_reporting_errors, setup_logging
from nmt.errors import DataError

# stage -> (module with main(argv), one-line help); the order of dvc.yaml
STAGES: dict[str, tuple[str, str]] = {
    "download": ("nmt.data.download", "fetch the corpus files (params: data), SHA-256 checked"),
    "validate": ("nmt.data.validate", "gate on raw data (params: validate); writes the cleaned corpus"),
    "tokenize": ("nmt.data.tokenize", "spaCy tokenization of every split (params: tokenize), cached; gated"),
    "vocab": ("nmt.data.vocab", "word or BPE vocabularies from train (params: vocab); gated"),
    "train": ("nmt.train.stage", "train the Transformer (params: model, train); resumable; gated"),
    "evaluate": ("nmt.evaluate.stage", "translate and score the test sets (params: evaluate); HTML report; gated"),
    "export": ("nmt.export.stage", "ONNX package with its model card (params: export); parity-gated"),
}


def translate(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from nmt.files.atomic import atomic_open
    from nmt.files.lines import split_lines

    if args.beam_size < 1:
        raise DataError("--beam-size must be >= 1 (1 is greedy decoding)")
    if args.batch_size < 1:
        raise DataError("--batch-size must be >= 1")
    if args.threads < 0:
        raise DataError("--threads must be >= 0 (0: the library's default)")
    if args.output is not None and args.output.is_dir():
        raise DataError(f"--output {args.output}: is a directory; give a file path")
    if args.model.is_dir():  # an ONNX package (export stage): ONNX Runtime, no torch
        from nmt.runtime.translator import OnnxTranslator

        translator = OnnxTranslator.from_dir(args.model, beam_size=args.beam_size, batch_size=args.batch_size,
                                             device=args.device, threads=args.threads, int8=args.int8)
    else:
        try:
            from nmt.config.evaluate import Decoding
            from nmt.decode.translator import Translator
        except ImportError as exc:  # a runtime-only install (`pip install "nmt[runtime]"`) has no torch
            raise DataError(f"{args.model}: translating a model file needs torch ({exc}); install nmt[pipeline], "
                            "or pass the exported ONNX package folder (models/onnx)") from None
        if args.int8:
            raise DataError("--int8 needs an ONNX package exported with export.quantize: true (--model models/onnx)")
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        translator = Translator.from_file(args.model, Decoding(beam_size=args.beam_size), args.batch_size)
    if args.input is None:
        lines = split_lines(sys.stdin.buffer.read(), "<stdin>")
    else:
        try:
            lines = split_lines(args.input.read_bytes(), str(args.input))
        except OSError as exc:
            raise DataError(f"{args.input}: cannot read: {exc.strerror}") from None
    with tqdm(total=sum(1 for x in lines if x.strip()), unit="sent", desc="translate",
              disable=None if args.input is not None else True) as bar:
        out = translator.translate(lines, progress=bar.update)
    text = "".join(line + "\n" for line in out)
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            with atomic_open(args.output, "w") as fh:
                fh.write(text)
        except OSError as exc:
            raise DataError(f"--output {args.output}: cannot write: {exc.strerror or exc}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nmt", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="German<->English Transformer pipeline. Each STAGE is one DVC stage (`dvc repro` runs them in "
                    "order with the paths from dvc.yaml); `nmt STAGE --help` lists its options.",
        epilog="stages:\n" + "".join(f"  {name:<9} {help_}\n" for name, (_, help_) in STAGES.items()))
    parser.add_argument("--version", action="version", version=f"nmt {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, help_) in STAGES.items():
        sub.add_parser(name, help=help_, add_help=False)
    p = sub.add_parser("translate", help="translate text with a trained model (one sentence per line)",
                       description="Translate UTF-8 text, one sentence per line, with a model file written by the "
                                   "train stage or the ONNX package of the export stage. Reads stdin and writes stdout "
                                   "unless --input / --output are given; empty lines stay empty, so output lines "
                                   "match input lines.")
    p.add_argument("--model", type=Path, required=True,
                   help="model file (models/model.pt), or an ONNX package folder (models/onnx: ONNX Runtime, no torch)")
    p.add_argument("--beam-size", type=int, default=4, help="beam width; 1 = greedy (default: 4, as the paper)")
    p.add_argument("--input", type=Path, help="input file (default: stdin)")
    p.add_argument("--output", type=Path, help="output file, written atomically (default: stdout)")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded together (default: 64)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (default: 0, the library's default)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="ONNX packages: execution provider; auto = CUDA when it works, else CPU (default: auto)")
    p.add_argument("--int8", action="store_true", help="ONNX packages: use the int8-quantised graphs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args, rest = build_parser().parse_known_args(argv)
    if args.command in STAGES:  # the stage parses its own options (and --help)
        stage_argv = rest + (["--verbose"] if args.verbose else [])
        return importlib.import_module(STAGES[args.command][0]).main(stage_argv)
    if rest:
        build_parser().error(f"unrecognized arguments: {' '.join(rest)}")
    setup_logging(args.verbose)
    return run_reporting_errors(args.command, lambda: translate(args))


if __name__ == "__main__":
    sys.exit(main())
