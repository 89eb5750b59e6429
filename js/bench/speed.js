#!/usr/bin/env node
// node bench/speed.js --package DIR --lines FILE [--int8] [--beam-size N] [--threads N] [--repeats N]
// The Node consumer's side of bench/js_consumer.py: opens the package once (timed apart), translates the
// lines once untimed (warm-up), then --repeats timed passes; prints one JSON object: open_s, seconds (each
// pass), outputs (the translations, for the bench to compare with Python's).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { performance } from "node:perf_hooks";
import { openPackage } from "../src/node.js";

const { values: a } = parseArgs({ options: { package: { type: "string" }, lines: { type: "string" },
  int8: { type: "boolean" }, "beam-size": { type: "string" }, threads: { type: "string", default: "1" },
  repeats: { type: "string", default: "3" } } });
if (!a.package || !a.lines) {
  process.stderr.write("usage: speed.js --package DIR --lines FILE [--int8] [--beam-size N] [--threads N] [--repeats N]\n");
  process.exit(2);
}
const lines = readFileSync(a.lines, "utf8").split("\n");
if (lines.length && lines[lines.length - 1] === "") lines.pop();
let start = performance.now();
const translator = await openPackage(a.package, { int8: a.int8, threads: Number(a.threads),
  beamSize: a["beam-size"] === undefined ? undefined : Number(a["beam-size"]) });
const openS = (performance.now() - start) / 1000;
const outputs = await translator.translate(lines);
const seconds = [];
for (let i = 0; i < Number(a.repeats); i++) {
  start = performance.now();
  await translator.translate(lines);
  seconds.push((performance.now() - start) / 1000);
}
process.stdout.write(`${JSON.stringify({ open_s: openS, seconds, outputs })}\n`);
