"""Terminology measured: does a glossary's target term reach the output, and at what cost?

The term set is built from the test sets by a stated rule, never by hand, from the bilingual
dictionary the data stages use (Ding's de-en, `/usr/share/trans/de-en`; `nmt.data.lexicon`):

- a candidate source word: for de-en a capitalised German word of three letters or more that
  does not open a sentence (not first on its line, not after `.!?:;`, a quote or a bracket: German
  nouns), for en-de any English word of three letters or more that is not a stop word;
- its translations: the distinct alternatives (at most three words, letters only, not starting
  with an article or `to`) aligned with it in the dictionary's noun sub-entries (the German side
  marked `{m}`, `{f}`, `{n}` or `{pl}`), the source word being a one-word alternative there; a
  candidate with exactly one translation whose
  translation occurs in its pair's reference (whole words, any case) is a term, unless the glossary
  matches it in a test source whose reference lacks the translation (`may` is not always `Mai`:
  the bench measures the swap, not a glossary that is wrong for a sentence);
- the glossary (one TSV file, written and read back as `--glossary FILE` reads it): every term ->
  its translation, the translation's forms listed after it: the one-word alternatives of its
  dictionary lines sharing its first three letters (umlauts folded: `Haus`, `Häuser`), each also
  with the simple suffixes of its language (German -n -en -e -s -es -er, English -s -es).

Each test pair the glossary matches in (at most `--sentences` per test set; its terms: the
glossary's matches) is translated as the server does (cut into sentences,
`nmt.translate.decoding.translate_sentences`) without and with the glossary (each
sentence masked by `nmt.translate.termswap.mask_terms` and restored; the masked text is stable under
the server's own span masking). Reported: term recall (a pair's term counts when the output holds
its target or one of its forms as whole words, any case) without and with the glossary (criterion:
>= 95% with), sacreBLEU of both on the same pairs (criterion: with not more than 0.5 below), the
counts, the time of both runs.

    python -m bench.terminology [--model models/general/de-en/onnx] [--data data/general/validated]
                                [--split test_2016_flickr newstest2016] [--sentences 500] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common.record import RESULTS, write_result

ROOT = Path(__file__).resolve().parents[1]
LEXICON = Path("/usr/share/trans/de-en")
SUFFIXES = {"de": ("n", "en", "e", "s", "es", "er"), "en": ("s", "es")}
_NOUN = re.compile(r"\{(?:m|f|n|pl|m,f|m,n|f,n)\}")
_ANNOTATION = re.compile(r"\{[^}]*\}|\[[^\]]*\]|\([^)]*\)|<[^>]*>")
_ALTERNATIVES = re.compile(r";\s*(?![^{(\[<]*[})\]>])")  # `;` outside annotations
_ONE_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_PHRASE = re.compile(r"[^\W\d_]+(?:[ -][^\W\d_]+){0,2}")
_FOLD = str.maketrans("äöü", "aou")
_OPENS = re.compile(r"(?:^|[.!?:;…\"'„“”»«‚‘’(\[–—-])\s*$")  # what a sentence's first word follows
_ARTICLES = {"der", "die", "das", "den", "dem", "des", "ein", "eine", "the", "a", "an", "to"}


def _alternatives(sub: str) -> list[tuple[str, bool]]:
    """(text without annotations, marked as a noun) of each alternative of a dictionary sub-entry."""
    return [(" ".join(_ANNOTATION.sub(" ", alt).split()), bool(_NOUN.search(alt))) for alt in _ALTERNATIVES.split(sub)]


def _pairs(path: Path) -> Any:
    """(German alternatives, English alternatives) of every sub-entry, line by line."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or " :: " not in line:
                continue
            de, en = line.rstrip("\n").split(" :: ", 1)
            yield [(_alternatives(d), _alternatives(e)) for d, e in zip(de.split(" | "), en.split(" | "))]


def read_dictionary(path: Path, src_lang: str, words: set[str]) -> dict[str, dict[str, str]]:
    """Source word (case-folded, among `words`) -> {case-folded translation: as written}, from the
    noun sub-entries in which it is a one-word alternative."""
    table: dict[str, dict[str, str]] = {}
    for line in _pairs(path):
        for de, en in line:
            if not any(noun for _, noun in de):
                continue
            src, tgt = (de, en) if src_lang == "de" else (en, de)
            for word, noun in src:
                if word.casefold() in words and _ONE_WORD.fullmatch(word) and (noun or src_lang == "en"):
                    found = table.setdefault(word.casefold(), {})
                    for target, target_noun in tgt:
                        if (_PHRASE.fullmatch(target) and (target_noun or src_lang == "de")
                                and target.split()[0].casefold() not in _ARTICLES):
                            found.setdefault(target.casefold(), target)
    return table


