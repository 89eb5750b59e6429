"""Hostile glossaries (issue: one 64 KB request, a 400-word term over 16 texts of 2,000 words,
froze the server: the matching was quadratic in the term's length and ran on the event loop).
The work is compared, never timed against a limit: the CPU time of one input against 4x it."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from nmt.translate import glossary as glossary_module
from nmt.translate.glossary import MAX_REQUEST_TERMS, MAX_TERM_WORDS, Glossary, GlossaryError
from support.serve import ask, post


def cpu_seconds(function, *args, repeats: int = 5) -> float:
    """The least CPU time of `repeats` calls: a ratio of two of these is the test, never one alone."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        function(*args)
        best = min(best, time.process_time() - started)
    return best


def worst(words: int) -> Glossary:
    """A term that matches for `words - 1` words of a run of `w` and then fails: every start walks it."""
    return Glossary.from_mapping({" ".join(["w"] * (words - 1) + ["x"]): "y"})


def test_the_matching_grows_with_the_terms_length_not_its_square(monkeypatch) -> None:
    """With the cap on a term's length lifted, 4x the term costs about 4x (the old matching: about
    16x; its 400-word terms froze the server); under the cap the work per word is bounded."""
    monkeypatch.setattr(glossary_module, "MAX_TERM_WORDS", 10_000, raising=False)
    text = " ".join(["w"] * 2000)
    short, long = cpu_seconds(worst(100).find, text, repeats=3), cpu_seconds(worst(400).find, text, repeats=3)
    assert long < 8 * short, (short, long)


def test_the_matching_grows_with_the_text() -> None:
    glossary = worst(MAX_TERM_WORDS)
    small, large = cpu_seconds(glossary.find, " ".join(["w"] * 500)), cpu_seconds(glossary.find, " ".join(["w"] * 2000))
    assert large < 8 * small, (small, large)


def test_a_term_longer_than_the_limit_and_too_many_terms_are_refused_naming_the_limit() -> None:
    with pytest.raises(GlossaryError, match=f"more than a term may have \\({MAX_TERM_WORDS}\\)"):
        Glossary.from_mapping({" ".join(["w"] * (MAX_TERM_WORDS + 1)): "y"})
    with pytest.raises(GlossaryError, match=f"more than a request may give \\({MAX_REQUEST_TERMS}\\)"):
        Glossary.from_mapping({f"term{i}": "t" for i in range(MAX_REQUEST_TERMS + 1)})
    with pytest.raises(GlossaryError, match=f"more than a request may give \\({MAX_REQUEST_TERMS}\\)"):
        Glossary(()).keeping([f"span{i}" for i in range(MAX_REQUEST_TERMS + 1)])


@pytest.mark.network
def test_the_server_answers_400_for_a_term_over_the_limit(start) -> None:
    r = post(start().url, json=ask("Ein Hund.", glossary={" ".join(["w"] * 400): "y"}))
    assert r.status_code == 400 and f"({MAX_TERM_WORDS})" in r.json()["error"], r.text


@pytest.mark.network
def test_the_terms_are_matched_off_the_event_loop(start, monkeypatch) -> None:
    s = start()
    entered, gate, real_find = threading.Event(), threading.Event(), Glossary.find

    def held(self, sentence):  # a match that takes as long as the test says
        entered.set()
        gate.wait(30)
        return real_find(self, sentence)

    monkeypatch.setattr(Glossary, "find", held)
    answers: list[int] = []
    client = threading.Thread(target=lambda: answers.append(
        post(s.url, json=ask("Ein Hund.", glossary={"Hund": "dog"})).status_code))
    client.start()
    try:
        assert entered.wait(30)
        assert httpx.get(f"{s.url}/livez", timeout=10).status_code == 200  # the loop is free meanwhile
    finally:
        gate.set()
        client.join(60)
    assert answers == [200]
