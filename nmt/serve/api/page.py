"""The demo page at `GET /`: pick the languages (those `/languages` lists: each package's pair, pairs
through English, and auto), type, read the translation, see the latency; the text as HTML (its markup
kept), or a file (.txt, .html, .srt, .docx) translated into a download link; with `--browser-page`, a link to
the in-browser translator at /browser/. Self-contained: the styles and script are inline and it loads nothing
from anywhere but this server."""

from __future__ import annotations

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nmt: translate</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.4rem; }
  .panes { display: flex; gap: 1rem; flex-wrap: wrap; }
  .pane { flex: 1 1 20rem; display: flex; flex-direction: column; }
  textarea, output { font: inherit; min-height: 10rem; padding: .5rem; border: 1px solid #aaa; border-radius: 4px; }
  output { display: block; white-space: pre-wrap; background: #f6f6f6; }
  .bar { margin: .8rem 0; display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
  button { font: inherit; padding: .4rem 1.2rem; }
  #status.error { color: #b00020; }
  small { color: #666; }
</style>
</head>
<body>
<h1>nmt: translate</h1>
<div class="bar">
  <label>from <select id="from"><option value="auto">detect the language</option></select></label>
  <label>to <select id="to"></select></label>
</div>
<div class="panes">
  <label class="pane">Source<textarea id="source" autofocus placeholder="Text to translate"></textarea></label>
  <div class="pane">Translation<output id="output" for="source" aria-live="polite"></output></div>
</div>
<div class="bar">
  <button id="translate" type="button">Translate</button>
  <label><input id="html" type="checkbox"> HTML</label>
  <label>api key <input id="key" type="password" autocomplete="off" size="18"></label>
  <span id="status" role="status"></span>
</div>
<div class="bar">
  <label>File <input id="file" type="file" accept=".txt,.html,.htm,.srt,.docx"></label>
  <button id="upload" type="button">Translate file</button>
  <a id="download" hidden></a>
</div>
<small>POST /translate and /translate_file, as LibreTranslate's API; <a href="/v1/model">model card</a>, <a href="/metrics">metrics</a>.<!--browser--></small>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
let languages = [];
const option = (code, name) => { const o = document.createElement("option"); o.value = code; o.textContent = name; return o; };
function targets() {
  const src = $("from").value, keep = $("to").value;
  const codes = src === "auto" ? [...new Set(languages.flatMap((l) => l.targets))]
                               : (languages.find((l) => l.code === src) || {targets: []}).targets;
  $("to").replaceChildren(...codes.map((c) => option(c, (languages.find((l) => l.code === c) || {name: c}).name)));
  if (codes.includes(keep)) $("to").value = keep;
}
fetch("/languages").then((r) => r.json()).then((langs) => {
  languages = langs;
  const sources = langs.filter((l) => l.targets.length);
  $("from").append(...sources.map((l) => option(l.code, l.name)));
  if (sources.length) $("from").value = sources[0].code;
  targets();
}).catch(() => {});
$("from").addEventListener("change", targets);
async function translate() {
  const status = $("status");
  status.className = "";
  status.textContent = "translating...";
  $("translate").disabled = true;
  const body = {q: $("source").value, source: $("from").value, target: $("to").value,
                format: $("html").checked ? "html" : "text"};
  if ($("key").value) body.api_key = $("key").value;
  const started = performance.now();
  try {
    const r = await fetch("/translate", {method: "POST", headers: {"Content-Type": "application/json"},
                                         body: JSON.stringify(body)});
    const answer = await r.json();
    const ms = Math.round(performance.now() - started);
    if (!r.ok) throw new Error((answer.error || r.statusText) + " (HTTP " + r.status + ")");
    $("output").textContent = answer.translatedText;
    status.textContent = ms + " ms";
    document.body.dataset.latencyMs = String(ms);
  } catch (err) {
    status.className = "error";
    status.textContent = String(err.message || err);
  } finally {
    $("translate").disabled = false;
  }
}
async function upload() {
  const status = $("status"), file = $("file").files[0];
  status.className = "";
  if (!file) { status.textContent = "choose a file first"; return; }
  status.textContent = "translating " + file.name + "...";
  $("upload").disabled = true;
  const form = new FormData();
  form.append("file", file);
  form.append("source", $("from").value);
  form.append("target", $("to").value);
  if ($("key").value) form.append("api_key", $("key").value);
  const started = performance.now();
  try {
    const r = await fetch("/translate_file", {method: "POST", body: form});
    const answer = await r.json();
    if (!r.ok) throw new Error((answer.error || r.statusText) + " (HTTP " + r.status + ")");
    const link = $("download");
    link.href = answer.translatedFileUrl;
    link.textContent = "download " + file.name;
    link.hidden = false;
    status.textContent = Math.round(performance.now() - started) + " ms";
  } catch (err) {
    status.className = "error";
    status.textContent = String(err.message || err);
  } finally {
    $("upload").disabled = false;
  }
}
$("translate").addEventListener("click", translate);
$("upload").addEventListener("click", upload);
$("source").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) translate(); });
</script>
</body>
</html>
"""  # noqa: E501 (served byte for byte: a line of the page wrapped would change what the server sends)

BROWSER_LINK = (' <a id="in-browser" href="/browser/">Translate in this browser</a>: the model runs here, offline '
                'once loaded.')


def page(browser: bool) -> str:
    """The demo page; `browser`: with the link to the in-browser translator (`--browser-page`)."""
    return PAGE.replace("<!--browser-->", BROWSER_LINK if browser else "")
