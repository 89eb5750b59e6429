"""`format: html` measured: do inline tags land on the right words, and what do they cost?

A tagged test set is built from a test set's source and reference lines by a stated rule, never by
hand: a source word is wrapped in `<b data-w="k">...</b>` when its translation in the reference is
unambiguous, i.e. it occurs once in the source and its translation once in the reference:

- `verbatim`: a word with a digit (a number, `A4`, `COVID-19`) or a capitalised word that is not
  the sentence's first, found as it is in the reference (names: `Boston`, `Terrier`);
- `lexicon`: a word with exactly one translation in the bilingual dictionary the data stages use
  (`nmt.data.lexicon`, Ding's de-en, `/usr/share/trans/de-en`), that translation (or an inflected
  form of it) being a reference word.

At most `--per-sentence` words of a sentence are wrapped (chosen by a seeded draw). Each tagged
source is translated as the server translates `format: html` with an ONNX package (`nmt.translate.markup.html`
units; a unit's tag pairs leave the text the model reads and are written back where the model's own
leave-span-out alignment puts them: `nmt.translate.markup.pairs`, `nmt.translate.markup.align`), and the plain source as
`format: text` is; beside them, the tags carried through the model as numbered placeholders
(`placeholders`: what a CTranslate2 folder gets, and what the server shipped before) and the
baseline of translating every text node on its own (`per_text_node`: LibreTranslate's way, which
cuts the sentence at each tag). Reported: the share
of tags whose output wraps the expected word (the tag's text, at most `MAX_WRAPPED` words, holds a
form of it), the same share over the tags whose expected word the untagged output has (placement
alone, the model's word choice aside), the share of outputs that are well-formed, and sacreBLEU of
the tagged output with its tags stripped beside the untagged output's (criterion: within 1 point).

    python -m bench.markup [--model models/general/de-en/onnx] [--data data/general/validated]
                           [--split test_2016_flickr newstest2016] [--sentences 500] [--smoke]
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from bench.common.record import RESULTS, write_result

ROOT = Path(__file__).resolve().parents[1]
LEXICON = Path("/usr/share/trans/de-en")
MAX_WRAPPED = 3  # a tag wrapping more words than this is not around "the" word, whatever it holds
_WORD = re.compile(r"\d+(?:[.,:/]\d+)+|[\w'’-]+")  # a number with its separators is one word
_TAG = re.compile(r'<b data-w="(\d+)">(.*?)</b>', re.DOTALL)


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def candidates(src: str, ref: str, lexicon: Any | None) -> list[tuple[int, str, str]]:
    """(word index in `src`'s words, the word, its expected translation) for the words whose
    translation in `ref` is unambiguous (the module's rule)."""
    from nmt.data.lexicon import word_forms

    words, ref_words = _words(src), _words(ref)
    src_count, ref_lower = {w: words.count(w) for w in words}, [w.casefold() for w in ref_words]
    found = []
    for k, w in enumerate(words):
        if src_count[w] != 1:
            continue
        if (any(c.isdigit() for c in w) or (k > 0 and w[:1].isupper())) and ref_words.count(w) == 1:
            found.append((k, w, w))
            continue
        if lexicon is None or w[:1].isdigit():
            continue
        translations = lexicon.table["de"].get(w.casefold())
        if translations is None or len(translations) != 1:
            continue
        (target,) = translations
        forms = set(word_forms(target, "en"))
        hits = [r for r, low in zip(ref_words, ref_lower) if low in forms or set(word_forms(low, "en")) & forms]
        if len(hits) == 1:
            found.append((k, w, hits[0]))
    return found


def tag_line(src: str, chosen: list[tuple[int, str, str]]) -> str:
    """`src` (plain text) as HTML with the chosen words wrapped, tag k around the k-th chosen word."""
    marks = {k: n for n, (k, _, _) in enumerate(chosen)}
    out, last = [], 0
    for k, m in enumerate(_WORD.finditer(src)):
        out.append(html.escape(src[last:m.start()], quote=False))
        word = html.escape(m.group(0), quote=False)
        out.append(f'<b data-w="{marks[k]}">{word}</b>' if k in marks else word)
        last = m.end()
    return "".join(out) + html.escape(src[last:], quote=False)


def build_set(sources: list[str], refs: list[str], lexicon: Any | None, per_sentence: int,
              seed: int) -> list[dict[str, Any]]:
    """The tagged set: per pair with an eligible word, its tagged source and the expected words."""
    rng = random.Random(seed)
    out = []
    for i, (src, ref) in enumerate(zip(sources, refs)):
        found = candidates(src, ref, lexicon)
        if not found or not src.strip():
            continue
        chosen = sorted(rng.sample(found, min(per_sentence, len(found))))
        out.append({"line": i, "source": src, "reference": ref, "tagged": tag_line(src, chosen),
                    "words": [w for _, w, _ in chosen], "expected": [e for _, _, e in chosen]})
    return out


def translate_per_node(tagged: list[str], translate: Any) -> list[str]:
    """The baseline: every text node translated on its own (what LibreTranslate's HTML path does), so a
    tag always wraps a translation of its own words, which lose their sentence."""
    pieces = [re.split(r'(<b data-w="\d+">|</b>)', t) for t in tagged]
    texts = [html.unescape(x).strip() for ps in pieces for x in ps if _WORD.search(x) and not x.startswith("<")]
    done = iter(translate(texts))
    out = []
    for ps in pieces:
        line = []
        for x in ps:
            if _WORD.search(x) and not x.startswith("<"):
                core = html.escape(next(done), quote=False)
                line.append(x[:len(x) - len(x.lstrip())] + core + x[len(x.rstrip()):])
            else:
                line.append(x)
        out.append("".join(line))
    return out


def well_formed(fragment: str) -> bool:
    try:
        ET.fromstring(f"<root>{fragment}</root>")
        return True
    except ET.ParseError:
        return False


def wraps(inner: str, expected: str) -> bool:
    """The tag's text is at most MAX_WRAPPED words and one of them is a form of `expected`."""
    from nmt.data.lexicon import word_forms

    words = [w.casefold() for w in _words(re.sub(r"<[^>]*>", "", html.unescape(inner)))]
    forms = set(word_forms(expected.casefold(), "en"))
    return 0 < len(words) <= MAX_WRAPPED and any(w in forms or set(word_forms(w, "en")) & forms for w in words)


def score(items: list[dict[str, Any]], tagged_out: list[str], plain_out: list[str]) -> dict[str, Any]:
    import sacrebleu

    from nmt.data.lexicon import word_forms

    tags = hit = translated = hit_translated = 0
    for item, out, plain in zip(items, tagged_out, plain_out):
        found = {int(m.group(1)): m.group(2) for m in _TAG.finditer(out)}
        plain_forms = {f for w in _words(plain) for f in word_forms(w.casefold(), "en")}
        for k, expected in enumerate(item["expected"]):
            ok = k in found and wraps(found[k], expected)
            has = bool(set(word_forms(expected.casefold(), "en")) & plain_forms)
            tags, hit, translated, hit_translated = tags + 1, hit + ok, translated + has, hit_translated + (ok and has)
    stripped = [html.unescape(re.sub(r"<[^>]*>", "", out)) for out in tagged_out]
    refs = [[item["reference"] for item in items]]
    bleu_tagged = sacrebleu.corpus_bleu(stripped, refs).score
    bleu_plain = sacrebleu.corpus_bleu(plain_out, refs).score
    return {"sentences": len(items), "tags": tags,
            "wraps_expected": round(hit / tags, 4) if tags else None,
            "tags_whose_word_the_untagged_output_has": translated,
            "wraps_expected_when_translated": round(hit_translated / translated, 4) if translated else None,
            "well_formed": round(sum(map(well_formed, tagged_out)) / len(items), 4) if items else None,
            "bleu_tagged_stripped": round(bleu_tagged, 2), "bleu_untagged": round(bleu_plain, 2),
            "bleu_difference": round(bleu_tagged - bleu_plain, 2),
            "bleu_tagged_vs_untagged_output": round(sacrebleu.corpus_bleu(stripped, [plain_out]).score, 2),
            "same_text_as_untagged": round(sum(s == p for s, p in zip(stripped, plain_out)) / len(items), 4)
            if items else None}


def measure(package: Path, data: Path, splits: list[str], sentences: int, per_sentence: int,
            lexicon_path: Path | None, seed: int, examples: int) -> dict[str, Any]:
    from nmt.data.lexicon import LexicalScore
    from nmt.translate.local import LocalTranslator
    from nmt.translate.markup.html import parse_html
    from nmt.translate.models import ModelOptions

    local = LocalTranslator.open(package, ModelOptions(device="cpu"))  # the server's path without the server
    model = local.model
    src_lang, tgt_lang = model.languages
    if (src_lang, tgt_lang) != ("de", "en"):
        raise SystemExit(f"{package} translates {src_lang}-{tgt_lang}; the tagged set's rule is de-en")
    lexicon = LexicalScore(lexicon_path, ("de", "en")) if lexicon_path else None
    items = []
    for split in splits:
        sources = (data / f"{split}.{src_lang}").read_text(encoding="utf-8").splitlines()
        refs = (data / f"{split}.{tgt_lang}").read_text(encoding="utf-8").splitlines()
        found = build_set(sources, refs, lexicon, per_sentence, seed)[:sentences]
        items += [{**item, "split": split} for item in found]
    t0 = time.monotonic()
    plain_out = local.translate([item["source"] for item in items]).texts
    t1 = time.monotonic()
    # all units decoded together, as a server's batches; tag pairs put back by the model's alignment
    tagged_out = local.translate_html([item["tagged"] for item in items]).texts
    t2 = time.monotonic()
    docs = [parse_html(item["tagged"]) for item in items]
    units = local.translate([u for doc in docs for u in doc.units]).texts  # placeholders read as text
    placeholder_out, at = [], 0
    for doc in docs:
        placeholder_out.append(doc.rebuild(units[at:at + len(doc.units)]))
        at += len(doc.units)
    per_node = translate_per_node([item["tagged"] for item in items],
                                  lambda texts: local.translate(texts).texts)
    result = {"package": str(package.relative_to(ROOT) if package.is_relative_to(ROOT) else package),
              "direction": f"{src_lang}-{tgt_lang}", "splits": splits, "per_sentence": per_sentence,
              "lexicon": str(lexicon_path) if lexicon_path else None, "seed": seed,
              "seconds_untagged": round(t1 - t0, 1), "seconds_tagged": round(t2 - t1, 1),
              **score(items, tagged_out, plain_out),
              "by_split": {split: score(*(list(x) for x in zip(*rows))) for split in splits
                           if (rows := [r for r in zip(items, tagged_out, plain_out) if r[0]["split"] == split])},
              "placeholders": score(items, placeholder_out, plain_out),
              "per_text_node": score(items, per_node, plain_out),
              "examples": [{"tagged": item["tagged"], "output": out, "untagged_output": plain, "per_text_node": node}
                           for item, out, plain, node in list(zip(items, tagged_out, plain_out, per_node))[:examples]]}
    result["criteria"] = {"wraps_expected_at_least_0.9": (result["wraps_expected"] or 0) >= 0.9,
                          "wraps_expected_when_translated_at_least_0.9":
                              (result["wraps_expected_when_translated"] or 0) >= 0.9,
                          "bleu_within_1": abs(result["bleu_difference"]) <= 1.0,
                          "all_well_formed": result["well_formed"] == 1.0}
    print(json.dumps({k: v for k, v in result.items() if k != "examples"}, indent=1), flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=ROOT / "models/general/de-en/onnx", help="a de-en package")
    p.add_argument("--data", type=Path, default=ROOT / "data/general/validated", help="folder with <split>.<lang>")
    p.add_argument("--split", nargs="+", default=["test_2016_flickr", "newstest2016"],
                   help="test sets (default: test_2016_flickr newstest2016)")
    p.add_argument("--sentences", type=int, default=500, help="tagged sentences per test set at most (default 500)")
    p.add_argument("--per-sentence", type=int, default=1, help="words wrapped per sentence at most (default 1)")
    p.add_argument("--lexicon", type=Path, default=LEXICON, help=f"Ding de-en dictionary (default {LEXICON})")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--smoke", action="store_true", help="a few sentences, the dictionary only if installed: "
                                                        "the bench's steps, not its figures")
    p.add_argument("--out", type=Path, default=RESULTS, help="write <out>/markup.json (default: bench/results)")
    args = p.parse_args(argv)
    lexicon: Path | None = args.lexicon
    if args.smoke:
        args.sentences = min(args.sentences, 16)
        lexicon = lexicon if lexicon.is_file() else None
    elif not lexicon.is_file():
        raise SystemExit(f"--lexicon {lexicon}: not found; `apt-get install trans-de-en` installs it")
    result = measure(args.model.resolve(), args.data, args.split, args.sentences, args.per_sentence, lexicon,
                     args.seed, examples=5 if args.smoke else 20)
    write_result("markup", {**result, "smoke": args.smoke}, repeats=1, out_dir=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
