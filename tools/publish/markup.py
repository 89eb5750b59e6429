"""Renderers of docs/serving.md's markup and terminology blocks: `bench/markup.py`'s
`bench/results/markup.json` and `bench/terminology.py`'s `bench/results/terminology.json`."""

from __future__ import annotations

from typing import Any

from tools.publish.sources import Sources, measured, not_yet, pct, table


def _share(value: float | None) -> str:
    return "" if value is None else pct(value)


def markup(s: Sources) -> str:
    if not (s.bench / "markup.json").is_file():
        return not_yet("markup", "python -m bench.markup --model models/general/de-en/onnx")
    r = s.result("markup")
    res = r["results"]

    def row(name: str, x: dict[str, Any]) -> list[str]:
        return [name, str(x["sentences"]), str(x["tags"]), f"**{_share(x['wraps_expected'])}**",
                _share(x["wraps_expected_when_translated"]), _share(x["well_formed"]),
                f"{x['bleu_tagged_stripped']:.2f}", f"{x['bleu_untagged']:.2f}", f"{x['bleu_difference']:+.2f}"]

    rows = [row(f"`{split}`", x) for split, x in res["by_split"].items()]
    rows.append(row("all (tags by the model's alignment: the server with an ONNX package)", res))
    if "placeholders" in res:
        rows.append(row("all, tags as placeholders through the model (a CTranslate2 folder)", res["placeholders"]))
    rows.append(row("all, each text node apart (LibreTranslate's way)", res["per_text_node"]))
    return "\n".join([
        f"`{res['package']}` ({res['direction']}); a tag wraps at most {res['per_sentence']} source word per sentence "
        "whose translation in the reference is unambiguous (a number, a name found verbatim in the reference, a "
        "word with one dictionary translation found there); a hit is an output tag around that translation. BLEU "
        "is sacreBLEU of the output with its tags stripped against the reference, beside the untagged sentence's. "
        f"The untagged output has the expected word for {res['tags_whose_word_the_untagged_output_has']} of "
        f"{res['tags']} tags ({_share(res['tags_whose_word_the_untagged_output_has'] / max(1, res['tags']))}): "
        "where the model chose another word, no placement can hit, so the tag's placement is the fifth column.",
        "", table(["test set", "sentences", "tags", "tag on the right words", "same, where the untagged output has "
                   "the word", "well-formed", "BLEU tagged", "BLEU untagged", "difference"], rows, "lrrrrrrrr"),
        "", measured(r, "markup")])


def terminology(s: Sources) -> str:
    if not (s.bench / "terminology.json").is_file():
        return not_yet("terminology", "python -m bench.terminology --model models/general/de-en/onnx")
    r = s.result("terminology")
    res = r["results"]
    rows = [[f"`{split}`" if split else "all", str(x["sentences"]), str(x["term_occurrences"]),
             _share(x["recall_without"]), f"**{_share(x['recall_with'])}**", f"{x['bleu_without']:.2f}",
             f"{x['bleu_with']:.2f}", f"{x['bleu_difference']:+.2f}"]
            for split, x in [*res["by_split"].items(), ("", res)]]
    return "\n".join([
        f"`{res['package']}` ({res['direction']}), {res['glossary_terms']} terms; the sentences of the test sets "
        "holding a term, translated without and with the glossary (decoding time "
        f"{res['seconds_without']:.0f} s and {res['seconds_with']:.0f} s).", "",
        table(["test set", "sentences", "term occurrences", "term recall without", "with the glossary",
               "BLEU without", "BLEU with", "difference"], rows, "lrrrrrrr"), "", measured(r, "terminology")])
