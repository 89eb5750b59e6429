// Node: an nmt ONNX package folder opened with onnxruntime-node.
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as ort from "onnxruntime-node";
import { Translator } from "./translator.js";

export { PackageError, Translator, checkCard, normalize } from "./translator.js";

/** Translator.open on a folder; options as Translator.open's, plus threads (intra-op threads, 0: ONNX Runtime's). */
export async function openPackage(dir, options = {}) {
  const files = {
    text: (name) => readFile(path.join(dir, name), "utf8"),
    bytes: async (name) => new Uint8Array(await readFile(path.join(dir, name))),
  };
  const sessionOptions = { executionProviders: ["cpu"], intraOpNumThreads: options.threads ?? 0, interOpNumThreads: 1 };
  return Translator.open(files, ort, dir, { sessionOptions, ...options });
}
