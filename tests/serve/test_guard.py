"""The loop and length guard: a hypothesis that repeats itself or runs on is
replaced by the next good one of the beam, or the greedy one; what the source repeats is no loop."""

from __future__ import annotations

import re

import httpx
import pytest

from nmt.decode.lines import LineTranslator
from nmt.translate.guard import absurd_length, choose, cut_loop, loops
from support.serve import ThreadServer, ask, post

SHORT = ["Salat", "Hallo", "Anna", "Berlin", "42", "ja", "Danke!", "Herr Müller", "3,5 %", "ok"]


@pytest.mark.parametrize("translation, source, looping", [
    ("salad salad salad salad", "Salat", True),                         # LibreTranslate #46
    ("a man on a bike on a bike on a bike", "Ein Mann auf dem Rad", True),  # a bigram... trigram run
    ("ha ha ha", "ha ha ha", False),                                    # the source repeats it too
    ("very very good", "sehr sehr gut", False),                          # two copies: a word, not a loop
    ("A man is riding a bike.", "Ein Mann fährt Rad.", False),
])
def test_loops(translation: str, source: str, looping: bool) -> None:
    assert loops(translation, source) is looping


def test_lengths_and_cuts() -> None:
    assert absurd_length("", "Hallo Welt") and absurd_length(" ".join(["x"] * 20), "Hallo")
    assert not absurd_length("Hello world, how are you?", "Hallo Welt, wie geht es dir?")
    assert cut_loop("a man on a bike on a bike on a bike today") == "a man on a bike today"
    assert cut_loop("salad salad salad salad") == "salad"


def test_choose_takes_the_next_good_hypothesis_then_greedy_then_a_cut() -> None:
    greedy_calls: list[list[str]] = []

    def greedy(lines: list[str]) -> list[str]:
        greedy_calls.append(lines)
        return ["greedy lettuce" if line == "Salat" else "again again again again" for line in lines]

    out, changed = choose(["Salat", "Hallo", "Kopf"],
                          [["salad salad salad salad", "salad", "lettuce"], ["hello"],
                           ["head head head head", "head head head"]], greedy)
    assert out == [["salad", "lettuce", "salad salad salad salad"], ["hello"], ["head"]] and changed == 2
    assert greedy_calls == [["Kopf"]]  # greedy only for the sentence with no good hypothesis


@pytest.mark.network
def test_the_server_answers_short_inputs_without_loops(start, monkeypatch: pytest.MonkeyPatch) -> None:
    """A model whose best hypothesis loops on every input (as small models do on short ones), with a
    good one further down its n-best list: the server answers with a good one, and /metrics counts
    the sentences the guard changed. (The test model's own hypotheses may all loop too, as they did
    once it was trained in fp32, and so may its greedy output: then the guard cuts the loop, which
    `choose`'s own test covers; here the good hypothesis, the source's words once, is the test's.)"""
    real = LineTranslator.translate_scored

    def looping(self, lines, n, first_line=1):  # the best hypothesis five times over, the beam's own, a good one
        return [line._replace(hyps=[(" ".join([line.hyps[0][0]] * 5), line.hyps[0][1]), *line.hyps, (text, 0.01)])
                if line.hyps else line for text, line in zip(lines, real(self, lines, n, first_line))]

    monkeypatch.setattr(LineTranslator, "translate_scored", looping)
    server: ThreadServer = start()
    answers = post(server.url, json=ask(SHORT)).json()["translatedText"]
    assert len(answers) == len(SHORT) and not any(loops(a, s) for a, s in zip(answers, SHORT))
    found = re.search(r"^nmt_serve_guarded_sentences_total (\S+)$", httpx.get(f"{server.url}/metrics").text, re.M)
    assert found and float(found.group(1)) >= len(SHORT)
