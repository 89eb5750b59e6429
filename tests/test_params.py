"""Typed configuration: params.yaml sections into frozen dataclasses, and ConfigErrors that name
the file and the dotted key."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, make_params, repo_params, synthetic_pairs, write_corpus
from nmt.cli import main
from nmt.config import CorpusConfig, DataConfig, RemoteFile, TokenizeConfig, ValidateConfig, VocabConfig
from nmt.errors import ConfigError
from nmt.params import from_dict, load_section, read_yaml

PARAMS = ROOT / "params.yaml"
SECTIONS = {"data": DataConfig, "validate": ValidateConfig, "tokenize": TokenizeConfig, "vocab": VocabConfig}


def write_params(tmp_path: Path, params: dict, name: str = "params.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def set_key(params: dict, dotted: str, value) -> None:
    """Set `a.b[0].c` in a nested params dict."""
    node = params
    parts = dotted.replace("[", ".[").split(".")
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    last = parts[-1]
    if last.startswith("["):
        node[int(last[1:-1])] = value
    else:
        node[last] = value


def del_key(params: dict, dotted: str) -> None:
    node = params
    parts = dotted.replace("[", ".[").split(".")
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    del node[parts[-1]]


@pytest.fixture
def tiny_params(tmp_path) -> dict:
    """The repository's params with a small 'tiny' corpus (file:// URLs) added next to multi30k."""
    params = repo_params()
    corpus = write_corpus(tmp_path / "src", {"train": synthetic_pairs(5), "val": synthetic_pairs(3, seed=1)})
    params["data"]["corpora"]["tiny"] = corpus
    params["data"]["corpus"] = "tiny"
    return params


