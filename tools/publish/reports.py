"""Generated blocks from the pipeline's own reports: scores, export checks."""

from __future__ import annotations

from tools.publish.sources import Sources, pct, table


def results(s: Sources) -> str:
    """README: the scores of the committed model, its ONNX package and its CTranslate2 model."""
    metrics, export, ct2 = s.report("metrics"), s.report("export"), s.report("ctranslate2")
    stats = s.report("validation/train")["stats"]
    parts = []
    for split, m in metrics.items():
        d, e = m["decoding"], export.get(split, {})
        c = ct2.get(split) if isinstance(ct2, dict) else None
        parts.append(
            f"The committed run of the defaults ({stats['epochs']} epochs, {stats['updates']} updates) translates "
            f"Multi30k `{split}` ({m['sentences']} sentences) with beam {d['beam_size']} and length penalty "
            f"{d['alpha']:g}, with `<unk>` in {m['unk_sentences']} of the outputs. sacreBLEU is "
            f"`{m['sacrebleu_signature']}`, on detokenized output against the raw references.\n")
        rows = [["the committed model (`models/model.pt`)", f"**{m['sacrebleu']:.2f}**", f"{m['chrf']:.2f}",
                 f"{m['nltk_bleu']:.2f}"]]
        if e:
            rows.append([f"its ONNX package, fp32 ({pct(e['identical_lines'])} of lines identical to torch)",
                         f"{e['sacrebleu_onnx']:.2f}", "-", "-"])
            if "sacrebleu_int8" in e:
                rows.append([f"its ONNX package, int8 ({pct(e['int8_identical_lines'])} of lines identical to fp32)",
                             f"{e['sacrebleu_int8']:.2f}", "-", "-"])
        if c:
            rows.append([f"its CTranslate2 model ({pct(c['identical_lines'])} of lines identical to torch; "
                         f"{d['alpha']:g} as its own length penalty)", f"{c['sacrebleu_ctranslate2']:.2f}", "-", "-"])
        parts.append(table(["model", "sacreBLEU", "chrF", "NLTK BLEU"], rows, "lrrr"))
    parts.append("\nSource: `reports/metrics.json` (evaluate), `reports/export.json` (export), "
                 "`reports/ctranslate2.json` (ctranslate2), `reports/validation/train.json` (train).")
    return "\n".join(parts)


def evaluate_scores(s: Sources) -> str:
    """docs/evaluation.md: the evaluate stage's numbers for each test set."""
    lines = []
    for split, m in s.report("metrics").items():
        lines.append(f"The committed model on `{split}` ({m['sentences']} sentences): sacreBLEU {m['sacrebleu']:.2f}, "
                     f"chrF {m['chrf']:.2f}, NLTK BLEU {m['nltk_bleu']:.2f}, `<unk>` rate {m['unk_rate']:g}, "
                     f"length ratio {m['length_ratio']:.2f}.")
    return "\n".join(lines + ["", "Source: `reports/metrics.json`."])


def export_checks(s: Sources) -> str:
    """docs/export.md: what the export and ctranslate2 stages measured."""
    export, ct2 = s.report("export"), s.report("ctranslate2")
    size = export["size_mb"]
    lines = [f"Parity on the first {export['parity']['sentences']} validation sentences: largest logit difference "
             f"{export['parity']['max_logit_diff']:.1e}, greedy and beam outputs "
             f"{pct(export['parity']['greedy_identical'])} / {pct(export['parity']['beam_identical'])} identical. "
             f"Graphs: {size['fp32']:.1f} MB fp32" + (f", {size['int8']:.1f} MB int8." if "int8" in size else ".")]
    for split, e in ((k, v) for k, v in export.items() if k not in ("parity", "size_mb")):
        text = (f"`{split}` ({e['sentences']} sentences, text to text): {pct(e['identical_lines'])} of lines identical "
                f"to torch, sacreBLEU {e['sacrebleu_torch']:.2f} (torch) and {e['sacrebleu_onnx']:.2f} (ONNX fp32)")
        if "sacrebleu_int8" in e:
            text += (f", int8 {e['sacrebleu_int8']:.2f} ({e['int8_bleu_change']:+.2f}, "
                     f"{pct(e['int8_identical_lines'])} of lines identical to fp32)")
        lines.append(text + ".")
    for split, c in ((k, v) for k, v in ct2.items() if isinstance(v, dict)):
        lines.append(f"The CTranslate2 model on `{split}`: sacreBLEU {c['sacrebleu_ctranslate2']:.2f} against torch's "
                     f"{c['sacrebleu_torch']:.2f}, {pct(c['identical_lines'])} of lines identical.")
    return "\n".join(lines + ["", "Source: `reports/export.json`, `reports/ctranslate2.json`."])
