"""The pages a reviewer opens: `reports/index.html`, one attention page per sample, and
`reports/bleu.md`. Static HTML with relative links only (no CDN), so they read the same
offline, from a file:// URL or a CI artifact. The pages share one stylesheet and one small
script in `reports/assets/` (`write_assets`); the script marks any image that fails to load,
so a broken report is visible (and testable in a headless browser). The gate table lists the
gates of the stages up to evaluate (`REPORT_GATES`), never a later stage's from another run.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from html import escape
from pathlib import Path
from typing import Any

from nmt.evaluate.attention import KINDS
from nmt.evaluate.scoring import CHRF_LABEL, LENGTH_LABEL, NLTK_LABEL, SACREBLEU_LABEL, UNK_LABEL
from nmt.gates.reports import GateReport, read_gate_report

# The gates the report shows, in pipeline order: those of the stages download..evaluate, which
# ran before the report is written. Later stages' gates (export, ctranslate2) are left out: their
# reports in the folder are from an earlier run.
REPORT_GATES = ("raw", "tokens", "vocab", "binarize", "train", "evaluate")

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #176b2c; font-weight: bold; } .failed { color: #b00020; font-weight: bold; }
.sig { font-family: monospace; font-size: 0.85em; color: #555; }
img { max-width: 100%; border: 1px solid #ddd; }
.broken { color: #b00020; font-weight: bold; }
"""

IMAGE_CHECK = """
window.addEventListener("load", function () {
  var imgs = Array.prototype.slice.call(document.images);
  var broken = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; });
  document.body.setAttribute("data-images", String(imgs.length));
  document.body.setAttribute("data-broken", String(broken.length));
  broken.forEach(function (i) {
    var p = document.createElement("p"); p.className = "broken";
    p.textContent = "image failed to load: " + i.getAttribute("src"); i.after(p);
  });
});
"""


ASSET_FILES = {"report.css": STYLE, "report.js": IMAGE_CHECK}


def write_assets(directory: Path) -> None:
    """The stylesheet and image-check script every page links to."""
    for name, text in ASSET_FILES.items():
        (directory / name).write_text(text.lstrip(), encoding="utf-8")


def page(title: str, body: str, assets: str) -> str:
    """A whole page; `assets`: the assets folder relative to the page."""
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{escape(title)}</title>\n"
            f"<link rel=\"stylesheet\" href=\"{escape(assets)}/report.css\">\n"
            f"<script src=\"{escape(assets)}/report.js\"></script>\n</head>\n<body>\n<h1>{escape(title)}</h1>\n"
            f"{body}\n</body>\n</html>\n")


def table(header: list[str], rows: list[list[Any]], numeric: AbstractSet[int] = frozenset()) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class=\"num\">{escape(str(c))}</td>" if i in numeric else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>\n" for row in rows)
    return f"<table>\n<tr>{head}</tr>\n{body}</table>\n"


def metrics_section(metrics: dict[str, Any]) -> str:
    rows = [[escape(name), m["sacrebleu"], m["chrf"], m["nltk_bleu"], m["sentences"], f"{m['unk_rate']:.2%}",
             m["unk_sentences"], m["length_ratio"]] for name, m in metrics.items()]
    sigs = "".join(f"<li>{escape(name)}: BLEU <span class=\"sig\">{escape(m['sacrebleu_signature'])}</span>; "
                   f"chrF <span class=\"sig\">{escape(m['chrf_signature'])}</span></li>" for name, m in metrics.items())
    first = next(iter(metrics.values()))
    d = first["decoding"]
    header = ["test set", "sacreBLEU", "chrF", "NLTK BLEU", "sentences", "<unk> rate", "sentences with <unk>",
              "length ratio"]
    return ("<h2>Metrics</h2>\n" + table(header, rows, set(range(1, 8)))
            + f"<ul><li>sacreBLEU: {escape(SACREBLEU_LABEL)}</li><li>chrF: {escape(CHRF_LABEL)}</li>"
            f"<li>NLTK BLEU: {escape(NLTK_LABEL)}</li><li>&lt;unk&gt; rate: {escape(UNK_LABEL)}</li>"
            f"<li>length ratio: {escape(LENGTH_LABEL)}</li></ul>\n<p>Signatures:</p><ul>{sigs}</ul>\n"
            f"<p>Decoding: beam {d['beam_size']}, length penalty alpha {d['alpha']}, "
            f"max length = source length + {d['max_extra']} (Vaswani et al. 2017, section 6.1).</p>\n")


def report_gates(gate_dir: Path) -> list[GateReport]:
    """The gate reports of `REPORT_GATES` found in `gate_dir`, in that order."""
    found = (read_gate_report(Path(gate_dir) / f"{name}.json") for name in REPORT_GATES)
    return [g for g in found if g is not None]


