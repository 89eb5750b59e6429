#!/usr/bin/env node
// nmt-translate --package models/onnx [--int8] [--beam-size N] [--alpha A] [--threads N] [--ids] < in > out
// One translation per input line (stdin, UTF-8), as `nmt translate --model models/onnx` gives it for
// one-sentence lines; --ids prints each line's output ids as a JSON list instead.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { PackageError, openPackage } from "../src/node.js";

const HELP = `usage: nmt-translate --package DIR [--int8] [--beam-size N] [--alpha A] [--threads N] [--ids]

Translate stdin (one sentence per line) with an nmt ONNX package of a SentencePiece model, no Python:
SentencePiece (WebAssembly) and onnxruntime-node. Output: one line per input line on stdout.

  --package DIR   the export stage's models/onnx folder (vocab.kind: sentencepiece)
  --int8          the quantised graphs (*.int8.onnx)
  --beam-size N   1 = greedy (default: the card's, the evaluate stage's tuned setting)
  --alpha A       GNMT length penalty of beam search (default: the card's)
  --threads N     ONNX Runtime intra-op threads (default: 0, ONNX Runtime's choice)
  --ids           print output ids (a JSON list per line) instead of text`;

async function main() {
  let args;
  try {
    args = parseArgs({ options: { package: { type: "string" }, int8: { type: "boolean" }, "beam-size": { type: "string" },
      alpha: { type: "string" }, threads: { type: "string" }, ids: { type: "boolean" }, help: { type: "boolean", short: "h" } } }).values;
  } catch (err) {
    throw new PackageError(`${err.message}\n${HELP}`);
  }
  if (args.help) { console.log(HELP); return; }
  if (!args.package) throw new PackageError(`--package is required\n${HELP}`);
  const number = (name, int) => {
    if (args[name] === undefined) return undefined;
    const v = Number(args[name]);
    if (!Number.isFinite(v) || (int && (!Number.isInteger(v) || v < 0))) throw new PackageError(`--${name} ${args[name]}: not a valid number`);
    return v;
  };
  const beamSize = number("beam-size", true);
  if (beamSize === 0) throw new PackageError("--beam-size must be at least 1");
  const translator = await openPackage(args.package, { int8: args.int8, beamSize, alpha: number("alpha"), threads: number("threads", true) });
  const lines = readFileSync(0, "utf8").split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const out = args.ids ? (await translator.translateIds(lines)).map((ids) => JSON.stringify(ids)) : await translator.translate(lines);
  process.stdout.write(out.map((l) => `${l}\n`).join(""));
}

main().catch((err) => {
  process.stderr.write(`nmt-translate: error: ${err instanceof PackageError ? err.message : err.stack}\n`);
  process.exit(1);
});
