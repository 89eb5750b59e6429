"""The knobs of `nmt serve`: one frozen dataclass, its checks, and its command-line options.

Each field carries its help text; `add_arguments()` turns every field into an option
(`--max-batch` for `max_batch`) whose help states the default, so `nmt serve --help`, the
dataclass and docs/serving.md say the same thing. `ServeConfig.__post_init__` rejects values
that cannot work with a `ConfigError` naming the option and what it takes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nmt.errors import ConfigError
from nmt.files.cores import available_cores

ADMIN_TOKEN_ENV = "NMT_SERVE_ADMIN_TOKEN"  # the admin token, when not given on the command line


def knob(default: Any, help: str) -> Any:
    """A field with its default and its option's help text."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class ServeConfig:
    """What `nmt serve` serves and how; the defaults are the command's."""

    # the packages, one per direction: ONNX exports (models/onnx) or CTranslate2 model folders (models/ct2), or
    # folders of such packages; requests are routed by source/target (auto: by the detected language)
    model: tuple[Path, ...] = knob((Path("models/onnx"),), "model: the ONNX package (export stage, or `dvc "
                                   "artifacts get ... --stage prod`), the CTranslate2 model (models/ct2), a model "
                                   "file (models/model.pt; needs torch), or a folder of packages; repeat it for more "
                                   "directions (one model per direction)")
    # use the package's int8 graphs (ONNX) or int8 compute (CTranslate2)
    int8: bool = knob(False, "decode with the int8 graphs (ONNX) / int8 compute (CTranslate2)")
    # interface to listen on; 127.0.0.1 keeps it on this machine
    host: str = knob("127.0.0.1", "interface to listen on (0.0.0.0: every interface; put a proxy with TLS in front)")
    # TCP port
    port: int = knob(5000, "TCP port (LibreTranslate's default)")
    # decoders side by side, each on its own inference thread with its own per-batch state; 0: one per core
    # one by default: two decoders serve a little more under load, but a lone request then runs on one
    # core, batches stay smaller and memory grows under overload (docs/serving.md: the measured trade)
    decoders: int = knob(1, "decoders side by side, each on its own inference thread, all fed by the one queue "
                            "(0: one per CPU core)")
    # ONNX Runtime intra-op threads (CTranslate2: intra threads) of each decoder; 0: the cores shared out
    threads: int = knob(0, "CPU threads inside each decoder (0: the CPU cores shared out among the decoders)")
    # most sentences decoded together
    # 32 serves as many sentences/s as 64 at beam 16 with half the memory under overload (docs/serving.md)
    max_batch: int = knob(32, "most sentences decoded together in one batch")
    # how long a batch waits for more sentences after its first arrived
    # short: a lone client's latency stays lowest and batches still fill under load (docs/serving.md)
    max_wait_ms: float = knob(2.0, "how long the first queued sentence waits for others to join its batch, ms")
    # queued sentences; a request whose sentences do not all fit is answered 503 at once
    max_queue: int = knob(512, "sentences the queue holds; a request that does not fit gets 503 with Retry-After")
    # sentences in one request after splitting; at most --max-queue, so every admissible request can fit the queue
    max_sentences: int = knob(256, "sentences in one request (its texts cut into sentences); more: 413 (beyond "
                                   "--max-queue, --max-queue counts)")
    # a sentence that waited longer than this in the queue is not decoded: its request gets 503
    queue_timeout_s: float = knob(10.0, "a sentence queued longer than this is not decoded: 503, seconds")
    # a request not answered within this gets 504 (its queued sentences are dropped)
    request_timeout_s: float = knob(30.0, "a request not answered within this gets 504, seconds")
    # texts per request (a list `q`)
    max_texts: int = knob(128, "texts in one request (a list q); more: 413")
    # characters per text
    max_chars: int = knob(5000, "characters in one text; longer: 413")
    # bytes per request body
    max_body_bytes: int = knob(1_048_576, "bytes in one request body; more: 413")
    # a request body not received within this gets 408: a slow client does not hold a handler for ever
    body_timeout_s: float = knob(10.0, "a request body not received within this gets 408, seconds")
    # a connection whose request line and headers are not complete within this is closed (slowloris), seconds
    header_timeout_s: float = knob(10.0, "a connection that has not sent a whole request head within this (from "
                                         "opening, or from its last answer) is closed, seconds")
    # a kept-alive connection idle this long after an answer is closed
    idle_timeout_s: float = knob(5.0, "a kept-alive connection idle this long after an answer is closed, seconds")
    # open connections at once; beyond, new connections get 503 (uvicorn's limit_concurrency)
    max_connections: int = knob(1000, "connections served at once; more get 503 at once")
    # on SIGTERM, how long accepted requests may take to finish before the server exits anyway
    drain_timeout_s: float = knob(30.0, "on SIGTERM, time for accepted requests to finish, seconds")
    # the token POST /admin/reload needs (Authorization: Bearer ...); none: reload over HTTP is off
    admin_token: str | None = knob(None, f"token for POST /admin/reload (Authorization: Bearer TOKEN); also "
                                         f"${ADMIN_TOKEN_ENV}; unset: the endpoint is off (SIGHUP still reloads)")
    # JSON file {key: {"requests_per_minute": n, "chars_per_request": n}}; given, every request needs a key
    api_keys: Path | None = knob(None, "JSON file of api keys, {\"KEY\": {\"requests_per_minute\": N, "
                                       "\"chars_per_request\": N}}; given, api_key is required (403)")
    # a key's requests per minute when its entry sets none; 0: no limit
    req_limit: int = knob(0, "requests per minute of a key whose entry sets none; 0: no limit (429)")
    # a key's characters per request when its entry sets none; 0: no limit
    char_limit: int = knob(0, "characters per request of a key whose entry sets none; 0: no limit (429)")
    # origins allowed to call from a browser (CORS); empty: CORS off
    cors_origins: tuple[str, ...] = knob((), "comma-separated origins allowed to call from browsers (CORS), or *; "
                                             "unset: CORS off")
    # one log line per request (method, path without query, status, ms); keys are never logged
    access_log: bool = knob(False, "log one line per request: method, path (no query string), status, ms")
    # what each direction is asked, counted with no text (nmt/translate/traffic.py): in /metrics always, and with a
    # folder as JSON snapshots, each the counts since the previous one, plus one at shutdown
    stats_dir: Path | None = knob(None, "folder of the traffic snapshots (per direction: lengths, <unk> share, "
                                        "detected languages, confidence, guarded sentences; no text), one every "
                                        "--stats-interval and one at shutdown; unset: /metrics only")
    stats_interval_s: float = knob(60.0, "seconds between two traffic snapshots")
    # 1440: a day of snapshots at the default interval
    stats_keep: int = knob(1440, "traffic snapshots kept in --stats-dir; older ones are deleted")
    # requests naming their source: the share whose texts' language is detected (source: auto always is)
    detect_sample: float = knob(0.1, "share (0-1) of the requests naming their source whose texts' language is "
                                     "detected and counted (source auto: every one)")
    # opt-in: source texts written for a future evaluation set; off unless both options are given
    sample_inputs: float = knob(0.0, "opt-in: share (0-1) of the texts written to --sample-dir, with their direction "
                                     "and date only (never keys or client addresses); 0: off")
    sample_dir: Path | None = knob(None, "folder of the sampled texts (JSONL, one file a day); needs --sample-inputs")
    sample_max_mb: float = knob(10.0, "most megabytes the sampled texts take; the oldest days go first, then new "
                                      "samples are dropped")
    sample_max_days: float = knob(7.0, "sampled texts' files last written longer ago than this are deleted, days")
    # /translate_file: the largest upload, and where translated files wait for /download_file
    max_file_bytes: int = knob(10 * 2**20, "bytes in one file sent to /translate_file; more: 413")
    files_dir: Path | None = knob(None, "folder of the translated files /download_file serves (names nobody can "
                                        "guess); unset: a fresh temporary folder")
    files_keep_minutes: float = knob(60.0, "a translated file can be downloaded for this long, minutes")
    files_max: int = knob(100, "translated files kept at most; the oldest are deleted first")
    # glossaries, one TSV file per direction ("source term<TAB>target term[<TAB>more forms]";
    # nmt/translate/glossary.py)
    glossary: tuple[str, ...] = knob((), "glossary TSV file of a direction, named DIRECTION.tsv or DIRECTION:FILE "
                                          "(e.g. de-en:terms.tsv); repeat it for more directions; its target terms "
                                          "appear whenever their source terms are in a text")
    # the in-browser translator (js/bin/build-page.js's folder): static files at /browser/, the visitor's browser
    # translates (nmt/serve/api/browser.py)
    browser_page: Path | None = knob(None, "folder written by `node js/bin/build-page.js` (a SentencePiece package "
                                           "that translates in the visitor's browser): served at /browser/ and "
                                           "linked from the demo page; unset: off")

    def __post_init__(self) -> None:
        if isinstance(self.model, (str, Path)):  # one folder given as such (the library's callers)
            object.__setattr__(self, "model", (Path(self.model),))

        def need(ok: bool, option: str, what: str) -> None:
            if not ok:
                raise ConfigError(f"{_flag(option)} {getattr(self, option)}: {what}")

        need(0 <= self.port <= 65535, "port", "must be 0 to 65535")
        need(self.decoders >= 0, "decoders", "must be >= 0 (0: one per CPU core)")
        need(self.threads >= 0, "threads", "must be >= 0 (0: the CPU cores shared out among the decoders)")
        need(self.max_batch >= 1, "max_batch", "must be >= 1")
        need(self.max_wait_ms >= 0, "max_wait_ms", "must be >= 0 (0: decode what is queued at once)")
        need(self.max_queue >= self.max_batch, "max_queue", f"must be >= --max-batch ({self.max_batch})")
        need(self.max_sentences >= 1, "max_sentences", "must be >= 1 (a larger value than --max-queue counts as it)")
        need(self.max_connections >= 1, "max_connections", "must be >= 1")
        need(self.max_file_bytes >= 1, "max_file_bytes", "must be >= 1")
        need(self.files_keep_minutes > 0, "files_keep_minutes", "must be > 0")
        need(self.files_max >= 1, "files_max", "must be >= 1")
        for option in ("queue_timeout_s", "request_timeout_s", "drain_timeout_s", "body_timeout_s", "header_timeout_s",
                       "idle_timeout_s"):
            need(getattr(self, option) > 0, option, "must be > 0 seconds")
        for option in ("max_texts", "max_chars", "max_body_bytes"):
            need(getattr(self, option) >= 1, option, "must be >= 1")
        for option in ("req_limit", "char_limit"):
            need(getattr(self, option) >= 0, option, "must be >= 0 (0: no limit)")
        need(self.admin_token is None or len(self.admin_token) >= 16, "admin_token",
             "must be at least 16 characters (e.g. `openssl rand -hex 16`)")
        for option in ("stats_interval_s", "sample_max_mb", "sample_max_days"):
            need(getattr(self, option) > 0, option, "must be > 0")
        need(self.stats_keep >= 1, "stats_keep", "must be >= 1")
        for option in ("detect_sample", "sample_inputs"):
            need(0 <= getattr(self, option) <= 1, option, "must be a share, 0 to 1")
        need(self.sample_dir is not None or not self.sample_inputs, "sample_inputs",
             "needs --sample-dir DIR, the folder the sampled texts go to")
        need(self.sample_dir is None or self.sample_inputs > 0, "sample_dir",
             "needs --sample-inputs RATE above 0: sampling texts is opt-in")

    @property
    def max_wait_s(self) -> float:
        return self.max_wait_ms / 1000.0

    def layout(self, cores: int | None = None) -> tuple[int, int]:
        """(decoders, threads inside each) with 0s resolved for `cores` (default: the CPU cores this
        process may run on): one decoder per core, the cores shared out among the decoders."""
        cores = cores or available_cores()
        decoders = self.decoders or cores
        return decoders, self.threads or max(1, cores // decoders)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-").removesuffix("-s")


def _shown(default: Any) -> Any:
    if isinstance(default, tuple) and default:
        return " ".join(map(str, default))
    return "unset" if default is None or default == () else "off" if default is False else default


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One option per field, its help ending with the default."""
    for f in dataclasses.fields(ServeConfig):
        flag, help_ = _flag(f.name), f"{f.metadata['help']} (default: {_shown(f.default)})"
        if f.default is False:
            parser.add_argument(flag, dest=f.name, action="store_true", help=help_)
            continue
        if f.name in ("model", "glossary"):
            parser.add_argument(flag, dest=f.name, type=Path if f.name == "model" else str, action="append",
                                metavar="DIR" if f.name == "model" else "FILE", help=help_)
            continue
        kind = {"model": Path, "api_keys": Path, "admin_token": str, "cors_origins": str, "stats_dir": Path,
                "sample_dir": Path, "files_dir": Path, "browser_page": Path}.get(f.name, type(f.default))
        parser.add_argument(flag, dest=f.name, type=kind, default="" if f.name == "cors_origins" else f.default,
                            metavar=flag[2:].upper().replace("-", "_"), help=help_)


def from_args(args: argparse.Namespace) -> ServeConfig:
    """The config the options give; the admin token falls back to $NMT_SERVE_ADMIN_TOKEN."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(ServeConfig)}
    given["cors_origins"] = tuple(o.strip() for o in given["cors_origins"].split(",") if o.strip())
    given["model"] = tuple(given["model"] or ServeConfig.model)
    given["glossary"] = tuple(given["glossary"] or ())
    given["admin_token"] = given["admin_token"] or os.environ.get(ADMIN_TOKEN_ENV) or None
    return ServeConfig(**given)