def gates_section(gates: list[GateReport], gate_dir: str) -> str:
    rows = []
    for g in gates:
        status = "<span class=\"ok\">passed</span>" if g.success else "<span class=\"failed\">FAILED</span>"
        detail = "; ".join(escape(f) for f in g.failed) or "all checks passed"
        rows.append([f"<a href=\"{escape(gate_dir)}/{escape(g.path.stem)}.md\">{escape(g.stage)}</a>", status,
                     len(g.checks), detail])
    return "<h2>Validation gates</h2>\n" + table(["gate", "result", "checks", "failures"], rows, {2})


def samples_table(samples: list[dict[str, Any]]) -> str:
    rows = [[s["line"], s["bleu"], escape(s["source"]), escape(s["reference"]), escape(s["hypothesis"])]
            for s in samples]
    return table(["line", "sentence BLEU", "source", "reference", "hypothesis"], rows, {0, 1})


def test_set_section(name: str, detail: dict[str, Any]) -> str:
    buckets = [[escape(b["bucket"]), b["sentences"], b["sacrebleu"]] for b in detail["buckets"]]
    return (f"<h2>{escape(name)}</h2>\n<p>Translations: <a href=\"translations/{escape(name)}.txt\">"
            f"translations/{escape(name)}.txt</a></p>\n"
            "<h3>sacreBLEU by source length (spaCy tokens)</h3>\n"
            + table(["source tokens", "sentences", "sacreBLEU"], buckets, {1, 2})
            + "<h3>Best sentences (sentence BLEU)</h3>\n" + samples_table(detail["best"])
            + "<h3>Worst sentences (sentence BLEU)</h3>\n" + samples_table(detail["worst"]))


def index_page(metrics: dict[str, Any], details: dict[str, Any], gates: list[GateReport], gate_dir: str,
               curves: str | None, attention: list[dict[str, Any]]) -> str:
    """reports/index.html. `gate_dir`, `curves`: gate reports folder and curves PNG, relative to reports/."""
    parts = [metrics_section(metrics)]
    if curves is not None:
        parts.append(f"<h2>Training</h2>\n<img src=\"{escape(curves)}\" alt=\"training curves\">\n")
    parts.append(gates_section(gates, gate_dir))
    parts += [test_set_section(name, d) for name, d in details.items()]
    links = "".join(f"<li><a href=\"attention/{escape(a['page'])}\">{escape(a['source'])}</a></li>" for a in attention)
    parts.append(f"<h2>Attention</h2>\n<ul>{links}</ul>\n")
    return page("nmt evaluation report", "\n".join(parts), "assets")


def attention_page(sample: dict[str, Any], files: dict[str, list[str]], sample_dir: str) -> str:
    """One sentence: source / reference / hypothesis and every heatmap, by kind and layer."""
    parts = ["<p><a href=\"../index.html\">back to the report</a></p>\n",
             table(["", "text"], [["source", escape(sample["source"])], ["reference", escape(sample["reference"])],
                                  ["hypothesis", escape(sample["hypothesis"])]])]
    for kind, names in files.items():
        parts.append(f"<h2>{escape(KINDS[kind])}</h2>\n")
        parts += [f"<img src=\"{escape(sample_dir)}/{escape(n)}\" alt=\"{escape(kind)} {escape(n)}\">\n" for n in names]
    return page(f"Attention: {sample['test_set']} line {sample['line']}", "".join(parts), "../assets")


def bleu_markdown(metrics: dict[str, Any], details: dict[str, Any]) -> str:
    """reports/bleu.md: the numbers, what each one is, and how they were produced."""
    lines = ["# BLEU", "", "| test set | sacreBLEU | chrF | NLTK BLEU | sentences | <unk> rate | length ratio |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {n} | {m['sacrebleu']} | {m['chrf']} | {m['nltk_bleu']} | {m['sentences']} | {m['unk_rate']:.2%} "
              f"| {m['length_ratio']} |" for n, m in metrics.items()]
    lines += ["", f"- **sacreBLEU**: {SACREBLEU_LABEL}. This is the number to compare with published results.",
              f"- **chrF**: {CHRF_LABEL}.", f"- **NLTK BLEU**: {NLTK_LABEL}.", f"- **<unk> rate**: {UNK_LABEL}.",
              f"- **length ratio**: {LENGTH_LABEL}.", ""]
    for n, m in metrics.items():
        d = m["decoding"]
        lines += [f"## {n}", "", f"- BLEU signature: `{m['sacrebleu_signature']}`",
                  f"- chrF signature: `{m['chrf_signature']}`",
                  f"- decoding: beam {d['beam_size']}, alpha {d['alpha']}, max length source + {d['max_extra']}",
                  "", "| source tokens | sentences | sacreBLEU |", "| --- | --- | --- |"]
        lines += [f"| {b['bucket']} | {b['sentences']} | {b['sacrebleu']} |" for b in details[n]["buckets"]]
        lines.append("")
    return "\n".join(lines)
