"""params.yaml keys of any section: wrong types, out-of-range values, unknown keys and missing
required keys each give a ConfigError naming the file and the dotted key at fault."""

from __future__ import annotations

import re

import pytest

from nmt.config.data import VocabConfig
from nmt.config.params import load_params
from support.corpus import repo_params
from support.params import load_error, write_params


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
        ("promote.max_bleu_drop", "0.5", "expected a number, got str"),
        ("promote.resamples", 1000.0, "expected int, got float"),
        ("profile.train_sentences", "many", "expected int, got str"),
        ("profile.dev_split", None, "expected str, got null"),
        ("drift.max_psi.pieces", "0.2", "expected a number, got str"),
        ("drift.retrain_on_drift", "yes", "expected bool, got str"),
        ("drift.max_psi", [0.2], "expected a mapping, got list"),
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
    validate = load_params(path).validate
    assert validate.max_length_ratio == 3.0 and isinstance(validate.max_length_ratio, float)
    assert isinstance(load_params(path).data.timeout_s, float)


# --------------------------------------------------------------------------- out-of-range values


@pytest.mark.parametrize(
    ("dotted", "value"),
    [
        ("vocab.min_freq", 0),
        ("vocab.max_size", 0),
        ("vocab.bpe_merges", -1),
        ("vocab.max_oov_rate", 1.5),
        ("vocab.min_size", -10),
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
        ("promote.max_bleu_drop", -0.5),
        ("promote.stage", "prod stage"),
        ("promote.alpha", 1.5),
        ("promote.min_speed_ratio", 0.0),
        ("promote.resamples", 10),
        ("promote.seed", -1),
        ("promote.threads", -2),
        ("profile.train_sentences", 0),
        ("profile.dev_sentences", -5),
        ("profile.dev_split", "../val"),
        ("profile.seed", -1),
        ("profile.threads", -1),
        ("profile.batch_size", 0),
        ("drift.max_psi.pieces", 0.0),
        ("drift.max_psi.language", -0.2),
        ("drift.epsilon", 0.5),
        ("drift.min_sentences", 0),
        ("drift.min_detected", 0),
        ("drift.hours", 0.0),
        ("drift.retrain_deployment", "weekly-retrain"),
    ],
)
def test_out_of_range_value_names_its_own_key(tmp_path, dotted, value):
    params = repo_params()
    set_key(params, dotted, value)
    path = write_params(tmp_path, params)
    msg = load_error(path, dotted.split(".")[0])
    # the key at fault, not a neighbour: validate.min_train_pairs is not reported as validate.min_pairs
    assert msg.startswith(f"{path}: {dotted}: "), msg


# --------------------------------------------------------------------------- unknown and missing keys


@pytest.mark.parametrize(
    ("dotted", "section"),
    [("vocab.min_frequency", "vocab"), ("validate.max_word", "validate"), ("data.corpus_name", "data"),
     ("data.corpora.multi30k.language", "data"), ("data.corpora.multi30k.files[1].md5", "data"),
     ("drift.max_psi.lengths", "drift"), ("profile.sentences", "profile")],
)
def test_unknown_key_is_named_with_the_known_ones(tmp_path, dotted, section):
    params = repo_params()
    set_key(params, dotted, 1)
    path = write_params(tmp_path, params)
    msg = load_error(path, section)
    assert re.match(rf"{re.escape(f'{path}: {dotted}')}: unknown key \((did you mean \w+\? )?known keys: ", msg), msg
    if dotted in ("vocab.min_frequency", "validate.max_word", "profile.sentences"):  # a near key: named first
        assert "did you mean" in msg, msg


def test_unknown_keys_of_mixed_yaml_types_are_reported(tmp_path):
    """YAML keys need not be strings (`1:`, `on:`, `null:`); the error must still be a ConfigError."""
    params = repo_params()
    params["vocab"].update({1: "x", "foo": "y", None: "z"})
    path = write_params(tmp_path, params)
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
    assert load_error(path, section).startswith(f"{path}: {dotted}: missing required key")


@pytest.mark.parametrize("dotted", ["vocab.min_freq", "data.retries", "train.warmup", "export.opset",
                                    "evaluate.beam_size", "model.dropout", "profile.seed", "drift.min_sentences"])
def test_params_yaml_states_every_key_no_silent_defaults(tmp_path, dotted):
    """A key deleted from params.yaml stops the stage, naming it (the dataclass defaults serve
    the Python API only)."""
    params = repo_params()
    del_key(params, dotted)
    path = write_params(tmp_path, params)
    msg = load_error(path, dotted.split(".")[0])
    assert msg.startswith(f"{path}: {dotted}: missing required key") and "params.yaml" in msg, msg
    assert VocabConfig().min_freq == 2  # the Python API keeps its defaults


def test_unknown_section_is_named_with_the_known_ones(tmp_path):
    params = repo_params()
    params["vocabb"] = params["vocab"]
    path = write_params(tmp_path, params)
    msg = load_error(path, "vocab")
    assert msg.startswith(f"{path}: vocabb: unknown section (did you mean vocab? known sections: data, validate, "
                          "tokenize, vocab, model, train, evaluate, export, profile, promote, drift)"), msg
