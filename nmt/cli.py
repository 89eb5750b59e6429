"""The `nmt` command: one subcommand per pipeline stage (what dvc.yaml runs).

Each subcommand is a thin shell over a pure stage function: it parses paths (which live in
dvc.yaml), loads the stage's params.yaml section into typed config, runs the stage, and
turns any `NmtError` into a one-line message and exit status 1. Heavy libraries are
imported only inside the subcommand, so `nmt --help` is instant.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from nmt import __version__
from nmt.errors import NmtError

log = logging.getLogger("nmt")


def _download(args: argparse.Namespace) -> None:
    from nmt.config import DataConfig
    from nmt.download import download_corpus
    from nmt.params import load_section

    data = load_section(args.params, "data", DataConfig)
    paths = download_corpus(data, args.out)
    log.info("downloaded %d files of corpus %r into %s", len(paths), data.corpus, args.out)


def _validate(args: argparse.Namespace) -> None:
    from nmt.config import DataConfig, ValidateConfig
    from nmt.params import load_section
    from nmt.validate import validate_corpus

    data = load_section(args.params, "data", DataConfig)
    cfg = load_section(args.params, "validate", ValidateConfig)
    validate_corpus(data, cfg, args.raw, args.out, args.reports)


def _tokenize(args: argparse.Namespace) -> None:
    from nmt.config import DataConfig, TokenizeConfig
    from nmt.params import load_section
    from nmt.tokenization import tokenize_corpus

    data = load_section(args.params, "data", DataConfig)
    cfg = load_section(args.params, "tokenize", TokenizeConfig)
    tokenize_corpus(data, cfg, args.inp, args.out, args.reports, None if args.no_cache else args.cache_dir)


def _vocab(args: argparse.Namespace) -> None:
    from nmt.build_vocab import vocab_stage
    from nmt.config import DataConfig, VocabConfig
    from nmt.params import load_section

    data = load_section(args.params, "data", DataConfig)
    cfg = load_section(args.params, "vocab", VocabConfig)
    gate = vocab_stage(data, cfg, args.tokens, args.out, args.reports)
    log.info("vocabularies: src %d, tgt %d symbols", gate.stats["src"]["size"], gate.stats["tgt"]["size"])


def _train(args: argparse.Namespace) -> None:
    from nmt.layers import ModelConfig
    from nmt.params import load_section
    from nmt.train_config import TrainConfig
    from nmt.train_stage import train_stage

    from nmt.config import TokenizeConfig

    model_cfg = load_section(args.params, "model", ModelConfig)
    cfg = load_section(args.params, "train", TrainConfig)
    tokenize_cfg = load_section(args.params, "tokenize", TokenizeConfig)
    train_stage(model_cfg, cfg, args.vocab, args.tokens, args.checkpoints, args.model, args.reports,
                args.train_reports, tokenize_cfg)


def _evaluate(args: argparse.Namespace) -> None:
    from nmt.eval_config import EvaluateConfig
    from nmt.evaluate import evaluate_stage
    from nmt.params import load_section

    cfg = load_section(args.params, "evaluate", EvaluateConfig)
    evaluate_stage(cfg, args.model, args.data, args.tokens, args.reports, args.gates, args.curves)


def _export(args: argparse.Namespace) -> None:
    from nmt.eval_config import EvaluateConfig
    from nmt.export import Decoding, ExportConfig, export_stage
    from nmt.params import load_section

    cfg = load_section(args.params, "export", ExportConfig)
    evaluate = load_section(args.params, "evaluate", EvaluateConfig)  # the card's decoding defaults: evaluate's
    decoding = Decoding(evaluate.beam_size, evaluate.alpha, evaluate.max_extra)
    export_stage(cfg, decoding, args.model, args.data, args.metrics, args.out, args.reports, args.export_metrics,
                 args.params)


def _translate(args: argparse.Namespace) -> None:
    from tqdm import tqdm

    from nmt.atomic import atomic_open
    from nmt.errors import DataError
    from nmt.text_input import decode_lines  # torch-free: an ONNX-only install translates

    if args.beam_size < 1:
        raise DataError("--beam-size must be >= 1 (1 is greedy decoding)")
    if args.batch_size < 1:
        raise DataError("--batch-size must be >= 1")
    if args.threads < 0:
        raise DataError("--threads must be >= 0 (0: the library's default)")
    if args.output is not None and args.output.is_dir():
        raise DataError(f"--output {args.output}: is a directory; give a file path")
    if args.model.is_dir():  # an ONNX package (export stage): ONNX Runtime, no torch
        from nmt.runtime import OnnxTranslator

        translator = OnnxTranslator.from_dir(args.model, beam_size=args.beam_size, batch_size=args.batch_size,
                                             device=args.device, threads=args.threads, int8=args.int8)
    else:
        try:
            from nmt.translate import Translator
        except ImportError as exc:  # a runtime-only install (`pip install "nmt[runtime]"`) has no torch
            raise DataError(f"{args.model}: translating a model file needs torch ({exc}); install nmt[pipeline], "
                            "or pass the exported ONNX package folder (models/onnx)") from None
        if args.int8:
            raise DataError("--int8 needs an ONNX package exported with export.quantize: true (--model models/onnx)")
        if args.threads:
            import torch

            torch.set_num_threads(args.threads)
        translator = Translator.from_file(args.model, beam_size=args.beam_size, batch_size=args.batch_size)
    if args.input is None:
        lines = decode_lines(sys.stdin.buffer.read(), "<stdin>")
    else:
        try:
            lines = decode_lines(args.input.read_bytes(), str(args.input))
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
        prog="nmt",
        description="German<->English Transformer pipeline. Each subcommand is one DVC stage; "
                    "`dvc repro` runs them in order with the paths from dvc.yaml.",
    )
    parser.add_argument("--version", action="version", version=f"nmt {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="STAGE")

    def stage(name: str, func: Callable[[argparse.Namespace], None], help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help)
        p.add_argument("--params", type=Path, default=Path("params.yaml"), help="params file (default: params.yaml)")
        p.set_defaults(func=func)
        return p

    p = stage("download", _download,
              "Fetch every file of the configured corpus (params: data), verify SHA-256, retry transient "
              "failures. Set NMT_DATA_MIRROR to a directory or file:// URL to use a local mirror.")
    p.add_argument("--out", type=Path, required=True, help="output directory (data/raw)")

    p = stage("validate", _validate,
              "Gate on raw data (params: validate): aligned UTF-8 files, length and ratio bounds, duplicates. "
              "Writes the cleaned corpus and reports/validation/raw.{json,md}.")
    p.add_argument("--raw", type=Path, required=True, help="downloaded corpus directory (data/raw)")
    p.add_argument("--out", type=Path, required=True, help="output directory for the cleaned splits")
    p.add_argument("--reports", type=Path, required=True, help="directory for gate reports")

    p = stage("tokenize", _tokenize,
              "spaCy tokenization of every split (params: tokenize), cached by content; gated.")
    p.add_argument("--in", dest="inp", type=Path, required=True, help="cleaned corpus directory (validate's output)")
    p.add_argument("--out", type=Path, required=True, help="output directory for the .tsv token files")
    p.add_argument("--reports", type=Path, required=True, help="directory for gate reports")
    p.add_argument("--cache-dir", type=Path, default=Path(".cache/tokenize"),
                   help="content-addressed tokenization cache (default: .cache/tokenize)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")

    p = stage("vocab", _vocab,
              "Build word-level or joint-BPE vocabularies from the train split (params: vocab); gated.")
    p.add_argument("--tokens", type=Path, required=True, help="tokenized corpus directory (tokenize's output)")
    p.add_argument("--out", type=Path, required=True, help="output directory for vocabularies")
    p.add_argument("--reports", type=Path, required=True, help="directory for gate reports")

    p = stage("train", _train,
              "Train the Transformer (params: model, train): token-budget batches, Adam + Noam, label-smoothed "
              "KL loss, validation and early stopping; resumes from the checkpoint directory; gated. "
              "Multi-GPU: `torchrun --nproc_per_node N -m nmt.cli train ...`.")
    p.add_argument("--vocab", type=Path, required=True, help="vocab stage output (data/vocab)")
    p.add_argument("--tokens", type=Path, required=True, help="tokenize stage output (data/tokens)")
    p.add_argument("--checkpoints", type=Path, required=True,
                   help="checkpoint directory; an interrupted run resumes from it")
    p.add_argument("--model", type=Path, required=True, help="final model file to write")
    p.add_argument("--reports", type=Path, required=True, help="directory for gate reports")
    p.add_argument("--train-reports", type=Path, required=True, help="directory for curves and DVCLive metrics")

    p = stage("evaluate", _evaluate,
              "Translate the test sets (params: evaluate) with beam search and score them: sacreBLEU with its "
              "signature and chrF on detokenized text, NLTK BLEU on spaCy tokens; gated on a BLEU floor. Writes "
              "reports/metrics.json, translations, bleu.md, index.html, attention pages and their assets.")
    p.add_argument("--model", type=Path, required=True, help="final model file (models/model.pt)")
    p.add_argument("--data", type=Path, required=True, help="validated corpus: sources and raw references")
    p.add_argument("--tokens", type=Path, required=True, help="tokenized corpus: spaCy tokens for NLTK BLEU")
    p.add_argument("--reports", type=Path, required=True, help="report directory (reports)")
    p.add_argument("--gates", type=Path, required=True, help="gate reports directory (reports/validation)")
    p.add_argument("--curves", type=Path, help="training curves PNG to show in the report")

    p = stage("export", _export,
              "Export the final model as an ONNX package (params: export): encoder and decoder-step graphs with "
              "the key/value cache, vocabularies, tokenizer settings and a model.json card; optional int8 "
              "quantisation; gated on torch/ONNX Runtime parity. Writes reports/export.json.")
    p.add_argument("--model", type=Path, required=True, help="final model file (models/model.pt)")
    p.add_argument("--data", type=Path, required=True, help="validated corpus (data/validated): parity and test sets")
    p.add_argument("--metrics", type=Path, required=True,
                   help="the evaluate stage's metrics (reports/metrics.json), recorded in the card")
    p.add_argument("--out", type=Path, required=True, help="package folder to replace (models/onnx)")
    p.add_argument("--reports", type=Path, required=True, help="directory for gate reports")
    p.add_argument("--export-metrics", type=Path, required=True,
                   help="metrics file to write: parity, identical test lines, BLEU, sizes (reports/export.json)")

    p = sub.add_parser("translate", help="Translate text with a trained model (one sentence per line).",
                       description="Translate UTF-8 text, one sentence per line, with a model file written by "
                                   "the train stage or the ONNX package of the export stage. Reads stdin and writes stdout unless --input / --output are "
                                   "given; empty lines stay empty, so output lines match input lines.")
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
    p.set_defaults(func=_translate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for noisy in ("great_expectations", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        args.func(args)
    except NmtError as exc:
        print(f"nmt {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"nmt {args.command}: interrupted; outputs were not replaced", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