def read_forms(path: Path, lang: str, targets: set[str]) -> dict[str, set[str]]:
    """Target (case-folded, among `targets`) -> its forms: one-word alternatives of its lines sharing
    its first three letters (umlauts folded), each with `lang`'s simple suffixes."""
    side = 0 if lang == "de" else 1
    found: dict[str, set[str]] = {t: {t} for t in targets}
    for line in _pairs(path):
        words = {w.casefold() for sub in line for w, _ in sub[side] if _ONE_WORD.fullmatch(w)}
        for t in words & targets:
            found[t] |= {w for w in words if w.translate(_FOLD)[:3] == t.translate(_FOLD)[:3]}
    return {t: {f + s for f in forms for s in ("", *SUFFIXES[lang])} for t, forms in found.items()}


def occurs(text: str, phrase: str) -> bool:
    """`phrase` in `text` as whole words, any case (case folding: `Straße` is `STRASSE`)."""
    words = r"\s+".join(map(re.escape, phrase.casefold().split()))
    return re.search(rf"(?<!\w){words}(?!\w)", text.casefold()) is not None


def candidates(src: str, src_lang: str) -> list[str]:
    """The source words the rule considers (see the module's docstring)."""
    from nmt.data.lexicon import STOP_WORDS

    if src_lang == "de":
        return [m.group(0) for m in _ONE_WORD.finditer(src) if m.group(0)[:1].isupper() and len(m.group(0)) >= 3
                and not _OPENS.search(src, 0, m.start())]
    return [w for w in _ONE_WORD.findall(src) if len(w) >= 3 and w.casefold() not in STOP_WORDS["en"]]


def term_set(pairs: list[tuple[str, str]], src_lang: str, table: dict[str, dict[str, str]]
             ) -> dict[str, tuple[str, str]]:
    """The glossary the rule gives: case-folded source word -> (the word as first seen, its translation),
    for the words with one translation that is in the reference of every pair whose source the
    glossary matches them in (`nmt.translate.glossary`, as the server would)."""
    from nmt.translate.glossary import Glossary

    found: dict[str, tuple[str, str]] = {}
    for src, ref in pairs:
        for word in candidates(src, src_lang):
            translations = table.get(word.casefold(), {})
            if len(translations) == 1 and occurs(ref, target := next(iter(translations.values()))):
                found.setdefault(word.casefold(), (word, target))
    glossary = Glossary.from_mapping(dict(found.values()))
    for src, ref in pairs:
        for _, _, term in glossary.find(src):
            if not occurs(ref, term.target):
                found.pop(term.source.casefold(), None)
    return found