def load_error(path: Path, section: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_section(path, section, SECTIONS[section])
    msg = str(err.value)
    assert "\n" not in msg  # one line, for the CLI
    return msg


# --------------------------------------------------------------------------- the repository's params.yaml


def test_repository_params_load_every_section():
    data = load_section(PARAMS, "data", DataConfig)
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

    validate = load_section(PARAMS, "validate", ValidateConfig)
    assert validate.filter_splits == ("train",) and validate.min_pairs == 100 and validate.min_train_pairs == 1000
    assert isinstance(validate.max_length_ratio, float)

    tokenize = load_section(PARAMS, "tokenize", TokenizeConfig)
    assert tokenize == TokenizeConfig(lowercase=False, max_tokens=128)

    vocab = load_section(PARAMS, "vocab", VocabConfig)
    assert vocab.kind == "word" and vocab.joint is False and vocab.min_freq == 2 and vocab.max_size is None
    assert vocab.min_size == 1000 and vocab.max_oov_rate == 0.06


def test_repository_params_has_no_keys_unknown_to_the_config():
    """Round trip: every key in params.yaml is a field (otherwise load_section would fail)."""
    raw = repo_params()
    for section, cls in SECTIONS.items():
        cfg = load_section(PARAMS, section, cls)
        fields = {f.name for f in dataclasses.fields(cls)}
        assert set(raw[section]) <= fields
        for key, value in raw[section].items():
            if not isinstance(value, (dict, list)):
                assert getattr(cfg, key) == value


# --------------------------------------------------------------------------- wrong types


@pytest.mark.parametrize(
    ("dotted", "value", "expected"),
    [
        ("vocab.min_freq", "two", "expected int, got str ('two')"),
        ("vocab.min_freq", True, "expected int, got bool (True)"),
        ("vocab.min_freq", 2.5, "expected int, got float"),
        ("vocab.max_size", "big", "expected int or null, got str"),
        ("vocab.max_size", False, "expected int or null, got bool"),
        ("vocab.kind", "char", "must be one of 'word', 'bpe'"),
        ("vocab.joint", "yes please", "expected bool, got str"),
        ("vocab.joint", 1, "expected bool, got int"),
        ("vocab.max_oov_rate", "5%", "expected a number, got str"),
        ("vocab.max_oov_rate", True, "expected a number, got bool"),
        ("validate.max_words", None, "expected int, got null"),
        ("validate.filter_splits", "train", "expected a list, got str"),
        ("validate.filter_splits", ["train", 3], "validate.filter_splits[1]: expected str, got int (3)"),
        ("tokenize.lowercase", "false", "expected bool, got str"),
        ("tokenize.max_tokens", [128], "expected int, got list"),
        ("data.retries", True, "expected int, got bool"),
        ("data.timeout_s", "60s", "expected a number, got str"),
        ("data.mirror", 5, "expected str or null, got int"),
        ("data.direction", ["de", "en"], "expected str, got list"),
        ("data.corpora", ["multi30k"], "expected a mapping, got list"),
        ("data.corpora.multi30k.languages", ["de"], "expected a list of 2 items, got 1"),
        ("data.corpora.multi30k.languages", "de-en", "expected a list, got str"),
        ("data.corpora.multi30k.files", {"name": "x"}, "expected a list, got dict"),
        ("data.corpora.multi30k.files[0].sha256", 123, "expected str, got int"),
        ("data.corpora.multi30k.files[2]", "val.de.gz", "expected a mapping, got str"),
        ("data.corpora.multi30k.splits.train", ["train.de.gz"], "expected a mapping, got list"),
    ],
)
def test_wrong_type_names_file_and_dotted_key(tmp_path, dotted, value, expected):
    params = repo_params()
    set_key(params, dotted, value)
    path = write_params(tmp_path, params)
    msg = load_error(path, dotted.split(".")[0])
    assert msg.startswith(f"{path}: {dotted}"), msg  # a list item is reported as key[i]
    assert expected in msg


def test_wrong_type_message_format_exactly(tmp_path):
    params = repo_params()
    params["vocab"]["min_freq"] = "two"
    path = write_params(tmp_path, params)
    assert load_error(path, "vocab") == f"{path}: vocab.min_freq: expected int, got str ('two')"


def test_whole_section_of_wrong_type(tmp_path):
    params = repo_params()
    params["tokenize"] = ["lowercase"]
    path = write_params(tmp_path, params)
    assert "tokenize: expected a mapping, got list" in load_error(path, "tokenize")
    params["tokenize"] = None  # `tokenize:` with nothing under it
    path = write_params(tmp_path, params)
    assert "tokenize: expected a mapping, got null" in load_error(path, "tokenize")


def test_int_is_accepted_where_a_float_is_expected(tmp_path):
    params = repo_params()
    params["validate"]["max_length_ratio"] = 3
    params["data"]["timeout_s"] = 10
    path = write_params(tmp_path, params)
    validate = load_section(path, "validate", ValidateConfig)
    assert validate.max_length_ratio == 3.0 and isinstance(validate.max_length_ratio, float)
    assert isinstance(load_section(path, "data", DataConfig).timeout_s, float)


# --------------------------------------------------------------------------- out-of-range values


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("vocab.min_freq", 0),
        ("vocab.max_size", 0),
        ("vocab.bpe_merges", -1),
        ("vocab.max_oov_rate", 1.5),
        ("validate.max_words", 0),
        ("validate.max_length_ratio", 0.5),
        ("validate.min_pairs", 0),
        ("validate.min_train_pairs", 0),
        ("validate.max_duplicate_rate", -0.1),
        ("validate.max_filtered_rate", 2.0),
        ("tokenize.max_tokens", 0),
        ("data.retries", -1),
        ("data.backoff_s", -1.0),
        ("data.timeout_s", 0),
        ("data.corpora.multi30k.files[0].sha256", "ABC"),
        ("data.corpora.multi30k.files[0].sha256", "F" * 64),
        ("data.corpora.multi30k.files[0].name", "../train.de.gz"),
        ("data.corpora.multi30k.files[0].url", "github.com/multi30k/dataset/train.de.gz"),
        ("data.corpora.multi30k.files[0].url", "ftp://example.invalid/train.de.gz"),
        ("data.corpora.multi30k.languages", ["de", "de"]),
        ("data.corpora.multi30k.languages", ["de", "English"]),
    ],
)
def test_out_of_range_value_names_its_own_key(tmp_path, dotted, value):
    params = repo_params()
    set_key(params, dotted, value)
    path = write_params(tmp_path, params)
    msg = load_error(path, dotted.split(".")[0])
    # the key at fault, not a neighbour: validate.min_train_pairs is not reported as validate.min_pairs
    assert msg.startswith(f"{path}: {dotted}: "), msg


