"""bench/decode_tune.py: the general models' beam and length penalty on each dev source of the val split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bench import decode_tune
from nmt import ranking
from nmt.config.evaluate import Decoding
from nmt.decode.translator import Translator
from nmt.translate.offline import translate_lines
from support.onnx import sentences
from tools.publish import pairs
from tools.publish.general import decode_tune as decode_tune_block
from tools.publish.sources import Sources

ROOT = Path(__file__).resolve().parents[2]
SOURCES = {"tiny.dev_a": ("dev", 5), "tiny.dev_b": ("dev", 4), "tiny.train": ("train", 3)}  # label: role, val lines


def project(tmp_path: Path, val_lines: int | None = None) -> list[str]:
    """general/params.yaml with a mix whose train source (listed first) has a dev share, a gate report with
    the val counts and a val split: dev_a's references are its sources (the copy model's task), dev_b's
    and the dev share's are not. Returns the command line's data arguments."""
    data = yaml.safe_load((ROOT / "general" / "params.yaml").read_text())["data"]
    files = [{"name": "x", "url": "file:///x", "sha256": "0" * 64}]
    splits = {s: {"de": "x", "en": "x"} for s in ("train", "dev_a", "dev_b")}
    data["corpora"] = {"tiny": {"languages": ["de", "en"], "licence": "test data", "requires_train": False,
                                "files": files, "splits": splits}}
    data["mixes"] = {"general": {"languages": ["de", "en"], "sources": [
        {"corpus": "tiny", "split": "train", "role": "train", "dev_share": 0.05},
        {"corpus": "tiny", "split": "dev_a", "role": "dev"}, {"corpus": "tiny", "split": "dev_b", "role": "dev"}]}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"data": data}))
    tallies = {k: {"role": role, "written": 100 if role == "train" else n, "to_val": n if role == "train" else 0}
               for k, (role, n) in SOURCES.items()}
    (tmp_path / "raw.json").write_text(json.dumps({"stats": {"sources": tallies}}))
    src = sentences(12, seed=3)[: val_lines or 12]
    ref = src[:5] + ["s1 s1 s1 s1"] * 7  # the val order: dev_a, dev_b, then the train source's share
    (tmp_path / "validated").mkdir()
    (tmp_path / "validated" / "val.de").write_text("".join(s + "\n" for s in src))
    (tmp_path / "validated" / "val.en").write_text("".join(s + "\n" for s in ref[: len(src)]))
    return ["--params", str(tmp_path / "params.yaml"), "--data", str(tmp_path / "validated"),
            "--gate", str(tmp_path / "raw.json")]


def test_scores_each_setting_on_each_dev_source(model_path: Path, tmp_path: Path) -> None:
    args = project(tmp_path)
    code = decode_tune.main([*args, "--models", str(model_path), "--settings", "1:1.0", "3:0.6", "--per-source", "4",
                             "--threads", "1", "--out", str(tmp_path / "out")])
    assert code == 0
    r = json.loads((tmp_path / "out" / "decode_tune.json").read_text())["results"]
    assert list(r["sources"].items()) == [("tiny.dev_a", 5), ("tiny.dev_b", 4), ("tiny.train", 3)]  # dev, then shares
    (run,) = r["directions"]
    assert run["direction"] == "de-en" and [(x["beam_size"], x["alpha"]) for x in run["rows"]] == [(1, 1.0), (3, 0.6)]
    src = (tmp_path / "validated" / "val.de").read_text().splitlines()
    ref = (tmp_path / "validated" / "val.en").read_text().splitlines()
    beam3 = Translator.from_file(model_path, Decoding(beam_size=3, alpha=0.6))
    assert r["decoded"] == {"tiny.dev_a": 3, "tiny.dev_b": 4, "tiny.train": 3}  # at most 4, evenly spaced
    cuts = {"tiny.dev_a": (0, 5, 2), "tiny.dev_b": (5, 9, 1), "tiny.train": (9, 12, 1)}  # (start, end, step)
    for name, (start, end, step) in cuts.items():
        want = decode_tune.score(list(translate_lines(beam3, src[start:end:step])), ref[start:end:step])
        assert run["rows"][1]["sources"][name] == want
    dev_a, dev_b = (run["rows"][1]["sources"][n]["sacrebleu"] for n in ("tiny.dev_a", "tiny.dev_b"))
    assert dev_a > dev_b  # the copies' references against the others': the sources were not mixed up
    # the expected winner by the code's own rule on the written means (they tie on some CPUs: the first listed)
    means = r["means"]
    assert list(means) == ["beam 1, alpha 1", "beam 3, alpha 0.6"]
    settings = {"beam 1, alpha 1": {"beam_size": 1, "alpha": 1.0}, "beam 3, alpha 0.6": {"beam_size": 3, "alpha": 0.6}}
    assert r["best"] == settings[ranking.best(means, means.get)]
    text = decode_tune_block(Sources(tmp_path / "reports", tmp_path / "out"))  # docs/data.md's block
    row = run["rows"][0]
    assert (f"| beam 1, alpha 1 | {row['sources']['tiny.dev_a']['sacrebleu']:.2f} "
            f"({row['sources']['tiny.dev_a']['length_ratio']:.2f}) |") in text
    assert "at most 4 evenly spaced lines of each dev source of the val split (`tiny.dev_a` 3 of 5," in text
    assert "Source: `bench/results/decode_tune.json`" in text
    assert "Not measured on this machine yet" in decode_tune_block(Sources(tmp_path, tmp_path))


def test_a_val_split_that_the_gate_report_does_not_count_is_refused(model_path: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    args = project(tmp_path, val_lines=10)
    with pytest.raises(SystemExit) as exc:
        decode_tune.main([*args, "--models", str(model_path), "--settings", "1:1.0", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "10 lines, the gate report counts 12; re-run the data stages" in err
    assert not (tmp_path / "out").exists()


def test_a_bad_setting_is_refused_with_the_form_expected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        decode_tune.main(["--data", str(tmp_path), "--gate", str(tmp_path), "--models", "m.pt", "--settings", "five"])
    assert exc.value.code == 2 and "expected BEAM:ALPHA" in capsys.readouterr().err


def test_one_corpus_has_one_dev_source_its_val_split(model_path: Path, tmp_path: Path) -> None:
    """A pair of pairs/ (no mix): every val line is one source, no gate report needed, the result named."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text())["data"]  # Multi30k, no mix
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"data": data}))
    src = sentences(7, seed=5)
    (tmp_path / "validated").mkdir()
    for lang, lines in (("de", src), ("en", src[:3] + ["s1 s1"] * 4)):
        (tmp_path / "validated" / f"val.{lang}").write_text("".join(s + "\n" for s in lines))
    code = decode_tune.main(["--params", str(tmp_path / "params.yaml"), "--data", str(tmp_path / "validated"),
                             "--models", str(model_path), "--settings", "2:1.0", "--per-source", "0",
                             "--threads", "1", "--out", str(tmp_path / "out"), "--name", "decode_tune_de-en"])
    assert code == 0 and not (tmp_path / "out" / "decode_tune.json").exists()
    r = json.loads((tmp_path / "out" / "decode_tune_de-en.json").read_text())["results"]
    assert r["sources"] == {"multi30k val": 7} and r["decoded"] == {"multi30k val": 7}
    want = decode_tune.score(list(translate_lines(Translator.from_file(model_path, Decoding(beam_size=2, alpha=1.0)),
                                                 src)),
                             (tmp_path / "validated" / "val.en").read_text().splitlines())
    assert r["directions"][0]["rows"][0]["sources"]["multi30k val"] == want
    assert r["best"] == {"beam_size": 2, "alpha": 1.0} and r["params"] == str(tmp_path / "params.yaml")
    text = pairs.tune(Sources(tmp_path / "reports", tmp_path / "out"))  # docs/pairs.md's block
    assert f"**de-en** (`{tmp_path / 'params.yaml'}`; `multi30k val`, 7 of 7 lines" in text
    bleu = f"{want['sacrebleu']:.2f}"
    assert f"| beam 2, alpha 1 | {bleu} ({want['length_ratio']:.2f}) | {bleu} |" in text
    assert "Best mean: beam 2, alpha 1." in text and "Source: `bench/results/decode_tune_de-en.json`" in text
    assert "Not measured on this machine yet" in pairs.tune(Sources(tmp_path, tmp_path))


def test_a_mix_without_its_gate_report_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = project(tmp_path)[:4]  # --params, --data; no --gate
    with pytest.raises(SystemExit) as exc:
        decode_tune.main([*args, "--models", "m.pt", "--settings", "1:1.0", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and "is a mix; --gate names its validate report" in capsys.readouterr().err