def write_glossary(path: Path, glossary: dict[str, tuple[str, str]], forms: dict[str, set[str]]) -> None:
    lines = [f"# source term, target term, more target forms: the rule of bench/terminology.py, {len(glossary)} terms"]
    for source, target in sorted(glossary.values()):
        more = sorted(forms.get(target.casefold(), set()) - {target.casefold()})
        lines.append("\t".join([source, target, *more]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def score(items: list[dict[str, Any]], plain: list[str], swapped: list[str]) -> dict[str, Any]:
    import sacrebleu

    occurrences = [(k, forms) for k, item in enumerate(items) for forms in item["forms"]]
    hits = {name: sum(any(occurs(out[k], f) for f in forms) for k, forms in occurrences)
            for name, out in (("without", plain), ("with", swapped))}
    refs = [[item["reference"] for item in items]]
    bleu = {name: sacrebleu.corpus_bleu(out, refs).score for name, out in (("without", plain), ("with", swapped))}
    n = len(occurrences)
    return {"sentences": len(items), "term_occurrences": n,
            "recall_without": round(hits["without"] / n, 4) if n else None,
            "recall_with": round(hits["with"] / n, 4) if n else None,
            "bleu_without": round(bleu["without"], 2), "bleu_with": round(bleu["with"], 2),
            "bleu_difference": round(bleu["with"] - bleu["without"], 2),
            "same_output": round(sum(a == b for a, b in zip(plain, swapped)) / len(items), 4) if items else None}


def measure(package: Path, data: Path, splits: list[str], sentences: int, lexicon: Path, glossary_out: Path | None,
            examples: int) -> dict[str, Any]:
    from nmt.translate.glossary import Glossary
    from nmt.translate.local import LocalTranslator
    from nmt.translate.models import ModelOptions

    local = LocalTranslator.open(package, ModelOptions(device="cpu"))  # the server's path without the server
    model = local.model
    src_lang, tgt_lang = model.languages
    if {src_lang, tgt_lang} != {"de", "en"}:
        raise SystemExit(f"{package} translates {src_lang}-{tgt_lang}; the dictionary is German-English")
    pairs = {split: list(zip((data / f"{split}.{src_lang}").read_text(encoding="utf-8").splitlines(),
                             (data / f"{split}.{tgt_lang}").read_text(encoding="utf-8").splitlines()))
             for split in splits}
    words = {w.casefold() for rows in pairs.values() for src, _ in rows for w in candidates(src, src_lang)}
    table = read_dictionary(lexicon, src_lang, words)
    terms = term_set([row for rows in pairs.values() for row in rows], src_lang, table)
    forms = read_forms(lexicon, tgt_lang, {t.casefold() for _, t in terms.values()})
    with tempfile.TemporaryDirectory() as tmp:
        path = glossary_out or Path(tmp) / "glossary.tsv"
        write_glossary(path, terms, forms)
        glossary = Glossary.read(path)  # as `--glossary FILE` reads it
    items = []
    for split, rows in pairs.items():
        matched = [(src, ref, list(dict.fromkeys(t.source.casefold() for _, _, t in glossary.find(src))))
                   for src, ref in rows if src.strip()]
        items += [{"split": split, "source": src, "reference": ref, "terms": t,
                   "forms": [sorted(forms[terms[w][1].casefold()]) for w in t]}
                  for src, ref, t in matched if t][:sentences]
    t0 = time.monotonic()
    plain = local.translate([item["source"] for item in items]).texts
    t1 = time.monotonic()
    local.glossary = glossary  # as `nmt translate --glossary` and the server's --glossary swap its terms
    swapped = local.translate([item["source"] for item in items]).texts
    t2 = time.monotonic()
    result = {"package": str(package.relative_to(ROOT) if package.is_relative_to(ROOT) else package),
              "direction": f"{src_lang}-{tgt_lang}", "splits": splits, "lexicon": str(lexicon),
              "glossary_terms": len(glossary),
              "seconds_without": round(t1 - t0, 1), "seconds_with": round(t2 - t1, 1),
              **score(items, plain, swapped),
              "by_split": {split: score(*(list(x) for x in zip(*rows))) for split in splits
                           if (rows := [r for r in zip(items, plain, swapped) if r[0]["split"] == split])},
              "terms_sample": sorted(terms.values())[:30],
              "examples": [{"source": item["source"], "terms": item["terms"], "without": a, "with": b}
                           for item, a, b in list(zip(items, plain, swapped))[:examples]]}
    result["criteria"] = {"recall_with_at_least_0.95": (result["recall_with"] or 0) >= 0.95,
                          "bleu_not_below_by_more_than_0.5": result["bleu_difference"] >= -0.5}
    print(json.dumps({k: v for k, v in result.items() if k not in ("examples", "terms_sample")}, indent=1), flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=ROOT / "models/general/de-en/onnx", help="a de-en or en-de package")
    p.add_argument("--data", type=Path, default=ROOT / "data/general/validated", help="folder with <split>.<lang>")
    p.add_argument("--split", nargs="+", default=["test_2016_flickr", "newstest2016"],
                   help="test sets (default: test_2016_flickr newstest2016)")
    p.add_argument("--sentences", type=int, default=500, help="pairs with a term per test set at most (default 500)")
    p.add_argument("--lexicon", type=Path, default=LEXICON, help=f"Ding de-en dictionary (default {LEXICON})")
    p.add_argument("--glossary-out", type=Path, help="also keep the glossary built (TSV) here")
    p.add_argument("--smoke", action="store_true", help="a few sentences: the bench's steps, not its figures")
    p.add_argument("--out", type=Path, default=RESULTS, help="write <out>/terminology.json (default: bench/results)")
    args = p.parse_args(argv)
    if not args.lexicon.is_file():
        raise SystemExit(f"--lexicon {args.lexicon}: not found; `apt-get install trans-de-en` installs it")
    if args.smoke:
        args.sentences = min(args.sentences, 16)
    result = measure(args.model.resolve(), args.data, args.split, args.sentences, args.lexicon, args.glossary_out,
                     examples=5 if args.smoke else 20)
    write_result("terminology", {**result, "smoke": args.smoke}, repeats=1, out_dir=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
