"""The server's parts on their own: sentence splitting and reassembly, the api keys file, the
options (and docs/serving.md listing each with its default), the Locust file importing nothing of ours."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest

from nmt.errors import ConfigError, DataError
from nmt.serve.api.limits import KeyCheck, KeyLimits, load_keys
from nmt.serve.api.options import ServeConfig, _flag, _shown
from nmt.serve.api.protocol import HttpError
from nmt.text.sentences import SentenceSplitter
from support.corpus import ROOT


@pytest.mark.parametrize("text, sentences", [
    ("Ein Mann fährt Fahrrad. Eine Frau lacht!\n\n  Zwei Hunde.  ", ["Ein Mann fährt Fahrrad.", "Eine Frau lacht!",
                                                                     "Zwei Hunde."]),
    ("Dr. Müller kommt um drei Uhr. Er ist da.\r\nJa", ["Dr. Müller kommt um drei Uhr.", "Er ist da.", "Ja"]),
    ("", []), (" \n\t", []), ("Hallo", ["Hallo"]),
])
def test_sentences_are_split_and_the_layout_comes_back(text: str, sentences: list[str]) -> None:
    segmented = SentenceSplitter("de").split(text)
    assert segmented.sentences == sentences
    assert segmented.join(segmented.sentences) == text  # separators kept verbatim
    marked = segmented.join([f"<{s}>" for s in sentences])  # each sentence replaced where it stood
    assert marked.replace("<", "").replace(">", "") == text and marked.count("<") == len(sentences)
    with pytest.raises(ValueError):
        segmented.join(sentences + ["one too many"])


def test_the_keys_file_and_its_errors(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    path.write_text(json.dumps({"aaaaaaaa": {"requests_per_minute": 2}, "bbbbbbbb": {}}))
    assert load_keys(path, req_limit=0, char_limit=100) == {"aaaaaaaa": KeyLimits(2, 100),
                                                            "bbbbbbbb": KeyLimits(0, 100)}
    for content, message in [("[]", "non-empty JSON object"), ('{"short": {}}', "at least 8 characters"),
                             ('{"aaaaaaaa": {"rpm": 1}}', "at most requests_per_minute"),
                             ('{"aaaaaaaa": {"requests_per_minute": -1}}', "whole numbers >= 0"), ("{", "cannot read")]:
        path.write_text(content)
        with pytest.raises(DataError, match=re.escape(message)) as exc:
            load_keys(path, 0, 0)
        assert "aaaaaaaa" not in str(exc.value)  # a key is never echoed


def test_the_rate_limit_window_slides() -> None:
    check = KeyCheck({"aaaaaaaa": KeyLimits(requests_per_minute=2, chars_per_request=0)})
    check.check("aaaaaaaa", 10, now=0.0)
    check.check("aaaaaaaa", 10, now=30.0)
    with pytest.raises(HttpError) as exc:
        check.check("aaaaaaaa", 10, now=59.0)
    assert exc.value.status == 429 and exc.value.retry_after == 1
    check.check("aaaaaaaa", 10, now=60.0)  # the first left the window
    KeyCheck(None).check(None, 10**6, now=0.0)  # without keys, anyone


@pytest.mark.parametrize("overrides, message", [
    ({"max_batch": 0}, "--max-batch 0: must be >= 1"), ({"max_queue": 8}, "--max-queue 8: must be >= --max-batch"),
    ({"max_wait_ms": -1.0}, "--max-wait-ms -1.0"), ({"drain_timeout_s": 0.0}, "--drain-timeout 0.0"),
    ({"port": 70000}, "--port 70000"), ({"admin_token": "short"}, "at least 16 characters"),
    ({"decoders": -1}, "--decoders -1: must be >= 0"), ({"threads": -2}, "--threads -2: must be >= 0"),
])
def test_options_that_cannot_work_are_refused(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        ServeConfig(**overrides)


@pytest.mark.parametrize("decoders, threads, cores, layout", [
    (0, 0, 2, (2, 1)), (0, 0, 8, (8, 1)), (1, 0, 8, (1, 8)), (3, 0, 8, (3, 2)), (0, 2, 4, (4, 2)), (2, 3, 1, (2, 3)),
    (5, 0, 2, (5, 1)),
])
def test_zeros_give_one_decoder_per_core_and_share_the_cores_out(decoders: int, threads: int, cores: int,
                                                                 layout: tuple[int, int]) -> None:
    assert ServeConfig(decoders=decoders, threads=threads).layout(cores) == layout


def test_the_docs_list_every_option_with_its_default() -> None:
    page = (ROOT / "docs" / "serving.md").read_text(encoding="utf-8")
    for f in dataclasses.fields(ServeConfig):
        row = next((line for line in page.splitlines() if line.startswith(f"| `{_flag(f.name)}")), None)
        assert row is not None, f"docs/serving.md: no row for {_flag(f.name)}"
        assert str(_shown(f.default)) in row, f"docs/serving.md: {_flag(f.name)}'s default is {_shown(f.default)}"


def test_the_locust_file_imports_nothing_of_this_project() -> None:
    tree = ast.parse((ROOT / "examples" / "locustfile.py").read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "locust" in imported and not imported & {"nmt", "bench", "support"}