def test_archive_member_output_name_must_be_plain(tmp_path, tiny_params):
    tiny_params["data"]["corpora"]["tiny"]["files"][0]["members"] = {"../evil.de": "corpus/train.de"}
    path = write_params(tmp_path, tiny_params)
    msg = load_error(path, "data")
    assert "data.corpora.tiny.files[0].members.../evil.de" in msg and "plain file name" in msg


# --------------------------------------------------------------------------- unknown and missing keys


@pytest.mark.parametrize(
    ("dotted", "section"),
    [("vocab.min_frequency", "vocab"), ("validate.max_word", "validate"), ("data.corpus_name", "data"),
     ("data.corpora.multi30k.language", "data"), ("data.corpora.multi30k.files[1].md5", "data")],
)
def test_unknown_key_is_named_with_the_known_ones(tmp_path, dotted, section):
    params = repo_params()
    set_key(params, dotted, 1)
    path = write_params(tmp_path, params)
    msg = load_error(path, section)
    assert msg.startswith(f"{path}: {dotted}: unknown key (known keys: "), msg


def test_unknown_keys_of_mixed_yaml_types_are_reported(tmp_path):
    """YAML keys need not be strings (`1:`, `on:`, `null:`); the error must still be a ConfigError."""
    path = tmp_path / "params.yaml"
    path.write_text("vocab:\n  min_freq: 2\n  1: x\n  foo: y\n  null: z\n")
    msg = load_error(path, "vocab")
    assert "unknown key" in msg and "vocab." in msg


@pytest.mark.parametrize(
    ("dotted", "section"),
    [("data.corpus", "data"), ("data.direction", "data"), ("data.corpora", "data"),
     ("data.corpora.multi30k.languages", "data"), ("data.corpora.multi30k.splits", "data"),
     ("data.corpora.multi30k.files[0].sha256", "data"), ("data.corpora.multi30k.files[3].url", "data")],
)
def test_missing_required_key_is_named(tmp_path, dotted, section):
    params = repo_params()
    del_key(params, dotted)
    path = write_params(tmp_path, params)
    assert load_error(path, section) == f"{path}: {dotted}: missing required key"


def test_optional_keys_take_their_defaults(tmp_path):
    params = repo_params()
    params["vocab"] = {}
    params["data"] = {k: v for k, v in params["data"].items() if k in ("corpus", "direction", "corpora")}
    path = write_params(tmp_path, params)
    assert load_section(path, "vocab", VocabConfig) == VocabConfig()
    data = load_section(path, "data", DataConfig)
    assert (data.mirror, data.retries, data.backoff_s, data.timeout_s) == (None, 4, 1.0, 60.0)


def test_missing_section(tmp_path):
    params = repo_params()
    del params["tokenize"]
    path = write_params(tmp_path, params)
    msg = load_error(path, "tokenize")
    assert str(path) in msg and "missing section 'tokenize:'" in msg
    assert load_section(path, "vocab", VocabConfig).kind == "word"  # the other sections still load


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


# --------------------------------------------------------------------------- corpus and direction


def test_corpus_not_configured_lists_configured_corpora(tmp_path, tiny_params):
    tiny_params["data"]["corpus"] = "wmt14"
    path = write_params(tmp_path, tiny_params)
    msg = load_error(path, "data")
    assert msg.startswith(f"{path}: data.corpus: 'wmt14' is not configured")
    assert "configured: multi30k, tiny" in msg


def test_no_corpora_at_all(tmp_path):
    params = repo_params()
    params["data"]["corpora"] = {}
    path = write_params(tmp_path, params)
    msg = load_error(path, "data")
    assert "data.corpus" in msg and "configured: none" in msg


def test_switching_corpus_is_configuration_only(tmp_path, tiny_params):
    path = write_params(tmp_path, tiny_params)
    data = load_section(path, "data", DataConfig)
    assert data.corpus == "tiny" and [f.name for f in data.active.files] == [
        "train.de.gz", "train.en.gz", "val.de.gz", "val.en.gz"]
    assert data.active.test_splits == []
    assert set(data.corpora) == {"multi30k", "tiny"}


@pytest.mark.parametrize(("direction", "src", "tgt"), [("de-en", "de", "en"), ("en-de", "en", "de")])
def test_direction(tmp_path, direction, src, tgt):
    params = repo_params()
    params["data"]["direction"] = direction
    data = load_section(write_params(tmp_path, params), "data", DataConfig)
    assert (data.src_lang, data.tgt_lang) == (src, tgt)
    assert set(data.active.languages) == {src, tgt}


