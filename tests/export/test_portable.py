"""Models the field can load (issue 75): a SentencePiece model of the pipeline's stages, exported as a
transformers MarianMT folder (`nmt export-hf`) and as an Argos Translate package (`nmt export-argos`),
loaded by the real libraries: transformers in this venv; argostranslate and the LibreTranslate server each in
its own venv (`make peers`: tests/peers/*.lock; .ci/run builds them and sets NMT_REQUIRE_PEERS=1, so there
these tests fail rather than skip without them).

The model is `trained` (conftest.py): the smoke fr-en model trained longer, so that it says something.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from support.corpus import ROOT
from support.ties import TIE, tie_gap

pytestmark = pytest.mark.slow
PEERS = ROOT / ".venv-peers"
ARGOS = """import json, sys
import argostranslate.package, argostranslate.translate
argostranslate.package.install_from_path(sys.argv[1])
lines = json.load(sys.stdin)
out = {"translations": [argostranslate.translate.translate(line, sys.argv[2], sys.argv[3]) for line in lines]}
if len(sys.argv) > 4:  # LibreTranslate's fork: the formatting its server applies to a translation
    from libretranslate.language import improve_translation_formatting
    out["formatted"] = [improve_translation_formatting(a, b) for a, b in zip(lines, out["translations"])]
print(json.dumps(out, ensure_ascii=False))
"""


def peer(name: str) -> Path:
    python = PEERS / name / "bin" / "python"
    if not python.is_file():
        if os.environ.get("NMT_REQUIRE_PEERS"):
            pytest.fail(f"{python} is missing: `make peers` installs the real {name} from tests/peers/{name}.lock")
        pytest.skip(f"the real {name} is not installed here: run `make peers`")
    return python


def peer_env(home: Path) -> dict[str, str]:
    """A peer's process, offline: its data and caches in `home`, sentences split by the package's spaCy."""
    home.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARGOS_", "XDG_", "PYTHON"))}
    return {**env, "HOME": str(home), "ARGOS_CHUNK_TYPE": "SPACY", "ARGOS_PACKAGES_DIR": str(home / "packages")}


@pytest.fixture(scope="module")
def lines(trained: Path) -> list[str]:
    """100 test lines that spaCy's sentencizer keeps whole (Argos translates sentence by sentence)."""
    from nmt.text.tokenizer import import_spacy

    nlp = import_spacy().blank("fr")
    nlp.add_pipe("sentencizer")
    text = (trained / "data" / "validated" / "test_2016_flickr.fr").read_text(encoding="utf-8").splitlines()
    whole = [t for t in text if t.strip() and len(list(nlp(t).sents)) == 1]
    assert len(whole) >= 100
    return whole[:100]


PIPELINE = """import json, sys
from transformers import pipeline
translate = pipeline("translation", model=sys.argv[1], tokenizer=sys.argv[1], device="cpu")
print(json.dumps([translate(job["text"], num_beams=1, max_new_tokens=job["limit"])[0]["translation_text"]
                  for job in json.load(sys.stdin)], ensure_ascii=False))
"""


def agree(ours, generate, lines: list[str], beam: int) -> int:
    """How many of `lines` transformers decodes to our ids; every other line must part from ours at a tie."""
    import torch

    identical = 0
    for line in lines:
        src = ours.source_ids(next(iter(ours.tokenize([line])))[0])
        mine = ours.decode_batch([src])[0]
        limit = min(len(src) + ours.max_extra, ours.max_len - 1)  # our search's output limit, </s> counted
        with torch.no_grad():
            hf = generate(torch.tensor([src]), num_beams=beam, do_sample=False, max_new_tokens=limit,
                          length_penalty=0.0, early_stopping=False)[0].tolist()
        theirs = [t for t in hf[1:] if t not in (3, 0)]  # after the decoder start; </s> and <pad> dropped
        if theirs == mine:
            identical += 1
            continue
        # the code's own tie rule: greedy, both tokens where the two part; beam, both whole hypotheses,
        # scored by our model within TIE (alpha 0 = length_penalty 0: both rank by the sum of log-probs)
        gap = tie_gap(ours, src, mine, theirs, beam, limit=limit)
        assert abs(gap) < TIE, (line, mine, theirs, gap)
    return identical


