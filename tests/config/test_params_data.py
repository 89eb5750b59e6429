"""The data section of params.yaml: choosing the corpus and the direction, splits that must
name files the corpus produces, archive member outputs, and inactive corpora validated too."""

from __future__ import annotations

import pytest

from nmt.config.params import load_params
from support.corpus import repo_params, synthetic_pairs, write_corpus
from support.params import load_error, write_params


@pytest.fixture
def tiny_params(tmp_path) -> dict:
    """The repository's params with a small 'tiny' corpus (file:// URLs) added next to multi30k."""
    params = repo_params()
    corpus = write_corpus(tmp_path / "src", {"train": synthetic_pairs(5), "val": synthetic_pairs(3, seed=1)})
    params["data"]["corpora"]["tiny"] = corpus
    params["data"]["corpus"] = "tiny"
    return params


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
    data = load_params(path).data
    assert data.corpus == "tiny" and [f.name for f in data.active.files] == [
        "train.de.gz", "train.en.gz", "val.de.gz", "val.en.gz"]
    assert data.active.test_splits == []
    assert set(data.corpora) == {"multi30k", "tiny"}


@pytest.mark.parametrize(("direction", "src", "tgt"), [("de-en", "de", "en"), ("en-de", "en", "de")])
def test_direction(tmp_path, direction, src, tgt):
    params = repo_params()
    params["data"]["direction"] = direction
    data = load_params(write_params(tmp_path, params)).data
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
    data = load_params(write_params(tmp_path, tiny_params)).data
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


# --------------------------------------------------------------------------- archive members


def test_archive_member_output_name_must_be_plain(tmp_path, tiny_params):
    tiny_params["data"]["corpora"]["tiny"]["files"][0]["members"] = {"../evil.de": "corpus/train.de"}
    path = write_params(tmp_path, tiny_params)
    msg = load_error(path, "data")
    assert "data.corpora.tiny.files[0].members.../evil.de" in msg and "plain file name" in msg
