#!/usr/bin/env node
// build-page --package models/onnx --out site/: the in-browser translator as a static folder (HTML, JS, the
// WebAssembly of ONNX Runtime and SentencePiece, the package's files), for any static host; no server code.
// The folder is written beside --out and renamed into place once whole.
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { PackageError, checkCard } from "../src/translator.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(HERE, "..");
const ORT = path.join(ROOT, "node_modules", "onnxruntime-web", "dist");
const VENDOR = {
  "ort.wasm.min.mjs": path.join(ORT, "ort.wasm.min.mjs"),
  "ort-wasm-simd-threaded.mjs": path.join(ORT, "ort-wasm-simd-threaded.mjs"),
  "ort-wasm-simd-threaded.wasm": path.join(ORT, "ort-wasm-simd-threaded.wasm"),
  "sentencepiece.js": path.join(ROOT, "node_modules", "@sctg", "sentencepiece-js", "dist", "index.js"),
  "fs.js": path.join(ROOT, "web", "shims", "fs.js"),
  "buffer.js": path.join(ROOT, "web", "shims", "buffer.js"),
};

function build(pkg, out) {
  let card;
  try {
    card = JSON.parse(readFileSync(path.join(pkg, "model.json"), "utf8"));
  } catch (err) {
    throw new PackageError(`${pkg}: no readable model.json (${err.message}): pass the export stage's models/onnx folder`);
  }
  checkCard(card, pkg);
  for (const [name, from] of Object.entries(VENDOR)) {
    if (!existsSync(from)) throw new PackageError(`${from} is missing (for vendor/${name}): run npm ci in js/ (make js)`);
  }
  const tmp = `${out}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(path.join(tmp, "vendor"), { recursive: true });
  cpSync(path.join(ROOT, "web", "index.html"), path.join(tmp, "index.html"));
  cpSync(path.join(ROOT, "web", "app.js"), path.join(tmp, "app.js"));
  cpSync(path.join(ROOT, "src"), path.join(tmp, "src"), { recursive: true });
  for (const [name, from] of Object.entries(VENDOR)) cpSync(from, path.join(tmp, "vendor", name));
  mkdirSync(path.join(tmp, "package"));
  for (const name of ["model.json", ...Object.keys(card.files)]) cpSync(path.join(pkg, name), path.join(tmp, "package", name));
  rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
}

const HELP = "usage: build-page --package DIR --out SITE\n\nThe in-browser translator page with the package in it: " +
  "serve SITE with any static file server (python -m http.server -d SITE) and open it.";
try {
  const { values } = parseArgs({ options: { package: { type: "string" }, out: { type: "string" }, help: { type: "boolean", short: "h" } } });
  if (values.help) { console.log(HELP); process.exit(0); }
  if (!values.package || !values.out) throw new PackageError(`--package and --out are required\n${HELP}`);
  build(values.package, values.out);
  console.log(`translator page written to ${values.out}`);
} catch (err) {
  process.stderr.write(`build-page: error: ${err instanceof PackageError ? err.message : err.stack}\n`);
  process.exit(1);
}
