"""A guard against the two ways a translation model fails visibly: loops and absurd lengths.

Small models fed short or odd input ("salad") repeat themselves ("salad salad salad salad ...")
or run on. After the search, each sentence's n-best list (the same beam, read off: no extra
decoding) is checked best first, and the first hypothesis that neither loops nor has an absurd
length for its source is taken; when none passes, the greedy translation is tried, and when that
fails too, the best hypothesis with its loop cut to one occurrence. A repetition the source has
itself ("ha ha ha") is not a loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

MAX_NGRAM = 4  # repeated runs of 1..4 words are looked for
MIN_REPEATS = 3  # a run of this many copies (or more) in a row is a loop
MAX_RATIO = 3.0  # words out per word in, beyond which (plus SLACK) the length is absurd
SLACK = 4  # words a short source's translation may have beyond MAX_RATIO times its own


def _runs(words: Sequence[str], n: int) -> tuple[int, int]:
    """(the most copies in a row of any n-gram, where that run starts)."""
    best, where = 1, 0
    for start in range(n):  # runs aligned on each offset
        count, run_start = 1, start
        for i in range(start + n, len(words) - n + 1, n):
            if words[i:i + n] == words[i - n:i]:
                count += 1
                if count > best:
                    best, where = count, run_start
            else:
                count, run_start = 1, i
    return best, where


def repeats(text: str) -> dict[int, int]:
    """Per n-gram size, the most copies in a row of one n-gram of `text`'s words."""
    words = text.lower().split()
    return {n: _runs(words, n)[0] for n in range(1, MAX_NGRAM + 1)}


def loops(translation: str, source: str) -> bool:
    """Whether `translation` repeats an n-gram MIN_REPEATS times or more in a row, more than `source` does."""
    mine, theirs = repeats(translation), repeats(source)
    return any(mine[n] >= MIN_REPEATS and mine[n] > theirs[n] for n in mine)


def absurd_length(translation: str, source: str) -> bool:
    """No words for a source with words, or far more words than the source."""
    out, src = len(translation.split()), len(source.split())
    return (src > 0 and out == 0) or out > MAX_RATIO * src + SLACK


def acceptable(translation: str, source: str) -> bool:
    return not loops(translation, source) and not absurd_length(translation, source)


def cut_loop(translation: str) -> str:
    """`translation` with its longest repeated run kept once."""
    words = translation.split()
    best_n, best = 1, (1, 0)
    for n in range(1, MAX_NGRAM + 1):
        found = _runs([w.lower() for w in words], n)
        if found[0] * n > best[0] * best_n:
            best_n, best = n, found
    count, start = best
    if count < MIN_REPEATS:
        return translation
    return " ".join(words[:start + best_n] + words[start + count * best_n:])


def choose(sources: Sequence[str], nbest: Sequence[Sequence[str]],
           greedy: Callable[[list[str]], list[str]]) -> tuple[list[list[str]], int]:
    """Per source, its n-best list with the first acceptable hypothesis first (and the others after
    it, in order); `greedy` translates the sources none of whose hypotheses pass. Returns the lists
    and how many sentences the guard changed."""
    out: list[list[str]] = []
    failed: list[int] = []
    for i, (source, hyps) in enumerate(zip(sources, nbest)):
        good = [h for h in hyps if acceptable(h, source)]
        if hyps and not good:
            failed.append(i)
        out.append(good + [h for h in hyps if h not in good] if good else list(hyps))
    changed = sum(1 for hyps, new in zip(nbest, out) if hyps and new[0] != hyps[0])
    if failed:
        for i, text in zip(failed, greedy([sources[i] for i in failed])):
            out[i] = [text if acceptable(text, sources[i]) else cut_loop(out[i][0])]
        changed += len(failed)
    return out, changed