@pytest.mark.parametrize("direction", ["de-fr", "fr-en", "de-de", "deen", "de-en-fr", "", "de_en"])
def test_bad_direction_names_data_direction(tmp_path, direction):
    params = repo_params()
    params["data"]["direction"] = direction
    path = write_params(tmp_path, params)
    msg = load_error(path, "data")
    assert msg.startswith(f"{path}: data.direction: "), msg
    assert repr(direction) in msg


def test_direction_with_language_outside_corpus_mentions_corpus_languages(tmp_path):
    params = repo_params()
    params["data"]["direction"] = "en-fr"
    msg = load_error(write_params(tmp_path, params), "data")
    assert "data.direction" in msg and "'multi30k'" in msg and "['de', 'en']" in msg


# --------------------------------------------------------------------------- splits vs files


def test_split_referencing_unknown_file_names_the_split_key(tmp_path, tiny_params):
    tiny_params["data"]["corpora"]["tiny"]["splits"]["val"]["de"] = "valid.de.gz"
    path = write_params(tmp_path, tiny_params)
    msg = load_error(path, "data")
    assert msg.startswith(f"{path}: data.corpora.tiny.splits.val.de: 'valid.de.gz' is not produced"), msg
    assert "train.de.gz" in msg  # the known names are listed


def test_split_may_reference_an_archive_member_output(tmp_path, tiny_params):
    corpus = tiny_params["data"]["corpora"]["tiny"]
    corpus["files"] = [{"name": "c.tgz", "url": "https://example.invalid/c.tgz", "sha256": "0" * 64,
                        "members": {"train.de": "c/train.de", "train.en": "c/train.en",
                                    "val.de": "c/val.de", "val.en": "c/val.en"}}]
    corpus["splits"] = {s: {"de": f"{s}.de", "en": f"{s}.en"} for s in ("train", "val")}
    data = load_section(write_params(tmp_path, tiny_params), "data", DataConfig)
    assert data.active.produced_files() == ["train.de", "train.en", "val.de", "val.en"]
    assert dict(data.active.files[0].members)["val.en"] == "c/val.en"

    corpus["splits"]["val"]["en"] = "c.tgz"  # the archive itself is not left in data/raw
    msg = load_error(write_params(tmp_path, tiny_params), "data")
    assert "data.corpora.tiny.splits.val.en" in msg


@pytest.mark.parametrize("split", ["train", "val"])
def test_required_split_missing(tmp_path, tiny_params, split):
    del tiny_params["data"]["corpora"]["tiny"]["splits"][split]
    msg = load_error(write_params(tmp_path, tiny_params), "data")
    assert "data.corpora.tiny.splits" in msg and f"missing split '{split}'" in msg


def test_split_with_wrong_languages(tmp_path, tiny_params):
    tiny_params["data"]["corpora"]["tiny"]["splits"]["val"] = {"de": "val.de.gz", "fr": "val.en.gz"}
    msg = load_error(write_params(tmp_path, tiny_params), "data")
    assert "data.corpora.tiny.splits.val" in msg and "one file per language" in msg


def test_inactive_corpus_is_validated_too(tmp_path, tiny_params):
    """A broken entry under data.corpora fails even when another corpus is selected."""
    tiny_params["data"]["corpora"]["multi30k"]["files"][0]["sha256"] = "nope"
    msg = load_error(write_params(tmp_path, tiny_params), "data")
    assert "data.corpora.multi30k.files[0].sha256" in msg


# --------------------------------------------------------------------------- immutability, from_dict


def test_config_objects_are_frozen():
    data = load_section(PARAMS, "data", DataConfig)
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.corpus = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.active.files[0].sha256 = "0" * 64  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        data.active.languages = ("en", "de")  # type: ignore[misc]
    for section in ("validate", "tokenize", "vocab"):
        cfg = load_section(PARAMS, section, SECTIONS[section])
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
    assert load_section(PARAMS, "vocab", VocabConfig) == load_section(PARAMS, "vocab", VocabConfig)
    assert load_section(PARAMS, "data", DataConfig) == load_section(PARAMS, "data", DataConfig)


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
