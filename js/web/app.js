// The page: the package in ./package/ (an nmt ONNX package of a SentencePiece model), onnxruntime-web on
// WebAssembly (one thread: a static host sends no cross-origin isolation headers), the shared Translator.
import * as ort from "onnxruntime-web";
import { Translator } from "./src/translator.js";

ort.env.wasm.wasmPaths = new URL("./vendor/", import.meta.url).href;
ort.env.wasm.numThreads = 1;
const $ = (id) => document.getElementById(id);
const base = new URL("./package/", import.meta.url);
async function get(name) {
  const response = await fetch(new URL(name, base));
  if (!response.ok) throw new Error(`package/${name}: HTTP ${response.status}`);
  return response;
}
const files = { text: async (n) => (await get(n)).text(), bytes: async (n) => new Uint8Array(await (await get(n)).arrayBuffer()) };
const opened = new Map(); // "int8|beam" -> Translator

function status(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
}

async function translator() {
  const key = `${$("int8").checked}|${$("beam").value}`;
  if (!opened.has(key)) {
    const beamSize = $("beam").value ? Number($("beam").value) : undefined;
    opened.set(key, await Translator.open(files, ort, "package", { int8: $("int8").checked, beamSize,
      sessionOptions: { executionProviders: ["wasm"] } }));
  }
  return opened.get(key);
}

async function translate() {
  $("translate").disabled = true;
  try {
    status("translating…");
    const t = await translator();
    const lines = $("source").value.split("\n");
    const start = performance.now();
    const out = await t.translate(lines);
    const seconds = (performance.now() - start) / 1000;
    $("target").value = out.join("\n");
    const n = lines.filter((l) => l.trim()).length;
    status(`done: ${n} sentence${n === 1 ? "" : "s"} in ${seconds.toFixed(2)} s`);
    document.body.dataset.seconds = String(seconds);
  } catch (err) {
    status(err.message, true);
  } finally {
    $("translate").disabled = false;
  }
}

try {
  const t = await translator();
  $("languages").textContent = `${t.card.languages.src} → ${t.card.languages.tgt}, ` +
    `beam ${t.beamSize}, offline once loaded`;
  $("translate").disabled = false;
  $("translate").addEventListener("click", translate);
  status("ready");
} catch (err) {
  status(err.message, true);
}