def test_transformers_loads_the_marian_folder_and_decodes_as_we_do(trained: Path, lines: list[str],
                                                                    tmp_path: Path) -> None:
    from transformers import MarianMTModel, MarianTokenizer

    from nmt.config.evaluate import Decoding
    from nmt.decode.translator import Translator
    from nmt.export import hf_command
    from nmt.export.modelcard import verify_export

    out = tmp_path / "hf"
    assert hf_command.main(["--model", str(trained / "models" / "model.pt"), "--out", str(out),
                            "--data", str(trained / "data" / "validated")]) == 0
    tokenizer = MarianTokenizer.from_pretrained(str(out), local_files_only=True)
    model = MarianMTModel.from_pretrained(str(out), local_files_only=True).eval()
    greedy = Translator.from_file(trained / "models" / "model.pt", Decoding(beam_size=1))
    for line in lines:  # MarianTokenizer: our pieces, our ids, then </s>
        assert tokenizer(line)["input_ids"] == greedy.source_ids(next(iter(greedy.tokenize([line])))[0])
    assert sum(len(t) for t in greedy.decode_batch([greedy.source_ids(s[0]) for s in greedy.tokenize(lines)])) \
        > 5 * len(lines)  # it says something
    assert agree(greedy, model.generate, lines, beam=1) >= len(lines) - 5
    beam = Translator.from_file(trained / "models" / "model.pt", Decoding(beam_size=4, alpha=0.0))
    assert agree(beam, model.generate, lines, beam=4) >= len(lines) - 5
    # pipeline("translation"), removed in transformers 5, with transformers 4 (its own venv): our greedy text
    jobs = [{"text": line, "limit": min(len(greedy.source_ids(s[0])) + greedy.max_extra, greedy.max_len - 1)}
            for line, s in zip(lines, greedy.tokenize(lines))]
    done = subprocess.run([str(peer("transformers4")), "-c", PIPELINE, str(out)], input=json.dumps(jobs),
                          capture_output=True, text=True, env={**peer_env(tmp_path / "home"), "HF_HUB_OFFLINE": "1"},
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    texts = json.loads(done.stdout.splitlines()[-1])
    assert sum(a == b for a, b in zip(texts, greedy.translate(lines))) >= len(lines) - 5
    # the card: the model-index holds the committed scores of the ONNX package's card
    front = yaml.safe_load((out / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    card = json.loads((trained / "models" / "onnx" / "model.json").read_text())
    scores = {r["dataset"]["name"]: {m["type"]: m["value"] for m in r["metrics"]}
              for r in front["model-index"][0]["results"]}
    assert scores == {split: {"bleu": s["sacrebleu"], "chrf": s["chrf"]}
                      for split, s in card["evaluation"]["metrics"].items()}
    assert front["language"] == ["fr", "en"] and front["pipeline_tag"] == "translation"
    # a folder changed after export is refused
    verify_export(out, "transformers-marian", "export it again")
    (out / "vocab.json").write_text("{}")
    from nmt.errors import DataError

    with pytest.raises(DataError, match="vocab.json"):
        verify_export(out, "transformers-marian", "export it again")


def our_ct2(trained: Path, lines: list[str], compute_type: str) -> list[str]:
    """Our CTranslate2 model on `lines` with the search Argos runs: beam 4, length penalty 0.2, and its
    compute type: argostranslate's "auto" (int8 where the CPU has it: ARGOS_COMPUTE_TYPE's default), or the
    saved float32 ("default": LibreTranslate's fork of argostranslate passes no compute type for "auto")."""
    import ctranslate2

    from nmt.text.spm import SentencePiece

    sp = SentencePiece.load(trained / "models" / "ct2" / "sentencepiece.model")
    ct2 = ctranslate2.Translator(str(trained / "models" / "ct2" / "ctranslate2"), device="cpu",
                                 compute_type=compute_type)
    results = ct2.translate_batch([sp.encode(line) + ["</s>"] for line in lines], beam_size=4, num_hypotheses=1,
                                  length_penalty=0.2, replace_unknowns=True, max_batch_size=32, batch_type="tokens")
    return [sp.decode(r.hypotheses[0]) for r in results]


@pytest.fixture(scope="module")
def argos_package(trained: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from nmt.export import argos

    out = tmp_path_factory.mktemp("argos") / "fr_en.argosmodel"
    assert argos.main(["--model", str(trained / "models" / "ct2"), "--out", str(out)]) == 0
    return out


def run_peer(python: Path, package: Path, lines: list[str], home: Path, *extra: str) -> dict:
    done = subprocess.run([str(python), "-c", ARGOS, str(package), "fr", "en", *extra], input=json.dumps(lines),
                          capture_output=True, text=True, env=peer_env(home), timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_argostranslate_installs_the_package_and_translates_as_our_ctranslate2(
        trained: Path, lines: list[str], argos_package: Path, tmp_path: Path) -> None:
    got = run_peer(peer("argostranslate"), argos_package, lines, tmp_path / "home")["translations"]
    expected = our_ct2(trained, lines, "auto")
    assert sum(len(t.split()) for t in expected) > 3 * len(lines)  # it says something
    assert got == expected
    installed = tmp_path / "home" / "packages" / "translate-fr_en-1_0"
    metadata = json.loads((installed / "metadata.json").read_text())
    assert metadata["from_code"] == "fr" and metadata["to_code"] == "en"


def test_an_argos_package_changed_after_export_is_refused(argos_package: Path, tmp_path: Path) -> None:
    import zipfile

    from nmt.errors import DataError
    from nmt.export.argos import verify_package

    assert verify_package(argos_package)["kind"] == "argos-translate"
    changed = tmp_path / "changed.argosmodel"
    with zipfile.ZipFile(argos_package) as src, zipfile.ZipFile(changed, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            dst.writestr(item, b'{"from_code": "de"}' if item.filename.endswith("metadata.json") else data)
    with pytest.raises(DataError, match="metadata.json was changed"):
        verify_package(changed)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_libretranslate_serves_the_package(trained: Path, lines: list[str], argos_package: Path,
                                           tmp_path: Path) -> None:
    import httpx

    python = peer("libretranslate")
    home = tmp_path / "home"
    offline = run_peer(python, argos_package, lines[:5], home, "formatted")  # installs it, as an operator would
    port = free_port()
    server = subprocess.Popen([str(python.parent / "libretranslate"), "--host", "127.0.0.1", "--port", str(port),
                               "--load-only", "fr,en", "--disable-web-ui", "--threads", "1"],
                              env=peer_env(home), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, server.stdout.read()[-2000:] if server.stdout else ""
            try:
                languages = httpx.get(f"http://127.0.0.1:{port}/languages", timeout=5).json()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "LibreTranslate did not start in 180 s"
                time.sleep(1)
        assert {lang["code"] for lang in languages} == {"fr", "en"}
        served = [httpx.post(f"http://127.0.0.1:{port}/translate", timeout=60,
                             json={"q": line, "source": "fr", "target": "en"}).json()["translatedText"]
                  for line in lines[:5]]
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert served == offline["formatted"]
    assert offline["translations"] == our_ct2(trained, lines[:5], "default")


def test_exporting_a_model_the_format_cannot_hold_says_which_setting(tmp_path: Path) -> None:
    from nmt.errors import DataError
    from nmt.export.modelcard import check_portable

    with pytest.raises(DataError, match=r"vocab.kind: sentencepiece"):
        check_portable(False, False, "nmt export-hf")
    with pytest.raises(DataError, match=r"tokenize.lowercase: false"):
        check_portable(True, True, "an Argos Translate package")
    done = subprocess.run([sys.executable, "-m", "nmt.cli", "export-argos", "--model", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "models/ct2" in done.stderr and "Traceback" not in done.stderr
