"""The profile stage: the training data counted with the package the server
serves, exactly as the server counts its traffic (nmt/drift/stage.py, dvc.yaml `profile`)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import yaml

from nmt.drift.profile import sample
from nmt.drift.stage import decoded_records, main, source_records
from nmt.translate.models import open_model
from nmt.translate.traffic import read_snapshots
from support.corpus import ROOT
from support.onnx import sentences
from support.serve import ThreadServer, ask, config, post

pytestmark = pytest.mark.network
# copy-task sentences, some with what the server masks (a URL, a number) or its vocabulary lacks (Wort)
ODD = ["s1 Wort s2 s3", "s4 https://example.com/a?b=1 s5", "s6 12 s7 Wort Wort", "Wort"]
TRAIN, DEV = sentences(300, seed=5) + ODD, sentences(40, seed=6) + ODD
SAMPLES = {"train_sentences": 200, "dev_sentences": 30, "seed": 2, "threads": 1}


@pytest.fixture(scope="module")
def made(package: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The stage run through its command line on a validated-like folder; the profile it wrote."""
    root = tmp_path_factory.mktemp("profile")
    data = root / "validated"
    data.mkdir()
    for split, lines in (("train", TRAIN), ("val", DEV)):
        (data / f"{split}.de").write_text("".join(line + "\n" for line in lines))
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["profile"].update(SAMPLES)
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    out = root / "reports" / "profile.json"
    assert main(["--params", str(root / "params.yaml"), "--package", str(package), "--data", str(data),
                 "--out", str(out)]) == 0
    return out, json.loads(out.read_text())


def test_the_profile_counts_both_samples_and_holds_no_text(made: tuple[Path, dict], package: Path) -> None:
    out, profile = made
    assert (profile["format"], profile["direction"], profile["train"]["source"]) == (1, "de-en", "de")
    assert profile["samples"] == {"train": {"split": "train", "lines": len(TRAIN), "sampled": 200},
                                  "dev": {"split": "val", "lines": len(DEV), "sampled": 30}}
    assert profile["package"]["kind"] == "onnx" and profile["package"]["sha256"] == open_model(package).digest
    train, dev = profile["train"], profile["dev"]
    assert (train["sentences"], dev["sentences"]) == (200, 30)
    assert sum(train["confidence"]["counts"]) == 0 and sum(dev["confidence"]["counts"]) == 30  # dev decoded only
    assert sum(train["languages"].values()) == 200 and sum(dev["languages"].values()) == 30  # every sentence detected
    assert [p.name for p in out.parent.iterdir()] == ["profile.json"]  # written atomically: no temporaries
    text = out.read_text()
    assert not any(line in text for line in TRAIN + DEV) and "Wort" not in text and "example" not in text


def test_pieces_and_unknown_are_the_servers_own_without_decoding(package: Path) -> None:
    model = open_model(package)
    counted, decoded = source_records(model.translator, ODD + DEV[:8]), decoded_records(model, ODD + DEV[:8])
    assert [(r.pieces, r.unknown) for r in counted] == [(r.pieces, r.unknown) for r in decoded]
    assert (counted[0].pieces, counted[0].unknown) == (5, 1)  # four words and </s>; Wort is <unk>
    assert (counted[1].pieces, counted[1].unknown) == (4, 1)  # the URL is one placeholder, as the server masks it
    assert (counted[2].pieces, counted[2].unknown) == (6, 3)  # so is the number


def test_the_dev_sample_sent_to_a_server_counts_as_in_the_profile(made: tuple[Path, dict], package: Path,
                                                                   tmp_path: Path) -> None:
    """The same sentences through `nmt serve --stats-dir`: the same lengths, <unk> shares and
    confidences as the profile's dev sample (languages: only a sample of requests is detected)."""
    _, profile = made
    dev = sample(DEV, SAMPLES["dev_sentences"], SAMPLES["seed"])
    server = ThreadServer(config(package, stats_dir=tmp_path / "stats"))
    try:
        for start in range(0, len(dev), 7):
            assert post(server.url, json=ask(dev[start:start + 7])).status_code == httpx.codes.OK
    finally:
        server.close()
    served = read_snapshots(tmp_path / "stats").directions["de-en"].to_json()
    expected = profile["dev"]
    for key in ("sentences", "pieces", "unknown"):
        assert served[key] == expected[key], key
    assert served["confidence"]["sum"] == pytest.approx(expected["confidence"]["sum"], abs=1e-3)


def test_a_missing_split_is_one_line_naming_the_file(package: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "train.de").write_text("s1 s2\n")
    assert main(["--package", str(package), "--data", str(tmp_path), "--out", str(tmp_path / "p.json"),
                 "--params", str(ROOT / "params.yaml")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("nmt profile: error: ") and "val.de: file not found" in err and "\n" not in err
    assert not (tmp_path / "p.json").exists()
