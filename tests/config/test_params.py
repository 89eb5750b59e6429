"""Typed configuration: params.yaml sections into frozen dataclasses (the repository's file, the
file itself missing, empty or not valid YAML, immutability, from_dict) and the CLI's one-line
ConfigErrors that name the file and the dotted key."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import yaml

from nmt.cli import main
from nmt.config.data import (
    CorpusConfig,
    DataConfig,
    RemoteFile,
    TokenizeConfig,
    VocabConfig,
)
from nmt.config.loader import from_dict, read_yaml
from nmt.config.params import load_params
from nmt.errors import ConfigError
from support.corpus import make_params, repo_params
from support.params import PARAMS, SECTIONS, load_error, write_params

# --------------------------------------------------------------------------- the repository's params.yaml


def test_repository_params_load_every_section():
    data = load_params(PARAMS).data
    assert data.corpus == "multi30k" and data.direction == "de-en"
    assert (data.src_lang, data.tgt_lang) == ("de", "en")
    assert data.mirror is None and data.retries == 4 and data.backoff_s == 1.0 and data.timeout_s == 60.0
    corpus = data.active
    assert isinstance(corpus, CorpusConfig) and corpus.languages == ("de", "en")
    assert len(corpus.files) == 6 and all(isinstance(f, RemoteFile) and not f.members for f in corpus.files)
    assert all(f.url.startswith("https://") and len(f.sha256) == 64 for f in corpus.files)
    assert list(corpus.splits) == ["train", "val", "test_2016_flickr"]
    assert corpus.test_splits == ["test_2016_flickr"]
    assert dict(corpus.splits["train"]) == {"de": "train.de.gz", "en": "train.en.gz"}
    assert sorted(corpus.produced_files()) == sorted(f.name for f in corpus.files)

    validate = load_params(PARAMS).validate
    assert validate.filter_splits == ("train",) and validate.min_pairs == 100 and validate.min_train_pairs == 1000
    assert isinstance(validate.max_length_ratio, float)

    tokenize = load_params(PARAMS).tokenize
    assert tokenize == TokenizeConfig(lowercase=False, max_tokens=128)

    vocab = load_params(PARAMS).vocab
    assert vocab.kind == "bpe" and vocab.min_freq == 2 and vocab.max_size is None  # open vocabulary
    assert vocab.min_size == 1000 and vocab.max_oov_rate == 0.06


def test_repository_params_has_no_keys_unknown_to_the_config():
    """Round trip: every key in params.yaml is a field (otherwise load_params would fail)."""
    raw = repo_params()
    for section, cls in SECTIONS.items():
        cfg = getattr(load_params(PARAMS), section)
        fields = {f.name for f in dataclasses.fields(cls)}
        assert set(raw[section]) <= fields
        for key, value in raw[section].items():
            if not isinstance(value, (dict, list)):
                assert getattr(cfg, key) == value


# --------------------------------------------------------------------------- the params file itself


def test_missing_section(tmp_path):
    params = repo_params()
    del params["tokenize"]
    path = write_params(tmp_path, params)
    msg = load_error(path, "tokenize")
    assert msg == f"{path}: missing section 'tokenize:' (see params.yaml in the repository)"


def test_empty_file_has_no_sections(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("# nothing yet\n")
    assert "missing section 'data:'" in load_error(path, "data")


def test_top_level_must_be_a_mapping(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("- data\n- vocab\n")
    msg = load_error(path, "vocab")
    assert str(path) in msg and "mapping" in msg


def test_yaml_syntax_error_names_the_line(tmp_path):
    text = PARAMS.read_text().splitlines()
    lineno = next(i for i, line in enumerate(text, start=1) if line.startswith("vocab:")) + 2
    text[lineno - 1] = "  joint: [false"  # unclosed flow sequence
    path = tmp_path / "params.yaml"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(ConfigError) as err:
        read_yaml(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: line ") and "invalid YAML" in msg
    reported = int(msg.split(" line ")[1].split(":")[0])
    assert lineno <= reported <= lineno + 1  # the parser notices at the bad line or the one after


def test_yaml_tab_indentation_error_names_the_line(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_text("vocab:\n  kind: word\n\tmin_freq: 2\n")
    msg = load_error(path, "vocab")
    assert f"{path}: line 3: invalid YAML" in msg


def test_missing_params_file(tmp_path):
    path = tmp_path / "nowhere" / "params.yaml"
    msg = load_error(path, "data")
    assert str(path) in msg and "not found" in msg and "--params" in msg


def test_params_file_not_utf8(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_bytes(b"vocab:\n  kind: w\xf6rd\n")
    msg = load_error(path, "vocab")
    assert str(path) in msg and "cannot read" in msg


# --------------------------------------------------------------------------- immutability, from_dict


def test_config_objects_are_frozen():
    data = load_params(PARAMS).data
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.corpus = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.active.files[0].sha256 = "0" * 64  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.active.languages = ("en", "de")  # type: ignore[misc]
    for section in ("validate", "tokenize", "vocab"):
        cfg = getattr(load_params(PARAMS), section)
        field = dataclasses.fields(cfg)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(cfg, field, getattr(cfg, field))
    # nested containers are read-only too
    with pytest.raises(TypeError):
        data.corpora["x"] = data.active  # type: ignore[index]
    with pytest.raises(TypeError):
        data.active.splits["train"]["de"] = "other.gz"  # type: ignore[index]
    assert isinstance(data.active.files, tuple)


def test_from_dict_names_the_given_key_and_source():
    with pytest.raises(ConfigError) as err:
        from_dict(VocabConfig, {"min_freq": "two"}, key="vocab")
    assert str(err.value) == "params: vocab.min_freq: expected int, got str ('two')"
    with pytest.raises(ConfigError, match=r"^custom\.yaml: stage\.vocab\.kind: must be one of"):
        from_dict(VocabConfig, {"kind": "chars"}, key="stage.vocab", source="custom.yaml")


def test_from_dict_does_not_mutate_its_input():
    raw = copy.deepcopy(repo_params()["data"])
    snapshot = copy.deepcopy(raw)
    from_dict(DataConfig, raw, key="data")
    assert raw == snapshot


def test_configs_compare_by_value():
    assert load_params(PARAMS).vocab == load_params(PARAMS).vocab
    assert load_params(PARAMS).data == load_params(PARAMS).data


def test_early_stopping_on_bleu_needs_bleu_sentences(tmp_path):
    """train.early_stop_metric: val_bleu with train.val_bleu_sentences: 0 would watch a metric that
    is never computed: one error naming both keys and the fix."""
    params = repo_params()
    params["train"].update(early_stop_metric="val_bleu", val_bleu_sentences=0)
    path = write_params(tmp_path, params)
    msg = load_error(path, "train")
    assert msg.startswith(f"{path}: train.early_stop_metric: val_bleu needs train.val_bleu_sentences > 0"), msg
    assert "train.early_stop_metric: val_loss" in msg
    params["train"]["early_stop_metric"] = "val_loss"  # the fix it names loads
    assert load_params(write_params(tmp_path, params)).train.val_bleu_sentences == 0


# --------------------------------------------------------------------------- CLI


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("validate", "min_pairs", "many"), ("validate", "max_words", True), ("data", "retries", "4"),
     ("validate", "min_train_pairs", 0)],
)
def test_cli_validate_wrong_key_is_a_one_line_error(tmp_path, tiny_corpus, capsys, section, key, value):
    params = make_params(tmp_path, tiny_corpus)
    raw = yaml.safe_load(params.read_text())
    raw[section][key] = value
    params.write_text(yaml.safe_dump(raw, sort_keys=False))
    out = tmp_path / "validated"
    rc = main(["validate", "--params", str(params), "--raw", str(tmp_path / "raw"), "--out", str(out),
               "--reports", str(tmp_path / "reports")])
    err = capsys.readouterr().err
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"nmt validate: error: {params}: {section}.{key}: "), lines[0]
    assert "Traceback" not in err
    assert not out.exists() and not (tmp_path / "reports").exists()  # nothing ran


def test_cli_missing_params_file(tmp_path, capsys):
    missing = tmp_path / "params.yaml"
    rc = main(["validate", "--params", str(missing), "--raw", str(tmp_path), "--out", str(tmp_path / "o"),
               "--reports", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert rc == 1 and len(err.strip().splitlines()) == 1
    assert str(missing) in err and "not found" in err and "Traceback" not in err


def test_test_sets_by_direction_and_their_floors(tmp_path) -> None:
    """The general configuration scores each direction on its own sets, with per-set floors."""
    from nmt.config.evaluate import EvaluateConfig

    cfg = EvaluateConfig(test_sets=("flickr", "news-de", "news-en"), min_bleu=20.0,
                         test_set_directions={"news-de": "de-en", "news-en": "en-de"}, min_bleu_by_set={"news-de": 3.0})
    assert cfg.test_sets_for("de-en") == ("flickr", "news-de") and cfg.test_sets_for("en-de") == ("flickr", "news-en")
    assert cfg.floor("news-de") == 3.0 and cfg.floor("flickr") == 20.0
    from nmt.config.loader import InvalidValue

    with pytest.raises(InvalidValue, match="are not in test_sets"):
        EvaluateConfig(test_sets=("flickr",), min_bleu_by_set={"news": 3.0})
